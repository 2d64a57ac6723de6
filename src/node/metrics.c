/*
 * The Prometheus text-format endpoint ([node] metrics = HOST:PORT): every counter of the node as
 * `osn_node_NAME_total`, plus the queue, the controller's mode and the live transactions as
 * gauges, over HTTP/1.0 on any GET. One short response per connection, written with the socket
 * non-blocking: a scraper that does not read loses its answer, the node never waits for it.
 */
#define _GNU_SOURCE /* accept4 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "node_int.h"

int metrics_open(const struct sockaddr_in *sa)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    if (fd < 0)
        return -1;
    (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (bind(fd, (const struct sockaddr *)sa, sizeof *sa) != 0 || listen(fd, 16) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

/* The exposition text into buf; returns its length (truncated to size - 1 at worst). */
static size_t render(const struct node *n, char *buf, size_t size)
{
    size_t k = 0;
#define ADD(...)                                                 \
    do {                                                         \
        int w = snprintf(buf + k, size - k, __VA_ARGS__);        \
        if (w > 0)                                               \
            k = k + (size_t)w < size ? k + (size_t)w : size - 1; \
    } while (0)
    for (int i = 0; i < osn_node_counter_count(); i++) {
        const char *name = osn_node_counter_name(i);
        bool gauge = strcmp(name, "transactions_peak") == 0;
        ADD("# HELP osn_node_%s%s %s\n# TYPE osn_node_%s%s %s\nosn_node_%s%s %" PRIu64 "\n", name,
            gauge ? "" : "_total", osn_node_counter_meaning(i), name, gauge ? "" : "_total",
            gauge ? "gauge" : "counter", name, gauge ? "" : "_total",
            osn_node_counter_value(&n->st, i));
    }
    ADD("# HELP osn_node_queue messages in the element's server\n# TYPE osn_node_queue gauge\n"
        "osn_node_queue %ld\n",
        n->server.n);
    ADD("# HELP osn_node_mode the controller's mode (0 normal, 1 overload, 2 discard)\n"
        "# TYPE osn_node_mode gauge\nosn_node_mode %d\n",
        n->server.mode);
    ADD("# HELP osn_node_transactions live transactions\n# TYPE osn_node_transactions gauge\n"
        "osn_node_transactions %zu\n",
        n->live);
#undef ADD
    return k;
}

void metrics_serve(struct node *n, int lfd)
{
    static char body[16384], head[160];
    for (int i = 0; i < 16; i++) { /* a few per loop turn at most */
        int c = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (c < 0)
            return;
        char req[1024];
        (void)!read(c, req, sizeof req); /* the request line: any path gets the metrics */
        size_t blen = render(n, body, sizeof body);
        int hlen = snprintf(head, sizeof head,
                            "HTTP/1.0 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\n"
                            "Content-Length: %zu\r\n\r\n",
                            blen);
        /* MSG_NOSIGNAL: a scraper that has gone (closed or reset) makes send fail with EPIPE
         * rather than raise SIGPIPE, whose default action ends the node. */
        (void)!send(c, head, (size_t)hlen, MSG_NOSIGNAL);
        (void)!send(c, body, blen, MSG_NOSIGNAL);
        close(c);
    }
}

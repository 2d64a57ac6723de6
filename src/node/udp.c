/*
 * The node's UDP socket: "HOST:PORT" addresses (IPv4 dotted quads; the node binds loopback or
 * a given interface, never a wildcard by default), a non-blocking socket, and sends that count
 * what the kernel refused instead of failing the node.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "node_int.h"
#include "osn/err.h"

int udp_parse_addr(const char *text, struct sockaddr_in *sa, char *host, size_t hostsize,
                   uint16_t *port)
{
    char h[64];
    const char *colon = strrchr(text, ':');
    if (!colon || colon == text || (size_t)(colon - text) >= sizeof h)
        return OSN_EINVAL;
    memcpy(h, text, (size_t)(colon - text));
    h[colon - text] = '\0';
    char *end;
    errno = 0;
    long p = strtol(colon + 1, &end, 10);
    if (errno || end == colon + 1 || *end || p < 1 || p > 65535)
        return OSN_EINVAL;
    memset(sa, 0, sizeof *sa);
    sa->sin_family = AF_INET;
    sa->sin_port = htons((uint16_t)p);
    if (inet_pton(AF_INET, h, &sa->sin_addr) != 1)
        return OSN_EINVAL;
    if (host)
        snprintf(host, hostsize, "%s", h);
    if (port)
        *port = (uint16_t)p;
    return 0;
}

int udp_open(const struct sockaddr_in *sa)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    /* A deeper receive buffer than the default: a burst at overload should meet the element's
     * own buffer (what the scenario models), not the kernel's. */
    int rcv = 4 << 20;
    (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof rcv);
    if (bind(fd, (const struct sockaddr *)sa, sizeof *sa) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

void udp_send(struct node *n, const struct sockaddr_in *to, const char *p, size_t len)
{
    ssize_t r;
    do
        r = sendto(n->sock, p, len, 0, (const struct sockaddr *)to, sizeof *to);
    while (r < 0 && errno == EINTR);
    if (r < 0)
        n->st.send_errors++;
    else
        n->st.datagrams_out++;
}

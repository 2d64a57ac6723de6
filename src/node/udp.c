/*
 * The node's UDP socket: "HOST:PORT" addresses (IPv4 dotted quads; the node binds loopback or
 * a given interface, never a wildcard by default), a non-blocking socket, and sends that count
 * what the kernel refused instead of failing the node.
 *
 * Sends are queued and leave together at the end of the loop's turn: one sendmmsg(2) for the
 * handful of datagrams a turn produces costs one system call instead of one each, and system
 * calls were a third of the node's CPU time at 1,000 calls/s (perf). A turn lasts microseconds,
 * so no datagram waits longer than the work it came with.
 */
#define _GNU_SOURCE /* sendmmsg */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/errqueue.h>
#include <netinet/in.h>
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
    if (errno || end == colon + 1 || *end || p < 0 || p > 65535) /* 0: any free port */
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
    int rcv = 4 << 20, one = 1;
    (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof rcv);
    /* ICMP errors (a next hop whose port is closed) are queued for udp_errors() instead of
     * being lost: without it an unconnected UDP socket never hears of them. */
    (void)setsockopt(fd, IPPROTO_IP, IP_RECVERR, &one, sizeof one);
    if (bind(fd, (const struct sockaddr *)sa, sizeof *sa) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

int udp_bound(int fd, struct sockaddr_in *sa, char *text, size_t textsize)
{
    socklen_t len = sizeof *sa;
    char h[INET_ADDRSTRLEN];
    if (getsockname(fd, (struct sockaddr *)sa, &len) != 0 || sa->sin_family != AF_INET ||
        !inet_ntop(AF_INET, &sa->sin_addr, h, sizeof h))
        return -1;
    snprintf(text, textsize, "%s:%u", h, (unsigned)ntohs(sa->sin_port));
    return 0;
}

void udp_errors(struct node *n)
{
    for (int i = 0; i < 64; i++) { /* a bounded number a turn, like the datagrams */
        char data[64], ctl[512];
        struct sockaddr_in to;
        struct iovec iov = {data, sizeof data};
        struct msghdr m = {.msg_name = &to,
                           .msg_namelen = sizeof to,
                           .msg_iov = &iov,
                           .msg_iovlen = 1,
                           .msg_control = ctl,
                           .msg_controllen = sizeof ctl};
        if (recvmsg(n->sock, &m, MSG_ERRQUEUE | MSG_DONTWAIT) < 0)
            return;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
            if (c->cmsg_level != IPPROTO_IP || c->cmsg_type != IP_RECVERR)
                continue;
            const struct sock_extended_err *ee = (const void *)CMSG_DATA(c);
            if (ee->ee_origin != SO_EE_ORIGIN_ICMP)
                continue;
            bool next = is_proxy(n) && to.sin_addr.s_addr == n->next_hop.sin_addr.s_addr &&
                        to.sin_port == n->next_hop.sin_port;
            if (next)
                n->st.next_hop_unreachable++;
            else
                n->st.peer_unreachable++;
            /* Said once a second at most: a dead next hop answers every retransmission. */
            if (next && n->now - n->unreachable_said >= 1) {
                n->unreachable_said = n->now;
                fprintf(stderr,
                        "osn node %s: next hop %s unreachable (%s; ICMP type %u code %u), "
                        "%lu so far\n",
                        osn_node_element_name(n->cfg->element), n->cfg->next_hop,
                        strerror((int)ee->ee_errno), ee->ee_type, ee->ee_code,
                        (unsigned long)n->st.next_hop_unreachable);
            }
        }
    }
}

void udp_flush(struct node *n)
{
    struct outq *q = &n->outq;
    struct mmsghdr m[OUTQ_MAX];
    struct iovec iov[OUTQ_MAX];
    for (int i = 0; i < q->n; i++) {
        iov[i] = (struct iovec){q->bytes + q->off[i], q->len[i]};
        m[i] = (struct mmsghdr){0};
        m[i].msg_hdr.msg_name = &q->to[i];
        m[i].msg_hdr.msg_namelen = sizeof q->to[i];
        m[i].msg_hdr.msg_iov = &iov[i];
        m[i].msg_hdr.msg_iovlen = 1;
    }
    for (int i = 0; i < q->n;) {
        int r = sendmmsg(n->sock, m + i, (unsigned)(q->n - i), 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) { /* the datagram at i was refused: counted, and the rest go on */
            n->st.send_errors++;
            i++;
            continue;
        }
        n->st.datagrams_out += (uint64_t)r;
        i += r;
    }
    q->n = 0;
    q->used = 0;
}

void udp_send(struct node *n, const struct sockaddr_in *to, const char *p, size_t len)
{
    struct outq *q = &n->outq;
    if (!q->bytes) {
        q->bytes = malloc(OUTQ_BYTES);
        if (!q->bytes) {
            n->st.send_errors++;
            return;
        }
    }
    if (len > OUTQ_BYTES) { /* cannot happen: a datagram is at most 65,535 bytes */
        n->st.send_errors++;
        return;
    }
    if (q->n == OUTQ_MAX || q->used + len > OUTQ_BYTES)
        udp_flush(n);
    memcpy(q->bytes + q->used, p, len);
    q->to[q->n] = *to;
    q->off[q->n] = q->used;
    q->len[q->n] = len;
    q->used += len;
    q->n++;
}

/*
 * The node's UDP sockets, IPv4 or IPv6 (addresses: addr.c): the listening one, which receives
 * from upstream and answers there (the node binds loopback or a given interface, never a
 * wildcard by default), and one per next hop, connected to it (struct next_hop says why). Sends
 * count what the kernel refused instead of failing the node, and ICMP errors are read, counted
 * and, for a next hop, said on stderr: a next hop that refuses is never silent.
 *
 * With several workers (workers.c) each worker has its own listening socket (SO_REUSEPORT on
 * the listening port) and a proxy's worker a port of its own for its requests (sock, and the
 * next hops' sockets on that port): udp_send_to sends a response by the listening socket and a
 * request by the worker's port.
 *
 * Sends are queued and leave together at the end of the loop's turn: one sendmmsg(2) for the
 * handful of datagrams a turn produces costs one system call instead of one each, and system
 * calls were a third of the node's CPU time at 1,000 calls/s (perf). A turn lasts microseconds,
 * so no datagram waits longer than the work it came with, unless the scenario's link delay
 * holds it (link.c).
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

/* Sets ICMP errors (a port closed, a host gone) to be queued on fd for udp_errors() instead of
 * lost: an unconnected socket hears of them only so, and a connected one learns which ICMP type
 * and code it was, not only an errno at its next send. */
static void recv_errors(int fd, int family)
{
    int one = 1;
    if (family == AF_INET6)
        (void)setsockopt(fd, IPPROTO_IPV6, IPV6_RECVERR, &one, sizeof one);
    else
        (void)setsockopt(fd, IPPROTO_IP, IP_RECVERR, &one, sizeof one);
}

/* A non-blocking datagram socket of a's family, with a deep receive buffer and ICMP errors
 * queued, bound to a (with SO_REUSEADDR when reuse: see udp_connect; with SO_REUSEPORT when
 * shared: see udp_open_shared). The fd, or -1 (errno). */
static int open_bound(const union node_addr *a, bool reuse, bool shared)
{
    int fd = socket(a->sa.sa_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    /* A deeper receive buffer than the default: a burst at overload should meet the element's
     * own buffer (what the scenario models), not the kernel's. */
    int rcv = 4 << 20, one = 1;
    (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof rcv);
    /* "[::]" means IPv6 only: an IPv4 peer would reach us as ::ffff:a.b.c.d, and our Via, which
     * names an IPv6 address, could not be answered by it. */
    if (a->sa.sa_family == AF_INET6)
        (void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    recv_errors(fd, a->sa.sa_family);
    if ((reuse && setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0) ||
        (shared && setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) != 0) ||
        bind(fd, &a->sa, addr_len(a)) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

int udp_open(const union node_addr *sa)
{
    return open_bound(sa, false, false);
}

int udp_open_shared(const union node_addr *sa)
{
    /* SO_REUSEPORT stays set (the kernel spreads datagrams over a group only while it is), so
     * unlike the next hops' SO_REUSEADDR it cannot be cleared after the bind: another program
     * may join the group, but only one of the same user (the kernel's rule for the option). */
    return open_bound(sa, false, true);
}

int udp_bound(int fd, union node_addr *sa, char *text, size_t textsize)
{
    socklen_t len = sizeof *sa;
    memset(sa, 0, sizeof *sa);
    if (getsockname(fd, &sa->sa, &len) != 0 ||
        (sa->sa.sa_family != AF_INET && sa->sa.sa_family != AF_INET6))
        return -1;
    addr_text(sa, text, textsize);
    return 0;
}

int udp_connect(struct node *n, struct next_hop *h)
{
    /* The next hop's socket shares the listening address and port: our datagrams leave from
     * the sent-by of our Via, as they did from one socket, and what the next hop sends there
     * (its responses, RFC 3261 18.2.2) comes to this socket, because the kernel gives a
     * datagram to the socket connected to its source before an unconnected one (UDP lookup
     * scores an exact 4-tuple higher); everything else still reaches the listening socket.
     * Two sockets may share a port when both set SO_REUSEADDR at the second bind; the flag is
     * cleared on both right after, so that no other socket (another program with the flag) can
     * join them later: the port stays ours as when it was bound alone. With several next
     * hops, every socket already on the port (the listening one, the other next hops') sets it
     * for the bind: the kernel lets a socket join a port only when all there allow it. */
    int one = 1, zero = 0;
    if (setsockopt(n->sock, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0)
        return -1;
    for (size_t i = 0; i < n->nhops; i++)
        if (n->hops[i].fd >= 0)
            (void)setsockopt(n->hops[i].fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    h->fd = open_bound(&n->via, true, false);
    int e = errno;
    (void)setsockopt(n->sock, SOL_SOCKET, SO_REUSEADDR, &zero, sizeof zero);
    for (size_t i = 0; i < n->nhops; i++)
        if (n->hops[i].fd >= 0 && &n->hops[i] != h)
            (void)setsockopt(n->hops[i].fd, SOL_SOCKET, SO_REUSEADDR, &zero, sizeof zero);
    if (h->fd < 0) {
        errno = e;
        return -1;
    }
    if (setsockopt(h->fd, SOL_SOCKET, SO_REUSEADDR, &zero, sizeof zero) != 0 ||
        connect(h->fd, &h->addr.sa, addr_len(&h->addr)) != 0) {
        e = errno;
        close(h->fd);
        h->fd = -1;
        errno = e;
        return -1;
    }
    return 0;
}

/* What an ICMP error says, in words: destination unreachable's codes (RFC 792, RFC 1812 5.2.7.1;
 * RFC 4443 3.1), else its type and code. */
static const char *icmp_words(const struct sock_extended_err *ee, char *buf, size_t size)
{
    if (ee->ee_origin == SO_EE_ORIGIN_ICMP6 && ee->ee_type == 1) {
        switch (ee->ee_code) {
        case 0:
            return "no route to the address";
        case 1:
        case 5:
        case 6:
            return "administratively prohibited";
        case 3:
            return "address unreachable";
        case 4:
            return "port unreachable";
        }
    } else if (ee->ee_origin == SO_EE_ORIGIN_ICMP && ee->ee_type == 3) {
        switch (ee->ee_code) {
        case 0:
            return "network unreachable";
        case 1:
            return "host unreachable";
        case 2:
            return "protocol unreachable";
        case 3:
            return "port unreachable";
        case 9:
        case 10:
        case 13:
            return "administratively prohibited";
        }
    }
    snprintf(buf, size, "%s type %u code %u",
             ee->ee_origin == SO_EE_ORIGIN_ICMP6 ? "ICMPv6" : "ICMP", ee->ee_type, ee->ee_code);
    return buf;
}

/* One ICMP error for a datagram of ours: counted, and a next hop's said at most once a second
 * (a dead next hop answers every retransmission). */
static void icmp_error(struct node *n, struct next_hop *h, const struct sock_extended_err *ee)
{
    if (!h) {
        n->st.peer_unreachable++;
        return;
    }
    n->st.next_hop_unreachable++;
    n->st.send_errors++; /* the datagram left, and did not arrive */
    if (n->now - h->said >= 1) {
        char buf[48];
        h->said = n->now;
        fprintf(stderr, "osn node %s: next hop %s unreachable (%s), %lu so far\n",
                osn_node_element_name(n->cfg->element), h->text, icmp_words(ee, buf, sizeof buf),
                (unsigned long)n->st.next_hop_unreachable);
    }
}

/* Reads the ICMP errors queued on fd (next hop h's socket, or NULL: one toward anyone). */
static void read_errors(struct node *n, int fd, struct next_hop *h)
{
    for (int i = 0; i < 64; i++) { /* a bounded number a turn, like the datagrams */
        char data[64], ctl[512];
        union node_addr to;
        struct iovec iov = {data, sizeof data};
        struct msghdr m = {.msg_name = &to,
                           .msg_namelen = sizeof to,
                           .msg_iov = &iov,
                           .msg_iovlen = 1,
                           .msg_control = ctl,
                           .msg_controllen = sizeof ctl};
        if (recvmsg(fd, &m, MSG_ERRQUEUE | MSG_DONTWAIT) < 0)
            return;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
            if (!(c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_RECVERR) &&
                !(c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_RECVERR))
                continue;
            const struct sock_extended_err *ee = (const void *)CMSG_DATA(c);
            if (ee->ee_origin == SO_EE_ORIGIN_ICMP || ee->ee_origin == SO_EE_ORIGIN_ICMP6)
                icmp_error(n, h, ee);
        }
    }
}

void udp_errors(struct node *n, struct next_hop *h)
{
    read_errors(n, h ? h->fd : n->sock, h);
}

void udp_errors_listen(struct node *n)
{
    read_errors(n, n->lsock, NULL);
}

/* Whether a send's errno is the report of an ICMP error drawn by an earlier datagram (the
 * socket's pending error): the datagram at hand was not sent, and is not at fault. */
static bool icmp_errno(int e)
{
    return e == ECONNREFUSED || e == EHOSTUNREACH || e == ENETUNREACH || e == EHOSTDOWN ||
           e == EPROTO || e == EACCES;
}

/* Sends datagrams [i, j) of the queue, which all leave by one socket (fd; connected when h). */
static void flush_run(struct node *n, struct next_hop *h, int fd, struct mmsghdr *m, int i, int j)
{
    bool retried = false;
    while (i < j) {
        int r = sendmmsg(fd, m + i, (unsigned)(j - i), 0);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && !retried && icmp_errno(errno)) {
            /* The kernel reports an earlier datagram's ICMP error on this send: a connected
             * socket's, and with IP_RECVERR an unconnected one's too (the listening socket,
             * after a response to a peer that has gone). Counted from the error queue, as the
             * loop would (next_hop_unreachable for h, else peer_unreachable), and this
             * datagram goes again, once. */
            read_errors(n, fd, h);
            retried = true;
            continue;
        }
        if (r <= 0) { /* the datagram at i was refused: counted, and the rest go on */
            n->st.send_errors++;
            i++;
            retried = false;
            continue;
        }
        n->st.datagrams_out += (uint64_t)r;
        i += r;
        retried = false;
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
        if (!q->hop[i]) { /* a connected socket takes no address */
            m[i].msg_hdr.msg_name = &q->to[i];
            m[i].msg_hdr.msg_namelen = addr_len(&q->to[i]);
        }
        m[i].msg_hdr.msg_iov = &iov[i];
        m[i].msg_hdr.msg_iovlen = 1;
    }
    for (int i = 0, j; i < q->n; i = j) { /* in order, a run per socket */
        for (j = i + 1; j < q->n && q->fd[j] == q->fd[i]; j++)
            ;
        flush_run(n, q->hop[i], q->fd[i], m, i, j);
    }
    q->n = 0;
    q->used = 0;
}

/* Queues a datagram for `to` (h NULL) or next hop h, to leave by socket fd. */
static void enqueue(struct node *n, const union node_addr *to, struct next_hop *h, int fd,
                    const char *p, size_t len)
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
    if (to)
        q->to[q->n] = *to;
    q->hop[q->n] = h;
    q->fd[q->n] = fd;
    q->off[q->n] = q->used;
    q->len[q->n] = len;
    q->used += len;
    q->n++;
}

void udp_send_to(struct node *n, const union node_addr *to, const char *p, size_t len)
{
    /* The scenario's link delay first (link.c): a held datagram comes back here when due. */
    if (n->link.on && !n->link.leaving && link_hold(n, to, p, len))
        return;
    /* A proxy's worker of several answers from the listening port, where the request came:
     * RFC 3581 4 asks a response to leave from the address and port its request reached (a
     * peer behind a NAT, or one that checks it, gets nothing else). Only its requests leave
     * from its own port. */
    if (n->lsock >= 0 && len > 8 && !memcmp(p, "SIP/2.0 ", 8)) {
        enqueue(n, to, NULL, n->lsock, p, len);
        return;
    }
    for (size_t i = 0; i < n->nhops; i++)
        if (n->hops[i].fd >= 0 && addr_eq(to, &n->hops[i].addr)) {
            enqueue(n, NULL, &n->hops[i], n->hops[i].fd, p, len);
            return;
        }
    enqueue(n, to, NULL, n->sock, p, len);
}

/*
 * The node's TCP transport (RFC 3261 18), beside its UDP sockets and on the same port: a
 * listening socket when `listen` says ";transport=tcp" (connections from upstream), and one
 * connection per next hop that says so, opened by the node when it first sends there and opened
 * again after a failure (no connection reuse in the sense of RFC 5923: a next hop's requests to
 * us come on connections of its own). A message read from a connection is handled as a datagram
 * is (recv.c), marked as come over TCP: its transaction is a reliable one (no retransmissions,
 * osn/sip.h) and every response goes back on that connection (18.2.2), found by its peer's
 * address.
 *
 * Every socket is non-blocking, in one epoll set that the loop polls as one descriptor, so a
 * node with no TCP pays nothing and one with a thousand idle connections pays one descriptor
 * per turn. What the node may hold for a peer is bounded:
 *   - connections: tcp_max_connections accepted and open; one more is accepted and closed at once
 *     (counted), so that the kernel's backlog does not fill with them;
 *   - input: one partial message (at most 65,535 bytes, the largest the node parses); a peer that
 *     sends more without the end of a message is closed;
 *   - output: tcp_buffer bytes per peer. Past half of it the node stops reading from the peer (it
 *     does not read our answers, so its requests wait in its own socket: TCP's flow control is
 *     then its overload signal); past all of it the peer is closed;
 *   - time: a connection with no byte read or written for tcp_idle_timeout is closed, which also
 *     finds a half-open one that has gone quiet; TCP_USER_TIMEOUT finds a peer gone while we send.
 * Closes and failures are counted (osn/node.h, tcp_*). A connection the node opened that fails
 * or closes ends the client transactions waiting on it with a transport error (RFC 3261
 * 17.1.4; the element takes it as a 503, 16.9, and answers 500 upstream), after the turn's
 * work, never inside a send. SIGPIPE never: every send is MSG_NOSIGNAL.
 *
 * Besides the next hops' connections the node opens one (TCP_OUT) to the address of a Route or
 * Request-URI that says ;transport=tcp (route.c), and to a response's top Via when the
 * connection of its request is gone (18.2.2: its received address, else its sent-by host, at
 * the sent-by port); at most tcp_max_connections of them.
 *
 * With several workers (workers.c) each has a struct tcp of its own, and a connection belongs to
 * one worker for its life: an accepted one to the worker whose listening socket the kernel gave
 * it (each listens on the port with SO_REUSEPORT and the kernel spreads connections by a hash
 * of their 4-tuple), so its requests, their CANCELs and ACKs, and our responses on it are that
 * worker's; one we open to the worker that opened it, which sends on it only the requests of its
 * own client transactions, so their responses (on that connection, 18.2.2) come back to it. No
 * message crosses workers. tcp_max_connections counts the node's connections, not a worker's.
 */
#define _GNU_SOURCE /* accept4 */
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "node_int.h"
#include "osn/err.h"

#define TCP_IN_MAX   OSN_SIP_WIRE_MAX_LEN /* a message, at most: the parser's limit */
#define TCP_CHUNK    ((size_t)64 << 10)   /* bytes one read asks for */
#define TCP_EVENTS   64
#define TCP_LISTEN   ((void *)1) /* the epoll tag of the listening socket */
#define TCP_OWN      ((void *)2) /* and of a proxy worker's own port's (tcp_open says why) */
#define TCP_SWEEP_S  1.0         /* how often idle connections are looked for (s) */
#define TCP_ACCEPTED (-1)        /* tcp_conn.hop of a connection a peer opened */
#define TCP_OUT      (-2)        /* and of one we opened to another address than a next hop */

struct tcp_conn {
    int fd;
    int hop;     /* the next hop it goes to (index of n->hops), else TCP_ACCEPTED or TCP_OUT */
    size_t slot; /* its index in tcp->conn */
    union node_addr peer;
    bool connecting; /* connect(2) in progress */
    bool dead;       /* to be closed after this turn's work (sweep) */
    bool last_words; /* close once the output is written (after a 400 for bad framing) */
    bool paused;     /* not read: our output to it is over half of tcp_buffer */
    bool dirty;      /* in tcp->dirty: output to write this turn */
    uint32_t events; /* what epoll watches for it */
    char *in;        /* a partial message, in_len bytes */
    size_t in_len;
    char *out; /* out[off, len): what is still to be written */
    size_t out_off, out_len, out_cap;
    double last;            /* the last progress: a byte read or written, or the start (s) */
    struct tcp_conn *hnext; /* its bucket's chain (by peer address) */
};

struct tcp {
    int ep, lfd, ofd;                /* ofd: a proxy worker's listener on its own port, else -1 */
    struct tcp_conn **conn;          /* open connections (dead ones too, until swept) */
    size_t n, cap, accepted, others; /* others: open with hop TCP_OUT */
    struct tcp_conn **bucket;        /* by peer address */
    size_t mask;
    struct tcp_conn **dirty;
    size_t ndirty, ndead;
    char *scratch; /* TCP_IN_MAX + TCP_CHUNK: a partial message and what a read adds */
    double next_sweep;
};

static size_t addr_hash(const union node_addr *a)
{
    uint64_t h = a->sa.sa_family == AF_INET6
                         ? osn_sip_wire_hash(&a->v6.sin6_addr, 16) ^ a->v6.sin6_port
                         : ((uint64_t)a->v4.sin_addr.s_addr << 16) ^ a->v4.sin_port;
    return (size_t)((h * 0x9e3779b97f4a7c15ULL) >> 32);
}

static struct tcp_conn *find(const struct tcp *t, const union node_addr *a)
{
    for (struct tcp_conn *c = t->bucket[addr_hash(a) & t->mask]; c; c = c->hnext)
        if (addr_eq(&c->peer, a))
            return c;
    return NULL;
}

bool tcp_is_hop(const struct node *n, const union node_addr *to)
{
    for (size_t i = 0; n->tcp && i < n->nhops; i++)
        if (n->hops[i].tcp && addr_eq(to, &n->hops[i].addr))
            return true;
    return false;
}

/* Sets what epoll watches for c: input unless paused or on its way out, output while some waits
 * or the connect is in progress. */
static void watch(struct tcp *t, struct tcp_conn *c)
{
    uint32_t ev = 0;
    if (!c->paused && !c->last_words && !c->dead)
        ev |= EPOLLIN;
    if ((c->connecting || c->out_len > c->out_off) && !c->dead)
        ev |= EPOLLOUT;
    if (ev == c->events)
        return;
    struct epoll_event e = {.events = ev, .data.ptr = c};
    (void)epoll_ctl(t->ep, EPOLL_CTL_MOD, c->fd, &e);
    c->events = ev;
}

static void kill_conn(struct tcp *t, struct tcp_conn *c)
{
    if (!c->dead) {
        c->dead = true;
        t->ndead++;
        watch(t, c);
    }
}

/* Options of every connection: no Nagle delay (a SIP message is one write), and the kernel's
 * limit on data left unacknowledged (a peer gone while we send), tcp_idle_timeout. */
static void conn_options(const struct node *n, int fd)
{
    int one = 1;
    unsigned ms = (unsigned)fmin(n->cfg->tcp_idle_timeout * 1000, 3600e3);
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    (void)setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ms, sizeof ms);
}

static struct tcp_conn *conn_new(struct node *n, int fd, const union node_addr *peer, int hop)
{
    struct tcp *t = n->tcp;
    struct tcp_conn *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 64;
        struct tcp_conn **a = realloc(t->conn, cap * sizeof *a);
        struct tcp_conn **d = a ? realloc(t->dirty, cap * sizeof *d) : NULL;
        if (a)
            t->conn = a;
        if (!a || !d) {
            free(c);
            return NULL;
        }
        t->dirty = d;
        t->cap = cap;
    }
    c->fd = fd;
    c->hop = hop;
    c->peer = *peer;
    c->last = n->now;
    c->events = EPOLLIN;
    struct epoll_event e = {.events = EPOLLIN, .data.ptr = c};
    if (epoll_ctl(t->ep, EPOLL_CTL_ADD, fd, &e) != 0) {
        free(c);
        return NULL;
    }
    c->slot = t->n;
    t->conn[t->n++] = c;
    struct tcp_conn **b = &t->bucket[addr_hash(peer) & t->mask];
    c->hnext = *b;
    *b = c;
    conn_options(n, fd);
    return c;
}

/* A place for one more connection of `kind` (0 accepted, 1 TCP_OUT) within tcp_max_connections:
 * the node's, counted across its workers (n->tcp_places), or with one worker this loop's count,
 * *mine, which counts this loop's connections of the kind either way. */
static bool place_take(struct node *n, size_t *mine, int kind)
{
    size_t cap = (size_t)n->cfg->tcp_max_connections;
    if (n->tcp_places) {
        atomic_size_t *c = &n->tcp_places[kind];
        size_t v = atomic_load(c);
        do {
            if (v >= cap)
                return false;
        } while (!atomic_compare_exchange_weak(c, &v, v + 1));
    } else if (*mine >= cap) {
        return false;
    }
    (*mine)++;
    return true;
}

static void place_give(struct node *n, size_t *mine, int kind)
{
    (*mine)--;
    if (n->tcp_places)
        atomic_fetch_sub(&n->tcp_places[kind], 1);
}

/* Frees c (closing its socket), out of the array and its bucket. */
static void conn_free(struct node *n, struct tcp_conn *c)
{
    struct tcp *t = n->tcp;
    for (size_t i = 0; c->dirty && i < t->ndirty; i++)
        if (t->dirty[i] == c) {
            t->dirty[i] = t->dirty[--t->ndirty];
            break;
        }
    struct tcp_conn **b = &t->bucket[addr_hash(&c->peer) & t->mask];
    while (*b != c)
        b = &(*b)->hnext;
    *b = c->hnext;
    t->conn[c->slot] = t->conn[--t->n];
    t->conn[c->slot]->slot = c->slot;
    if (c->hop == TCP_ACCEPTED)
        place_give(n, &t->accepted, 0);
    else if (c->hop == TCP_OUT)
        place_give(n, &t->others, 1);
    close(c->fd);
    free(c->in);
    free(c->out);
    free(c);
}

/* A transaction the loss of a connection we opened fails, and how to know it again. */
struct doomed {
    struct ntx *x;
    uint64_t branch;
};

/* The connections we opened to peer[0..np) are gone: every client transaction that sent a
 * request over TCP to one of them and waits for its answer gets the transport error (RFC 3261
 * 17.1.4), since the answer would have come on that connection (18.1.2); the element takes it
 * as a 503 from that server (16.9). Listed first and then failed: the failures start other
 * transactions (a failover, the 500's transaction upstream ending), which may reuse objects of
 * the list; the branch tells a reused one from the one listed. */
static void fail_peers(struct node *n, const union node_addr *peer, size_t np)
{
    size_t k = 0, cap = 0;
    struct doomed *d = NULL;
    for (struct ntx *x = n->all_ntx; x; x = x->next_all) {
        bool waiting = x->t.state == OSN_SIP_CALLING || x->t.state == OSN_SIP_TRYING ||
                       x->t.state == OSN_SIP_PROCEEDING;
        if (!x->live || x->t.role != OSN_SIP_CLIENT || !x->t.reliable || !waiting)
            continue;
        size_t i = 0;
        while (i < np && !addr_eq(&x->from, &peer[i]))
            i++;
        if (i == np)
            continue;
        if (k == cap) {
            cap = cap ? 2 * cap : 64;
            struct doomed *g = realloc(d, cap * sizeof *g);
            if (!g) { /* they time out instead (Timer B or F) */
                n->st.tcp_send_errors++;
                break;
            }
            d = g;
        }
        d[k++] = (struct doomed){x, x->t.req.branch};
    }
    for (size_t i = 0; i < k; i++) {
        struct ntx *x = d[i].x;
        struct osn_sip_out o;
        if (x->live && x->t.role == OSN_SIP_CLIENT && x->t.req.branch == d[i].branch &&
            osn_sip_txn_transport_error(&n->sip, &x->t, n->now, &o) == 0)
            ntx_apply(n, x, &o, NULL);
    }
    free(d);
}

/* Closes the dead connections; the requests waiting on one we opened fail (fail_peers). */
static void sweep(struct node *n)
{
    struct tcp *t = n->tcp;
    union node_addr *failed = malloc(t->ndead * sizeof *failed);
    size_t nf = 0;
    for (size_t i = 0; t->ndead && i < t->n;) {
        struct tcp_conn *c = t->conn[i];
        if (!c->dead) {
            i++;
            continue;
        }
        if (c->hop != TCP_ACCEPTED && failed) /* else its requests time out (Timer B or F) */
            failed[nf++] = c->peer;
        t->ndead--;
        conn_free(n, c); /* the last one moves to slot i */
    }
    /* After the frees: a request forwarded by a failure's failover opens a new connection. */
    if (nf)
        fail_peers(n, failed, nf);
    free(failed);
}

/* Writes what c has queued; what the kernel takes now. */
static void write_out(struct node *n, struct tcp_conn *c)
{
    struct tcp *t = n->tcp;
    while (!c->dead && !c->connecting && c->out_off < c->out_len) {
        ssize_t r = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
                         MSG_NOSIGNAL | MSG_DONTWAIT);
        if (r > 0) {
            c->out_off += (size_t)r;
            c->last = n->now;
        } else if (r < 0 && errno == EINTR) {
            continue;
        } else if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            break;
        } else { /* reset, or gone: what is queued is lost with it */
            if (c->hop != TCP_ACCEPTED)
                n->st.tcp_connect_failed++;
            kill_conn(t, c);
        }
    }
    if (c->out_off == c->out_len) {
        c->out_off = c->out_len = 0;
        if (c->out_cap > TCP_CHUNK) { /* a burst's room goes back: idle peers hold none */
            free(c->out);
            c->out = NULL;
            c->out_cap = 0;
        }
        if (c->last_words)
            kill_conn(t, c);
    }
    /* Reading again once most of the backlog is gone. */
    if (c->paused && c->out_len - c->out_off <= n->cfg->tcp_buffer / 4)
        c->paused = false;
    watch(t, c);
}

/* Appends p[0..len) to c's output, written at the end of the turn. */
static void queue(struct node *n, struct tcp_conn *c, const char *p, size_t len)
{
    struct tcp *t = n->tcp;
    size_t pending = c->out_len - c->out_off, cap = n->cfg->tcp_buffer;
    if (c->dead || c->last_words) {
        n->st.tcp_send_errors++;
        return;
    }
    if (pending + len > cap) {
        /* A peer that reads nothing of tcp_buffer bytes: closed, rather than held without
         * bound (a next hop's pending transactions then fail, as on any loss of it). */
        n->st.tcp_send_errors++;
        n->st.tcp_closed_overflow++;
        if (c->hop != TCP_ACCEPTED)
            n->st.tcp_connect_failed++;
        kill_conn(t, c);
        return;
    }
    if (c->out_off && c->out_len + len > c->out_cap) {
        memmove(c->out, c->out + c->out_off, pending);
        c->out_off = 0;
        c->out_len = pending;
    }
    if (c->out_len + len > c->out_cap) {
        size_t want = c->out_cap ? c->out_cap : 4096;
        while (want < c->out_len + len)
            want *= 2;
        char *b = realloc(c->out, want);
        if (!b) {
            n->st.tcp_send_errors++;
            return;
        }
        c->out = b;
        c->out_cap = want;
    }
    memcpy(c->out + c->out_len, p, len);
    c->out_len += len;
    if (!c->dirty) {
        c->dirty = true;
        t->dirty[t->ndirty++] = c;
    }
    if (!c->paused && pending + len > cap / 2) {
        c->paused = true; /* it does not read: neither do we, until it has (write_out) */
        n->st.tcp_paused++;
        watch(t, c);
    }
}

/* Opens a connection to `to`, next hop `hop` or TCP_OUT (connect in progress: what is queued
 * waits for it); NULL without a socket, or at tcp_max_connections of TCP_OUT. */
static struct tcp_conn *connect_to(struct node *n, const union node_addr *to, int hop)
{
    struct tcp *t = n->tcp;
    if (hop == TCP_OUT && !place_take(n, &t->others, 1))
        return NULL;
    int fd = socket(to->sa.sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int r = fd < 0 ? -1 : connect(fd, &to->sa, addr_len(to));
    bool failed = r != 0 && errno != EINPROGRESS; /* refused at once (loopback) */
    struct tcp_conn *c = fd < 0 ? NULL : conn_new(n, fd, to, hop);
    if (!c) {
        if (fd >= 0)
            close(fd);
        if (hop == TCP_OUT)
            place_give(n, &t->others, 1);
        return NULL;
    }
    n->st.tcp_connects++;
    c->connecting = r != 0 && !failed;
    if (failed) {
        /* Kept, dead, until the turn's end: then the requests it took fail (sweep), the one
         * that opened it included. */
        n->st.tcp_connect_failed++;
        kill_conn(t, c);
    }
    watch(t, c);
    return c;
}

/* RFC 3261 18.2.2: where response p[0..len) goes when the connection of its request is gone: a
 * new connection to its top Via's "received" address, else its sent-by host (the node reads
 * only addresses, never names), at the sent-by port or 5060 (rport is for UDP, RFC 3581 4). 0,
 * or OSN_EINVAL when the Via names no address. Parsed here, on this rare path only: the
 * response's sender handed bytes. */
static int response_fallback(const char *p, size_t len, union node_addr *to)
{
    struct osn_sip_wire *pm = malloc(sizeof *pm);
    int err = OSN_EINVAL;
    if (pm && osn_sip_wire_parse(pm, p, len) == OSN_SIP_WIRE_ACCEPT && pm->status && pm->nvia > 0) {
        const struct osn_sip_via *v = &pm->via[0];
        struct osn_span h = v->received.n ? v->received : v->host;
        bool bare6 = memchr(h.p, ':', h.n) && h.p[0] != '['; /* received's IPv6 has none */
        char text[96], why[96];
        int k = snprintf(text, sizeof text, bare6 ? "[%.*s]:%u" : "%.*s:%u", (int)h.n, h.p,
                         v->port ? (unsigned)v->port : 5060u);
        if (k > 0 && (size_t)k < sizeof text && addr_parse(text, to, why, sizeof why) == 0 &&
            addr_port(to) != 0)
            err = 0;
    }
    free(pm);
    return err;
}

void tcp_send_to(struct node *n, const union node_addr *to, const char *p, size_t len)
{
    struct tcp *t = n->tcp;
    struct tcp_conn *c = t ? find(t, to) : NULL;
    if (!c && t) {
        int hop = TCP_OUT;
        for (size_t i = 0; i < n->nhops && hop == TCP_OUT; i++)
            if (n->hops[i].tcp && addr_eq(to, &n->hops[i].addr))
                hop = (int)i;
        union node_addr again;
        if (hop != TCP_OUT || len < 8 || memcmp(p, "SIP/2.0 ", 8) != 0) {
            /* A request to a next hop, or to the address of a Route or a Request-URI that says
             * ;transport=tcp (route.c): a connection of ours. No socket: Timer B or F ends it. */
            if (!(c = connect_to(n, to, hop)))
                n->st.tcp_connect_failed++;
        } else if (response_fallback(p, len, &again) == 0) {
            /* A response whose request's connection is gone (18.2.2). */
            n->st.tcp_fallback++;
            if (!(c = find(t, &again)) && !(c = connect_to(n, &again, TCP_OUT)))
                n->st.tcp_connect_failed++;
        }
    }
    if (!c) { /* no TCP here, or no address to open a connection to */
        n->st.tcp_send_errors++;
        return;
    }
    size_t before = n->st.tcp_send_errors;
    queue(n, c, p, len);
    if (n->st.tcp_send_errors == before)
        n->st.tcp_msgs_out++;
}

/* A framing error on c (verdict v on header p[0..head)): a request that parses gets 400 and
 * the connection is closed once that is written; anything else closes it now. The stream cannot
 * be read on, as the next message's start is not known. */
static void bad_framing(struct node *n, struct tcp_conn *c, const char *p, size_t head, int v)
{
    struct osn_sip_wire pm;
    n->st.tcp_bad_framing++;
    if (v == TCP_FRAME_NO_LENGTH || v == TCP_FRAME_BAD_LENGTH) {
        int w = osn_sip_wire_parse(&pm, p, head);
        if ((w == OSN_SIP_WIRE_ACCEPT || w == OSN_SIP_WIRE_ANSWER) && pm.status == 0 &&
            pm.method != OSN_SIP_ACK) {
            struct osn_sip_reply r = {.status = 400, .retry_after = -1};
            int k = osn_sip_wire_print_reply(n->obuf, sizeof n->obuf, &pm, &r);
            if (k > 0) {
                queue(n, c, n->obuf, (size_t)k);
                c->last_words = true;
                watch(n->tcp, c);
                return;
            }
        }
    }
    kill_conn(n->tcp, c);
}

/* Handles the messages at the start of p[0..len); returns the bytes used (the rest is the start
 * of a message still to come). */
static size_t frames(struct node *n, struct tcp_conn *c, const char *p, size_t len)
{
    size_t pos = 0;
    while (!c->dead && !c->last_words && !n->err) {
        struct tcp_frame f;
        int v = tcp_frame(p + pos, len - pos, TCP_IN_MAX, &f);
        switch (v) {
        case TCP_FRAME_MORE:
            return pos;
        case TCP_FRAME_CRLF:
            pos += f.skip;
            break;
        case TCP_FRAME_PING: /* RFC 5626 4.4.1: the pong is one CRLF */
            pos += f.skip;
            queue(n, c, "\r\n", 2);
            break;
        case TCP_FRAME_MSG:
            n->st.tcp_msgs_in++;
            node_message(n, p + pos, f.len, &c->peer, true);
            pos += f.len;
            break;
        case TCP_FRAME_TOO_LONG:
            n->st.tcp_closed_overflow++;
            kill_conn(n->tcp, c);
            return len;
        default:
            bad_framing(n, c, p + pos, f.head, v);
            return len;
        }
    }
    return len;
}

/* Reads what c has for us, a bounded number of reads a turn, and handles each message. */
static void read_in(struct node *n, struct tcp_conn *c)
{
    struct tcp *t = n->tcp;
    for (int round = 0; round < 8 && !c->dead && !c->paused && !c->last_words && !n->err; round++) {
        size_t have = c->in_len;
        if (have)
            memcpy(t->scratch, c->in, have);
        ssize_t r = recv(c->fd, t->scratch + have, TCP_CHUNK, MSG_DONTWAIT);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (r <= 0) {
            /* Closed by the peer in order (end of stream: a partial message is lost with it),
             * which is how a peer ends a connection it no longer wants (SIPp's -t tn after each
             * call, a next hop's idle timeout): counted apart from a reset, which is a failure.
             * Either way a next hop's pending requests fail (sweep). */
            if (r == 0)
                n->st.tcp_closed_by_peer++;
            else if (c->hop != TCP_ACCEPTED)
                n->st.tcp_connect_failed++;
            kill_conn(t, c);
            return;
        }
        c->last = n->now;
        size_t total = have + (size_t)r;
        size_t used = frames(n, c, t->scratch, total);
        size_t rest = total - used;
        if (rest >= TCP_IN_MAX) { /* frames() said "more" of a message beyond the limit */
            n->st.tcp_closed_overflow++;
            kill_conn(t, c);
            rest = 0;
        }
        if (rest != c->in_len) {
            char *b = rest ? realloc(c->in, rest) : NULL;
            if (rest && !b) {
                kill_conn(t, c);
                return;
            }
            if (!rest)
                free(c->in);
            c->in = b;
        }
        if (rest)
            memcpy(c->in, t->scratch + used, rest);
        c->in_len = rest;
        if ((size_t)r < TCP_CHUNK)
            return;
    }
}

/* Accepts what waits on listener lfd, closing at once those beyond tcp_max_connections. */
static void accept_all(struct node *n, int lfd)
{
    struct tcp *t = n->tcp;
    for (int i = 0; i < 256; i++) {
        union node_addr peer;
        socklen_t len = sizeof peer;
        int fd = accept4(lfd, &peer.sa, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            return; /* EAGAIN; or EMFILE: the rest wait in the backlog */
        }
        if ((peer.sa.sa_family != AF_INET && peer.sa.sa_family != AF_INET6) ||
            !place_take(n, &t->accepted, 0)) {
            close(fd);
            n->st.tcp_refused++;
            continue;
        }
        if (!conn_new(n, fd, &peer, -1)) {
            close(fd);
            place_give(n, &t->accepted, 0);
            n->st.tcp_refused++;
            continue;
        }
        n->st.tcp_accepted++;
    }
}

/* Closes the connections that made no progress in tcp_idle_timeout. */
static void idle(struct node *n)
{
    struct tcp *t = n->tcp;
    for (size_t i = 0; i < t->n; i++) {
        struct tcp_conn *c = t->conn[i];
        if (!c->dead && n->now - c->last >= n->cfg->tcp_idle_timeout) {
            n->st.tcp_closed_idle++;
            /* A next hop's pending requests can be answered no more: they fail (sweep). */
            kill_conn(t, c);
        }
    }
    t->next_sweep = n->now + TCP_SWEEP_S;
}

void tcp_run(struct node *n)
{
    struct tcp *t = n->tcp;
    struct epoll_event ev[TCP_EVENTS];
    for (int round = 0; t && round < 16 && !n->err; round++) {
        int k = epoll_wait(t->ep, ev, TCP_EVENTS, 0);
        if (k <= 0)
            break;
        for (int i = 0; i < k && !n->err; i++) {
            if (ev[i].data.ptr == TCP_LISTEN || ev[i].data.ptr == TCP_OWN) {
                accept_all(n, ev[i].data.ptr == TCP_LISTEN ? t->lfd : t->ofd);
                continue;
            }
            struct tcp_conn *c = ev[i].data.ptr;
            if (c->dead)
                continue;
            if (c->connecting && (ev[i].events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) {
                int e = 0;
                socklen_t el = sizeof e;
                if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &e, &el) != 0 || e != 0) {
                    n->st.tcp_connect_failed++; /* refused, unreachable */
                    kill_conn(t, c);
                    continue;
                }
                c->connecting = false;
            }
            if (ev[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))
                read_in(n, c);
            /* Gone while not read (paused, or its 400 on the way): HUP and ERR cannot be
             * masked, so it is closed now rather than reported at every turn. */
            if (!c->dead && (ev[i].events & (EPOLLHUP | EPOLLERR)) &&
                (c->paused || c->last_words)) {
                if (c->hop != TCP_ACCEPTED)
                    n->st.tcp_connect_failed++;
                kill_conn(t, c);
                continue;
            }
            if (!c->dead && (ev[i].events & EPOLLOUT))
                write_out(n, c);
        }
        if (k < TCP_EVENTS)
            break;
    }
    if (t && n->now >= t->next_sweep)
        idle(n);
    if (t && t->ndead)
        sweep(n);
}

void tcp_flush(struct node *n)
{
    struct tcp *t = n->tcp;
    if (!t)
        return;
    for (size_t i = 0; i < t->ndirty; i++) {
        struct tcp_conn *c = t->dirty[i];
        c->dirty = false;
        if (!c->dead)
            write_out(n, c);
    }
    t->ndirty = 0;
    if (t->ndead) {
        sweep(n);
        /* What the failures answered upstream, now. */
        for (size_t i = 0; i < t->ndirty; i++) {
            struct tcp_conn *c = t->dirty[i];
            c->dirty = false;
            if (!c->dead)
                write_out(n, c);
        }
        t->ndirty = 0;
    }
}

bool tcp_listening(const struct node *n)
{
    return n->tcp && n->tcp->lfd >= 0;
}

int tcp_fd(const struct node *n)
{
    return n->tcp ? n->tcp->ep : -1;
}

double tcp_deadline(const struct node *n)
{
    return n->tcp && n->tcp->n ? n->tcp->next_sweep : INFINITY;
}

/* Room for tcp_max_connections descriptors beside the node's own: the soft limit raised toward
 * the hard one (commonly 1,024 soft), so that the cap is the node's and not EMFILE's. */
static void fd_room(long want)
{
    struct rlimit r;
    if (getrlimit(RLIMIT_NOFILE, &r) != 0 || r.rlim_cur >= (rlim_t)want)
        return;
    r.rlim_cur =
            r.rlim_max == RLIM_INFINITY || r.rlim_max > (rlim_t)want ? (rlim_t)want : r.rlim_max;
    (void)setrlimit(RLIMIT_NOFILE, &r);
}

int tcp_open(struct node *n, bool listening, char *msg, size_t msgsize)
{
    struct tcp *t = calloc(1, sizeof *t);
    size_t buckets = 64;
    while (buckets < 2 * (size_t)n->cfg->tcp_max_connections + 2 * OSN_ELEM_MAX_HOPS)
        buckets *= 2;
    if (!t)
        return OSN_ENOMEM;
    n->tcp = t;
    t->lfd = -1;
    t->ofd = -1;
    t->ep = epoll_create1(EPOLL_CLOEXEC);
    t->bucket = calloc(buckets, sizeof *t->bucket);
    t->mask = buckets - 1;
    t->scratch = malloc(TCP_IN_MAX + TCP_CHUNK);
    if (t->ep < 0 || !t->bucket || !t->scratch) {
        snprintf(msg, msgsize, "cannot set up the TCP transport: %s", strerror(errno));
        return OSN_ENOMEM;
    }
    /* The node's accepted connections and those to others than a next hop, each at most
     * tcp_max_connections, and each worker's own sockets and next hops' connections. */
    long workers = !n->w ? 1 : n->cfg->workers > 0 ? n->cfg->workers : OSN_NODE_MAX_WORKERS;
    fd_room(2L * n->cfg->tcp_max_connections + 64L * workers);
    if (!listening)
        return 0;
    /* The UDP socket's address and port: port 0 was resolved by its bind, and our Via names one
     * port for both transports. SO_REUSEADDR: a restarted node binds past its old TIME_WAITs.
     * Several workers each listen on the port with SO_REUSEPORT: the kernel gives each new
     * connection to one of them (a hash of its 4-tuple), and every message on it stays there. */
    int one = 1;
    t->lfd = socket(n->listen.sa.sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (n->listen.sa.sa_family == AF_INET6)
        (void)setsockopt(t->lfd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    struct epoll_event e = {.events = EPOLLIN, .data.ptr = TCP_LISTEN};
    if (t->lfd < 0 || setsockopt(t->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        (n->w && setsockopt(t->lfd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) != 0) ||
        bind(t->lfd, &n->listen.sa, addr_len(&n->listen)) != 0 || listen(t->lfd, 1024) != 0 ||
        epoll_ctl(t->ep, EPOLL_CTL_ADD, t->lfd, &e) != 0) {
        snprintf(msg, msgsize, "node.listen %s: cannot listen on TCP %s: %s", n->cfg->listen,
                 n->st.listen, strerror(errno));
        return OSN_EIO;
    }
    if (n->lsock < 0)
        return 0;
    /* A proxy's worker of several names its own port in its Via (workers.c), over TCP as over
     * UDP (one sent-by for both transports), so it listens there on TCP too: a next hop that
     * answers on a new connection to our sent-by (RFC 3261 18.2.2, when ours has closed, or
     * as some peers always do) reaches the worker that holds the transaction, not a port where
     * nothing listens. Its own port alone: no SO_REUSEPORT, no other worker shares it. */
    t->ofd = socket(n->via.sa.sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (n->via.sa.sa_family == AF_INET6 && t->ofd >= 0)
        (void)setsockopt(t->ofd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    e.data.ptr = TCP_OWN;
    if (t->ofd < 0 || setsockopt(t->ofd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
        bind(t->ofd, &n->via.sa, addr_len(&n->via)) != 0 || listen(t->ofd, 1024) != 0 ||
        epoll_ctl(t->ep, EPOLL_CTL_ADD, t->ofd, &e) != 0) {
        char own[64];
        addr_text(&n->via, own, sizeof own);
        snprintf(msg, msgsize, "node.workers: cannot listen on TCP on a worker's own port %s: %s",
                 own, strerror(errno));
        return OSN_EIO;
    }
    return 0;
}

void tcp_close(struct node *n)
{
    struct tcp *t = n->tcp;
    if (!t)
        return;
    while (t->n)
        conn_free(n, t->conn[t->n - 1]);
    if (t->lfd >= 0)
        close(t->lfd);
    if (t->ofd >= 0)
        close(t->ofd);
    if (t->ep >= 0)
        close(t->ep);
    free(t->conn);
    free(t->dirty);
    free(t->bucket);
    free(t->scratch);
    free(t);
    n->tcp = NULL;
}

/*
 * The Prometheus text-format endpoint ([node] metrics = HOST:PORT) on GNU libmicrohttpd (MHD):
 * every counter of the node as `osn_node_NAME_total`, plus the queue, the controller's mode,
 * the live transactions and, for loss and rate, the client half's level as gauges.
 *
 *   GET or HEAD /metrics   200, text/plain; version=0.0.4
 *   any other path         404
 *   any other method       405 with Allow: GET, HEAD
 *
 * MHD runs in the node's own thread (with several workers, the thread of worker 0, which sums
 * what the others last published: workers.c), in its external event-loop mode: its epoll descriptor
 * is one more descriptor of the node's ppoll, MHD_get_timeout bounds the wait, and MHD_run does the
 * work when that descriptor is ready or the timeout has passed (run.c). So the counters are read
 * between two turns of the loop, never concurrently, without locks. MHD reads the whole request
 * before answering (no reset from closing a socket with unread bytes), sends with MSG_NOSIGNAL, and
 * bounds what scrapers may hold: METRICS_CONN_LIMIT connections in all, METRICS_PER_IP of them from
 * one address, each closed after METRICS_IDLE_S seconds without progress. MHD's timeout restarts at
 * every byte, so a client trickling its request a byte at a time would keep its connection for
 * ever: this file also ends every connection METRICS_LIFETIME_S seconds after it was accepted,
 * whatever it is doing (shutdown(2) of its socket, after which MHD sees the end of the stream and
 * closes it).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <microhttpd.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "node_int.h"

#define METRICS_CONN_LIMIT 64 /* connections open at once; beyond, they wait in the backlog */
#define METRICS_PER_IP     16 /* of which from one client address */
#define METRICS_IDLE_S     5  /* a connection without progress for this long is closed (s) */
#define METRICS_LIFETIME_S 10 /* and any connection this long after its accept (s) */
#define METRICS_BODY_MAX   32768

/* A connection MHD has accepted and not yet closed: its socket and when it came. */
struct conn {
    int fd;
    double t0; /* CLOCK_MONOTONIC, s */
    bool used, cut;
};

struct metrics {
    struct MHD_Daemon *d;
    struct node *n;
    int epfd;
    int live; /* conns used */
    struct conn conns[METRICS_CONN_LIMIT];
    char err[160]; /* MHD's last message while starting */
    bool started;
    /* At most a few of MHD's messages a second reach stderr (a flood of refused connections
     * must not become a flood of lines); the others are counted and reported with the next. */
    time_t log_sec;
    int log_in_sec;
    unsigned long log_suppressed;
    char body[METRICS_BODY_MAX];
};

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
    struct metrics *m = cls;
    if (!m->started) { /* the reason a start fails, for the node's message */
        vsnprintf(m->err, sizeof m->err, fmt, ap);
        m->err[strcspn(m->err, "\n")] = 0;
        return;
    }
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    if (ts.tv_sec != m->log_sec) {
        m->log_sec = ts.tv_sec;
        m->log_in_sec = 0;
    }
    if (++m->log_in_sec > 5) {
        m->log_suppressed++;
        return;
    }
    fprintf(stderr, "osn node: metrics: ");
    if (m->log_suppressed)
        fprintf(stderr, "(%lu messages not shown) ", m->log_suppressed);
    m->log_suppressed = 0;
    vfprintf(stderr, fmt, ap);
}

static void notify(void *cls, struct MHD_Connection *c, void **ctx,
                   enum MHD_ConnectionNotificationCode what)
{
    struct metrics *m = cls;
    if (what == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *i =
                MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        for (int k = 0; i && k < METRICS_CONN_LIMIT; k++)
            if (!m->conns[k].used) { /* MHD admits no more than there are slots */
                m->conns[k] = (struct conn){i->connect_fd, node_clock(), true, false};
                m->live++;
                *ctx = &m->conns[k];
                return;
            }
        *ctx = NULL;
    } else if (what == MHD_CONNECTION_NOTIFY_CLOSED && *ctx) {
        ((struct conn *)*ctx)->used = false;
        m->live--;
        *ctx = NULL;
    }
}

void node_view(struct node *n, struct node_view *v)
{
    memset(v, 0, sizeof *v);
    for (int i = 0; i < OSN_NODE_NCOUNTERS; i++)
        v->count[i] = osn_node_counter_value(&n->st, i);
    v->queue = n->server.n;
    v->mode = n->server.mode;
    v->live = n->live;
    v->kept = n->kept.n;
    /* The client half's throttle, for a kind with a gauge (osn_ctl_kind_gauge: loss, rate,
     * rate_dyn). Their level is a read: what it may change (an expired oc validity turned off)
     * the next request would change the same way; pi's would run its control interval early,
     * so pi has no gauge. */
    v->kind = n->cli ? osn_ctl_kind_of(n->cli) : OSN_CTL_KIND_NONE;
    if (osn_ctl_kind_gauge(v->kind, NULL))
        v->level = osn_ctl_client_level(n->cli, n->now);
    if (n->nhops > 1) {
        v->nhops = n->fan.n;
        /* Several next hops have a client half each (RFC 7339 5.10: the state is per server),
         * all of one kind: n->cli is unused then, and each hop's level is its own gauge. */
        struct osn_ctl *c0 = n->fan.h[0].cli;
        v->kind = c0 ? osn_ctl_kind_of(c0) : OSN_CTL_KIND_NONE;
        for (int i = 0; i < n->fan.n; i++) {
            struct osn_ctl *c = n->fan.h[i].cli;
            v->hop[i] = n->fan.h[i];
            v->hop[i].cli = NULL; /* not to be read by another thread */
            v->up[i] = osn_elem_hop_up(&n->fan, i, n->now);
            if (c && osn_ctl_kind_gauge(v->kind, NULL))
                v->hop_level[i] = osn_ctl_client_level(c, n->now);
        }
    }
}

/* The exposition text of view v of node n into buf; returns its length (truncated to size - 1
 * at worst). */
static size_t render(const struct node *n, const struct node_view *v, char *buf, size_t size)
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
        size_t len = strlen(name);
        bool gauge = len > 5 && strcmp(name + len - 5, "_peak") == 0;
        ADD("# HELP osn_node_%s%s %s\n# TYPE osn_node_%s%s %s\nosn_node_%s%s %" PRIu64 "\n", name,
            gauge ? "" : "_total", osn_node_counter_meaning(i), name, gauge ? "" : "_total",
            gauge ? "gauge" : "counter", name, gauge ? "" : "_total", v->count[i]);
    }
    ADD("# HELP osn_node_queue messages in the element's server\n# TYPE osn_node_queue gauge\n"
        "osn_node_queue %ld\n",
        v->queue);
    ADD("# HELP osn_node_mode the controller's mode (0 normal, 1 overload, 2 discard)\n"
        "# TYPE osn_node_mode gauge\nosn_node_mode %d\n",
        v->mode);
    ADD("# HELP osn_node_transactions transactions, live and kept\n"
        "# TYPE osn_node_transactions gauge\nosn_node_transactions %zu\n",
        v->live + v->kept);
    ADD("# HELP osn_node_transactions_kept transactions kept compact in their final wait\n"
        "# TYPE osn_node_transactions_kept gauge\nosn_node_transactions_kept %zu\n",
        v->kept);
    /* The client half's throttle (node_view); the element is a label, so that a dashboard over
     * several nodes tells whose throttle it is. */
    const char *element = osn_node_element_name(n->cfg->element);
    /* With several next hops, one sample per server, labelled by its address as the
     * osn_node_next_hop_* series are. */
    /* Its name and help come from the controller's registry: osn_node_client_ + its level's
     * trace column (shed_percent, rate_limit_per_s). */
    int nlevel = v->nhops > 1 ? v->nhops : 1;
    const char *help = osn_ctl_kind_gauge(v->kind, NULL), *lv = osn_ctl_kind_level(v->kind);
    if (help)
        ADD("# HELP osn_node_client_%s %s\n# TYPE osn_node_client_%s gauge\n", lv, help, lv);
    for (int i = 0; help && i < nlevel; i++) {
        double level = v->nhops > 1 ? v->hop_level[i] : v->level;
        char r[32], server[96] = "";
        snprintf(r, sizeof r, isinf(level) ? "+Inf" : "%.17g", level);
        if (v->nhops > 1)
            snprintf(server, sizeof server, ",server=\"%s\"", n->hops[i].text);
        ADD("osn_node_client_%s{element=\"%s\"%s} %s\n", lv, element, server, r);
    }
    /* Several next hops, each labelled by its address (RFC 7339 5.10: the state is per server):
     * the element's counts (src/elem/hops.c) and whether it is up. */
    static const struct {
        const char *name, *help;
        size_t off;
    } hop_counts[] = {
            {"offered", "new requests offered to this next hop by weight",
             offsetof(struct osn_elem_hop, offered)},
            {"sent", "requests sent to this next hop", offsetof(struct osn_elem_hop, sent)},
            {"invites", "INVITEs sent to this next hop", offsetof(struct osn_elem_hop, invites)},
            {"shed", "requests this next hop's client half throttled (sent elsewhere, or 503)",
             offsetof(struct osn_elem_hop, shed)},
            {"timeouts", "client transactions to this next hop that timed out",
             offsetof(struct osn_elem_hop, timeouts)},
            {"downs", "times this next hop was marked down", offsetof(struct osn_elem_hop, downs)},
            {"failovers", "requests sent to this next hop after another failed them",
             offsetof(struct osn_elem_hop, failovers)}};
    for (size_t j = 0; v->nhops > 1 && j < sizeof hop_counts / sizeof hop_counts[0]; j++) {
        ADD("# HELP osn_node_next_hop_%s_total %s\n# TYPE osn_node_next_hop_%s_total counter\n",
            hop_counts[j].name, hop_counts[j].help, hop_counts[j].name);
        for (int i = 0; i < v->nhops; i++) {
            uint64_t c;
            memcpy(&c, (const char *)&v->hop[i] + hop_counts[j].off, sizeof c);
            ADD("osn_node_next_hop_%s_total{server=\"%s\"} %" PRIu64 "\n", hop_counts[j].name,
                n->hops[i].text, c);
        }
    }
    if (v->nhops > 1) {
        ADD("# HELP osn_node_next_hop_up 1 while the next hop may be chosen, 0 while marked "
            "down\n# TYPE osn_node_next_hop_up gauge\n");
        for (int i = 0; i < v->nhops; i++)
            ADD("osn_node_next_hop_up{server=\"%s\"} %d\n", n->hops[i].text, v->up[i] ? 1 : 0);
    }
    ADD("# HELP osn_node_info the element this node plays\n# TYPE osn_node_info gauge\n"
        "osn_node_info{element=\"%s\"} 1\n",
        element);
#undef ADD
    return k;
}

static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *body,
                             size_t len, const char *type, bool allow)
{
    struct MHD_Response *r =
            MHD_create_response_from_buffer(len, (void *)body, MHD_RESPMEM_MUST_COPY);
    if (!r)
        return MHD_NO; /* MHD closes the connection */
    MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
    if (allow)
        MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
    enum MHD_Result ret = MHD_queue_response(c, status, r);
    MHD_destroy_response(r);
    return ret;
}

static enum MHD_Result answer(void *cls, struct MHD_Connection *c, const char *url,
                              const char *method, const char *version, const char *upload,
                              size_t *upload_size, void **req_cls)
{
    struct metrics *m = cls;
    static const char not_allowed[] = "only GET and HEAD\n", not_found[] = "try /metrics\n";
    (void)version, (void)upload, (void)upload_size, (void)req_cls;
    if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
        return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, not_allowed, sizeof not_allowed - 1,
                     "text/plain", true);
    if (strcmp(url, "/metrics") != 0)
        return reply(c, MHD_HTTP_NOT_FOUND, not_found, sizeof not_found - 1, "text/plain", false);
    struct node_view v;
    if (m->n->w) /* worker 0's endpoint: the sum of every worker's */
        workers_view(m->n, &v);
    else
        node_view(m->n, &v);
    size_t len = render(m->n, &v, m->body, sizeof m->body);
    return reply(c, MHD_HTTP_OK, m->body, len, "text/plain; version=0.0.4; charset=utf-8", false);
}

struct metrics *metrics_open(struct node *n, const union node_addr *sa, char *msg, size_t msgsize)
{
    struct metrics *m = calloc(1, sizeof *m);
    if (!m) {
        snprintf(msg, msgsize, "out of memory");
        return NULL;
    }
    m->n = n;
    /* No MHD_USE_INTERNAL_POLLING_THREAD: MHD makes no thread; the node's loop drives it.
     * SIGPIPE is left to MHD (MSG_NOSIGNAL), so that a program calling osn_node_run() without
     * ignoring SIGPIPE is safe too. */
    unsigned flags = MHD_USE_EPOLL | MHD_USE_ERROR_LOG;
    if (sa->sa.sa_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    m->d = MHD_start_daemon(flags, addr_port(sa), NULL, NULL, answer, m, MHD_OPTION_SOCK_ADDR,
                            &sa->sa, MHD_OPTION_CONNECTION_LIMIT, (unsigned)METRICS_CONN_LIMIT,
                            MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned)METRICS_PER_IP,
                            MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)METRICS_IDLE_S,
                            MHD_OPTION_NOTIFY_CONNECTION, notify, m, MHD_OPTION_EXTERNAL_LOGGER,
                            mhd_log, m, MHD_OPTION_END);
    const union MHD_DaemonInfo *info =
            m->d ? MHD_get_daemon_info(m->d, MHD_DAEMON_INFO_EPOLL_FD) : NULL;
    if (!info) {
        snprintf(msg, msgsize, "%s", m->err[0] ? m->err : strerror(errno));
        metrics_close(m);
        return NULL;
    }
    m->epfd = info->epoll_fd;
    m->started = true;
    return m;
}

int metrics_fd(const struct metrics *m)
{
    return m->epfd;
}

int metrics_listen_fd(const struct metrics *m)
{
    const union MHD_DaemonInfo *i = MHD_get_daemon_info(m->d, MHD_DAEMON_INFO_LISTEN_FD);
    return i ? i->listen_fd : -1;
}

double metrics_wait(struct metrics *m)
{
    MHD_UNSIGNED_LONG_LONG ms;
    double wait = MHD_get_timeout(m->d, &ms) == MHD_YES ? (double)ms * 1e-3 : INFINITY;
    if (m->live > 0) {
        double now = node_clock();
        for (int k = 0; k < METRICS_CONN_LIMIT; k++)
            if (m->conns[k].used && !m->conns[k].cut &&
                m->conns[k].t0 + METRICS_LIFETIME_S - now < wait)
                wait = m->conns[k].t0 + METRICS_LIFETIME_S - now;
    }
    return wait > 0 ? wait : 0;
}

static unsigned connections(struct metrics *m)
{
    const union MHD_DaemonInfo *i = MHD_get_daemon_info(m->d, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
    return i ? i->num_connections : 0;
}

void metrics_run(struct metrics *m)
{
    if (m->live > 0) {
        double now = node_clock();
        for (int k = 0; k < METRICS_CONN_LIMIT; k++)
            if (m->conns[k].used && !m->conns[k].cut &&
                now >= m->conns[k].t0 + METRICS_LIFETIME_S) {
                (void)shutdown(m->conns[k].fd, SHUT_RDWR); /* MHD closes it in the run below */
                m->conns[k].cut = true;
            }
    }
    unsigned before = connections(m);
    (void)MHD_run(m->d);
    /* At the connection limit MHD takes its listening socket out of its epoll set, and puts it
     * back only at the start of a run, not when a connection closes. A run that closed some
     * (timed out, answered) is followed by another at once, or the socket would stay out until
     * some other connection stirred, and with none left the endpoint would accept nothing
     * again (seen with 0.9.75: the over-the-limit check of metrics_hostile.py). */
    if (connections(m) < before)
        (void)MHD_run(m->d);
}

void metrics_close(struct metrics *m)
{
    if (!m)
        return;
    if (m->d)
        MHD_stop_daemon(m->d);
    free(m);
}

/* ---- the counter registry (osn/node.h): the JSON, the summary and this endpoint read it ---- */

static const struct {
    const char *name, *meaning;
} counters[] = {
#define OSN_NODE_ROW(name, meaning) {#name, meaning},
        OSN_NODE_COUNTERS(OSN_NODE_ROW)
#undef OSN_NODE_ROW
};

int osn_node_counter_count(void)
{
    return (int)(sizeof counters / sizeof counters[0]);
}

const char *osn_node_counter_name(int i)
{
    return i >= 0 && i < osn_node_counter_count() ? counters[i].name : "?";
}

const char *osn_node_counter_meaning(int i)
{
    return i >= 0 && i < osn_node_counter_count() ? counters[i].meaning : "?";
}

uint64_t osn_node_counter_value(const struct osn_node_stats *st, int i)
{
    const uint64_t *v = &st->datagrams_in; /* the counters are consecutive uint64_t fields */
    return i >= 0 && i < osn_node_counter_count() ? v[i] : 0;
}

/*
 * Several event loops in one node: `[node] workers = N` (issue 34). Each worker is a whole
 * struct node in a thread of its own (worker 0 in the caller's), running run.c's loop: its own
 * transactions, timers, pending set, dialogs, per-source budget, send queue and counters. They
 * share nothing on the fast path: no lock is taken and no message is handed from one worker to
 * another. What they share is set up before the threads start and read-only after (the hash
 * key, the branch salt, the listening port, the list of the workers' ports), plus the stop flag
 * and each worker's published snapshot (below).
 *
 * How every message finds the worker that owns its transaction:
 *
 *   - Requests from upstream. Each worker binds its own listening socket to `listen` with
 *     SO_REUSEPORT (the first binds what listen says, port 0 included; the others bind the port
 *     it got). The kernel gives each datagram to one socket of the group by a hash of its
 *     4-tuple, so every datagram of one peer's address and port lands on one worker: an INVITE,
 *     its retransmissions, the CANCEL and the ACK of a non-2xx (RFC 3261 9.1 and 17.1.1.3: the
 *     same branch as the INVITE, and a UA sends them where it sent the INVITE, from the same
 *     socket), which is where the server transaction is. A peer that sent a transaction's
 *     requests from two source ports would split it over two workers: the copy would start a
 *     second transaction (a duplicate forward) and a CANCEL would get 481. No peer we know does
 *     (SIPp, Kamailio, baresip, osn node send a transaction from one socket).
 *   - Responses from downstream. A proxy's worker sends its requests from a port of its own
 *     (an unconnected socket bound to the listening address, port 0, and, sharing that port,
 *     one socket connected to each next hop), and its Via's sent-by names that port. The next
 *     hop answers there (RFC 3261 18.2.2; SIPp answers the source port, which is the same), so
 *     a response comes back to the worker that sent the request and holds its client
 *     transaction, whatever the kernel's hash. The connected sockets cannot tell workers apart
 *     by themselves: N sockets connected to one next hop from one port would have the same
 *     4-tuple and the kernel would give every response to the first of them, hence a port per
 *     worker. The branch we write also differs per worker (branch_seq starts at worker << 48),
 *     so two workers never send the same branch.
 *   - In-dialog requests (BYE, re-INVITE, the ACK of a 2xx, which has a branch of its own) are
 *     new transactions, or stateless for the ACK: any worker serves them, and the 4-tuple hash
 *     keeps each one's retransmissions on one worker. A proxy keeps no dialog state, so which
 *     worker serves a dialog's requests does not matter. A uas knows its calls per worker (its
 *     `calls` record, for the 481 of a BYE of no call): a caller that sent a call's BYE from
 *     another port than its INVITE could reach a worker that does not know the call, and get 481.
 *   - Responses upstream leave from the listening port, where their request came (RFC 3581 4).
 *   - TCP (tcp.c). Each worker listens on the port with SO_REUSEPORT, so the kernel gives each
 *     *connection* to one worker, and every message read from it (requests, their CANCEL and
 *     ACK, since RFC 3261 18.1.1 sends a transaction's requests on one connection) is that
 *     worker's, as are our responses on it (18.2.2). Each worker opens its own connection to a
 *     next hop and sends on it only its own transactions' requests; the next hop answers on the
 *     connection the request came on (18.2.2), so a response comes back to the worker that
 *     holds its client transaction. Our Via names the worker's own port, and a proxy worker
 *     listens on TCP there too (tcp_open), so a next hop that answers on a new connection to
 *     our Via's sent-by (18.2.2) reaches that worker as well. If our connection is gone the
 *     transactions on it have failed already (17.1.4, tcp.c). A Route's or a response's fallback
 *     connection is opened by the worker whose transaction sends on it. tcp_max_connections
 *     counts the node's connections across the workers (node.tcp_places).
 *   - A request that loops back (RFC 3261 16.3 step 4) may come to any worker: the loop check
 *     knows every worker's port (n->ports), and the loop hash is keyed alike in all.
 *
 * The element's overload view. The simulator's element is one server: one virtual CPU, one
 * buffer, one controller. With N workers the node is N such servers side by side, each of the
 * element's capacity / N (its cost_* keys times N), its own buffer of `buffer` messages and its
 * own controller (server half at a core, client half per next hop at an edge), fed by the
 * kernel's hash. That is the element the simulator models only when the load spreads evenly
 * over the workers, which takes many upstream peers (or ports): one SIPp with one socket, or
 * one upstream proxy with one worker, is one 4-tuple and loads one worker, whose capacity is
 * 1/N of the element's. We chose it over a shared queue under a lock (every message would take
 * the lock twice, and the service completions would have to run in the thread that owns each
 * message's transaction) and over one owner worker with hand-offs (every message crossing
 * threads twice): it costs nothing per message, and with costs 0 (the node at its real speed,
 * where workers matter) there is no virtual CPU to split. workers = 1 (the default) is the
 * simulator's element exactly; the simulator models N workers only as that one server.
 *
 * Counts. Each worker keeps its own counters. Every few milliseconds of loop turns, and before
 * it sleeps, a worker publishes a snapshot (struct node_view) under its own mutex; worker 0's
 * metrics endpoint and stats rows sum its own live view with the others' snapshots (so a scrape
 * may be a few ms behind a busy worker; exact once the node is idle). At the end the summary sums
 * the workers' final counts and keeps each one's (osn_node_stats.worker).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "node_int.h"
#include "osn/err.h"

/* A snapshot is published at most this often while the worker is busy (s). */
#define PUBLISH_EVERY 0.005

struct slot {
    struct node node; /* first: a worker's node is its slot */
    struct osn_node_cfg cfg;
    pthread_t th;
    bool started;
    pthread_mutex_t mu; /* guards view */
    struct node_view view;
    int err;
};

struct workers {
    int n;
    atomic_bool stop;
    /* The node's TCP connections by kind (tcp.c: accepted, and opened to others than a next
     * hop), each capped at tcp_max_connections for the whole node, not per worker. */
    atomic_size_t tcp_conns[2];
    int wake; /* eventfd: written once at the end, polled by every worker */
    uint16_t port;
    uint16_t ports[OSN_NODE_MAX_WORKERS];
    struct slot *slot[OSN_NODE_MAX_WORKERS];
};

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int workers_count(const struct osn_node_cfg *cfg)
{
    long k = cfg->workers;
    if (k == 0)
        k = sysconf(_SC_NPROCESSORS_ONLN);
    return k < 1 ? 1 : k > OSN_NODE_MAX_WORKERS ? OSN_NODE_MAX_WORKERS : (int)k;
}

uint16_t workers_port(const struct node *n)
{
    return n->w ? n->w->port : n->port;
}

int workers_wake_fd(const struct node *n)
{
    return n->w ? n->w->wake : -1;
}

bool workers_stopping(const struct node *n)
{
    return n->w && atomic_load(&n->w->stop);
}

void workers_stop(struct node *n)
{
    if (!n->w)
        return;
    atomic_store(&n->w->stop, true);
    uint64_t one = 1;
    (void)!write(n->w->wake, &one, sizeof one);
}

void workers_publish(struct node *n, bool now)
{
    if (!n->w || n->worker == 0 || (!now && n->now - n->published < PUBLISH_EVERY))
        return;
    struct slot *s = (struct slot *)n;
    struct node_view v;
    n->published = n->now;
    node_view(n, &v);
    pthread_mutex_lock(&s->mu);
    s->view = v;
    pthread_mutex_unlock(&s->mu);
}

void workers_view(struct node *n, struct node_view *v)
{
    node_view(n, v);
    if (!n->w)
        return;
    int levels = osn_ctl_kind_gauge(v->kind, NULL) != NULL;
    for (int i = 0; i < n->w->n; i++) {
        struct slot *s = n->w->slot[i];
        struct node_view o;
        if (&s->node == n)
            continue;
        pthread_mutex_lock(&s->mu);
        o = s->view;
        pthread_mutex_unlock(&s->mu);
        for (int c = 0; c < OSN_NODE_NCOUNTERS; c++)
            v->count[c] += o.count[c];
        v->queue += o.queue;
        v->mode = o.mode > v->mode ? o.mode : v->mode;
        v->live += o.live;
        v->kept += o.kept;
        /* Each worker's client half lets its own share through: the node's rate limit is their
         * sum; the percent shed, their mean (osn_ctl_kind_gauge says which). */
        if (osn_ctl_kind_gauge(o.kind, NULL)) {
            v->kind = o.kind;
            v->level += o.level;
            levels++;
        }
        for (int h = 0; h < o.nhops && h < OSN_ELEM_MAX_HOPS; h++) {
            struct osn_elem_hop *d = &v->hop[h];
            d->offered += o.hop[h].offered;
            d->sent += o.hop[h].sent;
            d->invites += o.hop[h].invites;
            d->shed += o.hop[h].shed;
            d->timeouts += o.hop[h].timeouts;
            d->got_503 += o.hop[h].got_503;
            d->downs += o.hop[h].downs;
            d->failovers += o.hop[h].failovers;
            v->up[h] = v->up[h] || o.up[h];
            v->hop_level[h] += o.hop_level[h]; /* summed as level is, divided below */
        }
    }
    bool mean = false;
    if (osn_ctl_kind_gauge(v->kind, &mean) && mean && levels > 0) {
        v->level /= levels;
        for (int h = 0; h < v->nhops && h < OSN_ELEM_MAX_HOPS; h++)
            v->hop_level[h] /= levels;
    }
}

/* Worker i's final counts w into the node's st. */
static void stats_add(struct osn_node_stats *st, const struct osn_node_stats *w, int i, int count)
{
#define OSN_NODE_ADD(name, meaning) st->name += w->name;
    OSN_NODE_COUNTERS(OSN_NODE_ADD)
#undef OSN_NODE_ADD
    for (int c = 0; c < OSN_NODE_NCOUNTERS; c++)
        st->worker[i][c] = osn_node_counter_value(w, c);
    st->nworkers = count;
    if (i == 0) {
        memcpy(st->listen, w->listen, sizeof st->listen);
        memcpy(st->metrics, w->metrics, sizeof st->metrics);
        st->uac = w->uac;
        st->nhops = w->nhops;
        for (int h = 0; h < w->nhops; h++) {
            memcpy(st->hops[h].server, w->hops[h].server, sizeof st->hops[h].server);
            st->hops[h].weight = w->hops[h].weight;
        }
    }
    st->rss_peak_kb = w->rss_peak_kb > st->rss_peak_kb ? w->rss_peak_kb : st->rss_peak_kb;
    st->elapsed_s = w->elapsed_s > st->elapsed_s ? w->elapsed_s : st->elapsed_s;
    /* Each worker is 1/count of the element: its busy and mode times weigh 1/count. */
    st->busy_s += w->busy_s / count;
    for (int m = 0; m < 3; m++)
        st->mode_time[m] += w->mode_time[m] / count;
    for (int h = 0; h < w->nhops && h < OSN_ELEM_MAX_HOPS; h++) {
        struct osn_node_hop_stats *d = &st->hops[h];
        const struct osn_node_hop_stats *s = &w->hops[h];
        d->offered += s->offered;
        d->sent += s->sent;
        d->invites += s->invites;
        d->shed += s->shed;
        d->timeouts += s->timeouts;
        d->got_503 += s->got_503;
        d->downs += s->downs;
        d->failovers += s->failovers;
        d->down = d->down || s->down;
    }
}

static void *worker_main(void *arg)
{
    struct slot *s = arg;
    s->err = node_loop(&s->node, NULL);
    workers_stop(&s->node);
    workers_publish(&s->node, true);
    return NULL;
}

int workers_run(const struct osn_node_cfg *cfg, int count, struct osn_node_stats *st, char *msg,
                size_t msgsize)
{
    struct workers *w = calloc(1, sizeof *w);
    struct metrics *met = NULL;
    int err = 0;
    if (!w)
        return OSN_ENOMEM;
    w->n = count;
    atomic_init(&w->stop, false);
    atomic_init(&w->tcp_conns[0], 0);
    atomic_init(&w->tcp_conns[1], 0);
    w->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (w->wake < 0) {
        snprintf(msg, msgsize, "node.workers: eventfd: %s", strerror(errno));
        free(w);
        return OSN_EIO;
    }
    for (int i = 0; i < count; i++) {
        struct slot *s = calloc(1, sizeof *s);
        if (!s) {
            snprintf(msg, msgsize, "out of memory starting %d workers", count);
            err = OSN_ENOMEM;
            break;
        }
        w->slot[i] = s;
        pthread_mutex_init(&s->mu, NULL);
        /* Each worker is 1/count of the element's virtual CPU (the file's head says why); only
         * worker 0 writes the rows and the ready line and serves the metrics. */
        s->cfg = *cfg;
        for (int k = 0; k < OSN_ELEM_NKINDS; k++)
            s->cfg.cost[k] *= count;
        /* and 1/count of the memory budget (max_transactions derived from it then too) */
        if (s->cfg.max_memory && s->cfg.max_memory / (size_t)count >= ((size_t)1 << 20))
            s->cfg.max_memory /= (size_t)count;
        if (i > 0) {
            s->cfg.stats = s->cfg.console = s->cfg.ready = s->cfg.trace = NULL;
            s->cfg.metrics[0] = 0;
        }
        s->node.sock = s->node.lsock = -1;
        s->node.w = w;
        s->node.tcp_places = w->tcp_conns;
        s->node.worker = i;
        s->node.published = -INFINITY;
    }
    /* Bound one after the other: worker 0 first, so the others know the port. */
    for (int i = 0; !err && i < count; i++) {
        struct node *n = &w->slot[i]->node;
        err = node_start(n, &w->slot[i]->cfg, i == 0 ? &met : &(struct metrics *){NULL}, msg,
                         msgsize);
        if (!err && i == 0)
            w->port = n->port;
        if (!err)
            w->ports[i] = n->via_port;
    }
    for (int i = 0; !err && i < count; i++) {
        bool proxy = cfg->element != OSN_NODE_UAS;
        w->slot[i]->node.ports = w->ports;
        w->slot[i]->node.nports = proxy ? count : 0;
    }
    struct node *n0 = w->slot[0] ? &w->slot[0]->node : NULL;
    if (!err && cfg->ready)
        node_ready_line(n0, cfg->ready);
    if (!err) {
        double t0 = mono();
        for (int i = 0; i < count; i++)
            w->slot[i]->node.t_start = t0;
        /* The threads start with SIGINT and SIGTERM blocked; each loop lets them in only inside
         * its ppoll, and the worker that takes one wakes the others (workers_stop). */
        sigset_t block, old;
        sigemptyset(&block);
        sigaddset(&block, SIGINT);
        sigaddset(&block, SIGTERM);
        pthread_sigmask(SIG_BLOCK, &block, &old);
        for (int i = 1; i < count; i++) {
            struct slot *s = w->slot[i];
            int e = pthread_create(&s->th, NULL, worker_main, s);
            if (e) {
                snprintf(msg, msgsize, "node.workers: cannot start worker %d: %s", i, strerror(e));
                err = OSN_EIO;
                break;
            }
            s->started = true;
        }
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (!err) {
            err = node_loop(n0, met);
            node_err_msg(n0, err, msg, msgsize);
        }
        workers_stop(n0);
        for (int i = 1; i < count; i++) {
            struct slot *s = w->slot[i];
            if (!s->started)
                continue;
            pthread_join(s->th, NULL);
            if (!err && s->err) {
                err = s->err;
                node_err_msg(&s->node, err, msg, msgsize);
            }
        }
        if (cfg->console && !cfg->console_lines)
            fputc('\n', cfg->console);
    }
    metrics_close(met);
    memset(st, 0, sizeof *st);
    for (int i = 0; i < count && w->slot[i]; i++) {
        struct slot *s = w->slot[i];
        struct osn_node_stats one;
        node_end(&s->node, &one);
        stats_add(st, &one, i, count);
        pthread_mutex_destroy(&s->mu);
        free(s);
    }
    close(w->wake);
    free(w);
    return err;
}

/*
 * The node's event loop, its stats rows and the summary (set-up from the scenario: config.c;
 * the counter registry and the metrics endpoint: metrics.c; several loops: workers.c).
 *
 * One thread, one loop per worker (node.workers, default 1). Each turn: take the monotonic
 * clock, fire every due deadline in order (transaction timers, the UAS's 2xx timer, the virtual
 * CPU's service completions), then wait in ppoll(2) on the UDP sockets (the listening one, each
 * next hop's; a worker of several also its own listening socket and the workers' stop
 * descriptor; the metrics endpoint's epoll descriptor) until the next deadline, the next stats
 * row, the metrics endpoint's own deadline or a signal, and read every datagram waiting
 * (recvmmsg, a batch at a time). The metrics endpoint (libmicrohttpd, in the thread of worker
 * 0: metrics.c) runs in the same turn when its descriptor is ready or its deadline has passed.
 * What a turn sends leaves in one sendmmsg before the next wait (udp.c). SIGINT and SIGTERM are
 * blocked except inside ppoll, so a stop request is never lost between the check and the wait
 * (one that waits while descriptors stay ready is seen within STOP_CHECK_S, 10 ms);
 * the node then writes its summary like any other end (with several workers, the one that took
 * the signal wakes the others: workers.c).
 */
#define _GNU_SOURCE /* recvmmsg, ppoll */
#include <errno.h>
#include <malloc.h>
#include <math.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "node_int.h"
#include "osn/err.h"

#define RECV_BATCH 32
/* How often (s) the loop asks whether a stop signal waits blocked (stop_pending). */
#define STOP_CHECK_S 0.01

static uint64_t rss_peak_kb(void)
{
    char line[256];
    uint64_t kb = 0;
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "VmHWM: %lu kB", &kb) == 1)
            break;
    fclose(f);
    return kb;
}

/* The receive batch: buffers and the headers recvmmsg fills, set up once for the loop, not on
 * every wake-up: at a few hundred calls/s a wake-up reads one datagram, and writing 32 headers
 * each time was 2 % of a proxy's instructions (bench/node_callgrind.sh). The kernel writes
 * msg_len, msg_flags and msg_namelen of the entries it fills; only msg_namelen is an input
 * too, so read_all restores it on those. */
struct recv_batch {
    char (*bufs)[OSN_SIP_WIRE_MAX_LEN + 1];
    struct mmsghdr msgs[RECV_BATCH];
    struct iovec iov[RECV_BATCH];
    union node_addr from[RECV_BATCH];
};

static struct recv_batch *recv_batch_new(void)
{
    struct recv_batch *b = calloc(1, sizeof *b);
    if (b && !(b->bufs = malloc(RECV_BATCH * sizeof *b->bufs))) {
        free(b);
        return NULL;
    }
    for (int i = 0; b && i < RECV_BATCH; i++) {
        b->iov[i] = (struct iovec){b->bufs[i], OSN_SIP_WIRE_MAX_LEN};
        b->msgs[i].msg_hdr.msg_iov = &b->iov[i];
        b->msgs[i].msg_hdr.msg_iovlen = 1;
        b->msgs[i].msg_hdr.msg_name = &b->from[i];
        b->msgs[i].msg_hdr.msg_namelen = sizeof b->from[i];
    }
    return b;
}

static void recv_batch_free(struct recv_batch *b)
{
    if (b) {
        free(b->bufs);
        free(b);
    }
}

/* Reads every datagram waiting on socket fd, a batch at a time. */
static void read_all(struct node *n, int fd, struct recv_batch *b)
{
    struct mmsghdr *msgs = b->msgs;
    for (int round = 0; round < 64; round++) { /* then timers get their turn */
        int k = recvmmsg(fd, msgs, RECV_BATCH, MSG_DONTWAIT, NULL);
        if (k < 0 && (errno == ECONNREFUSED || errno == EHOSTUNREACH || errno == ENETUNREACH))
            continue; /* a connected socket's pending ICMP error (udp_errors reads it) */
        if (k <= 0)
            return;
        n->now = node_clock() - n->t_start;
        /* What fell due before these datagrams were read comes first, as in the simulator's
         * order of time: a service that ended while the loop was away (descheduled, or busy)
         * ends at its time, before the arrivals it finds (recv.c, node_service_done). */
        node_fire_due(n);
        for (int i = 0; i < k && !n->err; i++) {
            if (msgs[i].msg_hdr.msg_flags & MSG_TRUNC) { /* over 65,535 bytes: not SIP on UDP */
                n->st.datagrams_in++;
                n->st.bad_dropped++;
                continue;
            }
            /* a next hop's link of its own holds what comes from it first (link.c) */
            if (!(n->link.own && link_arrive(n, &b->from[i], b->bufs[i], msgs[i].msg_len)))
                node_datagram(n, b->bufs[i], msgs[i].msg_len, &b->from[i]);
        }
        for (int i = 0; i < k; i++)
            msgs[i].msg_hdr.msg_namelen = sizeof b->from[i];
        node_fire_due(n);
        udp_flush(n);
        if (k < RECV_BATCH)
            return;
    }
}

/* The counters and gauges the rows show: the node's, summed over its workers. */
static void view_of(struct node *n, struct node_view *v)
{
    if (n->w)
        workers_view(n, v);
    else
        node_view(n, v);
}

#define V(name) v.count[offsetof(struct osn_node_stats, name) / sizeof(uint64_t)]

static void stats_row(struct node *n, FILE *f)
{
    struct node_view v;
    view_of(n, &v);
    fprintf(f, "%.3f,%lu,%lu,%lu,%lu,%lu,%lu,%ld,%d\n", n->now, V(calls_in), V(calls_forwarded),
            V(calls_ok), V(rejected_503), V(dropped), V(retrans_absorbed), v.queue, v.mode);
    fflush(f);
}

static void console_row(struct node *n, FILE *f)
{
    struct node_view v;
    view_of(n, &v);
    fprintf(f,
            "%sosn node %s: %7.1f s  calls in %lu  fwd %lu  ok %lu  503 %lu  dropped %lu  "
            "retrans %lu  queue %ld  mode %d%s",
            n->cfg->console_lines ? "" : "\r", osn_node_element_name(n->cfg->element), n->now,
            V(calls_in), V(calls_forwarded), V(calls_ok), V(rejected_503), V(dropped),
            V(retrans_absorbed), v.queue, v.mode, n->cfg->console_lines ? "\n" : " ");
    fflush(f);
}

#undef V

void node_ready_line(const struct node *n, FILE *f)
{
    const struct osn_node_cfg *cfg = n->cfg;
    fprintf(f, "osn node %s listening on %s (udp)", osn_node_element_name(cfg->element),
            n->st.listen);
    union node_addr la;
    bool tcp = false;
    char why[128];
    if (addr_parse_tp(cfg->listen, &la, &tcp, why, sizeof why) == 0 && tcp)
        fprintf(f, ", tcp %s", n->st.listen); /* on the same port */
    if (n->st.metrics[0])
        fprintf(f, ", metrics %s", n->st.metrics);
    for (size_t i = 0; cfg->element != OSN_NODE_UAS && i < n->nhops; i++)
        fprintf(f, "%s%s%s",
                i              ? ", "
                : n->nhops > 1 ? ", next hops "
                               : ", next hop ",
                n->hops[i].text, n->hops[i].tcp ? " (tcp)" : "");
    if (n->w)
        fprintf(f, ", workers %d", workers_count(cfg));
    fputc('\n', f);
    fflush(f);
}

static void teardown(struct node *n)
{
    tcp_close(n);
    free(n->outq.bytes);
    n->outq.bytes = NULL;
    if (n->sock >= 0)
        close(n->sock);
    if (n->lsock >= 0)
        close(n->lsock);
    n->sock = n->lsock = -1;
    for (size_t i = 0; i < n->nhops; i++)
        if (n->hops[i].fd >= 0)
            close(n->hops[i].fd);
    free(n->hops);
    n->hops = NULL;
    node_release(n);
}

/* Whether SIGINT or SIGTERM waits, blocked. ppoll delivers a signal only when it finds no
 * descriptor ready, so a descriptor that stays ready (a flood on the socket, or the HTTP
 * endpoint with work every turn) would keep a stop request waiting for good: a node under the
 * sanitizers once ignored SIGTERM for 30 s so. The signal is delivered when the loop unblocks it
 * on its way out. */
static bool stop_pending(void)
{
    sigset_t pending;
    return sigpending(&pending) == 0 &&
           (sigismember(&pending, SIGINT) == 1 || sigismember(&pending, SIGTERM) == 1);
}

int node_loop(struct node *n, struct metrics *met)
{
    const struct osn_node_cfg *cfg = n->cfg;
    /* Polled: the socket of our Via, each next hop's (ICMP errors, and the responses of a peer
     * that answers the source port), a worker's listening socket and the workers' stop
     * descriptor (-1, ignored, with one worker), the metrics endpoint, the TCP epoll set. */
    size_t npfd = 5 + n->nhops, ilis = 1 + n->nhops, iwake = 2 + n->nhops, imet = 3 + n->nhops,
           itcp = 4 + n->nhops;
    struct pollfd *pfd = calloc(npfd, sizeof *pfd);
    struct recv_batch *rb = recv_batch_new();
    if (!pfd || !rb) {
        free(pfd);
        recv_batch_free(rb);
        return n->err = OSN_ENOMEM;
    }
    sigset_t block, wait_mask;
    sigemptyset(&block);
    sigaddset(&block, SIGINT);
    sigaddset(&block, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &block, &wait_mask);
    sigdelset(&wait_mask, SIGINT);
    sigdelset(&wait_mask, SIGTERM);
    double next_row = cfg->stats_interval;
    if (cfg->stats && n->gen)
        gen_stats_header(cfg->stats);
    else if (cfg->stats)
        fprintf(cfg->stats, "t,calls_in,calls_forwarded,calls_ok,rejected_503,dropped,"
                            "retrans_absorbed,queue,mode\n");
    bool draining = false;
    /* stop_pending is a system call, and a turn of a busy proxy handles a datagram or two: asked
     * every turn it was a quarter of the node's system calls (bench/node_callgrind.sh), so it is
     * asked at most every STOP_CHECK_S, which bounds how late a stop under a flood can be. */
    double stop_check = 0;
    while (!n->err && !(cfg->stop && *cfg->stop) && !workers_stopping(n)) {
        n->now = node_clock() - n->t_start;
        if (n->now >= stop_check) {
            if (stop_pending())
                break;
            stop_check = n->now + STOP_CHECK_S;
        }
        node_fire_due(n);
        if (cfg->duration > 0 && n->now >= cfg->duration) {
            /* The load generator's traffic ends here; it drains until every call has ended. */
            if (!n->gen || (draining && gen_done(n)))
                break;
            if (!draining)
                gen_drain(n);
            draining = true;
            if (gen_done(n))
                break;
        }
        if (n->now >= next_row) {
            if (cfg->stats)
                (n->gen ? gen_stats_row : stats_row)(n, cfg->stats);
            if (cfg->console)
                (n->gen ? gen_console_row : console_row)(n, cfg->console);
            next_row +=
                    cfg->stats_interval * (1 + floor((n->now - next_row) / cfg->stats_interval));
        }
        udp_flush(n); /* what this turn produced, before the wait */
        tcp_flush(n);
        double until = next_row;
        const struct tm_entry *top = timers_top(&n->timers);
        /* The earliest deadline, plus the generator's wake slack (gen.c, gen_wake_slack): the
         * deadlines due by then are fired together in the next turn, none before its time. */
        if (top && top->at + n->wake_slack < until)
            until = top->at + n->wake_slack;
        if (cfg->duration > 0 && cfg->duration < until && !draining)
            until = cfg->duration;
        if (n->tcp && tcp_deadline(n) < until)
            until = tcp_deadline(n);
        double wait = until - n->now;
        /* The HTTP endpoint's own deadline (a connection's idle timeout, work it has pending):
         * MHD must run by then even if its descriptor stays quiet. */
        double http_at = met ? n->now + metrics_wait(met) : INFINITY;
        if (http_at - n->now < wait)
            wait = http_at - n->now;
        if (wait < 0)
            wait = 0;
        if (n->w) /* what the other workers' rows and scrapes read of this one */
            workers_publish(n, wait > 0.001);
        struct timespec ts = {(time_t)wait, (long)((wait - floor(wait)) * 1e9)};
        pfd[0] = (struct pollfd){n->sock, POLLIN, 0};
        for (size_t i = 0; i < n->nhops; i++)
            pfd[1 + i] = (struct pollfd){n->hops[i].fd, POLLIN, 0};
        pfd[ilis] = (struct pollfd){n->lsock, POLLIN, 0};
        pfd[iwake] = (struct pollfd){workers_wake_fd(n), POLLIN, 0};
        pfd[imet] = (struct pollfd){met ? metrics_fd(met) : -1, POLLIN, 0};
        pfd[itcp] = (struct pollfd){tcp_fd(n), POLLIN, 0};
        int r = ppoll(pfd, (nfds_t)npfd, &ts, &wait_mask);
        if (r < 0 && errno != EINTR) {
            n->err = OSN_EIO;
            break;
        }
        for (size_t i = 0; r > 0 && i <= n->nhops + 1; i++) {
            struct next_hop *h = i && i <= n->nhops ? &n->hops[i - 1] : NULL;
            if (pfd[i].revents & POLLERR) {
                n->now = node_clock() - n->t_start;
                if (i == ilis)
                    udp_errors_listen(n);
                else
                    udp_errors(n, h);
            }
            if (pfd[i].revents & POLLIN)
                read_all(n, pfd[i].fd, rb);
        }
        if (n->tcp &&
            ((r > 0 && pfd[itcp].revents) || node_clock() - n->t_start >= tcp_deadline(n))) {
            n->now = node_clock() - n->t_start;
            tcp_run(n);
        }
        if (met && ((r > 0 && pfd[imet].revents) ||
                    (http_at < INFINITY && node_clock() - n->t_start >= http_at))) {
            n->now = node_clock() - n->t_start;
            metrics_run(met);
        }
    }
    pthread_sigmask(SIG_UNBLOCK, &block, NULL);
    free(pfd);
    recv_batch_free(rb);
    return n->err;
}

int node_start(struct node *n, const struct osn_node_cfg *cfg, struct metrics **met, char *msg,
               size_t msgsize)
{
    int err = node_setup(n, cfg, msg, msgsize);
    if (!err && cfg->metrics[0]) {
        char why[200];
        union node_addr sa;
        addr_parse(cfg->metrics, &sa, why, sizeof why);
        *met = metrics_open(n, &sa, why, sizeof why);
        if (!*met) {
            snprintf(msg, msgsize, "node.metrics %s: cannot listen: %s", cfg->metrics, why);
            err = OSN_EIO;
        } else if (udp_bound(metrics_listen_fd(*met), &sa, n->st.metrics, sizeof n->st.metrics) !=
                   0) {
            snprintf(msg, msgsize, "node.metrics %s: getsockname: %s", cfg->metrics,
                     strerror(errno));
            err = OSN_EIO;
        }
    }
    return err;
}

void node_err_msg(const struct node *n, int err, char *msg, size_t msgsize)
{
    if (err == OSN_ENOMEM)
        snprintf(msg, msgsize, "out of memory at t = %.3f s", n->now);
    else if (err)
        snprintf(msg, msgsize, "the event loop failed: %s", strerror(errno));
}

void node_end(struct node *n, struct osn_node_stats *st)
{
    udp_flush(n);
    osn_elem_server_close(&n->server, n->now);
    n->st.elapsed_s = n->now;
    n->st.busy_s = n->server.busy;
    memcpy(n->st.mode_time, n->server.mode_time, sizeof n->st.mode_time);
    n->st.rss_peak_kb = rss_peak_kb();
    hops_stats(n);
    gen_finish(n);
    *st = n->st;
    teardown(n);
}

int osn_node_run(const struct osn_node_cfg *cfg, struct osn_node_stats *st, char *msg,
                 size_t msgsize)
{
    /* Transactions keep their messages in small heap blocks that come and go at the call rate;
     * without these glibc hands the top of the heap back and faults it in again at every swing
     * (a tenth of the node's CPU time at 1,000 calls/s, perf). */
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    mallopt(M_TOP_PAD, 16 << 20);
    int count = workers_count(cfg);
    if (count > 1 && osn_node_check(cfg, NULL, msg, msgsize) == 0)
        return workers_run(cfg, count, st, msg, msgsize);

    struct node *n = calloc(1, sizeof *n);
    struct metrics *met = NULL;
    int err;
    if (!n)
        return OSN_ENOMEM;
    n->sock = n->lsock = -1;
    err = node_start(n, cfg, &met, msg, msgsize);
    if (!err && cfg->ready)
        node_ready_line(n, cfg->ready);
    if (!err) {
        n->t_start = node_clock();
        gen_start(n);
        err = node_loop(n, met);
        node_err_msg(n, err, msg, msgsize);
        if (cfg->console && !cfg->console_lines)
            fputc('\n', cfg->console);
    }
    metrics_close(met);
    node_end(n, st);
    free(n);
    return err;
}

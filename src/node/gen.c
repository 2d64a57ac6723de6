/*
 * The load generator (`[node] element = uac`): the scenario's [source] traffic on the wire, the
 * caller's side of every call, with the UAC's decisions of src/elem/uac.c, the same that the
 * network simulator's sources take (src/sim/net_source.c, net_tu.c), so that the generator and
 * the simulator are the same caller:
 *   - a call arrives (the source's arrival process, gen_draws.c) and sends an INVITE with an
 *     SDP offer on a client transaction of the node (txn.c: Timers A and B, the ACK of a
 *     non-2xx by the transaction layer, RFC 3261 17.1.1.3);
 *   - each event of that transaction goes to osn_uac_on_invite_event, which says what the
 *     caller does: count a setup delay (the first 180) or a response delay (the first 100), ACK
 *     a 2xx (13.2.2.4, every copy), start the hold, and how the attempt ended;
 *   - an attempt that failed is retried when osn_uac_retry says so (source.retry_prob, the
 *     retry delay law, at least the 503's Retry-After when source.honour_retry_after);
 *   - a call that is up sends its BYE after an exponential hold of mean source.hold (15.1.1),
 *     on a non-INVITE client transaction; its answer (or Timer F) ends the call;
 *   - a caller who gives up (source.patience: each attempt waits a draw of the law, the
 *     simulator's draw, osn_uac_patience_draw) CANCELs when osn_uac_on_patience or a later
 *     provisional response says so (RFC 3261 9.1: never before a provisional response), printed
 *     from the INVITE its transaction keeps, on a client transaction of its own to the same next
 *     hop; the INVITE's 487 is ACKed by the transaction layer (17.1.1.3) and a 2xx that crossed
 *     the CANCEL is ACKed and hung up at once (15); either way the call is abandoned, never
 *     retried (osn_uac_on_invite_event decides).
 *
 * Time is the node's monotonic clock. A call is sent when its scheduled time is due; how late
 * it left (the loop was busy, the machine loaded) is its lag: the largest lag and the number of
 * INVITEs more than 1 ms late go in the summary, and a lag above 10 ms is said on stderr (at
 * most once a second), because a generator that falls behind silently makes every measure
 * wrong. At the end of the traffic (node.duration, else the scenario's time) no call starts any
 * more; calls that are up hang up at once; retries still come when they are due within 64*T1
 * (else the call ends with the attempt that failed); and the node waits for every call's end
 * (Timers B and F bound it) before it writes its summary: every call started is accounted for.
 *
 * Cost: calls live in slots of a pool that grows by chunks and is reused (no allocation per
 * call once the pool has grown to the calls in progress); each request is printed once and
 * parsed once (for the transaction's key and its retransmissions, as a proxy's forward); the
 * sends of a turn leave in one sendmmsg (udp.c). The transactions' kept copies of their
 * requests are the node's (txn.c), one block per transaction.
 */
#define _GNU_SOURCE /* PR_SET_TIMERSLACK */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "node_int.h"
#include "osn/err.h"

/* A call's state; its one timer (tgen) is the patience while C_INVITING, the hold while C_UP,
 * the wait while C_RETRY. */
enum call_state { C_FREE, C_INVITING, C_UP, C_BYE, C_RETRY };

/* The text of a call's BYE, printed from its 2xx when the call is set up (the 2xx is gone by
 * the end of the hold). A dialog whose route set makes it longer cannot be hung up: counted. */
#define BYE_MAX 1024
#define CHUNK   1024
#define LATE    1e-3 /* s: an INVITE sent later than this after its schedule is late */
#define LAG_SAY 10e-3

struct gcall {
    struct osn_uac_call uac;
    double t_sched;   /* this attempt's scheduled start (s) */
    uint64_t origin;  /* the call's number, 1, 2, ... (its hold draw) */
    uint32_t idx;     /* slot index (the Call-ID's first field) */
    uint32_t attempt; /* the slot's attempt count (the Call-ID's second field) */
    uint32_t tgen;    /* generation of the hold or retry timer: cancel = increment */
    uint8_t state;    /* enum call_state */
    uint8_t last;     /* C_RETRY: the outcome of the attempt that failed */
    uint16_t bye_len;
    struct ntx *invite; /* C_INVITING: the attempt's INVITE transaction (its CANCEL's source) */
    struct gcall *next_free;
    char bye[BYE_MAX];
};

struct gen {
    const struct osn_node_source *src;
    struct gen_arrivals arr;
    struct osn_rng rng; /* retry draws */
    uint64_t hold_key;
    uint64_t patience_key; /* the patience draws' purpose, as the simulator's patience_key */
    uint64_t salt;
    double timer_b; /* 64*T1 (s) */
    double next_at; /* the next call's scheduled time (s), INFINITY: none */
    bool draining;
    size_t live; /* calls without their end */
    struct gcall **chunk;
    size_t nchunk, chunk_cap;
    struct gcall *free;
    uint64_t next_origin;
    double said_at;                    /* when a lag was last said on stderr */
    double row_lag;                    /* the largest lag since the last stats row */
    char host[64];                     /* our sent-by host */
    char peer[64];                     /* the next hop, HOST:PORT */
    struct osn_node_uac_stats st, row; /* measures, and their values at the last stats row */
};

static double clock_now(const struct node *n)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9 - n->t_start;
}

int gen_setup(struct node *n, char *msg, size_t msgsize)
{
    const struct osn_node_cfg *cfg = n->cfg;
    struct gen *g = calloc(1, sizeof *g);
    if (!g) {
        snprintf(msg, msgsize, "out of memory");
        return OSN_ENOMEM;
    }
    g->src = &cfg->src;
    struct osn_rng master;
    osn_rng_stream(&master, cfg->src.seed, 0);
    osn_rng_seed(&g->arr.rng, osn_rng_next(&master));
    osn_rng_seed(&g->rng, osn_rng_next(&master));
    g->hold_key = osn_rng_next(&master);
    g->patience_key = osn_rng_next(&master); /* a new purpose last: the others stay as they were */
    g->salt = n->branch_salt;
    g->timer_b = 64 * cfg->sip.t1;
    g->next_at = INFINITY;
    g->said_at = -INFINITY;
    snprintf(g->host, sizeof g->host, "%s", n->host);
    snprintf(g->peer, sizeof g->peer, "%s", n->hops[0].text); /* "[...]:PORT" for IPv6 */
    g->st.duration = cfg->duration;
    n->gen = g;
    /* The schedule's precision: the kernel may wake a sleeping thread up to its timer slack
     * late (50 us by default), which would bend the shortest gaps of the arrival process. */
    (void)prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    return 0;
}

static uint64_t next_branch(struct node *n)
{
    return n->branch_salt ^ (++n->branch_seq * 0x9e3779b97f4a7c15ULL);
}

static struct gen_ids ids_of(struct node *n, const struct gcall *c)
{
    struct gen *g = n->gen;
    return (struct gen_ids){.slot = c->idx,
                            .gen = c->attempt,
                            .salt = g->salt,
                            .host = g->host,
                            .port = n->port,
                            .peer = g->peer,
                            .branch = next_branch(n)};
}

/* A free call slot (the pool grows by a chunk when it has none); NULL without memory. */
static struct gcall *call_new(struct gen *g)
{
    if (!g->free) {
        if (g->nchunk == g->chunk_cap) {
            size_t cap = g->chunk_cap ? 2 * g->chunk_cap : 16;
            struct gcall **ch = realloc(g->chunk, cap * sizeof *ch);
            if (!ch)
                return NULL;
            g->chunk = ch;
            g->chunk_cap = cap;
        }
        struct gcall *c = calloc(CHUNK, sizeof *c);
        if (!c)
            return NULL;
        for (int i = CHUNK - 1; i >= 0; i--) {
            c[i].idx = (uint32_t)(g->nchunk * CHUNK + (size_t)i);
            c[i].next_free = g->free;
            g->free = &c[i];
        }
        g->chunk[g->nchunk++] = c;
    }
    struct gcall *c = g->free;
    g->free = c->next_free;
    c->state = C_INVITING;
    g->live++;
    return c;
}

/* The call is over: its slot goes back to the pool (its timers are stale from now on). */
static void call_end(struct gen *g, struct gcall *c)
{
    c->state = C_FREE;
    c->tgen++;
    c->next_free = g->free;
    g->free = c;
    g->live--;
}

/* The call of the generator's transaction x, from the Call-ID it keeps; NULL for an attempt
 * that is not its slot's current one (a late event of a call that ended, or retried). */
static struct gcall *call_of(struct gen *g, const struct ntx *x)
{
    uint32_t idx, attempt;
    if (!gen_call_id_parse(x->key.call_id, g->salt, &idx, &attempt) || idx / CHUNK >= g->nchunk)
        return NULL;
    struct gcall *c = &g->chunk[idx / CHUNK][idx % CHUNK];
    return c->state != C_FREE && c->attempt == attempt ? c : NULL;
}

/* The call's outcome, once (src/sim/net_tu.c, osn__net_outcome, counts the same). */
static void outcome(struct gen *g, const struct gcall *c, int out)
{
    struct osn_node_uac_stats *st = &g->st;
    st->outcome[out] += 1;
    st->ended_attempts += 1 + c->uac.retries;
    if (out == OSN_UAC_GOOD)
        st->good_after[c->uac.retries < 3 ? c->uac.retries : 3] += 1;
    if (!c->uac.got100)
        st->no_trying += 1;
}

/* Starts a client transaction for the request printed in n->obuf[0..len): parsed once, kept
 * by the transaction, sent. 0 or an error (then x is freed). */
static int start_ctxn(struct node *n, struct ntx *x, int len)
{
    struct osn_sip_wire *pm = malloc(sizeof *pm); /* its room is too large for the stack */
    struct rmsg r = {.pm = pm};
    struct osn_sip_msg m;
    struct osn_sip_out o;
    int err = OSN_ENOMEM;
    if (pm && len > 0) {
        err = osn_sip_wire_parse(pm, n->obuf, (size_t)len) == OSN_SIP_WIRE_ACCEPT ? 0 : OSN_EINVAL;
        if (!err)
            err = ntx_set_req(n, x, &r);
        if (!err)
            err = osn_sip_wire_to_txn(x->req, &m);
        if (!err)
            err = osn_sip_ctxn_start(&n->sip, &x->t, &m, n->now, &o);
    }
    free(pm);
    if (err) {
        ntx_free(n, x);
        return err;
    }
    x->from = n->hops[0].addr; /* a client transaction sends where its request went (txn.c) */
    ntx_apply(n, x, &o, NULL);
    return 0;
}

static void arm(struct node *n, struct gcall *c, double at);

/* Sends the INVITE of call c's next attempt (c->uac.retries says which). */
static void send_invite(struct node *n, struct gcall *c)
{
    struct gen *g = n->gen;
    c->attempt++;
    c->state = C_INVITING;
    c->uac = (struct osn_uac_call){.t0 = n->now, .retries = c->uac.retries};
    struct gen_ids id = ids_of(n, c);
    int len = gen_print_invite(n->obuf, sizeof n->obuf, &id);
    struct ntx *x = len > 0 ? ntx_new(n) : NULL;
    if (n->cfg->trace)
        fprintf(n->cfg->trace, "%u,%llu,%.9f,%.9f\n", (unsigned)c->uac.retries,
                (unsigned long long)c->origin, c->t_sched, n->now);
    if (!x || start_ctxn(n, x, len) != 0) {
        /* Not sent (no memory): a failure of its own kind, said in send_errors. */
        n->st.send_errors++;
        outcome(g, c, OSN_UAC_OTHER);
        call_end(g, c);
        return;
    }
    c->invite = x;
    if (g->src->patience.law != OSN_UAC_PATIENCE_NONE)
        arm(n, c,
            n->now + osn_uac_patience_draw(&g->src->patience, g->patience_key, c->origin,
                                           c->uac.retries));
}

/* Takes the clock for an INVITE scheduled at `at` and records how late it leaves. */
static void lag(struct node *n, double at)
{
    struct gen *g = n->gen;
    double now = clock_now(n);
    if (now > n->now)
        n->now = now;
    double d = n->now - at;
    if (d > g->st.lag_max)
        g->st.lag_max = d;
    if (d > g->row_lag)
        g->row_lag = d;
    if (d > LATE)
        g->st.late_sends++;
    if (d > LAG_SAY && n->now - g->said_at >= 1) {
        g->said_at = n->now;
        fprintf(stderr,
                "osn node uac: behind schedule by %.1f ms at t = %.3f s (%llu INVITEs late by "
                "more than 1 ms so far): the machine or the loop cannot keep up with the rate\n",
                d * 1e3, n->now, (unsigned long long)g->st.late_sends);
    }
}

static void schedule_next(struct node *n)
{
    struct gen *g = n->gen;
    g->next_at = gen_next_arrival(g->src, &g->arr);
    if (g->next_at < n->cfg->duration &&
        timers_push(&n->timers, g->next_at, TM_ARRIVAL, NULL, 0) != 0)
        n->err = OSN_ENOMEM;
}

void gen_start(struct node *n)
{
    if (n->gen)
        schedule_next(n);
}

void gen_arrival(struct node *n)
{
    struct gen *g = n->gen;
    if (!g || g->draining)
        return;
    lag(n, g->next_at);
    struct gcall *c = call_new(g);
    if (!c) {
        n->err = OSN_ENOMEM;
        return;
    }
    c->origin = ++g->next_origin;
    c->t_sched = g->next_at;
    c->uac.retries = 0;
    g->st.started++;
    send_invite(n, c);
    schedule_next(n);
}

static void arm(struct node *n, struct gcall *c, double at)
{
    if (timers_push(&n->timers, at, TM_CALL, c, ++c->tgen) != 0)
        n->err = OSN_ENOMEM;
}

/* The call's BYE, printed when it was set up, on a client transaction of its own. */
static void send_bye(struct node *n, struct gcall *c)
{
    struct gen *g = n->gen;
    struct ntx *y = c->bye_len ? ntx_new(n) : NULL;
    c->tgen++;
    c->state = C_BYE;
    if (y) {
        memcpy(n->obuf, c->bye, c->bye_len);
        if (start_ctxn(n, y, c->bye_len) == 0) {
            g->st.byes_sent++;
            return;
        }
    }
    n->st.send_errors++; /* no BYE: the call ends here, its UAS may keep it */
    call_end(g, c);
}

/* A unit-mean exponential that depends only on the call's number and the run's key (the
 * simulator's hold_exp1): the same call holds the same time whatever happened before it. */
static double hold_exp1(const struct gen *g, const struct gcall *c)
{
    uint64_t x = g->hold_key ^ c->origin;
    uint64_t h = osn_splitmix64(&x);
    return -log((double)((h >> 11) + 1) * 0x1.0p-53);
}

/* The CANCEL of call c's INVITE (RFC 3261 9.1), printed from the request its transaction keeps
 * (same Request-URI, Call-ID, From, To, CSeq number and top Via branch), on a non-INVITE client
 * transaction to the INVITE's next hop; its 200, or Timer F, ends it (gen_client_event). The
 * INVITE's transaction is the call's while it is live and carries this attempt's Call-ID. */
static void send_cancel(struct node *n, struct gcall *c)
{
    struct gen *g = n->gen;
    struct ntx *x = c->invite;
    if (!x || !x->live || !x->req || x->t.req.method != OSN_SIP_INVITE || call_of(g, x) != c) {
        n->st.send_errors++; /* the INVITE's transaction is gone: nothing left to cancel */
        return;
    }
    int len = osn_sip_wire_print_cancel(n->obuf, sizeof n->obuf, x->req);
    struct ntx *y = len > 0 ? ntx_new(n) : NULL;
    if (y && start_ctxn(n, y, len) == 0)
        g->st.cancels++;
    else
        n->st.send_errors++;
}

/* What the caller of c does now: the CANCEL when the step says so. */
static void uac_step(struct node *n, struct gcall *c, const struct osn_uac_step *st)
{
    if (st->cancel)
        send_cancel(n, c);
}

void gen_call_timer(struct node *n, void *obj, uint32_t tgen)
{
    struct gcall *c = obj;
    if (!n->gen || c->tgen != tgen)
        return;
    if (c->state == C_INVITING) {
        /* The caller's patience ran out before a final answer (a final answer moves the call
         * on and re-arms or ends its timer, so this is still the attempt that armed it). */
        struct osn_uac_step st;
        osn_uac_on_patience(&c->uac, &st);
        uac_step(n, c, &st);
    } else if (c->state == C_UP) {
        send_bye(n, c);
    } else if (c->state == C_RETRY) {
        lag(n, c->t_sched);
        c->uac.retries++;
        n->gen->st.retries++;
        send_invite(n, c);
    }
}

static void send_ack(struct node *n, struct gcall *c, const struct osn_sip_wire *resp)
{
    struct gcall none = {0};
    struct gen_ids id = ids_of(n, c ? c : &none);
    int len = gen_print_ack(n->obuf, sizeof n->obuf, &id, resp);
    if (len > 0) {
        udp_send_to(n, &n->hops[0].addr, n->obuf, (size_t)len);
        n->gen->st.acks_2xx++;
    } else {
        n->st.send_errors++;
    }
}

/* The drain's end for retries: a retry due later than 64*T1 after the traffic's end is not
 * made (its call ends with the attempt that failed), so that the drain stays bounded. */
static double drain_end(const struct node *n)
{
    return n->cfg->duration + n->gen->timer_b;
}

/* Whether the caller of c tries again after `out` (osn_uac_retry decides, with the draws of
 * the scenario's laws); if so, the retry is scheduled. */
static bool retry(struct node *n, struct gcall *c, int out, int retry_after)
{
    struct gen *g = n->gen;
    const struct osn_node_source *sc = g->src;
    if (!(sc->retry_prob > 0))
        return false;
    double u = osn_rng_u01(&g->rng), delay = gen_retry_delay(sc, &g->rng), wait;
    struct osn_uac_retry_cfg rc = {.prob = sc->retry_prob,
                                   .max_retries = sc->max_retries,
                                   .honour_retry_after = sc->honour_retry_after};
    if (!osn_uac_retry(&rc, &c->uac, out, retry_after, u, delay, &wait) ||
        n->now + wait > drain_end(n))
        return false;
    c->state = C_RETRY;
    c->invite = NULL;
    c->last = (uint8_t)out;
    c->t_sched = n->now + wait;
    arm(n, c, c->t_sched);
    return true;
}

static void invite_event(struct node *n, struct gcall *c, const struct osn_sip_out *o,
                         const struct rmsg *in)
{
    struct gen *g = n->gen;
    bool resp = o->tu == OSN_SIP_TU_RESPONSE;
    int status = resp ? o->msg->status : 0;
    struct osn_uac_step st;
    if (!c || c->state != C_INVITING) {
        /* A copy of the 2xx after the call moved on: ACKed all the same (13.2.2.4). */
        if (resp && status >= 200 && status < 300 && in)
            send_ack(n, c, in->pm);
        return;
    }
    osn_uac_on_invite_event(&c->uac, n->now, g->timer_b, o->tu, status, &st);
    uac_step(n, c, &st); /* the CANCEL held back until this provisional response (9.1) */
    /* node.warmup: only the delays of the window [warm-up, end of traffic], as the simulator
     * counts a delay whose response comes in its window (a run's p99 then compares with its). */
    double w0 = n->cfg->warmup;
    bool window = !(w0 > 0) || (n->now >= w0 && n->now <= n->cfg->duration);
    if (st.trying && window) {
        g->st.trying_n++;
        g->st.trying_sum += st.trying_delay;
        gen_hist_add(g->st.trying_hist, st.trying_delay);
    }
    if (st.setup && window) {
        g->st.setup_n++;
        g->st.setup_sum += st.setup_delay;
        gen_hist_add(g->st.setup_hist, st.setup_delay);
    }
    if (st.ack && in)
        send_ack(n, c, in->pm);
    if (st.connected) {
        struct gen_ids id = ids_of(n, c);
        int len = in ? gen_print_bye(c->bye, sizeof c->bye, &id, in->pm) : OSN_EINVAL;
        c->bye_len = (uint16_t)(len > 0 ? len : 0);
    }
    if (st.outcome != OSN_UAC_PENDING) {
        if (retry(n, c, st.outcome, resp ? o->msg->retry_after : -1))
            return;
        outcome(g, c, st.outcome);
    }
    if (st.connected) {
        c->state = C_UP;
        if (g->draining || st.hangup)
            send_bye(n, c);
        else
            arm(n, c, n->now + g->src->hold * hold_exp1(g, c));
    } else if (st.outcome != OSN_UAC_PENDING) {
        call_end(g, c);
    }
    if (c->state != C_INVITING)
        c->invite = NULL;
}

void gen_client_event(struct node *n, struct ntx *x, const struct osn_sip_out *o,
                      const struct rmsg *in)
{
    struct gen *g = n->gen;
    if (!g || x->t.role != OSN_SIP_CLIENT)
        return;
    struct gcall *c = call_of(g, x);
    if (x->t.req.method == OSN_SIP_INVITE) {
        invite_event(n, c, o, in);
    } else if (x->t.req.method == OSN_SIP_BYE && c && c->state == C_BYE) {
        bool resp = o->tu == OSN_SIP_TU_RESPONSE;
        if (resp && o->msg->status < 200)
            return;
        if (resp && o->msg->status < 300)
            g->st.byes_ok++;
        call_end(g, c); /* its answer, or Timer F */
    }
}

void gen_drain(struct node *n)
{
    struct gen *g = n->gen;
    if (!g || g->draining)
        return;
    g->draining = true;
    for (size_t k = 0; k < g->nchunk; k++)
        for (int i = 0; i < CHUNK; i++) {
            struct gcall *c = &g->chunk[k][i];
            if (c->state == C_RETRY && c->t_sched > drain_end(n)) {
                /* The retry will not come: the failure is the call's. */
                outcome(g, c, c->last);
                call_end(g, c);
            } else if (c->state == C_UP) {
                send_bye(n, c);
            }
        }
}

bool gen_done(const struct node *n)
{
    return !n->gen || n->gen->live == 0;
}

void gen_stats_header(FILE *f)
{
    fprintf(f, "t,started,retries,answered,failed,failed_timeout,failed_rejected,failed_other,"
               "live,lag_max_ms,abandoned\n");
}

void gen_stats_row(struct node *n, FILE *f)
{
    struct gen *g = n->gen;
    const struct osn_node_uac_stats *a = &g->st, *b = &g->row;
    uint64_t fail[OSN_UAC_NOUTCOMES], failed = 0;
    for (int k = 0; k < OSN_UAC_NOUTCOMES; k++) {
        fail[k] = a->outcome[k] - b->outcome[k];
        if (k != OSN_UAC_GOOD && k != OSN_UAC_ABANDONED)
            failed += fail[k];
    }
    fprintf(f, "%.3f,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%zu,%.3f,%llu\n", n->now,
            (unsigned long long)(a->started - b->started),
            (unsigned long long)(a->retries - b->retries), (unsigned long long)fail[OSN_UAC_GOOD],
            (unsigned long long)failed, (unsigned long long)fail[OSN_UAC_TIMEOUT],
            (unsigned long long)fail[OSN_UAC_REJECTED], (unsigned long long)fail[OSN_UAC_OTHER],
            g->live, g->row_lag * 1e3, (unsigned long long)fail[OSN_UAC_ABANDONED]);
    fflush(f);
    memcpy(g->row.outcome, a->outcome, sizeof a->outcome);
    g->row.started = a->started;
    g->row.retries = a->retries;
    g->row_lag = 0;
}

void gen_console_row(struct node *n, FILE *f)
{
    struct gen *g = n->gen;
    const struct osn_node_uac_stats *a = &g->st;
    uint64_t failed = 0;
    for (int k = 0; k < OSN_UAC_NOUTCOMES; k++)
        if (k != OSN_UAC_GOOD && k != OSN_UAC_ABANDONED)
            failed += a->outcome[k];
    fprintf(f,
            "%sosn node uac: %7.1f s  started %llu  answered %llu  failed %llu  abandoned %llu  "
            "retries %llu  live %zu  lag max %.1f ms%s",
            n->cfg->console_lines ? "" : "\r", n->now, (unsigned long long)a->started,
            (unsigned long long)a->outcome[OSN_UAC_GOOD], (unsigned long long)failed,
            (unsigned long long)a->outcome[OSN_UAC_ABANDONED], (unsigned long long)a->retries,
            g->live, a->lag_max * 1e3, n->cfg->console_lines ? "\n" : " ");
    fflush(f);
}

void gen_finish(struct node *n)
{
    struct gen *g = n->gen;
    if (!g)
        return;
    g->st.unfinished = g->live;
    n->st.uac = g->st;
    for (size_t k = 0; k < g->nchunk; k++)
        free(g->chunk[k]);
    free(g->chunk);
    free(g);
    n->gen = NULL;
}

/*
 * The load generator (`[node] element = uac`): the scenario's [source] traffic on the wire, the
 * caller's side of every call. What a caller does is the UAC's call machine's decision
 * (src/elem/uac_call.c, the one the network simulator's sources carry out too): the first INVITE
 * and the patience, a 2xx's ACK (RFC 3261 13.2.2.4, every copy) and the hold, the BYE after it
 * (15.1.1), the CANCEL of a caller who gave up (9.1), the retry of an attempt that failed after
 * its delay (at least a 503's Retry-After when source.honour_retry_after), the outcome. This
 * file carries its actions out with SIP text, the node's client transactions (txn.c: Timers A
 * and B, the ACK of a non-2xx by the transaction layer, 17.1.1.3), its timer heap and its draws:
 *   - a call arrives (the source's arrival process, gen_draws.c) and sends an INVITE with an
 *     SDP offer on a client transaction;
 *   - the ACK and the BYE are printed from the 2xx (gen_print.c), the BYE when the call is set
 *     up (the 2xx is gone by the end of the hold); the CANCEL from the INVITE its transaction
 *     keeps, on a client transaction of its own to the same next hop.
 * Driver differences from the simulator's sources (src/sim/net_source.c): a call keeps its slot
 * through its retries (the attempt count is in its Call-ID); a 2xx copy for a call that has
 * ended is ACKed from its text alone; the traffic ends (osn_uac_call_on_traffic_end).
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
 * parsed once (for the transaction's key and its retransmissions, as a proxy's forward), an
 * INVITE laid out as the one before it not even once (invite_parse), into rooms the generator
 * keeps; the sends of a turn leave in one sendmmsg (udp.c). The transactions' kept copies of
 * their requests are the node's (txn.c), one block per transaction.
 */
#define _GNU_SOURCE /* PR_SET_TIMERSLACK */
#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

#include "node_int.h"
#include "osn/err.h"

/* The text of a call's BYE, printed from its 2xx when the call is set up (the 2xx is gone by
 * the end of the hold). A dialog whose route set makes it longer cannot be hung up: counted. */
#define BYE_MAX 1024
#define CHUNK   1024
#define LATE    1e-3 /* s: an INVITE sent later than this after its schedule is late */
#define LAG_SAY 10e-3
/* The wake slack (gen_wake_slack): none up to SLACK_FROM calls/s, SLACK_MAX from SLACK_RATE. */
#define SLACK_MAX  0.5e-3
#define SLACK_FROM 1000.0
#define SLACK_RATE 8000.0

/* A call's slot; its one timer (tgen) is the one the machine arms (patience, hold, retry). */
struct gcall {
    struct osn_uac_call uac; /* the machine's state */
    double t_sched;          /* this attempt's scheduled start (s) */
    uint64_t origin;         /* the call's number, 1, 2, ... (its hold draw) */
    uint32_t idx;            /* slot index (the Call-ID's first field) */
    uint32_t attempt;        /* the slot's attempt count (the Call-ID's second field) */
    uint32_t tgen;           /* generation of the call's timer: cancel = increment */
    bool live;               /* the slot holds a call */
    uint16_t bye_len;
    uint8_t hop;        /* the next hop (index of n->hops) of this attempt's INVITE: its dialog's */
    bool chosen;        /* hop is this attempt's, chosen when its client halves admitted it */
    struct ntx *invite; /* INVITING: the attempt's INVITE transaction (its CANCEL's source) */
    struct gcall *next_free;
    char bye[BYE_MAX];
};

struct gen {
    const struct osn_node_source *src;
    struct osn_uac_cfg ucfg; /* the UAC machine's */
    struct gen_arrivals arr;
    struct osn_rng rng; /* retry draws */
    uint64_t hold_key;
    uint64_t patience_key; /* the patience draws' purpose, as the simulator's patience_key */
    uint64_t salt;
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
    struct osn_node_uac_stats st, row; /* measures, and their values at the last stats row */
    uint64_t did[OSN_UAC_NDO];         /* the machine's actions carried out */
    /* The parse of the request start_ctxn sends, before the transaction packs its copy (31 KB of
     * room: too large for the stack, and a malloc and free of it per request were a tenth of
     * the generator's allocator calls). Used only between the parse and ntx_set_req, so a start
     * that the transaction layer's output runs from inside (a failover) may use it again. */
    struct osn_sip_wire parse;
    /* The parse of the last INVITE whose layout was new (inv_hop, inv_widths): its spans point
     * into n->obuf, where every INVITE is printed. An INVITE printed with the same layout (the
     * same next hop, and the same number of hex digits in its Call-ID's slot and attempt: every
     * other field of it has a fixed length, see gen_print_invite) has its fields at the same
     * offsets and differs only inside spans (branch, tag, Call-ID) whose text is always valid:
     * its parse is this one, and parsing it again was 7 % of the generator's instructions. */
    struct osn_sip_wire inv;
    int inv_hop;         /* -1: none yet */
    uint32_t inv_widths; /* hex digits of the slot << 8 | of the attempt */
    bool clients;        /* a client half toward the next hop(s) (control.at edge or both) */
};

/* How long the loop may sleep past its earliest deadline (node->wake_slack, run.c): the calls
 * (and the generator's other timers: holds, patience, retries, Timers A, B, F) that fall due in
 * that span are carried out in one turn, their INVITEs leaving in one sendmmsg, instead of one
 * wake-up each. A wake-up costs more than the rest of a call's work: sleeping in ppoll and
 * being woken was a third of the generator's CPU time at 8,000 calls/s (perf, 2026-12-07:
 * finish_task_switch under schedule_hrtimeout_range_clock), and with one wake-up per INVITE
 * the generator spent 44 us of CPU a call against 22 us with a slack of 0.5 ms, SIPp's uac 26
 * (docs/performance.md). The slack grows with the source's peak rate: none up to SLACK_FROM
 * calls/s, then linearly to SLACK_MAX at SLACK_RATE and above (0.25 ms at 4,500 calls/s, 0.5 ms
 * from 8,000). A slack is worth its lateness only when it gathers several calls (rate x slack
 * of them a wake-up), and it bends the gaps between send times below its own length (two calls
 * due within it leave together): at 1,000 calls/s a slack of 62.5 us doubled the KS distance
 * of the send times' gaps (0.044 to 0.087, 2026-12-07) for a CPU saving of no account, so a
 * slow source keeps its calls at their time, as before.
 * What it does not change: the schedule (the same draws, the same times: the arrival process
 * the tests check is the schedule's), nor the direction of an error: a call is never sent
 * before its time (the loop fires only what is due), only up to the slack after it, plus what
 * a busy machine adds; every INVITE's lag is measured from the clock when it leaves, as
 * before, and the bound is below LATE, so a send counted late (over 1 ms) is one that the
 * machine, not the slack, made late. The summary gives the slack (wake_slack) beside lag_max. */
double gen_wake_slack(double peak)
{
    double f = (peak - SLACK_FROM) / (SLACK_RATE - SLACK_FROM);
    return f > 0 ? SLACK_MAX * fmin(1, f) : 0;
}

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
    g->ucfg = (struct osn_uac_cfg){
            .timer_b = 64 * cfg->sip.t1,
            .retry = {.prob = cfg->src.retry_prob,
                      .max_retries = cfg->src.max_retries,
                      .honour_retry_after = cfg->src.honour_retry_after},
            /* a retry due later than 64*T1 after the traffic's end is not made (its call ends
             * with the attempt that failed), so that the drain stays bounded */
            .retry_until = cfg->duration + 64 * cfg->sip.t1,
            .patience = cfg->src.patience.law != OSN_UAC_PATIENCE_NONE,
            .callee_hangs_up = cfg->src.callee_hangs_up};
    g->next_at = INFINITY;
    g->said_at = -INFINITY;
    g->inv_hop = -1;
    snprintf(g->host, sizeof g->host, "%s", n->host);
    g->st.duration = cfg->duration;
    if (cfg->warmup > 0) /* the window of the rates, the delays' (in_window) */
        g->st.win = (struct osn_node_uac_window){.t0 = cfg->warmup, .t1 = cfg->duration};
    n->gen = g;
    g->clients = hops_cli(n, 0) != NULL;
    /* The schedule's precision is the loop's to choose (wake_slack, below), not the kernel's:
     * it may wake a sleeping thread up to its timer slack late (50 us by default). */
    (void)prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
    n->wake_slack = g->st.wake_slack = gen_wake_slack(gen_peak_rate(&cfg->src));
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
                            .peer = n->hops[c->hop].text, /* "[...]:PORT" for IPv6 */
                            .branch = next_branch(n),
                            .tcp = n->hops[c->hop].tcp,
                            .oc = hops_cli(n, c->hop) != NULL};
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
    c->live = true;
    g->live++;
    return c;
}

/* The call is over: its slot goes back to the pool (its timers are stale from now on). */
static void call_end(struct gen *g, struct gcall *c)
{
    c->live = false;
    c->tgen++;
    c->next_free = g->free;
    g->free = c;
    g->live--;
}

/* The call of the generator's transaction x, from the Call-ID it keeps; NULL for an attempt
 * that is not its slot's current one (a late event of a call that ended, or retried). */
static struct gcall *call_of_id(struct gen *g, struct osn_span call_id)
{
    uint32_t idx, attempt;
    if (!gen_call_id_parse(call_id, g->salt, &idx, &attempt) || idx / CHUNK >= g->nchunk)
        return NULL;
    struct gcall *c = &g->chunk[idx / CHUNK][idx % CHUNK];
    return c->live && c->attempt == attempt ? c : NULL;
}

static struct gcall *call_of(struct gen *g, const struct ntx *x)
{
    return call_of_id(g, x->key.call_id);
}

/* The window's counts when `now` is in it (node.warmup > 0), else NULL: an event counts in
 * the rates when it comes in [warm-up, end of traffic], as the simulator counts an event after
 * its warm-up (src/sim/net_int.h, obs) and stops at its end (it has no drain). */
static struct osn_node_uac_window *win(struct gen *g, double now)
{
    struct osn_node_uac_window *w = &g->st.win;
    return w->t1 > w->t0 && now >= w->t0 && now <= w->t1 ? w : NULL;
}

/* The call's outcome, once (src/sim/net_tu.c, osn__net_outcome, counts the same), in the
 * whole run's counts and, when it comes in the window, in the window's. */
static void outcome(struct gen *g, const struct gcall *c, int out, double now)
{
    struct osn_node_uac_stats *st = &g->st;
    struct osn_node_uac_window *w = win(g, now);
    unsigned k = c->uac.retries < 3 ? c->uac.retries : 3;
    st->outcome[out] += 1;
    st->ended_attempts += 1 + c->uac.retries;
    if (out == OSN_UAC_GOOD)
        st->good_after[k] += 1;
    if (!c->uac.got100)
        st->no_trying += 1;
    if (!w)
        return;
    w->outcome[out] += 1;
    w->ended_attempts += 1 + c->uac.retries;
    if (out == OSN_UAC_GOOD)
        w->good_after[k] += 1;
    if (!c->uac.got100)
        w->no_trying += 1;
}

/* Starts a client transaction toward next hop `hop` for the request printed in n->obuf[0..len):
 * parsed once (`parsed`, when not NULL, is its parse already), kept by the transaction, sent. 0
 * or an error (then x is freed). */
static int start_ctxn(struct node *n, struct ntx *x, int len, int hop,
                      const struct osn_sip_wire *parsed)
{
    struct osn_sip_wire *pm = &n->gen->parse;
    struct rmsg r = {.pm = parsed ? parsed : pm};
    struct osn_sip_msg m;
    struct osn_sip_out o;
    int err = OSN_EINVAL;
    if (len > 0) {
        err = parsed || osn_sip_wire_parse(pm, n->obuf, (size_t)len) == OSN_SIP_WIRE_ACCEPT
                      ? 0
                      : OSN_EINVAL;
        if (!err)
            err = ntx_set_req(n, x, &r);
        if (!err)
            err = osn_sip_wire_to_txn(x->req, &m);
        if (!err)
            err = osn_sip_ctxn_start_over(&n->sip, &x->t, &m, n->hops[hop].tcp, n->now, &o);
    }
    if (err) {
        ntx_free(n, x);
        return err;
    }
    x->from = n->hops[hop].addr; /* a client transaction sends where its request went (txn.c) */
    x->hop = (uint8_t)hop;       /* its responses' feedback goes to that server's client half */
    ntx_apply(n, x, &o, NULL);
    return 0;
}

static void arm(struct node *n, struct gcall *c, double at)
{
    if (timers_push(&n->timers, at, TM_CALL, c, ++c->tgen) != 0)
        n->err = OSN_ENOMEM;
}

/* Sends the INVITE of call c's attempt to next hop c->hop (a new transaction, a new branch);
 * false when it could not (no memory): then the call has ended, as a failure of its own kind,
 * said in send_errors. */
static unsigned hex_digits(uint32_t v)
{
    return v ? (unsigned)(35 - __builtin_clz(v)) / 4 : 1;
}

/* The parse of the INVITE just printed in n->obuf[0..len) for ids `id` to next hop `hop`: the
 * kept one when its layout is the same (see struct gen, inv), else a new parse kept; NULL when
 * it does not parse. */
#ifndef NDEBUG
/* Debug builds (the sanitizer stage of make check, the fuzzers) check that layout argument on
 * every reuse: the kept parse equals a fresh parse of the same bytes. */
static void check_reuse(struct node *n, const struct osn_sip_wire *kept, int len)
{
    struct osn_sip_wire *fresh = &n->gen->parse;
    int verdict = osn_sip_wire_parse(fresh, n->obuf, (size_t)len);
    assert(verdict == OSN_SIP_WIRE_ACCEPT && osn_sip_wire_same(kept, fresh));
}
#else
static void check_reuse(struct node *n, const struct osn_sip_wire *kept, int len)
{
    (void)n, (void)kept, (void)len;
}
#endif

static const struct osn_sip_wire *invite_parse(struct node *n, const struct gen_ids *id, int hop,
                                               int len)
{
    struct gen *g = n->gen;
    uint32_t widths = hex_digits(id->slot) << 8 | hex_digits(id->gen);
    if (g->inv_hop == hop && g->inv_widths == widths && g->inv.buf.n == (size_t)len) {
        check_reuse(n, &g->inv, len);
        return &g->inv;
    }
    g->inv_hop = -1;
    if (osn_sip_wire_parse(&g->inv, n->obuf, (size_t)len) != OSN_SIP_WIRE_ACCEPT)
        return NULL;
    g->inv_hop = hop;
    g->inv_widths = widths;
    return &g->inv;
}

static bool invite_to(struct node *n, struct gcall *c)
{
    struct gen *g = n->gen;
    struct gen_ids id = ids_of(n, c);
    int len = gen_print_invite(n->obuf, sizeof n->obuf, &id);
    const struct osn_sip_wire *pm = len > 0 ? invite_parse(n, &id, c->hop, len) : NULL;
    struct ntx *x = pm ? ntx_new(n) : NULL;
    if (n->cfg->trace)
        fprintf(n->cfg->trace, "%u,%llu,%.9f,%.9f\n", (unsigned)c->uac.retries,
                (unsigned long long)c->origin, c->t_sched, n->now);
    if (!x || start_ctxn(n, x, len, c->hop, pm) != 0) {
        n->st.send_errors++;
        outcome(g, c, OSN_UAC_OTHER, n->now);
        call_end(g, c);
        return false;
    }
    c->invite = x;
    return true;
}

/* Sends the INVITE of call c's attempt (c->uac.retries says which); false when it could not
 * (no memory): then the call has ended, as a failure of its own kind, said in send_errors. */
static bool send_invite(struct node *n, struct gcall *c)
{
    unsigned back;
    c->attempt++;
    /* Several next hops: the server is the element's choice (src/elem/hops.c), as a proxy's
     * for a new request: smooth weighted round-robin over the servers that are up. */
    if (n->nhops > 1 && !c->chosen)
        c->hop = (uint8_t)osn_elem_hops_choose(&n->fan, n->now, OSN_SIP_INVITE, -1, &back);
    c->chosen = false;
    return invite_to(n, c);
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

/* The call's BYE, printed when it was set up, on a client transaction of its own. */
static void send_bye(struct node *n, struct gcall *c)
{
    struct gen *g = n->gen;
    struct ntx *y = c->bye_len ? ntx_new(n) : NULL;
    c->tgen++;
    if (y) {
        memcpy(n->obuf, c->bye, c->bye_len);
        if (start_ctxn(n, y, c->bye_len, c->hop, NULL) == 0) { /* the dialog's next hop */
            g->st.byes_sent++;
            return;
        }
    }
    n->st.send_errors++; /* no BYE: the call ends here, its UAS may keep it */
    call_end(g, c);
}

/* The CANCEL of call c's INVITE (RFC 3261 9.1), printed from the request its transaction keeps
 * (same Request-URI, Call-ID, From, To, CSeq number and top Via branch), on a non-INVITE client
 * transaction to the INVITE's next hop; its 200, or Timer F, ends it. The INVITE's transaction
 * is the call's while it is live and carries this attempt's Call-ID. */
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
    if (y && start_ctxn(n, y, len, x->hop, NULL) == 0) {
        struct osn_node_uac_window *w = win(g, n->now);
        g->st.cancels++;
        if (w)
            w->cancels++;
    } else
        n->st.send_errors++;
}

/* The ACK of 2xx resp of call c (NULL: a call that has ended; its 2xx copy is ACKed all the
 * same, from the 2xx's text), to next hop `hop`, the INVITE's (on the dialog's path). */
static void send_ack(struct node *n, struct gcall *c, const struct osn_sip_wire *resp, int hop)
{
    struct gcall none = {0};
    struct gen_ids id = ids_of(n, c ? c : &none);
    id.oc = false; /* an ACK offers none (osn_uac_ack) */
    int len = gen_print_ack(n->obuf, sizeof n->obuf, &id, resp);
    if (len > 0) {
        node_send(n, &n->hops[hop].addr, n->hops[hop].tcp, n->obuf, (size_t)len);
        n->gen->st.acks_2xx++;
    } else {
        n->st.send_errors++;
    }
}

static void start_attempt(struct node *n, struct gcall *c, unsigned retries);

/* node.warmup: only the delays of the window [warm-up, end of traffic] are sampled, as the
 * simulator counts a delay whose response comes in its window (a run's p99 then compares with
 * its). Asked by the two sampling actions only, not for every action list. */
static bool in_window(const struct node *n)
{
    double w0 = n->cfg->warmup;
    return !(w0 > 0) || (n->now >= w0 && n->now <= n->cfg->duration);
}

/* Carries out what the UAC's machine decided for call c (NULL only for a 2xx copy of a call
 * that ended: ACK alone), in its order; `in` is the response of an INVITE event, from next hop
 * `in_hop`. */
static void act(struct node *n, struct gcall *c, const struct osn_uac_acts *a,
                const struct rmsg *in, int in_hop)
{
    struct gen *g = n->gen;
    for (uint32_t b = a->bits; b; b &= b - 1) {
        int d = __builtin_ctz(b);
        g->did[d]++;
        switch (d) {
        case OSN_UAC_DO_INVITE:
            if (!send_invite(n, c))
                return;
            /* whether the callee ends this attempt's call: asked of its Call-ID, as the uas
             * asks it (so that no hold of ours races the callee's BYE) */
            osn_uac_call_keyed(
                    &c->uac, &g->ucfg,
                    osn_uas_call_key(c->invite->req->call_id.p, c->invite->req->call_id.n));
            break;
        case OSN_UAC_DO_STOP: /* the patience is stale from now on */
            c->tgen++;
            break;
        case OSN_UAC_DO_CANCEL:
            send_cancel(n, c);
            break;
        case OSN_UAC_DO_TRYING:
            if (!in_window(n))
                break;
            g->st.trying_n++;
            g->st.trying_sum += a->delay;
            gen_hist_add(g->st.trying_hist, a->delay);
            break;
        case OSN_UAC_DO_SETUP:
            if (!in_window(n))
                break;
            g->st.setup_n++;
            g->st.setup_sum += a->delay;
            gen_hist_add(g->st.setup_hist, a->delay);
            break;
        case OSN_UAC_DO_ACK:
            if (in)
                send_ack(n, c, in->pm, in_hop);
            break;
        case OSN_UAC_DO_DIALOG: {
            struct gen_ids id = ids_of(n, c);
            int len = in ? gen_print_bye(c->bye, sizeof c->bye, &id, in->pm) : OSN_EINVAL;
            c->bye_len = (uint16_t)(len > 0 ? len : 0);
            break;
        }
        case OSN_UAC_DO_RETRY:
            c->invite = NULL;
            c->t_sched = a->at;
            break;
        case OSN_UAC_DO_OUTCOME:
            outcome(g, c, a->outcome, n->now);
            break;
        case OSN_UAC_DO_ARM:
            arm(n, c, a->at);
            break;
        case OSN_UAC_DO_HOLD:
            arm(n, c, n->now + osn_uac_hold_draw(g->src->hold, g->hold_key, c->origin));
            break;
        case OSN_UAC_DO_BYE:
            send_bye(n, c);
            break;
        case OSN_UAC_DO_BYE_OK:
            g->st.byes_ok++;
            break;
        case OSN_UAC_DO_HUNG_UP: /* the callee's BYE: a hold armed (if any) is stale */
            c->tgen++;
            g->st.byes_in++;
            break;
        case OSN_UAC_DO_ATTEMPT:
            lag(n, c->t_sched);
            g->st.retries++;
            if (win(g, n->now))
                g->st.win.retries++;
            start_attempt(n, c, c->uac.retries + 1u);
            break;
        case OSN_UAC_DO_END:
            call_end(g, c);
            break;
        default: /* DRAW: replaced by osn_uac_call_retry before */
            break;
        }
    }
}

/* [control] at = edge or both: the client half toward the attempt's next hop admits its INVITE
 * or sheds it, the UAC's machine says (osn_uac_call_admit, RFC 7339 5.3); with several next
 * hops the choice asks each server's (osn_elem_hops_choose, as an edge's), made here for the
 * INVITE. A shed attempt ends as a 503 would, retried as one, counted in shed_local. */
static void admit(struct node *n, struct gcall *c, struct osn_uac_acts *a)
{
    struct gen *g = n->gen;
    bool shed;
    if (n->nhops > 1) {
        unsigned back;
        int hop = osn_elem_hops_choose(&n->fan, n->now, OSN_SIP_INVITE, -1, &back);
        c->chosen = hop >= 0;
        c->hop = (uint8_t)(hop >= 0 ? hop : c->hop);
        if ((shed = hop < 0))
            osn_uac_call_shed(&c->uac, &g->ucfg, a);
    } else {
        shed = osn_uac_call_admit(&c->uac, &g->ucfg, n->cli, n->now, a);
    }
    if (!shed)
        return;
    g->st.shed_local++;
    if (win(g, n->now))
        g->st.win.shed_local++;
    if (a->bits & OSN_UAC_BIT(OSN_UAC_DO_DRAW)) {
        double u = osn_rng_u01(&g->rng), delay = gen_retry_delay(g->src, &g->rng);
        osn_uac_call_retry(&c->uac, &g->ucfg, n->now, u, delay, a);
    }
}

/* Attempt `retries` of call c starts now: its caller's patience drawn (the simulator's draw,
 * osn_uac_patience_draw: INFINITY for none), the machine asked. */
static void start_attempt(struct node *n, struct gcall *c, unsigned retries)
{
    struct gen *g = n->gen;
    struct osn_uac_acts a;
    double patience = osn_uac_patience_draw(&g->src->patience, g->patience_key, c->origin, retries);
    osn_uac_call_start(&c->uac, n->now, retries, patience, &a);
    if (g->clients)
        admit(n, c, &a);
    act(n, c, &a, NULL, 0);
}

/* A call scheduled at `at` starts now. */
static void call_start(struct node *n, double at)
{
    struct gen *g = n->gen;
    struct gcall *c = call_new(g);
    if (!c) {
        n->err = OSN_ENOMEM;
        return;
    }
    c->origin = ++g->next_origin;
    c->t_sched = at;
    g->st.started++;
    if (win(g, n->now))
        g->st.win.started++;
    start_attempt(n, c, 0);
}

void gen_call(struct node *n)
{
    call_start(n, n->now);
}

void gen_arrival(struct node *n)
{
    struct gen *g = n->gen;
    if (!g || g->draining)
        return;
    lag(n, g->next_at);
    call_start(n, g->next_at);
    schedule_next(n);
}

void gen_call_timer(struct node *n, void *obj, uint32_t tgen)
{
    struct gcall *c = obj;
    struct osn_uac_acts a;
    if (!n->gen || !c->live || c->tgen != tgen)
        return;
    osn_uac_call_on_timer(&c->uac, &a);
    act(n, c, &a, NULL, 0);
}

/* What next hop x->hop reported on call c's INVITE, to the element as a proxy's client
 * transaction reports it (osn_elem_on_client_event_hop, src/elem/element.c: the same decision):
 * with several next hops, a timeout or a 503 with Retry-After marks that server down (RFC 3261
 * 21.5.4, RFC 3263 4.3) and, while the caller still waits, the attempt's INVITE goes to another
 * server that is up and admits it (a failover: a new transaction, the same Call-ID) instead of
 * the failure reaching the caller. True when it did. */
/* What an INVITE transaction of the generator reports: from next hop `hop`, started at t0, its
 * TU event tu with the response's status and Retry-After (0 and -1 for none). */
struct inv_ev {
    int hop, tu, status, retry_after;
    double t0;
};

static struct inv_ev inv_ev_of(const struct ntx *x, const struct osn_sip_out *o)
{
    bool resp = o->tu == OSN_SIP_TU_RESPONSE;
    return (struct inv_ev){.hop = x->hop,
                           .tu = o->tu,
                           .status = resp ? o->msg->status : 0,
                           .retry_after = resp ? o->msg->retry_after : -1,
                           .t0 = x->t0};
}

static bool failover(struct node *n, struct gcall *c, bool waits, const struct inv_ev *v)
{
    struct osn_elem e = node_elem(n);
    struct osn_elem_actions a;
    waits = waits && c && c->uac.state == OSN_UAC_S_INVITING;
    e.role = OSN_ELEM_PROXY; /* the caller is the upstream transaction that waits */
    osn_elem_on_client_event_hop(&e, v->hop, n->now, v->t0, v->tu, v->status, v->retry_after,
                                 OSN_SIP_INVITE, waits ? OSN_SIP_PROCEEDING : OSN_SIP_NOSTATE, &a);
    if (!waits || a.n != 1 || a.a[0].kind != OSN_ELEM_A_FORWARD)
        return false;
    c->hop = a.a[0].hop;
    c->invite = NULL;
    n->gen->st.failovers++;
    (void)invite_to(n, c); /* false: the call has ended (no memory), counted there */
    return true;
}

static void invite_event(struct node *n, struct gcall *c, const struct inv_ev *v,
                         const struct rmsg *in)
{
    struct gen *g = n->gen;
    struct osn_uac_call gone = {.state = OSN_UAC_S_DONE};
    struct osn_uac_acts a;
    osn_uac_call_on_invite(c ? &c->uac : &gone, &g->ucfg, n->now, v->tu, v->status, v->retry_after,
                           &a);
    if (a.bits & OSN_UAC_BIT(OSN_UAC_DO_DRAW)) {
        double u = osn_rng_u01(&g->rng), delay = gen_retry_delay(g->src, &g->rng);
        osn_uac_call_retry(&c->uac, &g->ucfg, n->now, u, delay, &a);
    }
    act(n, c, &a, in, v->hop);
    if (c && c->uac.state != OSN_UAC_S_INVITING)
        c->invite = NULL;
}

/* The callee's BYE (server transaction x): the machine says what the caller answers (200 in
 * a call that is up, 481 in none: a Call-ID not ours, or a call over) and does. */
static void callee_bye(struct node *n, struct ntx *x)
{
    struct gcall *c = call_of(n->gen, x);
    struct osn_uac_acts a;
    int status = osn_uac_call_on_bye_request(c ? &c->uac : NULL, &a);
    tu_respond(n, x, status, -1, 0);
    if (c)
        act(n, c, &a, NULL, 0);
}

void gen_client_event(struct node *n, struct ntx *x, const struct osn_sip_out *o,
                      const struct rmsg *in)
{
    struct gen *g = n->gen;
    if (g && x->t.role == OSN_SIP_SERVER && o->tu == OSN_SIP_TU_REQUEST &&
        x->t.req.method == OSN_SIP_BYE) {
        callee_bye(n, x);
        return;
    }
    if (!g || x->t.role != OSN_SIP_CLIENT)
        return;
    struct gcall *c = call_of(g, x);
    if (x->t.req.method == OSN_SIP_INVITE) {
        if (c && c->invite && c->invite != x)
            return; /* a branch the call left for another server (failover): stale */
        struct inv_ev v = inv_ev_of(x, o);
        if (failover(n, c, c && c->invite == x, &v))
            return;
        invite_event(n, c, &v, in);
    } else if (x->t.req.method == OSN_SIP_BYE && c) { /* its answer, or Timer F, ends it */
        struct osn_uac_acts a;
        bool resp = o->tu == OSN_SIP_TU_RESPONSE;
        osn_uac_call_on_bye(&c->uac, o->tu, resp ? o->msg->status : 0, &a);
        act(n, c, &a, NULL, 0);
    }
}

bool gen_lets_go(const struct node *n, const struct ntx *x)
{
    const struct gcall *c = n->gen ? call_of(n->gen, x) : NULL;
    return !c || c->invite != x;
}

void gen_kept_2xx(struct node *n, int hop, double t0, const struct rmsg *r)
{
    struct gen *g = n->gen;
    if (!g)
        return;
    struct gcall *c = call_of_id(g, r->pm->call_id);
    /* As gen_client_event: a call that waits on an INVITE (a live one: a kept record is never
     * the one a call waits on, gen_lets_go) has left this branch, whose 2xx is stale. */
    if (c && c->invite)
        return;
    struct inv_ev v = {.hop = hop,
                       .tu = OSN_SIP_TU_RESPONSE,
                       .status = r->m.status,
                       .retry_after = r->m.retry_after,
                       .t0 = t0};
    if (!failover(n, c, false, &v)) /* never: no call waits on it; its feedback all the same */
        invite_event(n, c, &v, r);
}

void gen_drain(struct node *n)
{
    struct gen *g = n->gen;
    if (!g || g->draining)
        return;
    g->draining = true;
    g->ucfg.hang_up = true; /* a call set up from now on hangs up at once */
    for (size_t k = 0; k < g->nchunk; k++)
        for (int i = 0; i < CHUNK; i++) {
            struct gcall *c = &g->chunk[k][i];
            struct osn_uac_acts a;
            if (!c->live)
                continue;
            osn_uac_call_on_traffic_end(&c->uac, &g->ucfg, c->t_sched, &a);
            act(n, c, &a, NULL, 0);
        }
}

const uint64_t *gen_did(const struct node *n)
{
    return n->gen ? n->gen->did : NULL;
}

bool gen_done(const struct node *n)
{
    return !n->gen || n->gen->live == 0;
}

void gen_stats_header(FILE *f)
{
    fprintf(f, "t,started,retries,answered,failed,failed_timeout,failed_rejected,failed_other,"
               "live,lag_max_ms,abandoned,shed_local\n");
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
    fprintf(f, "%.3f,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%zu,%.3f,%llu,%llu\n", n->now,
            (unsigned long long)(a->started - b->started),
            (unsigned long long)(a->retries - b->retries), (unsigned long long)fail[OSN_UAC_GOOD],
            (unsigned long long)failed, (unsigned long long)fail[OSN_UAC_TIMEOUT],
            (unsigned long long)fail[OSN_UAC_REJECTED], (unsigned long long)fail[OSN_UAC_OTHER],
            g->live, g->row_lag * 1e3, (unsigned long long)fail[OSN_UAC_ABANDONED],
            (unsigned long long)(a->shed_local - b->shed_local));
    fflush(f);
    memcpy(g->row.outcome, a->outcome, sizeof a->outcome);
    g->row.started = a->started;
    g->row.retries = a->retries;
    g->row.shed_local = a->shed_local;
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
            "retries %llu  shed %llu  live %zu  lag max %.1f ms%s",
            n->cfg->console_lines ? "" : "\r", n->now, (unsigned long long)a->started,
            (unsigned long long)a->outcome[OSN_UAC_GOOD], (unsigned long long)failed,
            (unsigned long long)a->outcome[OSN_UAC_ABANDONED], (unsigned long long)a->retries,
            (unsigned long long)a->shed_local, g->live, a->lag_max * 1e3,
            n->cfg->console_lines ? "\n" : " ");
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

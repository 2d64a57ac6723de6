/*
 * Call sources of the network simulator: the arrival process of each UAC (Poisson, MMPP, a
 * piecewise-constant profile with a burst, or batches of bulk arrivals), and the driver of the
 * UAC's call machine (src/elem/uac_call.c): what a caller does (INVITE, CANCEL, ACK, hold, BYE,
 * retry, give up) is the machine's decision; this file draws its random numbers (patience, retry,
 * hold) and carries its actions out with the simulator's calls, transactions and event set. Driver
 * differences from the node's generator (src/node/gen.c): a retry is a new call object here (a new
 * uid: a new Call-ID), linked to the first by its origin; the call's timer is its `hold` event,
 * whose type says which timer it is; a hang-up after a crossed CANCEL leaves, like any BYE, from
 * that event.
 */
#include <math.h>
#include <string.h>

#include "net_int.h"
#include "osn/des.h"
#include "osn/err.h"

/* The next call arrival of source el after time t (profile: piecewise-constant rate, exact by
 * restarting the exponential clock at each rate change; memoryless). */
double osn__net_next_arrival(struct net *s, struct element *el, double t)
{
    const struct osn_net_source_cfg *sc = &s->cfg->src;
    if (sc->process == OSN_NET_BULK) {
        /* the next batch: rate / bulk_size batches/s, so `rate` calls/s on average */
        double gap = (double)sc->bulk_size / (sc->rate * el->rate_share);
        return sc->rate > 0 ? t + (sc->bulk_det ? gap : gap * osn_des_exp1(&el->arr_rng))
                            : INFINITY;
    }
    if (sc->process != OSN_NET_PROFILE) {
        int flow;
        return osn_des_arr_next(&el->darr, &el->arr_rng, &flow);
    }
    const struct osn_uac_profile p = {sc->rate,    sc->nsteps,    sc->step_t,      sc->step_rate,
                                      sc->burst_t, sc->burst_len, sc->burst_factor};
    for (;;) {
        double tn, r = osn_uac_profile_rate(&p, t, &tn);
        r *= el->rate_share;
        double x = r > 0 ? t + osn_des_exp1(&el->arr_rng) / r : INFINITY;
        if (x < tn)
            return x;
        if (!isfinite(tn))
            return INFINITY;
        t = tn;
    }
}

/* Retries take uids from 2^48 on, counted per source apart from the first attempts (UID_SHIFT):
 * a first attempt's uid is then the same whatever retries came before it. 2^49 * 32 (branch())
 * still fits in 64 bits. */
#define RETRY_UID ((uint64_t)1 << 48)

/* The caller of call `origin`, attempt `retries`, waits this long (s) for a final answer: a draw
 * of the patience law from a stream of its own (see patience_key), so that runs that differ only
 * in control give up on the same attempts at the same ages, as far as the calls' fates agree. */
static double patience_draw(const struct net *s, uint64_t origin, unsigned retries)
{
    const struct osn_net_source_cfg *sc = &s->cfg->src;
    static const int law[] = {[OSN_NET_PATIENCE_NONE] = OSN_UAC_PATIENCE_NONE,
                              [OSN_NET_PATIENCE_EXP] = OSN_UAC_PATIENCE_EXP,
                              [OSN_NET_PATIENCE_DET] = OSN_UAC_PATIENCE_DET,
                              [OSN_NET_PATIENCE_LOGNORMAL] = OSN_UAC_PATIENCE_LOGNORMAL};
    if (sc->patience == OSN_NET_PATIENCE_NONE)
        return INFINITY;
    struct osn_uac_patience p = {law[sc->patience], sc->patience_mean, sc->patience_cv};
    return osn_uac_patience_draw(&p, s->patience_key, origin, retries);
}

static void send_invite(struct net *s, struct call *c);

/* A new attempt of a source with a client half ([control] at = edge or both): the UAC's machine
 * admits its INVITE or sheds it (osn_uac_call_admit, RFC 7339 5.3), which ends it as a 503
 * would, counted as shed locally. Out of line: the default (no client half) never comes here. */
static __attribute__((noinline)) void shed_or_send(struct net *s, struct call *c,
                                                   struct osn_uac_acts *a)
{
    if (osn_uac_call_admit(&c->uac, &s->uac, s->elems[c->src].cli, s->q.now, a)) {
        if (obs(s))
            s->tot[OSN__NT_SHED_LOCAL] += 1;
        if (a->bits & OSN_UAC_BIT(OSN_UAC_DO_DRAW))
            osn__net_retry_draw(s, c, a);
    }
    osn__net_uac_act(s, c, a, NULL, NULL);
}

/* An attempt of a call from source `src`: a new call object with a new Call-ID (uid); `prev`
 * is the call's previous attempt, NULL for a first one. */
static void start_attempt(struct net *s, int src, const struct call *prev)
{
    struct call *c = osn__net_call_new(s);
    struct osn_uac_acts a;
    if (!c) {
        s->err = OSN_ENOMEM;
        return;
    }
    struct element *el = &s->elems[src];
    if (prev) {
        c->uid = RETRY_UID + ((uint64_t)src << UID_SHIFT) + ++el->retries;
        c->origin = prev->origin;
    } else {
        c->uid = c->origin = ((uint64_t)src << UID_SHIFT) + ++el->calls;
    }
    c->src = c->path[0] = (uint16_t)src;
    c->path[1] = (uint16_t)(s->E + src);            /* its proxy */
    if (__builtin_expect(s->src_path != NULL, 0)) { /* a tree: the source's own path */
        memcpy(c->path, s->src_path[src].path, sizeof c->path);
        c->nhop = s->src_path[src].nhop;
    }
    c->refs = 1; /* held while the INVITE is being started */
    if (!prev) {
        s->tr_start += 1;
        if (obs(s)) {
            s->tot[OSN__NT_STARTED] += 1;
            s->elems[src].tot[OSN__NE_SRC_STARTED] += 1;
        }
    } else if (obs(s)) {
        s->tot[OSN__NT_RETRIES] += 1;
    }
    unsigned retries = prev ? prev->uac.retries + 1u : 0;
    osn_uac_call_start(&c->uac, s->q.now, retries, patience_draw(s, c->origin, retries), &a);
    /* whether its callee ends it: the UAS asks the same of the same Call-ID (its uid) */
    if (s->uac.callee_hangs_up > 0)
        osn_uac_call_keyed(&c->uac, &s->uac, c->uid);
    /* [control] at = edge or both: the source's client half admits the INVITE or sheds it */
    if (s->elems[src].cli)
        shed_or_send(s, c, &a);
    else if (a.bits == OSN_UAC_BIT(OSN_UAC_DO_INVITE) && !s->uac_count)
        send_invite(s, c); /* no patience: the INVITE alone, without the action loop */
    else
        osn__net_uac_act(s, c, &a, NULL, NULL);
    osn__net_call_unref(s, c);
}

void osn__net_new_call(struct net *s, int src)
{
    start_attempt(s, src, NULL);
}

/* The retry delay law of the scenario as a struct osn_law (mean retry_delay > 0). */
static struct osn_law retry_law(const struct osn_net_source_cfg *sc)
{
    static const enum osn_law_kind kind[] = {
            [OSN_NET_RETRY_EXP] = OSN_LAW_EXP,
            [OSN_NET_RETRY_DET] = OSN_LAW_DET,
            [OSN_NET_RETRY_UNIFORM] = OSN_LAW_UNIFORM,
            [OSN_NET_RETRY_LOGNORMAL] = OSN_LAW_LOGNORMAL,
    };
    return (struct osn_law){.kind = kind[sc->retry_delay_law],
                            .rate = 1 / sc->retry_delay,
                            .cv = sc->retry_delay_cv};
}

__attribute__((noinline)) void osn__net_retry_draw(struct net *s, struct call *c,
                                                   struct osn_uac_acts *a)
{
    const struct osn_net_source_cfg *sc = &s->cfg->src;
    /* Attempt k of call `origin` draws from a stream of its own (see retry_key), so that runs
     * that differ only in control retry the same calls after the same waits, as far as the
     * calls' fates agree (common random numbers, as for the hold times). */
    struct osn_rng r;
    osn_rng_seed(&r, s->retry_key ^ (c->origin * 128 + c->uac.retries));
    double u = osn_rng_u01(&r);
    struct osn_law law = retry_law(sc);
    double delay = sc->retry_delay > 0 ? osn_des_law_draw(&law, &r) : 0;
    osn_uac_call_retry(&c->uac, &s->uac, s->q.now, u, delay, a);
}

/* Arms the call's one timer at `at`: its type (the event's) is the machine's state's. */
static void arm(struct net *s, struct call *c, double at)
{
    int type = c->uac.state == OSN_UAC_S_INVITING ? EV_PATIENCE
               : c->uac.state == OSN_UAC_S_RETRY  ? EV_RETRY
                                                  : EV_HOLD;
    c->refs++; /* the timer's */
    if (c->hold.type != type)
        osn_des_ev_init(&c->hold, type);
    osn__net_at(s, c->src, &c->hold, at);
}

static void send_invite(struct net *s, struct call *c)
{
    struct osn_sip_msg req = {.method = OSN_SIP_INVITE,
                              .cseq = 1,
                              .retry_after = -1,
                              .call_id = c->uid,
                              .from_tag = c->uid};
    req.branch = branch(c, 0, B_INVITE);
    osn__net_start_client(s, c->src, c, 0, &req);
}

/* The BYE, made from the call (the simulator's messages are numbers: nothing kept of the 2xx). */
static void send_bye(struct net *s, struct call *c)
{
    struct osn_sip_msg req = {.method = OSN_SIP_BYE,
                              .cseq = 2,
                              .retry_after = -1,
                              .call_id = c->uid,
                              .from_tag = c->uid,
                              .to_tag = c->uid + 1};
    req.branch = branch(c, 0, B_BYE);
    osn__net_start_client(s, c->src, c, 0, &req);
}

/* One delay sample into the histogram at tot[hist]. */
static void hist_add(struct net *s, int hist, double d)
{
    s->tot[hist + osn_uac_delay_bin(d)] += 1;
}

static void setup_sample(struct net *s, const struct call *c, double d)
{
    if (s->trace)
        osn__net_trace_setup(s, d);
    if (!obs(s))
        return;
    s->tot[OSN__NT_SETUP_N] += 1;
    s->tot[OSN__NT_SETUP_SUM] += d;
    double *src = s->elems[c->src].tot;
    src[OSN__NE_SRC_SETUP_N] += 1;
    src[OSN__NE_SRC_SETUP_SUM] += d;
    hist_add(s, OSN__NT_HIST, d);
}

/* INVITE -> first 100 Trying at the UAC (the PRSM papers' response delay). */
static void trying_sample(struct net *s, double d)
{
    if (!obs(s))
        return;
    s->tot[OSN__NT_TRYING_N] += 1;
    s->tot[OSN__NT_TRYING_SUM] += d;
    hist_add(s, OSN__NT_TRYING_HIST, d);
}

/* What the machine said, counted by action for the element probe (the drivers' differential
 * test): a run reports none of it, so it is counted only when the probe asks. */
static void count_did(struct net *s, uint32_t b)
{
    for (; b; b &= b - 1)
        s->uac_did[__builtin_ctz(b)]++;
}

/* Actions that leave nothing to do here, kept out of the loop (a quarter of the UAC's actions on
 * fanin.ini): DIALOG (the BYE is made from the call), BYE_OK (no figure of the simulator counts
 * it), END (the call's last reference frees it), DRAW (osn__net_retry_draw replaced it). */
#define NOTHING_TO_DO                                                  \
    (OSN_UAC_BIT(OSN_UAC_DO_DIALOG) | OSN_UAC_BIT(OSN_UAC_DO_BYE_OK) | \
     OSN_UAC_BIT(OSN_UAC_DO_END) | OSN_UAC_BIT(OSN_UAC_DO_DRAW))

/* The callee's BYE was answered 200 (OSN_UAC_DO_HUNG_UP): a hold armed is put away, and the
 * call counted as the callee's. Out of line: the action loop is inlined into the UAC's event
 * handlers, which every call passes through. */
static __attribute__((noinline)) void hung_up(struct net *s, struct call *c)
{
    if (c->hold.type == EV_HOLD && osn_des_pending(&c->hold)) {
        osn_des_cancel(&s->q, &c->hold);
        osn__net_call_unref(s, c); /* never the last: the BYE's transaction holds c */
    }
    if (obs(s))
        s->tot[OSN__NT_BYES_IN] += 1;
}

/* osn__net_uac_act after the count: each action in the bits' order. */
static void act_loop(struct net *s, struct call *c, const struct osn_uac_acts *a,
                     const struct osn_sip_msg *invite, const struct osn_sip_msg *resp)
{
    for (uint32_t b = a->bits & ~NOTHING_TO_DO; b; b &= b - 1) {
        int d = __builtin_ctz(b);
        switch (d) {
        case OSN_UAC_DO_INVITE:
            send_invite(s, c);
            break;
        case OSN_UAC_DO_STOP: /* c->hold is the hold's or the retry's from now on */
            osn__net_patience_stop(s, c);
            break;
        case OSN_UAC_DO_CANCEL:
            if (obs(s))
                s->tot[OSN__NT_CANCELS] += 1;
            osn__net_send_cancel(s, c->src, c, 0);
            break;
        case OSN_UAC_DO_TRYING:
            trying_sample(s, a->delay);
            break;
        case OSN_UAC_DO_SETUP:
            setup_sample(s, c, a->delay);
            break;
        case OSN_UAC_DO_ACK: {
            struct osn_sip_msg ack;
            osn_uac_ack(invite, branch(c, 0, B_ACK), resp->to_tag, &ack);
            osn__net_transmit(s, c->src, c, 0, &ack);
            break;
        }
        case OSN_UAC_DO_RETRY:
            if (obs(s) && c->admitted)
                s->tot[OSN__NT_ADMIT_FAIL] += 1; /* an admission that failed, retried or not */
            break;
        case OSN_UAC_DO_OUTCOME:
            osn__net_outcome(s, c, a->outcome);
            break;
        case OSN_UAC_DO_ARM:
            arm(s, c, a->at);
            break;
        case OSN_UAC_DO_HOLD: /* a retry's hold is its call's */
            arm(s, c, s->q.now + osn_uac_hold_draw(s->cfg->src.hold, s->hold_key, c->origin));
            break;
        case OSN_UAC_DO_BYE:
            send_bye(s, c);
            break;
        case OSN_UAC_DO_ATTEMPT:
            start_attempt(s, c->src, c);
            break;
        case OSN_UAC_DO_HUNG_UP:
            hung_up(s, c);
            break;
        default: /* NOTHING_TO_DO */
            break;
        }
    }
}

void osn__net_uac_act(struct net *s, struct call *c, const struct osn_uac_acts *a,
                      const struct osn_sip_msg *invite, const struct osn_sip_msg *resp)
{
    if (s->uac_count)
        count_did(s, a->bits);
    if (a->bits & ~NOTHING_TO_DO) /* a BYE's answer: nothing to do here */
        act_loop(s, c, a, invite, resp);
}

void osn__net_uac_1xx(struct net *s, struct call *c, int status)
{
    struct osn_uac_acts a;
    a.bits = osn_uac_call_on_1xx(&c->uac, s->q.now, status, &a.delay);
    if (s->uac_count)
        count_did(s, a.bits);
    if (a.bits == OSN_UAC_BIT(OSN_UAC_DO_TRYING))
        trying_sample(s, a.delay);
    else if (a.bits == OSN_UAC_BIT(OSN_UAC_DO_SETUP))
        setup_sample(s, c, a.delay);
    else if (a.bits)
        act_loop(s, c, &a, NULL, NULL); /* a CANCEL with it */
}

void osn__net_uac_2xx(struct net *s, struct call *c, const struct osn_sip_msg *invite,
                      const struct osn_sip_msg *resp)
{
    struct osn_uac_acts a;
    a.bits = osn_uac_call_on_2xx(&c->uac, &s->uac, s->q.now, &a);
    osn__net_uac_act(s, c, &a, invite, resp);
}

void osn__net_uac_end(struct net *s, struct call *c, int tu, int status, int retry_after)
{
    struct osn_uac_acts a;
    a.bits = osn_uac_call_on_end(&c->uac, &s->uac, tu, status, retry_after, &a);
    if (a.bits & OSN_UAC_BIT(OSN_UAC_DO_DRAW))
        osn__net_retry_draw(s, c, &a);
    if (s->uac_count)
        count_did(s, a.bits);
    /* The call's outcome alone (a 503 or a timeout, not retried, no patience to put away): no
     * action loop. */
    if (a.bits == (OSN_UAC_BIT(OSN_UAC_DO_OUTCOME) | OSN_UAC_BIT(OSN_UAC_DO_END)))
        osn__net_outcome(s, c, a.outcome);
    else
        act_loop(s, c, &a, NULL, NULL);
}

void osn__net_uac_timer(struct net *s, struct call *c)
{
    struct osn_uac_acts a;
    osn_uac_call_on_timer(&c->uac, &a);
    osn__net_uac_act(s, c, &a, NULL, NULL);
    osn__net_call_unref(s, c); /* the reference the timer had */
}

void osn__net_patience_stop_armed(struct net *s, struct call *c)
{
    bool armed = osn_des_pending(&c->hold);
    osn_des_cancel(&s->q, &c->hold);
    osn_des_ev_init(&c->hold, EV_HOLD);
    if (armed)
        osn__net_call_unref(s, c); /* never the last: the INVITE's transaction holds c */
}

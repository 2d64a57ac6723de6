/*
 * Call sources of the network simulator: the arrival process of each UAC (Poisson, MMPP, or a
 * piecewise-constant profile with a burst), a new call's INVITE, its retries, its caller's
 * patience, and its BYE after the hold. Whether a caller retries, and when, is the UAC's
 * decision (osn_uac_retry), and so is what a caller who gives up does (osn_uac_on_patience:
 * CANCEL, or wait for a provisional response); this file draws their random numbers, schedules
 * the retry and the patience, and sends the CANCEL.
 */
#include <math.h>

#include "net_int.h"
#include "osn/des.h"
#include "osn/err.h"

/* The next call arrival of source el after time t (profile: piecewise-constant rate, exact by
 * restarting the exponential clock at each rate change; memoryless). */
double osn__net_next_arrival(struct net *s, struct element *el, double t)
{
    const struct osn_net_source_cfg *sc = &s->cfg->src;
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

/* Retries take uids from 2^48 on, apart from the first attempts' 1, 2, ...: a first attempt's
 * uid (its hold time, its retry draws) is then the same whatever retries came before it, in
 * every run of the same seed. 2^48 * 32 (branch()) still fits in 64 bits. */
#define RETRY_UID ((uint64_t)1 << 48)

/* An attempt of a call from source `src`: a new INVITE with a new Call-ID (uid); `prev` is the
 * call's previous attempt, NULL for a first one. */
static void start_attempt(struct net *s, int src, const struct call *prev)
{
    struct call *c = osn__net_call_new(s);
    if (!c) {
        s->err = OSN_ENOMEM;
        return;
    }
    if (prev) {
        c->uid = RETRY_UID + ++s->next_retry_uid;
        c->origin = prev->origin;
        c->uac.retries = (uint8_t)(prev->uac.retries + 1);
    } else {
        c->uid = c->origin = ++s->next_uid;
    }
    c->src = (uint16_t)src;
    c->uac.t0 = s->q.now;
    c->refs = 1; /* held while the INVITE is being started */
    if (!prev) {
        s->tr_start += 1;
        if (obs(s))
            s->tot[OSN__NT_STARTED] += 1;
    } else if (obs(s)) {
        s->tot[OSN__NT_RETRIES] += 1;
    }
    struct osn_sip_msg req = {.method = OSN_SIP_INVITE,
                              .cseq = 1,
                              .retry_after = -1,
                              .call_id = c->uid,
                              .from_tag = c->uid};
    req.branch = branch(c, 0, B_INVITE);
    osn__net_start_client(s, src, c, 0, &req);
    if (s->cfg->src.patience != OSN_NET_PATIENCE_NONE)
        osn__net_patience_arm(s, c);
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

/* noinline: see osn__net_retry_or_end (net_int.h). */
__attribute__((noinline)) bool osn__net_retry_draw(struct net *s, struct call *c, int outcome,
                                                   int retry_after)
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
    struct osn_uac_retry_cfg rc = {.prob = sc->retry_prob,
                                   .max_retries = sc->max_retries,
                                   .honour_retry_after = sc->honour_retry_after};
    double wait;
    if (!osn_uac_retry(&rc, &c->uac, outcome, retry_after, u, delay, &wait))
        return false;
    /* The failed attempt lives on, in the call's hold event, until its caller tries again:
     * the retry needs its origin and count. */
    c->refs++;
    osn_des_ev_init(&c->hold, EV_RETRY);
    osn__net_at(s, &c->hold, s->q.now + wait);
    if (obs(s) && c->admitted)
        s->tot[OSN__NT_ADMIT_FAIL] += 1; /* an admission that failed, retried or not */
    return true;
}

void osn__net_retry(struct net *s, struct call *c)
{
    start_attempt(s, c->src, c);
    osn__net_call_unref(s, c); /* the reference the wait had */
}

void osn__net_hold_over(struct net *s, struct call *c)
{
    struct osn_sip_msg req = {.method = OSN_SIP_BYE,
                              .cseq = 2,
                              .retry_after = -1,
                              .call_id = c->uid,
                              .from_tag = c->uid,
                              .to_tag = c->uid + 1};
    req.branch = branch(c, 0, B_BYE);
    osn__net_start_client(s, c->src, c, 0, &req);
    osn__net_call_unref(s, c); /* the reference the hold timer had */
}

/* The caller of attempt c waits this long (s) for a final answer: a draw of the patience law
 * from a stream of its own (see patience_key), so that runs that differ only in control give up
 * on the same attempts at the same ages, as far as the calls' fates agree. */
static double patience_draw(const struct net *s, const struct call *c)
{
    const struct osn_net_source_cfg *sc = &s->cfg->src;
    static const int law[] = {[OSN_NET_PATIENCE_NONE] = OSN_UAC_PATIENCE_NONE,
                              [OSN_NET_PATIENCE_EXP] = OSN_UAC_PATIENCE_EXP,
                              [OSN_NET_PATIENCE_DET] = OSN_UAC_PATIENCE_DET,
                              [OSN_NET_PATIENCE_LOGNORMAL] = OSN_UAC_PATIENCE_LOGNORMAL};
    struct osn_uac_patience p = {law[sc->patience], sc->patience_mean, sc->patience_cv};
    return osn_uac_patience_draw(&p, s->patience_key, c->origin, c->uac.retries);
}

void osn__net_patience_arm(struct net *s, struct call *c)
{
    if (c->uac.outcome != OSN_UAC_PENDING || c->uac.connected)
        return; /* answered already (nothing is, so early; kept for safety) */
    c->refs++;  /* the patience timer's */
    osn_des_ev_init(&c->hold, EV_PATIENCE);
    osn__net_at(s, &c->hold, s->q.now + patience_draw(s, c));
}

void osn__net_uac_cancel(struct net *s, struct call *c)
{
    if (obs(s))
        s->tot[OSN__NT_CANCELS] += 1;
    osn__net_send_cancel(s, c->src, c, 0);
}

void osn__net_patience_over(struct net *s, struct call *c)
{
    struct osn_uac_step st;
    osn_uac_on_patience(&c->uac, &st);
    if (st.cancel)
        osn__net_uac_cancel(s, c);
    osn__net_call_unref(s, c); /* the reference the patience timer had */
}

void osn__net_patience_stop_armed(struct net *s, struct call *c)
{
    bool armed = osn_des_pending(&c->hold);
    osn_des_cancel(&s->q, &c->hold);
    osn_des_ev_init(&c->hold, EV_HOLD);
    if (armed)
        osn__net_call_unref(s, c); /* never the last: the INVITE's transaction holds c */
}

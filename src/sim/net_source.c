/*
 * Call sources of the network simulator: the arrival process of each UAC (Poisson, MMPP, or a
 * piecewise-constant profile with a burst), a new call's INVITE, and its BYE after the hold.
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
    for (;;) {
        /* rate in force at t and the next instant it may change */
        double r = sc->rate, tn = INFINITY;
        for (int i = 0; i < sc->nsteps; i++) {
            if (sc->step_t[i] <= t)
                r = sc->step_rate[i];
            else if (sc->step_t[i] < tn)
                tn = sc->step_t[i];
        }
        if (sc->burst_len > 0) {
            if (t >= sc->burst_t && t < sc->burst_t + sc->burst_len) {
                r *= sc->burst_factor;
                if (sc->burst_t + sc->burst_len < tn)
                    tn = sc->burst_t + sc->burst_len;
            } else if (t < sc->burst_t && sc->burst_t < tn) {
                tn = sc->burst_t;
            }
        }
        r *= el->rate_share;
        double x = r > 0 ? t + osn_des_exp1(&el->arr_rng) / r : INFINITY;
        if (x < tn)
            return x;
        if (!isfinite(tn))
            return INFINITY;
        t = tn;
    }
}

void osn__net_new_call(struct net *s, int src)
{
    struct call *c = osn__net_call_new(s);
    if (!c) {
        s->err = OSN_ENOMEM;
        return;
    }
    c->uid = ++s->next_uid;
    c->src = (uint16_t)src;
    c->uac.t0 = s->q.now;
    c->refs = 1; /* held while the INVITE is being started */
    s->tr_start += 1;
    if (obs(s))
        s->tot[OSN__NT_STARTED] += 1;
    struct osn_sip_msg req = {.method = OSN_SIP_INVITE,
                              .cseq = 1,
                              .retry_after = -1,
                              .call_id = c->uid,
                              .from_tag = c->uid};
    req.branch = branch(c, 0, B_INVITE);
    osn__net_start_client(s, src, c, 0, &req);
    osn__net_call_unref(s, c);
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

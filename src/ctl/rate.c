/*
 * Controller "rate": RFC 7415 rate-based overload control (oc-algo="rate"), both halves.
 *
 * Server half. RFC 7415 3.1 leaves the target-rate estimator to the implementation; this one
 * (run every rate.interval seconds, and while the detector is out of mode 0) takes the load
 * meter's window and computes the sustainable rate of new INVITEs,
 *
 *   X = rho_target * (departures / busy time) * (new INVITEs / arrivals)
 *
 * i.e. the message service rate the server showed while busy, times the target utilisation,
 * divided by the messages each new INVITE brings with it (responses, ACK, BYE, retransmissions,
 * all counted). Each of the n_clients upstream neighbours gets X / N (RFC 6357 9.1,
 * docs/protocols.md 3), at least min_rate, rounded to whole requests per second (RFC 7339 9).
 *
 *   OFF --detector leaves NORMAL, estimate available--> ON(x = max(min_rate, X / N))
 *   ON  --detector not NORMAL--> x = max(min_rate, X / N)
 *   ON  --NORMAL--> x = max(x, X / N)  (only relaxes), and OFF once the new-INVITE arrival rate
 *                   falls below release * x * N (the limit no longer binds)
 *   ON:  oc=round(x);oc-algo="rate";oc-validity=rate.validity;oc-seq
 *   OFF: oc=0;oc-validity=0;oc-seq (RFC 7415 3.5.1: validity 0 stops; oc=0 alone would mean
 *        "send nothing" to a rate client, RFC 7339 5.1)
 *   DISCARD: new INVITEs also get 503 at the server (discard_reject).
 *
 * Client half: the RFC 7339 5.4 context (seq ordering, validity expiry, as in loss.c) and the
 * leaky bucket of RFC 7415 3.5.1 (GCRA, ITU-T I.371 A.2) on new INVITEs:
 *
 *   activation (OFF -> ON):   T = 1/oc, TAU = tau_factor*T, X = tau0_factor*T, LCT = now
 *   update (ON, newer seq):   T, TAU from the new oc; X, LCT kept
 *   request at ta:            X' = X - (ta - LCT)
 *                             X' <= TAU: SEND, X = max(X', 0) + T, LCT = ta
 *                             X' >  TAU: SHED_503, X and LCT unchanged
 *   oc = 0 while ON:          SHED_503 every new INVITE (RFC 7415 3.5.1)
 *
 * With TAU = 4T a client that has been quiet sends 5 requests back to back, then one per T.
 * randomize adds RFC 7415 3.5.3 resonance avoidance: when the bucket had emptied (X' <= 0) the
 * increment is T + u*T with u uniform in [-1/2, 1/2). Other requests (BYE, ACK, retransmissions)
 * are sent unthrottled: in-dialog traffic belongs to admitted calls (RFC 7339 5.10.1).
 * The client half (osn__ctl_rate_client_*) is also rate_dyn's (src/ctl/rate_dyn.c), whose
 * server sends the same feedback.
 */
#include "ctl_int.h"

#include <math.h>

#include "osn/err.h"

struct rate {
    struct osn__ctl_rate_base rb; /* base and the client half */
    /* server */
    bool on;
    double x; /* per-client rate in force, requests/s */
    struct osn__ctl_window_clock win;
    struct osn__ctl_seqgen seq;
};

int osn__ctl_rate_init(struct osn_ctl *c)
{
    const struct osn_ctl_rate_cfg *k = &c->cfg.rate;

    if (!(k->validity > 0 && k->interval > 0 && k->target > 0 && k->min_rate >= 0 &&
          k->release >= 0 && k->n_clients > 0 && k->tau_factor >= 0 && k->tau0_factor >= 0 &&
          k->tau0_factor <= k->tau_factor))
        return OSN_EINVAL;
    return 0;
}

/* ---- server ---- */

static void estimate(struct rate *r, double now)
{
    struct osn_ctl *c = &r->rb.base;
    const struct osn_ctl_rate_cfg *k = &c->cfg.rate;
    struct osn__ctl_window w;
    double x, n = (double)k->n_clients;

    if (!osn__ctl_window_due(&r->win, &c->meter, now, k->interval, &w))
        return;
    if (!r->on && c->det.mode == OSN_CTL_NORMAL)
        return;
    if (r->on && c->det.mode == OSN_CTL_NORMAL && w.len > 0 &&
        (double)w.inv / w.len < k->release * r->x * n) {
        r->on = false; /* RFC 7339 5.7: stop with oc-validity=0 */
        return;
    }
    if (w.dep == 0 || w.busy <= 0 || w.inv == 0)
        return; /* no estimate in this window: hold */
    /* RFC 7415 3.1: the target rate from the server's own measurements (see the top). */
    x = k->target * ((double)w.dep / w.busy) * ((double)w.inv / (double)w.arr) / n;
    if (x < k->min_rate)
        x = k->min_rate;
    if (r->on && c->det.mode == OSN_CTL_NORMAL && x < r->x)
        x = r->x;
    r->x = x;
    r->on = true;
}

static struct osn_ctl_verdict rate_arrival(struct osn_ctl *c, double now,
                                           const struct osn_ctl_event *ev)
{
    struct osn_ctl_verdict v = {OSN_CTL_ADMIT, 0, OSN_CTL_Q_PRIMARY};

    estimate((struct rate *)c, now);
    if (ev->kind == OSN_CTL_MSG_INVITE && c->det.mode == OSN_CTL_DISCARD &&
        c->cfg.rate.discard_reject)
        v.action = OSN_CTL_REJECT_503;
    return v;
}

static void rate_departure(struct osn_ctl *c, double now, const struct osn_ctl_event *ev)
{
    (void)ev;
    estimate((struct rate *)c, now);
}

static void rate_feedback(struct osn_ctl *c, double now, struct osn_ctl_feedback *fb)
{
    struct rate *r = (struct rate *)c;

    estimate(r, now);
    fb->algo = OSN_CTL_ALGO_RATE; /* RFC 7415 3.3: the server returns oc-algo="rate" */
    if (r->on) {
        fb->oc = round(r->x);
        fb->validity = c->cfg.rate.validity;
    } else {
        fb->oc = 0;
        fb->validity = 0; /* RFC 7415 3.5.1: oc-validity=0 stops throttling */
    }
    fb->seq = osn__ctl_seq_stamp(&r->seq, c->cfg.seq_base, now, fb->oc, fb->validity);
}

/* ---- client ---- */

static void set_rate(struct osn__ctl_rate_base *r, double oc)
{
    const struct osn_ctl_rate_cfg *k = &r->base.cfg.rate;

    /* RFC 7415 3.5.1: T = 1/oc; TAU = 4T is "a reasonable compromise". */
    r->b.T = oc > 0 ? 1 / oc : INFINITY;
    r->b.tau = k->tau_factor * r->b.T;
}

void osn__ctl_rate_client_feedback(struct osn_ctl *c, double now, const struct osn_ctl_feedback *fb)
{
    struct osn__ctl_rate_base *r = (struct osn__ctl_rate_base *)c;
    bool was_on = osn__ctl_oc_live(&r->ctx, now);

    if (osn__ctl_oc_update(&r->ctx, now, fb, OSN_CTL_ALGO_RATE) <= 0)
        return;
    set_rate(r, r->ctx.oc);
    if (!was_on && r->ctx.oc > 0) {
        /* RFC 7415 3.5.1: at activation LCT = now and X = TAU0, 0 <= TAU0 <= TAU. */
        double u = c->cfg.rate.randomize ? osn__ctl_u01(c) - 0.5 : 0;

        r->b.X = c->cfg.rate.tau0_factor * r->b.T + u * r->b.T; /* RFC 7415 3.5.3 */
        if (r->b.X < 0)
            r->b.X = 0;
        r->b.LCT = now;
    }
}

enum osn_ctl_send osn__ctl_rate_client_admit(struct osn_ctl *c, double now, enum osn_ctl_msg kind)
{
    struct osn__ctl_rate_base *r = (struct osn__ctl_rate_base *)c;
    double u = 0;

    if (kind != OSN_CTL_MSG_INVITE || !osn__ctl_oc_live(&r->ctx, now))
        return OSN_CTL_SEND;
    if (!(r->ctx.oc > 0))
        return OSN_CTL_SHED_503; /* RFC 7415 3.5.1: oc=0 with validity > 0 rejects all */
    if (c->cfg.rate.randomize)
        u = osn__ctl_u01(c) - 0.5; /* RFC 7415 3.5.3, used only if the bucket had emptied */
    return osn__ctl_bucket_admit(&r->b, now, u) ? OSN_CTL_SEND : OSN_CTL_SHED_503;
}

double osn__ctl_rate_client_level(struct osn_ctl *c, double now)
{
    struct osn__ctl_rate_base *r = (struct osn__ctl_rate_base *)c;

    return osn__ctl_oc_live(&r->ctx, now) ? r->ctx.oc : INFINITY;
}

const struct osn__ctl_ops osn__ctl_rate_ops = {
        .level = "rate_limit_per_s",
        .gauge = OSN__CTL_RATE_GAUGE,
        .size = sizeof(struct rate),
        .uses_det = true,
        .init = osn__ctl_rate_init,
        .server_on_arrival = rate_arrival,
        .server_on_departure = rate_departure,
        .server_feedback = rate_feedback,
        .client_on_feedback = osn__ctl_rate_client_feedback,
        .client_admit = osn__ctl_rate_client_admit,
        .client_level = osn__ctl_rate_client_level,
};

/*
 * Controller "rate_dyn": RFC 7415 rate-based overload control whose server half adapts its
 * thresholds and its rate to the feedback delay it measures: the remedy the RUDN group gives
 * for RBOC ("RBOC mechanism needs to have its own threshold dynamic control mechanism for
 * different RTT values"). The papers do not describe the mechanism; this is our design.
 *
 * Why. A rate limit sent at time t reaches the client with a response and acts on the requests
 * that reach the server from t + D on, D the feedback delay (the loop's RTT plus the client's
 * turnaround). Until then the queue goes on growing at g = arrivals - departures (messages/s):
 * rate on fixed thresholds starts too late by g * D messages (its overshoot past H1 grows with
 * the RTT), and its limit, computed from the queue it sees now, drains a queue that is already
 * g * D longer. Lowering the detector's thresholds by a fixed amount (study 01's RTT-aware rule)
 * moves what is measured as overload as well, and does not follow g. So rate_dyn keeps the
 * detector (what "overload" means) as configured and moves its own decisions instead:
 *
 *  1. It measures D. At each activation (OFF -> ON) in a window whose new-INVITE arrival rate
 *     lambda0 exceeds the total limit X = N x by a quarter or more, it counts the new INVITEs A
 *     that arrive after it and integrates the total limit it has advertised since, S. The
 *     clients went on at lambda0 for D, then at the limit, so A = lambda0 D + S - X D + B (B the
 *     N buckets' initial bursts, N (TAU - TAU0) / T + N requests), and once a window shows the
 *     arrivals down at the limit (between 0.8 X and (lambda0 + X) / 2),
 *         D = (A - S - B) / (lambda0 - X),   clipped to [0, time since activation];
 *     d, the estimate, is the mean of the first samples, then an EWMA of weight 1/4. A window
 *     below 0.8 X (the burst ended, the sample would be biased low) or 2 s without a change
 *     abandons the sample.
 *  2. Dynamic onset threshold: every window (rate.interval, T_w) the server predicts the queue
 *     one loop delay ahead, n^ = n + g (d + T_w) (T_w: the next look is one window away), and
 *     starts the limit once n^ reaches H1 even while the detector is still normal: the onset of
 *     the limit is H1 - g (d + T_w), never below L1 + 1. With d = 0 and g = 0 it is H1.
 *  3. Dynamic rate: the CPU share target, less the share that works off the predicted excess
 *     over twice the loop delay, divided by the CPU time a call costs:
 *         X = (target - max(0, n^ - L1) s / (2 (d + T_w))) / c,
 *     per client X / N, at least min_rate. s = busy / departures is the window's mean service
 *     time of a message; c = busy time / new INVITEs, both sums over the windows with weights
 *     decaying in COST_TAU = 10 s, is the CPU time a call brings (its INVITE, responses, ACK,
 *     BYE some seconds later, retransmissions). rate's per-window estimate, target (dep / busy)
 *     (inv / arr), takes the message mix of the window: at the start of a burst the new calls'
 *     BYEs have not come yet, messages per INVITE are low, and it grants 450-550 calls/s to a
 *     core of 370 (seen in study 01's set-up), a limit that hardly binds and cannot show the
 *     feedback delay. The queue the clients will have built by the time the limit acts is
 *     worked off at half of it per loop delay (a gain of 1/2 per delay, the RCP/XCP form
 *     "rate - queue / RTT", halved for a margin against the noise of g). Here
 *     n^ = n + g r, r the part of the dead time still to run: d - (now - t_on) after the
 *     activation at t_on (the limit already sent will act at t_on + d; counting g over a whole
 *     d at every window would count the same growth again), d while off. With n^ at or below
 *     L1 in mode 0 the limit only relaxes, as rate's.
 *  4. Release raised with the delay: rate's condition (mode 0 and new INVITEs/s < release x X)
 *     must hold for HOLD_LOOPS loop delays, HOLD_LOOPS (d + T_w), before the limit is lifted.
 *     A limit lifted too early costs one loop delay of unthrottled arrivals when the load comes
 *     back (the overshoot of 1); the longer that delay, the longer the server waits to be sure.
 *     While held in mode 0 the limit only relaxes; it does not bind below it.
 *
 *   OFF --mode != NORMAL, or n >= max(L1 + 1, H1 - g (d + T_w))--> ON (x from 3, probe D)
 *   ON  --window--> x from 3 (in mode 0 with n^ <= L1: x only relaxes)
 *   ON  --NORMAL, new INVITEs/s < release X for HOLD_LOOPS (d + T_w)--> OFF (oc-validity=0)
 *
 * Feedback and the client half are rate's (oc-algo="rate", the RFC 7415 3.5.1 bucket): a
 * client cannot tell rate_dyn from rate. The hysteretic detector is required (n, g and the
 * thresholds are in messages); the occupancy and delay detectors are refused.
 */
#include "ctl_int.h"

#include <math.h>

#include "osn/err.h"

#define PROBE_MAX   2.0  /* s: a feedback-delay sample not seen by then is abandoned */
#define PROBE_RATIO 1.25 /* lambda0 >= this x the limit (else D is ill-conditioned) */
#define D_WEIGHT    0.25 /* EWMA weight of a new delay sample once 4 are in */
#define HOLD_LOOPS  4.0  /* loop delays the release condition must hold (item 4) */
#define COST_TAU    10.0 /* s: memory of the CPU time per call (item 3) */

struct rate_dyn {
    struct osn__ctl_rate_base rb; /* base and the client half (rate.c) */
    bool on;
    double x; /* per-client rate in force, requests/s */
    struct osn__ctl_window_clock win;
    double t_on;  /* activation time */
    double quiet; /* since when the release condition holds; < 0: it does not */
    struct osn__ctl_seqgen seq;
    /* the feedback delay */
    double d;             /* its estimate, s */
    unsigned long nd;     /* samples in d */
    bool probing;         /* a sample is being measured */
    double t_c;           /* its activation time */
    double lambda0;       /* new INVITEs/s before it */
    double s;             /* integral of the total limit since t_c (requests) */
    unsigned long a;      /* new INVITEs since t_c */
    double h_on;          /* the limit's onset threshold of the last window (messages) */
    double busy_s, inv_s; /* decaying sums of busy time and new INVITEs (item 3) */
};

static int rate_dyn_init(struct osn_ctl *c)
{
    struct rate_dyn *r = (struct rate_dyn *)c;

    if (c->cfg.det.kind != OSN_CTL_DET_HYSTERETIC)
        return OSN_EINVAL;
    r->h_on = c->cfg.det.h1;
    r->quiet = -1;
    return osn__ctl_rate_init(c);
}

/* Item 1 of the top: one window of the probe; total is the limit advertised during it. */
static void probe(struct rate_dyn *r, double now, const struct osn__ctl_window *w, double total)
{
    const struct osn_ctl_rate_cfg *k = &r->rb.base.cfg.rate;
    double n = (double)k->n_clients, el = now - r->t_c, in, burst, d;

    r->a += w->inv;
    r->s += total * w->len;
    in = w->len > 0 ? (double)w->inv / w->len : 0;
    if (!r->on || el > PROBE_MAX || in < 0.8 * total) {
        r->probing = false; /* released, too long, or the offered load fell under the limit */
        return;
    }
    if (in > (r->lambda0 + total) / 2)
        return; /* not changed yet */
    burst = n * (floor(k->tau_factor - k->tau0_factor) + 1);
    d = ((double)r->a - r->s - burst) / (r->lambda0 - total);
    d = d < 0 ? 0 : d > el ? el : d;
    r->nd++;
    r->d += (d - r->d) * (r->nd < 4 ? 1.0 / (double)r->nd : D_WEIGHT);
    r->probing = false;
}

/* Item 3 of the top: the per-client limit from window w and the predicted queue n, or -1 (no
 * estimate). */
static double limit(const struct rate_dyn *r, const struct osn__ctl_window *w, double n)
{
    const struct osn_ctl *c = &r->rb.base;
    const struct osn_ctl_rate_cfg *k = &c->cfg.rate;
    double share = k->target, excess = n - c->cfg.det.l1, x;

    if (w->dep == 0 || w->busy <= 0 || w->inv == 0 || !(r->busy_s > 0) || !(r->inv_s > 0))
        return -1;
    if (excess > 0)
        share -= excess * (w->busy / (double)w->dep) / (2 * (r->d + k->interval));
    x = share / (r->busy_s / r->inv_s) / (double)k->n_clients;
    return x < k->min_rate ? k->min_rate : x;
}

static void estimate(struct rate_dyn *r, double now, size_t queue)
{
    struct osn_ctl *c = &r->rb.base;
    const struct osn_ctl_rate_cfg *k = &c->cfg.rate;
    const struct osn_ctl_det_cfg *det = &c->cfg.det;
    double n = (double)queue, nc = (double)k->n_clients, total, in, g, x, rest, pred;
    struct osn__ctl_window w;

    if (!osn__ctl_window_due(&r->win, &c->meter, now, k->interval, &w))
        return;
    total = r->on ? r->x * nc : INFINITY;
    if (w.len > 0) {
        double keep = exp(-w.len / COST_TAU);

        r->busy_s = r->busy_s * keep + w.busy;
        r->inv_s = r->inv_s * keep + (double)w.inv;
    }
    if (r->probing)
        probe(r, now, &w, total);
    if (!(w.len > 0))
        return;
    in = (double)w.inv / w.len;
    g = ((double)w.arr - (double)w.dep) / w.len;
    /* Item 2: the onset of the limit, lowered by the growth expected within one loop delay. */
    r->h_on = det->h1 - (g > 0 ? g : 0) * (r->d + k->interval);
    if (r->h_on < det->l1 + 1)
        r->h_on = det->l1 + 1;
    if (!r->on && c->det.mode == OSN_CTL_NORMAL && n < r->h_on)
        return;
    if (r->on && c->det.mode == OSN_CTL_NORMAL && in < k->release * total) {
        if (r->quiet < 0)
            r->quiet = now;
        if (now - r->quiet >= HOLD_LOOPS * (r->d + k->interval)) {
            r->on = false; /* RFC 7339 5.7: stop with oc-validity=0 */
            return;
        }
    } else {
        r->quiet = -1;
    }
    /* Item 3: the queue when a limit sent now acts. */
    rest = r->on ? r->d - (now - r->t_on) : r->d;
    pred = n + g * (rest > 0 ? rest : 0);
    if ((x = limit(r, &w, pred)) < 0)
        return; /* no estimate in this window: hold */
    if (r->on && c->det.mode == OSN_CTL_NORMAL && pred <= det->l1 && x < r->x)
        x = r->x;
    if (!r->on) {
        r->t_on = now;
        r->quiet = -1;
    }
    if (!r->on && w.len >= k->interval / 2 && in >= PROBE_RATIO * x * nc) {
        r->probing = true; /* item 1: a sample of D starts with this activation */
        r->t_c = now;
        r->lambda0 = in;
        r->s = 0;
        r->a = 0;
    }
    r->x = x;
    r->on = true;
}

static struct osn_ctl_verdict rate_dyn_arrival(struct osn_ctl *c, double now,
                                               const struct osn_ctl_event *ev)
{
    struct osn_ctl_verdict v = {OSN_CTL_ADMIT, 0, OSN_CTL_Q_PRIMARY};

    estimate((struct rate_dyn *)c, now, ev->queue_len);
    if (ev->kind == OSN_CTL_MSG_INVITE && c->det.mode == OSN_CTL_DISCARD &&
        c->cfg.rate.discard_reject)
        v.action = OSN_CTL_REJECT_503;
    return v;
}

static void rate_dyn_departure(struct osn_ctl *c, double now, const struct osn_ctl_event *ev)
{
    estimate((struct rate_dyn *)c, now, ev->queue_len);
}

static void rate_dyn_feedback(struct osn_ctl *c, double now, struct osn_ctl_feedback *fb)
{
    struct rate_dyn *r = (struct rate_dyn *)c;

    estimate(r, now, c->meter.n);
    fb->algo = OSN_CTL_ALGO_RATE; /* RFC 7415 3.3: the client sees a rate server */
    if (r->on) {
        fb->oc = round(r->x);
        fb->validity = c->cfg.rate.validity;
    } else {
        fb->oc = 0;
        fb->validity = 0; /* RFC 7415 3.5.1: oc-validity=0 stops throttling */
    }
    fb->seq = osn__ctl_seq_stamp(&r->seq, c->cfg.seq_base, now, fb->oc, fb->validity);
}

double osn__ctl_rate_dyn_delay(const struct osn_ctl *c)
{
    return ((const struct rate_dyn *)c)->d;
}

double osn__ctl_rate_dyn_onset(const struct osn_ctl *c)
{
    return ((const struct rate_dyn *)c)->h_on;
}

const struct osn__ctl_ops osn__ctl_rate_dyn_ops = {
        .level = "rate_limit_per_s",
        .gauge = OSN__CTL_RATE_GAUGE,
        .size = sizeof(struct rate_dyn),
        .uses_det = true,
        .init = rate_dyn_init,
        .server_on_arrival = rate_dyn_arrival,
        .server_on_departure = rate_dyn_departure,
        .server_feedback = rate_dyn_feedback,
        .client_on_feedback = osn__ctl_rate_client_feedback,
        .client_admit = osn__ctl_rate_client_admit,
        .client_level = osn__ctl_rate_client_level,
};

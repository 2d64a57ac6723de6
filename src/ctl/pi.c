/*
 * Controller "pi": PI control of the upstream node's retransmission rate (Hong, Huang, Yan;
 * docs/protocols.md 7.3). The actuator is at the client: a cap r on the rate of retransmitted
 * requests toward the server, enforced by a bucket (GCRA with T = 1/r and room for `burst`
 * back-to-back copies): INVITE copies, and with cap_noninvite the BYE and CANCEL copies as well
 * (one bucket for all: the papers cap the retransmission message rate). A copy over the cap is
 * not sent (SKIP) and its client transaction goes on, Timer B (or F) included. Originals and
 * everything else are never throttled. This deliberately departs from RFC 6357 12 ("retransmissions
 * ... are not subject to throttling"), as the Hong papers do.
 *
 *   measure  who measures                                  error
 *   RRRC     server: psi = redundant retransmissions /      e = psi0 - psi
 *            originals per interval (INVITE_RETX / INVITE
 *            arrivals), sent in feedback (algo PI, oc = psi)
 *   RTD      client: mean INVITE -> 100 Trying delay of      e = tau0 - tau
 *            the samples given in the interval
 *
 * Every control interval T_c (lazily, at the first client call after the boundary):
 *
 *   no measurement in the interval -> hold r (and e_prev)
 *   first measurement              -> e_prev = e (bumpless: no proportional kick)
 *   r = clamp(r + K_P (e - e_prev) + K_I T_c e, r_min, r_max),   e_prev = e
 *
 * Anti-windup: the velocity form integrates into the clamped output itself, so a saturated
 * interval adds nothing that must later be unwound; the first error of the other sign moves r
 * off the clamp at once. r starts at r_max (no restriction until measurements say otherwise).
 * The law itself is src/ctl/pi_law.c, which the fluid model uses too.
 */
#include "ctl_int.h"

#include <math.h>

#include "osn/err.h"

struct pi {
    struct osn_ctl base;
    /* server (RRRC) */
    struct osn__ctl_window_clock win;
    double psi; /* ratio of the last closed window */
    struct osn__ctl_seqgen seq;
    /* client */
    struct osn__ctl_oc ctx; /* RRRC: the server's psi as a stored oc */
    bool fresh;             /* RRRC: a newer psi arrived in this interval */
    double sum;             /* RTD: delay samples in this interval */
    unsigned long nsum;
    struct osn_ctl_pi_law law; /* law.out: the allowed retransmission rate r */
    double next;               /* next control boundary */
    bool started;
    struct osn__ctl_bucket b;
};

static int pi_init(struct osn_ctl *c)
{
    struct pi *p = (struct pi *)c;
    const struct osn_ctl_pi_cfg *k = &c->cfg.pi;

    if (k->measure != OSN_CTL_PI_RRRC && k->measure != OSN_CTL_PI_RTD)
        return OSN_EINVAL;
    if (!(k->interval > 0 && k->r_min >= 0 && k->r_min <= k->r_max && isfinite(k->r_max) &&
          k->burst >= 1 && k->kp >= 0 && k->ki >= 0 && k->validity > 0 && isfinite(k->target)))
        return OSN_EINVAL;
    osn_ctl_pi_law_init(&p->law, &(struct osn_ctl_pi_law_cfg){.target = k->target,
                                                              .kp = k->kp,
                                                              .ki = k->ki,
                                                              .interval = k->interval,
                                                              .lo = k->r_min,
                                                              .hi = k->r_max});
    return 0;
}

/* ---- server: the redundant-retransmission ratio ---- */

static void window(struct pi *p, double now)
{
    struct osn_ctl *c = &p->base;
    struct osn__ctl_window w;

    if (!osn__ctl_window_due(&p->win, &c->meter, now, c->cfg.pi.interval, &w))
        return;
    /* docs/protocols.md 7.3: redundant = retransmissions that matched a server transaction;
     * with cap_noninvite the BYE and CANCEL copies too, the messages the cap now covers. */
    p->psi = (double)(w.retx + (c->cfg.pi.cap_noninvite ? w.retx_noninv : 0)) /
             (double)(w.inv > 0 ? w.inv : 1);
}

static struct osn_ctl_verdict pi_arrival(struct osn_ctl *c, double now,
                                         const struct osn_ctl_event *ev)
{
    (void)ev;
    window((struct pi *)c, now);
    return (struct osn_ctl_verdict){OSN_CTL_ADMIT, 0, OSN_CTL_Q_PRIMARY};
}

static void pi_feedback(struct osn_ctl *c, double now, struct osn_ctl_feedback *fb)
{
    struct pi *p = (struct pi *)c;

    if (c->cfg.pi.measure != OSN_CTL_PI_RRRC)
        return; /* RTD: the client measures; nothing to send */
    window(p, now);
    fb->algo = OSN_CTL_ALGO_PI;
    fb->oc = p->psi;
    fb->validity = c->cfg.pi.validity;
    fb->seq = osn__ctl_seq_stamp(&p->seq, c->cfg.seq_base, now, fb->oc, fb->validity);
}

/* ---- client: the PI loop and the bucket ---- */

static void set_bucket(struct pi *p)
{
    p->b.T = p->law.out > 0 ? 1 / p->law.out : INFINITY;
    p->b.tau = (p->base.cfg.pi.burst - 1) * p->b.T; /* floor(TAU/T) + 1 = burst copies */
}

static void control(struct pi *p, double now)
{
    const struct osn_ctl_pi_cfg *k = &p->base.cfg.pi;
    double m = NAN;

    if (!p->started) {
        p->started = true;
        p->next = now + k->interval;
        p->b.LCT = now;
        set_bucket(p);
        return;
    }
    if (now < p->next)
        return;
    p->next += k->interval * floor((now - p->next) / k->interval + 1);
    if (k->measure == OSN_CTL_PI_RRRC) {
        if (p->fresh && osn__ctl_oc_live(&p->ctx, now))
            m = p->ctx.oc;
        p->fresh = false;
    } else if (p->nsum > 0) {
        m = p->sum / (double)p->nsum;
    }
    p->sum = 0;
    p->nsum = 0;
    if (isnan(m))
        return;                        /* no measurement: hold */
    osn_ctl_pi_law_update(&p->law, m); /* src/ctl/pi_law.c */
    set_bucket(p);
}

static void client_feedback(struct osn_ctl *c, double now, const struct osn_ctl_feedback *fb)
{
    struct pi *p = (struct pi *)c;

    control(p, now);
    if (c->cfg.pi.measure == OSN_CTL_PI_RRRC &&
        osn__ctl_oc_update(&p->ctx, now, fb, OSN_CTL_ALGO_PI) > 0)
        p->fresh = true;
}

static void client_delay(struct osn_ctl *c, double now, double delay)
{
    struct pi *p = (struct pi *)c;

    control(p, now);
    if (c->cfg.pi.measure == OSN_CTL_PI_RTD && delay >= 0) {
        p->sum += delay;
        p->nsum++;
    }
}

static enum osn_ctl_send client_admit(struct osn_ctl *c, double now, enum osn_ctl_msg kind)
{
    struct pi *p = (struct pi *)c;

    /* Decided before control(): a copy the cap does not cover must not move the lazy control
     * boundary, so that INVITE-only runs stay what they were. */
    if (kind == OSN_CTL_MSG_NONINV_RETX && !c->cfg.pi.cap_noninvite)
        return OSN_CTL_SEND;
    control(p, now);
    if (!osn_ctl_msg_is_retx(kind))
        return OSN_CTL_SEND; /* originals are never throttled */
    if (!(p->law.out > 0))
        return OSN_CTL_SKIP;
    return osn__ctl_bucket_admit(&p->b, now, 0) ? OSN_CTL_SEND : OSN_CTL_SKIP;
}

static double client_level(struct osn_ctl *c, double now)
{
    struct pi *p = (struct pi *)c;

    control(p, now);
    return p->law.out;
}

const struct osn__ctl_ops osn__ctl_pi_ops = {
        .level = "retrans_allowed_per_s",
        .size = sizeof(struct pi),
        .init = pi_init,
        .server_on_arrival = pi_arrival,
        .server_feedback = pi_feedback,
        .client_on_feedback = client_feedback,
        .client_admit = client_admit,
        .client_on_delay = client_delay,
        .client_level = client_level,
};

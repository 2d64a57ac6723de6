/*
 * Controller "loss": RFC 7339 loss-based overload control, both halves.
 *
 * Server half (the overloaded node). Its detector says whether it is overloaded; an estimator
 * run every loss.interval seconds says by how much. The estimator is the RFC 6357 9.2 update
 * (docs/protocols.md 5), a_new = a * rho_target / rho, on the admitted fraction a = 1 - oc/100,
 * with the offered load estimated as
 *
 *   rho = (arrivals / window) / (departures / busy time)
 *
 * that is, the message arrival rate over the service rate the server showed while busy. Below
 * saturation departures track arrivals and rho is the utilisation; in saturation the busy time
 * is the whole window and rho is offered / capacity, which the utilisation alone cannot show
 * (it sticks at 1, and the update would shed only 10% more per interval).
 *
 * Here a is the admitted fraction of new INVITEs (all other traffic follows the calls), and the
 * oc sent is a percentage of the client's whole request stream, as RFC 7339 5.3 defines it:
 * oc = (1 - a) * cat1, with cat1 the category-1 share the client's 7.2 algorithm assumes
 * (loss.cat1, the same configuration on both sides; the RFC default 80). The client then sheds
 * oc / cat1 = 1 - a of its new INVITEs, the plant is linear and one update puts the admitted
 * rate at the target. Sending oc = 100 (1 - a) instead would make the client shed 1.25 times
 * too much at 80/20, everything once oc > 80, and the update oscillates at high overload.
 *
 *   detector   estimator                      feedback in every response
 *   NORMAL     a may only grow; a = 1 -> off  oc=0;oc-validity=0;oc-seq  (RFC 7339 5.1, 5.7)
 *   OVERLOAD   a = clamp(a*target/rho)        oc=round((1-a)cat1);oc-validity=loss.validity
 *   DISCARD    same; new INVITEs also get 503 (discard_reject: the local last resort)
 *
 *   a is clamped to [1 - max_loss/100, 1] (without a floor a = 0 would never grow again) and
 *   grows at most 2x per interval, so one quiet window does not lift a heavy throttle at once.
 *   New INVITEs from clients that did not send `oc` get 503 with probability 1 - a
 *   (RFC 7339 5.10.2: the same treatment as participating clients).
 *   oc-seq is time-based (RFC 7339 4.4): 10 us units of seq_base + now, bumped when needed so
 *   that it increases whenever the content changes.
 *
 * Client half (the upstream neighbour, one object per downstream server, RFC 7339 5.4):
 *
 *   OFF --response: newer seq, validity > 0--> ON(oc, expiry = now + validity or 0.5 s)
 *   ON  --newer seq, validity > 0-----------> ON (new oc, new expiry)
 *   ON  --newer seq, validity = 0-----------> OFF (RFC 7339 5.7)
 *   ON  --now >= expiry---------------------> OFF (RFC 7339 5.4)
 *   any --seq <= stored seq-----------------> unchanged (equal: no update; smaller: stale)
 *
 * While ON, requests are throttled by the default algorithm of RFC 7339 7.2
 * (docs/protocols.md 2.4): new INVITEs and other out-of-dialog requests are category 1, in-dialog
 * requests (BYE) are category 2, and ACKs, responses and retransmissions are never throttled (RFC
 * 6357 12). A shed request gets 503 at the client (RFC 7339 5.10).
 */
#include "ctl_int.h"

#include <math.h>

#include "osn/err.h"

struct loss {
    struct osn_ctl base;
    /* server */
    double a;                         /* admitted fraction of new INVITEs, 1 - oc/100 */
    struct osn__ctl_window_clock win; /* the first window starts at the first event */
    struct osn__ctl_seqgen seq;
    /* client */
    struct osn__ctl_oc ctx;
    double cat1;          /* category-1 share in force, percent */
    double share_end;     /* end of the current share window */
    unsigned long n1, n2; /* category counts in the share window */
};

static int loss_init(struct osn_ctl *c)
{
    struct loss *l = (struct loss *)c;
    const struct osn_ctl_loss_cfg *k = &c->cfg.loss;

    if (!(k->validity > 0 && k->interval > 0 && k->target > 0 && k->max_loss >= 0 &&
          k->max_loss <= 100 && k->cat1 >= 0 && k->cat1 <= 100 && k->share_window >= 0))
        return OSN_EINVAL;
    l->a = 1;
    l->cat1 = k->cat1;
    l->share_end = k->share_window;
    return 0;
}

/* ---- server ---- */

static void estimate(struct loss *l, double now)
{
    struct osn_ctl *c = &l->base;
    const struct osn_ctl_loss_cfg *k = &c->cfg.loss;
    struct osn__ctl_window w;
    double a = l->a, rho;

    if (!osn__ctl_window_due(&l->win, &c->meter, now, k->interval, &w))
        return;
    if (c->det.mode == OSN_CTL_NORMAL && a >= 1)
        return; /* RFC 7339 5.1: not overloaded, no reduction */
    if (w.arr == 0)
        rho = 0;
    else if (w.dep > 0 && w.busy > 0)
        rho = ((double)w.arr / w.len) / ((double)w.dep / w.busy);
    else
        return; /* busy without a departure: no estimate, hold */
    /* RFC 6357 9.2 (docs/protocols.md 5): a_new = a * rho_target / rho_measured. */
    a = rho > 0 ? a * k->target / rho : 1;
    if (a > 2 * l->a)
        a = 2 * l->a;
    if (c->det.mode == OSN_CTL_NORMAL && a < l->a)
        a = l->a; /* in mode 0 the drop rate only relaxes */
    if (a > 1)
        a = 1;
    if (a < 1 - k->max_loss / 100)
        a = 1 - k->max_loss / 100;
    l->a = a;
}

/* The oc in force: percent of the client's request stream (RFC 7339 5.3) that makes its 7.2
 * algorithm shed 1 - a of the new INVITEs, in whole percent (RFC 7339 9). */
static double loss_oc(const struct loss *l)
{
    return round((1 - l->a) * l->base.cfg.loss.cat1);
}

static struct osn_ctl_verdict loss_arrival(struct osn_ctl *c, double now,
                                           const struct osn_ctl_event *ev)
{
    struct loss *l = (struct loss *)c;
    struct osn_ctl_verdict v = {OSN_CTL_ADMIT, 0, OSN_CTL_Q_PRIMARY};

    estimate(l, now);
    if (ev->kind != OSN_CTL_MSG_INVITE)
        return v;
    if (c->det.mode == OSN_CTL_DISCARD && c->cfg.loss.discard_reject)
        v.action = OSN_CTL_REJECT_503;
    else if (!ev->oc_capable && l->a < 1 && osn__ctl_u01(c) < 1 - l->a)
        v.action = OSN_CTL_REJECT_503; /* RFC 7339 5.10.2: 503 without Retry-After */
    return v;
}

static void loss_departure(struct osn_ctl *c, double now, const struct osn_ctl_event *ev)
{
    (void)ev;
    estimate((struct loss *)c, now);
}

static void loss_feedback(struct osn_ctl *c, double now, struct osn_ctl_feedback *fb)
{
    struct loss *l = (struct loss *)c;

    estimate(l, now);
    fb->algo = OSN_CTL_ALGO_LOSS;
    if (l->a < 1) {
        /* RFC 7339 5.2: updating oc SHOULD come with oc-validity. */
        fb->oc = loss_oc(l);
        fb->validity = c->cfg.loss.validity;
    } else {
        /* RFC 7339 5.1, 5.7: not overloaded -> oc=0, oc-validity=0. */
        fb->oc = 0;
        fb->validity = 0;
    }
    fb->seq = osn__ctl_seq_stamp(&l->seq, c->cfg.seq_base, now, fb->oc, fb->validity);
}

/* ---- client ---- */

static void client_feedback(struct osn_ctl *c, double now, const struct osn_ctl_feedback *fb)
{
    /* RFC 7339 5.4: copy oc and oc-seq from a newer response, restart the validity timer. */
    osn__ctl_oc_update(&((struct loss *)c)->ctx, now, fb, OSN_CTL_ALGO_LOSS);
}

/* RFC 7339 7.2 note: re-sample the category shares from counts every share_window seconds. */
static void resample(struct loss *l, double now)
{
    double win = l->base.cfg.loss.share_window;

    if (win <= 0 || now < l->share_end)
        return;
    if (l->n1 + l->n2 > 0)
        l->cat1 = 100.0 * (double)l->n1 / (double)(l->n1 + l->n2);
    l->n1 = l->n2 = 0;
    l->share_end += win * floor((now - l->share_end) / win + 1);
}

static enum osn_ctl_send client_admit(struct osn_ctl *c, double now, enum osn_ctl_msg kind)
{
    struct loss *l = (struct loss *)c;
    double cat1, oc, r;
    int category;

    if (kind == OSN_CTL_MSG_INVITE || kind == OSN_CTL_MSG_OTHER)
        category = 1;
    else if (kind == OSN_CTL_MSG_BYE)
        category = 2;
    else
        return OSN_CTL_SEND; /* RFC 6357 12: ACK, responses, retransmissions are not throttled */
    resample(l, now);
    if (category == 1)
        l->n1++;
    else
        l->n2++;
    if (!osn__ctl_oc_live(&l->ctx, now))
        return OSN_CTL_SEND; /* RFC 7339 5.5: no stored, unexpired oc -> unthrottled */
    cat1 = l->cat1;
    oc = l->ctx.oc;
    /* RFC 7339 7.2: the draw is "between 1 and 100", drop if <= the converted percentage; a
     * continuous draw in [0, 100) with "<" gives exactly that percentage for fractional ones. */
    r = 100 * osn__ctl_u01(c);
    if (oc <= cat1) {
        /* RFC 7339 7.2: reduce category 1 only, by oc/cat1*100 percent of it. */
        if (category == 1 && cat1 > 0 && r < oc / cat1 * 100)
            return OSN_CTL_SHED_503;
        return OSN_CTL_SEND;
    }
    /* RFC 7339 7.2: all of category 1, and (oc - cat1)/cat2*100 percent of category 2. */
    if (category == 1 || r < (oc - cat1) / (100 - cat1) * 100)
        return OSN_CTL_SHED_503;
    return OSN_CTL_SEND;
}

static double client_level(struct osn_ctl *c, double now)
{
    struct loss *l = (struct loss *)c;

    return osn__ctl_oc_live(&l->ctx, now) ? l->ctx.oc : 0;
}

const struct osn__ctl_ops osn__ctl_loss_ops = {
        .level = "shed_percent",
        .gauge = "percent of new requests the client half sheds toward the next hop (RFC 7339 "
                 "loss; 0 when off)",
        .level_mean = true,
        .size = sizeof(struct loss),
        .uses_det = true,
        .init = loss_init,
        .server_on_arrival = loss_arrival,
        .server_on_departure = loss_departure,
        .server_feedback = loss_feedback,
        .client_on_feedback = client_feedback,
        .client_admit = client_admit,
        .client_level = client_level,
};

/*
 * Overload-state detectors for the server halves: the hysteretic thresholds of docs/models.md
 * (Q.704-style onset, abatement and discard, docs/protocols.md section 10), an EWMA of the busy
 * fraction (occupancy) and an EWMA of the queueing delay (delay).
 *
 * All three map one measure v to the three modes with the same bi-level rule:
 *
 *   NORMAL --v >= H1--> OVERLOAD --v >= H2--> DISCARD      (NORMAL --v >= H2--> DISCARD
 *   NORMAL <--v <= L1-- OVERLOAD <--v <= L2-- DISCARD       in one step; DISCARD --v <= L1-->
 *                                                             NORMAL likewise)
 *
 *   detector     measure v                     evaluated at
 *   hysteretic   n, messages in system         policy I: arrivals (up), departures (down)
 *                                              policy II: departures only (up and down)
 *   occupancy    EWMA over windows of the      each window end (lazily, at the next event)
 *                fraction of time with n > 0
 *   delay        EWMA of the departing         departures
 *                message's queueing delay
 *
 * With unit steps in n, policy I is exactly docs/models.md's switching at the crossings H1, L1, H2,
 * L2; using >= and <= keeps it right when a caller's n jumps (batched arrivals, queued 503s).
 */
#include <math.h>
#include <string.h>

#include "osn/ctl.h"
#include "osn/err.h"

/* Windows replayed one by one after a gap; beyond this the EWMA has converged to the
 * constant busy fraction of the gap (0.7^64 < 1e-9 with the default weight). */
#define MAX_REPLAY 64

int osn_ctl_det_init(struct osn_ctl_det *d, const struct osn_ctl_det_cfg *cfg)
{
    const struct osn_ctl_det_cfg *k = cfg;

    if (!d || !k)
        return OSN_EINVAL;
    if (k->kind != OSN_CTL_DET_HYSTERETIC && k->kind != OSN_CTL_DET_OCCUPANCY &&
        k->kind != OSN_CTL_DET_DELAY)
        return OSN_EINVAL;
    /* docs/models.md: L1 < H1 < H2, L1 < L2 < H2 (h2 = INFINITY: no discard mode). */
    if (!(k->l1 >= 0 && k->l1 < k->h1 && k->h1 < k->h2 && k->l1 < k->l2 && k->l2 < k->h2))
        return OSN_EINVAL;
    if (k->policy != OSN_POLICY_I && k->policy != OSN_POLICY_II)
        return OSN_EINVAL;
    if (k->kind != OSN_CTL_DET_HYSTERETIC && !(k->alpha > 0 && k->alpha <= 1))
        return OSN_EINVAL;
    if (k->kind == OSN_CTL_DET_OCCUPANCY && !(k->interval > 0))
        return OSN_EINVAL;
    *d = (struct osn_ctl_det){0};
    d->cfg = *k;
    d->win_end = k->interval;
    return 0;
}

/* Moves the mode up (v at or over an onset) and/or down (v at or under an abatement). */
static void step(struct osn_ctl_det *d, double v, bool up, bool down)
{
    const struct osn_ctl_det_cfg *k = &d->cfg;
    enum osn_ctl_mode m = d->mode;

    d->value = v;
    if (up) {
        if (m == OSN_CTL_NORMAL && v >= k->h1)
            m = OSN_CTL_OVERLOAD; /* onset */
        if (m == OSN_CTL_OVERLOAD && v >= k->h2)
            m = OSN_CTL_DISCARD; /* discard onset */
    }
    if (down) {
        if (m == OSN_CTL_DISCARD && v <= k->l2)
            m = OSN_CTL_OVERLOAD; /* discard abatement */
        if (m == OSN_CTL_OVERLOAD && v <= k->l1)
            m = OSN_CTL_NORMAL; /* abatement */
    }
    if (m != d->mode)
        d->switches++;
    d->mode = m;
}

/* Occupancy: closes every window that ended by now, integrating the busy time. */
static void occupancy_advance(struct osn_ctl_det *d, double now)
{
    const double len = d->cfg.interval, a = d->cfg.alpha;
    int replay = 0;

    while (now >= d->win_end) {
        double u;

        if (d->n > 0 && d->win_end > d->t_last)
            d->win_busy += d->win_end - d->t_last;
        if (d->win_end > d->t_last)
            d->t_last = d->win_end;
        u = d->win_busy / len;
        d->value = d->primed ? (1 - a) * d->value + a * u : u;
        d->primed = true;
        d->win_busy = 0;
        d->win_end += len;
        step(d, d->value, true, true);
        if (++replay == MAX_REPLAY && now >= d->win_end) {
            /* A long constant gap: skip to the window holding now; value has converged. */
            d->win_end += len * floor((now - d->win_end) / len + 1);
            d->t_last = d->win_end - len;
        }
    }
    if (d->n > 0 && now > d->t_last)
        d->win_busy += now - d->t_last;
    if (now > d->t_last)
        d->t_last = now;
}

enum osn_ctl_mode osn_ctl_det_arrival(struct osn_ctl_det *d, double now, size_t n)
{
    switch (d->cfg.kind) {
    case OSN_CTL_DET_HYSTERETIC:
        /* docs/models.md policy I: 0 -> 1 when an accepted arrival makes n = H1, 1 -> 2 at H2. */
        if (d->cfg.policy == OSN_POLICY_I)
            step(d, (double)n, true, false);
        else
            d->value = (double)n;
        break;
    case OSN_CTL_DET_OCCUPANCY:
        occupancy_advance(d, now);
        d->n = n;
        break;
    case OSN_CTL_DET_DELAY:
        break;
    }
    return d->mode;
}

enum osn_ctl_mode osn_ctl_det_departure(struct osn_ctl_det *d, double now, size_t n, double wait)
{
    switch (d->cfg.kind) {
    case OSN_CTL_DET_HYSTERETIC:
        /* Policy I: 1 -> 0 when a departure makes n = L1, 2 -> 1 at L2. Policy II: both
         * directions, evaluated only here. */
        step(d, (double)n, d->cfg.policy == OSN_POLICY_II, true);
        break;
    case OSN_CTL_DET_OCCUPANCY:
        occupancy_advance(d, now);
        d->n = n;
        break;
    case OSN_CTL_DET_DELAY: {
        double a = d->cfg.alpha;
        double v = d->primed ? (1 - a) * d->value + a * wait : wait;

        d->primed = true;
        step(d, v, true, true);
        break;
    }
    }
    return d->mode;
}

const char *const osn_ctl_det_kind_names[] = {"hysteretic", "occupancy", "delay", NULL};

int osn_ctl_det_kind_parse(const char *name, enum osn_ctl_det_kind *kind)
{
    if (!name || !kind)
        return OSN_EINVAL;
    for (int i = 0; osn_ctl_det_kind_names[i]; i++) {
        if (strcmp(name, osn_ctl_det_kind_names[i]) == 0) {
            *kind = (enum osn_ctl_det_kind)i;
            return 0;
        }
    }
    return OSN_EINVAL;
}

const char *osn_ctl_det_kind_name(enum osn_ctl_det_kind k)
{
    return (unsigned)k <= OSN_CTL_DET_DELAY ? osn_ctl_det_kind_names[k] : "?";
}

const char *osn_ctl_mode_name(enum osn_ctl_mode m)
{
    switch (m) {
    case OSN_CTL_NORMAL:
        return "normal";
    case OSN_CTL_OVERLOAD:
        return "overload";
    case OSN_CTL_DISCARD:
        return "discard";
    }
    return "?";
}

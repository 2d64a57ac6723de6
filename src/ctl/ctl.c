/*
 * The controller interface of include/osn/ctl.h: defaults, the factory, the dispatching
 * wrappers, and the pieces the controllers share (load meter, RFC 7339 client context, oc-seq
 * generator).
 *
 * Every server event goes through the wrappers here, which keep the load meter (busy time and
 * message counts per window, for the loss and rate estimators) and the detector up to date, so
 * a controller's hooks only decide. Order on an arrival: the controller decides with the mode in
 * force before the message (docs/models.md: the arrival that makes n = H1 is itself accepted), then
 * the detector sees n = queue_len + 1 if the message was admitted. A 503 the caller queues as
 * work shows up in the queue_len of later events.
 */
#include "ctl_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "osn/err.h"

#define OPS(U, l) [OSN_CTL_KIND_##U] = &osn__ctl_##l##_ops,
static const struct osn__ctl_ops *const kinds[OSN_CTL_NKINDS] = {OSN_CTL_KINDS(OPS)};
#undef OPS

#define NAME(U, l) [OSN_CTL_KIND_##U] = #l,
const char *const osn_ctl_kind_names[OSN_CTL_NKINDS + 1] = {OSN_CTL_KINDS(NAME) NULL};
#undef NAME

const char *osn_ctl_kind_name(enum osn_ctl_kind k)
{
    return (unsigned)k < OSN_CTL_NKINDS ? osn_ctl_kind_names[k] : "?";
}

int osn_ctl_kind_parse(const char *name, enum osn_ctl_kind *out)
{
    for (int i = 0; name && i < OSN_CTL_NKINDS; i++)
        if (strcmp(osn_ctl_kind_names[i], name) == 0) {
            *out = (enum osn_ctl_kind)i;
            return 0;
        }
    return OSN_EINVAL;
}

const char *osn_ctl_kind_level(enum osn_ctl_kind k)
{
    return (unsigned)k < OSN_CTL_NKINDS ? kinds[k]->level : NULL;
}

const char *osn_ctl_kind_gauge(enum osn_ctl_kind k, bool *mean)
{
    const struct osn__ctl_ops *o = (unsigned)k < OSN_CTL_NKINDS ? kinds[k] : NULL;

    if (mean)
        *mean = o && o->level_mean;
    return o ? o->gauge : NULL;
}

void osn_ctl_cfg_default(struct osn_ctl_cfg *cfg)
{
    *cfg = (struct osn_ctl_cfg){0};
    cfg->det = (struct osn_ctl_det_cfg){.kind = OSN_CTL_DET_HYSTERETIC,
                                        .l1 = 20,
                                        .h1 = 40,
                                        .l2 = 60,
                                        .h2 = 80,
                                        .policy = OSN_POLICY_I,
                                        .interval = 0.1,
                                        .alpha = 0.3};
    cfg->seed = 1;
    cfg->local.reject_overload = 1.0;
    cfg->loss = (struct osn_ctl_loss_cfg){.validity = 0.5,
                                          .interval = 0.1,
                                          .target = 0.9,
                                          .max_loss = 99,
                                          .cat1 = 80,
                                          .share_window = 0,
                                          .discard_reject = true};
    cfg->rate = (struct osn_ctl_rate_cfg){.validity = 0.5,
                                          .interval = 0.1,
                                          .target = 0.9,
                                          .min_rate = 1,
                                          .release = 0.8,
                                          .n_clients = 1,
                                          .tau_factor = 4,
                                          .tau0_factor = 0,
                                          .randomize = false,
                                          .discard_reject = true};
    cfg->prsm.t1 = 0.5;
    cfg->prsm.responses = true;
    cfg->pi = (struct osn_ctl_pi_cfg){.measure = OSN_CTL_PI_RRRC,
                                      .target = 0.05,
                                      .kp = 50,
                                      .ki = 100,
                                      .interval = 1,
                                      .r_min = 0,
                                      .r_max = 1000,
                                      .burst = 1,
                                      .validity = 2};
}

int osn_ctl_new(struct osn_ctl **ctlp, const char *kind, const struct osn_ctl_cfg *cfg)
{
    enum osn_ctl_kind k;

    if (osn_ctl_kind_parse(kind, &k) != 0)
        return OSN_EINVAL;
    return osn_ctl_new_kind(ctlp, k, cfg);
}

int osn_ctl_new_kind(struct osn_ctl **ctlp, enum osn_ctl_kind kind, const struct osn_ctl_cfg *cfg)
{
    const struct osn__ctl_ops *ops;
    struct osn_ctl *c = NULL;
    int err = 0;

    if (!ctlp || (unsigned)kind >= OSN_CTL_NKINDS || !cfg)
        return OSN_EINVAL;
    ops = kinds[kind];
    c = calloc(1, ops->size);
    if (!c)
        return OSN_ENOMEM;
    c->ops = ops;
    c->kind = kind;
    c->cfg = *cfg;
    osn_rng_seed(&c->rng, cfg->seed);
    if (ops->uses_det) {
        err = osn_ctl_det_init(&c->det, &cfg->det);
        if (err)
            goto out;
    }
    if (ops->init)
        err = ops->init(c);
out:
    if (err)
        free(c);
    else
        *ctlp = c;
    return err;
}

struct osn_ctl *osn_ctl_free(struct osn_ctl *c)
{
    free(c);
    return NULL;
}

const char *osn_ctl_kind(const struct osn_ctl *c)
{
    return osn_ctl_kind_names[c->kind];
}

enum osn_ctl_kind osn_ctl_kind_of(const struct osn_ctl *c)
{
    return c->kind;
}

/* ---- load meter ---- */

static void meter_advance(struct osn__ctl_meter *m, double now)
{
    if (now > m->t_last) {
        if (m->n > 0)
            m->busy += now - m->t_last;
        m->t_last = now;
    }
}

void osn__ctl_meter_take(struct osn__ctl_meter *m, double now, struct osn__ctl_window *w)
{
    meter_advance(m, now);
    *w = (struct osn__ctl_window){.len = now - m->win_start,
                                  .busy = m->busy,
                                  .arr = m->arr,
                                  .dep = m->dep,
                                  .inv = m->inv,
                                  .retx = m->retx,
                                  .retx_noninv = m->retx_noninv};
    m->win_start = now;
    m->busy = 0;
    m->arr = m->dep = m->inv = m->retx = m->retx_noninv = 0;
}

/* ---- server half ---- */

struct osn_ctl_verdict osn_ctl_server_on_arrival(struct osn_ctl *c, double now,
                                                 const struct osn_ctl_event *ev)
{
    struct osn_ctl_verdict v = {OSN_CTL_ADMIT, 0, OSN_CTL_Q_PRIMARY};
    struct osn__ctl_meter *m = &c->meter;

    meter_advance(m, now);
    m->arr++;
    if (ev->kind == OSN_CTL_MSG_INVITE)
        m->inv++;
    else if (ev->kind == OSN_CTL_MSG_INVITE_RETX)
        m->retx++;
    else if (ev->kind == OSN_CTL_MSG_NONINV_RETX)
        m->retx_noninv++;
    if (c->ops->server_on_arrival)
        v = c->ops->server_on_arrival(c, now, ev);
    m->n = ev->queue_len + (v.action == OSN_CTL_ADMIT);
    if (c->ops->uses_det && v.action == OSN_CTL_ADMIT)
        osn_ctl_det_arrival(&c->det, now, m->n);
    return v;
}

void osn_ctl_server_on_departure(struct osn_ctl *c, double now, const struct osn_ctl_event *ev)
{
    struct osn__ctl_meter *m = &c->meter;

    meter_advance(m, now);
    m->dep++;
    m->n = ev->queue_len;
    if (c->ops->uses_det)
        osn_ctl_det_departure(&c->det, now, ev->queue_len, ev->wait);
    if (c->ops->server_on_departure)
        c->ops->server_on_departure(c, now, ev);
}

void osn_ctl_server_feedback(struct osn_ctl *c, double now, struct osn_ctl_feedback *fb)
{
    *fb = (struct osn_ctl_feedback){OSN_CTL_ALGO_NONE, 0, -1, 0};
    if (c->ops->server_feedback)
        c->ops->server_feedback(c, now, fb);
}

enum osn_ctl_queue osn_ctl_server_queue_choice(struct osn_ctl *c, double now, size_t n_primary,
                                               size_t n_secondary)
{
    if (c->ops->server_queue_choice)
        return c->ops->server_queue_choice(c, now, n_primary, n_secondary);
    return n_primary + n_secondary > 0 ? OSN_CTL_Q_PRIMARY : OSN_CTL_Q_NONE;
}

bool osn_ctl_server_retx_discard(struct osn_ctl *c, double now, double t_first, bool answered)
{
    if (c->ops->server_retx_discard)
        return c->ops->server_retx_discard(c, now, t_first, answered);
    return false;
}

enum osn_ctl_mode osn_ctl_server_mode(const struct osn_ctl *c)
{
    return c->ops->uses_det ? c->det.mode : OSN_CTL_NORMAL;
}

double osn_ctl_server_feedback_delay(const struct osn_ctl *c)
{
    return c->kind == OSN_CTL_KIND_RATE_DYN ? osn__ctl_rate_dyn_delay(c) : NAN;
}

double osn_ctl_server_limit_onset(const struct osn_ctl *c)
{
    return c->kind == OSN_CTL_KIND_RATE_DYN ? osn__ctl_rate_dyn_onset(c) : NAN;
}

struct osn_ctl_verdict osn__ctl_full_rule(const struct osn_ctl_event *ev, bool reject_when_full,
                                          unsigned retry_after)
{
    struct osn_ctl_verdict v = {OSN_CTL_ADMIT, 0, OSN_CTL_Q_PRIMARY};
    bool request = ev->kind != OSN_CTL_MSG_RESPONSE && ev->kind != OSN_CTL_MSG_RESPONSE_RETX &&
                   ev->kind != OSN_CTL_MSG_ACK;

    if (ev->buffer_full && reject_when_full && request) {
        v.action = OSN_CTL_REJECT_503;
        v.retry_after = retry_after;
    }
    return v;
}

/* ---- client half ---- */

void osn_ctl_client_on_feedback(struct osn_ctl *c, double now, const struct osn_ctl_feedback *fb)
{
    if (c->ops->client_on_feedback)
        c->ops->client_on_feedback(c, now, fb);
}

enum osn_ctl_send osn_ctl_client_admit(struct osn_ctl *c, double now, enum osn_ctl_msg kind)
{
    if (c->ops->client_admit)
        return c->ops->client_admit(c, now, kind);
    return OSN_CTL_SEND;
}

bool osn_ctl_client_retrans_allowed(struct osn_ctl *c, double now)
{
    return osn_ctl_client_admit(c, now, OSN_CTL_MSG_INVITE_RETX) == OSN_CTL_SEND;
}

void osn_ctl_client_on_delay(struct osn_ctl *c, double now, double delay)
{
    if (c->ops->client_on_delay)
        c->ops->client_on_delay(c, now, delay);
}

double osn_ctl_client_level(struct osn_ctl *c, double now)
{
    if (c->ops->client_level)
        return c->ops->client_level(c, now);
    return 0;
}

/* ---- RFC 7339 client context and oc-seq ---- */

int osn__ctl_oc_update(struct osn__ctl_oc *ctx, double now, const struct osn_ctl_feedback *fb,
                       enum osn_ctl_algo algo)
{
    if (!fb || fb->algo != algo)
        return 0;
    /* RFC 7339 5.4: equal seq -> no update; smaller -> stale (the 4.4 wrap heuristic is not
     * implemented: a time-based seq of 10 us units does not wrap in 12 digits). */
    if (ctx->has_seq && fb->seq <= ctx->seq)
        return 0;
    ctx->has_seq = true;
    ctx->seq = fb->seq;
    if (fb->validity == 0) {
        /* RFC 7339 5.7: oc-validity=0 with a higher seq stops control; oc is disregarded. */
        ctx->active = false;
        ctx->oc = 0;
        return -1;
    }
    /* RFC 7339 4.3: an absent oc-validity means 500 ms. */
    ctx->active = true;
    ctx->oc = fb->oc;
    ctx->expiry = now + (fb->validity > 0 ? fb->validity : 0.5);
    return 1;
}

bool osn__ctl_oc_live(struct osn__ctl_oc *ctx, double now)
{
    if (ctx->active && now >= ctx->expiry) {
        /* RFC 7339 5.4, 5.7: validity expired -> control off, stored oc back to default. The
         * stored seq is kept so that a late, older response cannot restart control. */
        ctx->active = false;
        ctx->oc = 0;
    }
    return ctx->active;
}

uint64_t osn__ctl_seq_stamp(struct osn__ctl_seqgen *g, double seq_base, double now, double oc,
                            double validity)
{
    double t = floor((seq_base + now) * 1e5);
    uint64_t ts = t > 0 ? (uint64_t)t : 0;
    bool changed = !g->started || oc != g->oc || validity != g->validity;
    uint64_t seq = g->started && g->last > ts ? g->last : ts;

    /* RFC 7339 4.4, 5.2: a new value needs a larger seq; the same value may repeat its seq. */
    if (g->started && changed && seq <= g->last)
        seq = g->last + 1;
    g->last = seq;
    g->oc = oc;
    g->validity = validity;
    g->started = true;
    return seq;
}

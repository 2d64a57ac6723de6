/*
 * Private interface of src/ctl: the controller vtable, the base object every controller
 * embeds first, and helpers shared by the controllers (load meter, RFC 7339 client context,
 * oc-seq generator, GCRA bucket, random draws).
 */
#ifndef OSN_CTL_INT_H
#define OSN_CTL_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "osn/ctl.h"
#include "osn/rng.h"

/* One controller kind. NULL hooks take the generic behaviour of ctl.c. */
struct osn__ctl_ops {
    const char *level; /* the trace column of client_level, NULL without one */
    /* The node's gauge of client_level: its one-line help, NULL when there is none (no level,
     * or reading it changes the controller, as pi's does); level_mean: the levels of several
     * workers average (a percent) rather than add up (a rate). */
    const char *gauge;
    bool level_mean;
    size_t size; /* bytes of the controller's struct, which starts with struct osn_ctl */
    bool uses_det;
    int (*init)(struct osn_ctl *c); /* c->cfg is set; returns 0 or OSN_EINVAL */
    struct osn_ctl_verdict (*server_on_arrival)(struct osn_ctl *c, double now,
                                                const struct osn_ctl_event *ev);
    void (*server_on_departure)(struct osn_ctl *c, double now, const struct osn_ctl_event *ev);
    void (*server_feedback)(struct osn_ctl *c, double now, struct osn_ctl_feedback *fb);
    enum osn_ctl_queue (*server_queue_choice)(struct osn_ctl *c, double now, size_t n_primary,
                                              size_t n_secondary);
    bool (*server_retx_discard)(struct osn_ctl *c, double now, double t_first, bool answered);
    void (*client_on_feedback)(struct osn_ctl *c, double now, const struct osn_ctl_feedback *fb);
    enum osn_ctl_send (*client_admit)(struct osn_ctl *c, double now, enum osn_ctl_msg kind);
    void (*client_on_delay)(struct osn_ctl *c, double now, double delay);
    double (*client_level)(struct osn_ctl *c, double now);
};

/* Arrival/departure counts and busy time since the last take (server estimators). */
struct osn__ctl_meter {
    double t_last;             /* time of the last event */
    size_t n;                  /* messages in system since t_last */
    double win_start;          /* start of the current window */
    double busy;               /* time with n > 0 in the window */
    unsigned long arr;         /* arrivals in the window (all kinds, admitted or not) */
    unsigned long dep;         /* departures in the window */
    unsigned long inv;         /* new INVITE arrivals */
    unsigned long retx;        /* retransmitted INVITE arrivals */
    unsigned long retx_noninv; /* retransmitted non-INVITE arrivals (BYE, CANCEL copies) */
};

/* One window of the meter. */
struct osn__ctl_window {
    double len, busy;
    unsigned long arr, dep, inv, retx, retx_noninv;
};

struct osn_ctl {
    const struct osn__ctl_ops *ops;
    enum osn_ctl_kind kind;
    struct osn_ctl_cfg cfg;
    struct osn_ctl_det det;
    struct osn__ctl_meter meter;
    struct osn_rng rng;
};

/* A uniform double in [0, 1) from cfg.draw or the private stream. */
static inline double osn__ctl_u01(struct osn_ctl *c)
{
    return c->cfg.draw ? c->cfg.draw(c->cfg.draw_arg) : osn_rng_u01(&c->rng);
}

/* Closes the meter's window at now and opens the next one. */
void osn__ctl_meter_take(struct osn__ctl_meter *m, double now, struct osn__ctl_window *w);

/* The window clock of an estimator that reads the meter every `interval` seconds (rate,
 * rate_dyn, loss, pi): when the current window ends. */
struct osn__ctl_window_clock {
    double next;  /* the current window's end */
    bool started; /* the first window is open */
};

/*
 * Whether a window of clock k has ended at now. If so the meter's window is taken into *w and
 * the next one ends `interval` seconds from now. The first call opens the first window only (what
 * the meter counted before it is dropped) and returns false. Inline: the server half asks it at
 * every arrival and departure, and it is one comparison but once a window.
 */
static inline bool osn__ctl_window_due(struct osn__ctl_window_clock *k, struct osn__ctl_meter *m,
                                       double now, double interval, struct osn__ctl_window *w)
{
    if (k->started && now < k->next)
        return false;
    osn__ctl_meter_take(m, now, w);
    k->next = now + interval;
    if (!k->started) {
        k->started = true;
        return false;
    }
    return true;
}

/* RFC 7339 5.4 client context for one downstream server. */
struct osn__ctl_oc {
    bool active;   /* control in effect (until expiry) */
    bool has_seq;  /* a seq has been stored */
    uint64_t seq;  /* the stored oc-seq */
    double oc;     /* the stored oc */
    double expiry; /* now >= expiry: control off */
};

/* Applies fb to ctx if it is for algo and newer than the stored seq. Returns 1 if control was
 * (re)started or updated, -1 if it was stopped (validity 0), 0 if fb was ignored. */
int osn__ctl_oc_update(struct osn__ctl_oc *ctx, double now, const struct osn_ctl_feedback *fb,
                       enum osn_ctl_algo algo);

/* True if control is in effect at now; turns it off (defaults restored) at expiry. */
bool osn__ctl_oc_live(struct osn__ctl_oc *ctx, double now);

/* Time-based oc-seq generator (RFC 7339 4.4): strictly increasing whenever the content
 * changes, never behind seq_base + now. */
struct osn__ctl_seqgen {
    uint64_t last;
    double oc, validity; /* content of the last stamp */
    bool started;
};

uint64_t osn__ctl_seq_stamp(struct osn__ctl_seqgen *g, double seq_base, double now, double oc,
                            double validity);

/* RFC 7415 3.5.1 leaky bucket (GCRA, I.371 A.2), times in s. */
struct osn__ctl_bucket {
    double T, tau, X, LCT;
};

/* Admits a request at ta if the bucket content X' <= TAU; u is the resonance-avoidance offset
 * in units of T (0 when off, RFC 7415 3.5.3). */
static inline bool osn__ctl_bucket_admit(struct osn__ctl_bucket *b, double ta, double u)
{
    double xp = b->X - (ta - b->LCT);

    if (xp > b->tau)
        return false; /* RFC 7415 3.5.1: non-conforming, X and LCT unchanged */
    b->X = (xp > 0 ? xp : 0) + b->T + (xp > 0 ? 0 : u * b->T);
    b->LCT = ta;
    return true;
}

/* The client half of rate and rate_dyn (RFC 7415 3.5.1, src/ctl/rate.c): both controllers'
 * structs start with this, so that the client hooks below serve both. */
struct osn__ctl_rate_base {
    struct osn_ctl base;
    struct osn__ctl_oc ctx;
    struct osn__ctl_bucket b;
};

void osn__ctl_rate_client_feedback(struct osn_ctl *c, double now,
                                   const struct osn_ctl_feedback *fb);
enum osn_ctl_send osn__ctl_rate_client_admit(struct osn_ctl *c, double now, enum osn_ctl_msg kind);
double osn__ctl_rate_client_level(struct osn_ctl *c, double now);

/* rate_dyn's measured feedback delay and limit onset (osn_ctl_server_feedback_delay()). */
double osn__ctl_rate_dyn_delay(const struct osn_ctl *c);
double osn__ctl_rate_dyn_onset(const struct osn_ctl *c);

/* rate's checks of cfg.rate (rate_dyn shares the configuration). */
int osn__ctl_rate_init(struct osn_ctl *c);

#define OSN__CTL_OPS_DECL(U, l) extern const struct osn__ctl_ops osn__ctl_##l##_ops;
OSN_CTL_KINDS(OSN__CTL_OPS_DECL)
#undef OSN__CTL_OPS_DECL

/* The gauge help of RFC 7415's client half, which rate and rate_dyn share. */
#define OSN__CTL_RATE_GAUGE                                                                     \
    "new INVITEs per second the client half lets through to the next hop (RFC 7415 rate; +Inf " \
    "when off)"

/* none's arrival rule, shared with prsm. */
struct osn_ctl_verdict osn__ctl_full_rule(const struct osn_ctl_event *ev, bool reject_when_full,
                                          unsigned retry_after);

#endif

/*
 * Overload controllers shared by the SIP network simulator and the real node: none, local,
 * RFC 7339 loss, RFC 7415 rate, PRSM priority scheduling and PI retransmission-rate control,
 * behind one interface, plus the overload-state detectors their server halves use.
 *
 * Clock-free: every call takes `now` (seconds, any origin, never decreasing between calls on
 * one object) and plain numbers, and returns a decision. Nothing here reads a clock, sets a
 * timer, sends a message or allocates after osn_ctl_new(); periodic work (the loss and rate
 * estimators, the PI update, validity expiry) is done lazily by the next call that finds its
 * deadline passed. The module depends on base only (arrow rule: ctl -> base).
 *
 * One object is one end of one hop's loop. It has two halves and a node uses the half that
 * matches its role:
 *
 *   upstream node (client half)                 downstream node (server half)
 *   osn_ctl_client_admit(INVITE) --SEND-------> osn_ctl_server_on_arrival() -> ADMIT | 503
 *          |  SHED_503: answer upstream             queue (PRSM: osn_ctl_server_queue_choice)
 *          |  SKIP: do not send this copy       osn_ctl_server_on_departure()
 *   osn_ctl_client_on_feedback() <--response--- osn_ctl_server_feedback() (oc, oc-seq, ...)
 *
 * A server keeps one object for itself; a client keeps one object per downstream server (the
 * RFC 7339 5.4 per-(IP, port) context), created with the same kind and configuration. Only the
 * half that is driven does anything; the other costs its memory.
 *
 * Randomness: the loss client's draws (RFC 7339 7.2), local's and the loss server's policing of
 * non-participating clients, and rate's optional resonance avoidance draw from a caller-chosen
 * stream: cfg.draw (a callback returning a uniform double in [0, 1)) if set, else a private
 * xoshiro256++ stream seeded from cfg.seed. Same seed and same calls give the same decisions.
 */
#ifndef OSN_CTL_H
#define OSN_CTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "osn/policy.h"

/* ---- messages and decisions ---- */

/* What a message is, as far as overload control cares. "Retransmission" means a copy of a
 * request the sender has sent before (client side) or that matched an existing server
 * transaction (server side, RFC 3261 17.2.3); an INVITE copy that matches nothing at the
 * server is OSN_CTL_MSG_INVITE there. */
enum osn_ctl_msg {
    OSN_CTL_MSG_INVITE,      /* new INVITE: dialog-forming, the request that gets throttled */
    OSN_CTL_MSG_INVITE_RETX, /* retransmitted INVITE */
    OSN_CTL_MSG_RESPONSE,    /* any response (never throttled, RFC 6357 12) */
    OSN_CTL_MSG_ACK,         /* ACK (never throttled: it has no response) */
    OSN_CTL_MSG_BYE,         /* BYE and other in-dialog requests */
    OSN_CTL_MSG_NONINV_RETX, /* retransmitted non-INVITE request */
    OSN_CTL_MSG_OTHER,       /* other out-of-dialog requests (OPTIONS, REGISTER, ...) */
    /* A response the server has received before for the same transaction (the downstream
     * resent it: a retransmitted request reached it, or its 2xx timer fired). Never throttled;
     * it must still be handled, as the first may have been lost upstream. */
    OSN_CTL_MSG_RESPONSE_RETX,
    OSN_CTL_MSG__COUNT
};

/* True for the two retransmission kinds. */
static inline bool osn_ctl_msg_is_retx(enum osn_ctl_msg k)
{
    return k == OSN_CTL_MSG_INVITE_RETX || k == OSN_CTL_MSG_NONINV_RETX;
}

/* The server's decision on an arriving message. */
enum osn_ctl_action {
    OSN_CTL_ADMIT,      /* process it */
    OSN_CTL_REJECT_503, /* answer 503 (cheaper than processing, but not free) */
};

/* PRSM's two queues (section 8 of docs/protocols.md); every other controller uses PRIMARY only. */
enum osn_ctl_queue {
    OSN_CTL_Q_PRIMARY,   /* originals, responses, in-dialog requests */
    OSN_CTL_Q_SECONDARY, /* retransmitted requests */
    OSN_CTL_Q_NONE,      /* queue choice: both queues are empty */
};

struct osn_ctl_verdict {
    enum osn_ctl_action action;
    unsigned retry_after;     /* Retry-After seconds on a 503; 0 = no Retry-After header */
    enum osn_ctl_queue queue; /* where an admitted message waits */
};

/* What the server half is told about an arrival or a departure. */
struct osn_ctl_event {
    enum osn_ctl_msg kind;
    size_t queue_len; /* arrival: messages in the server before this one; departure: after it */
    double wait;      /* departure: seconds the message waited before its service began */
    bool oc_capable;  /* arrival: the request's top Via carried `oc` (RFC 7339 5.1) */
    bool buffer_full; /* arrival: the buffer has no room for it (none and prsm may answer 503) */
};

/* The client half's decision on a message it is about to send downstream. */
enum osn_ctl_send {
    OSN_CTL_SEND,     /* send it */
    OSN_CTL_SHED_503, /* do not send; answer the request upstream with 503 (RFC 7339 5.10) */
    OSN_CTL_SKIP,     /* do not send this copy; the transaction goes on (pi: Timer B runs) */
};

/* ---- feedback carried in responses ---- */

enum osn_ctl_algo {
    OSN_CTL_ALGO_NONE, /* no overload parameters in the response */
    OSN_CTL_ALGO_LOSS, /* RFC 7339: oc = percent of requests to drop */
    OSN_CTL_ALGO_RATE, /* RFC 7415: oc = maximum requests per second */
    OSN_CTL_ALGO_PI,   /* redundant-retransmission ratio for the RRRC loop (a Via extension) */
};

/* The overload parameters of a response's top Via (RFC 7339 4). oc values are what the wire
 * carries (RFC 7339 9: oc-num = 1*DIGIT): whole percent and whole requests per second; the PI
 * ratio is not an RFC parameter and keeps its fraction. */
struct osn_ctl_feedback {
    enum osn_ctl_algo algo;
    double oc;       /* loss: percent 0..100; rate: requests/s; pi: ratio psi >= 0 */
    double validity; /* oc-validity in s; 0 = stop control; negative = absent (client: 0.5 s) */
    uint64_t seq;    /* oc-seq in units of 10 us: printed as "%llu.%05llu" of seq / 100000,
                        seq % 100000 (RFC 7339 9 allows 1*12DIGIT "." 1*5DIGIT) */
};

/* ---- overload detectors (server halves) ---- */

enum osn_ctl_mode {
    OSN_CTL_NORMAL = 0,   /* mode 0 of docs/models.md */
    OSN_CTL_OVERLOAD = 1, /* mode 1 */
    OSN_CTL_DISCARD = 2,  /* mode 2 */
};

enum osn_ctl_det_kind {
    OSN_CTL_DET_HYSTERETIC, /* queue length n against L1 < H1, L2 < H2 (docs/models.md); default */
    OSN_CTL_DET_OCCUPANCY,  /* EWMA of the busy fraction per window against the thresholds */
    OSN_CTL_DET_DELAY,      /* EWMA of the queueing delay of departing messages */
};

/* Thresholds apply to the detector's measure: messages (hysteretic), a utilisation in [0, 1]
 * (occupancy) or seconds (delay). Onset when the measure reaches H1 (0 -> 1) or H2 (1 -> 2, or
 * 0 -> 2), abatement when it falls to L2 (2 -> 1) or L1 (1 -> 0). Requires L1 < H1 < H2 and
 * L1 < L2 < H2; h2 = INFINITY means no discard mode. */
struct osn_ctl_det_cfg {
    enum osn_ctl_det_kind kind;
    double l1, h1, l2, h2;
    enum osn_policy policy; /* hysteretic only (osn/policy.h) */
    double interval;        /* occupancy: window length (s) */
    double alpha;           /* occupancy, delay: EWMA weight of the newest value, (0, 1] */
};

/* A detector: caller-allocated (the controllers embed one). Fields are read-only outside. */
struct osn_ctl_det {
    struct osn_ctl_det_cfg cfg;
    enum osn_ctl_mode mode;
    double value;             /* the current measure (n, EWMA utilisation or EWMA delay) */
    double t_last;            /* occupancy: time of the last event */
    double win_end, win_busy; /* occupancy: end of the current window, busy time in it */
    size_t n;                 /* occupancy: messages in system since t_last */
    bool primed;              /* delay/occupancy: the EWMA has a first value */
    unsigned long switches;   /* mode changes so far */
};

/* Checks cfg and resets d to mode NORMAL at time 0. Returns 0 or OSN_EINVAL. */
int osn_ctl_det_init(struct osn_ctl_det *d, const struct osn_ctl_det_cfg *cfg);

/* An accepted arrival left n messages in the system. Returns the mode after it. */
enum osn_ctl_mode osn_ctl_det_arrival(struct osn_ctl_det *d, double now, size_t n);

/* A departure left n messages; the departing message had waited `wait` seconds. Returns the
 * mode after it. */
enum osn_ctl_mode osn_ctl_det_departure(struct osn_ctl_det *d, double now, size_t n, double wait);

/* The detectors' names by enum value, NULL-terminated: the choices of control.detector. Past
 * the scenario loaders detectors are enums; the names serve only to read and print them. */
extern const char *const osn_ctl_det_kind_names[];

/* "hysteretic", "occupancy", "delay" -> kind; returns 0 or OSN_EINVAL. */
int osn_ctl_det_kind_parse(const char *name, enum osn_ctl_det_kind *kind);

/* The name of detector kind k, "?" when k is none of them. */
const char *osn_ctl_det_kind_name(enum osn_ctl_det_kind k);

const char *osn_ctl_mode_name(enum osn_ctl_mode m);

/* ---- configuration, one struct per controller ---- */

/* none (and prsm): admit everything; with reject_when_full, an arrival told buffer_full gets a
 * 503 instead of being dropped by the caller. */
struct osn_ctl_none_cfg {
    bool reject_when_full;
    unsigned retry_after; /* seconds; 0 = no Retry-After */
};

/* local: the server rejects new INVITEs by its own detector (RFC 6357 5 "local"). */
struct osn_ctl_local_cfg {
    double reject_overload; /* probability that a new INVITE gets 503 in mode 1 (default 1) */
    unsigned retry_after;   /* seconds; 0 = no Retry-After */
};

/* loss: RFC 7339 with the server's drop percentage from the RFC 6357 9.2 update. The server
 * sends oc = (1 - a) * cat1 for an admitted INVITE fraction a, so that a client running the
 * 7.2 algorithm with the same cat1 sheds exactly 1 - a (see src/ctl/loss.c). */
struct osn_ctl_loss_cfg {
    double validity;     /* oc-validity sent while throttling, s (default 0.5) */
    double interval;     /* server estimator period, s (default 0.1) */
    double target;       /* target offered load rho_target (default 0.9) */
    double max_loss;     /* server: largest share of new INVITEs shed, percent (default 99) */
    double cat1;         /* client: category-1 share, percent (RFC 7339 7.2 default 80) */
    double share_window; /* client: re-sample cat1 from counts every this many s; 0 = fixed */
    bool discard_reject; /* server: 503 every new INVITE in mode 2 (default true) */
};

/* rate: RFC 7415 leaky bucket at the client, target rate from the server's estimator. */
struct osn_ctl_rate_cfg {
    double validity;     /* oc-validity sent while throttling, s (default 0.5) */
    double interval;     /* server estimator period, s (default 0.1) */
    double target;       /* target utilisation rho_target (default 0.9) */
    double min_rate;     /* smallest oc sent, requests/s per client (default 1) */
    double release;      /* stop in mode 0 once the arrival rate < release * oc (default 0.8) */
    unsigned n_clients;  /* upstream neighbours sharing the rate, X / N (default 1) */
    double tau_factor;   /* client: TAU = tau_factor * T (RFC 7415 3.5.1: 4) */
    double tau0_factor;  /* client: X at activation = tau0_factor * T, 0 <= TAU0 <= TAU (0) */
    bool randomize;      /* client: RFC 7415 3.5.3 resonance avoidance (default false) */
    bool discard_reject; /* server: 503 every new INVITE in mode 2 (default true) */
};

/* prsm: two queues, originals first; drop queued retransmissions that can no longer help. */
struct osn_ctl_prsm_cfg {
    double t1; /* RFC 3261 T1, s (default 0.5): Timer B = 64 T1 */
    bool reject_when_full;
    unsigned retry_after;
    /* Responses the server has had before (OSN_CTL_MSG_RESPONSE_RETX) wait in the secondary
     * queue too (default true); false: requests only, as in the PRSM papers' single server. */
    bool responses;
};

enum osn_ctl_pi_measure {
    OSN_CTL_PI_RRRC, /* redundant retransmissions / originals, counted by the server (default) */
    OSN_CTL_PI_RTD,  /* mean INVITE -> 100 Trying delay, measured by the client */
};

/* pi: velocity-form PI on the upstream retransmission rate (docs/protocols.md 7.3). */
struct osn_ctl_pi_cfg {
    enum osn_ctl_pi_measure measure;
    double target;       /* psi0 (ratio) or tau0 (s); defaults 0.05 and 0.2 */
    double kp, ki;       /* gains: r += kp * (e - e_prev) + ki * interval * e */
    double interval;     /* control interval T_c, s (default 1) */
    double r_min, r_max; /* clamps on the allowed retransmission rate, 1/s (0, 1000) */
    double burst;        /* bucket depth in retransmissions (default 1) */
    double validity;     /* RRRC: validity of the ratio the server sends, s (default 2) */
    /* The cap covers copies of non-INVITE requests (BYE, CANCEL) too, and the server's ratio
     * counts them: the papers' cap on the retransmission *message* rate. Default false: INVITE
     * copies only, as the first pi did. */
    bool cap_noninvite;
};

struct osn_ctl_cfg {
    struct osn_ctl_det_cfg det; /* detector of the server half (local, loss, rate) */
    uint64_t seed;              /* private stream seed when draw is NULL */
    double (*draw)(void *arg);  /* optional: uniform [0, 1) source (borrowed) */
    void *draw_arg;
    double seq_base; /* added to now in oc-seq (a real node: the epoch at start) */
    struct osn_ctl_none_cfg none;
    struct osn_ctl_local_cfg local;
    struct osn_ctl_loss_cfg loss;
    struct osn_ctl_rate_cfg rate;
    struct osn_ctl_prsm_cfg prsm;
    struct osn_ctl_pi_cfg pi;
};

/* Fills every field with its default (detector: hysteretic, L1 = 20, H1 = 40, L2 = 60, H2 = 80,
 * policy I; occupancy users set their own thresholds). */
void osn_ctl_cfg_default(struct osn_ctl_cfg *cfg);

/* ---- the controller object ---- */

/*
 * The registry of controller kinds, X(ENUM_SUFFIX, name): adding a controller is its file in
 * src/ctl (its struct osn__ctl_ops osn__ctl_<name>_ops) and one line here. Scenario loaders parse
 * the name once into enum osn_ctl_kind; past them kinds are compared as numbers.
 */
#define OSN_CTL_KINDS(X) \
    X(NONE, none)        \
    X(LOCAL, local)      \
    X(LOSS, loss)        \
    X(RATE, rate)        \
    X(PRSM, prsm)        \
    X(PI, pi)            \
    X(RATE_DYN, rate_dyn)

#define OSN__CTL_KIND_ENUM(U, l) OSN_CTL_KIND_##U,
enum osn_ctl_kind { OSN_CTL_KINDS(OSN__CTL_KIND_ENUM) OSN_CTL_NKINDS };
#undef OSN__CTL_KIND_ENUM

/* The kinds' names by enum value, NULL-terminated: the choices of the control.kind key. */
extern const char *const osn_ctl_kind_names[OSN_CTL_NKINDS + 1];

/* The name of kind k ("none", "loss", ...), "?" when k is none of them. */
const char *osn_ctl_kind_name(enum osn_ctl_kind k);

/* The kind named name (exact spelling); returns 0, or OSN_EINVAL when there is none. */
int osn_ctl_kind_parse(const char *name, enum osn_ctl_kind *out);

/* The trace column of kind k's client level ("shed_percent", ...), NULL when it has none. */
const char *osn_ctl_kind_level(enum osn_ctl_kind k);

/* The one-line help of kind k's client level as a gauge (osn node's metrics), NULL when it has
 * none: no client level, or one whose reading changes the controller (pi's runs its control
 * interval). *mean (when not NULL): whether the levels of several workers average (a percent)
 * or add up (a rate). */
const char *osn_ctl_kind_gauge(enum osn_ctl_kind k, bool *mean);

struct osn_ctl;

/* Creates a controller of kind `kind` from cfg (copied; cfg->draw_arg is borrowed for the
 * object's life). Writes *ctlp only on success. Returns 0, OSN_EINVAL (unknown kind, bad
 * configuration) or OSN_ENOMEM. */
int osn_ctl_new_kind(struct osn_ctl **ctlp, enum osn_ctl_kind kind, const struct osn_ctl_cfg *cfg);

/* osn_ctl_new_kind() with the kind by name: "none", "local", "loss", "rate", "prsm", "pi" or
 * "rate_dyn". */
int osn_ctl_new(struct osn_ctl **ctlp, const char *kind, const struct osn_ctl_cfg *cfg);

/* Frees c (NULL is fine) and returns NULL. */
struct osn_ctl *osn_ctl_free(struct osn_ctl *c);

/* The kind name given to osn_ctl_new() (static string). */
const char *osn_ctl_kind(const struct osn_ctl *c);

/* The kind of c, to compare as a number (its name is for people: osn_ctl_kind()). */
enum osn_ctl_kind osn_ctl_kind_of(const struct osn_ctl *c);

/* -- server half -- */

/* Decides on an arriving message, then feeds the detector (n = queue_len + 1 if admitted). */
struct osn_ctl_verdict osn_ctl_server_on_arrival(struct osn_ctl *c, double now,
                                                 const struct osn_ctl_event *ev);

/* A message left the server (ev->queue_len after it, ev->wait its queueing delay). */
void osn_ctl_server_on_departure(struct osn_ctl *c, double now, const struct osn_ctl_event *ev);

/* Fills fb with the parameters to put in the next response's top Via (RFC 7339 5.2). */
void osn_ctl_server_feedback(struct osn_ctl *c, double now, struct osn_ctl_feedback *fb);

/* Which queue the server should serve next given both queue lengths (PRSM: primary first;
 * others: PRIMARY whenever anything waits). */
enum osn_ctl_queue osn_ctl_server_queue_choice(struct osn_ctl *c, double now, size_t n_primary,
                                               size_t n_secondary);

/* PRSM: should a queued retransmission be removed instead of served? t_first is when the
 * transaction's first copy reached the server, answered whether it has sent a response. Others:
 * always false. */
bool osn_ctl_server_retx_discard(struct osn_ctl *c, double now, double t_first, bool answered);

/* The server's overload mode (from its detector; NORMAL for none and prsm). */
enum osn_ctl_mode osn_ctl_server_mode(const struct osn_ctl *c);

/* rate_dyn: the feedback delay the server has measured (s, 0 before its first sample) and the
 * queue length at which it last would start its limit (messages; src/ctl/rate_dyn.c). Other
 * kinds: NAN. */
double osn_ctl_server_feedback_delay(const struct osn_ctl *c);
double osn_ctl_server_limit_onset(const struct osn_ctl *c);

/* -- client half -- */

/* A response from the server arrived carrying fb (RFC 7339 5.4; seq and validity rules). */
void osn_ctl_client_on_feedback(struct osn_ctl *c, double now, const struct osn_ctl_feedback *fb);

/* May this message go downstream now? loss: RFC 7339 7.2 on new INVITEs and other out-of-dialog
 * requests (category 1) and BYE (category 2), SHED_503; rate: the RFC 7415 bucket on new
 * INVITEs, SHED_503; pi: the cap on retransmissions, SKIP; ACK, responses (and, except for pi,
 * retransmissions) are always SEND, as is everything for none, local and prsm. */
enum osn_ctl_send osn_ctl_client_admit(struct osn_ctl *c, double now, enum osn_ctl_msg kind);

/* pi: may a scheduled retransmission be sent now (= client_admit(INVITE_RETX) == SEND)? */
bool osn_ctl_client_retrans_allowed(struct osn_ctl *c, double now);

/* pi RTD: one INVITE -> 100 Trying delay sample (s). Others ignore it. */
void osn_ctl_client_on_delay(struct osn_ctl *c, double now, double delay);

/* The client's control level now, for traces: loss: percent being shed (0 when off); rate: the
 * rate in force (INFINITY when off); pi: allowed retransmission rate; others 0. */
double osn_ctl_client_level(struct osn_ctl *c, double now);

/* ---- the PI law (docs/protocols.md 7.3), shared by the "pi" controller and the fluid model ----
 */

struct osn_ctl_pi_law_cfg {
    double target;   /* set point of the measurement: psi0 (ratio) or tau0 (s) */
    double kp, ki;   /* gains: out += kp * (e - e_prev) + ki * interval * e */
    double interval; /* control interval T_c, s */
    double lo, hi;   /* clamps on the output; the output starts at hi (no restriction) */
};

/* The state of one velocity-form PI loop. Clock-free: the caller hands over one measurement per
 * control interval and applies the output (a cap on a rate) itself. */
struct osn_ctl_pi_law {
    struct osn_ctl_pi_law_cfg cfg;
    double out;    /* current output, in [lo, hi] */
    double e_prev; /* error of the last measured interval */
    bool started;  /* false until the first measurement */
};

/* Starts a loop at out = cfg->hi (cfg copied). */
void osn_ctl_pi_law_init(struct osn_ctl_pi_law *law, const struct osn_ctl_pi_law_cfg *cfg);

/*
 * One control interval: e = target - measured, then
 * out = clamp(out + kp (e - e_prev) + ki interval e, lo, hi). The first measurement takes
 * e_prev = e (bumpless: no proportional kick); the clamp is the anti-windup, since the velocity
 * form integrates into the clamped output itself. A NaN measurement (nothing measured in the
 * interval) holds the output and the error. Returns the output.
 */
double osn_ctl_pi_law_update(struct osn_ctl_pi_law *law, double measured);

/*
 * Phase-margin design of the RTD loop (docs/protocols.md 7.3): plant e^{-s theta} / (mu s),
 * crossover omega_c (rad/s), phase margin pm (degrees). Sets kp = mu omega_c sin(phi), ki = mu
 * omega_c^2 cos(phi), phi = pm + omega_c theta. Returns 0, or OSN_EINVAL when phi is not below 90
 * degrees or an argument is not positive.
 */
int osn_ctl_pi_design(double mu, double omega_c, double pm_deg, double theta, double *kp,
                      double *ki);

#endif

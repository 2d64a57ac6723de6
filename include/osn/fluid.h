/*
 * Discrete-time fluid model of SIP INVITE retransmission dynamics.
 *
 * The model of docs/protocols.md section 7.2: time is cut into slots of length
 * `slot`; the INVITEs a client originates in slot m form cohort m, a mass of transactions that
 * is followed copy by copy. Copy j (j = 0 is the original) is sent at slot m + K_j with
 * K_j = round((2^j - 1) T1 / slot) (RFC 3261 17.1.1.2: Timer A starts at T1 and doubles; for an
 * INVITE it is not capped by T2), but only for the part of the cohort that has no 100 Trying
 * yet; Timer B fails what is still unanswered at K_B = round(64 T1 / slot). The server is one
 * FIFO fluid queue of capacity `rate` messages/s and `buffer` messages (loss pro rata over the
 * slot's arrivals); mass arriving in slot k waits W(k) whole slots, the slots it takes the
 * server to clear the backlog q(k) found on arrival, and the first surviving copy of a
 * transaction is answered by a 100 Trying that reaches the client d_d slots later. Later
 * copies of an answered transaction are redundant: they cost the server one unit each and are
 * absorbed (RFC 3261 17.2.1).
 *
 * Topologies: one client U and one server S ("single", infinite or finite buffer), and the
 * tandem UAC -> P1 -> P2 of section 7.2, where P1 forwards each first-served INVITE to P2 as a
 * new client transaction, processes P2's responses in its own queue and spends one work unit
 * per retransmission it sends. Optionally a PI controller (section 7.3: RRRC on the redundant
 * ratio, or RTD on the INVITE -> 100 Trying delay) caps the retransmission rate of the client
 * of the last hop (U toward S, or P1 toward P2).
 *
 * With PRSM (docs/protocols.md 8, single topology) S keeps two queues in the one buffer: the
 * primary one for every copy of a transaction none of whose earlier copies S kept (the original,
 * or a copy of one the buffer dropped), served first; the secondary one for copies of a
 * transaction S already holds. A secondary copy is served only when the primary queue is empty,
 * and by then the copy S kept has been answered, so it is removed at no cost; a full buffer drops
 * the part of the primary backlog beyond it (pro rata over the slot's primary arrivals) and then
 * gives the secondary queue what room is left, its excess dropped (the oldest copies pushed out,
 * as the simulator does). The 100 Trying delay is then the primary queue's wait alone.
 *
 * Everything is deterministic, allocation happens in osn_fluid_run() only, and a run costs
 * O(slots x (retransmissions + 1)) time.
 */
#ifndef OSN_FLUID_H
#define OSN_FLUID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* RFC 3261 allows 6 INVITE retransmissions before Timer B (7 transmissions in all). */
#define OSN_FLUID_MAX_RETX 6
#define OSN_FLUID_MAX_HOPS 2

enum osn_fluid_topology {
    OSN_FLUID_SINGLE, /* client U -> server S */
    OSN_FLUID_TANDEM, /* UAC -> P1 -> P2 (P2 answers; the UAS behind it is not modelled) */
};

/* Shape of the arrival profile (new INVITEs per second at the UAC) and of the capacity. */
enum osn_fluid_shape {
    OSN_FLUID_CONSTANT, /* base_rate throughout */
    OSN_FLUID_STEP,     /* base_rate, then step_rate from step_time on */
    OSN_FLUID_BURST,    /* base_rate, plus burst_rate during [burst_start, +burst_duration) */
    OSN_FLUID_SLOWDOWN, /* base_rate; the server's (P2's) rate x slowdown_factor in the window */
    OSN_FLUID_MMPP,     /* one path of a 2-phase MMPP's rate (the PRSM papers' bursty input) */
};

/* The fluid model's controls, named by osn_fluid_ctl_names (control.kind). */
enum osn_fluid_ctl {
    OSN_FLUID_CTL_NONE,
    OSN_FLUID_CTL_RRRC, /* redundant retransmission ratio control (GLOBECOM 2010 style) */
    OSN_FLUID_CTL_RTD,  /* round-trip (INVITE -> 100 Trying) delay control (ICC 2011 style) */
    OSN_FLUID_CTL_PRSM, /* priority scheduling at the server (docs/protocols.md 8); single only */
};

struct osn_fluid_profile {
    enum osn_fluid_shape shape;
    double base_rate;                         /* 1/s, >= 0 */
    double step_time, step_rate;              /* s, 1/s */
    double burst_start, burst_duration;       /* s */
    double burst_rate;                        /* 1/s added to base_rate during the burst */
    double slowdown_start, slowdown_duration; /* s */
    double slowdown_factor;                   /* in [0, 1]: capacity multiplier in the window */
    /* MMPP-2: the rate is mmpp_rate[i] in phase i, left at mmpp_switch[i] per s; the path
     * starts in phase 0 and is drawn from seed, so a run stays deterministic. The fluid follows
     * the phase path (the modulation), not the Poisson arrivals within a phase. */
    double mmpp_rate[2];   /* 1/s, >= 0 */
    double mmpp_switch[2]; /* 1/s, > 0: phase 0 -> 1, 1 -> 0 */
    uint64_t seed;
};

struct osn_fluid_server {
    double rate;          /* service capacity mu, messages/s, > 0 */
    double buffer;        /* messages; INFINITY for an unbounded queue */
    double delay_up;      /* s, one-way delay from this server's client to it */
    double delay_down;    /* s, one-way delay back (100 Trying) */
    double response_cost; /* tandem P1 only: work units per response from P2 (default 1) */
    double retx_cost;     /* tandem P1 only: work units per retransmission P1 sends (1) */
};

/* Velocity-form PI controller of section 7.3 (the law of include/osn/ctl.h). */
struct osn_fluid_pi_cfg {
    enum osn_fluid_ctl kind;
    double interval; /* T_c, s: the measurement and update period */
    double target;   /* psi_0 (RRRC, a ratio) or tau_0 (RTD, s) */
    double kp, ki;   /* gains: r_allow in 1/s per unit of error, and per unit error x s */
    double max_rate; /* r_max, 1/s: the cap never exceeds it; also the initial cap */
};

struct osn_fluid_cfg {
    enum osn_fluid_topology topology;
    double slot;    /* s, > 0 and <= t1 (default 0.05) */
    double horizon; /* s, >= slot */
    double t1;      /* s, RFC 3261 T1 (0.5) */
    int retx;       /* INVITE retransmissions J, 0..6: 6 per RFC 3261, 5 for SIPp */
    struct osn_fluid_profile profile;
    struct osn_fluid_server server[OSN_FLUID_MAX_HOPS]; /* [0] S or P1, [1] P2 */
    struct osn_fluid_pi_cfg control;
};

/*
 * Per-slot columns of one hop (client -> server). Flows are masses per slot (messages or
 * transactions in that slot; divide by the slot length for a rate); the time of row n is the
 * end of slot n, (n + 1) * slot.
 */
enum osn_fluid_col {
    OSN_FLUID_QUEUE,     /* server backlog at the end of the slot, messages */
    OSN_FLUID_QDELAY,    /* W at the start of the slot: FIFO wait of arriving mass, s */
    OSN_FLUID_ARRIVED,   /* work arriving at the server (all messages and work units) */
    OSN_FLUID_SERVED,    /* work served */
    OSN_FLUID_LOST,      /* work dropped by the finite buffer */
    OSN_FLUID_ORIG,      /* originals sent by the client */
    OSN_FLUID_RETX,      /* retransmissions sent, all numbers */
    OSN_FLUID_WITHHELD,  /* retransmissions due but withheld by the control cap */
    OSN_FLUID_ORIG_IN,   /* originals arriving at the server */
    OSN_FLUID_REDUNDANT, /* retransmissions arriving for transactions the server already has */
    OSN_FLUID_ANSWERED,  /* 100 Trying reaching the client (also after Timer B) */
    OSN_FLUID_DELAY_SUM, /* sum of mass x (INVITE -> 100 Trying delay, s) of those */
    OSN_FLUID_FAILED,    /* Timer B expiries at the client */
    OSN_FLUID_COMPLETED, /* transactions answered before Timer B, at their answer slot */
    OSN_FLUID_ALLOW,     /* retransmission cap r_allow, 1/s; NaN when not controlled */
    OSN_FLUID_QUEUE2,    /* PRSM: the secondary queue's part of QUEUE (copies), messages */
    OSN_FLUID_REMOVED,   /* PRSM: copies removed unserved (their call was answered) */
    OSN_FLUID_NCOLS
};

struct osn_fluid_hop_series {
    double *col[OSN_FLUID_NCOLS];         /* each of length nslots */
    double *retx[OSN_FLUID_MAX_RETX + 1]; /* retx[j]: copy j sent, j = 1..retx; [0] unused */
};

/*
 * How a run ends. A backlog that neither drains nor fails calls is a state of its own: each call
 * sent k times (original + copies) fills the capacity exactly, so the queue holds its delay and
 * the delay keeps every call at k copies (a fixed point of the slot map). Goodput is intact,
 * (k - 1)/k of the server's work is redundant, and nothing but a drop in load ends it.
 */
enum osn_fluid_state {
    OSN_FLUID_RECOVERED, /* every final queue is within one slot of its server's service */
    OSN_FLUID_STANDING,  /* a steady backlog, no Timer B expiry in the last 64 T1 (fixed point) */
    OSN_FLUID_GROWING,   /* the backlog still grows, no Timer B expiry in the last 64 T1 yet */
    OSN_FLUID_FAILING,   /* calls failed by Timer B in the last 64 T1 of the horizon */
};

struct osn_fluid_summary {
    double offered;   /* calls originated at the UAC */
    double completed; /* calls answered end to end before every Timer B, within the horizon */
    double failed;    /* calls failed by a Timer B (UAC, or P1's toward P2 in the tandem) */
    double pending;   /* offered - completed - failed: still in progress at the horizon */
    double goodput;   /* completed / horizon, 1/s */
    double final_queue[OSN_FLUID_MAX_HOPS]; /* messages, per server */
    double peak_queue[OSN_FLUID_MAX_HOPS];
    double peak_delay;          /* s, largest INVITE -> 100 Trying delay seen at the UAC */
    double retransmissions;     /* sent by every client */
    double redundant;           /* redundant retransmissions arriving at the servers */
    double lost;                /* messages dropped by the buffers */
    double mean_delay;          /* s, mean INVITE -> 100 Trying delay of the answers at the UAC */
    double removed;             /* PRSM: copies removed unserved from the secondary queue */
    bool recovered;             /* every final queue is at most one slot of its server's service */
    enum osn_fluid_state state; /* what the end of the run is (see the enum) */
};

/* What a run returns; owned by the caller, released with osn_fluid_result_free(). */
struct osn_fluid_result {
    struct osn_fluid_cfg cfg; /* the configuration that ran */
    int hops;                 /* 1 (single) or 2 (tandem) */
    long nslots;
    long k[OSN_FLUID_MAX_RETX + 1]; /* K_j in slots, k[0] = 0 */
    long kb;                        /* K_B in slots */
    struct osn_fluid_hop_series hop[OSN_FLUID_MAX_HOPS];
    double *goodput; /* end-to-end completions per slot (mass) */
    double *offered; /* new calls per slot (mass) */
    struct osn_fluid_summary sum;
};

/* Fills *cfg with the documented defaults (single server at 60 % load, no burst, no control). */
void osn_fluid_cfg_default(struct osn_fluid_cfg *cfg);

/*
 * Checks a configuration. Returns 0, or OSN_EINVAL with one line in err naming the field
 * ("slot", "server.rate", ...). err may be NULL.
 */
int osn_fluid_cfg_check(const struct osn_fluid_cfg *cfg, char *err, size_t errsize);

/* An upper estimate of the bytes osn_fluid_run() allocates for cfg (a checked configuration);
 * *ring_bytes (if not NULL) gets the part that grows with the link delays. */
double osn_fluid_memory(const struct osn_fluid_cfg *cfg, double *ring_bytes);

/*
 * Runs the model. On success *resp receives a new result (the caller frees it). Returns 0,
 * OSN_EINVAL (bad configuration, message in err), OSN_ETOOBIG (too many slots) or OSN_ENOMEM;
 * *resp is written only on success.
 */
int osn_fluid_run(struct osn_fluid_result **resp, const struct osn_fluid_cfg *cfg, char *err,
                  size_t errsize);

/* Frees a result; accepts NULL. Returns NULL. */
struct osn_fluid_result *osn_fluid_result_free(struct osn_fluid_result *res);

/*
 * The names of the topologies, shapes and controls as scenario files spell them, indexed by their
 * enum and NULL-terminated: the choices of fluid.topology, profile.shape and control.kind. Past
 * the scenario loader these are enums; the names serve only to read and to print them.
 */
extern const char *const osn_fluid_topology_names[];
extern const char *const osn_fluid_shape_names[];
extern const char *const osn_fluid_ctl_names[];

/* Name of a topology, shape, control or end state ("tandem", "burst"); "?" for none of them. */
const char *osn_fluid_topology_name(enum osn_fluid_topology t);
const char *osn_fluid_shape_name(enum osn_fluid_shape s);
const char *osn_fluid_ctl_name(enum osn_fluid_ctl c);
const char *osn_fluid_state_name(enum osn_fluid_state s);

/* The PI controller is ctl's PI law (include/osn/ctl.h, osn_ctl_pi_law_*), with
 * lo = 0 and hi = max_rate; its RTD gain design is osn_ctl_pi_design(). */

#endif

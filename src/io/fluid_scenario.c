/*
 * Fluid scenarios (include/osn/fluid_scenario.h): the table of the [fluid], [profile], [server],
 * [server p1], [server p2] and [control] keys (type, range, where each is stored, unit and help),
 * read by osn_ini_load() into a struct osn_fluid_cfg. The same table prints `osn fluid --help`'s
 * keys and docs/scenario.md, so adding a key is one line here. A key of another topology,
 * profile shape or control kind is refused by the table's when_key (a burst key in a constant
 * profile is an error, not silently ignored). The rules between keys are code below: the
 * defaults that depend on other keys (P1's rate, the control's target, gains and ceiling), the
 * old name control.algorithm, and the limits of what the model can answer; then
 * osn_fluid_cfg_check() checks the whole.
 */
#include "osn/fluid_scenario.h"

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "osn/ctl.h"
#include "osn/err.h"

/* The defaults that depend on other keys; the table's help prints them as text (STR). */
#define DEF_P1_RATE     200 /* P1 processes each INVITE and P2's answer to it */
#define DEF_RRRC_TARGET 0.1
#define DEF_RTD_TARGET  0.25 /* s; must stay below T1 - RTT */
/* psi = redundant/originals reacts to the cap with gain about 1/mu: gains tuned by runs. */
#define DEF_RRRC_KP   0.2  /* x the server's rate */
#define DEF_RRRC_KI   1.0  /* x the server's rate */
#define DEF_CROSSOVER 1.0  /* rad/s */
#define DEF_PM        45.0 /* degrees */

#define STR_(x) #x
#define STR(x)  STR_(x)

/*
 * Where the keys are stored: the model's configuration, and the inputs of the RTD gain design,
 * which only derive control.kp and control.ki and are no part of what runs.
 */
struct home {
    struct osn_fluid_cfg cfg;
    double crossover;    /* rad/s */
    double phase_margin; /* degrees */
};

typedef struct home H;

static void home_default(H *h)
{
    memset(h, 0, sizeof *h);
    osn_fluid_cfg_default(&h->cfg);
    h->crossover = DEF_CROSSOVER;
    h->phase_margin = DEF_PM;
}

/* ---- the checks of single keys that a type and a lower bound do not say ---- */

static int factor_at_most_1(void *home, const struct osn_key_origin *o, const double *v, int n,
                            char *err, size_t errsize)
{
    (void)v, (void)n;
    if (((H *)home)->cfg.profile.slowdown_factor > 1)
        return osn_ini_bad(o, err, errsize, "the capacity factor must be in [0, 1]");
    return 0;
}

static int switch_positive(void *home, const struct osn_key_origin *o, const double *v, int n,
                           char *err, size_t errsize)
{
    const double *sw = ((H *)home)->cfg.profile.mmpp_switch;
    (void)v, (void)n;
    if (!(sw[0] > 0 && sw[1] > 0))
        return osn_ini_bad(o, err, errsize, "expected two switch rates > 0 (0->1, 1->0), 1/s");
    return 0;
}

#define PROFILE_D(k, m, u, shape, h)                                                \
    {                                                                               \
        "profile", k, OSN_KEY_DOUBLE, OSN_KEY_AT(H, cfg.profile.m),                 \
                .unit = u, .when_key = "profile.shape", .when_is = shape, .help = h \
    }

/* One server: S of the single topology ([server]), or P1 or P2 of the tandem. */
#define SERVER_KEYS(sec, i, topo, who, rate_def)                                                \
    {sec,                                                                                       \
     "rate",                                                                                    \
     OSN_KEY_DOUBLE,                                                                            \
     0,                                                                                         \
     0,                                                                                         \
     true,                                                                                      \
     OSN_KEY_AT(H, cfg.server[i].rate),                                                         \
     .unit = "messages/s",                                                                      \
     .def = rate_def,                                                                           \
     .when_key = "fluid.topology",                                                              \
     .when_is = topo,                                                                           \
     .help = "the capacity of " who ", in messages (and work units) served per second"},        \
            {sec,                                                                               \
             "buffer",                                                                          \
             OSN_KEY_DOUBLE,                                                                    \
             OSN_KEY_AT(H, cfg.server[i].buffer),                                               \
             .inf = true,                                                                       \
             .unit = "messages",                                                                \
             .when_key = "fluid.topology",                                                      \
             .when_is = topo,                                                                   \
             .help = "room for messages in " who "; more are dropped pro rata over the slot's " \
                     "arrivals (inf: unbounded)"},                                              \
            {sec,                                                                               \
             "delay_up",                                                                        \
             OSN_KEY_DOUBLE,                                                                    \
             OSN_KEY_AT(H, cfg.server[i].delay_up),                                             \
             .unit = "s",                                                                       \
             .when_key = "fluid.topology",                                                      \
             .when_is = topo,                                                                   \
             .help = "one-way delay from " who "'s client to it"},                              \
    {                                                                                           \
        sec, "delay_down", OSN_KEY_DOUBLE, OSN_KEY_AT(H, cfg.server[i].delay_down),             \
                .unit = "s", .when_key = "fluid.topology", .when_is = topo,                     \
                .help = "one-way delay back from " who " (its 100 Trying)"                      \
    }

/* The tuning of the PI cap (rrrc, rtd); prsm and none have none. */
#define CONTROL_D(k, m, excl, u, d, h)                                                            \
    {                                                                                             \
        "control", k, OSN_KEY_DOUBLE, 0, 0, excl, OSN_KEY_AT(H, m),                               \
                .unit = u, .def = d, .when_key = "control.kind", .when_is = "rrrc|rtd", .help = h \
    }

static const struct osn_key_spec fluid_keys[] = {
        {"fluid", "topology", OSN_KEY_CHOICE, .choices = osn_fluid_topology_names,
         OSN_KEY_AT(H, cfg.topology),
         .help = "single: a client U and one server S; tandem: UAC -> P1 -> P2, where P1 "
                 "forwards each INVITE to P2, processes P2's answers in its own queue and pays "
                 "for its own retransmissions"},
        {"fluid", "slot", OSN_KEY_DOUBLE, 0, 0, true, OSN_KEY_AT(H, cfg.slot), .unit = "s",
         .help = "the time step, at most t1 (each slot's new INVITEs are one cohort)"},
        {"fluid", "horizon", OSN_KEY_DOUBLE, 0, 0, true, OSN_KEY_AT(H, cfg.horizon), .unit = "s",
         .help = "simulated time, at least one slot"},
        {"fluid", "t1", OSN_KEY_DOUBLE, 0, 0, true, OSN_KEY_AT(H, cfg.t1), .unit = "s",
         .help = "RFC 3261 T1: copies at 0, 1, 3, 7 ... x T1 (Timer A doubling), Timer B at 64 "
                 "T1"},
        {"fluid", "retransmissions", OSN_KEY_LONG, 0, OSN_FLUID_MAX_RETX, OSN_KEY_AT(H, cfg.retx),
         .help = "INVITE retransmissions before Timer B: 6 as RFC 3261, 5 as SIPp"},
        {"profile", "shape", OSN_KEY_CHOICE, .choices = osn_fluid_shape_names,
         OSN_KEY_AT(H, cfg.profile.shape),
         .help = "new INVITEs per second at the UAC: base_rate throughout (constant), then "
                 "step_rate (step), plus burst_rate for a while (burst), base_rate with the "
                 "server slowed down for a while (slowdown), or one path of a two-phase MMPP "
                 "(mmpp)"},
        {"profile", "base_rate", OSN_KEY_DOUBLE, OSN_KEY_AT(H, cfg.profile.base_rate),
         .unit = "calls/s", .help = "new INVITEs per second (not with mmpp: see mmpp_rates)"},
        PROFILE_D("step_time", step_time, "s", "step", "when the rate changes to step_rate"),
        PROFILE_D("step_rate", step_rate, "calls/s", "step",
                  "new INVITEs per second from step_time on"),
        PROFILE_D("burst_start", burst_start, "s", "burst", "start of the burst"),
        PROFILE_D("burst_duration", burst_duration, "s", "burst", "length of the burst"),
        PROFILE_D("burst_rate", burst_rate, "calls/s", "burst",
                  "new INVITEs per second ADDED to base_rate during the burst"),
        PROFILE_D("slowdown_start", slowdown_start, "s", "slowdown", "start of the slowdown"),
        PROFILE_D("slowdown_duration", slowdown_duration, "s", "slowdown",
                  "length of the slowdown"),
        {"profile", "slowdown_factor", OSN_KEY_DOUBLE, OSN_KEY_AT(H, cfg.profile.slowdown_factor),
         .hook = factor_at_most_1, .when_key = "profile.shape", .when_is = "slowdown",
         .help = "the capacity of S (P2 in a tandem) during the slowdown, as a fraction in "
                 "[0, 1] of its rate"},
        {"profile", "mmpp_rates", OSN_KEY_LIST, 0, 2, OSN_KEY_AT(H, cfg.profile.mmpp_rate),
         .when_key = "profile.shape", .when_is = "mmpp", .unit = "calls/s",
         .help = "R0 R1: new INVITEs per second in phase 0 and in phase 1"},
        {"profile", "mmpp_switch", OSN_KEY_LIST, 0, 2, OSN_KEY_AT(H, cfg.profile.mmpp_switch),
         .hook = switch_positive, .when_key = "profile.shape", .when_is = "mmpp", .unit = "1/s",
         .help = "S01 S10: the rates of leaving phase 0 and phase 1, > 0"},
        {"profile", "seed", OSN_KEY_LONG, 0, 0x7fffffffffffffffL, OSN_KEY_AT(H, cfg.profile.seed),
         .when_key = "profile.shape", .when_is = "mmpp",
         .help = "the seed of the phase path, which starts in phase 0 (the fluid follows one "
                 "path of the phase chain: one deterministic run per seed)"},
        SERVER_KEYS("server", 0, "single", "S", NULL),
        SERVER_KEYS("server p1", 0, "tandem", "P1", STR(DEF_P1_RATE)),
        {"server p1", "response_cost", OSN_KEY_DOUBLE, OSN_KEY_AT(H, cfg.server[0].response_cost),
         .when_key = "fluid.topology", .when_is = "tandem",
         .help = "P1's work units per response from P2"},
        {"server p1", "retx_cost", OSN_KEY_DOUBLE, OSN_KEY_AT(H, cfg.server[0].retx_cost),
         .when_key = "fluid.topology", .when_is = "tandem",
         .help = "P1's work units per retransmission it sends to P2"},
        SERVER_KEYS("server p2", 1, "tandem", "P2", NULL),
        {"control", "kind", OSN_KEY_CHOICE, .choices = osn_fluid_ctl_names,
         OSN_KEY_AT(H, cfg.control.kind),
         .help = "none; rrrc: a PI cap on the retransmission rate of the last hop's client (U "
                 "-> S, or P1 -> P2) that holds the ratio of redundant retransmissions to "
                 "originals at target; rtd: the same cap holding the INVITE -> 100 Trying delay "
                 "at target; prsm: no cap, S serves first copies first and removes the copies "
                 "of calls it holds (single topology only, no tuning keys)"},
        {"control", "algorithm", OSN_KEY_CHOICE, .choices = osn_fluid_ctl_names,
         OSN_KEY_AT(H, cfg.control.kind), .def = "kind",
         .help = "the old name of kind, read with a warning on stderr for one more release; "
                 "set with kind, it must name the same control"},
        CONTROL_D("interval", cfg.control.interval, true, "s", NULL,
                  "the control period T_c, at least one slot"),
        {"control", "target", OSN_KEY_DOUBLE, OSN_KEY_AT(H, cfg.control.target),
         .def = "rrrc " STR(DEF_RRRC_TARGET) ", rtd " STR(DEF_RTD_TARGET),
         .when_key = "control.kind", .when_is = "rrrc|rtd",
         .help = "rrrc: the redundant ratio; rtd: the delay in s, which with the round trip "
                 "must stay below t1"},
        CONTROL_D("kp", cfg.control.kp, false, NULL,
                  "rrrc " STR(DEF_RRRC_KP) " x rate; rtd designed",
                  "the proportional gain, 1/s per unit of error (rtd: from crossover and "
                  "phase_margin unless kp and ki are given)"),
        CONTROL_D("ki", cfg.control.ki, false, NULL,
                  "rrrc " STR(DEF_RRRC_KI) " x rate; rtd designed",
                  "the integral gain, 1/s per unit of error x s"),
        {"control", "crossover", OSN_KEY_DOUBLE, 0, 0, true, OSN_KEY_AT(H, crossover),
         .unit = "rad/s", .when_key = "control.kind", .when_is = "rtd",
         .help = "the gain design's crossover frequency, on the plant e^(-s theta) / (rate x s) "
                 "with theta = round trip + interval / 2 (rate: the last hop's server)"},
        {"control", "phase_margin", OSN_KEY_DOUBLE, 0, 0, true, OSN_KEY_AT(H, phase_margin),
         .unit = "degrees", .when_key = "control.kind", .when_is = "rtd",
         .help = "the gain design's phase margin"},
        CONTROL_D("max_rate", cfg.control.max_rate, true, "1/s", "the server's rate",
                  "the cap's ceiling and its value at the start (the last hop's server rate "
                  "unless given)"),
};

const struct osn_ini_schema osn_fluid_schema = {fluid_keys,
                                                sizeof fluid_keys / sizeof fluid_keys[0], NULL};

void osn_fluid_scenario_keys_print(FILE *f, bool markdown)
{
    H def;

    home_default(&def);
    osn_ini_keys_print(f, &osn_fluid_schema, &def, markdown);
}

/* One load: the collected keys, the caller's error buffer, and where a warning goes. */
struct loader {
    const struct osn_ini *ini;
    char *err;
    size_t errsize;
    char *warning; /* OSN_FLUID_WARNING_MAX bytes */
};

/* The origin of key "section.key", NULL when it was not set. */
static const struct osn_key_origin *set(const struct loader *ld, const char *key)
{
    return osn_ini_get(ld->ini, key);
}

/* The slot against T1 and the horizon: blames the key given among the two of each rule. */
static int check_time(const struct loader *ld, const struct osn_fluid_cfg *c)
{
    const struct osn_key_origin *slot = set(ld, "fluid.slot"), *t1 = set(ld, "fluid.t1"),
                                *horizon = set(ld, "fluid.horizon");

    if (c->slot > c->t1 && (slot || t1))
        return osn_ini_bad(slot ? slot : t1, ld->err, ld->errsize,
                           "the slot (%g s) must not exceed t1 = %g s", c->slot, c->t1);
    if (c->horizon < c->slot && (horizon || slot))
        return osn_ini_bad(horizon ? horizon : slot, ld->err, ld->errsize,
                           "the horizon must be at least one slot");
    if (c->horizon / c->slot > 1e8 && (horizon || slot))
        return osn_ini_bad(horizon ? horizon : slot, ld->err, ld->errsize,
                           "more than 1e8 slots of %g s", c->slot);
    return 0;
}

/*
 * [control] kind names the control in every scenario (network, node, fluid); the fluid model
 * called it algorithm until 0.1, which is still read for one release, with a warning. The table
 * reads both into the one field, so the two must agree before it does: else which one won would
 * decide, and a key of the control (control.kp) would be judged by the one that lost.
 */
static int old_name(const struct loader *ld)
{
    const struct osn_key_origin *kind = set(ld, "control.kind"),
                                *old = set(ld, "control.algorithm");
    int a, b, rc;

    if (!old)
        return 0;
    if (kind) {
        /* Both were read into the one field: which won says nothing, so parse both again. */
        if ((rc = osn_ini_choice(kind, osn_fluid_ctl_names, &a, ld->err, ld->errsize)) ||
            (rc = osn_ini_choice(old, osn_fluid_ctl_names, &b, ld->err, ld->errsize)))
            return rc;
        if (a != b)
            return osn_ini_bad(old, ld->err, ld->errsize,
                               "the old name of control.kind, which says %s (%s): keep "
                               "control.kind alone",
                               osn_fluid_ctl_names[a], kind->where);
    }
    snprintf(ld->warning, OSN_FLUID_WARNING_MAX,
             "%s: control.algorithm is the old name of control.kind (read as control.kind; "
             "rename it)",
             old->where);
    return 0;
}

/* The keys of the PI cap that depend on others: the target and the ceiling by kind and server,
 * the gains by rule of thumb (rrrc) or by the phase-margin design (rtd). */
static int control(const struct loader *ld, struct home *h)
{
    struct osn_fluid_cfg *c = &h->cfg;
    struct osn_fluid_pi_cfg *ctl = &c->control;
    const struct osn_fluid_server *srv = &c->server[c->topology == OSN_FLUID_TANDEM ? 1 : 0];
    const struct osn_key_origin *o, *kp = set(ld, "control.kp"), *ki = set(ld, "control.ki");
    const struct osn_key_origin *design = set(ld, "control.crossover");
    double gain_p = 0, gain_i = 0, theta;

    if (!design)
        design = set(ld, "control.phase_margin");
    if (ctl->kind == OSN_FLUID_CTL_PRSM && c->topology != OSN_FLUID_SINGLE) {
        o = set(ld, "control.kind");
        return osn_ini_bad(o ? o : set(ld, "control.algorithm"), ld->err, ld->errsize,
                           "prsm runs on the single topology only (fluid.topology = single)");
    }
    if (ctl->kind != OSN_FLUID_CTL_RRRC && ctl->kind != OSN_FLUID_CTL_RTD)
        return 0;
    if ((o = set(ld, "control.interval")) && ctl->interval < c->slot)
        return osn_ini_bad(o, ld->err, ld->errsize, "must be at least one slot (%g s)", c->slot);
    if (!set(ld, "control.target"))
        ctl->target = ctl->kind == OSN_FLUID_CTL_RRRC ? DEF_RRRC_TARGET : DEF_RTD_TARGET;
    if (!set(ld, "control.max_rate"))
        ctl->max_rate = srv->rate;
    if (ctl->kind == OSN_FLUID_CTL_RRRC) {
        gain_p = DEF_RRRC_KP * srv->rate;
        gain_i = DEF_RRRC_KI * srv->rate;
    } else {
        if ((kp || ki) && design)
            return osn_ini_bad(design, ld->err, ld->errsize,
                               "give either kp and ki, or crossover and phase_margin");
        theta = srv->delay_up + srv->delay_down + ctl->interval / 2;
        if (osn_ctl_pi_design(srv->rate, h->crossover, h->phase_margin, theta, &gain_p, &gain_i) !=
                    0 &&
            !(kp && ki)) {
            o = design ? design : set(ld, "control.interval");
            if (o)
                return osn_ini_bad(o, ld->err, ld->errsize,
                                   "phase margin + crossover x dead time %.3g s reaches 90 "
                                   "degrees: lower the crossover or the margin",
                                   theta);
            snprintf(ld->err, ld->errsize, "control: the default PI design is infeasible");
            return OSN_ECONFIG;
        }
    }
    if (!kp)
        ctl->kp = gain_p;
    if (!ki)
        ctl->ki = gain_i;
    if (ctl->kind == OSN_FLUID_CTL_RTD && (o = set(ld, "control.target")) &&
        ctl->target + srv->delay_up + srv->delay_down >= c->t1)
        return osn_ini_bad(o, ld->err, ld->errsize,
                           "target + round trip must stay below t1 = %g s, or the controller "
                           "aims at a delay that triggers retransmissions",
                           c->t1);
    return 0;
}

/* The rules between keys, after every key was read and checked on its own. */
static int cross_keys(const struct loader *ld, struct home *h)
{
    struct osn_fluid_cfg *c = &h->cfg;
    const struct osn_key_origin *o;
    int rc;

    if ((rc = check_time(ld, c)))
        return rc;
    if (c->profile.shape == OSN_FLUID_MMPP && (o = set(ld, "profile.base_rate")))
        return osn_ini_bad(o, ld->err, ld->errsize,
                           "an MMPP profile takes its rates from profile.mmpp_rates");
    if (c->topology == OSN_FLUID_TANDEM && !set(ld, "server p1.rate"))
        c->server[0].rate = DEF_P1_RATE;
    return control(ld, h);
}

/* The key to blame for a limit: the first of keys that was given, or NULL. */
static const struct osn_key_origin *given(const struct loader *ld, const char *const *keys)
{
    const struct osn_key_origin *o = NULL;
    for (int i = 0; keys[i] && !o; i++)
        o = osn_ini_get(ld->ini, keys[i]);
    return o;
}

/* Refuses a run outside what the model can answer: err names the key; OSN_ECONFIG. */
static int limit(const struct loader *ld, const char *const *keys, const char *fmt, double a,
                 double b)
{
    const struct osn_key_origin *o = given(ld, keys);
    char why[320];
    snprintf(why, sizeof why, fmt, a, b);
    if (o)
        return osn_ini_bad(o, ld->err, ld->errsize, "%s", why);
    snprintf(ld->err, ld->errsize, "%s", why);
    return OSN_ECONFIG;
}

/*
 * Limits of the model rather than of any one key (issue 14). The fluid model answers the mass
 * arriving in a slot after the backlog found at its start, as if the slot's own arrivals took no
 * time: a slot of arrivals that takes longer than T1 to serve makes its delays wrong by more
 * than T1, and beyond that the answers are wrong in kind (base_rate = 1e6 on a 100 msg/s server
 * once counted every INVITE of the first slot as answered, goodput 416.7/s). And the run
 * allocates a ring as long as the link delays: refuse what the machine cannot hold.
 */
static int check_limits(const struct loader *ld, const struct osn_fluid_cfg *c)
{
    static const char *const rates[] = {"profile.base_rate",
                                        "profile.burst_rate",
                                        "profile.step_rate",
                                        "server.rate",
                                        "server p1.rate",
                                        "fluid.slot",
                                        NULL};
    static const char *const delays[] = {"server.delay_up", "server p1.delay_up",
                                         "server p2.delay_up", NULL};
    static const char *const down[] = {"server.delay_down", "server p1.delay_down",
                                       "server p2.delay_down"};
    static const char *const size[] = {"fluid.horizon", "fluid.slot", NULL};
    const struct osn_fluid_profile *p = &c->profile;
    double peak = fmax(p->base_rate, p->shape == OSN_FLUID_STEP ? p->step_rate : 0);
    double ring, bytes, phys;
    bool by_extra = p->shape == OSN_FLUID_BURST  ? p->burst_rate > p->base_rate
                    : p->shape == OSN_FLUID_STEP ? p->step_rate > p->base_rate
                                                 : false;

    if (p->shape == OSN_FLUID_BURST)
        peak = fmax(peak, p->base_rate + p->burst_rate);
    if (p->shape == OSN_FLUID_MMPP)
        peak = fmax(p->mmpp_rate[0], p->mmpp_rate[1]);
    if (!(peak / c->server[0].rate * c->slot <= c->t1))
        return limit(ld,
                     p->shape == OSN_FLUID_MMPP
                             ? (const char *const[]){"profile.mmpp_rates", "fluid.slot", NULL}
                     : by_extra ? rates + (p->shape == OSN_FLUID_STEP ? 2 : 1)
                                : rates,
                     "a slot of arrivals at %g/s takes longer than T1 to serve (the fluid "
                     "model's answers would be wrong): keep rate x slot / server rate <= t1 "
                     "(at most %g/s here), or lower fluid.slot",
                     peak, c->server[0].rate * c->t1 / c->slot);
    for (int h = 0; h < (c->topology == OSN_FLUID_TANDEM ? 2 : 1); h++) {
        const struct osn_fluid_server *sv = &c->server[h];
        int i = c->topology == OSN_FLUID_TANDEM ? 1 + h : 0;
        bool up = !(sv->delay_up <= sv->delay_down);
        /* The ring grows with the uplink delay (5.5 GB at 1e6 s): past the horizon nothing
         * sent could reach the server within the run. */
        if (!(sv->delay_up <= c->horizon) || !(sv->delay_down <= c->horizon))
            return limit(ld, (const char *const[]){up ? delays[i] : down[i], NULL},
                         "a link delay of %g s is longer than the horizon (%g s): nothing "
                         "sent would come back within the run",
                         up ? sv->delay_up : sv->delay_down, c->horizon);
    }
    bytes = osn_fluid_memory(c, &ring);
    phys = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
    if (phys > 0 && bytes > phys / 2)
        return limit(ld, ring > bytes / 2 ? delays : size,
                     "the run needs about %.3g GB, more than half of this machine's %.3g GB",
                     bytes / 1e9, phys / 1e9);
    return 0;
}

int osn_fluid_scenario_load(struct osn_fluid_scenario *sc, const char *path,
                            const char *const *sets, int nsets, char *err, size_t errsize)
{
    struct osn_fluid_scenario *tmp;
    struct loader ld;
    struct home h;
    char why[256];
    int rc;

    if (err && errsize)
        err[0] = '\0';
    if (!sc)
        return OSN_EINVAL;
    tmp = calloc(1, sizeof *tmp); /* the collected keys are large: keep them off the stack */
    if (!tmp)
        return OSN_ENOMEM;
    rc = osn_ini_collect(&tmp->ini, path, sets, nsets, &osn_fluid_schema, err, errsize);
    if (rc)
        goto out;
    ld = (struct loader){&tmp->ini, err, errsize, tmp->warning};
    home_default(&h);
    if ((rc = old_name(&ld)) ||
        (rc = osn_ini_load(&tmp->ini, &osn_fluid_schema, &h, err, errsize)) ||
        (rc = cross_keys(&ld, &h)))
        goto out;
    tmp->cfg = h.cfg;
    if (osn_fluid_cfg_check(&tmp->cfg, why, sizeof why) == 0 && (rc = check_limits(&ld, &tmp->cfg)))
        goto out;
    if (osn_fluid_cfg_check(&tmp->cfg, why, sizeof why) != 0) {
        /* The checks above should catch everything; this is the safety net. */
        if (err && errsize)
            snprintf(err, errsize, "%s: %s", path ? path : "(defaults)", why);
        rc = OSN_ECONFIG;
        goto out;
    }
    *sc = *tmp; /* the keys move to *sc */
out:
    if (rc)
        osn_ini_free(&tmp->ini);
    free(tmp);
    return rc;
}

void osn_fluid_scenario_release(struct osn_fluid_scenario *sc)
{
    if (sc)
        osn_ini_free(&sc->ini);
}

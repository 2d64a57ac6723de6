/*
 * Network scenarios (include/osn/net_scenario.h): the table of the network sections' keys (type,
 * range, where each is stored, unit and help), read by osn_ini_load() into a struct
 * osn_net_cfg. The same table prints `osn sim --help`'s keys, docs/scenario.md and the resolved
 * scenario of the result files, so adding a key is one line here. The rules between keys are
 * code below; osn_net_check() then checks the combination, and a complaint is mapped back to
 * where its key was set.
 */
#include "osn/net_scenario.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "io_int.h"
#include "osn/ctl.h"
#include "osn/err.h"
#include "osn/node_scenario.h"

typedef struct osn_net_cfg C;

static const char *const topologies[] = {"collapse", "tandem", "fanin", "fanout",
                                         "tree",     "mesh",   NULL};
static const char *const processes[] = {"poisson", "mmpp", "profile", "bulk", NULL};
static const char *const bulk_gaps[] = {"exp", "det", NULL};
static const char *const cost_laws[] = {"det", "exp", NULL};
static const char *const retry_laws[] = {"exp", "det", "uniform", "lognormal", NULL};
static const char *const patience_laws[] = {"none", "exp", "det", "lognormal", NULL};
/* As enum osn_uas_ring_law. */
static const char *const ring_laws[] = {"none", "det", "exp", NULL};
static const char *const client_modes[] = {"rfc", "sipp", NULL};
static const char *const pi_measures[] = {"rrrc", "rtd", NULL};
static const char *const roles[] = {"proxy", "uas", NULL};
/* As enum osn_net_ctl_at. */
static const char *const ctl_ats[] = {"core", "edge", "both", NULL};

/* ---- the keys stored in more than one place, or in a derived form ---- */

/* [control] policy: "1" and "2" are I and II (osn__policy_names). */
static int fold_policy(void *cfg, const struct osn_key_origin *o, const double *v, int n, char *err,
                       size_t errsize)
{
    C *c = cfg;
    (void)o, (void)v, (void)n, (void)err, (void)errsize;
    c->ctl.det.policy = (enum osn_policy)(c->ctl.det.policy % 2);
    return 0;
}

static int mmpp_pair(const struct osn_key_origin *o, int n, const char *what, char *err,
                     size_t errsize)
{
    return n == 2 ? 0 : osn_ini_bad(o, err, errsize, "expected two %s", what);
}

static int set_mmpp_rates(void *cfg, const struct osn_key_origin *o, const double *v, int n,
                          char *err, size_t errsize)
{
    C *c = cfg;
    int rc = mmpp_pair(o, n, "rates (phase 0, phase 1)", err, errsize);
    if (!rc)
        memcpy(c->src.mmpp_rate, v, sizeof c->src.mmpp_rate);
    return rc;
}

static int set_mmpp_switch(void *cfg, const struct osn_key_origin *o, const double *v, int n,
                           char *err, size_t errsize)
{
    C *c = cfg;
    int rc = mmpp_pair(o, n, "switch rates (0->1, 1->0)", err, errsize);
    if (!rc)
        memcpy(c->src.mmpp_switch, v, sizeof c->src.mmpp_switch);
    return rc;
}

static int get_mmpp_rates(const void *cfg, double *v, int max)
{
    const C *c = cfg;
    for (int i = 0; i < 2 && i < max; i++)
        v[i] = c->src.mmpp_rate[i];
    return max < 2 ? max : 2;
}

static int get_mmpp_switch(const void *cfg, double *v, int max)
{
    const C *c = cfg;
    for (int i = 0; i < 2 && i < max; i++)
        v[i] = c->src.mmpp_switch[i];
    return max < 2 ? max : 2;
}

static int set_steps(void *cfg, const struct osn_key_origin *o, const double *v, int n, char *err,
                     size_t errsize)
{
    C *c = cfg;
    if (n % 2) {
        c->src.nsteps = 0;
        return osn_ini_bad(o, err, errsize, "expected pairs 'time rate, time rate, ...'");
    }
    for (int i = 0; i < n / 2; i++) {
        c->src.step_t[i] = v[2 * i];
        c->src.step_rate[i] = v[2 * i + 1];
    }
    c->src.nsteps = n / 2;
    return 0;
}

static int get_steps(const void *cfg, double *v, int max)
{
    const C *c = cfg;
    int n = 0;
    for (int i = 0; i < c->src.nsteps && n + 1 < max; i++) {
        v[n++] = c->src.step_t[i];
        v[n++] = c->src.step_rate[i];
    }
    return n;
}

/* source.shares: each source's share of the rate (checked against net.edges by osn_net_check,
 * which names the key), into an array allocated for the scenario (the configuration being read
 * owns it: osn_net_cfg_arrays_free). */
static int set_shares(void *cfg, const struct osn_key_origin *o, const double *v, int n, char *err,
                      size_t errsize)
{
    C *c = cfg;
    for (int i = 0; i < n; i++)
        if (!(v[i] > 0 && isfinite(v[i])))
            return osn_ini_bad(o, err, errsize, "'%g' is not a share (a number > 0)", v[i]);
    double *share = malloc((size_t)(n ? n : 1) * sizeof *share);
    if (!share)
        return osn_ini_bad(o, err, errsize, "out of memory for %d shares", n);
    memcpy(share, v, (size_t)n * sizeof *v);
    free(c->src.share);
    c->src.share = share;
    c->src.nshares = n;
    return 0;
}

static int get_shares(const void *cfg, double *v, int max)
{
    const C *c = cfg;
    int n = max < c->src.nshares ? max : c->src.nshares;
    for (int i = 0; i < n; i++)
        v[i] = c->src.share[i];
    return n;
}

/* [server edge] next_hop_weights: a fanout edge's weight of each core, whole numbers. */
static int set_weights(void *cfg, const struct osn_key_origin *o, const double *v, int n, char *err,
                       size_t errsize)
{
    C *c = cfg;
    for (int i = 0; i < n; i++)
        if (!(v[i] >= 1 && v[i] <= 1000 && v[i] == floor(v[i])))
            return osn_ini_bad(o, err, errsize, "'%g' is not a weight (a whole number 1..1000)",
                               v[i]);
    for (int i = 0; i < OSN_NET_MAX_CORES; i++)
        c->core_weight[i] = i < n ? (int)v[i] : 1;
    c->core_weights_given = n;
    return 0;
}

static int get_weights(const void *cfg, double *v, int max)
{
    const C *c = cfg;
    int n = max < c->cores ? max : c->cores;
    for (int i = 0; i < n; i++)
        v[i] = c->core_weight[i];
    return n;
}

/* [element NAME] next_hop_weights: whole numbers, one per next hop (checked by the loader). */
static int set_topo_weights(void *cfg, const struct osn_key_origin *o, const double *v, int n,
                            char *err, size_t errsize)
{
    C *c = cfg;
    for (int i = 0; i < n; i++)
        if (!(v[i] >= 1 && v[i] <= 1000 && v[i] == floor(v[i])))
            return osn_ini_bad(o, err, errsize, "'%g' is not a weight (a whole number 1..1000)",
                               v[i]);
    memcpy(c->topo.weight, v, (size_t)n * sizeof *v);
    c->topo.nweights = n;
    return 0;
}

static int get_topo_weights(const void *cfg, double *v, int max)
{
    const C *c = cfg;
    int n = max < c->topo.nweights ? max : c->topo.nweights;
    memcpy(v, c->topo.weight, (size_t)n * sizeof *v);
    return n;
}

/* control.target, validity and interval are the loss and the rate controllers' both. */
static int share_target(void *cfg, const struct osn_key_origin *o, const double *v, int n,
                        char *err, size_t errsize)
{
    C *c = cfg;
    (void)o, (void)v, (void)n, (void)err, (void)errsize;
    c->ctl.rate.target = c->ctl.loss.target;
    return 0;
}

static int share_validity(void *cfg, const struct osn_key_origin *o, const double *v, int n,
                          char *err, size_t errsize)
{
    C *c = cfg;
    (void)o, (void)v, (void)n, (void)err, (void)errsize;
    c->ctl.rate.validity = c->ctl.loss.validity;
    return 0;
}

static int share_interval(void *cfg, const struct osn_key_origin *o, const double *v, int n,
                          char *err, size_t errsize)
{
    C *c = cfg;
    (void)o, (void)v, (void)n, (void)err, (void)errsize;
    c->ctl.rate.interval = c->ctl.loss.interval;
    return 0;
}

/* retry_after: none, local and prsm answer 503 with it. */
static int share_retry(void *cfg, const struct osn_key_origin *o, const double *v, int n, char *err,
                       size_t errsize)
{
    C *c = cfg;
    (void)o, (void)v, (void)n, (void)err, (void)errsize;
    c->ctl.local.retry_after = c->ctl.prsm.retry_after = c->ctl.none.retry_after;
    return 0;
}

static int share_full(void *cfg, const struct osn_key_origin *o, const double *v, int n, char *err,
                      size_t errsize)
{
    C *c = cfg;
    (void)o, (void)v, (void)n, (void)err, (void)errsize;
    c->ctl.prsm.reject_when_full = c->ctl.none.reject_when_full;
    return 0;
}

#define COST(sec, m, k, kind, what, fam)                                            \
    {                                                                               \
        sec, "cost_" k, OSN_KEY_DOUBLE, OSN_KEY_AT(C, m.cost[OSN_NET_K_##kind]),    \
                .unit = "CPU s",                                                    \
                .help = "CPU time of " what                                         \
                        " (0: handled at once, outside the queue and the control)", \
                .family = fam                                                       \
    }

/* Core defaults 1, 0.5, 0.3, 0.3, 0.5, 0.3 ms (capacity 370 calls/s), edge and UAS 20x less:
 * capacity = 1 / (invite + ack + bye + n_resp * response), n_resp = 3 at the core, 4 at an
 * edge. */
#define SERVER_KEYS_F(sec, m, fam)                                                              \
    COST(sec, m, "invite", INVITE, "a new INVITE", fam),                                        \
            COST(sec, m, "retrans", RETX, "a retransmitted request absorbed", fam),             \
            COST(sec, m, "response", RESP, "a response", fam),                                  \
            COST(sec, m, "ack", ACK, "an ACK", fam), COST(sec, m, "bye", BYE, "a BYE", fam),    \
            COST(sec, m, "reject", REJECT, "a new INVITE answered 503 by the control", fam),    \
            {sec,                                                                               \
             "cost_cancel",                                                                     \
             OSN_KEY_DOUBLE,                                                                    \
             OSN_KEY_AT(C, m.cost[OSN_NET_K_CANCEL]),                                           \
             .unit = "CPU s",                                                                   \
             .def = "cost_bye",                                                                 \
             .help = "CPU time of a new CANCEL (0: handled at once, outside the queue and the " \
                     "control)",                                                                \
             .family = fam},                                                                    \
            {sec,                                                                               \
             "cost_law",                                                                        \
             OSN_KEY_CHOICE,                                                                    \
             .choices = cost_laws,                                                              \
             OSN_KEY_AT(C, m.exp_cost),                                                         \
             .help = "the costs are constant (det) or exponential with those means (exp)",      \
             .family = fam},                                                                    \
            {sec,                                                                               \
             "buffer",                                                                          \
             OSN_KEY_LONG,                                                                      \
             1,                                                                                 \
             100000000,                                                                         \
             OSN_KEY_AT(C, m.buffer),                                                           \
             .unit = "messages",                                                                \
             .help = "messages in the server at most (queue and in service); more are lost",    \
             .family = fam},                                                                    \
            {sec,                                                                               \
             "outage_start",                                                                    \
             OSN_KEY_DOUBLE,                                                                    \
             OSN_KEY_AT(C, m.outage_start),                                                     \
             .unit = "s",                                                                       \
             .help = "a scripted outage from this time on: the server is cut off the network, " \
                     "every message reaching it lost (what it holds goes on)",                  \
             .family = fam},                                                                    \
            {sec,                                                                               \
             "slowdown_start",                                                                  \
             OSN_KEY_DOUBLE,                                                                    \
             OSN_KEY_AT(C, m.slowdown_start),                                                   \
             .unit = "s",                                                                       \
             .help = "a scripted slowdown from this time on: the server works at "              \
                     "slowdown_factor of its speed (each message's cost takes 1 / factor as "   \
                     "long)",                                                                   \
             .family = fam},                                                                    \
            {sec,                                                                               \
             "slowdown_end",                                                                    \
             OSN_KEY_DOUBLE,                                                                    \
             OSN_KEY_AT(C, m.slowdown_end),                                                     \
             .unit = "s",                                                                       \
             .inf = true,                                                                       \
             .help = "end of the slowdown (inf: for good); none when not after slowdown_start", \
             .family = fam},                                                                    \
            {sec,                                                                               \
             "slowdown_factor",                                                                 \
             OSN_KEY_DOUBLE,                                                                    \
             0,                                                                                 \
             0,                                                                                 \
             true,                                                                              \
             OSN_KEY_AT(C, m.slowdown_factor),                                                  \
             .help = "the server's speed during the slowdown, a fraction in (0, 1]",            \
             .family = fam},                                                                    \
    {                                                                                           \
        sec, "outage_end", OSN_KEY_DOUBLE, OSN_KEY_AT(C, m.outage_end),                         \
                .unit = "s", .inf = true,                                                       \
                .help = "end of the outage (inf: for good); none when not after outage_start",  \
                .family = fam                                                                   \
    }

#define SERVER_KEYS(sec, m) SERVER_KEYS_F(sec, m, 0)

#define LINK_KEYS(sec, m)                                                                         \
    {sec, "delay", OSN_KEY_DOUBLE, OSN_KEY_AT(C, m.delay), .unit = "s", .help = "one-way delay"}, \
    {                                                                                             \
        sec, "loss", OSN_KEY_DOUBLE, OSN_KEY_AT(C, m.loss),                                       \
                .help = "probability that a message is lost, in [0, 1)"                           \
    }

#define CTL_D(k, m, excl, u, h)                                                              \
    {                                                                                        \
        "control", k, OSN_KEY_DOUBLE, 0, 0, excl, OSN_KEY_AT(C, ctl.m), .unit = u, .help = h \
    }

/* Proxy levels of a tree at most: a call crosses levels + 1 hops, 8 at most (src/sim/net_int.h,
 * MAXHOP). */
#define MAXLEVELS 7

static const struct osn_key_spec net_keys[] = {
        {"net", "topology", OSN_KEY_CHOICE, .choices = topologies, OSN_KEY_AT(C, topology),
         .help = "collapse: UAC, edge, core, UAS; tandem: a mid proxy (edge costs) before the "
                 "core; fanin: `edges` edge proxies, each with its own source, into one core; "
                 "fanout: `edges` edges, each forwarding to every one of `cores` cores (one "
                 "edge: a fan-out, two: a mesh); tree: `levels` levels of proxies, each with "
                 "`fanout` children, a source at each leaf; mesh: `regions` regions of `edges` "
                 "edges and a core each, every edge choosing among all the cores"},
        {"net", "edges", OSN_KEY_LONG, 1, OSN_NET_MAX_EDGES, OSN_KEY_AT(C, edges),
         .help = "edge proxies of a fanin or fanout, or of each region of a mesh (each source "
                 "offers rate / edges, or its source.shares)"},
        {"net", "cores", OSN_KEY_LONG, 2, OSN_NET_MAX_CORES, OSN_KEY_AT(C, cores),
         .when_key = "net.topology", .when_is = "fanout",
         .help = "cores of a fanout: [server core] gives the first's costs, [server core2] .. "
                 "[server coreN] each of the others' (one section per core, no more, no less)"},
        {"net", "levels", OSN_KEY_LONG, 2, MAXLEVELS, OSN_KEY_AT(C, levels),
         .when_key = "net.topology", .when_is = "tree",
         .help = "proxy levels of a tree, the core one of them (2: a fanin of `fanout` edges); "
                 "a call crosses levels + 1 hops, 8 at most"},
        {"net", "fanout", OSN_KEY_LONG, 1, OSN_NET_MAX_EDGES, OSN_KEY_AT(C, fanout),
         .when_key = "net.topology", .when_is = "tree",
         .help = "children of each proxy of a tree above the leaves: fanout^(levels - 1) leaf "
                 "proxies, each with a source of its own (rate / leaves each, or source.shares)"},
        {"net", "regions", OSN_KEY_LONG, 1, OSN_NET_MAX_CORES, OSN_KEY_AT(C, regions),
         .when_key = "net.topology", .when_is = "mesh",
         .help = "regions of a mesh, each with `edges` edges (a source each) and a core of its "
                 "own ([server core]'s costs); 1: the fanin of `edges` edges"},
        {"net", "local_share", OSN_KEY_DOUBLE, OSN_KEY_AT(C, local_share),
         .when_key = "net.topology", .when_is = "mesh",
         .help = "share of a mesh edge's calls offered to its own region's core (0 .. 1, "
                 "weights of smooth round-robin in thousandths); the other cores share the "
                 "rest equally"},
        {"net", "time", OSN_KEY_DOUBLE, 0, 0, true, OSN_KEY_AT(C, time), .unit = "s",
         .help = "observation window, after the warm-up"},
        {"net", "warmup", OSN_KEY_DOUBLE, OSN_KEY_AT(C, warmup), .unit = "s",
         .help = "warm-up, not measured (>= 33 s to see Timer B failures in the window)"},
        {"net", "replications", OSN_KEY_LONG, 1, 100000, OSN_KEY_AT(C, replications),
         .help = "independent replications (replication i runs on stream i of the seed)"},
        {"net", "seed", OSN_KEY_LONG, 0, 0x7fffffffffffffffL, OSN_KEY_AT(C, seed),
         .help = "master seed"},
        {"net", "level", OSN_KEY_DOUBLE, 0, 0, true, OSN_KEY_AT(C, level),
         .help = "confidence level of the half-widths (KEY_ci)"},
        {"net", "trace_interval", OSN_KEY_DOUBLE, 0, 0, true, OSN_KEY_AT(C, trace_interval),
         .unit = "s", .def = "0.1", .help = "row spacing of --trace (as --trace-interval)"},
        {"source", "process", OSN_KEY_CHOICE, .choices = processes, OSN_KEY_AT(C, src.process),
         .help = "call arrivals: Poisson at `rate`, a two-phase MMPP, a piecewise-constant "
                 "profile, or batches of bulk_size calls at one instant (bulk, `rate` calls/s "
                 "on average)"},
        {"source", "rate", OSN_KEY_DOUBLE, OSN_KEY_AT(C, src.rate), .unit = "calls/s",
         .help = "calls offered in total (profile: before its first step)"},
        {"source", "shares", OSN_KEY_LIST, 0, OSN_NET_MAX_SHARES, .hook = set_shares,
         .get = get_shares, .when_key = "net.topology", .when_is = "fanin|fanout|tree|mesh",
         .help = "one share per edge: source i offers rate x share i / the shares' sum (at most "
                 "64 edges; none: rate / edges each), for unequal clients of the core"},
        {"source", "hold", OSN_KEY_DOUBLE, 0, 0, true, OSN_KEY_AT(C, src.hold), .unit = "s",
         .help = "mean call hold time (exponential), 200 to BYE"},
        {"source", "mmpp_rates", OSN_KEY_LIST, 0, 2, .hook = set_mmpp_rates, .get = get_mmpp_rates,
         .when_key = "source.process", .when_is = "mmpp", .unit = "calls/s",
         .help = "R0 R1: the rate in phase 0 and in phase 1"},
        {"source", "mmpp_switch", OSN_KEY_LIST, 0, 2, .hook = set_mmpp_switch,
         .get = get_mmpp_switch, .when_key = "source.process", .when_is = "mmpp", .unit = "1/s",
         .help = "S01 S10: the rates of leaving phase 0 and phase 1"},
        {"source", "burst_start", OSN_KEY_DOUBLE, OSN_KEY_AT(C, src.burst_t), .unit = "s",
         .when_key = "source.process", .when_is = "profile",
         .help = "start of a burst: the rate times burst_factor for burst_length"},
        {"source", "burst_length", OSN_KEY_DOUBLE, OSN_KEY_AT(C, src.burst_len), .unit = "s",
         .when_key = "source.process", .when_is = "profile", .help = "length of the burst"},
        {"source", "burst_factor", OSN_KEY_DOUBLE, OSN_KEY_AT(C, src.burst_factor),
         .when_key = "source.process", .when_is = "profile",
         .help = "the rate's factor during the burst"},
        {"source", "steps", OSN_KEY_LIST, 0, 2 * OSN_NET_MAX_STEPS, .hook = set_steps,
         .get = get_steps, .pairs = true, .when_key = "source.process", .when_is = "profile",
         .unit = "s calls/s", .help = "'T RATE, T RATE, ...': the rate from time T on"},
        {"source", "retry_prob", OSN_KEY_DOUBLE, OSN_KEY_AT(C, src.retry_prob),
         .help = "after a 503 or a timeout (Timer B, 408), the caller tries again (a new INVITE) "
                 "with this probability; 0: no retrials"},
        {"source", "retry_delay", OSN_KEY_DOUBLE, OSN_KEY_AT(C, src.retry_delay), .unit = "s",
         .help = "mean wait before a retry"},
        {"source", "retry_delay_law", OSN_KEY_CHOICE, .choices = retry_laws,
         OSN_KEY_AT(C, src.retry_delay_law), .help = "law of the wait before a retry"},
        {"source", "retry_delay_cv", OSN_KEY_DOUBLE, OSN_KEY_AT(C, src.retry_delay_cv),
         .help = "coefficient of variation of a uniform (<= 0.577) or lognormal retry delay"},
        {"source", "honour_retry_after", OSN_KEY_BOOL, OSN_KEY_AT(C, src.honour_retry_after),
         .help = "wait at least a 503's Retry-After before a retry (RFC 3261 21.5.4)"},
        {"source", "max_retries", OSN_KEY_LONG, 0, 100, OSN_KEY_AT(C, src.max_retries),
         .help = "retries of one call at most"},
        {"source", "patience", OSN_KEY_CHOICE, .choices = patience_laws,
         OSN_KEY_AT(C, src.patience),
         .help = "law of how long a caller waits for a final answer before it gives up and "
                 "CANCELs (RFC 3261 9.1); none: callers never give up"},
        {"source", "patience_mean", OSN_KEY_DOUBLE, OSN_KEY_AT(C, src.patience_mean), .unit = "s",
         .help = "mean patience of a caller, from each attempt's INVITE"},
        {"source", "patience_cv", OSN_KEY_DOUBLE, OSN_KEY_AT(C, src.patience_cv),
         .when_key = "source.patience", .when_is = "lognormal",
         .help = "coefficient of variation of a lognormal patience"},
        /* bulk arrivals: kept apart from the keys above, which other work changes too */
        {"source", "bulk_size", OSN_KEY_LONG, 1, 1000000, OSN_KEY_AT(C, src.bulk_size),
         .when_key = "source.process", .when_is = "bulk", .unit = "calls",
         .help = "bulk: the calls of one batch, which arrive at one instant"},
        {"source", "bulk_gap", OSN_KEY_CHOICE, .choices = bulk_gaps, OSN_KEY_AT(C, src.bulk_det),
         .when_key = "source.process", .when_is = "bulk",
         .help = "bulk: the gaps between batches, exponential (exp) or all bulk_size / rate "
                 "(det); rate / bulk_size batches/s either way"},
        {"source", "callee_hangs_up", OSN_KEY_DOUBLE, OSN_KEY_AT(C, src.callee_hangs_up),
         .help = "fraction in [0, 1] of answered calls the callee ends: the uas sends the BYE at "
                 "the end of the hold (by the dialog's Route set: in osn sim up the path through "
                 "the proxies that Record-Route) and the caller answers 200; which calls is a "
                 "function of the Call-ID, so both sides agree"},
        SERVER_KEYS("server edge", edge),
        SERVER_KEYS("server core", core),
        SERVER_KEYS("server uas", uas),
        /* A fanout's cores past the first, [server core2] .. [server coreN] (load_cores): the
         * family's keys point at `core`, whose defaults are theirs. */
        SERVER_KEYS_F("server coreN", core, OSN_NET_MAX_CORES),
        {"server edge", "next_hop_weights", OSN_KEY_LIST, 0, OSN_NET_MAX_CORES, .hook = set_weights,
         .get = get_weights, .when_key = "net.topology", .when_is = "fanout",
         .help = "fanout: each edge's weight of core, core2, ... (whole numbers 1..1000; none: "
                 "all 1). A new INVITE is offered to a core by smooth weighted round-robin and "
                 "goes to another when that core's client half throttles it (RFC 7339 5.10)"},
        {"server edge", "down_time", OSN_KEY_DOUBLE, OSN_KEY_AT(C, down_time), .unit = "s",
         .when_key = "net.topology", .when_is = "fanout",
         .help = "fanout: how long a core whose transaction timed out is passed over while "
                 "another is up (one that answered 503 with Retry-After: the time it states); "
                 "the INVITE it failed goes to another core, as osn node's edge does"},
        {"server edge", "record_route", OSN_KEY_BOOL, OSN_KEY_AT(C, edge.record_route),
         .help = "the edge (and a tandem's mid proxy) Record-Routes: the dialog's ACK and BYE go "
                 "through it and cost its CPU; no: they go past it (RFC 3261 16.6 step 4)"},
        {"server core", "record_route", OSN_KEY_BOOL, OSN_KEY_AT(C, core.record_route),
         .help = "the core Record-Routes: the dialog's ACK and BYE go through it and cost its "
                 "CPU; no: they go past it, as when no proxy Record-Routes (RFC 3261 16.6)"},
        {"server uas", "ring_delay", OSN_KEY_CHOICE, .choices = ring_laws, OSN_KEY_AT(C, uas.ring),
         .help = "how long the UAS lets a new call ring between its 180 and its 200: none (at "
                 "once), det or exp of mean ring_delay_mean; a CANCEL while it rings gets 200 and "
                 "the INVITE 487 (RFC 3261 9.2). Also osn node's uas"},
        {"server uas", "ring_delay_mean", OSN_KEY_DOUBLE, 0, 0, true, OSN_KEY_AT(C, uas.ring_mean),
         .unit = "s", .help = "mean ring delay of the UAS"},
        /* The topology the user writes (src/io/net_topo.c): sections keyed by a name, each read
         * by the loader there through the keys below, homes in `topo` (named servers: `core`,
         * whose defaults are theirs). */
        {"element *", "role", OSN_KEY_CHOICE, .choices = roles, OSN_KEY_AT(C, topo.role),
         .family = OSN_INI_FAMILY_NAMED,
         .help = "a topology the user writes: element NAME is a proxy or the UAS (one UAS); "
                 "net.topology, edges and cores then follow from the graph"},
        {"element *", "server", OSN_KEY_STRING, OSN_KEY_AT(C, topo.server),
         .family = OSN_INI_FAMILY_NAMED, .def = "uas for the UAS",
         .help = "the [server NAME] section of the element's costs and buffer (edge, core, uas "
                 "or a name of one's own); a proxy must give it"},
        {"element *", "next_hop", OSN_KEY_STRING, OSN_KEY_AT(C, topo.next_hop),
         .family = OSN_INI_FAMILY_NAMED, .unit = "NAME, ...",
         .help = "a proxy's next hops, elements of the file (several: a fan-out by weighted "
                 "round-robin, as net.topology = fanout); the UAS has none"},
        {"element *", "next_hop_weights", OSN_KEY_LIST, 0, OSN_NET_TOPO_HOPS,
         .hook = set_topo_weights, .get = get_topo_weights, .family = OSN_INI_FAMILY_NAMED,
         .help = "each next hop's weight, whole numbers 1..1000 (none: all 1)"},
        {"source *", "to", OSN_KEY_STRING, OSN_KEY_AT(C, topo.to), .family = OSN_INI_FAMILY_NAMED,
         .unit = "NAME",
         .help = "a UAC population NAME (its calls as [source] says) and the proxy it sends to"},
        {"source *", "rate", OSN_KEY_DOUBLE, OSN_KEY_AT(C, topo.rate),
         .family = OSN_INI_FAMILY_NAMED, .unit = "calls/s", .def = "source.rate / sources",
         .help = "calls/s this source offers (given for one source, given for all)"},
        /* [link A-B] */
        {"link *", "delay", OSN_KEY_DOUBLE, OSN_KEY_AT(C, topo.link.delay),
         .family = OSN_INI_FAMILY_NAMED, .unit = "s", .def = "its hop's: link access, trunk, uas",
         .help = "one-way delay from A to B (and back), A a source or element that sends to "
                 "element B"},
        {"link *", "loss", OSN_KEY_DOUBLE, OSN_KEY_AT(C, topo.link.loss),
         .family = OSN_INI_FAMILY_NAMED, .def = "its hop's: link access, trunk, uas",
         .help = "probability that a message is lost, in [0, 1)"},
        SERVER_KEYS_F("server *", core, OSN_INI_FAMILY_NAMED),
        LINK_KEYS("link access", access),
        LINK_KEYS("link trunk", trunk),
        LINK_KEYS("link uas", uas_link),
        {"control", "kind", OSN_KEY_CHOICE, .choices = osn_ctl_kind_names, OSN_KEY_AT(C, ctl_kind),
         .help = "the overload control: server half at the core, client half at its upstream "
                 "neighbours (RFC 7339 oc parameters in the top Via); control.at moves the "
                 "server halves"},
        {"control", "at", OSN_KEY_CHOICE, .choices = ctl_ats, OSN_KEY_AT(C, ctl_at),
         .help = "where the server halves of control.kind are; each one's upstream neighbours "
                 "hold the client halves toward it. core: at the core(s), the edges are the "
                 "clients (as before this key). edge: at each edge, its sources (the UACs) are "
                 "the clients: they offer oc in the Via of their requests, read the edge's "
                 "feedback and shed new calls themselves, each counted as rejected and as "
                 "shed_local (RFC 7339 5.3); the core runs no control. both: at the edges and "
                 "the core(s), an edge being its sources' server and the core's client. With "
                 "kind none there are no halves anywhere; both is refused in a tandem (not "
                 "carried out there); kind pi with edge or both is refused (a source feeds "
                 "pi's client half no samples)"},
        {"control", "detector", OSN_KEY_CHOICE, .choices = osn_ctl_det_kind_names,
         OSN_KEY_AT(C, ctl.det.kind),
         .help = "what l1 h1 l2 h2 measure: messages in the system (hysteretic), the busy "
                 "fraction of the CPU in [0, 1] (occupancy), queueing delay in s below 64 T1 "
                 "(delay); a threshold of the wrong kind is refused"},
        CTL_D("l1", det.l1, false, NULL,
              "leave overload level 1 at or below this (occupancy 0.7, delay 0.05 by default)"),
        CTL_D("h1", det.h1, true, NULL,
              "enter overload level 1 at this (occupancy 0.9, delay 0.1 by default)"),
        CTL_D("l2", det.l2, false, NULL,
              "leave level 2 at or below this (occupancy 0.95, delay 0.2 by default)"),
        CTL_D("h2", det.h2, true, NULL,
              "enter level 2 at this (occupancy 0.99, delay 0.4 by default)"),
        {"control", "policy", OSN_KEY_CHOICE, .choices = osn__policy_names,
         OSN_KEY_AT(C, ctl.det.policy), .hook = fold_policy,
         .help = "the detector's policy, as the model's (docs/models.md): I (or 1) or II (or 2)"},
        CTL_D("window", det.interval, true, "s", "the detector's measurement window"),
        CTL_D("alpha", det.alpha, true, NULL, "the detector's smoothing weight, in (0, 1]"),
        {"control", "retry_after", OSN_KEY_DOUBLE, OSN_KEY_AT(C, ctl.none.retry_after),
         .hook = share_retry, .unit = "s",
         .help = "Retry-After of the 503s of none, local and prsm, and of those a proxy's client "
                 "half sheds (loss, rate, ...): whole seconds, 0 none"},
        {"control", "reject_when_full", OSN_KEY_BOOL, OSN_KEY_AT(C, ctl.none.reject_when_full),
         .hook = share_full,
         .help = "none, prsm: answer 503 to a request that finds the buffer full"},
        {"control", "prsm_responses", OSN_KEY_BOOL, OSN_KEY_AT(C, ctl.prsm.responses),
         .help = "prsm: responses go to the priority queue"},
        CTL_D("reject_overload", local.reject_overload, false, NULL,
              "local: fraction of new INVITEs answered 503 in overload"),
        {"control", "target", OSN_KEY_DOUBLE, 0, 0, true, OSN_KEY_AT(C, ctl.loss.target),
         .hook = share_target, .help = "loss, rate, rate_dyn: the target CPU utilisation"},
        {"control", "validity", OSN_KEY_DOUBLE, 0, 0, true, OSN_KEY_AT(C, ctl.loss.validity),
         .hook = share_validity, .unit = "s",
         .help = "loss, rate, rate_dyn: oc-validity of the feedback"},
        {"control", "interval", OSN_KEY_DOUBLE, 0, 0, true, OSN_KEY_AT(C, ctl.loss.interval),
         .hook = share_interval, .unit = "s",
         .help = "loss, rate, rate_dyn: the estimator's window"},
        CTL_D("max_loss", loss.max_loss, false, "%", "loss: the largest shed percentage"),
        CTL_D("cat1", loss.cat1, true, "%", "loss: the category-1 percentage"),
        CTL_D("tau_factor", rate.tau_factor, false, NULL,
              "rate, rate_dyn: the bucket depth in intervals"),
        CTL_D("min_rate", rate.min_rate, false, "calls/s",
              "rate, rate_dyn: the lowest rate granted"),
        CTL_D("release", rate.release, false, NULL, "rate, rate_dyn: the release factor"),
        {"control", "pi_measure", OSN_KEY_CHOICE, .choices = pi_measures,
         OSN_KEY_AT(C, ctl.pi.measure),
         .help = "pi: what the controller measures (retransmission ratio rrrc, or round-trip "
                 "delay rtd)"},
        CTL_D("pi_target", pi.target, true, NULL, "pi: the target of the measure"),
        CTL_D("kp", pi.kp, false, NULL, "pi: the proportional gain"),
        CTL_D("ki", pi.ki, false, NULL, "pi: the integral gain"),
        CTL_D("pi_interval", pi.interval, true, "s", "pi: the control interval"),
        {"control", "pi_cap_noninvite", OSN_KEY_BOOL, OSN_KEY_AT(C, ctl.pi.cap_noninvite),
         .help = "pi: the cap holds back copies of BYE and CANCEL too, and the core's ratio "
                 "counts them (the papers' cap on the retransmission message rate); no: INVITE "
                 "copies only"},
        {"sip", "t1", OSN_KEY_DOUBLE, 0, 0, true, OSN_KEY_AT(C, sip.t1), .unit = "s",
         .help = "RFC 3261 T1, the round-trip estimate (Timer B = 64 T1)"},
        {"sip", "t2", OSN_KEY_DOUBLE, 0, 0, true, OSN_KEY_AT(C, sip.t2), .unit = "s",
         .help = "RFC 3261 T2, the longest retransmit interval (>= t1)"},
        {"sip", "t4", OSN_KEY_DOUBLE, 0, 0, true, OSN_KEY_AT(C, sip.t4), .unit = "s",
         .help = "RFC 3261 T4, a message's longest life in the network"},
        {"sip", "timer_d", OSN_KEY_DOUBLE, 0, 0, true, OSN_KEY_AT(C, sip.timer_d), .unit = "s",
         .help = "RFC 3261 Timer D (the client's wait for retransmitted responses)"},
        {"sip", "client_mode", OSN_KEY_CHOICE, .choices = client_modes, OSN_KEY_AT(C, sipp),
         .help = "the UACs' transactions: as RFC 3261 (rfc) or as SIPp's UAC (sipp: at most 5 "
                 "INVITE "
                 "retransmissions, Retry-After ignored)"},
        {"sip", "rfc6026", OSN_KEY_BOOL, OSN_KEY_AT(C, sip.rfc6026),
         .help = "the INVITE server transaction of RFC 6026 (Accepted state)"},
};

const struct osn_ini_schema osn_net_schema = {net_keys, sizeof net_keys / sizeof net_keys[0], NULL};

/* Whether line (a section header or not) opens a section only network scenarios have. A file
 * of [server core] alone once went to the node's loader: "unknown section [server core]". */
static bool network_section(const char *line)
{
    static const char *const names[] = {"net",     "source", "server", "link",
                                        "control", "sip",    "node",   "element"};
    const char *p = line + strspn(line, " \t");

    if (*p != '[')
        return false;
    p += 1 + strspn(p + 1, " \t");
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        size_t n = strlen(names[i]);
        if (strncasecmp(p, names[i], n) == 0 && (p[n] == ']' || p[n] == ' ' || p[n] == '\t'))
            return true;
    }
    return false;
}

bool osn_net_scenario_sniff(const char *path)
{
    char line[512];
    bool found = false;
    FILE *f = path ? fopen(path, "r") : NULL;
    size_t len;
    int st;

    if (!f)
        return false;
    /* A NUL byte ends the sniffing (/dev/zero once kept fgets() busy forever); the loader
     * then says what is wrong with the file. A long line is read on in pieces. */
    while (!found && (st = osn_ini_getline(f, line, sizeof line, &len)) != OSN_INI_LINE_EOF &&
           st != OSN_INI_LINE_NUL)
        found = network_section(line);
    fclose(f);
    return found;
}

/*
 * The detector's thresholds are in its own units: messages in the system for hysteretic, the
 * fraction of time the CPU is busy for occupancy, seconds of queueing delay for delay. The
 * defaults 20/40/60/80 are message counts: under occupancy or delay they were never reached and
 * the run was bit for bit the run without control, silently (issue 20). A detector other than
 * hysteretic now takes defaults of its own for the thresholds not given (occupancy 0.7, 0.9,
 * 0.95, 0.99; delay 0.05, 0.1, 0.2, 0.4 s, below T1 so that it acts before the first
 * retransmission), and a threshold of the wrong kind is refused, naming its key.
 */
static int detector_thresholds(const struct osn_ini *ini, struct osn_net_cfg *c, char *err,
                               size_t errsize)
{
    static const char *const keys[4] = {"control.l1", "control.h1", "control.l2", "control.h2"};
    static const double occupancy[4] = {0.7, 0.9, 0.95, 0.99};
    static const double delay[4] = {0.05, 0.1, 0.2, 0.4};
    struct osn_ctl_det_cfg *d = &c->ctl.det;
    double *v[4] = {&d->l1, &d->h1, &d->l2, &d->h2};
    double timer_b = 64 * c->sip.t1;

    for (int i = 0; i < 4; i++) {
        const struct osn_key_origin *o = osn_ini_get(ini, keys[i]);
        if (!o) {
            if (d->kind == OSN_CTL_DET_OCCUPANCY)
                *v[i] = occupancy[i];
            else if (d->kind == OSN_CTL_DET_DELAY)
                *v[i] = delay[i];
            continue;
        }
        if (d->kind == OSN_CTL_DET_HYSTERETIC && *v[i] != floor(*v[i]))
            return osn_ini_bad(o, err, errsize,
                               "the hysteretic detector counts messages in the system: a whole "
                               "number (fractions are control.detector = occupancy's unit, "
                               "seconds delay's)");
        if (d->kind == OSN_CTL_DET_OCCUPANCY && *v[i] > 1)
            return osn_ini_bad(o, err, errsize,
                               "the occupancy detector measures the fraction of time the CPU is "
                               "busy: a threshold in [0, 1] (%g is a message count, the "
                               "hysteretic detector's unit)",
                               *v[i]);
        if (d->kind == OSN_CTL_DET_DELAY && *v[i] >= timer_b)
            return osn_ini_bad(o, err, errsize,
                               "the delay detector measures queueing delay in seconds: %g s is at "
                               "or beyond Timer B (64 T1 = %g s), when every call has already "
                               "failed (a message count is the hysteretic detector's unit)",
                               *v[i], timer_b);
    }
    return 0;
}

/* A CANCEL costs what a BYE costs (both are non-INVITE requests the element answers at once)
 * unless its server's cost_cancel says otherwise. */
static void cancel_costs(const struct osn_ini *ini, struct osn_net_cfg *c)
{
    static const char *const keys[3] = {"server edge.cost_cancel", "server core.cost_cancel",
                                        "server uas.cost_cancel"};
    struct osn_net_server_cfg *sv[3] = {&c->edge, &c->core, &c->uas};
    char key[48];

    for (int i = 0; i < 3; i++)
        if (!osn_ini_get(ini, keys[i]))
            sv[i]->cost[OSN_NET_K_CANCEL] = sv[i]->cost[OSN_NET_K_BYE];
    for (int n = 2; n <= OSN_NET_MAX_CORES; n++) {
        snprintf(key, sizeof key, "server core%d.cost_cancel", n);
        struct osn_net_server_cfg *m = &c->more_cores[n - 2];
        if (!osn_ini_get(ini, key))
            m->cost[OSN_NET_K_CANCEL] = m->cost[OSN_NET_K_BYE];
    }
}

/* The core number of a key collected in [server coreN] ("server core7.buffer": 7), else 0. */
static int core_of(const char *key)
{
    const struct osn_key_spec *k = osn_ini_key_find(&osn_net_schema, key);
    char sec[64];

    if (!k || k->family <= 0)
        return 0;
    snprintf(sec, sizeof sec, "%.*s", (int)(strrchr(key, '.') - key), key);
    return osn_ini_family_member(k, sec);
}

/*
 * A fanout's cores past the first, [server core2] .. [server coreN] with N = net.cores: each is
 * read with the family's keys ("server coreN" in the table) renamed for it, into
 * more_cores[N - 2] over its defaults. A core's costs are not guessed: a section past
 * net.cores, or one of a network with one core, is refused naming its key, and a core without
 * a section is refused naming net.cores (a copy of some other core's costs would be a guess the
 * results hide).
 */
static int load_cores(const struct osn_ini *ini, struct osn_net_cfg *c, char *err, size_t errsize)
{
    enum { MAXK = 16 };
    struct osn_key_spec fam[MAXK];
    bool has[OSN_NET_MAX_CORES + 1] = {false};
    int nk = 0, cores = c->topology == OSN_NET_FANOUT ? c->cores : 1;
    char sec[32];

    for (int i = 0; i < ini->nkeys; i++) {
        const struct osn_key_origin *o = &ini->keys[i];
        int n = core_of(o->key);
        if (n > 0 && c->topology != OSN_NET_FANOUT)
            return osn_ini_bad(o, err, errsize,
                               "a second core acts only with net.topology = fanout (it is %s "
                               "here)",
                               topologies[c->topology]);
        if (n > cores)
            return osn_ini_bad(o, err, errsize,
                               "there is no core %d: net.cores = %d, whose sections are [server "
                               "core] and [server core2] .. [server core%d]",
                               n, cores, cores);
        has[n] = n > 0;
    }
    for (int n = 2; n <= cores; n++) {
        if (has[n])
            continue;
        const struct osn_key_origin *o = osn_ini_get(ini, "net.cores");
        if (o)
            return osn_ini_bad(o, err, errsize,
                               "core %d has no section: give each core past the first its own, "
                               "[server core2] .. [server core%d]",
                               n, cores);
        snprintf(err, errsize,
                 "%s: net.cores = %d (the default): core %d has no section [server core%d]",
                 ini->path[0] ? ini->path : "scenario", cores, n, n);
        return OSN_ECONFIG;
    }
    for (size_t i = 0; i < sizeof net_keys / sizeof net_keys[0] && nk < MAXK; i++)
        if (net_keys[i].family > 0)
            fam[nk++] = net_keys[i];
    for (int n = 2; n <= cores; n++) {
        snprintf(sec, sizeof sec, "server core%d", n);
        for (int k = 0; k < nk; k++)
            fam[k].section = sec, fam[k].family = 0;
        /* The family's homes are `core`'s: core n is read through a copy whose `core` is it. */
        struct osn_net_cfg tmp = *c;
        tmp.core = c->more_cores[n - 2];
        int rc = osn_ini_load(ini, &(struct osn_ini_schema){fam, (size_t)nk, NULL}, &tmp, err,
                              errsize);
        if (rc)
            return rc;
        c->more_cores[n - 2] = tmp.core;
    }
    return 0;
}

/*
 * control.kind = pi with its server halves at the edges (control.at edge or both) is refused:
 * pi's client half acts on retransmissions (a cap) and learns from 100 Trying delays and the
 * server's feedback, and only a proxy's client transactions feed it those (src/elem/proxy.c,
 * osn_proxy_on_client_event and osn_proxy_retrans_allowed). A source's client half is asked
 * about new calls alone (osn_uac_call_admit), which pi always sends: the run would go as with
 * no control at the edge, a setting that silently does nothing. The other kinds are fine there:
 * loss, rate and rate_dyn shed new calls at the source; none, local and prsm have no client
 * half (their edge acts on its own). Here, in the loader both osn sim and osn node use.
 */
static int source_client_fed(const struct osn_ini *ini, const struct osn_net_cfg *c, char *err,
                             size_t errsize)
{
    const struct osn_key_origin *o;

    if (c->ctl_kind != OSN_CTL_KIND_PI || c->ctl_at == OSN_NET_CTL_AT_CORE)
        return 0;
    if (!(o = osn_ini_get(ini, "control.at")) && !(o = osn_ini_get(ini, "control.kind")))
        return 0;
    return osn_ini_bad(o, err, errsize,
                       "control.kind = pi with control.at = %s: a source's pi client half gets "
                       "no samples and caps nothing (only a proxy's does); use control.at = "
                       "core or another kind",
                       c->ctl_at == OSN_NET_CTL_AT_BOTH ? "both" : "edge");
}

/* topology = tree: its sources are its leaves (one each), not net.edges. */
static int tree_edges(const struct osn_ini *ini, struct osn_net_cfg *c, char *err, size_t errsize)
{
    const struct osn_key_origin *o = osn_ini_get(ini, "net.edges");
    if (o)
        return osn_ini_bad(o, err, errsize,
                           "a tree has a source at each leaf, fanout^(levels - 1) of them: "
                           "leave net.edges out");
    int E = osn_net_role_count(c, OSN_NET_ROLE_SOURCE);
    if (E >= 1 && E <= OSN_NET_MAX_EDGES)
        c->edges = E; /* else osn_net_check refuses net.fanout */
    return 0;
}

static long gcd(long a, long b)
{
    while (b) {
        long r = a % b;
        a = b;
        b = r;
    }
    return a;
}

/*
 * topology = mesh: the tree it is. net.regions regions, each of net.edges sources each into an
 * edge of its own, and a core; every edge chooses among the cores, its own region's weighted
 * local_share and each other's (1 - local_share) / (regions - 1), in thousandths reduced by
 * their greatest common divisor (a weight of 0 is no next hop). The order: the sources region by
 * region, the edges alike, the cores, the UAS; every core has [server core]'s costs. One region
 * is a tree of one core whose edges each have one next hop: the fanin of net.edges edges, bit
 * for bit (the order, paths and client halves are the fanin's).
 */
static int mesh(const struct osn_ini *ini, struct osn_net_cfg *c, char *err, size_t errsize)
{
    int R = c->regions, E = c->edges, n = R * E;
    const struct osn_key_origin *o;

    if (!(c->local_share >= 0 && c->local_share <= 1) && (o = osn_ini_get(ini, "net.local_share")))
        return osn_ini_bad(o, err, errsize, "a share is in 0 .. 1 (%g)", c->local_share);
    if ((long)R * E > OSN_NET_MAX_EDGES) {
        if (!(o = osn_ini_get(ini, "net.edges")))
            o = osn_ini_get(ini, "net.regions");
        return osn_ini_bad(o, err, errsize,
                           "a mesh of %d regions of %d edges has %ld sources: %d at most", R, E,
                           (long)R * E, OSN_NET_MAX_EDGES);
    }
    long wl = lround(1000 * c->local_share);
    long wo = R > 1 ? lround(1000 * (1 - c->local_share) / (R - 1)) : 0;
    long g = gcd(wl, wo);
    if (R > 1 && wo == 0 && wl == 0)
        wl = wo = 1; /* no local share at all, and too many regions to share the rest */
    else if (g > 1)
        wl /= g, wo /= g;
    free(c->up);
    free(c->core_w);
    c->core_w = NULL;
    if (!(c->up = malloc((size_t)2 * (size_t)n * sizeof *c->up)) ||
        (R > 1 && !(c->core_w = malloc((size_t)n * (size_t)R * sizeof *c->core_w)))) {
        snprintf(err, errsize, "out of memory for a mesh of %d edges", n);
        return OSN_ENOMEM;
    }
    for (int i = 0; i < n; i++) {
        int r = i / E;
        c->up[i] = (uint16_t)(n + i); /* source i into edge i */
        /* edge i into its own core, or (no local share) the next region's */
        c->up[n + i] = (uint16_t)(2 * n + (R > 1 && wl == 0 ? (r + 1) % R : r));
        for (int k = 0; R > 1 && k < R; k++)
            c->core_w[(size_t)i * (size_t)R + (size_t)k] = (int)(k == r ? wl : wo);
    }
    for (int k = 0; k < R - 1; k++)
        c->more_cores[k] = c->core;
    c->proxies = n; /* the sources too (osn_net_role_count); `edges` stays a region's */
    c->tree_cores = R;
    return 0;
}

int osn_net_scenario_parse(const struct osn_ini *ini, struct osn_net_cfg *c, char *err,
                           size_t errsize)
{
    int rc = osn_ini_load(ini, &osn_net_schema, c, err, errsize);

    if (!rc)
        rc = load_cores(ini, c, err, errsize);
    if (!rc)
        cancel_costs(ini, c);
    if (!rc)
        rc = osn__net_topo_load(ini, c, err, errsize);

    if (!rc)
        rc = detector_thresholds(ini, c, err, errsize);
    if (!rc)
        rc = source_client_fed(ini, c, err, errsize);
    if (!rc && c->topology == OSN_NET_TREE && !c->up)
        rc = tree_edges(ini, c, err, errsize);
    if (!rc && c->topology == OSN_NET_MESH)
        rc = mesh(ini, c, err, errsize);
    if (c->topology == OSN_NET_FANIN || c->topology == OSN_NET_FANOUT)
        c->ctl.rate.n_clients = (unsigned)c->edges;
    if (!rc && (c->topology == OSN_NET_TREE || c->topology == OSN_NET_MESH)) {
        /* a core's clients: the proxies that send to it (the most any core has) */
        int E = osn_net_role_count(c, OSN_NET_ROLE_SOURCE);
        int P = osn_net_role_count(c, OSN_NET_ROLE_EDGE);
        int ncores = osn_net_role_count(c, OSN_NET_ROLE_CORE);
        unsigned most = 0;
        for (int k = 0; c->up && k < ncores; k++) {
            unsigned n = 0;
            for (int i = E; i < E + P; i++)
                n += c->core_w ? c->core_w[(size_t)(i - E) * (size_t)ncores + (size_t)k] > 0
                               : c->up[i] == E + P + k;
            most = n > most ? n : most;
        }
        c->ctl.rate.n_clients = c->up ? most : (unsigned)c->fanout;
    }
    c->ctl.prsm.t1 = c->sip.t1;
    return rc;
}

/* Bytes of one live call, an upper estimate: struct call (about 300 bytes), a client and a
 * server transaction of 192 bytes per hop for the INVITE and the BYE, and its messages. */
#define LIVE_CALL_BYTES 2048.0
/* Most calls a run may simulate (all replications). */
#define NET_CALLS_MAX 1e10

double osn_net_scenario_memory(const struct osn_net_cfg *c, double *calls)
{
    double peak = c->src.rate, total = c->warmup + c->time;

    if (c->src.process == OSN_NET_MMPP)
        peak = fmax(c->src.mmpp_rate[0], c->src.mmpp_rate[1]);
    if (c->src.process == OSN_NET_PROFILE) {
        for (int i = 0; i < c->src.nsteps; i++)
            peak = fmax(peak, c->src.step_rate[i]);
        if (c->src.burst_len > 0)
            peak *= fmax(1, c->src.burst_factor);
    }
    if (calls)
        *calls = peak * total * c->replications;
    /* A call lives until Timer B (64 T1) fails it, or through its hold time and the BYE; the
     * replications running at once each hold their own. */
    double live = peak * fmin(total, 64 * c->sip.t1 + c->src.hold + c->sip.t4 + 1);
    return live * LIVE_CALL_BYTES * fmin(c->threads, c->replications);
}

/*
 * The controller's own check, before the run: `control.l1 = 5, control.h1 = 1` once ended in
 * "simulation failed: invalid argument". The detector's thresholds are checked here one by one
 * so that the message names the key; anything else the controller refuses names control.kind.
 */
static int check_control(const struct osn_net_scenario *s, char *err, size_t errsize)
{
    static const char *const det_keys[] = {"control.l1",       "control.h1",     "control.l2",
                                           "control.h2",       "control.alpha",  "control.window",
                                           "control.detector", "control.policy", NULL};
    const struct osn_ctl_cfg *ct = &s->cfg.ctl;
    const struct osn_key_origin *o = NULL;
    struct osn_ctl *ctl = NULL;
    struct osn_ctl_det det;

    if (osn_ctl_new_kind(&ctl, s->cfg.ctl_kind, ct) == 0) {
        osn_ctl_free(ctl);
        return 0;
    }
    bool det_bad = osn_ctl_det_init(&det, &ct->det) != 0;
    for (int i = 0; det_bad && det_keys[i] && !o; i++)
        o = osn_ini_get(&s->ini, det_keys[i]);
    if (!o)
        o = osn_ini_get(&s->ini, "control.kind");
    const char *why = det_bad ? "the detector needs 0 <= l1 < h1 < h2 and l1 < l2 < h2 (alpha in "
                                "(0, 1], window > 0)"
                              : "the controller refuses its parameters (see osn sim --help)";
    if (o)
        return osn_ini_bad(o, err, errsize, "%s", why);
    snprintf(err, errsize, "%s: control: %s", s->ini.path[0] ? s->ini.path : "scenario", why);
    return OSN_ECONFIG;
}

/* Refuses a run that cannot fit in memory (source.rate = 1e12 once took 11 GB in 5 s and kept
 * growing), naming the key that sets the rate. */
static int check_memory(const struct osn_net_scenario *s, char *err, size_t errsize)
{
    static const char *const keys[] = {"source.rate",
                                       "source.mmpp_rates",
                                       "source.steps",
                                       "source.burst_factor",
                                       "source.hold",
                                       "net.time",
                                       NULL};
    const struct osn_key_origin *o = NULL;
    double phys = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
    double calls, bytes = osn_net_scenario_memory(&s->cfg, &calls);

    /* net.time = 1e300 once ran on with no end: past NET_CALLS_MAX calls (hours at the
     * simulator's 1e5-1e6 calls a second), refuse, naming the time. */
    if (!(calls <= NET_CALLS_MAX)) {
        const struct osn_key_origin *t = osn_ini_get(&s->ini, "net.time"),
                                    *r = osn_ini_get(&s->ini, "source.rate");
        /* The one the command line changed is the one to blame; else the time. */
        o = r && strncmp(r->where, "--set", 5) == 0 ? r : t ? t : r;
        if (o)
            return osn_ini_bad(o, err, errsize,
                               "about %.3g calls to simulate (%.3g s at up to %.3g calls/s, %d "
                               "replications), past the %.0e of a few hours",
                               calls, s->cfg.warmup + s->cfg.time,
                               calls / (s->cfg.warmup + s->cfg.time) / s->cfg.replications,
                               s->cfg.replications, NET_CALLS_MAX);
        snprintf(err, errsize, "about %.3g calls to simulate, past the %.0e of a few hours", calls,
                 NET_CALLS_MAX);
        return OSN_ECONFIG;
    }
    if (!(phys > 0) || bytes <= phys / 2)
        return 0;
    for (int i = 0; keys[i] && !o; i++)
        o = osn_ini_get(&s->ini, keys[i]);
    if (o)
        return osn_ini_bad(o, err, errsize,
                           "the calls in flight would need about %.3g GB, more than half of "
                           "this machine's %.3g GB",
                           bytes / 1e9, phys / 1e9);
    snprintf(err, errsize, "the calls in flight would need about %.3g GB", bytes / 1e9);
    return OSN_ECONFIG;
}

int osn_net_scenario_check(const struct osn_net_scenario *s, char *err, size_t errsize)
{
    const char *key = NULL;
    char why[256];
    const struct osn_key_origin *o;

    /* Where the key blamed was not given, its partner in the same rule may have been
     * (T2 < T1 with only sip.t1 set blames sip.t1). */
    static const char *const partner[][2] = {{"sip.t2", "sip.t1"}, {"sip.t1", "sip.t2"}};

    if (osn_net_check(&s->cfg, &key, why, sizeof why) == 0) {
        int rc = check_control(s, err, errsize);
        return rc ? rc : check_memory(s, err, errsize);
    }
    o = key ? osn_ini_get(&s->ini, key) : NULL;
    for (size_t i = 0; key && i < sizeof partner / sizeof partner[0]; i++) {
        const struct osn_key_origin *p = osn_ini_get(&s->ini, partner[i][1]);
        /* ... and a partner changed by --set is what broke a rule the file kept. */
        if (strcmp(key, partner[i][0]) == 0 && p &&
            (!o || (strncmp(p->where, "--set", 5) == 0 && strncmp(o->where, "--set", 5) != 0)))
            o = p;
    }
    if (o)
        return osn_ini_bad(o, err, errsize, "%s", why);
    if (err && errsize)
        snprintf(err, errsize, "%s%s%s: %s", s->ini.path[0] ? s->ini.path : "scenario",
                 key ? ": key " : "", key ? key : "", why);
    return OSN_ECONFIG;
}

int osn_net_scenario_load(struct osn_net_scenario *s, const char *path, const char *const *sets,
                          int nsets, char *err, size_t errsize)
{
    struct osn_net_scenario *tmp;
    int rc;

    if (!s)
        return OSN_EINVAL;
    tmp = calloc(1, sizeof *tmp);
    if (!tmp) {
        if (err && errsize)
            snprintf(err, errsize, "out of memory");
        return OSN_ENOMEM;
    }
    /* The keys are collected by the node's schema (its [node] section, then the network's) so
     * that one file serves `osn sim` and `osn node`: the [node] keys are checked by name here
     * and read only by the node (osn_net_scenario_unread() lists them). */
    rc = osn_ini_collect(&tmp->ini, path, sets, nsets, &osn_node_schema, err, errsize);
    if (rc)
        goto out;
    osn_net_cfg_default(&tmp->cfg);
    rc = osn_net_scenario_parse(&tmp->ini, &tmp->cfg, err, errsize);
    if (!rc)
        rc = osn_net_scenario_check(tmp, err, errsize);
    if (!rc)
        *s = *tmp; /* what tmp owns moves to *s */
    else
        osn_net_scenario_release(tmp);
out:
    free(tmp);
    return rc;
}

void osn_net_scenario_release(struct osn_net_scenario *s)
{
    if (!s)
        return;
    osn_ini_free(&s->ini);
    osn_net_cfg_arrays_free(&s->cfg);
}

void osn_net_cfg_arrays_free(struct osn_net_cfg *c)
{
    if (!c)
        return;
    free(c->elem_names);
    free(c->link);
    free(c->edge_own);
    free(c->src.share);
    free(c->up);
    free(c->core_w);
    c->up = NULL;
    c->core_w = NULL;
    c->elem_names = NULL;
    c->link = NULL;
    c->edge_own = NULL;
    c->src.share = NULL;
    c->named = c->nlinks = c->edges_own = c->src.nshares = 0;
}

int osn_net_scenario_unread(const struct osn_net_scenario *s, char *buf, size_t size)
{
    size_t len = 0;
    int n = 0;

    if (size)
        buf[0] = '\0';
    for (int i = 0; i < s->ini.nkeys; i++) {
        const struct osn_key_origin *o = &s->ini.keys[i];
        if (osn_ini_key_find(&osn_net_schema, o->key))
            continue;
        int w = snprintf(buf + len, len < size ? size - len : 0, "%s%s (%s)", n ? ", " : "", o->key,
                         o->where);
        if (w > 0)
            len += (size_t)w;
        n++;
    }
    return n;
}

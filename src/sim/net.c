/*
 * Replications of the SIP network (include/osn/net.h): defaults, checks, the capacity from the
 * cost model, the measures as functions of per-replication totals, and the runner.
 *
 * The replications run on the study module's runner (osn/study.h): stream i (the master seed's
 * state jumped i times) for replication i, on worker threads; the estimates are formed
 * afterwards in replication order, f(pooled totals) with a jackknife half-width, so the thread
 * count changes the wall time only. A trace, when asked for, comes from replication 0.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net_int.h"
#include "osn/err.h"
#include "osn/stats.h"
#include "osn/study.h"
#include "osn/wall.h"

#define STR_(x) #x
#define STR(x)  STR_(x)

void osn_net_cfg_default(struct osn_net_cfg *cfg)
{
    *cfg = (struct osn_net_cfg){0};
    cfg->topology = OSN_NET_COLLAPSE;
    cfg->edges = 1;
    cfg->time = 20;
    cfg->warmup = 10;
    cfg->replications = 4;
    cfg->seed = 1;
    cfg->threads = 1;
    cfg->level = 0.95;
    cfg->src.process = OSN_NET_POISSON;
    cfg->src.rate = 300;
    cfg->src.mmpp_rate[0] = 200;
    cfg->src.mmpp_rate[1] = 600;
    cfg->src.mmpp_switch[0] = 0.2;
    cfg->src.mmpp_switch[1] = 0.4;
    cfg->src.burst_factor = 1;
    cfg->src.hold = 5;
    cfg->src.retry_delay = 5;
    cfg->src.retry_delay_cv = 1;
    cfg->src.retry_delay_law = OSN_NET_RETRY_EXP;
    cfg->src.honour_retry_after = true;
    cfg->src.max_retries = 3;
    cfg->src.patience = OSN_NET_PATIENCE_NONE;
    cfg->src.patience_mean = 4;
    cfg->src.patience_cv = 1;
    cfg->src.bulk_size = 10;
    static const double core[OSN_NET_NKINDS] = {1.0e-3, 0.5e-3, 0.3e-3, 0.3e-3,
                                                0.5e-3, 0.3e-3, 0.5e-3}; /* cancel: as bye */
    for (int k = 0; k < OSN_NET_NKINDS; k++) {
        cfg->core.cost[k] = core[k];
        cfg->edge.cost[k] = core[k] / 20;
        cfg->uas.cost[k] = core[k] / 20;
    }
    cfg->core.buffer = cfg->edge.buffer = cfg->uas.buffer = 500;
    cfg->core.slowdown_factor = cfg->edge.slowdown_factor = cfg->uas.slowdown_factor = 0.5;
    cfg->uas.ring = OSN_UAS_RING_NONE; /* 180 and 200 at once, as before the key */
    cfg->uas.ring_mean = 2;
    /* Record-Route at every proxy: the BYE and the ACK of the 2xx go through them all, as they
     * always did here before the key existed. */
    cfg->core.record_route = cfg->edge.record_route = cfg->uas.record_route = true;
    /* fanout: two cores, each as the default core, equal weights */
    cfg->cores = 2;
    for (int i = 0; i < OSN_NET_MAX_CORES - 1; i++)
        cfg->more_cores[i] = cfg->core;
    for (int i = 0; i < OSN_NET_MAX_CORES; i++)
        cfg->core_weight[i] = 1;
    cfg->down_time = 30;
    cfg->access.delay = cfg->trunk.delay = cfg->uas_link.delay = 0.005;
    cfg->mids = 1;
    cfg->levels = 2;
    cfg->fanout = 2;
    cfg->regions = 2;
    cfg->local_share = 0.8;
    for (int i = 0; i < OSN_NET_MAX_MIDS; i++)
        cfg->mid[i] = cfg->edge;
    /* The topology keys' defaults (src/io/net_topo.c): a link as [link trunk]'s. */
    cfg->topo.link = cfg->trunk;
    cfg->ctl_kind = OSN_CTL_KIND_NONE;
    osn_ctl_cfg_default(&cfg->ctl);
    osn_sip_cfg_default(&cfg->sip);
}

double osn_net_capacity(const struct osn_net_server_cfg *s, int nresp)
{
    double w = s->cost[OSN_NET_K_INVITE] + s->cost[OSN_NET_K_ACK] + s->cost[OSN_NET_K_BYE] +
               nresp * s->cost[OSN_NET_K_RESP];
    return w > 0 ? 1 / w : INFINITY;
}

double osn_net_core_capacity(const struct osn_net_cfg *cfg)
{
    return osn_net_capacity(&cfg->core, 3);
}

double osn_net_source_share(const struct osn_net_cfg *cfg, int i, int sources)
{
    const struct osn_net_source_cfg *sc = &cfg->src;
    if (sc->nshares != sources || sources < 2 || i < 0 || i >= sources)
        return 1.0 / sources; /* as before the shares: the same bits */
    double sum = 0;
    for (int k = 0; k < sources; k++)
        sum += sc->share[k];
    return sc->share[i] / sum;
}

/* A generated tree's sources (the leaves: fanout^(levels - 1)) or its proxies below the core
 * (fanout + fanout^2 + .. the leaves), or a written tree's (edges, proxies); past
 * OSN_NET_MAX_ELEMS, OSN_NET_MAX_ELEMS + 1 (osn_net_check refuses it). */
static long tree_count(const struct osn_net_cfg *c, bool proxies)
{
    if (c->up) /* a mesh's sources are its proxies, regions x edges */
        return proxies || c->topology == OSN_NET_MESH ? c->proxies : c->edges;
    if (c->levels < 2 || c->fanout < 1)
        return 0;
    long level = 1, sum = 0;
    for (int l = 2; l <= c->levels; l++) {
        level *= c->fanout;
        sum += level;
        if (sum > OSN_NET_MAX_ELEMS)
            return OSN_NET_MAX_ELEMS + 1;
    }
    return proxies ? sum : level;
}

/* A tree's cores: one, or tree_cores; its UASs: one, or tree_uas. */
static int tree_ncores(const struct osn_net_cfg *c)
{
    return c->tree_cores > 1 ? c->tree_cores : 1;
}

static int tree_nuas(const struct osn_net_cfg *c)
{
    return c->tree_uas > 1 && c->up ? c->tree_uas : 1;
}

int osn__net_up(const struct osn_net_cfg *c, int i)
{
    int E = (int)tree_count(c, false), P = (int)tree_count(c, true), core = E + P;
    int C = tree_ncores(c);
    if (i < 0 || i >= core + C)
        return -1;
    if (i >= core) /* a core into the UAS, or its own of several */
        return tree_nuas(c) > 1 ? c->up[i] : core + C;
    if (c->up)
        return c->up[i];
    if (i < E)
        return E + i; /* source j into leaf j */
    /* the levels from the leaves up: level l's proxy k into level l - 1's proxy k / fanout */
    for (int start = E, n = E; n >= 1; start += n, n /= c->fanout)
        if (i < start + n)
            return start + n + (i - start) / c->fanout;
    return -1;
}

int osn_net_tree_next_hop(const struct osn_net_cfg *cfg, int i)
{
    return cfg->topology == OSN_NET_TREE ? osn__net_up(cfg, i) : -1;
}

int osn__net_core_w(const struct osn_net_cfg *c, int i, int to)
{
    int E = (int)tree_count(c, false), P = (int)tree_count(c, true), C = tree_ncores(c);
    if (!tree_like(c) || !c->core_w || i < E || i >= E + P || to < E + P || to >= E + P + C)
        return 0;
    return c->core_w[(size_t)(i - E) * (size_t)C + (size_t)(to - E - P)];
}

int osn_net_role_count(const struct osn_net_cfg *cfg, enum osn_net_role role)
{
    bool fan = cfg->topology == OSN_NET_FANOUT;
    if (tree_like(cfg))
        return role == OSN_NET_ROLE_SOURCE ? (int)tree_count(cfg, false)
               : role == OSN_NET_ROLE_EDGE ? (int)tree_count(cfg, true)
               : role == OSN_NET_ROLE_CORE ? tree_ncores(cfg)
               : role == OSN_NET_ROLE_UAS  ? tree_nuas(cfg)
                                           : 0;
    switch (role) {
    case OSN_NET_ROLE_SOURCE:
    case OSN_NET_ROLE_EDGE:
        return cfg->topology == OSN_NET_FANIN || fan ? cfg->edges : 1;
    case OSN_NET_ROLE_MID:
        return cfg->topology == OSN_NET_TANDEM ? cfg->mids : 0;
    case OSN_NET_ROLE_CORE:
        return fan ? cfg->cores : 1;
    case OSN_NET_ROLE_UAS:
        return 1;
    default:
        return 0;
    }
}

int osn_net_elem_role(const struct osn_net_cfg *cfg, int i, int *k)
{
    if (i < 0)
        return -1;
    for (int role = 0; role < OSN_NET_NROLES; role++) {
        int n = osn_net_role_count(cfg, (enum osn_net_role)role);
        if (i < n) {
            if (k)
                *k = i;
            return role;
        }
        i -= n;
    }
    return -1;
}

int osn_net_elem_index(const struct osn_net_cfg *cfg, enum osn_net_role role, int k)
{
    if ((int)role < 0 || role >= OSN_NET_NROLES || k < 0 || k >= osn_net_role_count(cfg, role))
        return -1;
    for (int r = 0; r < (int)role; r++)
        k += osn_net_role_count(cfg, (enum osn_net_role)r);
    return k;
}

int osn__net_nelem(const struct osn_net_cfg *cfg)
{
    return osn_net_elem_index(cfg, OSN_NET_ROLE_UAS, 0) + osn_net_role_count(cfg, OSN_NET_ROLE_UAS);
}

int osn__net_elems(const struct osn_net_cfg *cfg, char names[][OSN_NET_NAME_LEN], double *capacity)
{
    enum { L = OSN_NET_NAME_LEN };
    int n = osn__net_nelem(cfg), E = osn_net_role_count(cfg, OSN_NET_ROLE_SOURCE);
    for (int i = 0, k = 0; i < n; i++) {
        switch (osn_net_elem_role(cfg, i, &k)) {
        case OSN_NET_ROLE_SOURCE:
            snprintf(names[i], L, E == 1 ? "uac" : "uac%d", k);
            capacity[i] = INFINITY;
            break;
        case OSN_NET_ROLE_EDGE:
            snprintf(names[i], L, E == 1 ? "edge" : "edge%d", k);
            capacity[i] = osn_net_capacity(cfg->edges_own ? &cfg->edge_own[k] : &cfg->edge, 4);
            break;
        case OSN_NET_ROLE_MID:
            snprintf(names[i], L, cfg->mids == 1 ? "mid" : "mid%d", k + 1);
            capacity[i] = osn_net_capacity(cfg->mid_own ? &cfg->mid[k] : &cfg->edge, 4);
            break;
        case OSN_NET_ROLE_CORE:
            snprintf(names[i], L, k == 0 ? "core" : "core%d", k + 1);
            capacity[i] = osn_net_capacity(k == 0 ? &cfg->core : &cfg->more_cores[k - 1], 3);
            break;
        default: /* the UAS */
            snprintf(names[i], L, k == 0 ? "uas" : "uas%d", k + 1);
            capacity[i] = osn_net_capacity(&cfg->uas, 0);
            break;
        }
    }
    /* A topology the user wrote names its elements itself, in this order. */
    for (int i = 0; i < n && i < cfg->named; i++)
        memcpy(names[i], cfg->elem_names[i], L);
    return n;
}

static const struct {
    const char *key, *unit, *meaning;
} measures[OSN_NET_NMEASURES] = {
        {"offered", "1/s", "calls offered by the sources (first attempts)"},
        {"goodput", "1/s", "calls whose 200 reached the UAC before Timer B (a call once)"},
        {"capacity", "1/s", "core call capacity from its cost model"},
        {"setup_delay_mean", "s", "INVITE -> 180 at the UAC, mean"},
        {"setup_delay_p50", "s", "INVITE -> 180, median"},
        {"setup_delay_p95", "s", "INVITE -> 180, 95th percentile"},
        {"setup_delay_p99", "s", "INVITE -> 180, 99th percentile"},
        {"failed", "1/s", "failed calls"},
        {"failed_timeout", "1/s", "failed: Timer B or a 408"},
        {"failed_rejected", "1/s", "failed: 503"},
        {"failed_other", "1/s", "failed: other final response"},
        {"retrans_ratio", "", "core: absorbed retransmissions / new requests"},
        {"admitted", "1/s", "calls the core forwarded to the UAS"},
        {"admitted_failed", "", "failures of admitted calls / admissions (rates in the window)"},
        {"core_util", "", "core CPU busy fraction"},
        {"core_P0", "", "core time in mode 0 (normal)"},
        {"core_P1", "", "core time in mode 1 (overload)"},
        {"core_P2", "", "core time in mode 2 (discard)"},
        {"msg_rate", "1/s", "messages processed by all servers"},
        {"resp_delay_mean", "s", "INVITE -> first 100 Trying at the UAC, mean"},
        {"resp_delay_p50", "s", "INVITE -> first 100 Trying, median"},
        {"resp_delay_p95", "s", "INVITE -> first 100 Trying, 95th percentile"},
        {"resp_delay_p99", "s", "INVITE -> first 100 Trying, 99th percentile"},
        {"no_trying", "1/s", "calls ended without a 100 Trying at the UAC (not in resp_delay)"},
        {"core_overload", "", "core time in overload, P1 + P2"},
        {"core_T_ret", "s", "core mean overload period: (P1 + P2) time / overload onsets"},
        {"retries", "1/s", "INVITE attempts after a call's first (retrials)"},
        {"attempts_per_call", "", "attempts of a call, mean over the calls that ended"},
        {"good_after_0", "1/s", "good calls whose first attempt was good"},
        {"good_after_1", "1/s", "good calls whose good attempt was the 1st retry"},
        {"good_after_2", "1/s", "good calls whose good attempt was the 2nd retry"},
        {"good_after_3", "1/s", "good calls whose good attempt was the 3rd retry or later"},
        {"abandoned", "1/s", "calls whose caller gave up before a final answer (not in failed)"},
        {"cancels", "1/s", "CANCEL requests the callers sent"},
        {"byes_ok", "1/s", "calls the caller ended: its BYE answered 2xx"},
        {"byes_in", "1/s", "calls the callee ended: its BYE answered 200 by the caller"},
        {"shed_local", "1/s",
         "attempts the sources' client halves shed (control.at edge or both), as rejected"},
};

const char *osn_net_measure_key(enum osn_net_measure i)
{
    return measures[i].key;
}
const char *osn_net_measure_unit(enum osn_net_measure i)
{
    return measures[i].unit;
}
const char *osn_net_measure_meaning(enum osn_net_measure i)
{
    return measures[i].meaning;
}

const char *osn_net_elem_measure_key(int i)
{
    static const char *const proc[OSN_NET_NKINDS] = {"invite", "retrans", "response", "ack",
                                                     "bye",    "reject",  "cancel"};
    static const char *const rest[] = {
            "dropped",  "util",        "queue_mean",   "invites_in",  "capacity",      "cancel_fwd",
            "sent_487", "src_offered", "src_admitted", "src_goodput", "src_setup_mean"};
    return i < OSN_NET_E_DROPPED ? proc[i] : rest[i - OSN_NET_E_DROPPED];
}

static double ratio(double a, double b)
{
    return b > 0 ? a / b : NAN;
}

/* Measure i from (pooled) totals. `cap` is the core capacity. */
static double measure(int i, const double *t, double cap)
{
    double T = t[OSN__NT_TIME];
    double fail = t[OSN__NT_FAIL_TIMEOUT] + t[OSN__NT_FAIL_REJECTED] + t[OSN__NT_FAIL_OTHER];
    double mt = t[OSN__NT_MODE0] + t[OSN__NT_MODE1] + t[OSN__NT_MODE2];
    switch (i) {
    case OSN_NET_OFFERED:
        return ratio(t[OSN__NT_STARTED], T);
    case OSN_NET_GOODPUT:
        return ratio(t[OSN__NT_GOOD], T);
    case OSN_NET_CAPACITY:
        return cap;
    case OSN_NET_SETUP_MEAN:
        return ratio(t[OSN__NT_SETUP_SUM], t[OSN__NT_SETUP_N]);
    case OSN_NET_SETUP_P50:
        return osn_uac_delay_quantile(t + OSN__NT_HIST, 0.50);
    case OSN_NET_SETUP_P95:
        return osn_uac_delay_quantile(t + OSN__NT_HIST, 0.95);
    case OSN_NET_SETUP_P99:
        return osn_uac_delay_quantile(t + OSN__NT_HIST, 0.99);
    case OSN_NET_FAILED:
        return ratio(fail, T);
    case OSN_NET_FAILED_TIMEOUT:
        return ratio(t[OSN__NT_FAIL_TIMEOUT], T);
    case OSN_NET_FAILED_REJECTED:
        return ratio(t[OSN__NT_FAIL_REJECTED], T);
    case OSN_NET_FAILED_OTHER:
        return ratio(t[OSN__NT_FAIL_OTHER], T);
    case OSN_NET_RETRANS_RATIO:
        return ratio(t[OSN__NT_CORE_RETX], t[OSN__NT_CORE_NEW]);
    case OSN_NET_ADMITTED:
        return ratio(t[OSN__NT_ADMIT], T);
    case OSN_NET_ADMITTED_TIMEOUT:
        return t[OSN__NT_ADMIT] > 0 ? t[OSN__NT_ADMIT_FAIL] / t[OSN__NT_ADMIT] : NAN;
    case OSN_NET_CORE_UTIL:
        return NAN; /* filled from the element block by the caller */
    case OSN_NET_CORE_P0:
        return ratio(t[OSN__NT_MODE0], mt);
    case OSN_NET_CORE_P1:
        return ratio(t[OSN__NT_MODE1], mt);
    case OSN_NET_CORE_P2:
        return ratio(t[OSN__NT_MODE2], mt);
    case OSN_NET_MSG_RATE:
        return ratio(t[OSN__NT_MSGS], T);
    case OSN_NET_RESP_MEAN:
        return ratio(t[OSN__NT_TRYING_SUM], t[OSN__NT_TRYING_N]);
    case OSN_NET_RESP_P50:
        return osn_uac_delay_quantile(t + OSN__NT_TRYING_HIST, 0.50);
    case OSN_NET_RESP_P95:
        return osn_uac_delay_quantile(t + OSN__NT_TRYING_HIST, 0.95);
    case OSN_NET_RESP_P99:
        return osn_uac_delay_quantile(t + OSN__NT_TRYING_HIST, 0.99);
    case OSN_NET_NO_TRYING:
        return ratio(t[OSN__NT_NO_TRYING], T);
    case OSN_NET_CORE_OVERLOAD:
        return ratio(t[OSN__NT_MODE1] + t[OSN__NT_MODE2], mt);
    case OSN_NET_CORE_TRET:
        return ratio(t[OSN__NT_MODE1] + t[OSN__NT_MODE2], t[OSN__NT_ONSETS]);
    case OSN_NET_RETRIES:
        return ratio(t[OSN__NT_RETRIES], T);
    case OSN_NET_ATTEMPTS_CALL:
        return ratio(t[OSN__NT_ENDED_ATTEMPTS], t[OSN__NT_ENDED]);
    case OSN_NET_GOOD_K0:
    case OSN_NET_GOOD_K1:
    case OSN_NET_GOOD_K2:
    case OSN_NET_GOOD_K3:
        return ratio(t[OSN__NT_GOOD_K0 + (i - OSN_NET_GOOD_K0)], T);
    case OSN_NET_ABANDONED:
        return ratio(t[OSN__NT_ABANDONED], T);
    case OSN_NET_CANCELS:
        return ratio(t[OSN__NT_CANCELS], T);
    case OSN_NET_BYES_OK:
        return ratio(t[OSN__NT_BYES_OK], T);
    case OSN_NET_BYES_IN:
        return ratio(t[OSN__NT_BYES_IN], T);
    case OSN_NET_SHED_LOCAL:
        return ratio(t[OSN__NT_SHED_LOCAL], T);
    }
    return NAN;
}

static double elem_measure(int e, int i, const double *t, const double *cap)
{
    const double *b = t + OSN__NT_ELEM + OSN__NE_N * e;
    double T = t[OSN__NT_TIME];
    if (i < OSN_NET_E_DROPPED)
        return ratio(b[OSN__NE_PROC + i], T);
    switch (i) {
    case OSN_NET_E_DROPPED:
        return ratio(b[OSN__NE_DROPPED], T);
    case OSN_NET_E_UTIL:
        return ratio(b[OSN__NE_BUSY], T);
    case OSN_NET_E_QMEAN:
        return ratio(b[OSN__NE_AREA], T);
    case OSN_NET_E_OFFERED:
        return ratio(b[OSN__NE_NEWINV], T);
    case OSN_NET_E_CAPACITY:
        return cap[e];
    case OSN_NET_E_CANCEL_FWD:
        return ratio(b[OSN__NE_CANCEL_FWD], T);
    case OSN_NET_E_487:
        return ratio(b[OSN__NE_487], T);
    /* A source is the element of unbounded capacity (osn__net_elems); the others have none. */
    case OSN_NET_E_SRC_OFFERED:
        return isinf(cap[e]) ? ratio(b[OSN__NE_SRC_STARTED], T) : NAN;
    case OSN_NET_E_SRC_ADMITTED:
        return isinf(cap[e]) ? ratio(b[OSN__NE_SRC_ADMIT], T) : NAN;
    case OSN_NET_E_SRC_GOODPUT:
        return isinf(cap[e]) ? ratio(b[OSN__NE_SRC_GOOD], T) : NAN;
    case OSN_NET_E_SRC_SETUP:
        return isinf(cap[e]) ? ratio(b[OSN__NE_SRC_SETUP_SUM], b[OSN__NE_SRC_SETUP_N]) : NAN;
    }
    return NAN;
}

int osn__net_link_hop(const struct osn_net_cfg *cfg, int from, int to, int *next0, int *nnext)
{
    if (tree_like(cfg)) { /* one next hop each (or a choice of cores); a link's hop: the call's */
        int first_uas = osn_net_elem_index(cfg, OSN_NET_ROLE_UAS, 0);
        int up = from < first_uas ? osn__net_up(cfg, from) : -1;
        if (next0)
            *next0 = up;
        if (nnext)
            *nnext = up >= 0;
        return up >= 0 && (to == up || osn__net_core_w(cfg, from, to) > 0) ? 0 : -1;
    }
    bool fan = cfg->topology == OSN_NET_FANOUT;
    int E = cfg->topology == OSN_NET_FANIN || fan ? cfg->edges : 1;
    int nelem = osn__net_nelem(cfg), uas = nelem - 1, ncores = fan ? cfg->cores : 1;
    int core = uas - ncores, nhop = cfg->topology == OSN_NET_TANDEM ? 3 + cfg->mids : 3;
    int first, n = 1, hop;

    if (from < 0 || from >= uas)
        return -1;
    if (from < E) /* a source into its edge */
        first = E + from, hop = 0;
    else if (from < 2 * E) /* an edge into the first mid, the core or a fanout's cores */
        first = 2 * E, n = fan ? ncores : 1, hop = 1;
    else if (from < core) /* a tandem's mid into the next */
        first = from + 1, hop = from;
    else
        first = uas, hop = nhop - 1;
    if (next0)
        *next0 = first;
    if (nnext)
        *nnext = n;
    return to >= first && to < first + n ? hop : -1;
}

/* The key at fault in a tree's shape, or NULL: its size, each source's path (MAXHOP hops at
 * most, into a proxy below the core), the control (a server half at the core only). */
static const char *tree_bad(const struct osn_net_cfg *c, const char **why)
{
    const char *key = c->up ? "element" : "net.levels";
    long E = tree_count(c, false), P = tree_count(c, true);
    if (!c->up && !(c->levels >= 2 && c->levels <= MAXHOP - 1))
        *why = "a tree has 2 .. 7 proxy levels (a call's path has 8 hops at most)";
    else if (!c->up && c->fanout < 1)
        key = "net.fanout", *why = "a tree's proxies have 1 or more children";
    else if (E < 1 || E > OSN_NET_MAX_EDGES)
        key = c->up ? key : "net.fanout",
        *why = "a tree has 1 .. " STR(OSN_NET_MAX_EDGES) " sources (net.edges' bound)";
    else if (c->tree_cores > OSN_NET_MAX_CORES)
        key = c->regions ? "net.regions" : key,
        *why = "a tree has 1 .. " STR(OSN_NET_MAX_CORES) " cores";
    else if (P < 1 || E + P + tree_ncores(c) + tree_nuas(c) > OSN_NET_MAX_ELEMS)
        key = c->up ? key : "net.fanout",
        *why = "a tree has at most " STR(OSN_NET_MAX_ELEMS) " elements";
    else if (c->ctl_at != OSN_NET_CTL_AT_CORE)
        key = "control.at", *why = "a tree carries control at the core only (docs/scale.md)";
    else
        key = NULL;
    for (int i = 0; !key && i < E; i++) {
        int at = osn__net_up(c, i), hops = 1;
        if (at < E || at >= E + P)
            key = "element", *why = "a tree's source sends to a proxy below the core";
        for (; !key && at >= E && at < E + P && hops <= MAXHOP; hops++)
            at = osn__net_up(c, at);
        bool core = at >= E + P && at < E + P + tree_ncores(c);
        if (!key && (!core || hops + 1 > MAXHOP))
            key = "element", *why = core ? "a call's path in a tree has 8 hops at most (MAXHOP)"
                                         : "a tree's proxies lead to its core";
    }
    return key;
}

static bool shares_ok(const struct osn_net_cfg *c)
{
    if (c->src.nshares < 0 || c->src.nshares > OSN_NET_MAX_EDGES || !c->src.share)
        return false;
    for (int i = 0; i < c->src.nshares; i++)
        if (!(c->src.share[i] > 0 && isfinite(c->src.share[i])))
            return false;
    return true;
}

/* One check per key, in the order of the scenario sections: longer than 60 lines, read one row at
 * a time. The first failing key is reported. */
int osn_net_check(const struct osn_net_cfg *c, const char **bad_key, char *msg, size_t msgsize)
{
    const char *key = NULL, *why = NULL;

    if (!c)
        return OSN_EINVAL;
    if (!(isfinite(c->time) && c->time > 0))
        key = "net.time", why = "the simulated time must be > 0";
    else if (!(isfinite(c->warmup) && c->warmup >= 0))
        key = "net.warmup", why = "the warm-up must be >= 0";
    else if (c->replications < 1 || c->replications > 100000)
        key = "net.replications", why = "replications must be in 1 .. 100000";
    else if (c->threads < 1 || c->threads > 256)
        key = "--threads", why = "threads must be in 1 .. 256";
    else if (c->split && !(c->split->parts >= 1 && c->split->part >= 0 &&
                           c->split->part < c->split->parts && c->split->exchange))
        key = "split", why = "the processes' share of the replications is malformed";
    else if (tree_like(c) && (key = tree_bad(c, &why)))
        ;
    else if (c->edges < 1 || c->edges > OSN_NET_MAX_EDGES)
        key = "net.edges", why = "edges must be in 1 .. " STR(OSN_NET_MAX_EDGES);
    else if (c->topology == OSN_NET_TANDEM && (c->mids < 1 || c->mids > OSN_NET_MAX_MIDS))
        key = "net.topology", why = "a tandem has 1 .. " STR(OSN_NET_MAX_MIDS) " mid proxies";
    else if (c->topology == OSN_NET_FANOUT && (c->cores < 2 || c->cores > OSN_NET_MAX_CORES))
        key = "net.cores", why = "a fanout has 2 .. " STR(OSN_NET_MAX_CORES) " cores";
    else if (c->keep && !(c->keep->n >= 0 && c->keep->n <= c->replications))
        key = "net.replications", why = "fewer replications than those kept from an earlier run";
    else if (c->keep && c->keep->n > 0 && c->keep->ntot != osn_net_reps_ntot(c))
        key = "net.replications",
        why = "the replications kept from an earlier run are not this network's";
    else if (c->topology == OSN_NET_FANOUT && c->core_weights_given &&
             c->core_weights_given != c->cores)
        key = "server edge.next_hop_weights", why = "one weight per core (net.cores)";
    else if (c->src.nshares && c->topology != OSN_NET_COLLAPSE && c->topology != OSN_NET_TANDEM &&
             c->src.nshares != osn_net_role_count(c, OSN_NET_ROLE_SOURCE))
        key = "source.shares", why = "one share per edge (net.edges)";
    else if (c->src.nshares && !shares_ok(c))
        key = "source.shares", why = "each share must be a finite number > 0";
    else if (c->topology == OSN_NET_FANOUT && !(c->down_time >= 0 && isfinite(c->down_time)))
        key = "server edge.down_time", why = "must be a finite number of seconds >= 0";
    else if (!(c->level > 0 && c->level < 1))
        key = "net.level", why = "the confidence level must be in (0, 1)";
    else if (c->ctl_at == OSN_NET_CTL_AT_BOTH && c->topology == OSN_NET_TANDEM)
        key = "control.at", why = "both is not carried out in a tandem: its mid proxy sits "
                                  "between the edge's server half and the core's (use core or "
                                  "edge)";
    else if ((unsigned)c->ctl_at > OSN_NET_CTL_AT_BOTH)
        key = "control.at", why = "must be core, edge or both";
    else if (!(c->src.rate >= 0 && isfinite(c->src.rate)))
        key = "source.rate", why = "the call rate must be >= 0";
    else if (c->src.process != OSN_NET_MMPP && !(c->src.rate > 0))
        key = "source.rate", why = "the call rate must be > 0 (Poisson and profile sources)";
    else if (!(c->src.hold > 0 && isfinite(c->src.hold)))
        key = "source.hold", why = "the mean hold time must be > 0";
    else if (c->src.process == OSN_NET_MMPP &&
             !(c->src.mmpp_switch[0] > 0 && c->src.mmpp_switch[1] > 0))
        key = "source.mmpp_switch", why = "both MMPP switch rates must be > 0";
    else if (c->src.nsteps < 0 || c->src.nsteps > OSN_NET_MAX_STEPS)
        key = "source.steps", why = "at most 32 steps";
    else if (c->src.burst_len > 0 && !(c->src.burst_factor >= 0))
        key = "source.burst_factor", why = "the burst factor must be >= 0";
    else if (!(c->src.retry_prob >= 0 && c->src.retry_prob <= 1))
        key = "source.retry_prob", why = "the retry probability must be in [0, 1]";
    else if (!(c->src.callee_hangs_up >= 0 && c->src.callee_hangs_up <= 1))
        key = "source.callee_hangs_up", why = "the fraction must be in [0, 1]";
    else if (c->src.max_retries < 0 || c->src.max_retries > 100)
        key = "source.max_retries", why = "max_retries must be in 0 .. 100";
    else if (!(c->src.retry_delay >= 0 && isfinite(c->src.retry_delay)))
        key = "source.retry_delay", why = "the mean retry delay must be >= 0";
    else if (c->src.retry_delay_law == OSN_NET_RETRY_UNIFORM &&
             !(c->src.retry_delay_cv >= 0 && c->src.retry_delay_cv <= 1 / sqrt(3)))
        key = "source.retry_delay_cv",
        why = "a uniform retry delay needs a cv in [0, 1/sqrt(3)] (0.577)";
    else if (c->src.retry_delay_law == OSN_NET_RETRY_LOGNORMAL &&
             !(c->src.retry_delay_cv > 0 && isfinite(c->src.retry_delay_cv)))
        key = "source.retry_delay_cv", why = "a lognormal retry delay needs a cv > 0";
    else if (c->src.patience != OSN_NET_PATIENCE_NONE &&
             !(c->src.patience_mean > 0 && isfinite(c->src.patience_mean)))
        key = "source.patience_mean", why = "the mean patience must be > 0";
    else if (c->src.patience == OSN_NET_PATIENCE_LOGNORMAL &&
             !(c->src.patience_cv > 0 && isfinite(c->src.patience_cv)))
        key = "source.patience_cv", why = "a lognormal patience needs a cv > 0";
    else if (c->src.process == OSN_NET_BULK && !(c->src.bulk_size >= 1))
        key = "source.bulk_size", why = "a batch holds at least 1 call";
    else if (!(c->sip.t1 > 0 && isfinite(c->sip.t1)))
        key = "sip.t1", why = "timers must satisfy 0 < T1 <= T2 and T4 > 0";
    else if (!(c->sip.t2 >= c->sip.t1 && isfinite(c->sip.t2)))
        key = "sip.t2", why = "timers must satisfy 0 < T1 <= T2 and T4 > 0";
    else if (!(c->sip.t4 > 0 && isfinite(c->sip.t4)))
        key = "sip.t4", why = "timers must satisfy 0 < T1 <= T2 and T4 > 0";
    for (int i = 1; !key && i < c->src.nsteps; i++)
        if (!(c->src.step_t[i] > c->src.step_t[i - 1]))
            key = "source.steps", why = "step times must increase";
    if (!key) {
        /* The servers' sections: edge, core, uas, then a fanout's core2, core3, ..., or the
         * mids of a written chain (their own costs: mid_own), each blamed on its element's
         * `server` key, the [server NAME] it names being the file's. */
        static _Thread_local char buf[3][48]; /* *bad_key outlives the call: the key names */
        int nmid = c->topology == OSN_NET_TANDEM && c->mid_own ? c->mids : 0;
        int nedge = c->edges_own == osn_net_role_count(c, OSN_NET_ROLE_EDGE) ? c->edges_own : 0;
        if ((c->edges_own && !nedge) || (nedge && !c->edge_own))
            key = "server edge.buffer", why = "edges of their own costs: one per edge";
        int nsv = 3 + (c->topology == OSN_NET_FANOUT ? c->cores - 1 : nmid) + nedge;
        for (int i = 0; i < nsv && !key; i++) {
            static const char *const secs[] = {"edge", "core", "uas"};
            int own = i - (nsv - nedge); /* the edges of their own come last */
            bool mid = i >= 3 && nmid && own < 0;
            const struct osn_net_server_cfg *sv = own >= 0 ? &c->edge_own[own]
                                                  : i == 0 ? &c->edge
                                                  : i == 1 ? &c->core
                                                  : i == 2 ? &c->uas
                                                  : mid    ? &c->mid[i - 3]
                                                           : &c->more_cores[i - 3];
            char sec[16];
            if (i < 3)
                snprintf(sec, sizeof sec, "%s", secs[i]);
            else
                snprintf(sec, sizeof sec, "core%d", i - 1);
            snprintf(buf[0], sizeof buf[0], "server %s.buffer", sec);
            snprintf(buf[1], sizeof buf[1], "server %s.outage_start", sec);
            snprintf(buf[2], sizeof buf[2], "server %s.slowdown_%s", sec,
                     !(sv->slowdown_factor > 0 && sv->slowdown_factor <= 1) ? "factor" : "start");
            /* a mid's or an edge's of its own: its element's name (the simulator's order) */
            int at = mid        ? osn_net_elem_index(c, OSN_NET_ROLE_MID, i - 3)
                     : own >= 0 ? osn_net_elem_index(c, OSN_NET_ROLE_EDGE, own)
                                : -1;
            if (mid || own >= 0)
                for (int b = 0; b < 3; b++)
                    snprintf(buf[b], sizeof buf[b], "element %.*s.server", OSN_NET_NAME_LEN,
                             at >= 0 && c->named > at ? c->elem_names[at]
                             : mid                    ? "mid"
                                                      : "edge");
            if (sv->buffer < 1)
                key = buf[0], why = "the buffer must hold at least 1 message";
            else if (!(sv->outage_start >= 0 && isfinite(sv->outage_start)) ||
                     !(sv->outage_end >= 0))
                key = buf[1], why = "an outage starts and ends at times >= 0 (s)";
            else if (sv->slowdown_end > sv->slowdown_start &&
                     !(sv->slowdown_factor > 0 && sv->slowdown_factor <= 1))
                key = buf[2], why = "the speed in a slowdown is a fraction in (0, 1]";
            else if (!(sv->slowdown_start >= 0 && isfinite(sv->slowdown_start)) ||
                     !(sv->slowdown_end >= 0))
                key = buf[2], why = "a slowdown starts and ends at times >= 0 (s)";
            for (int k = 0; k < OSN_NET_NKINDS && !key; k++)
                if (!(sv->cost[k] >= 0 && isfinite(sv->cost[k])))
                    key = buf[0], why = "costs must be >= 0 (s)";
        }
        const struct osn_net_link_cfg *lk[] = {&c->access, &c->trunk, &c->uas_link};
        static const char *const lnames[][2] = {{"link access.delay", "link access.loss"},
                                                {"link trunk.delay", "link trunk.loss"},
                                                {"link uas.delay", "link uas.loss"}};
        for (int i = 0; i < 3 && !key; i++)
            if (!(lk[i]->delay >= 0 && isfinite(lk[i]->delay)))
                key = lnames[i][0], why = "links need delay >= 0 and loss in [0, 1)";
            else if (!(lk[i]->loss >= 0 && lk[i]->loss < 1))
                key = lnames[i][1], why = "links need delay >= 0 and loss in [0, 1)";
        /* A written topology's links of their own (src/io/net_topo.c names them [link A-B]). */
        if (!key && (c->nlinks < 0 || (c->nlinks && !c->link)))
            key = "link", why = "links of their own that the configuration does not hold";
        for (int i = 0; i < c->nlinks && !key; i++) {
            const struct osn_net_link_own *l = &c->link[i];
            if (osn__net_link_hop(c, l->from, l->to, NULL, NULL) < 0)
                key = "link", why = "a link of its own joins elements the network does not join";
            else if (!(l->link.delay >= 0 && isfinite(l->link.delay)) ||
                     !(l->link.loss >= 0 && l->link.loss < 1))
                key = "link", why = "links need delay >= 0 and loss in [0, 1)";
        }
    }
    if (!key)
        return 0;
    if (bad_key)
        *bad_key = key;
    if (msg && msgsize)
        snprintf(msg, msgsize, "%s", why);
    return OSN_EINVAL;
}

/* The replications' totals: one array of records of `size` bytes, replication i's at i * size. */
struct reps {
    char *p;
    size_t size;
    int ntot;
};

static struct osn__net_rep *rep_at(const struct reps *r, long i)
{
    return (struct osn__net_rep *)(r->p + (size_t)i * r->size);
}

struct job {
    const struct osn_net_cfg *cfg;
    struct reps reps;
    double t0; /* wall clock at the start */
};

/* Replication i (osn/study.h) into totals of its own (freed once copied): reps[i] shares cache
 * lines with its neighbours, which other threads write as often. */
static int one_rep(void *ctx, long i, struct osn_rng *rng, _Atomic double *now, char *msg,
                   size_t msgsize)
{
    const struct job *j = ctx;
    struct osn__net_rep *rep = malloc(j->reps.size);
    if (!rep)
        return OSN_ENOMEM; /* the runner records it; the caller says "out of memory" */
    int err = osn__net_rep_run(j->cfg, rng, rep, i == 0 ? j->cfg->trace : NULL, now, msg, msgsize);
    if (!err)
        memcpy(rep_at(&j->reps, i), rep, j->reps.size);
    free(rep);
    return err;
}

static void report(void *ctx, double done)
{
    const struct job *j = ctx;
    j->cfg->progress(done, osn_wall_s() - j->t0, j->cfg->progress_arg);
}

/* The value of estimate k from the totals t. */
static double f_at(int k, int core, const double *t, const double *cap)
{
    if (k == OSN_NET_CORE_UTIL)
        return elem_measure(core, OSN_NET_E_UTIL, t, cap);
    if (k < OSN_NET_NMEASURES)
        return measure(k, t, cap[core]);
    k -= OSN_NET_NMEASURES;
    return elem_measure(k / OSN_NET_E_NMEASURES, k % OSN_NET_E_NMEASURES, t, cap);
}

/* Estimates est[0 .. n-1] (estimate k0 + m of the result at est[m]): each value f(pooled) and
 * its jackknife half-width from loo (n x nrep leave-one-out values, estimate by estimate). */
static void estimate(struct osn_net_est *est, int k0, int n, int core, int nrep, double level,
                     const double *pooled, const double *loo, const double *cap)
{
    for (int m = 0; m < n; m++) {
        est[m].value = f_at(k0 + m, core, pooled, cap);
        est[m].hw =
                nrep >= 2 && isfinite(est[m].value)
                        ? osn_stats_jackknife_halfwidth(loo + (size_t)m * (size_t)nrep, nrep, level)
                        : NAN;
        est[m].n = nrep;
    }
}

/* Every estimate's value f(pooled) and jackknife half-width. The network's measures read the
 * network's totals and the core's block, an element's measures its own block and the time: the
 * leave-one-out totals are formed for those alone, so the work and the memory (loo: nrep values
 * of each of at most OSN_NET_NMEASURES estimates at a time) grow with the elements once, not
 * times the replications. */
static void estimate_all(struct osn_net_result *out, const struct reps *reps, int nrep,
                         double level, const double *pooled, double *part, double *loo,
                         const double *cap, int core)
{
    /* A fanout's first core (core): the network's core measures are its own (found by
     * position, as the user may name it). */
    const size_t cb = OSN__NT_ELEM + (size_t)OSN__NE_N * (size_t)core;
    for (int i = 0; nrep >= 2 && i < nrep; i++) {
        const double *t = rep_at(reps, i)->tot;
        for (size_t k = 0; k < OSN__NT_ELEM; k++)
            part[k] = pooled[k] - t[k];
        for (size_t k = cb; k < cb + OSN__NE_N; k++)
            part[k] = pooled[k] - t[k];
        for (int k = 0; k < OSN_NET_NMEASURES; k++)
            loo[(size_t)k * (size_t)nrep + (size_t)i] = f_at(k, core, part, cap);
    }
    estimate(out->est, 0, OSN_NET_NMEASURES, core, nrep, level, pooled, loo, cap);
    for (int e = 0; e < out->nelem; e++) {
        const size_t b = OSN__NT_ELEM + (size_t)OSN__NE_N * (size_t)e;
        const int k0 = OSN_NET_NMEASURES + e * OSN_NET_E_NMEASURES;
        for (int i = 0; nrep >= 2 && i < nrep; i++) {
            const double *t = rep_at(reps, i)->tot;
            part[OSN__NT_TIME] = pooled[OSN__NT_TIME] - t[OSN__NT_TIME];
            for (size_t k = b; k < b + OSN__NE_N; k++)
                part[k] = pooled[k] - t[k];
            for (int m = 0; m < OSN_NET_E_NMEASURES; m++)
                loo[(size_t)m * (size_t)nrep + (size_t)i] = f_at(k0 + m, core, part, cap);
        }
        estimate(out->elem[e], k0, OSN_NET_E_NMEASURES, core, nrep, level, pooled, loo, cap);
    }
}

/* The replications' totals added up, in replication order (the order fixes the sums' bits). */
static void pool(struct osn_net_result *out, const struct reps *reps, int n, double *pooled)
{
    for (int i = 0; i < n; i++) {
        const struct osn__net_rep *r = rep_at(reps, i);
        for (int k = 0; k < reps->ntot; k++)
            pooled[k] += r->tot[k];
        out->events += r->events;
        out->messages += r->messages;
    }
}

int osn_net_reps_ntot(const struct osn_net_cfg *cfg)
{
    return osn__net_ntot(osn__net_nelem(cfg));
}

/* The kept replications 0 .. have-1 into reps, before the others run. */
static void take_kept(const struct osn_reps *keep, const struct reps *reps, long have)
{
    for (long i = 0; i < have; i++) {
        struct osn__net_rep *r = rep_at(reps, i);
        memcpy(r->tot, keep->tot + (size_t)i * (size_t)reps->ntot,
               (size_t)reps->ntot * sizeof *r->tot);
        r->events = keep->events[i];
        r->messages = keep->messages[i];
    }
}

/* Every replication of reps into keep, which then holds n; 0 or OSN_ENOMEM. */
static int give_kept(struct osn_reps *keep, const struct reps *reps, long n)
{
    if (osn_reps_reserve(keep, n, reps->ntot) != 0)
        return OSN_ENOMEM;
    for (long i = keep->n; i < n; i++) {
        const struct osn__net_rep *r = rep_at(reps, i);
        memcpy(keep->tot + (size_t)i * (size_t)reps->ntot, r->tot,
               (size_t)reps->ntot * sizeof *r->tot);
        keep->events[i] = r->events;
        keep->messages[i] = r->messages;
    }
    keep->n = n;
    return 0;
}

void osn_net_result_release(struct osn_net_result *r)
{
    if (!r)
        return;
    free(r->elem_name);
    free(r->elem);
    r->elem_name = NULL;
    r->elem = NULL;
    r->nelem = 0;
}

int osn_net_run(const struct osn_net_cfg *cfg, struct osn_net_result *out, char *msg,
                size_t msgsize)
{
    struct job j = {0};
    struct osn_study_reps par = {0};
    double *cap = NULL, *pooled = NULL, *part = NULL, *loo = NULL;
    int err;

    if (!out)
        return OSN_EINVAL;
    memset(out, 0, sizeof *out);
    err = osn_net_check(cfg, NULL, msg, msgsize);
    if (err)
        return err;
    const double t0 = osn_wall_s();
    size_t n = (size_t)cfg->replications, nelem = (size_t)osn__net_nelem(cfg);
    j.cfg = cfg;
    j.reps.ntot = osn_net_reps_ntot(cfg);
    j.reps.size = osn__net_rep_size(j.reps.ntot);
    j.reps.p = calloc(n, j.reps.size);
    pooled = calloc((size_t)j.reps.ntot, sizeof *pooled);
    part = calloc((size_t)j.reps.ntot, sizeof *part);
    cap = calloc(nelem, sizeof *cap);
    out->elem_name = calloc(nelem, sizeof *out->elem_name);
    out->elem = calloc(nelem, sizeof *out->elem);
    loo = calloc(n * (size_t)OSN_NET_NMEASURES, sizeof *loo);
    err = OSN_ENOMEM;
    if (!j.reps.p || !pooled || !part || !cap || !out->elem_name || !out->elem || !loo)
        goto out;
    out->nelem = osn__net_elems(cfg, out->elem_name, cap);
    j.t0 = t0;
    par = (struct osn_study_reps){.n = cfg->replications,
                                  .seed = cfg->seed,
                                  .threads = cfg->threads,
                                  .have = cfg->keep ? cfg->keep->n : 0,
                                  .split = cfg->split,
                                  .rep = one_rep,
                                  .ctx = &j,
                                  .progress = cfg->progress ? report : NULL,
                                  .span = cfg->warmup + cfg->time};
    take_kept(cfg->keep, &j.reps, par.have);
    err = osn_study_reps_run(&par);
    if (err) {
        if (msg && msgsize)
            snprintf(msg, msgsize, "%s", par.msg[0] ? par.msg : osn_strerror(err));
        goto out;
    }
    if (cfg->split && cfg->split->parts > 1 && cfg->replications > par.have &&
        cfg->split->exchange(cfg->split->arg, rep_at(&j.reps, par.have),
                             cfg->replications - par.have, j.reps.size, cfg->split->parts) != 0) {
        err = OSN_EIO;
        if (msg && msgsize)
            snprintf(msg, msgsize, "the replications could not be exchanged between processes");
        goto out;
    }
    if (cfg->keep) {
        if ((err = give_kept(cfg->keep, &j.reps, cfg->replications)) != 0)
            goto out;
        cfg->keep->ran = par.ran;
    }
    pool(out, &j.reps, cfg->replications, pooled);
    estimate_all(out, &j.reps, cfg->replications, cfg->level, pooled, part, loo, cap,
                 osn_net_elem_index(cfg, OSN_NET_ROLE_CORE, 0));
    for (int i = 0; cfg->rep_measures && i < cfg->replications; i++)
        for (int k = 0; k < OSN_NET_NMEASURES; k++)
            cfg->rep_measures[(size_t)i * OSN_NET_NMEASURES + (size_t)k] =
                    f_at(k, osn_net_elem_index(cfg, OSN_NET_ROLE_UAS, 0) - 1,
                         rep_at(&j.reps, i)->tot, cap); /* the last core, not a UAS */
    out->replications = cfg->replications;
    out->level = cfg->level;
    out->wall_s = osn_wall_s() - t0;
    uint64_t kept = 0; /* the kept replications' messages were not processed by this run */
    for (long i = 0; i < par.have; i++)
        kept += rep_at(&j.reps, i)->messages;
    out->msgs_per_s = out->wall_s > 0 ? (double)(out->messages - kept) / out->wall_s : NAN;
out:
    if (err == OSN_ENOMEM && msg && msgsize)
        snprintf(msg, msgsize, "out of memory");
    if (err)
        osn_net_result_release(out);
    free(j.reps.p);
    free(pooled);
    free(part);
    free(cap);
    free(loo);
    return err;
}

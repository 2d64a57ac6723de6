/*
 * The SIP network simulator: UAC sources, stateful proxies and a UAS joined by links with a
 * one-way delay and an optional loss, message by message, over UDP.
 *
 * Every hop runs the RFC 3261 transaction machines of src/sip/ (osn/sip.h) in virtual time:
 * the sender of a request holds a client transaction, the receiver a server transaction, so
 * retransmissions (Timers A, E, G), timeouts (B, F, H) and absorbed copies happen exactly as the
 * RFC says. Each proxy and the UAS is a server with one CPU: a FIFO (two queues under prsm) of
 * at most `buffer` messages, a processing cost per message kind, and messages that find the
 * buffer full are lost. The overload controllers of src/ctl/ (osn/ctl.h) are wired hop by hop:
 * the server half at the core (the bottleneck), the client half at each of its upstream
 * neighbours, feedback carried in the top-Via `oc` parameters of the core's responses.
 *
 * Topologies (all calls end at one UAS):
 *   collapse  source -> edge -> core -> UAS
 *   tandem    source -> edge -> mid -> core -> UAS   (mid uses the edge's costs; a chain the
 *             user writes has up to OSN_NET_MAX_MIDS mids, each with costs of its own)
 *   fanin     N x (source -> edge) -> core -> UAS    (each source offers rate / N)
 *   fanout    N x (source -> edge) -> M cores -> UAS  (every edge forwards to every core: one
 *             edge is a fan-out, two a mesh; the cores' costs are [server core], [server
 *             core2], ...; each edge chooses a core per new INVITE by the element's several-next-
 *             hops decision, src/elem/hops.c, with a client half per core; a call's ACK, BYE
 *             and CANCEL follow its INVITE)
 *
 * A call: INVITE -> 100 (hop by hop) -> 180 -> 200 -> ACK, a hold time, BYE -> 200. A call is
 * good (goodput) when its 200 reaches the UAC within 64*T1 of the first INVITE, i.e. before the
 * UAC's Timer B; it fails as timed out (Timer B, or a 408 a proxy sent on its own Timer B),
 * rejected (a 503) or other; or, when its caller gave up first (source.patience), it was
 * abandoned: the caller CANCELs (RFC 3261 9.1) and the CANCEL crosses the proxies like any
 * request. Measures count events inside the observation window (after the
 * warm-up), so rates are steady-state rates without a drain phase.
 *
 * Replications follow src/sim/run.c: stream i of the master seed for replication i, totals per
 * replication, estimates from pooled totals with jackknife half-widths.
 */
#ifndef OSN_NET_H
#define OSN_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "osn/ctl.h"
#include "osn/elem.h"
#include "osn/reps.h"
#include "osn/sip.h"
#include "osn/split.h"

/* OSN_NET_TREE: proxies each with one next hop, into one core, into the UAS; sources enter at
 * any proxy but the core (osn_net_cfg.up, or the generated tree of net.levels and net.fanout).
 * Its proxies into the cores may each choose among several (osn_net_cfg.core_w: a graph written
 * so, or `topology = mesh`, which the scenario reader turns into such a tree). */
enum osn_net_topology {
    OSN_NET_COLLAPSE,
    OSN_NET_TANDEM,
    OSN_NET_FANIN,
    OSN_NET_FANOUT,
    OSN_NET_TREE,
    /* `topology = mesh`: net.regions regions of net.edges edges, each region's core; every
     * edge chooses among the cores (its own by net.local_share). The reader generates the tree
     * it is (osn_net_cfg.up, core_w, proxies, tree_cores), which the simulator runs as every
     * OSN_NET_TREE; `edges` stays the edges of a region (the sources are regions x edges). */
    OSN_NET_MESH
};

/* [control] at: the elements that have the controller's server half. Each server half's upstream
 * neighbours have the client halves toward it: the core's are the edges, an edge's are its
 * sources (the UACs: RFC 7339 5.3 at the caller). */
enum osn_net_ctl_at {
    OSN_NET_CTL_AT_CORE, /* the core(s) only: edges are clients (the default, as before) */
    OSN_NET_CTL_AT_EDGE, /* the edges only: sources are clients, the core runs no control */
    OSN_NET_CTL_AT_BOTH, /* the cores and the edges: edges are both, sources are clients */
};

/* Message kinds, for processing costs and counters: the elements' (osn/elem.h). */
enum osn_net_kind {
    OSN_NET_K_INVITE = OSN_ELEM_K_INVITE, /* new INVITE */
    OSN_NET_K_RETX = OSN_ELEM_K_RETX,     /* retransmitted request absorbed by a server txn */
    OSN_NET_K_RESP = OSN_ELEM_K_RESP,     /* any response */
    OSN_NET_K_ACK = OSN_ELEM_K_ACK,
    OSN_NET_K_BYE = OSN_ELEM_K_BYE,
    OSN_NET_K_REJECT = OSN_ELEM_K_REJECT, /* a new INVITE answered with 503 by the controller */
    OSN_NET_K_CANCEL = OSN_ELEM_K_CANCEL, /* a new CANCEL */
    OSN_NET_NKINDS = OSN_ELEM_NKINDS
};

/* Call arrival processes of a source. */
enum osn_net_process {
    OSN_NET_POISSON,
    OSN_NET_MMPP,
    OSN_NET_PROFILE,
    OSN_NET_BULK, /* batches of bulk_size calls at one instant, rate / bulk_size batches/s */
};

/* Laws of the wait before a retry (mean source.retry_delay). */
enum osn_net_retry_law {
    OSN_NET_RETRY_EXP,
    OSN_NET_RETRY_DET,
    OSN_NET_RETRY_UNIFORM,   /* coefficient of variation retry_delay_cv <= 1/sqrt(3) */
    OSN_NET_RETRY_LOGNORMAL, /* coefficient of variation retry_delay_cv > 0 */
};

/* Laws of a caller's patience (mean source.patience_mean): how long it waits for a final
 * answer before it gives up (osn_uac_on_patience). */
enum osn_net_patience_law {
    OSN_NET_PATIENCE_NONE, /* callers never give up */
    OSN_NET_PATIENCE_EXP,
    OSN_NET_PATIENCE_DET,
    OSN_NET_PATIENCE_LOGNORMAL, /* coefficient of variation patience_cv > 0 */
};

#define OSN_NET_MAX_STEPS 32
/* Values the key source.shares takes at most (a list key's bound, src/ini/keys.c): a built-in
 * fanin or fanout of more edges shares the rate equally. The shares themselves are allocated
 * for the scenario (osn_net_source_cfg.share), so a written topology's sources of rates of
 * their own ([source NAME] rate) are bounded by net.edges' OSN_NET_MAX_EDGES, not by this. */
#define OSN_NET_MAX_SHARES 64
/* Edges of a fanin or fanout at most (net.edges). No array is sized by it: the elements, their
 * totals in each replication and their results are allocated for the scenario, so what bounds a
 * network is memory (docs/performance.md, "The scale table": 1.8 KB per element while it runs,
 * measured, and 128 bytes per element in each replication's totals, 16 doubles) and the calls in
 * flight. The simulator names an element in 16 bits (its messages and transactions), which allows
 * up to 32,766 edges; the key stops at 16,384 (32,771 elements, about 60 MB of elements), a power
 * of two below that bound, four times the largest network measured. */
#define OSN_NET_MAX_EDGES 16384
/* Cores of a fanout at most (net.cores), each with a scenario section of its own past the first
 * ([server core2] .. [server coreN]). The elements, an edge's choice among its cores and the
 * results are allocated for the scenario; the configuration keeps each core's costs by value
 * (more_cores, 96 bytes a core, 6 KB in all), so that it stays a plain struct the callers copy.
 * What bounds it: a forwarded INVITE names its core in 6 bits of its branch (src/sim/net_int.h),
 * and an edge's choice marks the servers it asked in 64 bits (OSN_ELEM_HOPS_MAX). */
#define OSN_NET_MAX_CORES 63

struct osn_net_source_cfg {
    enum osn_net_process process;
    double rate;           /* calls/s offered in total (Poisson; profile: before its first step) */
    double mmpp_rate[2];   /* MMPP: rate in phase 0 and 1 (calls/s) */
    double mmpp_switch[2]; /* MMPP: rate of leaving phase 0 and 1 (1/s) */
    int nsteps;            /* profile: rate steps[i] from step_t[i] on (piecewise constant) */
    double step_t[OSN_NET_MAX_STEPS], step_rate[OSN_NET_MAX_STEPS];
    double burst_t, burst_len, burst_factor; /* profile: rate x factor in [t, t + len) */
    double hold;                             /* mean call hold time (s), exponential */
    /* Retrials (osn_uac_retry): after a 503 or a timeout, retry with probability retry_prob
     * after a draw of the retry delay law (mean retry_delay s; cv for uniform and lognormal),
     * or at least the 503's Retry-After when honour_retry_after, at most max_retries times. */
    double retry_prob;
    double retry_delay, retry_delay_cv;
    enum osn_net_retry_law retry_delay_law;
    bool honour_retry_after;
    int max_retries;
    /* Callers who give up (osn_uac_on_patience): each attempt waits a draw of the patience law
     * (mean patience_mean s; cv for lognormal) for its final answer, then CANCELs; none: never. */
    enum osn_net_patience_law patience;
    double patience_mean, patience_cv;
    /* Bulk arrivals (process bulk): batches of bulk_size calls arrive at one instant, batch
     * after batch at rate / bulk_size per second (a mean of `rate` calls/s), the gaps
     * exponential or, with bulk_det, all equal to bulk_size / rate (the first at that time). */
    long bulk_size;
    bool bulk_det;
    /* fanin, fanout: source i offers rate * share[i] / (the shares' sum); nshares = 0: every
     * source rate / edges; else one share per edge (net.edges), each > 0. share holds nshares
     * doubles allocated by the scenario reader (source.shares, or a written topology's rates)
     * and owned by the scenario (osn_net_cfg_arrays_free); a copy of the configuration borrows
     * it, and a configuration made by hand points it at an array of its own. */
    int nshares;
    double *share;
    /* The fraction of answered calls the callee ends (osn_uas_callee_hangs_up): the UAS sends
     * the BYE at the end of the hold, the caller answers it; 0: the caller ends every call. */
    double callee_hangs_up;
};

struct osn_net_server_cfg {
    double cost[OSN_NET_NKINDS]; /* CPU seconds per message kind; 0: handled at once, unqueued */
    long buffer;                 /* messages in the server at most (queue + in service) */
    bool exp_cost;               /* costs are exponential with these means (else constant) */
    /* proxies: Record-Route (default yes): the dialog's ACK and BYE pass through this proxy and
     * cost its CPU; no: they go past it, UAC to UAS (osn_elem_on_dialog_path) */
    bool record_route;
    /* the UAS: its ring delay between 180 and 200 (enum osn_uas_ring_law, mean ring_mean s);
     * none (default): 180 and 200 at once, so no CANCEL ever finds the INVITE pending there */
    int ring;
    double ring_mean;
    /* a scripted outage: the server is cut off the network from outage_start to outage_end (s;
     * INFINITY: for good), every message reaching it then lost, as if its host were down (what
     * it has in hand goes on). outage_end <= outage_start: none (the default, 0 and 0). */
    double outage_start, outage_end;
    /* a scripted slowdown: from slowdown_start to slowdown_end (s; INFINITY: for good) the
     * server works at slowdown_factor (in (0, 1]) of its speed, so a message's cost takes
     * 1 / factor as long there (osn_des_slowed_end); slowdown_end <= slowdown_start: none (the
     * default, 0 and 0). */
    double slowdown_start, slowdown_end, slowdown_factor;
};

struct osn_net_link_cfg {
    double delay; /* one-way delay (s) */
    double loss;  /* probability a message is lost, [0, 1) */
};

/* Mid proxies of a tandem at most (a chain: source, edge, the mids, core, UAS): a call's path
 * is 8 hops at most (src/sim/net_int.h, MAXHOP), so 7 proxies. */
#define OSN_NET_MAX_MIDS 5

/* A topology the user writes has no bound of its own: its elements are those of the built-in
 * shape it has (OSN_NET_MAX_ELEMS at most, net.edges' bound), the arrays that read it are
 * allocated for the file, and a scenario holds OSN_INI_MAX_KEYS keys at most. */
#define OSN_NET_NAME_LEN  16 /* an element's name with its NUL ("edge16383") */
#define OSN_NET_TOPO_HOPS 8  /* next hops of one element at most */

/* A link of a written topology whose delay or loss is not its place's (osn_net_cfg.link):
 * between elements from and to of the simulator's order (from sends to to). */
struct osn_net_link_own {
    uint16_t from, to;
    struct osn_net_link_cfg link;
};

/* One [element NAME], [source NAME] or [link A-B] section's keys as read (src/io/net_topo.c). */
struct osn_net_topo_keys {
    int role;           /* element: 0 proxy, 1 uas */
    char server[32];    /* element: its [server NAME] */
    char next_hop[256]; /* element: its next hops' names, separated by commas or blanks */
    double weight[OSN_NET_TOPO_HOPS];
    int nweights;                 /* next_hop_weights given (0: none) */
    char to[32];                  /* source: its first element */
    double rate;                  /* source: calls/s it offers (0: source.rate shared) */
    struct osn_net_link_cfg link; /* link: delay and loss */
};

struct osn_net_cfg {
    enum osn_net_topology topology;
    int edges;           /* fanin, fanout: number of edge proxies (1 otherwise) */
    int cores;           /* fanout: number of cores, 2..OSN_NET_MAX_CORES (1 otherwise) */
    double time, warmup; /* observation window and warm-up (s) */
    int replications;
    uint64_t seed;
    int threads;
    double level;
    struct osn_net_source_cfg src;
    struct osn_net_server_cfg edge, core, uas;
    /* fanout: cores 2, 3, ..., cores ([server core2] ...; core 1 is `core`): more_cores[i] is
     * core i + 2; the entries past cores - 1 are not read */
    struct osn_net_server_cfg more_cores[OSN_NET_MAX_CORES - 1];
    /* fanout: each edge's weight of core i (1..1000; [server edge] next_hop_weights), and how
     * long a core whose transaction timed out is passed over ([server edge] down_time, s) */
    int core_weight[OSN_NET_MAX_CORES];
    int core_weights_given; /* how many were given (0: none, all 1; else one per core) */
    double down_time;
    struct osn_net_link_cfg access, trunk, uas_link; /* source-edge, edge-(mid-)core, core-UAS */
    enum osn_ctl_kind ctl_kind;
    struct osn_ctl_cfg ctl;
    struct osn_sip_cfg sip; /* UAC and proxies; the SIPp mode changes the UACs only */
    bool sipp;
    /* NULL, or replications x OSN_NET_NMEASURES doubles that receive each replication's own
     * measures (replication i's measure k at [i * OSN_NET_NMEASURES + k], NAN where it has none):
     * the values a paired comparison of two runs with the same seed works on (osn sim
     * --compare). The result's estimates do not change. */
    double *rep_measures;
    /* NULL, or the replications shared among processes (osn/split.h): this one runs its block,
     * then every process holds every replication's totals and estimates as one process would,
     * so the result is the same to the bit. */
    const struct osn_split *split;
    /* NULL, or replications kept from an earlier run of this configuration and seed
     * (osn/reps.h): those it holds are not run again, and afterwards it holds all
     * cfg->replications (its `ran` says how many this run simulated). With a split, the
     * processes share the replications not kept, each process's store holding the same. */
    struct osn_reps *keep;
    double trace_interval; /* > 0 with trace: sample replication 0 every this many s */
    FILE *trace;           /* borrowed; NULL: no trace */
    /* Called about every 0.2 s from the calling thread while the replications run, with the
     * fraction of the simulated time done (over all replications) and the wall time so far;
     * NULL: none. */
    void (*progress)(double done_fraction, double elapsed_s, void *arg);
    void *progress_arg;
    /* Last, out of the way of the fields a run reads per message: */
    /* A tandem's mid proxies, between the edge and the core: `mids` of them (1 in the built-in
     * tandem; a chain the user wrote has up to OSN_NET_MAX_MIDS), each with its own costs
     * mid[i] when mid_own (a topology the user wrote), else the edge's, as the built-in tandem
     * has always had. */
    int mids;
    struct osn_net_server_cfg mid[OSN_NET_MAX_MIDS];
    bool mid_own;
    /* A topology the user wrote ([element NAME] sections, src/io/net_topo.c): named > 0 gives
     * the elements' names in the simulator's order (the sources, the edges, a tandem's mid, the
     * cores, the UAS), for the result's rows, in elem_names[0..named); 0: the built-in names.
     * elem_names is allocated by the scenario reader and owned by the scenario
     * (osn_net_cfg_arrays_free, osn_net_scenario_release); a copy of the configuration borrows
     * it. */
    int named;
    char (*elem_names)[OSN_NET_NAME_LEN];
    /* The homes of the [element NAME], [source NAME] and [link A-B] keys while one section is
     * read (as `core` is [server coreN]'s); their values here are the keys' defaults. */
    struct osn_net_topo_keys topo;
    /* [control] at: where the server halves are (enum osn_net_ctl_at; default core). */
    enum osn_net_ctl_at ctl_at;
    /* The links of a written topology whose delay or loss is not their place's (access, trunk,
     * uas_link above): nlinks of them, link[i] between elements from and to of the simulator's
     * order (from sends to to: a source to its edge, an edge to the next proxy or to one of a
     * fanout's cores, a mid to the next, a core to the UAS). A link not listed has its place's.
     * A link still draws its losses from its hop's stream, as every link of a built-in shape.
     * There are as many as the network has links at most (the elements': net.edges' bound). */
    int nlinks;
    struct osn_net_link_own *link;
    /* A written fanin's or fanout's first proxies of different [server NAME]s: edges_own > 0
     * (then the network's edges) gives edge i the costs edge_own[i]; 0: every edge `edge`'s. */
    int edges_own;
    struct osn_net_server_cfg *edge_own;
    /* A tree (OSN_NET_TREE): `edges` sources, `proxies` proxies below the core, the core, the
     * UAS, in this order. up[i] (proxies + edges entries, NULL: the generated tree) is element
     * i's next hop; the generated tree (net.levels proxy levels, net.fanout children a proxy)
     * puts source j into leaf proxy j, the leaves first, each level's proxies after the level
     * below, proxy k of a level into proxy k / fanout of the next. A tree's proxies are the
     * role EDGE (edge_own: proxies entries when they have costs of their own), its core CORE. */
    int levels, fanout, proxies;
    uint16_t *up;
    /* A tree of several cores (issue 32's fan32 branch): `tree_cores` of them (0 or 1: one),
     * the elements edges + proxies .. + tree_cores - 1, each into the UAS; core k > 0 has the
     * costs more_cores[k - 1]. core_w (NULL: every proxy its one next hop, up[]) holds
     * proxies x tree_cores weights, proxy p's weight of core k at [p * tree_cores + k], 0 for a
     * core that is not its next hop: a proxy with two or more chooses among them (smooth
     * weighted round-robin, src/elem/hops.c), the fanout edge's choice, and up[] names its
     * first. */
    int tree_cores;
    int *core_w;
    /* A tree's UASs (0 or 1: one, after the cores): tree_uas > 1 puts them after the cores, and
     * up[] then has edges + proxies + tree_cores entries, up[i] of a core its UAS. Every UAS has
     * [server uas]'s costs. */
    int tree_uas;
    /* `topology = mesh`'s keys: net.regions, net.local_share (the share of an edge's calls its
     * own region's core takes). */
    int regions;
    double local_share;
    /* link (nlinks records), edge_own (edges_own), up and core_w, like elem_names and src.share,
     * are allocated by the scenario reader for the file and owned by the scenario
     * (osn_net_cfg_arrays_free); a copy of the configuration borrows them. */
};

/* The roles of a network's elements. The simulator's order of the elements (its element
 * indices, the rows of a result, a written topology's elem_names) is by role, in this order:
 * the sources, the edges (source i's first proxy is edge i), a tandem's mids, the cores (a
 * fanout's several; one otherwise), the UAS. */
enum osn_net_role {
    OSN_NET_ROLE_SOURCE,
    OSN_NET_ROLE_EDGE,
    OSN_NET_ROLE_MID,
    OSN_NET_ROLE_CORE,
    OSN_NET_ROLE_UAS,
    OSN_NET_NROLES
};

/* How many elements of that role cfg's network has (0 for a role out of range): the sources
 * and the edges net.edges for a fanin or fanout (else 1), the mids a tandem's `mids` (else 0),
 * the cores net.cores for a fanout (else 1), one UAS. */
int osn_net_role_count(const struct osn_net_cfg *cfg, enum osn_net_role role);

/* Element i of cfg's network, in the simulator's order: returns its role, and puts its index
 * within the role in *k (may be NULL): source or edge 0 .. edges - 1, mid 0 .. mids - 1 (node.mid
 * k + 1), core 0 .. cores - 1 (core 0 is [server core], k > 0 [server core(k+1)]), the UAS 0.
 * Returns -1 (and leaves *k) for an i the network has not. This is the one decoder of the
 * order: the simulator's rows, `osn node`'s node.name and `osn testbed`'s names use it. */
int osn_net_elem_role(const struct osn_net_cfg *cfg, int i, int *k);

/* The inverse: the index in the simulator's order of the k-th element of that role, or -1 when
 * the network has none. */
int osn_net_elem_index(const struct osn_net_cfg *cfg, enum osn_net_role role, int k);

/* A tree's (OSN_NET_TREE) element i's one next hop, in the simulator's order (a source's
 * proxy, a proxy's proxy or the core, the core's UAS); -1 for the UAS or an i it has not. */
int osn_net_tree_next_hop(const struct osn_net_cfg *cfg, int i);

/* Defaults: collapse, 1 edge, time 20, warmup 10, 4 replications, seed 1, rate 300 calls/s,
 * hold 5 s, core costs about 2.7 ms of CPU per call (capacity about 370 calls/s), edge and UAS
 * 20x cheaper, buffers 500, links 5 ms, control none, RFC 3261 timers. */
void osn_net_cfg_default(struct osn_net_cfg *cfg);

/* Calls/s the server can complete from its cost model: 1 / (cost of every message a call
 * brings it: INVITE, ACK, BYE and `nresp` responses). */
double osn_net_capacity(const struct osn_net_server_cfg *s, int nresp);

/* Calls/s the core can complete (its position fixes nresp = 3: 180, 200, 200 of BYE). */
double osn_net_core_capacity(const struct osn_net_cfg *cfg);

/* The fraction of source.rate that source i of the network's `sources` offers: 1 / sources, or
 * its share of source.shares (the simulator's sources and osn testbed's alike). */
double osn_net_source_share(const struct osn_net_cfg *cfg, int i, int sources);

/* The measures, in output order. */
enum osn_net_measure {
    OSN_NET_OFFERED,    /* calls/s started by the sources */
    OSN_NET_GOODPUT,    /* calls/s whose 200 reached the UAC before Timer B */
    OSN_NET_CAPACITY,   /* core capacity (calls/s) from its costs */
    OSN_NET_SETUP_MEAN, /* INVITE -> 180 at the UAC (s) */
    OSN_NET_SETUP_P50,
    OSN_NET_SETUP_P95,
    OSN_NET_SETUP_P99,
    OSN_NET_FAILED,         /* failed calls/s */
    OSN_NET_FAILED_TIMEOUT, /* of which timed out */
    OSN_NET_FAILED_REJECTED,
    OSN_NET_FAILED_OTHER,
    OSN_NET_RETRANS_RATIO,    /* at the core: absorbed retransmissions / new requests */
    OSN_NET_ADMITTED,         /* calls/s the core forwarded to the UAS */
    OSN_NET_ADMITTED_TIMEOUT, /* failures of calls the core admitted / admissions, both as rates
                                 in the window: the failed fraction in steady state (it can
                                 exceed 1 while the load changes: failures lag admissions) */
    OSN_NET_CORE_UTIL,        /* busy fraction of the core CPU */
    OSN_NET_CORE_P0,          /* core's time in overload mode 0, 1, 2 (fractions) */
    OSN_NET_CORE_P1,
    OSN_NET_CORE_P2,
    OSN_NET_MSG_RATE, /* messages/s processed by all servers */
    /* The papers' measures (added after tests/data/net_golden.txt was recorded): */
    OSN_NET_RESP_MEAN, /* INVITE -> first 100 Trying at the UAC (s), calls that got one */
    OSN_NET_RESP_P50,
    OSN_NET_RESP_P95,
    OSN_NET_RESP_P99,
    OSN_NET_NO_TRYING,     /* calls/s whose outcome came without any 100 Trying at the UAC */
    OSN_NET_CORE_OVERLOAD, /* core's time in overload, P1 + P2 (fraction) */
    OSN_NET_CORE_TRET,     /* mean overload period at the core: (P1 + P2) time / onsets (s) */
    /* Retrials (source.retry_prob > 0; offered counts first attempts only): */
    OSN_NET_RETRIES,       /* retries/s: INVITE attempts after the first of a call */
    OSN_NET_ATTEMPTS_CALL, /* mean attempts of a call whose outcome came in the window */
    OSN_NET_GOOD_K0,       /* good calls/s whose good attempt came after 0, 1, 2, >= 3 retries */
    OSN_NET_GOOD_K1,
    OSN_NET_GOOD_K2,
    OSN_NET_GOOD_K3,
    /* Callers who give up (source.patience): */
    OSN_NET_ABANDONED, /* calls/s whose caller gave up before a final answer (never retried) */
    OSN_NET_CANCELS,   /* CANCEL requests/s the callers sent */
    /* How answered calls ended (source.callee_hangs_up): */
    OSN_NET_BYES_OK, /* calls/s the caller ended: its BYE answered 2xx */
    OSN_NET_BYES_IN, /* calls/s the callee ended: its BYE answered 200 by the caller */
    /* A source as overload-control client ([control] at = edge or both): */
    OSN_NET_SHED_LOCAL, /* attempts/s its client half shed before sending (also failed_rejected) */
    OSN_NET_NMEASURES
};

const char *osn_net_measure_key(enum osn_net_measure i);
const char *osn_net_measure_unit(enum osn_net_measure i);
const char *osn_net_measure_meaning(enum osn_net_measure i);

/* Per-element estimates (rates per second of the window). */
enum osn_net_elem_measure {
    OSN_NET_E_PROC, /* messages processed per kind: OSN_NET_E_PROC + kind */
    OSN_NET_E_DROPPED = OSN_NET_E_PROC + OSN_NET_NKINDS, /* lost at a full buffer, 1/s */
    OSN_NET_E_UTIL,                                      /* busy fraction */
    OSN_NET_E_QMEAN,                                     /* mean messages in the server */
    OSN_NET_E_OFFERED,  /* INVITE requests/s arriving, originals and copies */
    OSN_NET_E_CAPACITY, /* calls/s from the costs */
    /* CANCEL traffic (new CANCELs processed are OSN_NET_E_PROC + OSN_NET_K_CANCEL): */
    OSN_NET_E_CANCEL_FWD, /* proxy: CANCELs/s passed on to the next hop */
    OSN_NET_E_487,        /* UAS: INVITEs/s answered 487 Request Terminated */
    /* A source's own calls (NAN at the other elements), so that a fanin's edges can be told
     * apart (RFC 7339's fairness across clients): calls/s it started (first attempts), its
     * attempts the core forwarded to the UAS, its good calls. Over the sources they add up to
     * offered, admitted and goodput. */
    OSN_NET_E_SRC_OFFERED,
    OSN_NET_E_SRC_ADMITTED,
    OSN_NET_E_SRC_GOODPUT,
    /* A source's calls' mean setup delay (INVITE -> 180 at its UAC, s; the network's
     * setup_mean over its calls alone): a link of its own shows in its calls only. */
    OSN_NET_E_SRC_SETUP,
    OSN_NET_E_NMEASURES
};

const char *osn_net_elem_measure_key(int i);

struct osn_net_est {
    double value, hw, n;
};

/* Elements of a network at most: the sources, the edges, the cores and the UAS. */
#define OSN_NET_MAX_ELEMS (2 * OSN_NET_MAX_EDGES + OSN_NET_MAX_CORES + 1)

/* What a run gives. The per-element arrays hold nelem rows, in the network's order (the sources,
 * the edges, a tandem's mid proxy, the cores, the UAS); osn_net_run allocates them and
 * osn_net_result_release frees them. */
struct osn_net_result {
    struct osn_net_est est[OSN_NET_NMEASURES];
    int nelem;
    char (*elem_name)[OSN_NET_NAME_LEN];             /* nelem names: "uac0", "edge0", "core" */
    struct osn_net_est (*elem)[OSN_NET_E_NMEASURES]; /* nelem rows of estimates */
    int replications;
    double level;
    uint64_t messages; /* SIP messages processed by the servers and UACs, all replications */
    uint64_t events;
    double wall_s, msgs_per_s;
};

/* Checks a configuration. Returns 0 or OSN_EINVAL with a sentence in msg; *bad_key (may be
 * NULL) gets the scenario key at fault ("source.rate", ...). */
int osn_net_check(const struct osn_net_cfg *cfg, const char **bad_key, char *msg, size_t msgsize);

/* The totals a replication of the network cfg keeps (struct osn_reps.ntot): a block of the
 * network's, then one per element, so it grows with the network. */
int osn_net_reps_ntot(const struct osn_net_cfg *cfg);

/* Runs the replications and fills *out, whose earlier contents are overwritten, not freed:
 * release a result before running into it again. Returns 0, OSN_EINVAL (with a message),
 * OSN_ENOMEM or OSN_EIO (a thread could not start); on failure *out holds no allocation. */
int osn_net_run(const struct osn_net_cfg *cfg, struct osn_net_result *out, char *msg,
                size_t msgsize);

/* Frees the per-element arrays of a result osn_net_run filled and clears them (nelem 0); the
 * network's estimates stay. NULL, or a result already released or zeroed: nothing. */
void osn_net_result_release(struct osn_net_result *r);

#endif

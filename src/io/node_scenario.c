/*
 * Scenario files of `osn node` (osn/node_scenario.h): the table of the [node] keys on top of a
 * network scenario's, read by osn_ini_load() with the same origins and messages.
 */
#include "osn/node_scenario.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "osn/err.h"
#include "osn/net_scenario.h"

typedef struct osn_node_cfg C;

static const char *const elements[] = {"edge", "core", "uas", "uac", NULL};

static const struct osn_key_spec node_keys[] = {
        {"node", "element", OSN_KEY_CHOICE, .choices = elements, OSN_KEY_AT(C, element),
         .help = "edge, core: stateful proxies; uas answers 180, 200. The element's [server "
                 "NAME] section gives its costs and buffer, as in `osn sim` (the uas's also its "
                 "ring_delay between 180 and 200). uac: the load "
                 "generator, the [source] traffic to next_hop (docs/node.md)"},
        {"node", "listen", OSN_KEY_STRING, OSN_KEY_AT(C, listen), .unit = "HOST:PORT",
         .help = "the UDP address to bind: A.B.C.D:PORT or [IPv6]:PORT (e.g. [::1]:5060); "
                 "port 0: any free port, reported on the listening line. ;transport=tcp after "
                 "it: TCP too, on the same port (RFC 3261 18; docs/node.md)"},
        {"node", "next_hop", OSN_KEY_STRING, OSN_KEY_AT(C, next_hop), .unit = "HOST:PORT, ...",
         .help = "where a proxy forwards a request with no Route (required for proxies), or "
                 "where the load generator (uac) sends its calls; of the family of listen. The "
                 "node sends to it by a UDP socket connected to it, or with ;transport=tcp "
                 "over one TCP connection it opens. A proxy or the uac may list up to 8, "
                 "comma-separated, each with its own RFC 7339/7415 client state: a new request "
                 "goes to one by weight among those not throttling it (docs/node.md)"},
        {"node", "next_hop_weights", OSN_KEY_STRING, OSN_KEY_AT(C, next_hop_weights),
         .unit = "W, ...",
         .help = "one whole number 1..1000 per next_hop, in order (2, 1: the first is offered two "
                 "requests for the second's one); none: all 1"},
        {"node", "down_time", OSN_KEY_DOUBLE, 0, 0, false, OSN_KEY_AT(C, down_time), .unit = "s",
         .help = "several next hops: how long one whose transaction timed out (Timer B or F) is "
                 "passed over while another is up; a 503 with Retry-After sets its own time"},
        {"node", "duration", OSN_KEY_DOUBLE, OSN_KEY_AT(C, duration), .unit = "s",
         .help = "how long the node runs; 0: until SIGINT/SIGTERM (uac: how long calls "
                 "start, then it drains; 0: the scenario's time)"},
        {"node", "warmup", OSN_KEY_DOUBLE, 0, 0, false, OSN_KEY_AT(C, warmup), .unit = "s",
         .help = "uac: the rates and delay percentiles count only the events (calls started, "
                 "outcomes, retries; 180s and 100s) that come after it and before "
                 "node.duration, the simulator's window (osn testbed sets it); 0: the rates over "
                 "the whole run and its drain, every delay"},
        {"node", "stats_interval", OSN_KEY_DOUBLE, 0, 0, true, OSN_KEY_AT(C, stats_interval),
         .unit = "s", .help = "time between stats rows and progress lines"},
        {"node", "max_transactions", OSN_KEY_LONG, 1, 100000000, OSN_KEY_AT(C, max_transactions),
         .def = "max_memory / 2048",
         .help = "live transactions at most; a new request beyond it gets 503. Those in their "
                 "final wait (a call leaves about 4 for 32 s, RFC 6026) are kept compact apart "
                 "and count only against max_memory"},
        {"node", "max_memory", OSN_KEY_LONG, 1048576, 1e15, OSN_KEY_AT(C, max_memory),
         .unit = "bytes",
         .help = "the memory transactions may hold, live ones (their objects and messages) and "
                 "kept ones (their compact records); a new request that would exceed it gets "
                 "503. Sizes max_transactions when that is not set (docs/node.md)"},
        {"node", "metrics", OSN_KEY_STRING, OSN_KEY_AT(C, metrics), .unit = "HOST:PORT",
         .help = "a Prometheus text endpoint (TCP; port 0 as for listen; none: off)"},
        {"node", "per_source_rate", OSN_KEY_DOUBLE, 0, 0, false, OSN_KEY_AT(C, per_source_rate),
         .unit = "1/s",
         .help = "requests (not ACKs) per second per source (IPv4 address, IPv6 /64), a burst "
                 "of about 1 s; "
                 "beyond it one stateless 503, then nothing (docs/node.md); 0: off"},
        {"node", "workers", OSN_KEY_LONG, 0, OSN_NODE_MAX_WORKERS, OSN_KEY_AT(C, workers),
         .help = "event loops (threads), each with its own socket on listen (SO_REUSEPORT: the "
                 "kernel spreads the peers over them by address and port) and, for a proxy, its "
                 "own port toward the next hops; over TCP each listens on the port too, and a "
                 "connection stays with the worker the kernel gave it; each is 1/N of the "
                 "element (costs x N, its own buffer and controller). 0: the CPUs online. The "
                 "default 1 is the simulator's element; the load generator (uac) runs one "
                 "(docs/node.md)"},
        {"node", "tcp_max_connections", OSN_KEY_LONG, 1, 65536, OSN_KEY_AT(C, tcp_max_connections),
         .help = "TCP connections accepted and open at most, for the whole node (all its "
                 "workers); one more is closed at once and counted (tcp_refused). The node holds "
                 "at most tcp_buffer + 64 KiB for each"},
        {"node", "tcp_idle_timeout", OSN_KEY_DOUBLE, 0, 0, true, OSN_KEY_AT(C, tcp_idle_timeout),
         .unit = "s",
         .help = "a TCP connection with no byte read or written for this long is closed (an idle "
                 "or half-open peer, or one that stopped reading); also its TCP_USER_TIMEOUT"},
        {"node", "tcp_buffer", OSN_KEY_LONG, 65535, 1073741824, OSN_KEY_AT(C, tcp_buffer),
         .unit = "bytes",
         .help = "bytes queued for one TCP peer at most: past half the node stops reading it, "
                 "past all it closes it (a peer that does not read cannot grow the node)"},
        {"node", "link_delay_down", OSN_KEY_DOUBLE, 0, 0, false, OSN_KEY_AT(C, link_delay_down),
         .unit = "s",
         .help = "the one-way delay of the link to the next hop(s), carried out by the node: "
                 "each datagram it sends there leaves this much later (a delay line on its "
                 "timers). osn testbed gives each node its [link] delays; UDP only"},
        {"node", "link_delay_up", OSN_KEY_DOUBLE, 0, 0, false, OSN_KEY_AT(C, link_delay_up),
         .unit = "s",
         .help = "the one-way delay of the link upstream: each datagram the node sends "
                 "elsewhere than a next hop (its responses) leaves this much later"},
        {"node", "link_loss_down", OSN_KEY_DOUBLE, 0, 0, false, OSN_KEY_AT(C, link_loss_down),
         .unit = "probability",
         .help = "the loss of the link to the next hop(s), carried out by the node: each "
                 "datagram it sends there is lost with this probability, in [0, 1), and counted "
                 "in link_lost. osn testbed gives each node its [link] losses; UDP only"},
        {"node", "link_loss_up", OSN_KEY_DOUBLE, 0, 0, false, OSN_KEY_AT(C, link_loss_up),
         .unit = "probability",
         .help = "the loss of the link upstream: each datagram the node sends elsewhere than a "
                 "next hop is lost with this probability, in [0, 1)"},
        {"node", "next_hop_delays", OSN_KEY_STRING, OSN_KEY_AT(C, next_hop_delays),
         .unit = "s, ...",
         .help = "a link of its own to each next_hop, in order: its one-way delay, carried out "
                 "both ways by this node (what it sends to that next hop and what it receives "
                 "from it are each held this long; the next hop holds nothing for it). osn "
                 "testbed sets it for a topology's [link A-B] of their own; not beside "
                 "link_delay_down; UDP only"},
        {"node", "next_hop_losses", OSN_KEY_STRING, OSN_KEY_AT(C, next_hop_losses),
         .unit = "probability, ...",
         .help = "a link of its own to each next_hop, in order: its loss in [0, 1), both ways, "
                 "as next_hop_delays (counted in link_lost); not beside link_loss_down"},
        {"node", "link_buffer", OSN_KEY_LONG, 65535, 1073741824, OSN_KEY_AT(C, link_buffer),
         .unit = "bytes",
         .help = "bytes the delay line holds at most (per loop); a datagram that does not fit is "
                 "lost and counted in link_dropped, as at a full link queue"},
        {"node", "rank", OSN_KEY_STRING, OSN_KEY_AT(C, rank), .unit = "NAME:RANK, ...",
         .help = "osn testbed under mpirun or srun: run element NAME (uas, core, core2, mid, mid2, "
                 "edge, edge0, uac, uac0, ..., or an [element NAME]'s) on MPI rank RANK; elements "
                 "not named go round-robin "
                 "(element i on rank i mod K). The node itself does not read it (docs/testbed.md)"},
        {"node", "mid", OSN_KEY_LONG, 0, OSN_NET_MAX_MIDS, OSN_KEY_AT(C, mid),
         .help = "element edge as the K-th mid proxy of a chain (a tandem, or [element]s written "
                 "as a chain: the proxies between the first and the last): its costs and buffer "
                 "are that mid's (the built-in tandem's one mid has the edge's). osn testbed sets "
                 "it; 0: the edge's own"},
        {"node", "name", OSN_KEY_STRING, OSN_KEY_AT(C, name),
         .help = "an [element NAME] or [source NAME] of a topology written in the scenario: the "
                 "node plays it, a proxy with its [server NAME] (the first an edge, the last the "
                 "core, those between the mids), the uas, or a source's generator with its share "
                 "of the rate and net.seed + its index; node.element (and node.mid) follow from "
                 "it. osn testbed sets it for such a scenario"},
        {"node", "record_route", OSN_KEY_BOOL, OSN_KEY_AT(C, record_route),
         .help = "proxies: insert Record-Route: <sip:ADDR;lr> into a dialog-creating INVITE "
                 "(RFC 3261 16.6), so the dialog's ACK, BYE and re-INVITE from either side "
                 "come through this proxy; requests with a Route naming it go on by Route"},
};

const struct osn_ini_schema osn_node_schema = {node_keys, sizeof node_keys / sizeof node_keys[0],
                                               &osn_net_schema};

/* The scenario's [source] as the load generator's traffic (osn/node.h cannot include the
 * simulator's header: the same fields, copied). */
static void source_from_net(const struct osn_net_cfg *net, struct osn_node_source *d)
{
    const struct osn_net_source_cfg *s = &net->src;
    static const int process[] = {[OSN_NET_POISSON] = OSN_NODE_POISSON,
                                  [OSN_NET_MMPP] = OSN_NODE_MMPP,
                                  [OSN_NET_PROFILE] = OSN_NODE_PROFILE};
    static const int patience[] = {[OSN_NET_PATIENCE_NONE] = OSN_UAC_PATIENCE_NONE,
                                   [OSN_NET_PATIENCE_EXP] = OSN_UAC_PATIENCE_EXP,
                                   [OSN_NET_PATIENCE_DET] = OSN_UAC_PATIENCE_DET,
                                   [OSN_NET_PATIENCE_LOGNORMAL] = OSN_UAC_PATIENCE_LOGNORMAL};
    static const int law[] = {[OSN_NET_RETRY_EXP] = OSN_NODE_RETRY_EXP,
                              [OSN_NET_RETRY_DET] = OSN_NODE_RETRY_DET,
                              [OSN_NET_RETRY_UNIFORM] = OSN_NODE_RETRY_UNIFORM,
                              [OSN_NET_RETRY_LOGNORMAL] = OSN_NODE_RETRY_LOGNORMAL};
    *d = (struct osn_node_source){
            .process = process[s->process],
            .rate = s->rate,
            .nsteps = s->nsteps,
            .burst_t = s->burst_t,
            .burst_len = s->burst_len,
            .burst_factor = s->burst_factor,
            .hold = s->hold,
            .retry_prob = s->retry_prob,
            .retry_delay = s->retry_delay,
            .retry_delay_cv = s->retry_delay_cv,
            .retry_delay_law = law[s->retry_delay_law],
            .honour_retry_after = s->honour_retry_after,
            .max_retries = s->max_retries,
            .patience = {patience[s->patience], s->patience_mean, s->patience_cv},
            .callee_hangs_up = s->callee_hangs_up,
            .seed = net->seed};
    for (int i = 0; i < 2; i++) {
        d->mmpp_rate[i] = s->mmpp_rate[i];
        d->mmpp_switch[i] = s->mmpp_switch[i];
    }
    for (int i = 0; i < s->nsteps && i < OSN_NODE_MAX_STEPS; i++) {
        d->step_t[i] = s->step_t[i];
        d->step_rate[i] = s->step_rate[i];
    }
}

/* The network scenario's element as this node: its server (a fanout's core `core`, 0 the
 * first; a written first proxy `edge`, -1 none), the control, the timers. */
static void from_net(const struct osn_net_cfg *net, struct osn_node_cfg *c, int core, int edge)
{
    const struct osn_net_server_cfg *sv = c->element == OSN_NODE_EDGE   ? &net->edge
                                          : c->element == OSN_NODE_CORE ? &net->core
                                                                        : &net->uas;
    if (c->element == OSN_NODE_CORE && core > 0)
        sv = &net->more_cores[core - 1];
    if (c->element == OSN_NODE_EDGE && c->mid == 0 && edge >= 0 && edge < net->edges_own)
        sv = &net->edge_own[edge]; /* a written first proxy of a [server NAME] of its own */
    if (c->element == OSN_NODE_EDGE && c->mid > 0 && net->mid_own) /* checked by mid_check */
        sv = &net->mid[c->mid - 1];
    memcpy(c->cost, sv->cost, sizeof c->cost);
    c->buffer = sv->buffer;
    c->ctl_kind = net->ctl_kind;
    c->ctl = net->ctl;
    c->ctl_at = net->ctl_at == OSN_NET_CTL_AT_EDGE   ? OSN_NODE_CTL_AT_EDGE
                : net->ctl_at == OSN_NET_CTL_AT_BOTH ? OSN_NODE_CTL_AT_BOTH
                                                     : OSN_NODE_CTL_AT_CORE;
    c->sip = net->sip;
    c->ring = c->element == OSN_NODE_UAS ? net->uas.ring : OSN_UAS_RING_NONE;
    c->ring_mean = net->uas.ring_mean;
    c->src.seed = net->seed;
    /* the uas ends the calls the callee hangs up, after a hold of the same law (its own draws) */
    c->src.hold = net->src.hold;
    c->src.callee_hangs_up = net->src.callee_hangs_up;
    if (c->element == OSN_NODE_UAC) {
        /* The generator is the caller, not a server: no virtual CPU, no server half; a client
         * half per next hop when the edge has the server half (control.at edge or both). Its
         * run length defaults to the scenario's. */
        memset(c->cost, 0, sizeof c->cost);
        if (net->ctl_at == OSN_NET_CTL_AT_CORE)
            c->ctl_kind = OSN_CTL_KIND_NONE;
        source_from_net(net, &c->src);
        if (!(c->duration > 0))
            c->duration = net->time;
    }
}

/* node.name: the element (or source) of a written topology this node plays. The simulator's
 * order (osn/net.h, elem_names) says what it is: the sources, the edges, a chain's mids, the
 * cores, the UAS. Sets the element, the mid or core it is, and a source's share and seed. */
static int name_apply(const struct osn_ini *ini, const struct osn_net_cfg *net,
                      struct osn_node_cfg *c, int *core, int *edge, int *source, char *err,
                      size_t errsize)
{
    const struct osn_key_origin *o = osn_ini_get(ini, "node.name");
    int i = 0, at = 0, element, mid = 0; /* at: its index within its role */

    *core = 0;
    *edge = *source = -1;
    if (!o)
        return 0;
    if (net->named == 0)
        return osn_ini_bad(o, err, errsize,
                           "the scenario writes no topology ([element NAME] sections) to find "
                           "it in; give node.element");
    while (i < net->named && strcmp(net->elem_names[i], c->name) != 0)
        i++;
    if (i == net->named) {
        char names[256];
        size_t len = 0;
        for (int k = 0; k < net->named && len < sizeof names; k++)
            len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", k ? ", " : "",
                                    net->elem_names[k]);
        return osn_ini_bad(o, err, errsize,
                           "no element or source of that name (the scenario's: %s)", names);
    }
    switch (osn_net_elem_role(net, i, &at)) {
    case OSN_NET_ROLE_SOURCE:
        element = OSN_NODE_UAC;
        break;
    case OSN_NET_ROLE_EDGE:
        element = OSN_NODE_EDGE;
        *edge = at;
        break;
    case OSN_NET_ROLE_MID:
        element = OSN_NODE_EDGE;
        mid = at + 1;
        break;
    case OSN_NET_ROLE_CORE:
        element = OSN_NODE_CORE;
        *core = at;
        break;
    default: /* the UAS */
        element = OSN_NODE_UAS;
        break;
    }
    const struct osn_key_origin *oe = osn_ini_get(ini, "node.element");
    const struct osn_key_origin *om = osn_ini_get(ini, "node.mid");
    if (oe && c->element != element)
        return osn_ini_bad(oe, err, errsize, "node.name = %s is %s %s", c->name,
                           element == OSN_NODE_UAC ? "a source, element" : "element",
                           osn_node_element_name(element));
    if (om && c->mid != mid)
        return osn_ini_bad(om, err, errsize, "node.name = %s is %s", c->name,
                           mid ? "another mid" : "no mid");
    c->element = element;
    c->mid = mid;
    *source = element == OSN_NODE_UAC ? at : -1;
    return 0;
}

/* A source played by name: its share of the scenario's rate (every rate of the process, as
 * osn testbed scales a fan-in's generators) and streams of its own, net.seed + its index (after
 * from_net, which copies the [source] keys). */
static void name_source(const struct osn_net_cfg *net, struct osn_node_cfg *c, int i)
{
    double share = osn_net_source_share(net, i, osn_net_role_count(net, OSN_NET_ROLE_SOURCE));
    c->src.rate *= share;
    for (int k = 0; k < 2; k++)
        c->src.mmpp_rate[k] *= share;
    for (int k = 0; k < c->src.nsteps; k++)
        c->src.step_rate[k] *= share;
    c->src.seed = net->seed + (uint64_t)i;
}

/* node.mid names a mid the scenario has, and the node is a proxy that can be one. */
static int mid_check(const struct osn_ini *ini, const struct osn_net_cfg *net,
                     const struct osn_node_cfg *c, char *err, size_t errsize)
{
    const struct osn_key_origin *o = osn_ini_get(ini, "node.mid");
    int mids = net->topology == OSN_NET_TANDEM ? net->mids : 0;
    if (!o || c->mid == 0)
        return 0;
    if (c->element != OSN_NODE_EDGE)
        return osn_ini_bad(o, err, errsize, "a mid proxy is an edge: node.element = %s",
                           osn_node_element_name(c->element));
    if (c->mid > mids)
        return osn_ini_bad(o, err, errsize, "the scenario's %s has %d mid prox%s",
                           net->topology == OSN_NET_TANDEM ? "chain" : "topology", mids,
                           mids == 1 ? "y" : "ies");
    return 0;
}

/* The simulator's scripted experiments that the node does not carry out: bulk arrivals and a
 * server's slowdown are refused (file:line of the key), not run as something else. */
static int sim_only(const struct osn_ini *ini, const struct osn_net_cfg *net, char *err,
                    size_t errsize)
{
    static const char *const keys[] = {"server edge.slowdown_end", "server core.slowdown_end",
                                       "server uas.slowdown_end"};
    const struct osn_net_server_cfg *sv[] = {&net->edge, &net->core, &net->uas};
    const struct osn_key_origin *o;

    if (net->src.process == OSN_NET_BULK && (o = osn_ini_get(ini, "source.process")))
        return osn_ini_bad(o, err, errsize,
                           "bulk arrivals are the simulator's (osn sim); the node's generator "
                           "offers poisson, mmpp or profile");
    for (int i = 0; i < 3; i++)
        if (sv[i]->slowdown_end > sv[i]->slowdown_start && (o = osn_ini_get(ini, keys[i])))
            return osn_ini_bad(o, err, errsize,
                               "a scripted slowdown is the simulator's (osn sim); the node "
                               "serves at the speed of its host");
    return 0;
}

int osn_node_scenario_load(struct osn_node_scenario *s, const char *path, const char *const *sets,
                           int nsets, char *err, size_t errsize)
{
    struct osn_node_scenario *tmp = calloc(1, sizeof *tmp);
    struct osn_net_cfg *net = calloc(1, sizeof *net);
    const char *bad = NULL;
    char why[256];
    int rc;

    if (!tmp || !net) {
        rc = OSN_ENOMEM;
        snprintf(err, errsize, "out of memory");
        goto out;
    }
    rc = osn_ini_collect(&tmp->ini, path, sets, nsets, &osn_node_schema, err, errsize);
    if (rc)
        goto out;
    osn_net_cfg_default(net);
    osn_node_cfg_default(&tmp->cfg);
    rc = osn_net_scenario_parse(&tmp->ini, net, err, errsize);
    if (!rc)
        rc = osn_ini_load(&tmp->ini, &osn_node_schema, &tmp->cfg, err, errsize);
    if (rc)
        goto out;
    int core, edge, source;
    if ((rc = sim_only(&tmp->ini, net, err, errsize)) ||
        (rc = name_apply(&tmp->ini, net, &tmp->cfg, &core, &edge, &source, err, errsize)) ||
        (rc = mid_check(&tmp->ini, net, &tmp->cfg, err, errsize)))
        goto out;
    from_net(net, &tmp->cfg, core, edge);
    if (source >= 0)
        name_source(net, &tmp->cfg, source);
    if (osn_node_check(&tmp->cfg, &bad, why, sizeof why) != 0) {
        const struct osn_key_origin *o = bad ? osn_ini_get(&tmp->ini, bad) : NULL;
        if (o)
            rc = osn_ini_bad(o, err, errsize, "%s", why);
        else {
            snprintf(err, errsize, "%s%s%s: %s", tmp->ini.path[0] ? tmp->ini.path : "scenario",
                     bad ? ": key " : "", bad ? bad : "", why);
            rc = OSN_ECONFIG;
        }
        goto out;
    }
    *s = *tmp; /* the keys move to *s */
out:
    if (rc && tmp)
        osn_ini_free(&tmp->ini);
    if (net)
        osn_net_cfg_arrays_free(net);
    free(tmp);
    free(net);
    return rc;
}

void osn_node_scenario_release(struct osn_node_scenario *s)
{
    if (s)
        osn_ini_free(&s->ini);
}

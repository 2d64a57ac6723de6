/*
 * The elements of a network scenario as `osn testbed` starts them, one `osn node` each, in the
 * order the simulator wires them (src/sim/net.c, osn__net_elems):
 *
 *     collapse   uac -> edge -> core -> uas
 *     tandem     uac -> edge -> mid -> core -> uas      (mid: an edge proxy with edge costs)
 *                or a chain of K mids, mid1 .. midK, each playing its own costs (node.mid = k)
 *     fanin      uacI -> edgeI -> core -> uas, I = 0 .. edges-1, each source rate / edges
 *                (or its share of source.shares)
 *     fanout     uacI -> edgeI -> {core, core2, ...} -> uas   (one edge: a fan-out; two or
 *                more: a mesh, every edge forwarding to every core)
 *     tree       uacI -> a proxy -> ... -> core -> uas   (the proxies edge0.., each with one
 *                next hop; sources at any proxy below the core: tree_build)
 *
 * A topology the user wrote ([element NAME] sections) gives each process its element's name.
 * The list is in start order, the callee first: a proxy's next hop is the port its downstream
 * element reported, so the downstream element must be up before it. A fan-in's sources draw
 * from independent streams (net.seed + I), as the simulator's sources do. A fanout's edge gets
 * every core as `node.next_hop = A, B, ...` with the scenario's `[server edge]
 * next_hop_weights` and `down_time` (a node reads them from [node]); a node plays [server core]
 * only, so the core of [server coreK] is given that section's costs and buffer as [server core]
 * (testbed_run.c). Each element also carries the one-way delays of its links, downstream and
 * upstream, for the node to carry out (node.link_delay_down, link_delay_up), and their losses
 * (node.link_loss_down, link_loss_up); or, in a network whose links differ ([link A-B] of their
 * own), the links to its next hops both ways, each its own (node.next_hop_delays, _losses).
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "testbed.h"

/* Appends one element; returns its index. */
static int add(struct tb_net *net, const char *name, const char *element, int next)
{
    struct tb_elem *e = &net->e[net->n];
    memset(e, 0, sizeof *e);
    snprintf(e->name, sizeof e->name, "%s", name);
    e->element = element;
    e->next[0] = next;
    e->nnext = next >= 0 ? 1 : 0;
    e->stage = next >= 0 ? net->e[next].stage + 1 : 0;
    e->share = 1;
    e->p.out_fd = -1;
    return net->n++;
}

/* The link from simulator element `from` to `to`: its own (osn_net_cfg.link), else its place's. */
static const struct osn_net_link_cfg *link_of(const struct osn_net_cfg *c, int from, int to,
                                              const struct osn_net_link_cfg *place)
{
    for (int i = 0; i < c->nlinks; i++)
        if (c->link[i].from == from && c->link[i].to == to)
            return &c->link[i].link;
    return place;
}

double tb_net_capacity(const struct osn_net_cfg *c)
{
    double cap = osn_net_core_capacity(c);
    if (c->topology == OSN_NET_FANOUT)
        for (int i = 1; i < c->cores; i++)
            cap += osn_net_capacity(&c->more_cores[i - 1], 3);
    return cap;
}

/* The links as the simulator takes them (src/sim/net_run.c): access from a source to its edge,
 * the uas link from a core to the UAS, trunk between the proxies (edge -> mid -> core, edge ->
 * core, a tree's proxy -> proxy), each the same delay and loss both ways; a link of its own
 * where the scenario gives one. With `own` every link is carried by its upstream end, both ways
 * (tb_net.own_links). Then a topology the user wrote names each element, the simulator's name
 * of its index. */
static void links_and_names(struct tb_net *net, const struct osn_net_cfg *c, bool own)
{
    static const struct osn_net_link_cfg none;
    for (int i = 0; i < net->n; i++) {
        struct tb_elem *e = &net->e[i];
        bool is_uac = strcmp(e->element, "uac") == 0, is_uas = strcmp(e->element, "uas") == 0;
        bool is_core = strcmp(e->element, "core") == 0;
        bool is_edge = strcmp(e->element, "edge") == 0 && e->mid == 0;
        const struct osn_net_link_cfg *down = is_uas    ? &none
                                              : is_uac  ? &c->access
                                              : is_core ? &c->uas_link
                                                        : &c->trunk;
        const struct osn_net_link_cfg *up = is_uac    ? &none
                                            : is_uas  ? &c->uas_link
                                            : is_edge ? &c->access
                                                      : &c->trunk;
        e->delay_down = own ? 0 : down->delay;
        e->loss_down = own ? 0 : down->loss;
        e->delay_up = own ? 0 : up->delay;
        e->loss_up = own ? 0 : up->loss;
        for (int k = 0; k < e->nnext; k++) {
            const struct osn_net_link_cfg *l = link_of(c, e->sim, net->e[e->next[k]].sim, down);
            e->hop_delay[k] = l->delay;
            e->hop_loss[k] = l->loss;
        }
    }
    net->own_links = own;
    for (int i = 0; i < net->n; i++)
        if (net->e[i].sim >= 0 && net->e[i].sim < c->named)
            snprintf(net->e[i].name, sizeof net->e[i].name, "%s", c->elem_names[net->e[i].sim]);
}

/* A tree (OSN_NET_TREE): the UAS, the core, the proxies each after its next hop, the sources.
 * Its proxies are edges (each with its [server NAME] when the file gives one: node.name); the
 * core's upstream neighbours hear its feedback, the others forward, as in the simulator. A proxy
 * may hear from sources and proxies over links of different delays, which its own end cannot
 * tell apart: every link is carried by its upstream end, both ways (links_and_names). */
static int tree_build(struct tb_net *net, const struct osn_net_cfg *c)
{
    int E = osn_net_role_count(c, OSN_NET_ROLE_SOURCE),
        P = osn_net_role_count(c, OSN_NET_ROLE_EDGE);
    int core_sim = E + P, at[TB_MAX_ELEMS];
    char name[16];

    if (osn_net_role_count(c, OSN_NET_ROLE_CORE) != 1 ||
        osn_net_role_count(c, OSN_NET_ROLE_UAS) != 1)
        return osn_cli_die("testbed", "a tree of several cores or UASs (a proxy choosing among "
                                      "cores) is not carried by the testbed yet: its proxies "
                                      "each take one next hop here (docs/scale.md)");
    if (E + P + 2 > TB_MAX_ELEMS)
        return osn_cli_die("testbed",
                           "a tree of %d sources and %d proxies: the testbed starts "
                           "at most %d processes (net.levels, net.fanout)",
                           E, P, TB_MAX_ELEMS);
    for (int i = 0; i < E + P + 2; i++)
        at[i] = -1;
    net->n = 0;
    at[core_sim + 1] = add(net, "uas", "uas", -1);
    net->e[at[core_sim + 1]].sim = core_sim + 1;
    at[core_sim] = add(net, "core", "core", at[core_sim + 1]);
    net->e[at[core_sim]].sim = core_sim;
    /* each proxy once its next hop is up: a pass adds at least the proxies next to those added */
    for (int added = 1; added;) {
        added = 0;
        for (int i = E; i < core_sim; i++) {
            int next = osn_net_tree_next_hop(c, i);
            if (at[i] >= 0 || next < 0 || at[next] < 0)
                continue;
            snprintf(name, sizeof name, "edge%d", i - E);
            at[i] = add(net, name, "edge", at[next]);
            net->e[at[i]].sim = i;
            added = 1;
        }
    }
    for (int i = 0; i < E; i++) {
        int next = osn_net_tree_next_hop(c, i);
        if (next < 0 || at[next] < 0)
            return osn_cli_die("testbed", "source %d of the tree reaches no proxy", i);
        snprintf(name, sizeof name, E == 1 ? "uac" : "uac%d", i);
        int k = at[i] = add(net, name, "uac", at[next]);
        net->e[k].share = osn_net_source_share(c, i, E);
        net->e[k].stream = i;
        net->e[k].sim = i;
    }
    links_and_names(net, c, true);
    return 0;
}

int tb_net_build(struct tb_net *net, const struct osn_net_cfg *c)
{
    bool fan = c->topology == OSN_NET_FANOUT;
    int E = c->topology == OSN_NET_FANIN || fan ? c->edges : 1;
    int C = fan ? c->cores : 1;
    char name[16];

    if (c->topology == OSN_NET_MESH)
        return osn_cli_die("testbed", "net.topology = mesh is not carried by the testbed yet: "
                                      "its processes are the built-in shapes', and an osn node "
                                      "edge of a mesh would choose among cores of several "
                                      "regions (docs/scale.md)");
    if (c->topology == OSN_NET_TREE)
        return tree_build(net, c);
    if (E < 1 || E > TB_MAX_EDGES)
        return osn_cli_die("testbed", "net.edges = %d: expected 1 .. %d (one process each)", E,
                           TB_MAX_EDGES);
    if (C < 1 || C > TB_MAX_CORES)
        return osn_cli_die("testbed", "net.cores = %d: expected 1 .. %d (an osn node's next hops)",
                           C, TB_MAX_CORES);
    net->n = 0;
    int uas = add(net, "uas", "uas", -1);
    net->e[uas].sim = osn_net_elem_index(c, OSN_NET_ROLE_UAS, 0);
    int core = net->n;
    for (int i = 0; i < C; i++) {
        snprintf(name, sizeof name, i == 0 ? "core" : "core%d", i + 1);
        struct tb_elem *e = &net->e[add(net, name, "core", uas)];
        e->core = i;
        e->sim = osn_net_elem_index(c, OSN_NET_ROLE_CORE, i);
    }
    /* A chain's mids from the core back: mid K's next hop is mid K + 1, the last one's the
     * core. One mid keeps the built-in tandem's name. */
    int first_hop = core, mids = c->topology == OSN_NET_TANDEM ? c->mids : 0;
    for (int k = mids; k >= 1; k--) {
        snprintf(name, sizeof name, mids == 1 ? "mid" : "mid%d", k);
        first_hop = add(net, name, "edge", first_hop);
        net->e[first_hop].mid = k;
        net->e[first_hop].sim = osn_net_elem_index(c, OSN_NET_ROLE_MID, k - 1);
    }
    int edge0 = net->n;
    for (int i = 0; i < E; i++) {
        snprintf(name, sizeof name, E == 1 ? "edge" : "edge%d", i);
        struct tb_elem *e = &net->e[add(net, name, "edge", first_hop)];
        e->sim = osn_net_elem_index(c, OSN_NET_ROLE_EDGE, i);
        if (fan) { /* every core, in the scenario's order (its weights') */
            for (int k = 0; k < C; k++)
                e->next[k] = core + k;
            e->nnext = C;
        }
    }
    for (int i = 0; i < E; i++) {
        snprintf(name, sizeof name, E == 1 ? "uac" : "uac%d", i);
        int k = add(net, name, "uac", edge0 + i);
        net->e[k].share = osn_net_source_share(c, i, E);
        net->e[k].stream = i;
        net->e[k].sim = osn_net_elem_index(c, OSN_NET_ROLE_SOURCE, i);
    }
    links_and_names(net, c, c->nlinks > 0);
    return 0;
}

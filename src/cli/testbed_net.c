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
 * (node.link_loss_down, link_loss_up).
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

/* A topology the user wrote: each element takes its name, found by its role and its index
 * within the role (osn_net_elem_index, the simulator's order of osn/net.h's elem_names): the
 * UAS, core `core`, mid `mid`, and source `stream` with its first proxy, edge `stream`. */
static void name_elems(struct tb_net *net, const struct osn_net_cfg *c)
{
    for (int i = 0; i < net->n; i++) {
        struct tb_elem *e = &net->e[i];
        int sim = -1, edge = -1;
        if (strcmp(e->element, "uas") == 0)
            sim = osn_net_elem_index(c, OSN_NET_ROLE_UAS, 0);
        else if (strcmp(e->element, "core") == 0)
            sim = osn_net_elem_index(c, OSN_NET_ROLE_CORE, e->core);
        else if (strcmp(e->element, "uac") == 0) {
            sim = osn_net_elem_index(c, OSN_NET_ROLE_SOURCE, e->stream);
            edge = osn_net_elem_index(c, OSN_NET_ROLE_EDGE, e->stream);
        } else if (e->mid > 0)
            sim = osn_net_elem_index(c, OSN_NET_ROLE_MID, e->mid - 1);
        if (sim >= 0 && sim < c->named)
            snprintf(e->name, sizeof e->name, "%s", c->elem_names[sim]);
        if (edge >= 0 && edge < c->named) /* a source's next hop is its edge */
            snprintf(net->e[e->next[0]].name, sizeof e->name, "%s", c->elem_names[edge]);
    }
}

double tb_net_capacity(const struct osn_net_cfg *c)
{
    double cap = osn_net_core_capacity(c);
    if (c->topology == OSN_NET_FANOUT)
        for (int i = 1; i < c->cores; i++)
            cap += osn_net_capacity(&c->more_cores[i - 1], 3);
    return cap;
}

int tb_net_build(struct tb_net *net, const struct osn_net_cfg *c)
{
    bool fan = c->topology == OSN_NET_FANOUT;
    int E = c->topology == OSN_NET_FANIN || fan ? c->edges : 1;
    int C = fan ? c->cores : 1;
    char name[16];

    if (c->topology == OSN_NET_TREE)
        return osn_cli_die("testbed", "a tree (net.topology = tree, or a written tree of no "
                                      "built-in shape) is not carried by the testbed yet: its "
                                      "processes are the built-in shapes' (docs/scale.md)");
    if (E < 1 || E > TB_MAX_EDGES)
        return osn_cli_die("testbed", "net.edges = %d: expected 1 .. %d (one process each)", E,
                           TB_MAX_EDGES);
    if (C < 1 || C > TB_MAX_CORES)
        return osn_cli_die("testbed", "net.cores = %d: expected 1 .. %d (an osn node's next hops)",
                           C, TB_MAX_CORES);
    net->n = 0;
    int uas = add(net, "uas", "uas", -1);
    int core = net->n;
    for (int i = 0; i < C; i++) {
        snprintf(name, sizeof name, i == 0 ? "core" : "core%d", i + 1);
        net->e[add(net, name, "core", uas)].core = i;
    }
    /* A chain's mids from the core back: mid K's next hop is mid K + 1, the last one's the
     * core. One mid keeps the built-in tandem's name. */
    int first_hop = core, mids = c->topology == OSN_NET_TANDEM ? c->mids : 0;
    for (int k = mids; k >= 1; k--) {
        snprintf(name, sizeof name, mids == 1 ? "mid" : "mid%d", k);
        first_hop = add(net, name, "edge", first_hop);
        net->e[first_hop].mid = k;
    }
    int edge0 = net->n;
    for (int i = 0; i < E; i++) {
        snprintf(name, sizeof name, E == 1 ? "edge" : "edge%d", i);
        struct tb_elem *e = &net->e[add(net, name, "edge", first_hop)];
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
    }
    /* The links as the simulator takes them (src/sim/net_run.c): access from a source to its
     * edge, the uas link from a core to the UAS, trunk between the proxies (edge -> mid ->
     * core, edge -> core), each the same delay and loss both ways. */
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
        e->delay_down = down->delay;
        e->loss_down = down->loss;
        e->delay_up = up->delay;
        e->loss_up = up->loss;
    }
    if (c->named)
        name_elems(net, c);
    return 0;
}

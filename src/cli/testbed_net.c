/*
 * The elements of a network scenario as `osn testbed` starts them, one `osn node` each, in the
 * order the simulator wires them (src/sim/net.c, osn__net_elems):
 *
 *     collapse   uac -> edge -> core -> uas
 *     tandem     uac -> edge -> mid -> core -> uas      (mid: an edge proxy with edge costs)
 *     fanin      uacI -> edgeI -> core -> uas, I = 0 .. edges-1, each source rate / edges
 *
 * The list is in start order, the callee first: a proxy's next hop is the port its downstream
 * element reported, so the downstream element must be up before it. A fan-in's sources draw
 * from independent streams (net.seed + I), as the simulator's sources do.
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
    e->next = next;
    e->share = 1;
    e->p.out_fd = -1;
    return net->n++;
}

int tb_net_build(struct tb_net *net, const struct osn_net_cfg *c)
{
    int E = c->topology == OSN_NET_FANIN ? c->edges : 1;
    char name[16];

    if (c->topology == OSN_NET_FANOUT) /* an edge with several next hops: not wired here yet */
        return osn_cli_die("testbed", "net.topology = fanout: the testbed does not run it yet "
                                      "(run osn node edges with next_hop = CORE, CORE2 by hand, "
                                      "docs/node.md)");
    if (E < 1 || E > OSN_NET_MAX_EDGES)
        return osn_cli_die("testbed", "net.edges = %d: expected 1 .. %d", E, OSN_NET_MAX_EDGES);
    net->n = 0;
    int uas = add(net, "uas", "uas", -1);
    int core = add(net, "core", "core", uas);
    int first_hop = core;
    if (c->topology == OSN_NET_TANDEM)
        first_hop = add(net, "mid", "edge", core);
    int edge0 = net->n;
    for (int i = 0; i < E; i++) {
        snprintf(name, sizeof name, E == 1 ? "edge" : "edge%d", i);
        add(net, name, "edge", first_hop);
    }
    for (int i = 0; i < E; i++) {
        snprintf(name, sizeof name, E == 1 ? "uac" : "uac%d", i);
        int k = add(net, name, "uac", edge0 + i);
        net->e[k].share = 1.0 / E;
        net->e[k].stream = i;
    }
    return 0;
}

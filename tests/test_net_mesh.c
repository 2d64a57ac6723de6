/*
 * Proxies that choose among several cores past the first proxies, and `topology = mesh`
 * (issue 32's fan32 branch). Against independent references:
 *
 * - a graph written by hand: four sources (20, 20, 40, 40 calls/s) each into an edge, two edges
 *   into each of two regional proxies, r0 choosing between cores c0 and c1 by weights 3 and 1,
 *   r1 by 1 and 1, each core into the UAS, every proxy [server px], at low load: each proxy busy
 *   the rate routed through it (the weights' shares of the rates into the regional proxies) x
 *   its per-call cost (INVITE, ACK, BYE and its responses) within 2 %, and each core's share of
 *   the INVITEs the weights' within three binomial standard deviations; the network's core
 *   measures are c0's (the first core's, as a fanout's);
 * - `topology = mesh` of one region is `topology = fanin` of as many edges bit for bit (every
 *   estimate, half-width and count), in overload under rate and loss control;
 * - `topology = mesh` of two regions of two edges, local_share 0.75, region 0 offering three
 *   times region 1's calls, at low load: each core busy its share (3/4 of its region's calls
 *   and 1/4 of the other's) x its per-call cost within 2 %, each edge its source's, and the
 *   first core's share of the INVITEs the weights' within three binomial standard deviations;
 * - each core into a UAS of its own (a regional proxy choosing between them, another proxy into
 *   the second alone), at low load: each UAS busy its core's calls x its INVITE, ACK and BYE,
 *   each core its calls x its per-call cost, within 2 %;
 * - refused, naming the key: a choice among proxies that are not cores, UASs of different costs,
 *   a share outside 0 .. 1, control at the edges of a mesh, more sources than net.edges allows.
 */
#include <setjmp.h> /* cmocka needs these before its header */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "net_run_util.h"
#include "osn/err.h"
#include "osn/net.h"
#include "osn/net_scenario.h"

/* Core a's share of the INVITEs the cores a and b processed is p, within three binomial
 * standard deviations of n calls. */
static void assert_share(const struct osn_net_result *r, int a, int b, double p, double n)
{
    double ia = r->elem[a][OSN_NET_E_PROC + OSN_NET_K_INVITE].value;
    double ib = r->elem[b][OSN_NET_E_PROC + OSN_NET_K_INVITE].value;
    double share = ia / (ia + ib), tol = 3 * sqrt(p * (1 - p) / n);
    if (!(fabs(share - p) < tol))
        fprintf(stderr, "%s: share %g of the INVITEs, the weights' %g +- %g\n", r->elem_name[a],
                share, p, tol);
    assert_true(fabs(share - p) < tol);
}

/* Sources s0..s3 (20, 20, 40, 40 calls/s) into edges e0..e3, e0 and e1 into r0, e2 and e3
 * into r1; r0 chooses c0 or c1 by 3 and 1, r1 by 1 and 1; c0 and c1 into the UAS u. */
static const char written[] =
        "[source]\nhold = 1\n" PX "[source s0]\nto = e0\nrate = 20\n[source s1]\nto = e1\n"
        "rate = 20\n[source s2]\nto = e2\nrate = 40\n[source s3]\nto = e3\nrate = 40\n"
        "[element e0]\nrole = proxy\nserver = px\nnext_hop = r0\n"
        "[element e1]\nrole = proxy\nserver = px\nnext_hop = r0\n"
        "[element e2]\nrole = proxy\nserver = px\nnext_hop = r1\n"
        "[element e3]\nrole = proxy\nserver = px\nnext_hop = r1\n"
        "[element r0]\nrole = proxy\nserver = px\nnext_hop = c0, c1\nnext_hop_weights = 3, 1\n"
        "[element r1]\nrole = proxy\nserver = px\nnext_hop = c0, c1\n"
        "[element c0]\nrole = proxy\nserver = px\nnext_hop = u\n"
        "[element c1]\nrole = proxy\nserver = px\nnext_hop = u\n"
        "[element u]\nrole = uas\n";

static void test_written_choice(void **state)
{
    (void)state;
    const char *sets[] = {"net.time=100", "net.warmup=5", "net.replications=4"};
    struct osn_net_scenario *s = must_load(written, sets, 3);
    assert_int_equal(s->cfg.topology, OSN_NET_TREE);
    assert_int_equal(s->cfg.tree_cores, 2);
    struct osn_net_result r;
    run(&s->cfg, &r);
    /* Rows: s0..s3, e0..e3, r0, r1, c0, c1, u. */
    assert_int_equal(r.nelem, 13);
    assert_string_equal(r.elem_name[8], "r0");
    assert_string_equal(r.elem_name[11], "c1");
    assert_true(r.est[OSN_NET_FAILED].value == 0);
    double off[4], a, b;
    for (int i = 0; i < 4; i++) {
        off[i] = r.elem[i][OSN_NET_E_SRC_OFFERED].value;
        assert_util(&r, 4 + i, off[i] * px_call(4)); /* edge i: its source's calls */
    }
    a = off[0] + off[1], b = off[2] + off[3];
    assert_true(fabs(a - 40) < 2 && fabs(b - 80) < 3);
    assert_util(&r, 8, a * px_call(4));
    assert_util(&r, 9, b * px_call(4));
    /* the cores: r0's 3/4 and r1's 1/2 to c0, the rest to c1; the UAS sends no 100 */
    assert_share(&r, 10, 11, (0.75 * a + 0.5 * b) / (a + b), (a + b) * 100 * 4);
    assert_util(&r, 10, (0.75 * a + 0.5 * b) * px_call(3));
    assert_util(&r, 11, (0.25 * a + 0.5 * b) * px_call(3));
    /* the network's core measures are the first core's, as a fanout's */
    assert_true(r.est[OSN_NET_CORE_UTIL].value == r.elem[10][OSN_NET_E_UTIL].value);
    osn_net_result_release(&r);
    unload(s);
}

static void test_one_region_is_fanin(void **state)
{
    (void)state;
    assert_loaded_fanin("[net]\ntopology = mesh\nregions = 1\nedges = 4\n", OSN_NET_MESH);
}

/* Two regions of two edges, 80 calls/s in all (30, 30, 10 and 10: region 0 offers three times
 * region 1's), local_share 0.75. */
static void test_two_regions(void **state)
{
    (void)state;
    const char *sets[] = {"net.time=100", "net.warmup=5", "net.replications=4"};
    struct osn_net_scenario *s =
            must_load("[net]\ntopology = mesh\nregions = 2\nedges = 2\nlocal_share = 0.75\n"
                      "[source]\nrate = 80\nhold = 1\nshares = 3, 3, 1, 1\n",
                      sets, 3);
    assert_int_equal(s->cfg.edges, 2); /* a region's */
    assert_int_equal(osn_net_role_count(&s->cfg, OSN_NET_ROLE_SOURCE), 4);
    assert_int_equal(s->cfg.tree_cores, 2);
    struct osn_net_result r;
    run(&s->cfg, &r);
    /* Rows: uac0..uac3, edge0..edge3, core, core2, uas. */
    assert_int_equal(r.nelem, 11);
    assert_string_equal(r.elem_name[9], "core2");
    const struct osn_net_cfg cfg = s->cfg, *c = &cfg; /* its costs, read after the unload */
    double edge4 = c->edge.cost[OSN_NET_K_INVITE] + c->edge.cost[OSN_NET_K_ACK] +
                   c->edge.cost[OSN_NET_K_BYE] + 4 * c->edge.cost[OSN_NET_K_RESP];
    double core3 = c->core.cost[OSN_NET_K_INVITE] + c->core.cost[OSN_NET_K_ACK] +
                   c->core.cost[OSN_NET_K_BYE] + 3 * c->core.cost[OSN_NET_K_RESP];
    double region[2] = {0};
    for (int j = 0; j < 4; j++) {
        double off = r.elem[j][OSN_NET_E_SRC_OFFERED].value;
        assert_util(&r, 4 + j, off * edge4);
        region[j / 2] += off;
    }
    assert_true(r.est[OSN_NET_FAILED].value == 0);
    assert_true(fabs(region[0] - 60) < 3 && fabs(region[1] - 20) < 1.5);
    assert_util(&r, 8, (0.75 * region[0] + 0.25 * region[1]) * core3);
    assert_util(&r, 9, (0.25 * region[0] + 0.75 * region[1]) * core3);
    double all = region[0] + region[1];
    assert_share(&r, 8, 9, (0.75 * region[0] + 0.25 * region[1]) / all, all * 100 * 4);
    osn_net_result_release(&r);
    unload(s);
}

/* Source a (20 calls/s) into e, then r, which chooses c0 or c1 alike; source b (40 calls/s)
 * into f, then c1; c0 into the UAS u0, c1 into u1; every element [server px]. */
#define TWO_UAS                                                                          \
    "[source]\nhold = 1\n[source a]\nto = e\nrate = 20\n[source b]\nto = f\nrate = 40\n" \
    "[element e]\nrole = proxy\nserver = px\nnext_hop = r\n"                             \
    "[element f]\nrole = proxy\nserver = px\nnext_hop = c1\n"                            \
    "[element r]\nrole = proxy\nserver = px\nnext_hop = c0, c1\n"                        \
    "[element c0]\nrole = proxy\nserver = px\nnext_hop = u0\n"                           \
    "[element c1]\nrole = proxy\nserver = px\nnext_hop = u1\n"                           \
    "[element u0]\nrole = uas\nserver = px\n[element u1]\nrole = uas\nserver = px\n"

/* Each core's UAS: u0 busy c0's calls (half of a's) and u1 c1's (half of a's and b's) x the
 * INVITE, ACK and BYE it processes, within 2 %; c1 its calls x its per-call cost. */
static void test_two_uas(void **state)
{
    (void)state;
    const char *sets[] = {"net.time=100", "net.warmup=5", "net.replications=4"};
    struct osn_net_scenario *s = must_load(PX TWO_UAS, sets, 3);
    assert_int_equal(s->cfg.tree_uas, 2);
    struct osn_net_result r;
    run(&s->cfg, &r);
    /* Rows: a, b, e, f, r, c0, c1, u0, u1. */
    assert_int_equal(r.nelem, 9);
    assert_string_equal(r.elem_name[4], "r");
    assert_string_equal(r.elem_name[8], "u1");
    assert_true(r.est[OSN_NET_FAILED].value == 0);
    double a = r.elem[0][OSN_NET_E_SRC_OFFERED].value, b = r.elem[1][OSN_NET_E_SRC_OFFERED].value;
    assert_true(fabs(a - 20) < 1 && fabs(b - 40) < 1.5);
    assert_util(&r, 5, 0.5 * a * px_call(3));
    assert_util(&r, 6, (0.5 * a + b) * px_call(3));
    assert_util(&r, 7, 0.5 * a * px_call(0));
    assert_util(&r, 8, (0.5 * a + b) * px_call(0));
    osn_net_result_release(&r);
    unload(s);
}

static void test_refused(void **state)
{
    (void)state;
    /* e chooses between r0 and r1, regional proxies, each into a core of its own */
    assert_refused("[source a]\nto = e\n[source b]\nto = f\n"
                   "[element e]\nrole = proxy\nserver = edge\nnext_hop = r0, r1\n"
                   "[element f]\nrole = proxy\nserver = edge\nnext_hop = r0\n"
                   "[element r0]\nrole = proxy\nserver = edge\nnext_hop = c0\n"
                   "[element r1]\nrole = proxy\nserver = edge\nnext_hop = c1\n"
                   "[element c0]\nrole = proxy\nserver = core\nnext_hop = u\n"
                   "[element c1]\nrole = proxy\nserver = core\nnext_hop = u\n"
                   "[element u]\nrole = uas\n",
                   NULL, "element e.next_hop", "r0 is not a core");
    /* each core into a UAS of its own, of different costs */
    assert_refused(PX TWO_UAS, "element u1.server=edge", "element u1.server",
                   "several UASs share one [server NAME]");
    assert_refused("[net]\ntopology = mesh\n", "net.local_share=1.5", "net.local_share",
                   "a share is in 0 .. 1");
    assert_refused("[net]\ntopology = mesh\n[control]\nkind = rate\nat = edge\n", NULL,
                   "control.at", "control at the core only");
    assert_refused("[net]\ntopology = mesh\nregions = 3\nedges = 6000\n", NULL, "net.edges",
                   "16384 at most");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_refused),        cmocka_unit_test(test_one_region_is_fanin),
            cmocka_unit_test(test_written_choice), cmocka_unit_test(test_two_regions),
            cmocka_unit_test(test_two_uas),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

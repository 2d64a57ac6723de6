/*
 * Networks shaped as trees (issue 32): every proxy with one next hop, up to one core, then the
 * UAS; sources at any proxy below the core. Against independent references:
 *
 * - `topology = tree`, `levels = 2`, `fanout = 4` is `topology = fanin`, `edges = 4` bit for
 *   bit (every estimate, half-width and count), under rate and loss control in overload.
 * - a tree written by hand in the generator's order is `topology = tree` bit for bit.
 * - a chain of 3 proxies with a source at the first and another at the second, at low load:
 *   each proxy busy (the sum of the rates through it) x its per-call cost, within 2 %; the
 *   second source's mean setup delay is one hop shorter: its first proxy's INVITE and 180 costs
 *   and twice a link's delay less, within three times the half-widths.
 * - `topology = tree`, `levels = 3`, `fanout = 3` at low load: each leaf, each regional proxy
 *   and the core busy the rate through it x its per-call cost, within 2 %; its mean setup delay
 *   is a two-level tree's plus one hop (an edge's INVITE and 180, twice the trunk's delay).
 * - refused, naming the key: a source into the core, control at the edges, net.edges beside
 *   a generated tree, a tree of more sources than net.edges allows, a path past 8 hops.
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

static void test_levels2_is_fanin(void **state)
{
    (void)state;
    assert_loaded_fanin("[net]\ntopology = tree\nlevels = 2\nfanout = 4\n", OSN_NET_TREE);
}

/* A tree of 3 levels, fanout 2, written in the generator's order: sources s0..s3 into leaves
 * l0..l3, l0 and l1 into r0, l2 and l3 into r1, both into the core c, then the UAS. */
static void test_written_is_generated(void **state)
{
    (void)state;
    const char *sets[] = {"net.time=3", "net.warmup=2", "net.replications=2", "control.kind=rate"};
    char text[4096];
    size_t used = (size_t)snprintf(text, sizeof text, LOADED);
    for (int i = 0; i < 4; i++)
        used += (size_t)snprintf(text + used, sizeof text - used,
                                 "[source s%d]\nto = l%d\n[element l%d]\nrole = proxy\n"
                                 "server = edge\nnext_hop = r%d\n",
                                 i, i, i, i / 2);
    snprintf(text + used, sizeof text - used,
             "[element r0]\nrole = proxy\nserver = edge\nnext_hop = c\n"
             "[element r1]\nrole = proxy\nserver = edge\nnext_hop = c\n"
             "[element c]\nrole = proxy\nserver = core\nnext_hop = u\n"
             "[element u]\nrole = uas\n");
    struct osn_net_scenario *w = must_load(text, sets, 4);
    struct osn_net_scenario *g =
            must_load("[net]\ntopology = tree\nlevels = 3\nfanout = 2\n" LOADED, sets, 4);
    assert_int_equal(w->cfg.topology, OSN_NET_TREE);
    assert_int_equal(w->cfg.proxies, 6);
    struct osn_net_result rw, rg;
    run(&w->cfg, &rw);
    run(&g->cfg, &rg);
    assert_same(&rw, &rg);
    assert_string_equal(rw.elem_name[8], "r0");
    assert_string_equal(rw.elem_name[10], "c");
    osn_net_result_release(&rw);
    osn_net_result_release(&rg);
    unload(w);
    unload(g);
}

/* p1 -> p2 -> p3 (the core) -> u, every proxy [server px], links between proxies of 3 ms;
 * source a (rate ra) into p1, source b (rate rb) into p2. */
static struct osn_net_scenario *chain(double ra, double rb, const char *const *sets, int nsets)
{
    char text[2048];
    snprintf(text, sizeof text,
             "[source]\nhold = 1\n" PX "[source a]\nto = p1\nrate = %g\n[source b]\nto = p2\n"
             "rate = %g\n"
             "[element p1]\nrole = proxy\nserver = px\nnext_hop = p2\n"
             "[element p2]\nrole = proxy\nserver = px\nnext_hop = p3\n"
             "[element p3]\nrole = proxy\nserver = px\nnext_hop = u\n"
             "[element u]\nrole = uas\n"
             "[link p1-p2]\ndelay = 0.003\n[link p2-p3]\ndelay = 0.003\n",
             ra, rb);
    struct osn_net_scenario *s = must_load(text, sets, nsets);
    assert_int_equal(s->cfg.topology, OSN_NET_TREE);
    return s;
}

static void test_chain_two_sources(void **state)
{
    (void)state;
    /* Utilisation: 20 and 40 calls/s (p3 busy about 5 %), 4 x 100 s. Rows: a, b, p1, p2, p3,
     * u (the proxies level by level from the sources' first: p1, p2). */
    const char *sets[] = {"net.time=100", "net.warmup=5", "net.replications=4"};
    struct osn_net_scenario *s = chain(20, 40, sets, 3);
    struct osn_net_result r;
    run(&s->cfg, &r);
    assert_int_equal(r.nelem, 6);
    assert_string_equal(r.elem_name[2], "p1");
    assert_string_equal(r.elem_name[4], "p3");
    double a = r.elem[0][OSN_NET_E_SRC_OFFERED].value, b = r.elem[1][OSN_NET_E_SRC_OFFERED].value;
    assert_true(fabs(a - 20) < 1 && fabs(b - 40) < 1.5);
    assert_true(r.est[OSN_NET_FAILED].value == 0);
    assert_util(&r, 2, a * px_call(4));       /* p1: a's calls, 4 responses (100, 180, 200s) */
    assert_util(&r, 3, (a + b) * px_call(4)); /* p2: both */
    assert_util(&r, 4, (a + b) * px_call(3)); /* p3, the core: the UAS sends no 100 */
    osn_net_result_release(&r);
    unload(s);

    /* Setup delay at 2 calls/s each: a's path has one hop more, p1 and a 3 ms link. */
    const char *low[] = {"net.time=200", "net.warmup=5", "net.replications=4"};
    s = chain(2, 2, low, 3);
    run(&s->cfg, &r);
    const struct osn_net_est *da = &r.elem[0][OSN_NET_E_SRC_SETUP];
    const struct osn_net_est *db = &r.elem[1][OSN_NET_E_SRC_SETUP];
    double want = PX_INVITE + PX_OTHER + 2 * 0.003, tol = fmax(3 * (da->hw + db->hw), 1e-6);
    if (!(fabs(da->value - db->value - want) < tol))
        fprintf(stderr, "setup a %g +- %g, b %g +- %g: a - b %g, want %g +- %g\n", da->value,
                da->hw, db->value, db->hw, da->value - db->value, want, tol);
    assert_true(fabs(da->value - db->value - want) < tol);
    /* and b's is its own path's: 3 links each way (5, 3 and 5 ms), p2's and p3's INVITE and
     * 180, the UAS's INVITE (its defaults: none at low load beyond its cost) */
    osn_net_result_release(&r);
    unload(s);
}

/* `topology = tree`, levels 3, fanout 3, 90 calls/s in all (10 a source): 9 sources, 9
 * leaves (edge costs), 3 regional proxies (edge costs), the core, the UAS. */
static void test_levels3(void **state)
{
    (void)state;
    const char *sets[] = {"net.time=100", "net.warmup=5", "net.replications=4"};
    struct osn_net_scenario *s = must_load(
            "[net]\ntopology = tree\nlevels = 3\nfanout = 3\n[source]\nrate = 90\nhold = 1\n", sets,
            3);
    assert_int_equal(s->cfg.edges, 9);
    struct osn_net_result r;
    run(&s->cfg, &r);
    assert_int_equal(r.nelem, 9 + 9 + 3 + 2);
    const struct osn_net_cfg cfg = s->cfg, *c = &cfg; /* its costs, read after the unload */
    double edge4 = c->edge.cost[OSN_NET_K_INVITE] + c->edge.cost[OSN_NET_K_ACK] +
                   c->edge.cost[OSN_NET_K_BYE] + 4 * c->edge.cost[OSN_NET_K_RESP];
    double core3 = c->core.cost[OSN_NET_K_INVITE] + c->core.cost[OSN_NET_K_ACK] +
                   c->core.cost[OSN_NET_K_BYE] + 3 * c->core.cost[OSN_NET_K_RESP];
    double total = 0, region[3] = {0};
    for (int j = 0; j < 9; j++) {
        double off = r.elem[j][OSN_NET_E_SRC_OFFERED].value;
        assert_util(&r, 9 + j, off * edge4); /* leaf j: source j's calls */
        region[j / 3] += off;                /* leaf j into regional proxy j / 3 */
        total += off;
    }
    for (int k = 0; k < 3; k++)
        assert_util(&r, 18 + k, region[k] * edge4);
    assert_util(&r, 21, total * core3);
    assert_true(fabs(total - 90) < 3);
    osn_net_result_release(&r);
    unload(s);

    /* One level more is one hop more: an edge's INVITE and 180, twice the trunk's 5 ms. */
    const char *low[] = {"net.time=200", "net.warmup=5", "net.replications=4"};
    struct osn_net_scenario *t3 = must_load(
            "[net]\ntopology = tree\nlevels = 3\nfanout = 2\n[source]\nrate = 2\nhold = 1\n", low,
            3);
    struct osn_net_scenario *t2 = must_load(
            "[net]\ntopology = tree\nlevels = 2\nfanout = 2\n[source]\nrate = 2\nhold = 1\n", low,
            3);
    struct osn_net_result r3, r2;
    run(&t3->cfg, &r3);
    run(&t2->cfg, &r2);
    const struct osn_net_est *d3 = &r3.est[OSN_NET_SETUP_MEAN], *d2 = &r2.est[OSN_NET_SETUP_MEAN];
    double want = c->edge.cost[OSN_NET_K_INVITE] + c->edge.cost[OSN_NET_K_RESP] + 2 * 0.005;
    double tol = fmax(3 * (d3->hw + d2->hw), 1e-6);
    if (!(fabs(d3->value - d2->value - want) < tol))
        fprintf(stderr, "setup 3 levels %g +- %g, 2 levels %g +- %g: want %g more +- %g\n",
                d3->value, d3->hw, d2->value, d2->hw, want, tol);
    assert_true(fabs(d3->value - d2->value - want) < tol);
    osn_net_result_release(&r3);
    osn_net_result_release(&r2);
    unload(t3);
    unload(t2);
}

#define CHAIN                                                    \
    "[source a]\nto = p1\n[source b]\nto = p2\n"                 \
    "[element p1]\nrole = proxy\nserver = edge\nnext_hop = p2\n" \
    "[element p2]\nrole = proxy\nserver = edge\nnext_hop = p3\n" \
    "[element p3]\nrole = proxy\nserver = core\nnext_hop = u\n[element u]\nrole = uas\n"

static void test_refused(void **state)
{
    (void)state;
    assert_refused("[source a]\nto = p1\n[source b]\nto = p3\n"
                   "[element p1]\nrole = proxy\nserver = edge\nnext_hop = p2\n"
                   "[element p2]\nrole = proxy\nserver = edge\nnext_hop = p3\n"
                   "[element p3]\nrole = proxy\nserver = core\nnext_hop = u\n"
                   "[element u]\nrole = uas\n",
                   NULL, "source b.to", "sends to the core p3");
    assert_refused(CHAIN "[control]\nkind = rate\nat = edge\n", NULL, "control.at",
                   "a tree carries control at the core only");
    assert_refused("[net]\ntopology = tree\nedges = 4\n", NULL, "net.edges", "leave net.edges out");
    assert_refused("[net]\ntopology = tree\nlevels = 7\n", "net.fanout=6", "net.fanout",
                   "1 .. 16384 sources");
    assert_refused("[net]\ntopology = tree\nlevels = 3\n", "net.fanout=200", "net.fanout",
                   "1 .. 16384 sources");
    /* b enters at p2 of a chain of 8 proxies: a's path would have 9 hops */
    char text[2048];
    size_t used = (size_t)snprintf(text, sizeof text, "[source a]\nto = p1\n[source b]\nto = p2\n");
    for (int i = 1; i <= 8; i++)
        used += (size_t)snprintf(text + used, sizeof text - used,
                                 "[element p%d]\nrole = proxy\nserver = edge\nnext_hop = %s%d\n", i,
                                 i < 8 ? "p" : "u", i < 8 ? i + 1 : 0);
    snprintf(text + used, sizeof text - used, "[element u0]\nrole = uas\n");
    assert_refused(text, NULL, "element p7.next_hop", "a call's path has 8 hops at most");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_refused),
            cmocka_unit_test(test_levels2_is_fanin),
            cmocka_unit_test(test_written_is_generated),
            cmocka_unit_test(test_chain_two_sources),
            cmocka_unit_test(test_levels3),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

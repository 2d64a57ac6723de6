/*
 * Tests of the SIP network simulator (src/sim/net*.c) against independent references:
 *
 * - light load: goodput = offered, core utilisation = offered x the CPU work per call from the
 *   cost model, setup delay >= the six one-way link delays of INVITE out and 180 back;
 * - the done criteria of issue 5 on the collapse topology: without control the goodput falls
 *   below half of capacity at 3x offered load; with loss and with rate it stays at or above 90%
 *   of capacity at 3x and 10x, and fewer than 1% of the calls the core admits fail;
 * - a single SIP server with exponential costs and the local controller (hysteretic detector)
 *   spends the time in each mode the exact solver gives for the two-loop M|M|1 model;
 * - a rate profile offers its time-average rate; lossy links are recovered by retransmissions;
 * - reproducibility: same seed, same numbers, whatever the thread count.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "osn/model.h"
#include "osn/net.h"
#include "osn/xd.h"

static struct osn_net_result *run(const struct osn_net_cfg *c)
{
    static struct osn_net_result r;
    char msg[256] = "";
    int err = osn_net_run(c, &r, msg, sizeof msg);
    if (err)
        fprintf(stderr, "osn_net_run: %s\n", msg);
    assert_int_equal(err, 0);
    return &r;
}

static double val(const struct osn_net_result *r, int i)
{
    return r->est[i].value;
}

/* The collapse topology of examples/collapse.ini, long enough warm-up to see Timer B. */
static void collapse_cfg(struct osn_net_cfg *c, const char *kind, double load)
{
    osn_net_cfg_default(c);
    c->time = 10;
    c->warmup = 35;
    c->replications = 2;
    c->seed = 7;
    c->edge.buffer = 2000;
    c->core.buffer = 50000;
    c->ctl.loss.target = c->ctl.rate.target = 0.95;
    snprintf(c->ctl_kind, sizeof c->ctl_kind, "%s", kind);
    c->src.rate = load * osn_net_core_capacity(c);
}

static void test_capacity_formula(void **state)
{
    (void)state;
    struct osn_net_cfg c;
    osn_net_cfg_default(&c);
    /* INVITE 1 + ACK 0.3 + BYE 0.5 + 3 responses x 0.3 = 2.7 ms */
    assert_float_equal(osn_net_core_capacity(&c), 1 / 2.7e-3, 1e-9);
}

static void test_light_load(void **state)
{
    (void)state;
    struct osn_net_cfg c;
    osn_net_cfg_default(&c);
    c.src.rate = 150;
    c.time = 30;
    c.warmup = 5;
    c.replications = 2;
    struct osn_net_result *r = run(&c);
    double off = val(r, OSN_NET_OFFERED);
    assert_true(fabs(off - 150) < 0.06 * 150);
    assert_true(fabs(val(r, OSN_NET_GOODPUT) - off) < 0.03 * off);
    assert_true(val(r, OSN_NET_FAILED) == 0);
    assert_true(val(r, OSN_NET_RETRANS_RATIO) == 0);
    /* utilisation = rate x work per call (the UAS sends no 100: 3 responses at the core) */
    double rho = val(r, OSN_NET_GOODPUT) * 2.7e-3;
    assert_true(fabs(val(r, OSN_NET_CORE_UTIL) - rho) < 0.03);
    double d = val(r, OSN_NET_SETUP_MEAN);
    assert_true(d >= 6 * 0.005 && d < 6 * 0.005 + 0.02);
    /* every new INVITE the edge saw reached the core and the UAS */
    int core = r->nelem - 2;
    assert_true(fabs(r->elem[core][OSN_NET_E_PROC + OSN_NET_K_INVITE].value - off) < 0.03 * off);
}

static void test_collapse_without_control(void **state)
{
    (void)state;
    struct osn_net_cfg c;
    collapse_cfg(&c, "none", 3);
    struct osn_net_result *r = run(&c);
    double cap = val(r, OSN_NET_CAPACITY);
    fprintf(stderr, "none 3x: goodput %.1f of capacity %.1f\n", val(r, OSN_NET_GOODPUT), cap);
    assert_true(val(r, OSN_NET_GOODPUT) < 0.5 * cap);
    assert_true(val(r, OSN_NET_FAILED_TIMEOUT) > 0.5 * val(r, OSN_NET_OFFERED));
}

static void check_controlled(const char *kind, double load)
{
    struct osn_net_cfg c;
    collapse_cfg(&c, kind, load);
    struct osn_net_result *r = run(&c);
    double cap = val(r, OSN_NET_CAPACITY), g = val(r, OSN_NET_GOODPUT);
    fprintf(stderr, "%s %gx: goodput %.1f of capacity %.1f, admitted failed %.4f\n", kind, load, g,
            cap, val(r, OSN_NET_ADMITTED_TIMEOUT));
    assert_true(g >= 0.9 * cap);
    assert_true(val(r, OSN_NET_ADMITTED_TIMEOUT) < 0.01);
    assert_true(val(r, OSN_NET_FAILED_REJECTED) > 0);
}

static void test_loss_holds_goodput(void **state)
{
    (void)state;
    check_controlled("loss", 3);
    check_controlled("loss", 10);
}

static void test_rate_holds_goodput(void **state)
{
    (void)state;
    check_controlled("rate", 3);
    check_controlled("rate", 10);
}

/*
 * One SIP server: only the core's INVITE processing costs anything (exponential, mean 1/mu),
 * so messages of other kinds and 503s are handled at once and never queue; the core's local
 * controller rejects new INVITEs with probability 1/2 in mode 1 and all in mode 2. The INVITEs
 * in the core are then the two-loop M|M|1|<L,H>|<H,R> queue with lambda' = lambda / 2.
 */
static void test_single_server_modes(void **state)
{
    (void)state;
    const double mu = 100, lam = 120;
    const long L = 5, H = 10, R = 20;
    struct osn_net_cfg c;
    osn_net_cfg_default(&c);
    for (int k = 0; k < OSN_NET_NKINDS; k++)
        c.core.cost[k] = c.edge.cost[k] = c.uas.cost[k] = 0;
    c.core.cost[OSN_NET_K_INVITE] = 1 / mu;
    c.core.exp_cost = true;
    c.core.buffer = R;
    c.src.rate = lam;
    c.src.hold = 1;
    c.time = 150;
    c.warmup = 5;
    c.replications = 4;
    snprintf(c.ctl_kind, sizeof c.ctl_kind, "local");
    c.ctl.local.reject_overload = 0.5;
    c.ctl.det.kind = OSN_CTL_DET_HYSTERETIC;
    c.ctl.det.policy = OSN_CTL_POLICY_I;
    c.ctl.det.l1 = L, c.ctl.det.h1 = H, c.ctl.det.l2 = H, c.ctl.det.h2 = R;
    struct osn_net_result *r = run(&c);

    struct osn_model m = {0};
    m.kind = OSN_KIND_TWO_LOOP;
    m.policy = OSN_POLICY_I;
    m.L = L, m.H = H, m.R = R;
    m.flows = 1;
    m.rate = lam, m.overload_rate = lam / 2;
    m.mu = mu;
    m.service.kind = OSN_LAW_EXP;
    m.service.rate = mu;
    osn_model_resolve(&m);
    struct osn_measures ex;
    assert_int_equal(osn_solve(&m, OSN_METHOD_GENERAL, &ex, NULL, NULL), 0);
    for (int s = 0; s < 3; s++) {
        const struct osn_net_est *e = &r->est[OSN_NET_CORE_P0 + s];
        double p = osn_xd_to_double(ex.P[s]);
        fprintf(stderr, "P%d: sim %.5f +- %.5f, exact %.5f\n", s, e->value, e->hw, p);
        assert_true(isfinite(e->hw) && e->hw < 0.03);
        assert_true(fabs(e->value - p) <= 3 * e->hw + 1e-3);
    }
    assert_true(val(r, OSN_NET_RETRANS_RATIO) == 0);
}

/* A rate profile: 100 calls/s, 400 from t = 20 s, x3 in [12, 14): over the window [10, 30] the
 * mean rate is (2 x 100 x 3 + 8 x 100 + 10 x 400) / 20 = 270 calls/s. */
static void test_rate_profile(void **state)
{
    (void)state;
    struct osn_net_cfg c;
    osn_net_cfg_default(&c);
    c.src.process = OSN_NET_PROFILE;
    c.src.rate = 100;
    c.src.nsteps = 1;
    c.src.step_t[0] = 20, c.src.step_rate[0] = 400;
    c.src.burst_t = 12, c.src.burst_len = 2, c.src.burst_factor = 3;
    c.core.cost[OSN_NET_K_INVITE] = 0.5e-3; /* capacity 450 calls/s: no overload */
    c.time = 20;
    c.warmup = 10;
    c.replications = 2;
    struct osn_net_result *r = run(&c);
    assert_true(fabs(val(r, OSN_NET_OFFERED) - 270) < 0.05 * 270);
}

/* Lossy links: UDP retransmissions (Timers A, E, the UAS's 2xx) recover every call, at the price
 * of T1 (0.5 s) for the calls that lost a message on the way to their 180. */
static void test_link_loss_recovered(void **state)
{
    (void)state;
    struct osn_net_cfg c;
    osn_net_cfg_default(&c);
    c.src.rate = 100;
    c.access.loss = c.trunk.loss = c.uas_link.loss = 0.02;
    c.time = 30;
    c.warmup = 35;
    c.replications = 2;
    struct osn_net_result *r = run(&c);
    double off = val(r, OSN_NET_OFFERED);
    assert_true(fabs(val(r, OSN_NET_GOODPUT) - off) < 0.03 * off);
    assert_true(val(r, OSN_NET_FAILED) < 0.005 * off);
    assert_true(val(r, OSN_NET_RETRANS_RATIO) > 0);
    /* about 11% of calls lose one of the six messages up to the 180: p95 and p99 >= T1 */
    assert_true(val(r, OSN_NET_SETUP_P99) >= 0.5);
    assert_true(val(r, OSN_NET_SETUP_P50) < 0.05);
}

static void test_threads_do_not_matter(void **state)
{
    (void)state;
    struct osn_net_cfg c;
    osn_net_cfg_default(&c);
    c.src.rate = 500;
    c.time = 5;
    c.warmup = 2;
    c.replications = 3;
    double g1 = run(&c)->est[OSN_NET_GOODPUT].value;
    double d1 = run(&c)->est[OSN_NET_SETUP_P99].value;
    c.threads = 2;
    struct osn_net_result *r = run(&c);
    assert_true(r->est[OSN_NET_GOODPUT].value == g1);
    assert_true(r->est[OSN_NET_SETUP_P99].value == d1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_capacity_formula),
            cmocka_unit_test(test_light_load),
            cmocka_unit_test(test_collapse_without_control),
            cmocka_unit_test(test_loss_holds_goodput),
            cmocka_unit_test(test_rate_holds_goodput),
            cmocka_unit_test(test_single_server_modes),
            cmocka_unit_test(test_rate_profile),
            cmocka_unit_test(test_link_loss_recovered),
            cmocka_unit_test(test_threads_do_not_matter),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

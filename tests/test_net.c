/*
 * Tests of the SIP network simulator (src/sim/net*.c) against independent references:
 *
 * - light load: goodput = offered, core utilisation = offered x the CPU work per call from the
 *   cost model, setup delay >= the six one-way link delays of INVITE out and 180 back;
 * - the done criteria of issue 5 on the collapse topology: without control the goodput falls
 *   below half of capacity at 3x offered load; with loss and with rate it stays at or above 90%
 *   of capacity at 3x and 10x, and fewer than 1% of the calls the core admits fail;
 * - prsm (docs/protocols.md 8): at 3x the core nearly stops processing copies and goodput beats
 * none; after a short burst it recovers to light-load behaviour where none stays saturated, with a
 *   2000- and a 50000-message buffer; pi, designed as the papers design it, holds the
 *   redundant-message ratio below its target there without rejecting a call;
 * - a single SIP server with exponential costs and the local controller (hysteretic detector)
 *   spends the time in each mode the exact solver gives for the two-loop M|M|1 model;
 * - a rate profile offers its time-average rate; lossy links are recovered by retransmissions;
 * - reproducibility: same seed, same numbers, whatever the thread count;
 * - retrials: when every attempt is refused, a caller retrying with probability r at most m times
 *   makes sum_{k=0..m} r^k attempts per call (the truncated geometric law), and one honouring a
 *   Retry-After longer than the run makes no retry within it;
 * - callers who give up, on a network of elements that cost nothing (every delay a sum of link
 *   delays): a deterministic patience below the 2xx delay abandons every call and one above it
 *   none; an exponential one of mean m abandons 1 - exp(-d/m) of them; every CANCEL is answered
 *   and passed on exactly where RFC 3261 9.1 and 16.10 say, and every 2xx that crossed it is
 *   ACKed and hung up; the patience draws shift no other stream;
 * - a fanin's unequal sources (source.shares): each offers its share, the sources' own measures
 *   add up to the network's, loss admits each the same fraction and rate each the same rate;
 * - the callee's hang-up (source.callee_hangs_up = f): the share of the calls the callee ends is
 *   f within a binomial bound, each proxy processes one BYE per ended call whichever way it
 *   goes, the UAS only the caller's and the UAC only the callee's (its direction), and f = 0
 *   sends no callee's BYE;
 * - BYEs crossing on the trunk (the caller hangs up at once, a 2xx crossed its CANCEL; the callee
 *   after a short hold): each proxy takes both directions' BYEs as new requests, every callee's
 *   BYE reaches the caller, nothing is resent (the proxies' records kept by direction);
 * - the source's client half ([control] at = edge, issue 30): with the edge the bottleneck at
 *   3x its capacity, loss at the edge and the sources' client halves hold goodput near the
 *   edge's capacity, the sources shedding calls themselves, where the core's control
 *   (at = core) leaves the edge to collapse; the paired difference (same seed, same calls) has
 *   its 95% interval well above half the edge's capacity; at = edge on a fanout leaves the
 *   edges' choice of the cores as it was.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "osn/err.h"
#include "osn/model.h"
#include "osn/net.h"
#include "osn/xd.h"

/* A run's result, in the oldest of a few slots: a test may copy a result (its per-element
 * arrays with it) and compare it with the next runs', so a slot is released only when it comes
 * round again. */
static struct osn_net_result *run(const struct osn_net_cfg *c)
{
    static struct osn_net_result ring[8];
    static int next;
    struct osn_net_result *r = &ring[next++ % 8];
    char msg[256] = "";
    osn_net_result_release(r);
    int err = osn_net_run(c, r, msg, sizeof msg);
    if (err)
        fprintf(stderr, "osn_net_run: %s\n", msg);
    assert_int_equal(err, 0);
    return r;
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
    assert_int_equal(osn_ctl_kind_parse(kind, &c->ctl_kind), 0);
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

/* Messages of a kind the core processed per second (the core is the element before the UAS). */
static double core_proc(const struct osn_net_result *r, int kind)
{
    return r->elem[r->nelem - 2][OSN_NET_E_PROC + kind].value;
}

static void print_run(const char *what, const struct osn_net_result *r)
{
    fprintf(stderr,
            "%s: offered %.1f goodput %.1f failed %.1f retrans_ratio %.4f setup %.3f s util %.3f"
            " | core new INVITE %.1f absorbed copies %.1f /s\n",
            what, val(r, OSN_NET_OFFERED), val(r, OSN_NET_GOODPUT), val(r, OSN_NET_FAILED),
            val(r, OSN_NET_RETRANS_RATIO), val(r, OSN_NET_SETUP_MEAN), val(r, OSN_NET_CORE_UTIL),
            core_proc(r, OSN_NET_K_INVITE), core_proc(r, OSN_NET_K_RETX));
}

/* The collapse topology at 3x with a core buffer of 2000 messages. */
static void overload_2000_cfg(struct osn_net_cfg *c, const char *kind)
{
    collapse_cfg(c, kind, 3);
    c->core.buffer = 2000;
    c->threads = 2; /* the two replications side by side: same numbers, half the wall time */
}

/*
 * PRSM (docs/protocols.md 8: originals in a primary queue served with strict priority,
 * retransmitted requests and responses in a secondary one, queued copies removed once answered or
 * pushed out by an arrival for the primary queue when the buffer is full) at 3x capacity, core
 * buffer 2000 messages (the reference's claims are for buffers above 1K). Sustained 3x overload of
 * originals alone exceeds the core, so no scheduler can reach capacity without rejecting; what
 * PRSM promises is that the CPU stops going to redundant retransmissions. Measured, seeds 1-7
 * (examples/collapse.ini with both buffers at 2000): none goodput 310-322/s, retrans_ratio
 * 0.157-0.168; prsm goodput 390-406/s (+24..+30%), retrans_ratio 0 (every copy is discarded or
 * pushed out unserved). prsm's goodput in this [35, 45] s window is above the nominal 370/s,
 * which charges each call an ACK and a BYE: at the full buffer most ACKs are lost (64/s reached
 * the core's CPU, BYEs 270/s, seed 7), and over [35, 95] s it is 361/s. (Rerun with the streams
 * of common random numbers, 2026-12-02: `osn sim examples/collapse.ini --set "server
 * core.buffer=2000" --set control.kind=none,prsm --set net.seed=1,2,3,4,5,6,7`.) Bounds: prsm's
 * ratio below a quarter of none's and below 0.03; goodput at least 4% above none's.
 */
static void test_prsm_serves_originals_first(void **state)
{
    (void)state;
    struct osn_net_cfg c;
    overload_2000_cfg(&c, "none");
    struct osn_net_result none = *run(&c);
    print_run("none 3x, buffer 2000", &none);
    overload_2000_cfg(&c, "prsm");
    struct osn_net_result prsm = *run(&c);
    print_run("prsm 3x, buffer 2000", &prsm);

    double rn = val(&none, OSN_NET_RETRANS_RATIO), rp = val(&prsm, OSN_NET_RETRANS_RATIO);
    assert_true(rn > 0.1); /* the scenario does make the core absorb copies without control */
    assert_true(rp < 0.25 * rn && rp < 0.03);
    assert_true(val(&prsm, OSN_NET_GOODPUT) > 1.04 * val(&none, OSN_NET_GOODPUT));
    /* the CPU freed from copies goes to originals: more new INVITEs processed */
    assert_true(core_proc(&prsm, OSN_NET_K_INVITE) > core_proc(&none, OSN_NET_K_INVITE));
}

/*
 * Short-term overload (the case PRSM and the Hong PI controllers address): 0.7x capacity with a
 * 3x burst for 3 s at t = 2 s, window [35, 45] s. Without control this is the bistable collapse
 * of docs/protocols.md 7.2: the burst pushes the queueing delay past T1, each original then brings
 * at least one copy (2 x 0.7 > 1), and the core never drains.
 */
static void burst_cfg(struct osn_net_cfg *c, const char *kind, long buffer)
{
    collapse_cfg(c, kind, 0.7);
    c->core.buffer = buffer;
    c->src.process = OSN_NET_PROFILE;
    c->src.nsteps = 0;
    c->src.burst_t = 2, c->src.burst_len = 3, c->src.burst_factor = 3;
    c->threads = 2; /* the two replications side by side: same numbers, half the wall time */
}

/* A network back at light load after the burst: goodput = offered, (almost) no failures or
 * absorbed copies, utilisation = goodput x the 2.7 ms of CPU per call, setup well under T1. */
static void assert_recovered(const struct osn_net_result *r)
{
    double off = val(r, OSN_NET_OFFERED), g = val(r, OSN_NET_GOODPUT);
    assert_true(fabs(g - off) < 0.03 * off);
    assert_true(val(r, OSN_NET_FAILED) < 0.005 * off);
    assert_true(val(r, OSN_NET_RETRANS_RATIO) < 0.01);
    assert_true(fabs(val(r, OSN_NET_CORE_UTIL) - g * 2.7e-3) < 0.03);
    assert_true(val(r, OSN_NET_SETUP_MEAN) < 0.1);
}

/*
 * PRSM after the burst, core buffer 2000 (docs/protocols.md 8: failures close to 0 and a constant
 * small response delay for buffers above 1K). Measured (seed 7): none stays saturated (core
 * util 1.000, retrans_ratio 0.71, setup delay 2.36 s); prsm recovers: util 0.698 = goodput
 * 256.9/s x 2.7 ms + 0.004, retrans_ratio 0, setup delay 0.033 s (the light-load 6 x 5 ms plus
 * service), no failed calls (seeds 1-6: same picture, prsm util 0.69-0.71, setup 0.033-0.045 s,
 * none retrans_ratio 0.69-0.72). Bounds as in test_light_load for a recovered network; none must
 * stay collapsed.
 */
static void test_prsm_recovers_from_burst(void **state)
{
    (void)state;
    struct osn_net_cfg c;
    burst_cfg(&c, "none", 2000);
    struct osn_net_result none = *run(&c);
    print_run("none burst, buffer 2000", &none);
    burst_cfg(&c, "prsm", 2000);
    struct osn_net_result prsm = *run(&c);
    print_run("prsm burst, buffer 2000", &prsm);

    assert_true(val(&none, OSN_NET_CORE_UTIL) > 0.99);
    assert_true(val(&none, OSN_NET_RETRANS_RATIO) > 0.3);
    assert_true(val(&none, OSN_NET_SETUP_MEAN) > 1);

    assert_recovered(&prsm);
}

/*
 * PRSM after the burst with the collapse scenario's 50000-message buffer: docs/protocols.md 8 says
 * failures close to 0 and a mean response delay constant near 175 ms for any buffer above 1K
 * (conventional SIP: 179 s at 200K). With 5e4 messages queued the UAS's responses wait in the
 * core, the core's own client transactions resend their INVITEs to the UAS (Timer A), and the
 * UAS answers every copy again. Those response copies, known on arrival by the responses the
 * core has kept (src/sim/net_server.c response_again), wait in the secondary queue with the
 * request copies (control.prsm_responses, the default). Measured (seed 7): goodput 258.7 of
 * 258.6/s, setup 0.033 s, util 0.698, as with buffer 2000. The check that it is the response
 * copies: with prsm_responses = no (the papers' requests-only PRSM) the core stays saturated,
 * goodput 175/s, setup 11.8 s.
 */
static void test_prsm_recovers_deep_buffer(void **state)
{
    (void)state;
    struct osn_net_cfg c;
    burst_cfg(&c, "prsm", 50000);
    struct osn_net_result prsm = *run(&c);
    print_run("prsm burst, buffer 50000", &prsm);
    burst_cfg(&c, "prsm", 50000);
    c.ctl.prsm.responses = false;
    struct osn_net_result req_only = *run(&c);
    print_run("prsm (requests only) burst, buffer 50000", &req_only);

    assert_recovered(&prsm);

    assert_true(val(&req_only, OSN_NET_CORE_UTIL) > 0.99);
    assert_true(val(&req_only, OSN_NET_SETUP_MEAN) > 1);
}

/*
 * PI (RRRC, docs/protocols.md 7.3) as Hong, Huang and Yan design it, on the burst with the
 * 50 000-message core buffer, restated to what the papers claim: the controller reaches "a
 * satisfactory target redundant message ratio" and mitigates the overload "without rejecting
 * calls". Their controller caps the retransmission *message* rate, so the cap covers the edge's
 * BYE copies too (control.pi_cap_noninvite), and its gains come from the phase-margin rule on
 * the ratio loop (studies/08-pi-design: the ratio is static in the copy rate, psi = r / lambda,
 * behind a dead time theta = T_c + RTT = 1.01 s; omega_c = 0.5 rad/s gives K_P = 0, K_I =
 * lambda omega_c = 129.6 at a 61 degree margin). Measured (seed 7, 2 replications): ratio 0.029
 * against none's 4.70, goodput 173 against none's 87 calls/s, no call failed or rejected.
 * What the papers do not claim, and this no longer asks: that the core drains within the
 * window (goodput = offered). Their model has no third retransmission loop, and this network
 * has one: the core's own INVITE copies toward the UAS, whose answers wait in the core's queue
 * past T1; a cap at the edge cannot reach them (study 04), and the core stays saturated. The
 * same controller with a cap on INVITE copies only misses the target (ratio 1.8): the BYE
 * copies alone keep the ratio far above it.
 */
static void test_pi_holds_ratio_at_target(void **state)
{
    (void)state;
    struct osn_net_cfg c;
    burst_cfg(&c, "none", 50000);
    struct osn_net_result none = *run(&c);
    print_run("none burst, buffer 50000", &none);
    burst_cfg(&c, "pi", 50000);
    c.ctl.pi.cap_noninvite = true;
    c.ctl.pi.kp = 0;
    c.ctl.pi.ki = 259.26 * 0.5; /* lambda omega_c */
    const double psi0 = c.ctl.pi.target;
    struct osn_net_result pi = *run(&c);
    print_run("pi (designed, message cap) burst, buffer 50000", &pi);
    double rr = val(&pi, OSN_NET_RETRANS_RATIO);
    assert_true(val(&none, OSN_NET_RETRANS_RATIO) > 1);
    assert_true(psi0 == 0.05);
    assert_true(rr < psi0);
    assert_true(val(&pi, OSN_NET_FAILED) == 0);
    assert_true(val(&pi, OSN_NET_FAILED_REJECTED) == 0);
    assert_true(val(&pi, OSN_NET_GOODPUT) > 1.5 * val(&none, OSN_NET_GOODPUT));
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
    c.ctl_kind = OSN_CTL_KIND_LOCAL;
    c.ctl.local.reject_overload = 0.5;
    c.ctl.det.kind = OSN_CTL_DET_HYSTERETIC;
    c.ctl.det.policy = OSN_POLICY_I;
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
    /* The queueing papers' measures on the core: time in overload P1 + P2, and the mean
     * overload period, the return time T_ret from overload onset back to mode 0. */
    const struct osn_net_est *ov = &r->est[OSN_NET_CORE_OVERLOAD];
    double p12 = osn_xd_to_double(ex.P[1]) + osn_xd_to_double(ex.P[2]);
    fprintf(stderr, "P1+P2: sim %.5f +- %.5f, exact %.5f\n", ov->value, ov->hw, p12);
    assert_true(fabs(ov->value - p12) <= 3 * ov->hw + 1e-3);
    const struct osn_net_est *tr = &r->est[OSN_NET_CORE_TRET];
    double tret = osn_xd_to_double(ex.T_ret);
    fprintf(stderr, "T_ret: sim %.5f +- %.5f, exact %.5f\n", tr->value, tr->hw, tret);
    assert_true(isfinite(tr->hw) && tr->hw < 0.1 * tret);
    assert_true(fabs(tr->value - tret) <= 3 * tr->hw + 1e-3 * tret);
}

/*
 * The PRSM papers' response delay, INVITE -> first 100 Trying at the UAC. Only the links cost
 * time here (5 ms each way on the access link, nothing at the edge): the edge's 100 Trying
 * comes back exactly 10 ms after each INVITE, so every call gives one sample of 0.01 s (the
 * histogram's quantiles are the midpoint of the 1 ms bin that holds it), and no call ends without
 * one (a call whose 100 never comes would be counted in no_trying instead).
 */
static void test_response_delay(void **state)
{
    (void)state;
    struct osn_net_cfg c;
    osn_net_cfg_default(&c);
    for (int k = 0; k < OSN_NET_NKINDS; k++)
        c.edge.cost[k] = 0;
    c.src.rate = 100;
    c.time = 10;
    c.warmup = 2;
    c.replications = 2;
    struct osn_net_result *r = run(&c);
    assert_float_equal(val(r, OSN_NET_RESP_MEAN), 2 * c.access.delay, 1e-12);
    /* 10 ms sits on a bin edge: the difference of two clock values lands on either side */
    assert_true(fabs(val(r, OSN_NET_RESP_P50) - 0.01) <= 0.0005 + 1e-12);
    assert_true(fabs(val(r, OSN_NET_RESP_P99) - 0.01) <= 0.0005 + 1e-12);
    assert_true(val(r, OSN_NET_NO_TRYING) == 0);
    assert_true(val(r, OSN_NET_GOODPUT) > 90);
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
/* Record-Route (RFC 3261 16.6 step 4, 12.1): with it (the default) the dialog's ACK and BYE
 * and the BYE's 200 go through the core and cost its CPU, 2.7 ms a call (INVITE 1 + ACK 0.3 +
 * BYE 0.5 + 3 responses x 0.3); without it at both proxies they go past them, UAC to UAS: the
 * core then works 1.6 ms a call (INVITE 1 + 180 and 200 x 0.3) and processes no ACK or BYE,
 * while the UAS still gets every BYE and the calls are as good. */
static void test_record_route(void **state)
{
    (void)state;
    struct osn_net_cfg c;
    osn_net_cfg_default(&c);
    c.src.rate = 150;
    c.time = 30;
    c.warmup = 5;
    c.replications = 2;
    for (int rr = 1; rr >= 0; rr--) {
        c.edge.record_route = c.core.record_route = rr;
        struct osn_net_result *r = run(&c);
        double good = val(r, OSN_NET_GOODPUT);
        int core = r->nelem - 2, edge = r->nelem - 3, uas = r->nelem - 1;
        assert_true(fabs(good - 150) < 0.06 * 150);
        assert_true(val(r, OSN_NET_FAILED) == 0);
        double per_call = rr ? 2.7e-3 : 1.6e-3;
        assert_true(fabs(val(r, OSN_NET_CORE_UTIL) - good * per_call) < 0.02);
        /* The BYEs of the window trail the calls by their hold time: compared with the UAS's. */
        double uas_bye = r->elem[uas][OSN_NET_E_PROC + OSN_NET_K_BYE].value;
        double uas_ack = r->elem[uas][OSN_NET_E_PROC + OSN_NET_K_ACK].value;
        assert_true(uas_bye > 0.9 * good && uas_bye <= good);
        assert_true(fabs(uas_ack - good) < 0.01 * good);
        for (int e = edge; e <= core; e++) {
            double bye = r->elem[e][OSN_NET_E_PROC + OSN_NET_K_BYE].value;
            double ack = r->elem[e][OSN_NET_E_PROC + OSN_NET_K_ACK].value;
            if (rr) {
                assert_true(fabs(bye - uas_bye) < 0.01 * uas_bye);
                assert_true(fabs(ack - uas_ack) < 0.01 * uas_ack);
            } else {
                assert_true(bye == 0 && ack == 0);
            }
        }
    }
}

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

/* A core that never finishes: its first INVITE stays in service for good (cost 1e6 s), its
 * buffer holds that one, and `none` answers every later request 503 at once (reject cost 0):
 * every attempt of every call but the first is refused, p = 1. */
static void refusing_cfg(struct osn_net_cfg *c)
{
    osn_net_cfg_default(c);
    c->src.rate = 100;
    c->time = 20;
    c->warmup = 35;
    c->replications = 4;
    c->level = 0.99;
    c->core.cost[OSN_NET_K_INVITE] = 1e6;
    c->core.cost[OSN_NET_K_REJECT] = 0;
    c->core.buffer = 1;
    c->ctl.none.reject_when_full = true;
    c->src.retry_delay = 1;
    c->src.retry_delay_law = OSN_NET_RETRY_DET;
}

/* Every attempt refused, retry probability r, at most m retries: attempt k + 1 happens with
 * probability r^k (k <= m), so a call makes sum_{k=0..m} r^k attempts on average and the retries
 * come at that sum minus one times the first attempts' rate. */
static void test_retrials_closed_form(void **state)
{
    (void)state;
    struct osn_net_cfg c;
    refusing_cfg(&c);
    const double r = 0.5;
    const int m = 3;
    c.src.retry_prob = r;
    c.src.max_retries = m;
    struct osn_net_result *res = run(&c);
    double ref = 0;
    for (int k = 0; k <= m; k++)
        ref += pow(r, k);
    const struct osn_net_est *a = &res->est[OSN_NET_ATTEMPTS_CALL];
    fprintf(stderr, "retrials: %.4f +- %.4f attempts per call (closed form %.4f), %.1f retries/s\n",
            a->value, a->hw, ref, val(res, OSN_NET_RETRIES));
    assert_true(fabs(a->value - ref) <= a->hw);
    assert_true(a->hw < 0.05);
    double off = val(res, OSN_NET_OFFERED), ret = res->est[OSN_NET_RETRIES].value;
    assert_true(fabs(ret - (ref - 1) * off) <= 2 * res->est[OSN_NET_RETRIES].hw + 0.02 * off);
    assert_true(val(res, OSN_NET_GOODPUT) == 0);
    assert_true(fabs(val(res, OSN_NET_FAILED_REJECTED) - off) < 0.05 * off);
    /* no retrials: one attempt a call, as before them */
    c.src.retry_prob = 0;
    res = run(&c);
    assert_true(res->est[OSN_NET_ATTEMPTS_CALL].value == 1);
    assert_true(val(res, OSN_NET_RETRIES) == 0);
}

/* The 503s of a loss client half carry Retry-After 1000 s: a caller who honours it waits past
 * the end of the run; one who does not retries after its 1 s. */
static void test_retrials_honour_retry_after(void **state)
{
    (void)state;
    struct osn_net_cfg c;
    collapse_cfg(&c, "loss", 3);
    c.time = 5;
    c.src.retry_prob = 1;
    c.src.retry_delay = 1;
    c.ctl.none.retry_after = 1000;
    c.src.honour_retry_after = false;
    struct osn_net_result *res = run(&c);
    double ignoring = val(res, OSN_NET_RETRIES);
    c.src.honour_retry_after = true;
    res = run(&c);
    double honouring = val(res, OSN_NET_RETRIES);
    fprintf(stderr,
            "retrials under loss at 3x: %.1f retries/s ignoring Retry-After, %.1f "
            "honouring it\n",
            ignoring, honouring);
    assert_true(ignoring > 0.5 * val(res, OSN_NET_OFFERED));
    /* the only retries left would be those of timeouts (no Retry-After): loss has next to none */
    assert_true(honouring <= 0.01 * ignoring);
}

/* Callers who give up (source.patience) on a network whose elements cost nothing: no message
 * ever waits, so every time is a sum of link delays (access 5 ms, trunk 10 ms, UAS 5 ms) and
 * known exactly. A call's INVITE reaches the edge at 5 ms (its 100 back at the UAC at 10 ms),
 * the core at 15 ms (its 100 at the edge at 25 ms), the UAS at 20 ms, which answers 180 and 200
 * at once: they reach the core at 25 ms, the edge at 35 ms and the UAC at 40 ms. */
static void instant_cfg(struct osn_net_cfg *c, double patience, enum osn_net_patience_law law)
{
    osn_net_cfg_default(c);
    c->src.rate = 20;
    c->time = 40;
    c->warmup = 2;
    c->replications = 4;
    c->seed = 11;
    for (int k = 0; k < OSN_NET_NKINDS; k++)
        c->edge.cost[k] = c->core.cost[k] = c->uas.cost[k] = 0;
    c->trunk.delay = 0.010;
    c->src.hold = 1000; /* no BYE in the window but a hang-up's */
    c->src.patience = law;
    c->src.patience_mean = patience;
}

/* The 2xx reaches the UAC 40 ms after its INVITE: a caller whose deterministic patience is
 * shorter gives up on every call, one whose patience is longer on none. */
static void test_patience_all_or_none(void **state)
{
    (void)state;
    struct osn_net_cfg c;
    instant_cfg(&c, 0.035, OSN_NET_PATIENCE_DET);
    struct osn_net_result *r = run(&c);
    double off = val(r, OSN_NET_OFFERED);
    fprintf(stderr, "patience 35 ms: offered %.2f, abandoned %.2f, goodput %.2f /s\n", off,
            val(r, OSN_NET_ABANDONED), val(r, OSN_NET_GOODPUT));
    assert_true(val(r, OSN_NET_GOODPUT) == 0);
    assert_true(fabs(val(r, OSN_NET_ABANDONED) - off) < 0.01 * off);
    assert_true(val(r, OSN_NET_FAILED) == 0);
    assert_true(val(r, OSN_NET_RETRIES) == 0);
    instant_cfg(&c, 0.045, OSN_NET_PATIENCE_DET);
    r = run(&c);
    assert_true(val(r, OSN_NET_ABANDONED) == 0);
    assert_true(val(r, OSN_NET_CANCELS) == 0);
    assert_true(fabs(val(r, OSN_NET_GOODPUT) - off) < 0.01 * off);
    /* abandoned attempts are never retried, even by callers who retry everything */
    instant_cfg(&c, 0.035, OSN_NET_PATIENCE_DET);
    c.src.retry_prob = 1;
    r = run(&c);
    assert_true(val(r, OSN_NET_RETRIES) == 0);
    assert_true(r->est[OSN_NET_ATTEMPTS_CALL].value == 1);
}

/* Exponential patience of mean m against the fixed 2xx delay d = 40 ms: a caller gives up with
 * probability P(patience < d) = 1 - exp(-d/m). */
static void test_patience_exponential(void **state)
{
    (void)state;
    const double d = 0.040;
    const double means[] = {0.01, 0.04, 0.1};
    for (int i = 0; i < 3; i++) {
        struct osn_net_cfg c;
        instant_cfg(&c, means[i], OSN_NET_PATIENCE_EXP);
        struct osn_net_result *r = run(&c);
        double a = val(r, OSN_NET_ABANDONED), g = val(r, OSN_NET_GOODPUT);
        double p = a / (a + g), ref = 1 - exp(-d / means[i]);
        double n = (a + g) * c.time * c.replications; /* calls ended in the windows */
        double tol = 4 * sqrt(ref * (1 - ref) / n);
        fprintf(stderr,
                "exp patience mean %.3f s: abandoned %.4f of %.0f calls, 1 - exp(-d/m) "
                "= %.4f (+- %.4f)\n",
                means[i], p, n, ref, tol);
        assert_true(fabs(p - ref) <= tol);
        assert_true(val(r, OSN_NET_FAILED) == 0);
    }
}

/* Message accounting of the CANCELs (RFC 3261 9.1, 16.10), times as in instant_cfg. A caller
 * who gives up at 12 ms CANCELs at once; the edge has it at 17 ms, its branch without a
 * provisional response yet: it answers 200 and keeps the CANCEL until the core's 100 comes (25
 * ms), then passes it on. One who gives up at 5 ms has no provisional response: it waits for
 * the edge's 100 (10 ms), then does the same. One who gives up at 22 ms: the edge has it at 27
 * ms, its branch provisional and the INVITE pending: it passes the CANCEL on at once. Each time
 * the core, whose INVITE is answered (at 25 ms), answers 200 and nothing else. Every time the 2xx
 * crosses the CANCEL: the UAC ACKs it and hangs up (a BYE at once). So the UAC gets five responses
 * a call: 100, 180, 200, the CANCEL's 200 and the BYE's. */
static void test_cancel_accounting(void **state)
{
    (void)state;
    const double patience[] = {0.012, 0.005, 0.022};
    for (int i = 0; i < 3; i++) {
        struct osn_net_cfg c;
        instant_cfg(&c, patience[i], OSN_NET_PATIENCE_DET);
        struct osn_net_result *r = run(&c);
        int uac = 0, edge = 1, core = 2, uas = 3;
        double off = val(r, OSN_NET_OFFERED), can = val(r, OSN_NET_CANCELS);
        double tol = 0.01 * off;
        /* a CANCEL sent just before the window's edges is processed just after: 2 at most */
        double two = 2 / (c.time * c.replications);
        assert_true(fabs(val(r, OSN_NET_ABANDONED) - off) < tol);
        assert_true(fabs(can - off) < tol);
        assert_true(fabs(r->elem[edge][OSN_NET_E_PROC + OSN_NET_K_CANCEL].value - can) <= two);
        double fwd = r->elem[edge][OSN_NET_E_CANCEL_FWD].value;
        fprintf(stderr,
                "cancel at %.3f s: sent %.3f, edge passed on %.3f, core processed %.3f /s\n",
                patience[i], can, fwd, r->elem[core][OSN_NET_E_PROC + OSN_NET_K_CANCEL].value);
        assert_true(fabs(fwd - can) <= two);
        /* a kept CANCEL goes 10 ms after the caller's reaches the edge: one at each edge of a
         * replication's window may be counted on one side only */
        double lag = 2 / c.time;
        assert_true(fabs(r->elem[core][OSN_NET_E_PROC + OSN_NET_K_CANCEL].value - fwd) <= lag);
        assert_true(r->elem[core][OSN_NET_E_CANCEL_FWD].value == 0);
        assert_true(r->elem[uas][OSN_NET_E_PROC + OSN_NET_K_CANCEL].value == 0);
        assert_true(r->elem[uas][OSN_NET_E_487].value == 0);
        /* every crossing 2xx ACKed and hung up */
        assert_true(fabs(r->elem[uas][OSN_NET_E_PROC + OSN_NET_K_ACK].value - off) < tol);
        assert_true(fabs(r->elem[edge][OSN_NET_E_PROC + OSN_NET_K_BYE].value - off) < tol);
        assert_true(fabs(r->elem[uac][OSN_NET_E_PROC + OSN_NET_K_RESP].value - 5 * off) < 5 * tol);
        assert_true(val(r, OSN_NET_RETRANS_RATIO) == 0);
    }
}

/* The UAS's ring delay R ([server uas] ring_delay), times as in instant_cfg: the INVITE reaches
 * the UAS at 20 ms, its 180 the UAC at 40 ms, its 200 leaves the UAS at 20 ms + R and reaches the
 * UAC at 40 ms + R. A caller who gives up at p >= 10 ms CANCELs at once (it has the edge's 100),
 * and with zero costs the CANCEL reaches the UAS at p + 20 ms: before the 200 when p < R, which
 * then answers it 200 and the INVITE 487 (RFC 3261 9.2); when R <= p < R + 40 ms the 200 crosses
 * the CANCEL and the call is hung up; after that the call is good. So with deterministic R and
 * exponential patience of mean m: abandoned 1 - exp(-(R + 40 ms)/m), answered 487
 * 1 - exp(-R/m) (a CANCEL before 10 ms waits for the 100 and still arrives before the 200); with
 * an exponential ring delay of mean r and deterministic patience p: 487 exp(-p/r), abandoned
 * P(R > p - 40 ms) = exp(-(p - 0.04)/r). */
static void ring_cfg(struct osn_net_cfg *c, double patience, enum osn_net_patience_law law,
                     double ring, int ring_law)
{
    instant_cfg(c, patience, law);
    c->uas.ring = ring_law;
    c->uas.ring_mean = ring;
}

static void test_ring_cancel_487(void **state)
{
    (void)state;
    struct osn_net_cfg c;
    int edge = 1, core = 2, uas = 3, uac = 0;
    /* R = 100 ms, p = 60 ms: every call CANCELled while it rings, answered 487, none set up */
    ring_cfg(&c, 0.06, OSN_NET_PATIENCE_DET, 0.1, OSN_UAS_RING_DET);
    struct osn_net_result *r = run(&c);
    double off = val(r, OSN_NET_OFFERED), can = val(r, OSN_NET_CANCELS);
    double tol = 0.01 * off, two = 2 / (c.time * c.replications);
    fprintf(stderr, "ring 100 ms, patience 60 ms: offered %.2f, abandoned %.2f, 487 %.2f /s\n", off,
            val(r, OSN_NET_ABANDONED), r->elem[uas][OSN_NET_E_487].value);
    assert_true(val(r, OSN_NET_GOODPUT) == 0);
    assert_true(fabs(val(r, OSN_NET_ABANDONED) - off) < tol);
    assert_true(fabs(can - off) < tol);
    assert_true(fabs(r->elem[edge][OSN_NET_E_CANCEL_FWD].value - can) <= two);
    assert_true(fabs(r->elem[core][OSN_NET_E_CANCEL_FWD].value - can) <= two);
    assert_true(fabs(r->elem[uas][OSN_NET_E_PROC + OSN_NET_K_CANCEL].value - can) <= two);
    assert_true(fabs(r->elem[uas][OSN_NET_E_487].value - can) <= two);
    assert_true(r->elem[edge][OSN_NET_E_PROC + OSN_NET_K_BYE].value == 0); /* nothing to hang up */
    /* the UAC's responses: 100, 180, the CANCEL's 200 and the 487, which it ACKs */
    assert_true(fabs(r->elem[uac][OSN_NET_E_PROC + OSN_NET_K_RESP].value - 4 * off) < 4 * tol);
    assert_true(fabs(r->elem[uas][OSN_NET_E_PROC + OSN_NET_K_ACK].value - off) < tol);
    assert_true(val(r, OSN_NET_RETRANS_RATIO) == 0);
    /* p = 150 ms > R + 40 ms: every call good, nothing cancelled */
    ring_cfg(&c, 0.15, OSN_NET_PATIENCE_DET, 0.1, OSN_UAS_RING_DET);
    r = run(&c);
    assert_true(val(r, OSN_NET_ABANDONED) == 0);
    assert_true(r->elem[uas][OSN_NET_E_487].value == 0);
    assert_true(fabs(val(r, OSN_NET_GOODPUT) - off) < tol);
}

/* The callee's hang-up on a network of elements that cost nothing (instant_cfg, no patience), a
 * hold of 2 s: calls are set up and ended well inside the window. Of the answered calls the
 * callee ends a fraction f (a hash of the Call-ID: independent Bernoulli(f) trials, as far as
 * the hash is a good one), the caller the rest. Every BYE crosses both proxies (edge, core),
 * downstream or upstream; the UAS processes the caller's BYEs and the 200s to its own, the UAC
 * the callee's BYEs. A BYE still on its way at either edge of a replication's window is counted
 * on one side only: `lag` allows two per edge. The callee's hold runs from its 2xx, and one that
 * ends before the ACK (40 ms later here: 2% of the holds) waits for the 2xx's 64*T1
 * (osn_uas_hangup_fire), which shifts 1% of the callee's share out of the window at f = 0.5, well
 * inside the bound. The calls' setups are the same whatever f (their streams are). */
static void test_callee_hangs_up(void **state)
{
    (void)state;
    const double fractions[] = {0.5, 0, 1};
    int uac = 0, edge = 1, core = 2, uas = 3;
    double good = 0;
    for (int i = 0; i < 3; i++) {
        struct osn_net_cfg c;
        instant_cfg(&c, 0, OSN_NET_PATIENCE_NONE);
        c.src.hold = 2;
        c.src.callee_hangs_up = fractions[i];
        struct osn_net_result *r = run(&c);
        double bin = val(r, OSN_NET_BYES_IN), bok = val(r, OSN_NET_BYES_OK);
        double ended = bin + bok, n = ended * c.time * c.replications;
        double f = fractions[i], share = bin / ended, tol = 4 * sqrt(f * (1 - f) / n);
        double lag = 4 / c.time;
        double bye[4];
        for (int e = 0; e < 4; e++)
            bye[e] = r->elem[e][OSN_NET_E_PROC + OSN_NET_K_BYE].value;
        fprintf(stderr,
                "callee_hangs_up %.1f: %.0f calls ended, by the callee %.4f (+- %.4f); BYEs/s "
                "uac %.3f edge %.3f core %.3f uas %.3f, ended %.3f, goodput %.3f\n",
                f, n, share, tol, bye[uac], bye[edge], bye[core], bye[uas], ended,
                val(r, OSN_NET_GOODPUT));
        assert_true(n > 2000);
        assert_true(fabs(share - f) <= tol);
        assert_true(fabs(bye[edge] - ended) <= lag);
        assert_true(fabs(bye[core] - ended) <= lag);
        assert_true(fabs(bye[uas] - bok) <= lag);
        assert_true(fabs(bye[uac] - bin) <= lag);
        /* the UAS processes a 200 for each BYE of its own, the caller's none goes through it */
        assert_true(fabs(r->elem[uas][OSN_NET_E_PROC + OSN_NET_K_RESP].value - bin) <= lag);
        if (f == 0)
            assert_true(bin == 0 && bye[uac] == 0);
        if (f == 1)
            assert_true(bok == 0 && bye[uas] == 0);
        if (i == 0)
            good = val(r, OSN_NET_GOODPUT);
        assert_true(val(r, OSN_NET_GOODPUT) == good);
        assert_true(val(r, OSN_NET_FAILED) == 0 && val(r, OSN_NET_RETRANS_RATIO) == 0);
    }
}

/* BYEs crossing in the network (RFC 3261 15.1.2): a caller whose deterministic patience of 15 ms
 * ends before any 1xx keeps its CANCEL for the 180 (9.1), which comes with the 2xx (no ring, 20
 * ms), so the 2xx crosses the CANCEL and the caller hangs up at once (15): its ACK and BYE leave
 * together. The callee ends every call (callee_hangs_up = 1), its hold of mean 50 ms drawn from
 * its 2xx; the proxies cost 5 ms a BYE and nothing else, so the ACK reaches the UAS 10 ms before
 * the caller's BYE, and a hold that ends between them sends the callee's BYE up while the
 * caller's comes down: both directions pass the trunk, the core taking the caller's on it and the
 * edge the callee's. Each is a new request to each proxy: the callee's must reach the caller
 * (answered 200 there, not counted in byes_in, its own BYE being out), never be taken for a copy
 * of the caller's. The proxies' records of the BYEs they took are kept by direction (net_int.h:
 * bfwd, ubfwd); with one record for both the edge drops the callee's BYE as a late copy: the
 * UAC processes 0.006 BYEs/s instead of 2.62, 0.39 of the UAS's BYEs/s are answered instead of
 * 2.63 (the rest end at Timer F) and the core absorbs retransmissions (retrans_ratio 0.43). */
static void test_byes_cross(void **state)
{
    (void)state;
    int uac = 0, edge = 1, core = 2, uas = 3;
    struct osn_net_cfg c;
    instant_cfg(&c, 0.015, OSN_NET_PATIENCE_DET);
    c.access.delay = c.uas_link.delay = 0;
    c.src.hold = 0.05;
    c.src.callee_hangs_up = 1;
    c.edge.cost[OSN_NET_K_BYE] = c.core.cost[OSN_NET_K_BYE] = 0.005;
    struct osn_net_result *r = run(&c);
    double bye[4], lag = 4 / c.time;
    for (int e = 0; e < 4; e++)
        bye[e] = r->elem[e][OSN_NET_E_PROC + OSN_NET_K_BYE].value;
    double callee = r->elem[uas][OSN_NET_E_PROC + OSN_NET_K_RESP].value; /* 200s to its BYEs */
    double bok = val(r, OSN_NET_BYES_OK);
    fprintf(stderr,
            "BYEs crossing: abandoned %.3f, byes_ok %.3f, byes_in %.3f; BYEs/s uac %.3f edge %.3f "
            "core %.3f uas %.3f, the UAS's BYEs answered %.3f, retrans_ratio %g\n",
            val(r, OSN_NET_ABANDONED), bok, val(r, OSN_NET_BYES_IN), bye[uac], bye[edge], bye[core],
            bye[uas], callee, val(r, OSN_NET_RETRANS_RATIO));
    assert_true(val(r, OSN_NET_GOODPUT) == 0 && val(r, OSN_NET_FAILED) == 0);
    assert_true(fabs(bok - val(r, OSN_NET_ABANDONED)) <= lag); /* every caller hangs up */
    assert_true(val(r, OSN_NET_BYES_IN) == 0);                 /* every callee's BYE crossed */
    assert_true(callee > 1);                                   /* crossings happen */
    /* every callee's BYE reaches the caller once, and each proxy takes both directions' */
    assert_true(fabs(bye[uac] - callee) <= lag);
    assert_true(fabs(bye[edge] - (bok + callee)) <= lag);
    assert_true(fabs(bye[core] - (bok + callee)) <= lag);
    assert_true(fabs(bye[uas] - bok) <= lag);
    assert_true(val(r, OSN_NET_RETRANS_RATIO) == 0); /* nothing resent: none was dropped */
}

static void test_ring_closed_form(void **state)
{
    (void)state;
    struct {
        double p;
        int plaw;
        double ring;
        int rlaw;
        double abandoned, sent_487; /* the closed forms above */
    } k[] = {
            {0.1, OSN_NET_PATIENCE_EXP, 0.1, OSN_UAS_RING_DET, 1 - exp(-1.4), 1 - exp(-1.0)},
            {0.3, OSN_NET_PATIENCE_EXP, 0.1, OSN_UAS_RING_DET, 1 - exp(-0.14 / 0.3),
             1 - exp(-0.1 / 0.3)},
            {0.05, OSN_NET_PATIENCE_DET, 0.1, OSN_UAS_RING_EXP, exp(-0.1), exp(-0.5)},
    };
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        struct osn_net_cfg c;
        ring_cfg(&c, k[i].p, k[i].plaw, k[i].ring, k[i].rlaw);
        struct osn_net_result *r = run(&c);
        double a = val(r, OSN_NET_ABANDONED), g = val(r, OSN_NET_GOODPUT);
        double n = (a + g) * c.time * c.replications; /* calls ended in the windows */
        double pa = a / (a + g), p487 = r->elem[3][OSN_NET_E_487].value / (a + g);
        double ta = 4 * sqrt(k[i].abandoned * (1 - k[i].abandoned) / n) + 2 / n;
        double t487 = 4 * sqrt(k[i].sent_487 * (1 - k[i].sent_487) / n) + 2 / n;
        fprintf(stderr,
                "ring case %zu: abandoned %.4f (closed form %.4f +- %.4f), 487 %.4f (%.4f +- "
                "%.4f) of %.0f calls\n",
                i, pa, k[i].abandoned, ta, p487, k[i].sent_487, t487, n);
        assert_true(fabs(pa - k[i].abandoned) <= ta);
        assert_true(fabs(p487 - k[i].sent_487) <= t487);
        assert_true(val(r, OSN_NET_FAILED) == 0);
    }
}

/* Common random numbers: the patience draws have a stream of their own, so a run with patience
 * offers the very calls of the run without (the same arrival instants: the same offered count to
 * the bit), and patience none is the run without it. */
static void test_patience_streams_apart(void **state)
{
    (void)state;
    struct osn_net_cfg c;
    instant_cfg(&c, 0.03, OSN_NET_PATIENCE_NONE);
    struct osn_net_result *r = run(&c);
    double off = val(r, OSN_NET_OFFERED), good = val(r, OSN_NET_GOODPUT);
    assert_true(val(r, OSN_NET_ABANDONED) == 0);
    instant_cfg(&c, 0.03, OSN_NET_PATIENCE_LOGNORMAL);
    c.src.patience_cv = 0.5;
    r = run(&c);
    assert_true(val(r, OSN_NET_OFFERED) == off);
    assert_true(val(r, OSN_NET_ABANDONED) > 0);
    assert_true(val(r, OSN_NET_GOODPUT) < good);
}

/* A short run of the default network, for checks that compare runs of it. */
static void short_cfg(struct osn_net_cfg *c, int replications)
{
    osn_net_cfg_default(c);
    c->src.rate = 500;
    c->time = 5;
    c->warmup = 2;
    c->replications = replications;
}

/* A fan-in past the old limit of 64 edges (the arrays are sized by the scenario): 200 edges,
 * 1 call/s each, well below the core's capacity (about 370 calls/s), so nothing is shed. Every
 * element has its row under its name, and every source offers its share of the rate: Poisson
 * arrivals at rate / edges (net.h), about 20 in the window; none is 0, as it would be with a
 * source's stream left unseeded (the sources past the 131st draw theirs after the others). The
 * edges' new INVITEs add up to the offered load and to the core's. */
static void test_fanin_200_edges(void **state)
{
    (void)state;
    enum { E = 200 };
    struct osn_net_cfg c;
    osn_net_cfg_default(&c);
    c.topology = OSN_NET_FANIN;
    c.edges = E;
    c.src.rate = E;
    c.time = 20;
    c.warmup = 2;
    c.replications = 2;
    struct osn_net_result *r = run(&c);
    assert_int_equal(r->nelem, 2 * E + 2);
    double edge_cap = 1 / (c.edge.cost[OSN_NET_K_INVITE] + c.edge.cost[OSN_NET_K_ACK] +
                           c.edge.cost[OSN_NET_K_BYE] + 4 * c.edge.cost[OSN_NET_K_RESP]);
    double sum = 0, lo = INFINITY, hi = 0;
    for (int i = 0; i < E; i++) {
        char want[OSN_NET_NAME_LEN];
        snprintf(want, sizeof want, "uac%d", i);
        assert_string_equal(r->elem_name[i], want);
        snprintf(want, sizeof want, "edge%d", i);
        assert_string_equal(r->elem_name[E + i], want);
        const struct osn_net_est *e = r->elem[E + i];
        assert_true(fabs(e[OSN_NET_E_CAPACITY].value - edge_cap) < 1e-9 * edge_cap);
        double inv = e[OSN_NET_E_PROC + OSN_NET_K_INVITE].value;
        assert_true(isfinite(e[OSN_NET_E_PROC + OSN_NET_K_INVITE].hw));
        sum += inv;
        lo = fmin(lo, inv);
        hi = fmax(hi, inv);
    }
    assert_string_equal(r->elem_name[2 * E], "core");
    assert_string_equal(r->elem_name[2 * E + 1], "uas");
    /* 40 arrivals over the 2 replications' windows per source: 0.1 calls/s steps; the least
     * and the most of 200 such counts lie within about 3 standard deviations (6.3) of 40 */
    assert_true(lo >= 0.4 && hi <= 1.8);
    /* the total: 8,000 arrivals, sd 89 (1.1 %) */
    assert_true(fabs(sum - E) < 0.05 * E);
    assert_true(fabs(val(r, OSN_NET_OFFERED) - E) < 0.05 * E);
    double core_inv = r->elem[2 * E][OSN_NET_E_PROC + OSN_NET_K_INVITE].value;
    assert_true(fabs(core_inv - sum) < 0.01 * sum);
    assert_true(val(r, OSN_NET_GOODPUT) > 0.98 * val(r, OSN_NET_OFFERED));
}

/* A source's own offered, admitted and good calls (OSN_NET_E_SRC_*) under source.shares: at light
 * load each source offers rate x share / sum (Poisson counts: within 5 standard deviations) and
 * the sources add up to the network's measures; in overload RFC 7339's loss gives every client
 * the same oc, so each is admitted the same fraction of its offer (RFC 7339 5.3), and RFC 7415's
 * rate gives each of the N clients X / N (RFC 6357 9.1), the same admitted rate whatever it
 * offers. */
static void test_fanin_shares_per_source(void **state)
{
    (void)state;
    struct osn_net_cfg c;
    osn_net_cfg_default(&c);
    c.topology = OSN_NET_FANIN;
    c.edges = 4;
    c.src.nshares = 4;
    const double w[4] = {1, 1, 2, 4};
    double share[4]; /* the configuration borrows its shares */
    memcpy(share, w, sizeof w);
    c.src.share = share;
    c.src.rate = 100;
    c.time = 20;
    c.warmup = 2;
    c.replications = 2;
    char msg[256];
    assert_int_equal(osn_net_check(&c, NULL, msg, sizeof msg), 0);
    struct osn_net_result *r = run(&c);
    double sum[3] = {0};
    for (int i = 0; i < 4; i++) {
        const struct osn_net_est *e = r->elem[i];
        double want = c.src.rate * w[i] / 8,
               sd = sqrt(want * c.time * c.replications) / (c.time * c.replications);
        assert_true(fabs(e[OSN_NET_E_SRC_OFFERED].value - want) < 5 * sd);
        for (int k = 0; k < 3; k++)
            sum[k] += e[OSN_NET_E_SRC_OFFERED + k].value;
    }
    for (int i = 4; i < r->nelem; i++) /* the edges, the core, the UAS: no calls of their own */
        assert_true(isnan(r->elem[i][OSN_NET_E_SRC_OFFERED].value));
    const int net[3] = {OSN_NET_OFFERED, OSN_NET_ADMITTED, OSN_NET_GOODPUT};
    for (int k = 0; k < 3; k++)
        assert_true(fabs(sum[k] - val(r, net[k])) < 1e-9 * val(r, net[k]));
    assert_true(val(r, OSN_NET_ADMITTED) > 0.98 * val(r, OSN_NET_OFFERED));

    /* 4x the core's capacity, shares 1 : 2 */
    c.edges = c.src.nshares = 2;
    c.src.share[0] = 1, c.src.share[1] = 2;
    c.time = 10;
    c.warmup = 10;
    c.edge.buffer = 2000;
    c.core.buffer = 50000;
    c.ctl.loss.target = c.ctl.rate.target = 0.95;
    c.ctl.rate.n_clients = 2; /* as the scenario loader sets it for a fanin */
    c.src.rate = 4 * osn_net_core_capacity(&c);
    assert_int_equal(osn_ctl_kind_parse("loss", &c.ctl_kind), 0);
    r = run(&c);
    double x0 = r->elem[0][OSN_NET_E_SRC_ADMITTED].value / r->elem[0][OSN_NET_E_SRC_OFFERED].value,
           x1 = r->elem[1][OSN_NET_E_SRC_ADMITTED].value / r->elem[1][OSN_NET_E_SRC_OFFERED].value;
    assert_true(x0 > 0.15 && x0 < 0.35 && fabs(x0 / x1 - 1) < 0.1);
    assert_int_equal(osn_ctl_kind_parse("rate", &c.ctl_kind), 0);
    r = run(&c);
    double a0 = r->elem[0][OSN_NET_E_SRC_ADMITTED].value,
           a1 = r->elem[1][OSN_NET_E_SRC_ADMITTED].value;
    assert_true(a0 > 100 && fabs(a0 / a1 - 1) < 0.1);

    /* a share for each edge, each > 0 */
    c.src.nshares = 3;
    const char *bad = NULL;
    assert_int_equal(osn_net_check(&c, &bad, msg, sizeof msg), OSN_EINVAL);
    assert_string_equal(bad, "source.shares");
    c.src.nshares = 2;
    c.src.share[1] = 0;
    assert_int_equal(osn_net_check(&c, &bad, msg, sizeof msg), OSN_EINVAL);
    assert_string_equal(bad, "source.shares");
}

static void test_threads_do_not_matter(void **state)
{
    (void)state;
    struct osn_net_cfg c;
    short_cfg(&c, 3);
    double g1 = run(&c)->est[OSN_NET_GOODPUT].value;
    double d1 = run(&c)->est[OSN_NET_SETUP_P99].value;
    c.threads = 2;
    struct osn_net_result *r = run(&c);
    assert_true(r->est[OSN_NET_GOODPUT].value == g1);
    assert_true(r->est[OSN_NET_SETUP_P99].value == d1);
}

/* Kept replications (osn/reps.h): 2, then 5 given those 2, run only 3 and give every estimate
 * of one run of 5 to the bit (the delay quantiles come from the pooled histograms). */
static void test_kept_replications(void **state)
{
    (void)state;
    struct osn_net_cfg c;
    struct osn_reps keep = {0};
    short_cfg(&c, 5);
    struct osn_net_result whole = *run(&c);
    c.keep = &keep;
    c.replications = 2;
    run(&c);
    assert_int_equal(keep.n, 2);
    assert_int_equal(keep.ran, 2);
    c.replications = 5;
    struct osn_net_result *r = run(&c);
    assert_int_equal(keep.n, 5);
    assert_int_equal(keep.ran, 3);
    assert_memory_equal(whole.est, r->est, sizeof whole.est);
    assert_int_equal(whole.nelem, r->nelem);
    assert_memory_equal(whole.elem, r->elem, (size_t)r->nelem * sizeof *r->elem);
    assert_true(whole.messages == r->messages && whole.events == r->events);
    osn_reps_free(&keep);
}

/* Common random numbers: each source's arrivals, the hold times, the links' losses and each
 * server's service times come from streams of their own (src/sim/net_run.c). At light load no
 * control acts, so none, loss and rate set up the very same calls; in overload they act, and
 * still every run (and a smaller core buffer) is offered the same calls. Exponential service
 * and a lossy trunk put every stream to use. */
static void test_common_random_numbers(void **state)
{
    (void)state;
    static const char *const kinds[] = {"none", "loss", "rate"};
    struct osn_net_cfg c;
    double off[2][3], good[2][3];
    for (int heavy = 0; heavy < 2; heavy++) {
        for (int k = 0; k < 3; k++) {
            short_cfg(&c, 2);
            c.src.rate = heavy ? 1000 : 100;
            c.core.exp_cost = true;
            c.trunk.loss = 0.01;
            assert_int_equal(osn_ctl_kind_parse(kinds[k], &c.ctl_kind), 0);
            struct osn_net_result *r = run(&c);
            off[heavy][k] = val(r, OSN_NET_OFFERED);
            good[heavy][k] = val(r, OSN_NET_GOODPUT);
        }
        for (int k = 1; k < 3; k++)
            assert_true(off[heavy][k] == off[heavy][0]);
    }
    assert_true(off[0][0] > 90 && good[0][0] > 0.95 * off[0][0]);
    assert_true(good[0][1] == good[0][0] && good[0][2] == good[0][0]);
    /* in overload the controls act: goodput differs, the offered calls do not */
    assert_true(good[1][0] < 0.9 * off[1][0]);
    assert_true(good[1][1] != good[1][0] && good[1][2] != good[1][0] && good[1][1] != good[1][2]);
    c.core.buffer = 100;
    c.ctl_kind = OSN_CTL_KIND_NONE;
    assert_true(val(run(&c), OSN_NET_OFFERED) == off[1][0]);
}

/* A collapse whose edge is the bottleneck: the default core's costs at the edge (capacity 333
 * calls/s, four responses a call pass it), the default edge's at the core, 3x the edge's capacity
 * offered, under the control kind given. */
static void edge_bottleneck_cfg(struct osn_net_cfg *c, const char *kind, enum osn_net_ctl_at at,
                                double *rep)
{
    collapse_cfg(c, kind, 1);
    struct osn_net_server_cfg edge = c->core, core = c->edge;
    edge.buffer = 50000;
    core.buffer = 2000;
    c->edge = edge;
    c->core = core;
    c->replications = 4;
    c->ctl_at = at;
    c->src.rate = 3 * osn_net_capacity(&c->edge, 4);
    c->rep_measures = rep;
}

/* The edge is the bottleneck at 3x its capacity. With the server halves at the core (at = core)
 * nothing protects the edge and it collapses; at the edge (at = edge) its sources become its
 * client halves and shed what it cannot carry. Each kind with a client half: loss (RFC 7339),
 * rate (RFC 7415) and rate_dyn (whose client half is rate's). */
static void source_client_half(const char *kind)
{
    enum { R = 4 };
    static double rep[2][R * OSN_NET_NMEASURES];
    struct osn_net_cfg c;
    struct osn_net_result *r[2];
    for (int k = 0; k < 2; k++) {
        edge_bottleneck_cfg(&c, kind, k ? OSN_NET_CTL_AT_EDGE : OSN_NET_CTL_AT_CORE, rep[k]);
        r[k] = run(&c);
    }
    double cap = r[1]->elem[1][OSN_NET_E_CAPACITY].value;
    assert_float_equal(cap, 1 / 3.0e-3, 1e-6); /* INVITE 1 + ACK 0.3 + BYE 0.5 + 4 x 0.3 ms */
    /* the same calls offered in both (common random numbers) */
    assert_true(val(r[0], OSN_NET_OFFERED) == val(r[1], OSN_NET_OFFERED));
    /* at = core: no server half at the edge, no client half at the sources: it collapses */
    assert_true(val(r[0], OSN_NET_SHED_LOCAL) == 0);
    assert_true(val(r[0], OSN_NET_GOODPUT) < 0.5 * cap);
    /* at = edge: the sources shed themselves (counted as rejected too); goodput near capacity */
    double g = val(r[1], OSN_NET_GOODPUT), shed = val(r[1], OSN_NET_SHED_LOCAL);
    assert_true(g >= 0.9 * cap && g <= 1.02 * cap);
    assert_true(shed > 0.5 * val(r[1], OSN_NET_OFFERED));
    assert_true(shed <= val(r[1], OSN_NET_FAILED_REJECTED));
    /* the paired difference of goodput, replication by replication, and its 95% interval */
    double d[R], m = 0, v = 0;
    for (int i = 0; i < R; i++) {
        d[i] = rep[1][i * OSN_NET_NMEASURES + OSN_NET_GOODPUT] -
               rep[0][i * OSN_NET_NMEASURES + OSN_NET_GOODPUT];
        m += d[i] / R;
    }
    for (int i = 0; i < R; i++)
        v += (d[i] - m) * (d[i] - m) / (R - 1);
    double half = 3.182 * sqrt(v / R); /* Student t, 3 degrees of freedom, 95% */
    fprintf(stderr,
            "edge bottleneck 3x, %s: goodput at=core %.1f, at=edge %.1f (shed locally %.1f/s) "
            "of the edge's %.1f; paired difference %.1f +- %.1f\n",
            kind, val(r[0], OSN_NET_GOODPUT), g, shed, cap, m, half);
    assert_true(m - half > 0.5 * cap);
}

static void test_source_client_half(void **state)
{
    (void)state;
    source_client_half("loss");
    source_client_half("rate");
    source_client_half("rate_dyn");
    /* at = both: the core keeps its server half (and the edge its client half toward it), the
     * sources are the edge's clients all the same */
    struct osn_net_cfg c;
    edge_bottleneck_cfg(&c, "loss", OSN_NET_CTL_AT_BOTH, NULL);
    struct osn_net_result *b = run(&c);
    double cap = b->elem[1][OSN_NET_E_CAPACITY].value;
    assert_true(val(b, OSN_NET_GOODPUT) >= 0.9 * cap && val(b, OSN_NET_SHED_LOCAL) > 0);
    assert_true(val(b, OSN_NET_CORE_P0) >= 0); /* the core's detector ran: it has its half */
}

/* control.at = edge on a fanout (two edges, three cores) at a light load: the edges still choose
 * among the cores (their choice is made whatever the control), every call is good, none shed,
 * and the run is the one at = core gives, bit for bit (nothing is overloaded, and the halves
 * draw from streams of their own). */
static void test_fanout_at_edge_routes(void **state)
{
    (void)state;
    struct osn_net_cfg c;
    double good[2], inv[2][3];
    for (int k = 0; k < 2; k++) {
        short_cfg(&c, 2);
        c.topology = OSN_NET_FANOUT;
        c.edges = 2;
        c.cores = 3;
        c.src.rate = 150;
        c.ctl_kind = OSN_CTL_KIND_LOSS;
        c.ctl_at = k ? OSN_NET_CTL_AT_EDGE : OSN_NET_CTL_AT_CORE;
        struct osn_net_result *r = run(&c);
        good[k] = val(r, OSN_NET_GOODPUT);
        assert_true(good[k] > 0.97 * val(r, OSN_NET_OFFERED));
        assert_true(val(r, OSN_NET_SHED_LOCAL) == 0 && val(r, OSN_NET_FAILED) == 0);
        /* sources 0, 1, edges 2, 3, cores 4, 5, 6: each core takes a third of the calls */
        for (int j = 0; j < 3; j++) {
            inv[k][j] = r->elem[4 + j][OSN_NET_E_PROC + OSN_NET_K_INVITE].value;
            assert_true(inv[k][j] > 0.25 * val(r, OSN_NET_OFFERED));
        }
    }
    assert_true(good[1] == good[0]);
    assert_memory_equal(inv[1], inv[0], sizeof inv[0]);
}

struct progress_seen {
    int calls;
    double last;
    bool ordered; /* every fraction in [0, 1] and none below the one before */
};

static void note_progress(double done, double elapsed, void *arg)
{
    struct progress_seen *p = arg;
    p->ordered = p->ordered && done >= p->last && done <= 1 && elapsed >= 0;
    p->last = done;
    p->calls++;
}

/* A progress callback (reported from the calling thread while a worker runs, even on one
 * thread) changes no number, and what it is told only grows. How many reports come depends on
 * the wall time, so their count is not checked. */
static void test_progress_changes_nothing(void **state)
{
    (void)state;
    struct osn_net_cfg c;
    short_cfg(&c, 2);
    double g = run(&c)->est[OSN_NET_GOODPUT].value;
    struct progress_seen seen = {0, 0, true};
    for (int th = 1; th <= 2; th++) {
        seen.last = 0; /* a new run starts from 0 */
        c.threads = th;
        c.progress = note_progress;
        c.progress_arg = &seen;
        assert_true(run(&c)->est[OSN_NET_GOODPUT].value == g);
    }
    assert_true(seen.ordered);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_capacity_formula),
            cmocka_unit_test(test_light_load),
            cmocka_unit_test(test_collapse_without_control),
            cmocka_unit_test(test_loss_holds_goodput),
            cmocka_unit_test(test_rate_holds_goodput),
            cmocka_unit_test(test_prsm_serves_originals_first),
            cmocka_unit_test(test_prsm_recovers_from_burst),
            cmocka_unit_test(test_prsm_recovers_deep_buffer),
            cmocka_unit_test(test_pi_holds_ratio_at_target),
            cmocka_unit_test(test_progress_changes_nothing),
            cmocka_unit_test(test_single_server_modes),
            cmocka_unit_test(test_response_delay),
            cmocka_unit_test(test_rate_profile),
            cmocka_unit_test(test_link_loss_recovered),
            cmocka_unit_test(test_record_route),
            cmocka_unit_test(test_threads_do_not_matter),
            cmocka_unit_test(test_common_random_numbers),
            cmocka_unit_test(test_kept_replications),
            cmocka_unit_test(test_retrials_closed_form),
            cmocka_unit_test(test_retrials_honour_retry_after),
            cmocka_unit_test(test_patience_all_or_none),
            cmocka_unit_test(test_patience_exponential),
            cmocka_unit_test(test_cancel_accounting),
            cmocka_unit_test(test_patience_streams_apart),
            cmocka_unit_test(test_ring_cancel_487),
            cmocka_unit_test(test_ring_closed_form),
            cmocka_unit_test(test_callee_hangs_up),
            cmocka_unit_test(test_byes_cross),
            cmocka_unit_test(test_fanin_200_edges),
            cmocka_unit_test(test_fanin_shares_per_source),
            cmocka_unit_test(test_source_client_half),
            cmocka_unit_test(test_fanout_at_edge_routes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

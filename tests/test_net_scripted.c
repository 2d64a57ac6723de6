/*
 * Tests of the network simulator's two scripted experiments of study 09 (PRSM under server
 * slowdown and bulk arrivals), each against a closed form:
 *
 * - osn_des_slowed_end(): the end of w seconds of work on a server at speed f in [a, b) and 1
 *   elsewhere, against hand-worked cases and, on random cases, against the integral of the speed
 *   (the work done from t to the returned end, computed as (end - t) minus (1 - f) times the
 *   overlap with the window: a formula the function does not use);
 * - [server core] slowdown_*: a core whose only cost is c per new INVITE, offered lambda calls/s
 *   well below its capacity even when slowed, is busy lambda c (1 + (1/f - 1) d / T) of a window
 *   T that holds a slowdown of length d (the work of the calls arriving in the slowdown takes 1/f
 *   as long); without the slowdown lambda c;
 * - source.process = bulk: batches of n calls at one instant; with equal gaps the sources start
 *   exactly n calls every n / rate seconds (the count in a window known to the call), with
 *   exponential gaps `rate` calls/s on average, and the calls of a batch arrive at one instant:
 *   the core's mean queue is the M[X]/D/1 queue's (batch size X fixed), 14 times the M/D/1
 *   queue's of the same calls arriving one by one.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "osn/des.h"
#include "osn/net.h"
#include "osn/rng.h"

static struct osn_net_result *run(const struct osn_net_cfg *c)
{
    static struct osn_net_result r;
    char msg[256] = "";
    osn_net_result_release(&r);
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

/* The work a server at speed f in [a, b) and 1 elsewhere does from t to end. */
static double work_done(double t, double end, double a, double b, double f)
{
    double overlap = fmax(0, fmin(end, b) - fmax(t, a));
    return (end - t) - (1 - f) * overlap;
}

static void test_slowed_end_closed_form(void **state)
{
    (void)state;
    /* slowdown to half in [5, 10) */
    assert_true(osn_des_slowed_end(0, 1, 5, 10, 0.5) == 1);         /* wholly before */
    assert_true(osn_des_slowed_end(4, 2, 5, 10, 0.5) == 7);         /* 1 s before, 1 s at half */
    assert_true(osn_des_slowed_end(6, 1, 5, 10, 0.5) == 8);         /* inside */
    assert_true(osn_des_slowed_end(9, 1, 5, 10, 0.5) == 10.5);      /* 0.5 inside, 0.5 after */
    assert_true(osn_des_slowed_end(4, 10, 5, 10, 0.5) == 16.5);     /* 1 + 2.5 + 6.5 */
    assert_true(osn_des_slowed_end(12, 1, 5, 10, 0.5) == 13);       /* wholly after */
    assert_true(osn_des_slowed_end(6, 1, 5, INFINITY, 0.25) == 10); /* for good */
    assert_true(osn_des_slowed_end(6, 1, 10, 5, 0.5) == 7);         /* none: end before start */
    assert_true(osn_des_slowed_end(6, 1, 5, 10, 1) == 7);           /* full speed */

    struct osn_rng r;
    osn_rng_seed(&r, 9);
    for (int i = 0; i < 100000; i++) {
        double a = 10 * osn_rng_u01(&r), b = a + 10 * osn_rng_u01(&r);
        double f = 0.01 + 0.99 * osn_rng_u01(&r);
        double t = 25 * osn_rng_u01(&r), w = 8 * osn_rng_u01(&r);
        double end = osn_des_slowed_end(t, w, a, b, f);
        assert_true(end >= t + w - 1e-12);
        assert_true(fabs(work_done(t, end, a, b, f) - w) < 1e-9);
    }
}

/* One source into a core whose only cost is 10 ms per new INVITE (every other message free,
 * links without delay), lambda calls/s. */
static void light_cfg(struct osn_net_cfg *c, double lambda)
{
    osn_net_cfg_default(c);
    for (int k = 0; k < OSN_NET_NKINDS; k++)
        c->core.cost[k] = c->edge.cost[k] = c->uas.cost[k] = 0;
    c->core.cost[OSN_NET_K_INVITE] = 0.01;
    c->core.cost[OSN_NET_K_RETX] = 0.01;
    c->core.buffer = 100000;
    c->src.rate = lambda;
    c->src.hold = 1;
    c->seed = 3;
    c->threads = 2;
}

static void test_slowdown_busy_time(void **state)
{
    (void)state;
    struct osn_net_cfg c;
    light_cfg(&c, 30); /* busy 0.3, 0.6 in the slowdown: never saturated */
    c.warmup = 10;
    c.time = 100;
    c.replications = 4;
    struct osn_net_result *r = run(&c);
    double plain = val(r, OSN_NET_CORE_UTIL);
    double per_call = 0.01, f = 0.5, d = 40;
    assert_true(fabs(plain - 30 * per_call) < 0.015);
    c.core.slowdown_start = 40, c.core.slowdown_end = 40 + d, c.core.slowdown_factor = f;
    r = run(&c);
    double slow = val(r, OSN_NET_CORE_UTIL);
    double want = 30 * per_call * (1 + (1 / f - 1) * d / c.time);
    fprintf(stderr, "core busy: %.4f plain, %.4f slowed (closed form %.4f)\n", plain, slow, want);
    assert_true(fabs(slow - want) < 0.015);
    /* the same calls (common random numbers), all answered: the slowdown only delays them */
    assert_true(val(r, OSN_NET_FAILED) == 0);
}

static void test_bulk_equal_gaps_exact(void **state)
{
    (void)state;
    struct osn_net_cfg c;
    light_cfg(&c, 40);
    c.src.process = OSN_NET_BULK;
    c.src.bulk_size = 20;
    c.src.bulk_det = true; /* a batch every 0.5 s: at 0.5, 1.0, ... */
    c.warmup = 10.25;
    c.time = 20; /* window [10.25, 30.25): the 40 batches at 10.5 .. 30.0 */
    c.replications = 2;
    struct osn_net_result *r = run(&c);
    assert_true(fabs(val(r, OSN_NET_OFFERED) - 40 * 20 / 20.0) < 1e-9);
}

static void test_bulk_mean_rate_and_batches(void **state)
{
    (void)state;
    struct osn_net_cfg c;
    light_cfg(&c, 20);
    c.warmup = 10;
    c.time = 500;
    c.replications = 4;
    struct osn_net_result *r = run(&c);
    double q_poisson = r->elem[r->nelem - 2][OSN_NET_E_QMEAN].value;
    c.src.process = OSN_NET_BULK;
    c.src.bulk_size = 25;
    r = run(&c);
    double off = val(r, OSN_NET_OFFERED), q_bulk = r->elem[r->nelem - 2][OSN_NET_E_QMEAN].value;
    fprintf(stderr, "bulk of 25 at 20 calls/s: offered %.3f, core queue %.3f (Poisson %.3f)\n", off,
            q_bulk, q_poisson);
    /* 0.8 batches/s x 500 s x 4: 1600 batches, a relative deviation of 2.5 % per sigma */
    assert_true(fabs(off - 20) < 0.1 * 20);
    /* M/D/1 (Poisson calls, 10 ms each, rho 0.2): L = rho + rho^2 / (2 (1 - rho)) = 0.225.
     * M[X]/D/1 with batches of X = 25 (bulk): a call waits the work found by its batch,
     * rho X s / (2 (1 - rho)) = 0.03125 s (PASTA for the batches), plus the (X - 1) / 2 calls
     * ahead of it in its own batch, 0.12 s, and is served, 0.01 s: L = lambda x 0.16125 =
     * 3.225 by Little's law, 14 times Poisson's. */
    assert_true(fabs(q_poisson - 0.225) < 0.03);
    assert_true(fabs(q_bulk - 3.225) < 0.1 * 3.225);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_slowed_end_closed_form),
            cmocka_unit_test(test_slowdown_busy_time),
            cmocka_unit_test(test_bulk_equal_gaps_exact),
            cmocka_unit_test(test_bulk_mean_rate_and_batches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

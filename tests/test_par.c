/*
 * Tests of the replication runner of src/sim (par.h): every replication runs once, on any
 * number of threads; the first error stops the job and is what it returns; progress is
 * reported from the calling thread with the replications' clocks; the streams are the master
 * seed's state jumped i times.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <time.h>

#include <cmocka.h>

#include "osn/err.h"
#include "par.h"

struct fake {
    atomic_int runs[64];
    int fail_at; /* the replication that fails with OSN_EINVAL, -1: none */
    _Atomic double now[64];
    atomic_int reports;
    _Atomic double last;
    atomic_bool ordered;
};

static int fake_rep(void *ctx, int i)
{
    struct fake *f = ctx;
    atomic_fetch_add(&f->runs[i], 1);
    if (i == f->fail_at)
        return OSN_EINVAL;
    /* long enough for a report or two */
    for (int k = 1; k <= 4; k++) {
        struct timespec ts = {0, 30000000};
        nanosleep(&ts, NULL);
        atomic_store(&f->now[i], k * 0.25);
    }
    return 0;
}

static void fake_report(void *ctx, double done)
{
    struct fake *f = ctx;
    if (done < atomic_load(&f->last) || done > 1)
        atomic_store(&f->ordered, false);
    atomic_store(&f->last, done);
    atomic_fetch_add(&f->reports, 1);
}

static void test_every_replication_once(void **state)
{
    (void)state;
    for (int threads = 1; threads <= 4; threads++) {
        struct fake f = {.fail_at = -1};
        struct osn__par p = {.n = 10, .rep = fake_rep, .ctx = &f};
        assert_int_equal(osn__par_run(&p, threads), 0);
        for (int i = 0; i < 10; i++)
            assert_int_equal(atomic_load(&f.runs[i]), 1);
        assert_int_equal(atomic_load(&p.done), 10);
    }
}

static void test_first_error_stops(void **state)
{
    (void)state;
    for (int threads = 1; threads <= 3; threads++) {
        struct fake f = {.fail_at = 2};
        struct osn__par p = {.n = 40, .rep = fake_rep, .ctx = &f};
        assert_int_equal(osn__par_run(&p, threads), OSN_EINVAL);
        int ran = 0;
        for (int i = 0; i < 40; i++)
            ran += atomic_load(&f.runs[i]);
        /* each thread finishes the one it holds and takes no other */
        assert_true(ran >= 3 && ran <= 3 + threads);
    }
}

static void test_progress_from_clocks(void **state)
{
    (void)state;
    struct fake f = {.fail_at = -1, .ordered = true};
    struct osn__par p = {.n = 4, .rep = fake_rep, .ctx = &f, .report = fake_report};
    p.now = f.now;
    p.span = 4 * 1.0;
    assert_int_equal(osn__par_run(&p, 1), 0); /* one worker, the caller reports */
    assert_true(atomic_load(&f.ordered));
    /* 4 x 120 ms of work with a report every 200 ms */
    assert_true(atomic_load(&f.reports) >= 1);
}

static void test_streams_are_jumps(void **state)
{
    (void)state;
    struct osn_rng *s = osn__par_streams(42, 3), r;
    assert_non_null(s);
    osn_rng_seed(&r, 42);
    assert_memory_equal(&s[0], &r, sizeof r);
    osn_rng_jump(&r);
    assert_memory_equal(&s[1], &r, sizeof r);
    osn_rng_jump(&r);
    assert_memory_equal(&s[2], &r, sizeof r);
    free(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_every_replication_once),
            cmocka_unit_test(test_first_error_stops),
            cmocka_unit_test(test_progress_from_clocks),
            cmocka_unit_test(test_streams_are_jumps),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

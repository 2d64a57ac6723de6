/*
 * Tests of the study module's replication runner (osn/study.h), which both simulators call:
 * every replication runs once, on any number of threads; replication i draws from stream i, the
 * master seed's state jumped i times (the reference here is osn_rng_jump applied by hand), on
 * any thread count; kept replications and other processes' shares are not run; the first error
 * stops the job and is what it returns, with its message; progress is reported from the calling
 * thread with the replications' clocks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cmocka.h>

#include "osn/err.h"
#include "osn/study.h"

struct fake {
    atomic_int runs[64];
    uint64_t first[64]; /* replication i's first draw */
    int fail_at;        /* the replication that fails with OSN_EINVAL, -1: none */
    bool slow;          /* long enough for a report or two */
    atomic_int reports;
    _Atomic double last;
    atomic_bool ordered;
};

static int fake_rep(void *ctx, long i, struct osn_rng *rng, _Atomic double *now, char *msg,
                    size_t msgsize)
{
    struct fake *f = ctx;
    atomic_fetch_add(&f->runs[i], 1);
    f->first[i] = osn_rng_next(rng);
    if (i == f->fail_at) {
        snprintf(msg, msgsize, "replication %ld failed", i);
        return OSN_EINVAL;
    }
    for (int k = 1; f->slow && k <= 4; k++) {
        struct timespec ts = {0, 30000000};
        nanosleep(&ts, NULL);
        if (now)
            atomic_store(now, k * 0.25);
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
        struct osn_study_reps r = {
                .n = 10, .seed = 1, .threads = threads, .rep = fake_rep, .ctx = &f};
        assert_int_equal(osn_study_reps_run(&r), 0);
        for (int i = 0; i < 10; i++)
            assert_int_equal(atomic_load(&f.runs[i]), 1);
        assert_int_equal(r.ran, 10);
        assert_string_equal(r.msg, "");
    }
}

/* Replication i's first draw is that of the seed jumped i times, whatever the thread count. */
static void test_streams_are_jumps(void **state)
{
    (void)state;
    uint64_t want[20];
    struct osn_rng ref;
    osn_rng_seed(&ref, 42);
    for (int i = 0; i < 20; i++) {
        struct osn_rng c = ref;
        want[i] = osn_rng_next(&c);
        osn_rng_jump(&ref);
    }
    for (int threads = 1; threads <= 4; threads++) {
        struct fake f = {.fail_at = -1};
        struct osn_study_reps r = {
                .n = 20, .seed = 42, .threads = threads, .rep = fake_rep, .ctx = &f};
        assert_int_equal(osn_study_reps_run(&r), 0);
        assert_memory_equal(f.first, want, sizeof want);
    }
}

/* Kept replications are not run again; of the others, a process runs its block only (the
 * blocks of all processes covering each once). */
static void test_kept_and_split(void **state)
{
    (void)state;
    int total[16] = {0};
    for (int part = 0; part < 3; part++) {
        struct fake f = {.fail_at = -1};
        struct osn_split sp = {.part = part, .parts = 3};
        struct osn_study_reps r = {.n = 16,
                                   .seed = 5,
                                   .threads = 2,
                                   .have = 4,
                                   .split = &sp,
                                   .rep = fake_rep,
                                   .ctx = &f};
        assert_int_equal(osn_study_reps_run(&r), 0);
        long ran = 0;
        for (int i = 0; i < 16; i++) {
            ran += atomic_load(&f.runs[i]);
            total[i] += atomic_load(&f.runs[i]);
        }
        assert_int_equal(r.ran, ran);
        /* 12 not kept, in blocks [0, 4), [4, 8), [8, 12) of them */
        assert_int_equal(ran, 4);
        assert_int_equal(atomic_load(&f.runs[4 + 4 * part]), 1);
    }
    for (int i = 0; i < 16; i++)
        assert_int_equal(total[i], i < 4 ? 0 : 1);
}

static void test_first_error_stops(void **state)
{
    (void)state;
    for (int threads = 1; threads <= 3; threads++) {
        struct fake f = {.fail_at = 2, .slow = true};
        struct osn_study_reps r = {
                .n = 40, .seed = 1, .threads = threads, .rep = fake_rep, .ctx = &f};
        assert_int_equal(osn_study_reps_run(&r), OSN_EINVAL);
        assert_string_equal(r.msg, "replication 2 failed");
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
    struct fake f = {.fail_at = -1, .slow = true, .ordered = true};
    struct osn_study_reps r = {.n = 4,
                               .seed = 1,
                               .threads = 1,
                               .rep = fake_rep,
                               .ctx = &f,
                               .progress = fake_report,
                               .span = 1.0};
    assert_int_equal(osn_study_reps_run(&r), 0); /* one worker, the caller reports */
    assert_true(atomic_load(&f.ordered));
    /* 4 x 120 ms of work with a report every 200 ms */
    assert_true(atomic_load(&f.reports) >= 1);
}

static void test_bad_job(void **state)
{
    (void)state;
    struct fake f = {.fail_at = -1};
    struct osn_study_reps r = {
            .n = 4, .seed = 1, .threads = 1, .have = 5, .rep = fake_rep, .ctx = &f};
    assert_int_equal(osn_study_reps_run(&r), OSN_EINVAL);
    r.have = 0;
    r.rep = NULL;
    assert_int_equal(osn_study_reps_run(&r), OSN_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_every_replication_once), cmocka_unit_test(test_streams_are_jumps),
            cmocka_unit_test(test_kept_and_split),         cmocka_unit_test(test_first_error_stops),
            cmocka_unit_test(test_progress_from_clocks),   cmocka_unit_test(test_bad_job),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

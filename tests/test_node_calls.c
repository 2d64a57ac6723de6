/*
 * The calls a uas knows (calls_put, src/node/dialogs.c): from an INVITE's 2xx to its BYE's, for
 * a BYE or CANCEL to find. The map is bounded (CALLS_MAX, CALLS_AGE). At its bound it once
 * returned "out of memory", which ended the node: a uas at 72,000 calls/s, whose overloaded
 * caller gave up on calls it had answered (no ACK, no BYE), ended so at 63 s (2026-12-07), and a
 * flood of INVITEs from anyone would do the same. Now the oldest calls are forgotten, counted.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "node_int.h"

/* A Call-ID hash for call i (the map's keys are hashes: spread them). */
static uint64_t key_of(size_t i)
{
    return (uint64_t)(i + 1) * 0x9e3779b97f4a7c15u;
}

/* More calls than the bound, none of them ended, all within 11 s: every put succeeds, the
 * oldest are forgotten and counted, the newest are known, and the map stays within the bound. */
static void test_bound_forgets_the_oldest(void **state)
{
    (void)state;
    struct map c = {0};
    uint64_t forgotten = 0;
    size_t total = CALLS_MAX + CALLS_MAX / 16;
    for (size_t i = 0; i < total; i++)
        assert_int_equal(calls_put(&c, key_of(i), 1e-5 * (double)i, &forgotten), 0);
    assert_true(forgotten > 0);
    assert_int_equal(forgotten + c.n, total); /* each call known or counted, none lost */
    assert_true(c.n <= CALLS_MAX);
    assert_true(c.mask + 1 <= 2 * CALLS_MAX);
    assert_false(calls_has(&c, key_of(0)));
    assert_true(calls_has(&c, key_of(total - 1)));
    /* what is kept is the newest: every call after the newest forgotten one is known */
    size_t newest_gone = 0;
    for (size_t i = 0; i < total; i++)
        if (!calls_has(&c, key_of(i)))
            newest_gone = i;
    for (size_t i = newest_gone + 1; i < total; i++)
        assert_true(calls_has(&c, key_of(i)));
    assert_int_equal(total - 1 - newest_gone, c.n);
    free(c.slot);
}

/* Below the bound a call is forgotten only an hour (CALLS_AGE) after its 2xx, counted too. */
static void test_an_hour_old_is_forgotten(void **state)
{
    (void)state;
    struct map c = {0};
    uint64_t forgotten = 0;
    for (size_t i = 0; i < 600; i++) /* 600 calls at t = 0 */
        assert_int_equal(calls_put(&c, key_of(i), 0.0, &forgotten), 0);
    /* the rest come after the hour: the first rebuild drops the 600 */
    for (size_t i = 600; i < 1200; i++)
        assert_int_equal(calls_put(&c, key_of(i), CALLS_AGE + 1, &forgotten), 0);
    assert_int_equal(forgotten, 600);
    assert_false(calls_has(&c, key_of(0)));
    assert_true(calls_has(&c, key_of(1199)));
    free(c.slot);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_bound_forgets_the_oldest),
            cmocka_unit_test(test_an_hour_old_is_forgotten),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * Extended-range doubles: arithmetic against plain doubles where they fit, exactness far outside
 * the double range, and decimal formatting.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "osn/xd.h"
#include "testutil.h"

static void test_matches_double(void **state)
{
    (void)state;
    srand(7);
    for (int i = 0; i < 100000; i++) {
        double a = ldexp((double)rand() / RAND_MAX - 0.5, rand() % 400 - 200);
        double b = ldexp((double)rand() / RAND_MAX - 0.5, rand() % 400 - 200);
        struct osn_xd xa = osn_xd(a), xb = osn_xd(b);
        assert_true(osn_xd_to_double(osn_xd_add(xa, xb)) == a + b ||
                    rel(osn_xd_to_double(osn_xd_add(xa, xb)), a + b) < 1e-15);
        assert_true(rel(osn_xd_to_double(osn_xd_mul(xa, xb)), a * b) < 1e-15);
        if (b != 0)
            assert_true(rel(osn_xd_to_double(osn_xd_div(xa, xb)), a / b) < 1e-15);
        assert_int_equal(osn_xd_cmp(xa, xb), (a > b) - (a < b));
    }
}

static void test_far_outside_double_range(void **state)
{
    (void)state;
    /* (1e-300)^100 = 1e-30000, then back: no underflow on the way. */
    struct osn_xd x = osn_xd(1), t = osn_xd(1e-300);
    for (int i = 0; i < 100; i++)
        x = osn_xd_mul(x, t);
    assert_false(osn_xd_fits_double(x));
    assert_true(osn_xd_to_double(x) == 0);
    assert_true(fabs(osn_xd_log10(x) + 30000) < 1e-9);
    struct osn_xd y = x;
    for (int i = 0; i < 100; i++)
        y = osn_xd_div(y, t);
    assert_true(rel(osn_xd_to_double(y), 1) < 1e-13);
    /* A tiny addend is negligible but a comparable one is not. */
    struct osn_xd big = osn_xd_div(osn_xd(1), x); /* 1e+30000 */
    assert_true(xd_relerr(osn_xd_add(big, osn_xd(1)), big) == 0);
    assert_true(rel(osn_xd_to_double(osn_xd_div(osn_xd_add(big, big), big)), 2) == 0);
    /* Subtraction of equal values is exactly zero. */
    assert_true(osn_xd_is_zero(osn_xd_sub(big, big)));
    /* sqrt keeps the exponent exact. */
    assert_true(fabs(osn_xd_log10(osn_xd_sqrt(big)) - 15000) < 1e-9);
}

/* Issue 14: doubles at or beyond 2^1023 (optimize.min_cycle=9e307) once became 0 (2^-1023 is
 * not a normal double), so 9e307 compared below 5.8. */
static void test_top_of_double_range(void **state)
{
    (void)state;
    const double top[] = {0x1p1023, 9e307, 1e308, DBL_MAX, -9e307};
    for (size_t i = 0; i < sizeof top / sizeof top[0]; i++) {
        struct osn_xd x = osn_xd(top[i]);
        assert_true(osn_xd_to_double(x) == top[i]);
        assert_int_equal(osn_xd_cmp(x, osn_xd(5.8)), top[i] > 0 ? 1 : -1);
        assert_int_equal(osn_xd_cmp(osn_xd(top[i] / 2), x), top[i] > 0 ? -1 : 1);
    }
    assert_true(rel(osn_xd_to_double(osn_xd_div(osn_xd(DBL_MAX), osn_xd(0x1p1023))),
                    DBL_MAX / 0x1p1023) == 0);
}

static void test_format(void **state)
{
    (void)state;
    char buf[64];
    assert_string_equal(osn_xd_format(osn_xd(0.5), 6, buf, sizeof buf), "0.5");
    assert_string_equal(osn_xd_format(osn_xd(0), 6, buf, sizeof buf), "0");
    struct osn_xd x = osn_xd_make(1, 6644); /* 2^6644 = 1.10482e+2000 */
    osn_xd_format(x, 6, buf, sizeof buf);
    assert_string_equal(buf, "1.10482e+2000");
    osn_xd_format(osn_xd_div(osn_xd(-1), x), 4, buf, sizeof buf);
    assert_string_equal(buf, "-9.051e-2001");
    /* 2^4000 = 1.3182e+1204: rounding 9.99999999 * 2^4000 = 1.31820408e+1205. */
    osn_xd_format(osn_xd_mul(osn_xd(9.9999999), osn_xd_make(1, 4000)), 5, buf, sizeof buf);
    assert_string_equal(buf, "1.3182e+1205");
    /* A mantissa that rounds to 10 carries into the exponent: 10^1205 - tiny. */
    struct osn_xd p = osn_xd(1);
    for (int i = 0; i < 1205; i++)
        p = osn_xd_mul(p, osn_xd(10));
    osn_xd_format(osn_xd_muld(p, 0.99999999), 3, buf, sizeof buf);
    assert_string_equal(buf, "1.00e+1205");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_matches_double),
            cmocka_unit_test(test_far_outside_double_range),
            cmocka_unit_test(test_top_of_double_range),
            cmocka_unit_test(test_format),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

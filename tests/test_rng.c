/*
 * xoshiro256++ and splitmix64 against published reference outputs, and the jump against an
 * independent computation: the state transition written as a 256x256 matrix over GF(2) and
 * squared 128 times gives T^(2^128), which must move any state exactly where osn_rng_jump()
 * does.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <string.h>

#include "osn/rng.h"

/* splitmix64 from seed 1234567 (the sequence of the public reference implementation). */
static void test_splitmix64(void **state)
{
    (void)state;
    uint64_t x = 1234567;
    assert_true(osn_splitmix64(&x) == 6457827717110365317u);
    assert_true(osn_splitmix64(&x) == 3203168211198807973u);
    assert_true(osn_splitmix64(&x) == 9817491932198370423u);
}

/* State {0, 0, 0, 1}: outputs and jumped state as tabulated by xoshiro-fortran's test data. */
static void test_reference_outputs(void **state)
{
    (void)state;
    static const uint64_t plain[10] = {0x0000000000800000, 0x0000000000800011, 0x0002200000800011,
                                       0x0002200044000020, 0x00022000448008A1, 0x01102100802208A0,
                                       0x0114002284200880, 0x0402896644A64095, 0x8A14A0A244ACC891,
                                       0x8C88BA4680B20495};
    static const uint64_t jumped_state[4] = {0x934D05E8B2076310, 0xEABDD0BF76A1BE51,
                                             0x75DD6A992ACCB1E8, 0xC660C602A7330187};
    static const uint64_t jumped[10] = {0x88F9A31AFDB439F5, 0x38134A20DFA1A232, 0x21D6A25A297797C7,
                                        0xFCA0846CC616D4F8, 0x1A9D1B267D52627A, 0xC4345D87063BFE30,
                                        0x88B7215CC87F6B88, 0xF5EF8FA1470DE5EE, 0x8AAA468BB80BAF3B,
                                        0x7649B52B78BB4634};
    struct osn_rng r = {{0, 0, 0, 1}};
    for (int i = 0; i < 10; i++)
        assert_true(osn_rng_next(&r) == plain[i]);
    r = (struct osn_rng){{0, 0, 0, 1}};
    osn_rng_jump(&r);
    for (int i = 0; i < 4; i++)
        assert_true(r.s[i] == jumped_state[i]);
    for (int i = 0; i < 10; i++)
        assert_true(osn_rng_next(&r) == jumped[i]);
}

/* Seeding through splitmix64: XoshiroCpp's default seed 1234567890 gives these outputs. */
static void test_seeded_outputs(void **state)
{
    (void)state;
    struct osn_rng r;
    osn_rng_seed(&r, 1234567890u);
    assert_true(osn_rng_next(&r) == 10656210946825422025u);
    assert_true(osn_rng_next(&r) == 3029598875750717312u);
    assert_true(osn_rng_next(&r) == 8253387787243700537u);
}

/* A 256x256 GF(2) matrix as 256 columns of 256 bits. */
struct gf2 {
    uint64_t col[256][4];
};

static void apply(const struct gf2 *m, const uint64_t v[4], uint64_t out[4])
{
    uint64_t o[4] = {0, 0, 0, 0};
    for (int k = 0; k < 256; k++)
        if (v[k / 64] >> (k % 64) & 1)
            for (int w = 0; w < 4; w++)
                o[w] ^= m->col[k][w];
    memcpy(out, o, sizeof o);
}

static void test_jump_is_t_to_the_2_128(void **state)
{
    (void)state;
    static struct gf2 m, sq;
    /* Column k of T: one step of the generator applied to the unit vector e_k. */
    for (int k = 0; k < 256; k++) {
        struct osn_rng r = {{0, 0, 0, 0}};
        r.s[k / 64] = (uint64_t)1 << (k % 64);
        osn_rng_next(&r);
        memcpy(m.col[k], r.s, sizeof r.s);
    }
    for (int i = 0; i < 128; i++) {
        for (int k = 0; k < 256; k++)
            apply(&m, m.col[k], sq.col[k]);
        m = sq;
    }
    for (uint64_t seed = 1; seed <= 5; seed++) {
        struct osn_rng a, b;
        osn_rng_seed(&a, seed);
        b = a;
        osn_rng_jump(&a);
        apply(&m, b.s, b.s);
        assert_memory_equal(a.s, b.s, sizeof a.s);
    }
    /* Streams: stream 3 = seed, then three jumps. */
    struct osn_rng s3, t;
    osn_rng_stream(&s3, 42, 3);
    osn_rng_seed(&t, 42);
    for (int i = 0; i < 3; i++)
        apply(&m, t.s, t.s);
    assert_memory_equal(s3.s, t.s, sizeof t.s);
}

/* The uniform conversions stay in their intervals and have mean 1/2, variance 1/12. */
static void test_uniforms(void **state)
{
    (void)state;
    struct osn_rng r;
    double sum = 0, sum2 = 0;
    const int n = 1000000;
    osn_rng_seed(&r, 9);
    for (int i = 0; i < n; i++) {
        double u = osn_rng_u01(&r), v = osn_rng_u01_open(&r);
        assert_true(u >= 0 && u < 1);
        assert_true(v > 0 && v <= 1);
        sum += u;
        sum2 += u * u;
    }
    double mean = sum / n, var = sum2 / n - mean * mean;
    assert_true(fabs(mean - 0.5) < 5 * sqrt(1.0 / 12 / n));
    assert_true(fabs(var - 1.0 / 12) < 0.002);
    /* The extreme values of the conversions. */
    struct osn_rng z = {{0, 0, 0, 0}};
    assert_true(osn_rng_u01(&z) == 0);
    assert_true(osn_rng_u01_open(&z) == 0x1.0p-53);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_splitmix64),     cmocka_unit_test(test_reference_outputs),
            cmocka_unit_test(test_seeded_outputs), cmocka_unit_test(test_jump_is_t_to_the_2_128),
            cmocka_unit_test(test_uniforms),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

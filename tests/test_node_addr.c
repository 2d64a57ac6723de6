/*
 * The node's IPv4 literal reader (addr_ipv4, src/node/addr.c) against the C library's
 * inet_pton(AF_INET), the reference it replaces on the forwarding path: hand-picked edge cases
 * (leading zeros, 256, five parts, empty parts, signs, spaces) and 200,000 random strings over
 * digits and dots (plus a few other bytes), each of 0 to 17 bytes. Both must accept the same
 * strings and give the same address; addr_ipv4 reads exactly n bytes, so each string is also
 * given with a digit after its end that must not be read.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <arpa/inet.h>
#include <cmocka.h>
#include <string.h>

#include "node_int.h"

static void same_as_inet_pton(const char *s, size_t n)
{
    char z[32], tail[32];
    memcpy(z, s, n);
    z[n] = '\0';
    memcpy(tail, s, n);
    tail[n] = '7'; /* not part of the text: must not be read */
    struct in_addr want = {0}, got = {0};
    bool ok = inet_pton(AF_INET, z, &want) == 1;
    if (addr_ipv4(tail, n, &got) != ok)
        fail_msg("'%s': inet_pton says %s, addr_ipv4 the opposite", z, ok ? "yes" : "no");
    if (ok && got.s_addr != want.s_addr)
        fail_msg("'%s': %08x, not %08x", z, got.s_addr, want.s_addr);
}

static void test_cases(void **state)
{
    (void)state;
    static const char *cases[] = {
            "127.0.0.1",
            "0.0.0.0",
            "255.255.255.255",
            "1.2.3.4",
            "10.0.0.255",
            "256.1.1.1",
            "1.2.3.256",
            "01.2.3.4",
            "1.2.3.04",
            "1.2.3.00",
            "1.2.3",
            "1.2.3.4.5",
            "1.2.3.4.",
            ".1.2.3.4",
            "1..2.3",
            "1.2.3.4 ",
            " 1.2.3.4",
            "+1.2.3.4",
            "1.2.3.-4",
            "1234.1.1.1",
            "1.2.3.1000",
            "999.999.999.999",
            "192.168.1.1",
            "0.0.0.00",
            "a.b.c.d",
            "1.2.3.4:5060",
            "",
            "1",
            "1.2.3.4x",
            "100.200.250.199",
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        same_as_inet_pton(cases[i], strlen(cases[i]));
    struct in_addr a;
    assert_true(addr_ipv4("127.0.0.1", 9, &a));
    assert_int_equal(ntohl(a.s_addr), 0x7f000001u);
}

static void test_random(void **state)
{
    (void)state;
    static const char alphabet[] = "0123456789...........12501x ";
    uint64_t x = 0x9e3779b97f4a7c15u;
    char s[20];
    for (int k = 0; k < 200000; k++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        size_t n = (size_t)(x % 18);
        uint64_t y = x;
        for (size_t i = 0; i < n; i++) {
            y = y * 6364136223846793005u + 1442695040888963407u;
            s[i] = alphabet[(y >> 33) % (sizeof alphabet - 1)];
        }
        same_as_inet_pton(s, n);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_cases),
            cmocka_unit_test(test_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

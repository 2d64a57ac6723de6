/*
 * The node's IPv4 literal reader (addr_ipv4, src/node/addr.c) against the C library's
 * inet_pton(AF_INET), the reference it replaces on the forwarding path: hand-picked edge cases
 * (leading zeros, 256, five parts, empty parts, signs, spaces) and 200,000 random strings over
 * digits and dots (plus a few other bytes), each of 0 to 17 bytes. Both must accept the same
 * strings and give the same address; addr_ipv4 reads exactly n bytes, so each string is also
 * given with a digit after its end that must not be read. Then the SIP URIs route_uri_addr
 * (src/node/route.c) reads into addresses, against addresses written out by hand: scheme case,
 * userinfo, default port, parameters and headers, IPv6 references, and refusals.
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

/* route.c's route_plan asks tcp.c; these tests never reach it. */
bool tcp_is_hop(const struct node *n, const union node_addr *to)
{
    (void)n;
    (void)to;
    return false;
}

static void test_route_uri(void **state)
{
    (void)state;
    static const struct {
        const char *uri;
        int ok;
        const char *addr; /* what inet_pton reads, when ok */
        unsigned port;
    } cases[] = {
            {"sip:127.0.0.1:38170;lr", 1, "127.0.0.1", 38170},
            {"SIP:10.1.2.3", 1, "10.1.2.3", 5060},
            {"sIp:service@127.0.0.1:5070", 1, "127.0.0.1", 5070},
            {"sip:a@10.0.0.1:7;transport=tcp?h=v", 1, "10.0.0.1", 7},
            {"sip:a;b@10.0.0.1", 0, NULL, 0}, /* the host ends at the first ";" */
            {"sip:10.0.0.1?x=1;y", 1, "10.0.0.1", 5060},
            {"sip:u@10.0.0.1;maddr=1.2.3.4", 1, "10.0.0.1", 5060},
            {"sip:[::1]:5062;lr", 1, "::1", 5062},
            {"sip:[2001:db8::7]", 1, "2001:db8::7", 5060},
            {"sips:10.0.0.1", 0, NULL, 0},
            {"tel:10.0.0.1", 0, NULL, 0},
            {"sip;10.0.0.1", 0, NULL, 0},
            {"sip:", 0, NULL, 0},
            {"sip", 0, NULL, 0},
            {"sip:10.0.0.1:", 0, NULL, 0},
            {"sip:10.0.0.1:0", 0, NULL, 0},
            {"sip:10.0.0.1:65536", 0, NULL, 0},
            {"sip:10.0.0.1:5x", 0, NULL, 0},
            {"sip:host.example.com", 0, NULL, 0},
            {"sip:010.0.0.1", 0, NULL, 0},
            {"sip:[::1", 0, NULL, 0},
            {"sip:[::1]x:5060", 0, NULL, 0},
            {"sip:u@:5060", 0, NULL, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        union node_addr a;
        const char *u = cases[i].uri;
        int rc = route_uri_addr((struct osn_span){u, strlen(u)}, &a);
        if ((rc == 0) != cases[i].ok)
            fail_msg("'%s': %s", u, rc ? "refused" : "read");
        if (!cases[i].ok)
            continue;
        bool v6 = strchr(cases[i].addr, ':') != NULL;
        union node_addr want = {0};
        if (v6) {
            want.v6.sin6_family = AF_INET6;
            want.v6.sin6_port = htons((uint16_t)cases[i].port);
            assert_int_equal(inet_pton(AF_INET6, cases[i].addr, &want.v6.sin6_addr), 1);
        } else {
            want.v4.sin_family = AF_INET;
            want.v4.sin_port = htons((uint16_t)cases[i].port);
            assert_int_equal(inet_pton(AF_INET, cases[i].addr, &want.v4.sin_addr), 1);
        }
        if (!addr_eq(&a, &want))
            fail_msg("'%s': not %s port %u", u, cases[i].addr, cases[i].port);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_cases),
            cmocka_unit_test(test_random),
            cmocka_unit_test(test_route_uri),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * A message coded against another (src/sip/delta.c), as the node's kept table uses it: a 200 to
 * a BYE coded against the BYE (RFC 3261 8.2.6.2: the response copies the request's Via, From,
 * To, Call-ID and CSeq) prints back byte for byte from the BYE, and from a retransmission of it
 * whose Max-Forwards line differs (a copy names a line, not an offset); a BYE whose Call-ID
 * differs, or a truncated one, prints nothing rather than another message.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "osn/sip_wire.h"

#define VIA  "Via: SIP/2.0/UDP 127.0.0.1:5070;branch=z9hG4bK776asdhds\r\n"
#define FROM "From: <sip:a@127.0.0.1>;tag=1928301774\r\n"
#define TO   "To: <sip:b@127.0.0.1>;tag=a6c85cf\r\n"
#define CID  "Call-ID: a84b4c76e66710@pc33.atlanta.com\r\n"
#define SEQ  "CSeq: 2 BYE\r\n"

static const char bye[] = "BYE sip:b@127.0.0.1 SIP/2.0\r\n" VIA
                          "Max-Forwards: 70\r\n" FROM TO CID SEQ "Content-Length: 0\r\n\r\n";
static const char bye_mf9[] = "BYE sip:b@127.0.0.1 SIP/2.0\r\n" VIA
                              "Max-Forwards: 9\r\n" FROM TO CID SEQ "Content-Length: 0\r\n\r\n";
static const char bye_other[] =
        "BYE sip:b@127.0.0.1 SIP/2.0\r\n" VIA "Max-Forwards: 70\r\n" FROM TO
        "Call-ID: another@pc33.atlanta.com\r\n" SEQ "Content-Length: 0\r\n\r\n";
static const char ok[] = "SIP/2.0 200 OK\r\n" VIA FROM TO CID SEQ "Content-Length: 0\r\n\r\n";

static void test_round_trip(void **state)
{
    (void)state;
    static const uint8_t key[16] = {1, 2, 3};
    char *out = malloc(OSN_SIP_WIRE_MAX_LEN + 1);
    size_t size = 0;
    osn_sip_wire_key_set(key);
    uint8_t *blob = osn_sip_wire_delta(ok, strlen(ok), bye, strlen(bye), &size);
    assert_non_null(blob);
    assert_non_null(out);
    assert_int_equal(osn_sip_wire_delta_size(blob), size);
    /* Copies of whole lines, a literal status line: a fraction of the response's bytes. */
    assert_true(size < strlen(ok) / 3);
    assert_int_equal(osn_sip_wire_undelta(out, blob, bye, strlen(bye)), (int)strlen(ok));
    assert_memory_equal(out, ok, strlen(ok));
    assert_int_equal(osn_sip_wire_undelta(out, blob, bye_mf9, strlen(bye_mf9)), (int)strlen(ok));
    assert_memory_equal(out, ok, strlen(ok));
    assert_int_equal(osn_sip_wire_undelta(out, blob, bye_other, strlen(bye_other)), -1);
    assert_int_equal(osn_sip_wire_undelta(out, blob, bye, 40), -1);
    free(blob);
    /* Longer than a datagram: not coded. */
    assert_null(osn_sip_wire_delta(ok, 70000, bye, strlen(bye), &size));
    free(out);
}

/* The longest common prefix the coder finds, checked at every place a line can first differ:
 * a one-line message against a one-line reference that differs from it at byte j alone is coded
 * as a copy of j bytes (4 bytes of code) and a literal of the rest (1 + len - j), after the
 * 14-byte head, and prints back byte for byte. */
static void test_prefix(void **state)
{
    (void)state;
    static const char line[] = "Via: SIP/2.0/UDP 127.0.0.1:5070;branch=z9hG4bK776asdhds;rport\r\n";
    size_t len = strlen(line);
    char msg[sizeof line], out[sizeof line + 16];
    for (size_t j = 6; j < len - 2; j++) {
        memcpy(msg, line, sizeof line);
        msg[j] = msg[j] == '#' ? '%' : '#';
        size_t size = 0;
        uint8_t *blob = osn_sip_wire_delta(msg, len, line, len, &size);
        assert_non_null(blob);
        if (size != 14 + 4 + 1 + (len - j))
            fail_msg("differing at byte %zu: %zu bytes of code, expected %zu", j, size,
                     14 + 4 + 1 + (len - j));
        assert_int_equal(osn_sip_wire_undelta(out, blob, line, len), (int)len);
        assert_memory_equal(out, msg, len);
        free(blob);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_round_trip),
                                       cmocka_unit_test(test_prefix)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}

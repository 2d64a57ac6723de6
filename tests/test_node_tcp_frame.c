/*
 * Where a SIP message ends on a TCP stream (src/node/tcp_frame.c) against RFC 3261's words:
 * 18.3 (Content-Length gives the body's length on a stream, and is mandatory there), 7.3.1 and
 * 7.3.3 (header names in any case; "l" the compact form of Content-Length), 20.14 (its value is
 * 1*DIGIT), 7.5 (CRLFs before a start line are ignored) and RFC 5626 3.5.1 (a double CRLF is a
 * keep-alive ping). Every expected length is counted by hand from the bytes of the case.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "node_int.h"

#define HEAD "INVITE sip:b@127.0.0.1 SIP/2.0\r\nVia: SIP/2.0/TCP 127.0.0.1:9;branch=z9hG4bK1\r\n"

static int frame(const char *p, size_t max, struct tcp_frame *f)
{
    return tcp_frame(p, strlen(p), max, f);
}

static void test_lengths(void **state)
{
    (void)state;
    struct tcp_frame f;
    /* Header 85 + 19 + 2 = 106 bytes with its blank line, then 4 of body. */
    static const char one[] = HEAD "Content-Length: 4\r\n\r\nabcdNEXT";
    assert_int_equal(frame(one, 65535, &f), TCP_FRAME_MSG);
    assert_int_equal(f.head, strlen(HEAD) + strlen("Content-Length: 4\r\n\r\n"));
    assert_int_equal(f.len, f.head + 4);
    assert_memory_equal(one + f.len, "NEXT", 4);
    /* Any case, spaces before the colon and around the value; the compact form. */
    assert_int_equal(frame(HEAD "cOnTeNt-LeNgTh \t: 2 \r\n\r\nxy", 65535, &f), TCP_FRAME_MSG);
    assert_int_equal(f.len, strlen(HEAD "cOnTeNt-LeNgTh \t: 2 \r\n\r\nxy"));
    assert_int_equal(frame(HEAD "l: 0\r\n\r\n", 65535, &f), TCP_FRAME_MSG);
    assert_int_equal(f.len, strlen(HEAD "l: 0\r\n\r\n"));
    /* Not Content-Length: another header starting with l, and a value inside another header. */
    assert_int_equal(frame(HEAD "Lx: 5\r\nSubject: Content-Length: 9\r\n\r\n", 65535, &f),
                     TCP_FRAME_NO_LENGTH);
    /* Body not all there yet; header not all there yet. */
    assert_int_equal(frame(HEAD "Content-Length: 10\r\n\r\nabc", 65535, &f), TCP_FRAME_MORE);
    assert_int_equal(frame(HEAD "Content-Len", 65535, &f), TCP_FRAME_MORE);
}

static void test_errors(void **state)
{
    (void)state;
    struct tcp_frame f;
    static const char none[] = HEAD "Call-ID: x\r\n\r\n";
    assert_int_equal(frame(none, 65535, &f), TCP_FRAME_NO_LENGTH);
    assert_int_equal(f.head, strlen(none));
    assert_int_equal(frame(HEAD "Content-Length: 1x\r\n\r\n", 65535, &f), TCP_FRAME_BAD_LENGTH);
    assert_int_equal(frame(HEAD "Content-Length: \r\n\r\n", 65535, &f), TCP_FRAME_BAD_LENGTH);
    assert_int_equal(frame(HEAD "Content-Length: -1\r\n\r\n", 65535, &f), TCP_FRAME_BAD_LENGTH);
    assert_int_equal(frame(HEAD "l: 1\r\nContent-Length: 2\r\n\r\nab", 65535, &f),
                     TCP_FRAME_BAD_LENGTH);
    assert_int_equal(frame(HEAD "l: 2\r\nContent-Length: 2\r\n\r\nab", 65535, &f),
                     TCP_FRAME_MSG); /* the same twice: one length */
    /* Longer than max: a body past it, or no end of header within it. */
    assert_int_equal(frame(HEAD "Content-Length: 99999\r\n\r\n", 65535, &f), TCP_FRAME_TOO_LONG);
    assert_int_equal(frame(HEAD "Content-Length: 1\r\n\r\nx", strlen(HEAD) + 10, &f),
                     TCP_FRAME_TOO_LONG);
    assert_int_equal(frame(HEAD "X: aaaaaaaaaaaaaa", strlen(HEAD) + 5, &f), TCP_FRAME_TOO_LONG);
}

static void test_crlf(void **state)
{
    (void)state;
    struct tcp_frame f;
    assert_int_equal(frame("\r\n\r\n", 65535, &f), TCP_FRAME_PING);
    assert_int_equal(f.skip, 4);
    assert_int_equal(frame("\r\n\r", 65535, &f), TCP_FRAME_MORE);
    assert_int_equal(frame("\r\nINVITE", 65535, &f), TCP_FRAME_CRLF);
    assert_int_equal(f.skip, 2);
    assert_int_equal(frame("", 65535, &f), TCP_FRAME_MORE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_lengths),
            cmocka_unit_test(test_errors),
            cmocka_unit_test(test_crlf),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

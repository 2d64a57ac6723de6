/*
 * The UAS's SDP offer/answer (src/sip/sdp.c) against RFC 3264 section 6 and RFC 4566, with the
 * expected answers written out by hand from those rules: as many m= lines as offered, in order;
 * each accepted stream with the first offered format and that format's rtpmap/fmtp lines; a
 * stream offered with port 0 answered with port 0; t= equal to the offer's; inactive, the one
 * direction allowed against any offered direction (6.1). Malformed offers (RFC 4566 5 order and
 * syntax) are told apart for the 488 (RFC 3261 21.4.26); a body that is not SDP for the 415.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <string.h>

#include "osn/err.h"
#include "osn/sip_wire.h"

static const struct osn_sdp_local LOCAL = {{"127.0.0.1", 9}, false, 9, 42};

static struct osn_span S(const char *s) {
    return (struct osn_span){s, strlen(s)};
}

static void
answer_is(const char *offer, const char *want)
{
    char out[2048];
    int n = osn_sdp_print_answer(out, sizeof out, S(offer), &LOCAL);
    assert_true(n > 0);
    out[n] = 0;
    assert_string_equal(out, want);
}

/* An audio stream offering three codecs and a video stream offering two, the second rejected
 * in the offer already: the answer keeps PCMU (the first) with its rtpmap, not PCMA or
 * telephone-event; the video stays at port 0. */
static void test_several_codecs(void **state)
{
    (void)state;
    answer_is("v=0\r\n"
              "o=alice 2890844526 2890844526 IN IP4 host.atlanta.example.com\r\n"
              "s=-\r\n"
              "c=IN IP4 192.0.2.10\r\n"
              "t=3034423619 0\r\n"
              "m=audio 49170 RTP/AVP 0 8 97\r\n"
              "a=rtpmap:0 PCMU/8000\r\n"
              "a=rtpmap:8 PCMA/8000\r\n"
              "a=rtpmap:97 telephone-event/8000\r\n"
              "a=fmtp:97 0-15\r\n"
              "a=sendrecv\r\n"
              "m=video 0 RTP/AVP 31 32\r\n"
              "a=rtpmap:31 H261/90000\r\n",
              "v=0\r\n"
              "o=osn 42 42 IN IP4 127.0.0.1\r\n"
              "s=-\r\n"
              "c=IN IP4 127.0.0.1\r\n"
              "t=3034423619 0\r\n"
              "m=audio 9 RTP/AVP 0\r\n"
              "a=rtpmap:0 PCMU/8000\r\n"
              "a=inactive\r\n"
              "m=video 0 RTP/AVP 31\r\n");
}

/* A dynamic first codec brings its rtpmap and fmtp lines (and only its own: "a=fmtp:1111" is not
 * "a=fmtp:111"); two accepted streams; connection lines per medium; LF line ends accepted. */
static void test_dynamic_codec(void **state)
{
    (void)state;
    answer_is("v=0\n"
              "o=- 1 2 IN IP6 ::1\n"
              "s=call\n"
              "t=0 0\n"
              "m=audio 10000 RTP/AVP 111 0\n"
              "c=IN IP6 ::1\n"
              "a=rtpmap:111 opus/48000/2\n"
              "a=fmtp:1111 x=1\n"
              "a=fmtp:111 stereo=1\n"
              "a=sendonly\n"
              "m=audio 10002/2 RTP/AVP 8\n"
              "c=IN IP6 ::1\n",
              "v=0\r\n"
              "o=osn 42 42 IN IP4 127.0.0.1\r\n"
              "s=-\r\n"
              "c=IN IP4 127.0.0.1\r\n"
              "t=0 0\r\n"
              "m=audio 9 RTP/AVP 111\r\n"
              "a=rtpmap:111 opus/48000/2\r\n"
              "a=fmtp:111 stereo=1\r\n"
              "a=inactive\r\n"
              "m=audio 9 RTP/AVP 8\r\n"
              "a=inactive\r\n");
}

/* No offer (RFC 3261 13.3.1.4): the 2xx carries an offer of ours. */
static void test_no_offer(void **state)
{
    char out[512];
    (void)state;
    assert_int_equal(osn_sdp_offer_check(S(""), S("")), OSN_SDP_NO_OFFER);
    assert_int_equal(osn_sdp_offer_check((struct osn_span){0}, (struct osn_span){0}),
                     OSN_SDP_NO_OFFER);
    int n = osn_sdp_print_answer(out, sizeof out, (struct osn_span){0}, &LOCAL);
    assert_true(n > 0);
    out[n] = 0;
    assert_string_equal(out, "v=0\r\no=osn 42 42 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\n"
                             "t=0 0\r\nm=audio 9 RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\n"
                             "a=inactive\r\n");
}

static const char GOOD[] = "v=0\r\no=a 1 1 IN IP4 1.2.3.4\r\ns=-\r\nc=IN IP4 1.2.3.4\r\n"
                           "t=0 0\r\nm=audio 4000 RTP/AVP 0\r\n";

static void test_checks(void **state)
{
    (void)state;
    assert_int_equal(osn_sdp_offer_check(S("application/sdp"), S(GOOD)), OSN_SDP_OFFER);
    assert_int_equal(osn_sdp_offer_check(S("Application/SDP ;x=1"), S(GOOD)), OSN_SDP_OFFER);
    assert_int_equal(osn_sdp_offer_check(S("text/plain"), S(GOOD)), OSN_SDP_NOT_SDP);
    assert_int_equal(osn_sdp_offer_check((struct osn_span){0}, S(GOOD)), OSN_SDP_NOT_SDP);
    static const char *const bad[] = {
            "hello\r\n",                                                          /* no x= */
            "o=a 1 1 IN IP4 1.2.3.4\r\nv=0\r\ns=-\r\nt=0 0\r\n",                  /* v= not first */
            "v=1\r\no=a 1 1 IN IP4 1.2.3.4\r\ns=-\r\nt=0 0\r\n",                  /* version 1 */
            "v=0\r\ns=-\r\nt=0 0\r\nc=IN IP4 1.2.3.4\r\nm=audio 1 RTP/AVP 0\r\n", /* no o= */
            "v=0\r\no=a 1 IN IP4 1.2.3.4\r\ns=-\r\nt=0 0\r\n",                    /* o= short */
            "v=0\r\no=a 1 1 IN IP4 1.2.3.4\r\ns=-\r\nc=IN IP4 1.2.3.4\r\n"
            "m=audio 1 RTP/AVP 0\r\n", /* no t= */
            "v=0\r\no=a 1 1 IN IP4 1.2.3.4\r\ns=-\r\nc=IN IP4 1.2.3.4\r\nt=0 0\r\n"
            "m=audio 1 RTP/AVP\r\n", /* no format */
            "v=0\r\no=a 1 1 IN IP4 1.2.3.4\r\ns=-\r\nc=IN IP4 1.2.3.4\r\nt=0 0\r\n"
            "m=audio 70000 RTP/AVP 0\r\n", /* port */
            "v=0\r\no=a 1 1 IN IP4 1.2.3.4\r\ns=-\r\nc=IN IP4 1.2.3.4\r\nt=0 0\r\n"
            "m=audio x RTP/AVP 0\r\n",                                                  /* port */
            "v=0\r\no=a 1 1 IN IP4 1.2.3.4\r\ns=-\r\nt=0 0\r\nm=audio 1 RTP/AVP 0\r\n", /* no c= */
            "v=0\r\no=a 1 1 IN IP4 1.2.3.4\r\ns=-\r\nc=IN IP4\r\nt=0 0\r\n"
            "m=audio 1 RTP/AVP 0\r\n", /* c= short */
            "v=0\r\no=a 1 1 IN IP4 1.2.3.4\r\ns=-\r\nc=IN IP4 1.2.3.4\r\nt=0 0\r\n\r\n"
            "m=audio 1 RTP/AVP 0\r\n", /* empty line */
            "v=0\r\no=a 1 1 IN IP4 1.2.3.4\r\ns=-\r\nc=IN IP4 1.2.3.4\r\nt=0 0\r\n"
            "M=audio 1 RTP/AVP 0\r\n", /* type not a lower-case letter */
    };
    char out[512];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(osn_sdp_offer_check(S("application/sdp"), S(bad[i])), OSN_SDP_MALFORMED);
        assert_int_equal(osn_sdp_print_answer(out, sizeof out, S(bad[i]), &LOCAL), OSN_EINVAL);
    }
    /* a rejected stream needs no connection line */
    assert_int_equal(osn_sdp_offer_check(S("application/sdp"),
                                         S("v=0\r\no=a 1 1 IN IP4 1.2.3.4\r\ns=-\r\nt=0 0\r\n"
                                           "m=audio 0 RTP/AVP 0\r\n")),
                     OSN_SDP_OFFER);
    /* too small a buffer: OSN_ETOOBIG, never past it */
    assert_int_equal(osn_sdp_print_answer(out, 20, S(GOOD), &LOCAL), OSN_ETOOBIG);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_several_codecs),
            cmocka_unit_test(test_dynamic_codec),
            cmocka_unit_test(test_no_offer),
            cmocka_unit_test(test_checks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

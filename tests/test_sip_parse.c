/*
 * The SIP message parser, identities and printer (osn/sip_wire.h) against RFC 4475's torture
 * messages, SIPp's own messages (captured from a SIPp 3.6.1 uac/uas call on loopback), and
 * hand-made edge cases: every verdict, the fields of every valid message that matter, the
 * round trip parse(print(x)), the bounds of every number and every cap, and every prefix of
 * every message (which must parse to some verdict without reading past it: this binary runs
 * under ASan in the dev and check builds).
 *
 * RFC 4475 verdict table. "strict" marks an invalid message the RFC lets an element either
 * reject or read liberally, where we reject: our printer copies lines it does not change, so a
 * liberal reading would pass the very defect on, which the RFC forbids to a liberal element
 * ("must not include these extra SP characters in the messages it sends", 3.1.2.9-10).
 *
 *   section   file        verdict     reason           note
 *   3.1.1.1   wsinv       accept                       folds, LWS, compact forms
 *   3.1.1.2   intmeth     accept                       quoted-pair CTLs in To, odd tokens
 *   3.1.1.3   esc01       accept
 *   3.1.1.4   escnull     accept
 *   3.1.1.5   esc02       accept                       "C%6Fntact" is an unknown header
 *   3.1.1.6   lwsdisp     accept
 *   3.1.1.7   longreq     accept                       34 Vias (cap 64)
 *   3.1.1.8   dblreq      accept                       second request ignored (18.3)
 *   3.1.1.9   semiuri     accept
 *   3.1.1.10  transports  accept
 *   3.1.1.11  mpart01     accept
 *   3.1.1.12  unreason    accept
 *   3.1.1.13  noreason    accept
 *   3.1.2.1   badinv01    400         EVIA             ";;" in Via
 *   3.1.2.2   clerr       400         ETRUNCATED       RFC: 400 on UDP
 *   3.1.2.3   ncl         400         ECLEN
 *   3.1.2.4   scalar02    400         ECSEQ            CSeq > 2^32 - 1 (MF 300 also refused)
 *   3.1.2.5   scalarlg    drop        ECSEQ            a response: nothing to answer
 *   3.1.2.6   quotbal     400         EADDR
 *   3.1.2.7   ltgtruri    400         EURI
 *   3.1.2.8   lwsruri     400         EURI
 *   3.1.2.9   lwsstart    400         ESTARTLINE       strict (RFC allows liberal)
 *   3.1.2.10  trws        400         ESTARTLINE       strict (RFC allows liberal)
 *   3.1.2.11  escruri     400         EURI             strict (RFC allows ignoring headers)
 *   3.1.2.12  baddate     accept                       lenient as the RFC allows: Date unread
 *   3.1.2.13  regbadct    400         EADDR            '?' outside <> in Contact
 *   3.1.2.14  badaspec    400         EADDR            strict (RFC allows liberal)
 *   3.1.2.15  baddn       400         EADDR
 *   3.1.2.16  badvers     505         EVERSION
 *   3.1.2.17  mismatch01  400         ECSEQMETHOD
 *   3.1.2.18  mismatch02  400         ECSEQMETHOD
 *   3.1.2.19  bigcode     drop        ESTATUS          a response
 *   3.2.1     badbranch   accept                       branch "z9hG4bK": an RFC 3261 branch
 *   3.3.1     insuf       400         EMISSING         answerable: the Via is there
 *   3.3.2-7   unkscm novelsc unksm2 bext01 invut regaut01: accept (application decides)
 *   3.3.8     multi01     400         EDUP
 *   3.3.9     mcl01       400         EDUP
 *   3.3.10-15 bcast zeromf cparam01 cparam02 regescrt sdp01: accept (application decides;
 *             zeromf: a proxy answers 483, see test_print_483)
 *   3.4.1     inv2543     accept                       m->rfc2543, identity by 17.2.3
 *   -         test.dat    drop        ESTARTLINE       no SIP version, no Via
 *
 * Summary over the 50 files: 28 accepted (the 13 valid messages of 3.1.1, baddate leniently,
 * badbranch, the 12 application tests of 3.3 other than insuf, multi01 and mcl01, and
 * inv2543); 19 answered (18 with 400 and badvers with 505: 15 invalid messages of 3.1.2, insuf,
 * multi01, mcl01, plus badvers); 3 dropped (the malformed responses scalarlg and bigcode, and
 * the unreferenced test.dat). Of the 19 reject verdicts, 4 are strict where the RFC allows a
 * liberal reading (lwsstart, trws, escruri, badaspec) and 1 lenient reading is taken (baddate).
 */
#include <ctype.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "../src/base/text.h"
#include "../src/sip/sip_wire_int.h"
#include "osn/err.h"
#include "osn/sip.h"
#include "osn/sip_wire.h"

#define MAXMSG 70000

static struct osn_sip_wire M, M2, M3;
static char BUF[MAXMSG], OUT[MAXMSG], OUT2[MAXMSG];

/* Reads tests/data/<dir>/<name> into buf; returns its length. */
static size_t load(const char *dir, const char *name, char *buf)
{
    char path[512];
    snprintf(path, sizeof path, "%s/tests/data/%s/%s", OSN_SOURCE_DIR, dir, name);
    FILE *f = fopen(path, "rb");
    if (!f)
        fail_msg("cannot open %s", path);
    size_t n = fread(buf, 1, MAXMSG, f);
    fclose(f);
    return n;
}

static bool is(struct osn_span s, const char *lit)
{
    return s.n == strlen(lit) && memcmp(s.p, lit, s.n) == 0;
}
#define assert_span(s, lit)                                                             \
    do {                                                                                \
        if (!is((s), (lit)))                                                            \
            fail_msg("span \"%.*s\" != \"%s\"", (int)(s).n, (s).p ? (s).p : "", (lit)); \
    } while (0)

struct expect {
    const char *file;
    int verdict, reason, answer;
};

static const struct expect RFC4475[] = {
        {"wsinv.dat", OSN_SIP_WIRE_ACCEPT, 0, 0},
        {"intmeth.dat", OSN_SIP_WIRE_ACCEPT, 0, 0},
        {"esc01.dat", OSN_SIP_WIRE_ACCEPT, 0, 0},
        {"escnull.dat", OSN_SIP_WIRE_ACCEPT, 0, 0},
        {"esc02.dat", OSN_SIP_WIRE_ACCEPT, 0, 0},
        {"lwsdisp.dat", OSN_SIP_WIRE_ACCEPT, 0, 0},
        {"longreq.dat", OSN_SIP_WIRE_ACCEPT, 0, 0},
        {"dblreq.dat", OSN_SIP_WIRE_ACCEPT, 0, 0},
        {"semiuri.dat", OSN_SIP_WIRE_ACCEPT, 0, 0},
        {"transports.dat", OSN_SIP_WIRE_ACCEPT, 0, 0},
        {"mpart01.dat", OSN_SIP_WIRE_ACCEPT, 0, 0},
        {"unreason.dat", OSN_SIP_WIRE_ACCEPT, 0, 0},
        {"noreason.dat", OSN_SIP_WIRE_ACCEPT, 0, 0},
        {"badinv01.dat", OSN_SIP_WIRE_ANSWER, OSN_SIP_WIRE_EVIA, 400},
        {"clerr.dat", OSN_SIP_WIRE_ANSWER, OSN_SIP_WIRE_ETRUNCATED, 400},
        {"ncl.dat", OSN_SIP_WIRE_ANSWER, OSN_SIP_WIRE_ECLEN, 400},
        {"scalar02.dat", OSN_SIP_WIRE_ANSWER, OSN_SIP_WIRE_ECSEQ, 400},
        {"scalarlg.dat", OSN_SIP_WIRE_DROP, OSN_SIP_WIRE_ECSEQ, 0},
        {"quotbal.dat", OSN_SIP_WIRE_ANSWER, OSN_SIP_WIRE_EADDR, 400},
        {"ltgtruri.dat", OSN_SIP_WIRE_ANSWER, OSN_SIP_WIRE_EURI, 400},
        {"lwsruri.dat", OSN_SIP_WIRE_ANSWER, OSN_SIP_WIRE_EURI, 400},
        {"lwsstart.dat", OSN_SIP_WIRE_ANSWER, OSN_SIP_WIRE_ESTARTLINE, 400},
        {"trws.dat", OSN_SIP_WIRE_ANSWER, OSN_SIP_WIRE_ESTARTLINE, 400},
        {"escruri.dat", OSN_SIP_WIRE_ANSWER, OSN_SIP_WIRE_EURI, 400},
        {"baddate.dat", OSN_SIP_WIRE_ACCEPT, 0, 0},
        {"regbadct.dat", OSN_SIP_WIRE_ANSWER, OSN_SIP_WIRE_EADDR, 400},
        {"badaspec.dat", OSN_SIP_WIRE_ANSWER, OSN_SIP_WIRE_EADDR, 400},
        {"baddn.dat", OSN_SIP_WIRE_ANSWER, OSN_SIP_WIRE_EADDR, 400},
        {"badvers.dat", OSN_SIP_WIRE_ANSWER, OSN_SIP_WIRE_EVERSION, 505},
        {"mismatch01.dat", OSN_SIP_WIRE_ANSWER, OSN_SIP_WIRE_ECSEQMETHOD, 400},
        {"mismatch02.dat", OSN_SIP_WIRE_ANSWER, OSN_SIP_WIRE_ECSEQMETHOD, 400},
        {"bigcode.dat", OSN_SIP_WIRE_DROP, OSN_SIP_WIRE_ESTATUS, 0},
        {"badbranch.dat", OSN_SIP_WIRE_ACCEPT, 0, 0},
        {"insuf.dat", OSN_SIP_WIRE_ANSWER, OSN_SIP_WIRE_EMISSING, 400},
        {"unkscm.dat", OSN_SIP_WIRE_ACCEPT, 0, 0},
        {"novelsc.dat", OSN_SIP_WIRE_ACCEPT, 0, 0},
        {"unksm2.dat", OSN_SIP_WIRE_ACCEPT, 0, 0},
        {"bext01.dat", OSN_SIP_WIRE_ACCEPT, 0, 0},
        {"invut.dat", OSN_SIP_WIRE_ACCEPT, 0, 0},
        {"regaut01.dat", OSN_SIP_WIRE_ACCEPT, 0, 0},
        {"multi01.dat", OSN_SIP_WIRE_ANSWER, OSN_SIP_WIRE_EDUP, 400},
        {"mcl01.dat", OSN_SIP_WIRE_ANSWER, OSN_SIP_WIRE_EDUP, 400},
        {"bcast.dat", OSN_SIP_WIRE_ACCEPT, 0, 0},
        {"zeromf.dat", OSN_SIP_WIRE_ACCEPT, 0, 0},
        {"cparam01.dat", OSN_SIP_WIRE_ACCEPT, 0, 0},
        {"cparam02.dat", OSN_SIP_WIRE_ACCEPT, 0, 0},
        {"regescrt.dat", OSN_SIP_WIRE_ACCEPT, 0, 0},
        {"sdp01.dat", OSN_SIP_WIRE_ACCEPT, 0, 0},
        {"inv2543.dat", OSN_SIP_WIRE_ACCEPT, 0, 0},
        {"test.dat", OSN_SIP_WIRE_DROP, OSN_SIP_WIRE_ESTARTLINE, 0},
};
#define N4475 (sizeof RFC4475 / sizeof RFC4475[0])

static const char *const SIPP[] = {"sipp_uac_invite.sip",     "sipp_uas_180.sip",
                                   "sipp_uas_200_invite.sip", "sipp_uac_ack.sip",
                                   "sipp_uac_bye.sip",        "sipp_uas_200_bye.sip"};
#define NSIPP (sizeof SIPP / sizeof SIPP[0])

static int parse_file(const char *dir, const char *name, struct osn_sip_wire *m, char *buf)
{
    size_t n = load(dir, name, buf);
    return osn_sip_wire_parse(m, buf, n);
}

static void test_rfc4475_verdicts(void **state)
{
    (void)state;
    int accepted = 0, answered = 0, dropped = 0;
    for (size_t i = 0; i < N4475; i++) {
        const struct expect *e = &RFC4475[i];
        int v = parse_file("rfc4475", e->file, &M, BUF);
        if (v != e->verdict || M.err.reason != e->reason || M.err.answer != e->answer)
            fail_msg("%s: verdict %d reason %s (%d) answer %d at %u; expected %d %d %d", e->file, v,
                     osn_sip_wire_reason_name(M.err.reason), M.err.reason, M.err.answer,
                     M.err.offset, e->verdict, e->reason, e->answer);
        accepted += v == OSN_SIP_WIRE_ACCEPT;
        answered += v == OSN_SIP_WIRE_ANSWER;
        dropped += v == OSN_SIP_WIRE_DROP;
    }
    assert_int_equal(accepted, 28);
    assert_int_equal(answered, 19);
    assert_int_equal(dropped, 3);
}

/* 3.1.1.1: the example the issue names. */
static void test_wsinv(void **state)
{
    (void)state;
    assert_int_equal(parse_file("rfc4475", "wsinv.dat", &M, BUF), OSN_SIP_WIRE_ACCEPT);
    assert_true(M.is_request);
    assert_int_equal(M.method, OSN_SIP_INVITE);
    assert_span(M.uri, "sip:vivekg@chair-dnrc.example.com;unknownparam");
    assert_int_equal(M.nvia, 3);
    assert_span(M.via[0].protocol, "SIP");
    assert_span(M.via[0].version, "2.0");
    assert_span(M.via[0].transport, "UDP");
    assert_span(M.via[0].host, "192.0.2.2");
    assert_span(M.via[0].branch, "390skdjuw");
    assert_true(M.rfc2543); /* the top branch has no cookie */
    assert_span(M.via[1].transport, "TCP");
    assert_span(M.via[1].host, "spindle.example.com");
    assert_span(M.via[1].branch, "z9hG4bK9ikj8");
    assert_span(M.via[2].host, "192.168.255.111");
    assert_span(M.via[2].branch, "z9hG4bK30239");
    assert_int_equal(M.via[1].hdr, M.via[2].hdr);
    assert_int_equal(M.max_forwards, 68);
    assert_int_equal(M.cseq, 9);
    assert_int_equal(M.cseq_method, OSN_SIP_INVITE);
    assert_int_equal(M.content_length, 150);
    assert_int_equal((int)M.body.n, 150);
    assert_span(M.call_id, "wsinv.ndaksdj@192.0.2.1");
    assert_span(M.to.uri, "sip:vivekg@chair-dnrc.example.com");
    assert_span(M.to.tag, "1918181833n");
    assert_span(M.from.display, "\"J Rosenberg \\\\\\\"\"");
    assert_span(M.from.uri, "sip:jdrosen@example.com");
    assert_span(M.from.tag, "98asjd8");
    assert_span(M.content_type, "application/sdp");
    assert_int_equal(M.nroute, 1);
    assert_true(M.route[0].lr);
    assert_int_equal(M.ncontact, 1);
    assert_span(M.contact[0].display, "\"Quoted string \\\"\\\"\"");
    /* The folded unknown header, kept verbatim with its fold. */
    int found = 0;
    for (int i = 0; i < M.nhdr; i++) {
        if (is(M.hdr[i].name, "NewFangledHeader")) {
            assert_int_equal(M.hdr[i].id, OSN_SIP_HDR_OTHER);
            assert_span(M.hdr[i].value, "newfangled value\r\n continued newfangled value");
            found++;
        }
        if (is(M.hdr[i].name, "UnknownHeaderWithUnusualValue")) {
            assert_span(M.hdr[i].value, ";;,,;;,;");
            found++;
        }
        if (is(M.hdr[i].name, "s")) {
            assert_int_equal(M.hdr[i].id, OSN_SIP_HDR_SUBJECT);
            assert_int_equal((int)M.hdr[i].value.n, 0);
            found++;
        }
    }
    assert_int_equal(found, 3);
    assert_int_equal(M.nhdr, 14);
}

static void test_rfc4475_valid_fields(void **state)
{
    (void)state;
    assert_int_equal(parse_file("rfc4475", "intmeth.dat", &M, BUF), 0);
    assert_int_equal(M.method, OSN_SIP_OTHER);
    assert_span(M.method_name, "!interesting-Method0123456789_*+`.%indeed'~");
    assert_span(M.cseq_method_name, "!interesting-Method0123456789_*+`.%indeed'~");
    assert_span(M.via[0].branch, "z9hG4bK-.!%66*_+`'~");
    assert_span(M.from.tag, "_token~1'+`*%!-.");
    assert_span(M.from.display, "token1~` token2'+_ token3*%!.-");
    assert_span(M.call_id, "intmeth.word%ZK-!.*_+'@word`~)(><:\\/\"][?}{");
    assert_int_equal(M.max_forwards, 255);
    assert_int_equal(M.cseq, 139122385);

    assert_int_equal(parse_file("rfc4475", "esc02.dat", &M, BUF), 0);
    assert_span(M.method_name, "RE%47IST%45R");
    assert_int_equal(M.ncontact, 2); /* C%6Fntact is another header */

    assert_int_equal(parse_file("rfc4475", "lwsdisp.dat", &M, BUF), 0);
    assert_span(M.from.display, "caller");
    assert_span(M.from.tag, "323");

    assert_int_equal(parse_file("rfc4475", "longreq.dat", &M, BUF), 0);
    assert_int_equal(M.nvia, 34);
    assert_span(M.via[0].host, "sip33.example.com");
    assert_span(M.via[33].received, "192.0.2.5");
    assert_true(M.via[33].branch.n > 200);
    assert_true(M.to.display.n > 80);
    assert_true(M.from.tag.n > 100);

    size_t n = load("rfc4475", "dblreq.dat", BUF);
    assert_int_equal(osn_sip_wire_parse(&M, BUF, n), 0);
    assert_int_equal(M.method, OSN_SIP_REGISTER);
    assert_int_equal((int)M.body.n, 0);
    assert_true(M.msg.n < n); /* the INVITE after it is ignored */

    assert_int_equal(parse_file("rfc4475", "semiuri.dat", &M, BUF), 0);
    assert_span(M.uri, "sip:user;par=u%40example.net@example.com");

    assert_int_equal(parse_file("rfc4475", "transports.dat", &M, BUF), 0);
    const char *tp[] = {"UDP", "SCTP", "TLS", "UNKNOWN", "TCP"};
    assert_int_equal(M.nvia, 5);
    for (int i = 0; i < 5; i++)
        assert_span(M.via[i].transport, tp[i]);

    assert_int_equal(parse_file("rfc4475", "mpart01.dat", &M, BUF), 0);
    assert_int_equal((int)M.body.n, M.content_length);

    assert_int_equal(parse_file("rfc4475", "unreason.dat", &M, BUF), 0);
    assert_false(M.is_request);
    assert_int_equal(M.status, 200);
    assert_int_equal(M.method, OSN_SIP_INVITE);
    assert_true(M.reason_phrase.n > 20);

    assert_int_equal(parse_file("rfc4475", "noreason.dat", &M, BUF), 0);
    assert_int_equal(M.status, 100);
    assert_int_equal((int)M.reason_phrase.n, 0);

    assert_int_equal(parse_file("rfc4475", "badbranch.dat", &M, BUF), 0);
    assert_span(M.via[0].branch, "z9hG4bK");
    assert_false(M.rfc2543);

    assert_int_equal(parse_file("rfc4475", "bext01.dat", &M, BUF), 0);
    assert_int_equal(M.nrequire, 2);
    assert_span(M.require[1], "nothingSupportsThisEither");
    assert_int_equal(M.nproxy_require, 2);
    assert_span(M.proxy_require[0], "noProxiesSupportThis");

    assert_int_equal(parse_file("rfc4475", "zeromf.dat", &M, BUF), 0);
    assert_int_equal(M.max_forwards, 0);

    assert_int_equal(parse_file("rfc4475", "inv2543.dat", &M, BUF), 0);
    assert_true(M.rfc2543);
    assert_int_equal(M.max_forwards, -1);
    assert_int_equal(M.content_length, -1);
    assert_true(M.body.n > 0);
    assert_int_equal(M.nrecord_route, 1);
    assert_int_equal((int)M.from.tag.n, 0);

    assert_int_equal(parse_file("rfc4475", "regescrt.dat", &M, BUF), 0);
    assert_int_equal(M.ncontact, 1);
    assert_int_equal(M.content_length, 0);

    assert_int_equal(parse_file("rfc4475", "bcast.dat", &M, BUF), 0);
    assert_span(M.via[1].host, "255.255.255.255");
}

static void test_sipp_messages(void **state)
{
    (void)state;
    for (size_t i = 0; i < NSIPP; i++) {
        int v = parse_file("sipp", SIPP[i], &M, BUF);
        if (v)
            fail_msg("%s: %s", SIPP[i], osn_sip_wire_reason_name(M.err.reason));
        assert_span(M.call_id, "1-11044@127.0.0.1");
        assert_span(M.from.tag, "11044SIPpTag001");
        assert_span(M.via[0].host, "127.0.0.1");
        assert_int_equal(M.via[0].port, 5061);
        assert_false(M.rfc2543);
    }
    assert_int_equal(parse_file("sipp", "sipp_uac_invite.sip", &M, BUF), 0);
    assert_span(M.via[0].branch, "z9hG4bK-11044-1-0");
    assert_int_equal(M.content_length, 130);
    assert_int_equal((int)M.body.n, 130);
    assert_int_equal(M.max_forwards, 70);
    assert_int_equal(M.cseq, 1);
    assert_int_equal((int)M.to.tag.n, 0);
    assert_span(M.contact[0].uri, "sip:sipp@127.0.0.1:5061");
    assert_int_equal(parse_file("sipp", "sipp_uas_180.sip", &M, BUF), 0);
    assert_int_equal(M.status, 180);
    assert_span(M.to.tag, "11010SIPpTag011");
    assert_int_equal(parse_file("sipp", "sipp_uac_bye.sip", &M, BUF), 0);
    assert_int_equal(M.method, OSN_SIP_BYE);
    assert_int_equal(M.cseq, 2);
}

static int parse_str(const char *s);

/* Every Via parameter the view names, RFC 7339's four, an IPv6 sent-by, Retry-After's parts,
 * Route lists with lr, Contact lists and Contact: *. */
static void test_via_and_friends(void **state)
{
    (void)state;
    assert_int_equal(
            parse_str("INVITE sip:u@example.com SIP/2.0\r\n"
                      "Via: SIP/2.0/UDP p1.example.net;branch=z9hG4bK2d4790.1;oc;"
                      "oc-algo=\"loss,A\"\r\n"
                      "Via: SIP / 2.0 / TCP [2001:db8::1] : 5070 ;branch=z9hG4bKa;rport=5070;"
                      "received=192.0.2.1;maddr=239.1.1.1;ttl=16, SIP/2.0/UDP h2;rport\r\n"
                      "Route: <sip:p1.example.net;lr>, \"n\" <sip:p2.example.net;transport=udp>\r\n"
                      "Record-Route: <sip:p0.example.net;lr=on>\r\n"
                      "From: \"A\" <sip:a@example.com>;tag=f1\r\nTo: <sip:u@example.com>\r\n"
                      "Call-ID: oc1@example.com\r\nCSeq: 1 INVITE\r\nMax-Forwards: 70\r\n"
                      "Contact: <sip:a@192.0.2.1>;expires=60, sip:b@192.0.2.2;q=0.5\r\n"
                      "Retry-After: 18000 (in (five) hours) ;duration=3600\r\n"
                      "Content-Length: 0\r\n\r\n"),
            OSN_SIP_WIRE_ACCEPT);
    assert_int_equal(M.nvia, 3);
    assert_int_equal(M.via[0].oc.flags, OSN_SIP_OC_PRESENT | OSN_SIP_OC_ALGO);
    assert_int_equal(M.via[0].oc.algo, OSN_SIP_ALGO_LOSS);
    assert_span(M.via[0].oc_algo, "loss,A");
    assert_span(M.via[1].transport, "TCP");
    assert_span(M.via[1].host, "[2001:db8::1]");
    assert_int_equal(M.via[1].port, 5070);
    assert_true(M.via[1].rport);
    assert_span(M.via[1].rport_value, "5070");
    assert_span(M.via[1].received, "192.0.2.1");
    assert_span(M.via[1].maddr, "239.1.1.1");
    assert_int_equal(M.via[1].ttl, 16);
    assert_int_equal(M.via[1].hdr, M.via[2].hdr);
    assert_true(M.via[2].rport);
    assert_int_equal((int)M.via[2].rport_value.n, 0);
    assert_int_equal(M.via[2].ttl, -1);
    assert_int_equal(M.nroute, 2);
    assert_true(M.route[0].lr);
    assert_false(M.route[1].lr);
    assert_span(M.route[1].display, "\"n\"");
    assert_int_equal(M.nrecord_route, 1);
    assert_true(M.record_route[0].lr);
    assert_int_equal(M.ncontact, 2);
    assert_span(M.contact[1].uri, "sip:b@192.0.2.2");
    assert_span(M.contact[1].params, ";q=0.5");
    assert_true(M.retry_after.present);
    assert_int_equal(M.retry_after.seconds, 18000);
    assert_span(M.retry_after.comment, "in (five) hours");
    assert_int_equal(M.retry_after.duration, 3600);

    /* The server's side of RFC 7339 (6, example of an overloaded server). */
    assert_int_equal(parse_str("SIP/2.0 503 Service Unavailable\r\n"
                               "Via: SIP/2.0/TLS p1.example.net;branch=z9hG4bK2d4790.1;oc=20;"
                               "oc-algo=\"loss\";oc-validity=500;oc-seq=1282321615.782\r\n"
                               "From: <sip:a@x>;tag=1\r\nTo: <sip:b@x>;tag=2\r\nCall-ID: c\r\n"
                               "CSeq: 1 INVITE\r\nRetry-After: 5\r\n\r\n"),
                     OSN_SIP_WIRE_ACCEPT);
    struct osn_sip_msg num;
    assert_int_equal(osn_sip_wire_to_txn(&M, &num), 0);
    assert_int_equal(num.oc.flags, OSN_SIP_OC_PRESENT | OSN_SIP_OC_VALUE | OSN_SIP_OC_VALIDITY |
                                           OSN_SIP_OC_SEQ | OSN_SIP_OC_ALGO);
    assert_int_equal(num.oc.value, 20);
    assert_int_equal(num.oc.validity_ms, 500);
    assert_true(num.oc.seq_int == 1282321615u);
    assert_int_equal(num.oc.seq_frac, 78200); /* ".782" orders as .78200 */
    assert_int_equal(num.retry_after, 5);
    assert_int_equal(num.method, OSN_SIP_INVITE);
    assert_int_equal(num.status, 503);

    /* Contact: * (REGISTER). */
    assert_int_equal(parse_str("REGISTER sip:x SIP/2.0\r\nVia: SIP/2.0/UDP h;branch=z9hG4bK1\r\n"
                               "From: <sip:a@x>;tag=1\r\nTo: <sip:a@x>\r\nCall-ID: c\r\n"
                               "CSeq: 1 REGISTER\r\nContact: *\r\nExpires: 0\r\n\r\n"),
                     OSN_SIP_WIRE_ACCEPT);
    assert_true(M.contact_star);
    assert_int_equal(M.ncontact, 0);
    /* Case-insensitive names, bare LF lines, CRLFs before the start line (RFC 3261 7.5). */
    assert_int_equal(parse_str("\r\n\r\nOPTIONS sip:x SIP/2.0\nvIA: SIP/2.0/UDP h;branch=z9hG4bK1\n"
                               "FROM: <sip:a@x>;TAG=1\nto: <sip:a@x>\nI: c\nCSEQ: 1 OPTIONS\n\n"),
                     OSN_SIP_WIRE_ACCEPT);
    assert_span(M.from.tag, "1");
    assert_span(M.call_id, "c");
}

/* ---- hostile input ---- */

/* Every prefix of every message: some verdict, no read past the prefix (ASan), and a prefix
 * that ends inside the head is never accepted. */
/* Keywords in any case (RFC 3261 7.3.1, 25: header names, parameter names and the version are
 * case-insensitive), header names short and long (under and over 16 bytes a line, the two ways
 * msg.c finds a name's end), and a name with a non-token byte where a known one would be. */
static void test_keyword_case(void **state)
{
    (void)state;
    assert_int_equal(parse_str("INVITE sip:u@example.com sIp/2.0\r\n"
                               "VIA: sip/2.0/udp h1;BRANCH=z9hG4bKA;MADDR=239.1.1.1;TTL=3;RPORT;"
                               "Received=192.0.2.9\r\n"
                               "fROM: <sip:a@example.com>;TAG=f1\r\n"
                               "t: <sip:u@example.com>;Tag=t1\r\n"
                               "cALL-id \t: c1@example.com\r\n"
                               "CSEQ: 1 INVITE\r\nmAX-fORWARDS:70\r\nX-Zed: 1\r\n"
                               "CONTENT-length: 0\r\n\r\n"),
                     OSN_SIP_WIRE_ACCEPT);
    assert_int_equal(M.nvia, 1);
    assert_span(M.via[0].branch, "z9hG4bKA");
    assert_span(M.via[0].maddr, "239.1.1.1");
    assert_int_equal(M.via[0].ttl, 3);
    assert_true(M.via[0].rport);
    assert_span(M.via[0].received, "192.0.2.9");
    assert_false(M.rfc2543);
    assert_span(M.from.tag, "f1");
    assert_span(M.to.tag, "t1");
    assert_span(M.call_id, "c1@example.com");
    assert_int_equal(M.hdr[M.call_id_hdr].id, OSN_SIP_HDR_CALL_ID);
    assert_span(M.hdr[M.call_id_hdr].name, "cALL-id");
    assert_int_equal(M.max_forwards, 70);
    assert_int_equal(M.content_length, 0);
    assert_int_equal(M.hdr[6].id, OSN_SIP_HDR_OTHER);
    assert_span(M.hdr[6].name, "X-Zed");

    /* "Call-I@" is no name: the error is at the '@', the line is skipped. */
    const char *bad = "INVITE sip:u@example.com SIP/2.0\r\nVia: SIP/2.0/UDP h1;branch=z9hG4bKA\r\n"
                      "From: <sip:a@example.com>;tag=f1\r\nTo: <sip:u@example.com>\r\n"
                      "Call-I@: c1@example.com\r\nCall-ID: c1@example.com\r\nCSeq: 1 INVITE\r\n"
                      "Content-Length: 0\r\n\r\n";
    assert_int_equal(parse_str(bad), OSN_SIP_WIRE_ANSWER);
    assert_int_equal(M.err.reason, OSN_SIP_WIRE_EHDRNAME);
    assert_int_equal(M.err.offset, (uint32_t)(strstr(bad, "@:") - bad));
    assert_int_equal(M.nhdr, 6);
}

static void test_prefixes(void **state)
{
    (void)state;
    for (size_t i = 0; i < N4475 + NSIPP; i++) {
        size_t n = i < N4475 ? load("rfc4475", RFC4475[i].file, BUF)
                             : load("sipp", SIPP[i - N4475], BUF);
        for (size_t k = 0; k <= n; k++) {
            char *copy = malloc(k ? k : 1);
            memcpy(copy, BUF, k);
            int v = osn_sip_wire_parse(&M, copy, k);
            assert_true(v >= 0 && v <= OSN_SIP_WIRE_DROP);
            if (v == OSN_SIP_WIRE_ACCEPT)
                assert_true(M.head.p + M.head.n <= copy + k);
            free(copy);
        }
    }
}

static int parse_str(const char *s)
{
    size_t n = strlen(s);
    memcpy(BUF, s, n);
    return osn_sip_wire_parse(&M, BUF, n);
}

#define REQ_HEAD                                              \
    "OPTIONS sip:a@example.com SIP/2.0\r\n"                   \
    "Via: SIP/2.0/UDP h.example.com:5060;branch=z9hG4bKx\r\n" \
    "From: <sip:b@example.com>;tag=1\r\n"                     \
    "To: <sip:a@example.com>\r\n"                             \
    "Call-ID: c1\r\n"
/* REQ_HEAD without its To line. */
#define REQ_HEAD_NOTO                                         \
    "OPTIONS sip:a@example.com SIP/2.0\r\n"                   \
    "Via: SIP/2.0/UDP h.example.com:5060;branch=z9hG4bKx\r\n" \
    "From: <sip:b@example.com>;tag=0;tag=1\r\n"               \
    "Call-ID: c1\r\n"

static void test_bounds(void **state)
{
    (void)state;
    char msg[4096];
    struct {
        const char *extra;
        size_t len;
        int reason;
    } cases[] = {
#define C(s, r) {s, sizeof(s) - 1, r}
            C("CSeq: 4294967295 OPTIONS\r\n", 0),
            C("CSeq: 4294967296 OPTIONS\r\n", OSN_SIP_WIRE_ECSEQ),
            C("CSeq: 99999999999999999999999 OPTIONS\r\n", OSN_SIP_WIRE_ECSEQ),
            C("CSeq: 1 OPTIONS\r\nMax-Forwards: 255\r\n", 0),
            C("CSeq: 1 OPTIONS\r\nMax-Forwards: 256\r\n", OSN_SIP_WIRE_EMAXFWD),
            C("CSeq: 1 OPTIONS\r\nMax-Forwards: -1\r\n", OSN_SIP_WIRE_EMAXFWD),
            C("CSeq: 1 OPTIONS\r\nContent-Length: 2147483648\r\n", OSN_SIP_WIRE_ECLEN),
            C("CSeq: 1 OPTIONS\r\nContent-Length: 1\r\n", OSN_SIP_WIRE_ETRUNCATED),
            C("CSeq: 1 OPTIONS\r\nRetry-After: 4294967295 (x (nested) y);duration=5\r\n", 0),
            C("CSeq: 1 OPTIONS\r\nRetry-After: 4294967296\r\n", OSN_SIP_WIRE_ERETRYAFTER),
            C("CSeq: 1 OPTIONS\r\nRetry-After: 5 (unclosed\r\n", OSN_SIP_WIRE_ERETRYAFTER),
            C("CSeq: 1 OPTIONS\r\nVia: SIP/2.0/UDP h:65535\r\n", 0),
            C("CSeq: 1 OPTIONS\r\nVia: SIP/2.0/UDP h:65536\r\n", OSN_SIP_WIRE_EVIA),
            C("CSeq: 1 OPTIONS\r\nVia: SIP/2.0/UDP h;ttl=256\r\n", OSN_SIP_WIRE_EVIA),
            C("CSeq: 1 OPTIONS\r\nVia: SIP/2.0/UDP h;oc-seq=1234567890123.1\r\n",
              OSN_SIP_WIRE_EVIA),
            C("CSeq: 1 OPTIONS\r\nVia: SIP/2.0/UDP h;oc=4294967296\r\n", OSN_SIP_WIRE_EVIA),
            C("CSeq: 1 OPTIONS\r\nRequire: a, , b\r\n", OSN_SIP_WIRE_EOPTION),
            C("CSeq: 1 OPTIONS\r\nX\0Y: z\r\n", OSN_SIP_WIRE_ECHAR),
            C("CSeq: 1 OPTIONS\r\nNoColon\r\n", OSN_SIP_WIRE_EHDRNAME),
            C("CSeq: 1 OPTIONS\r\nX: a\rb\r\n", OSN_SIP_WIRE_ECHAR),
            /* a quoted-pair escapes a control character (4475 3.1.1.2), never a bare CR */
            C("CSeq: 1 OPTIONS\r\nX: \"a\\\x01"
              "b\\\x7f\"\r\n",
              0),
            C("CSeq: 1 OPTIONS\r\nX: \"a\\\rb\"\r\n", OSN_SIP_WIRE_ECHAR),
            C("CSeq: 1 OPTIONS\r\nX: a\x01"
              "b\r\n",
              OSN_SIP_WIRE_ECHAR),
            C("CSeq: 1 OPTIONS\r\nCall-ID: c2\r\n", OSN_SIP_WIRE_EDUP),
            C("CSeq: 1 INVITE\r\n", OSN_SIP_WIRE_ECSEQMETHOD),
#undef C
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t hl = strlen(REQ_HEAD), el = cases[i].len;
        memcpy(msg, REQ_HEAD, hl);
        memcpy(msg + hl, cases[i].extra, el);
        memcpy(msg + hl + el, "\r\n", 2);
        int v = osn_sip_wire_parse(&M, msg, hl + el + 2);
        if (M.err.reason != cases[i].reason)
            fail_msg("case %zu: reason %s, expected %s", i, osn_sip_wire_reason_name(M.err.reason),
                     osn_sip_wire_reason_name(cases[i].reason));
        assert_int_equal(v, cases[i].reason ? OSN_SIP_WIRE_ANSWER : OSN_SIP_WIRE_ACCEPT);
    }
    assert_int_equal(M.err.answer, 400);
    /* Responses are never answered. */
    assert_int_equal(parse_str("SIP/2.0 200 OK\r\nVia: SIP/2.0/UDP h\r\nCSeq: x\r\n\r\n"),
                     OSN_SIP_WIRE_DROP);
    assert_int_equal(parse_str("SIP/2.0 099 Low\r\n\r\n"), OSN_SIP_WIRE_DROP);
    assert_int_equal(M.err.reason, OSN_SIP_WIRE_ESTATUS);
    assert_int_equal(parse_str("SIP/2.0 700 High\r\n\r\n"), OSN_SIP_WIRE_DROP);
    /* Nothing to route an answer by: dropped. */
    assert_int_equal(parse_str("OPTIONS sip:a@b SIP/2.0\r\nCSeq: 1 OPTIONS\r\n\r\n"),
                     OSN_SIP_WIRE_DROP);
    assert_int_equal(parse_str("\r\n\r\n"), OSN_SIP_WIRE_DROP);
    assert_int_equal(osn_sip_wire_parse(&M, BUF, 0), OSN_SIP_WIRE_DROP);
    assert_int_equal(M.err.reason, OSN_SIP_WIRE_ETOOLONG);
    assert_int_equal(osn_sip_wire_parse(&M, BUF, OSN_SIP_WIRE_MAX_LEN + 1), OSN_SIP_WIRE_DROP);
    assert_int_equal(osn_sip_wire_parse(NULL, BUF, 1), OSN_EINVAL);
    assert_int_equal(osn_sip_wire_parse(&M, NULL, 1), OSN_EINVAL);
    /* A malformed ACK is never answered (RFC 3261 17). */
    assert_int_equal(parse_str("ACK sip:a@b SIP/2.0\r\nVia: SIP/2.0/UDP h;branch=z9hG4bK1\r\n"
                               "CSeq: 1 INVITE\r\n\r\n"),
                     OSN_SIP_WIRE_DROP);
}

/* The scans that take several bytes a step (has_ws's sixteen, skip_cc's four) against the
 * grammar byte by byte: for every length up to 40 and every position, one bad byte in a Call-ID
 * (RFC 3261 25.1 callid: no LWS, no non-ASCII), in a branch (a token: '@' ends it, and the rest
 * is junk) and in a sent-by host ('!' is no host character) must be found exactly there. */
static void test_scan_positions(void **state)
{
    (void)state;
    static const char bad_id[] = {' ', '\t', (char)0xc3};
    char msg[1024], word[48];
    for (int len = 1; len <= 40; len++) {
        for (int j = 0; j <= len; j++) {
            for (int b = 0; b < 3; b++) {
                for (int i = 0; i < len; i++)
                    word[i] = (char)('a' + (i * 7 + len) % 26);
                if (j < len)
                    word[j] = bad_id[b];
                /* The value as the grammar reads it: LWS around it is not part of it. */
                int lo = 0, hi = len;
                while (lo < hi && (word[lo] == ' ' || word[lo] == '\t'))
                    lo++;
                while (hi > lo && (word[hi - 1] == ' ' || word[hi - 1] == '\t'))
                    hi--;
                bool bad = lo == hi;
                for (int i = lo; i < hi; i++)
                    bad |= (unsigned char)word[i] <= 0x20 || (unsigned char)word[i] >= 0x7f;
                int n = snprintf(msg, sizeof msg,
                                 "OPTIONS sip:a@example.com SIP/2.0\r\n"
                                 "Via: SIP/2.0/UDP h.example.com;branch=z9hG4bKx\r\n"
                                 "From: <sip:b@example.com>;tag=1\r\nTo: <sip:a@example.com>\r\n"
                                 "Call-ID: %.*s\r\nCSeq: 1 OPTIONS\r\n\r\n",
                                 len, word);
                osn_sip_wire_parse(&M, msg, (size_t)n);
                if ((M.err.reason == OSN_SIP_WIRE_ECALLID) != bad)
                    fail_msg("Call-ID of %d bytes, byte %d = %#x: reason %s", len, j,
                             (unsigned char)bad_id[b], osn_sip_wire_reason_name(M.err.reason));
            }
            for (int i = 0; i < len; i++)
                word[i] = "0123456789abcdef"[(i * 5 + len) % 16];
            if (j < len)
                word[j] = '@';
            int n = snprintf(msg, sizeof msg,
                             "OPTIONS sip:a@example.com SIP/2.0\r\n"
                             "Via: SIP/2.0/UDP h.example.com;branch=%.*s\r\n"
                             "From: <sip:b@example.com>;tag=1\r\nTo: <sip:a@example.com>\r\n"
                             "Call-ID: c1\r\nCSeq: 1 OPTIONS\r\n\r\n",
                             len, word);
            osn_sip_wire_parse(&M, msg, (size_t)n);
            if (j < len) {
                assert_int_equal(M.err.reason, OSN_SIP_WIRE_EVIA);
            } else {
                assert_int_equal(M.err.reason, OSN_SIP_WIRE_OK);
                assert_int_equal(M.via[0].branch.n, (size_t)len);
            }
            for (int i = 0; i < len; i++)
                word[i] = "ab-c.d9"[(i + len) % 7];
            if (j < len)
                word[j] = '!';
            n = snprintf(msg, sizeof msg,
                         "OPTIONS sip:a@example.com SIP/2.0\r\n"
                         "Via: SIP/2.0/UDP %.*s:5060;branch=z9hG4bKx\r\n"
                         "From: <sip:b@example.com>;tag=1\r\nTo: <sip:a@example.com>\r\n"
                         "Call-ID: c1\r\nCSeq: 1 OPTIONS\r\n\r\n",
                         len, word);
            osn_sip_wire_parse(&M, msg, (size_t)n);
            if (j < len) {
                assert_int_equal(M.err.reason, OSN_SIP_WIRE_EVIA);
                assert_int_equal(M.via[0].host.n, (size_t)j);
            } else {
                assert_int_equal(M.err.reason, OSN_SIP_WIRE_OK);
                assert_int_equal(M.via[0].host.n, (size_t)len);
                assert_int_equal(M.via[0].port, 5060);
            }
        }
    }
}

/* The parser's scanners of long runs against the grammar's own sets, every byte at every place
 * of runs up to 40 bytes, the run ending anywhere before the buffer's end: skip_token_long
 * (RFC 3261 25.1 token: alphanum and "-.!%*_+`'~") stops where a byte loop over that set stops;
 * the line scan (msg.c's skip_plain, sixteen bytes a step) finds every control character but
 * HTAB in a header value (the message is malformed there) and passes every other byte. */
static void test_long_scans(void **state)
{
    (void)state;
    const char *marks = "-.!%*_+`'~";
    char buf[64], msg[256];
    for (int b = 0; b < 256; b++) {
        for (int at = 0; at < 40 && b != '\r' && b != '\n'; at++) {
            size_t hl = strlen(REQ_HEAD "CSeq: 1 OPTIONS\r\nX: ");
            memcpy(msg, REQ_HEAD "CSeq: 1 OPTIONS\r\nX: ", hl);
            memset(msg + hl, 'v', 40);
            msg[hl + (size_t)at] = (char)b;
            memcpy(msg + hl + 40, "\r\n\r\n", 4);
            int v = osn_sip_wire_parse(&M, msg, hl + 44);
            bool ctl = (b < 0x20 && b != '\t') || b == 0x7f;
            if (ctl ? M.err.reason != OSN_SIP_WIRE_ECHAR || M.err.offset != hl + (size_t)at
                    : v != OSN_SIP_WIRE_ACCEPT)
                fail_msg("byte %#x at %d of a header value: %s at %u", b, at,
                         osn_sip_wire_reason_name(M.err.reason), M.err.offset);
        }
        bool token = (b >= '0' && b <= '9') || ((b | 0x20) >= 'a' && (b | 0x20) <= 'z') ||
                     (b && strchr(marks, b));
        for (int len = 1; len <= 2 * 40; len++) {
            for (int at = 0; at < len % 41; at++) {
                /* letters, digits and every mark; then only the bytes taken 16 at a time */
                for (int i = 0; i < len % 41; i++)
                    buf[i] = len <= 40 ? "a0Z9-._!%*+`'~"[(i * 5 + len) % 14]
                                       : "a0Z9-._xQ"[(i * 5 + len) % 9];
                buf[at] = (char)b;
                for (int tail = 0; tail < 2; tail++) {
                    int run = len % 41;
                    int n = tail ? run : (int)sizeof buf; /* the run ends the span, or ';' does */
                    if (!tail)
                        memset(buf + run, ';', sizeof buf - (size_t)run);
                    /* the first byte that is not a token byte: `at` unless b is one, else the
                     * run's end (the span's, or the ';' after it) */
                    const char *want = buf + (token ? run : at);
                    const char *got = skip_token_long(buf, buf + n);
                    if (got != want)
                        fail_msg("byte %#x at %d of %d (%s): stopped at %d, not %d", b, at,
                                 len % 41, tail ? "span end" : "';' after", (int)(got - buf),
                                 (int)(want - buf));
                }
            }
        }
    }
}

static void test_caps(void **state)
{
    (void)state;
    static char msg[MAXMSG];
    size_t n = (size_t)snprintf(msg, sizeof msg, "%sCSeq: 1 OPTIONS\r\n", REQ_HEAD);
    for (int i = 0; i < OSN_SIP_WIRE_MAX_HDRS; i++)
        n += (size_t)snprintf(msg + n, sizeof msg - n, "X-%d: y\r\n", i);
    n += (size_t)snprintf(msg + n, sizeof msg - n, "\r\n");
    assert_int_equal(osn_sip_wire_parse(&M, msg, n), OSN_SIP_WIRE_ANSWER);
    assert_int_equal(M.err.reason, OSN_SIP_WIRE_ECAP);
    assert_int_equal(M.nhdr, OSN_SIP_WIRE_MAX_HDRS);

    n = (size_t)snprintf(msg, sizeof msg, "%sCSeq: 1 OPTIONS\r\nVia: ", REQ_HEAD);
    for (int i = 0; i < OSN_SIP_WIRE_MAX_VIAS; i++)
        n += (size_t)snprintf(msg + n, sizeof msg - n, "SIP/2.0/UDP h%d,", i);
    n += (size_t)snprintf(msg + n, sizeof msg - n, "SIP/2.0/UDP last\r\n\r\n");
    assert_int_equal(osn_sip_wire_parse(&M, msg, n), OSN_SIP_WIRE_ANSWER);
    assert_int_equal(M.err.reason, OSN_SIP_WIRE_ECAP);
    assert_int_equal(M.nvia, OSN_SIP_WIRE_MAX_VIAS);

    n = (size_t)snprintf(msg, sizeof msg, "%sCSeq: 1 OPTIONS\r\nRoute: ", REQ_HEAD);
    for (int i = 0; i <= OSN_SIP_WIRE_MAX_ROUTES; i++)
        n += (size_t)snprintf(msg + n, sizeof msg - n, "%s<sip:r%d;lr>", i ? "," : "", i);
    n += (size_t)snprintf(msg + n, sizeof msg - n, "\r\n\r\n");
    assert_int_equal(osn_sip_wire_parse(&M, msg, n), OSN_SIP_WIRE_ANSWER);
    assert_int_equal(M.err.reason, OSN_SIP_WIRE_ECAP);

    /* Deep comment nesting: a counter, no recursion. */
    n = (size_t)snprintf(msg, sizeof msg, "%sCSeq: 1 OPTIONS\r\nRetry-After: 5 ", REQ_HEAD);
    for (int i = 0; i < 20000; i++)
        msg[n++] = '(';
    for (int i = 0; i < 20000; i++)
        msg[n++] = ')';
    n += (size_t)snprintf(msg + n, sizeof msg - n, "\r\n\r\n");
    assert_int_equal(osn_sip_wire_parse(&M, msg, n), OSN_SIP_WIRE_ACCEPT);
    assert_int_equal(M.retry_after.comment.n, 39998);
}

/* ---- identities ---- */

static void test_siphash_vector(void **state)
{
    (void)state;
    /* SipHash-1-3 of the reference implementation (cROUNDS 1, dROUNDS 3) under the zero key, of
     * the message 00 01 02 .. of n bytes, as published beside OCaml's runtime test of its own
     * SipHash-1-3 string hash: every tail length, one block and a half, two blocks. */
    static const uint64_t want[] = {
            0xd1fba762150c532cu, 0x68a914128e01e473u, 0x010bac45c41e3669u, 0x4d4c9a4a8ef6e0adu,
            0x7cc43f98813e4dbdu, 0x5abe2169dff36275u, 0xe3c25f87624f1cdbu, 0x2f098ab0c751325au,
            0xead411e67ebe2eeau, 0x75927f9d95124362u, 0xaf9f77a65ab51a1du, 0xfe64ce8b6617fcffu,
            0xa6baf4fb0f9fe1c2u, 0xa0cf3211850f8e0du, 0x7f86049379fbfe67u, 0xf30eb725bb91c9eau,
            0x8972188433a5c5b7u, 0x4883c49a2c009c1du, 0xadc2c0b63044067du};
    uint8_t key[16] = {0}, in[19];
    for (int i = 0; i < 19; i++)
        in[i] = (uint8_t)i;
    osn_sip_wire_key_set(key);
    for (size_t n = 0; n < sizeof want / sizeof want[0]; n++)
        if (osn_sip_wire_hash(in, n) != want[n])
            fail_msg("SipHash-1-3 of %zu bytes: %016llx, want %016llx", n,
                     (unsigned long long)osn_sip_wire_hash(in, n), (unsigned long long)want[n]);
    assert_int_equal(osn_sip_wire_key_init(), 0);
}

static void test_identities(void **state)
{
    (void)state;
    struct osn_sip_msg a, b;
    assert_int_equal(parse_file("sipp", "sipp_uac_invite.sip", &M, BUF), 0);
    assert_int_equal(osn_sip_wire_to_txn(&M, &a), 0);
    assert_int_equal(a.method, OSN_SIP_INVITE);
    assert_int_equal(a.status, 0);
    assert_int_equal(a.cseq, 1);
    assert_int_equal(a.retry_after, -1);
    assert_true(a.branch && a.call_id && a.sent_by && a.from_tag);
    assert_true(a.to_tag == 0);
    assert_true(a.branch == osn_sip_wire_hash("z9hG4bK-11044-1-0", 17));
    /* The 180 answers it: same branch; a To tag now; its Call-ID and From tag, the INVITE's,
     * are not hashed (0). */
    assert_int_equal(parse_file("sipp", "sipp_uas_180.sip", &M2, OUT2), 0);
    assert_int_equal(osn_sip_wire_to_txn(&M2, &b), 0);
    assert_true(a.branch == b.branch && b.call_id == 0 && b.from_tag == 0);
    assert_int_equal(b.status, 180);
    assert_int_equal(b.method, OSN_SIP_INVITE);
    assert_true(b.to_tag != 0);
    /* A malformed message has no identities. */
    assert_int_equal(parse_file("rfc4475", "ncl.dat", &M3, OUT), OSN_SIP_WIRE_ANSWER);
    assert_int_equal(osn_sip_wire_to_txn(&M3, &b), OSN_EINVAL);
    /* Host case does not matter for sent-by (RFC 3261 19.1.4), port does. */
    parse_str(REQ_HEAD "CSeq: 1 OPTIONS\r\n\r\n");
    osn_sip_wire_to_txn(&M, &a);
    parse_str("OPTIONS sip:a@example.com SIP/2.0\r\n"
              "Via: SIP/2.0/UDP H.Example.COM:5060;branch=z9hG4bKx\r\n"
              "From: <sip:b@example.com>;tag=1\r\nTo: <sip:a@example.com>\r\nCall-ID: c1\r\n"
              "CSeq: 1 OPTIONS\r\n\r\n");
    osn_sip_wire_to_txn(&M, &b);
    assert_true(a.sent_by == b.sent_by);
    parse_str("OPTIONS sip:a@example.com SIP/2.0\r\n"
              "Via: SIP/2.0/UDP h.example.com:5061;branch=z9hG4bKx\r\n"
              "From: <sip:b@example.com>;tag=1\r\nTo: <sip:a@example.com>\r\nCall-ID: c1\r\n"
              "CSeq: 1 OPTIONS\r\n\r\n");
    osn_sip_wire_to_txn(&M, &b);
    assert_true(a.sent_by != b.sent_by);
}

/* A URI's check (sixteen bytes a step from 16 bytes on, the last step overlapping) against the
 * grammar written out here: in the To URI "<sip:...>" of 15, 16, 17, 31, 32, 33 and 40 bytes,
 * every byte value at every position after "sip:" leaves the message accepted exactly when it
 * is visible ASCII other than '<', '>' and '"' (RFC 3261 19.1.1 and 25.1 as this parser reads a
 * URI: no LWS, no angle brackets or quotes, no controls, no UTF-8). */
static void test_uri_scan(void **state)
{
    (void)state;
    static const size_t lens[] = {15, 16, 17, 31, 32, 33, 40};
    static const char fill[] = "sip:service@127.0.0.1:5060;lr;x=0123456789abcdef";
    char msg[512];
    for (size_t li = 0; li < sizeof lens / sizeof lens[0]; li++)
        for (size_t pos = 4; pos < lens[li]; pos++)
            for (int c = 1; c < 256; c++) {
                char uri[64];
                memcpy(uri, fill, lens[li]);
                uri[pos] = (char)c;
                bool ok = c >= 0x21 && c <= 0x7e && c != '<' && c != '>' && c != '"';
                int n = snprintf(msg, sizeof msg,
                                 "OPTIONS sip:a@example.com SIP/2.0\r\n"
                                 "Via: SIP/2.0/UDP h.example.com;branch=z9hG4bKx\r\n"
                                 "From: <sip:b@example.com>;tag=1\r\nTo: <%.*s>\r\n"
                                 "Call-ID: c1\r\nCSeq: 1 OPTIONS\r\n\r\n",
                                 (int)lens[li], uri);
                memcpy(BUF, msg, (size_t)n);
                bool got = osn_sip_wire_parse(&M, BUF, (size_t)n) == OSN_SIP_WIRE_ACCEPT;
                if (got != ok)
                    fail_msg("byte 0x%02x at %zu of a URI of %zu: %s, want %s", c, pos, lens[li],
                             got ? "accepted" : "refused", ok ? "accepted" : "refused");
            }
}

/* The numbers of message text `s` (parsed into M), `fwd`: as a request we printed
 * (osn_sip_wire_to_txn_fwd, orig's tags and Call-ID), else osn_sip_wire_to_txn. */
static struct osn_sip_msg numbers_of(const char *s, bool fwd)
{
    struct osn_sip_msg orig = {.call_id = 7, .from_tag = 8}, m;
    assert_int_equal(parse_str(s), OSN_SIP_WIRE_ACCEPT);
    if (fwd)
        assert_int_equal(osn_sip_wire_to_txn_fwd(&M, &orig, &m), 0);
    else
        assert_int_equal(osn_sip_wire_to_txn(&M, &m), 0);
    return m;
}

/* A branch of our form (OSN_SIP_WIRE_OWN_BRANCH_LEN: "z9hG4bK", 16 hex digits, 16 more) gets
 * as number its first 16 digits' value, checked against strtoull of them, in a response and in
 * a request we print (the forward and the CANCEL, osn_sip_wire_to_txn_fwd); a request from
 * outside with the same branch gets the keyed hash, since its sender chose it; a branch a byte
 * longer or shorter, with an upper-case or non-hex digit, gets the hash everywhere. */
static void test_own_branch(void **state)
{
    (void)state;
    static const char *const digits[] = {"0123456789abcdef", "fedcba9876543210", "8000000000000001",
                                         "0000000000000000"};
    static const char *const bad[] = {
            "z9hG4bK0123456789abcdef0123456789abcdef0", /* 40 */
            "z9hG4bK0123456789abcdef0123456789abcde",   /* 38 */
            "z9hG4bK0123456789ABCDEF0123456789abcdef",  "z9hG4bK0123456789abcdeg0123456789abcdef",
            "z9hG4bK01234567.9abcdef0123456789abcdef",  "z9hG4bK0123456789abcde~0123456789abcdef",
            "z9hG4bK`123456789abcdef0123456789abcdef"};
    char req[512], resp[512], branch[64];
    for (size_t k = 0; k < sizeof digits / sizeof digits[0] + sizeof bad / sizeof bad[0]; k++) {
        bool own = k < sizeof digits / sizeof digits[0];
        if (own)
            snprintf(branch, sizeof branch, "z9hG4bK%s0123456789abcdef", digits[k]);
        else
            snprintf(branch, sizeof branch, "%s", bad[k - sizeof digits / sizeof digits[0]]);
        snprintf(req, sizeof req,
                 "BYE sip:a@example.com SIP/2.0\r\nVia: SIP/2.0/UDP 10.0.0.1:5060;branch=%s\r\n"
                 "From: <sip:b@example.com>;tag=1\r\nTo: <sip:a@example.com>;tag=2\r\n"
                 "Call-ID: c1\r\nCSeq: 2 BYE\r\nContent-Length: 0\r\n\r\n",
                 branch);
        snprintf(resp, sizeof resp,
                 "SIP/2.0 200 OK\r\nVia: SIP/2.0/UDP 10.0.0.1:5060;branch=%s\r\n"
                 "From: <sip:b@example.com>;tag=1\r\nTo: <sip:a@example.com>;tag=2\r\n"
                 "Call-ID: c1\r\nCSeq: 2 BYE\r\nContent-Length: 0\r\n\r\n",
                 branch);
        uint64_t hash = osn_sip_wire_hash(branch, strlen(branch));
        hash = hash ? hash : 1;
        uint64_t want = hash;
        if (own) {
            want = strtoull(digits[k], NULL, 16);
            want = want ? want : 1;
        }
        struct osn_sip_msg in = numbers_of(req, false), fwd = numbers_of(req, true),
                           r = numbers_of(resp, false);
        if (in.branch != hash || fwd.branch != want || r.branch != want)
            fail_msg("branch %s: request %016llx (want the hash %016llx), printed %016llx and "
                     "response %016llx (want %016llx)",
                     branch, (unsigned long long)in.branch, (unsigned long long)hash,
                     (unsigned long long)fwd.branch, (unsigned long long)r.branch,
                     (unsigned long long)want);
        /* The printed request keeps orig's Call-ID and tags; its response matches its key. */
        assert_true(fwd.call_id == 7 && fwd.from_tag == 8);
        struct osn_sip_wire_key kr, kf;
        char kept[256];
        assert_int_equal(osn_sip_wire_key_of(&M, &kr), 0);
        assert_true(osn_sip_wire_key_copy(&kr, kept, sizeof kept, &kr) > 0);
        assert_int_equal(parse_str(req), OSN_SIP_WIRE_ACCEPT);
        assert_int_equal(osn_sip_wire_key_of(&M, &kf), 0);
        assert_true(osn_sip_wire_key_eq(&kr, &kf));
    }
    /* A forged response with the number of one of ours but another loop half: the same number,
     * so the table offers the transaction, and the text check refuses it. */
    const char *a = "SIP/2.0 200 OK\r\nVia: SIP/2.0/UDP 10.0.0.1:5060;"
                    "branch=z9hG4bK0123456789abcdef0123456789abcdef\r\n"
                    "From: <sip:b@example.com>;tag=1\r\nTo: <sip:a@example.com>;tag=2\r\n"
                    "Call-ID: c1\r\nCSeq: 2 BYE\r\n\r\n";
    const char *b = "SIP/2.0 200 OK\r\nVia: SIP/2.0/UDP 10.0.0.1:5060;"
                    "branch=z9hG4bK0123456789abcdefffffffffffffffff\r\n"
                    "From: <sip:b@example.com>;tag=1\r\nTo: <sip:a@example.com>;tag=2\r\n"
                    "Call-ID: c1\r\nCSeq: 2 BYE\r\n\r\n";
    struct osn_sip_msg na = numbers_of(a, false);
    struct osn_sip_wire_key ka, kb;
    assert_int_equal(osn_sip_wire_key_of(&M, &ka), 0);
    char keep[256];
    assert_true(osn_sip_wire_key_copy(&ka, keep, sizeof keep, &ka) > 0);
    struct osn_sip_msg nb = numbers_of(b, false);
    assert_int_equal(osn_sip_wire_key_of(&M, &kb), 0);
    assert_true(na.branch == nb.branch);
    assert_false(osn_sip_wire_key_eq(&ka, &kb));
}

/* A server transaction found by the numbers is confirmed by the text, and a collision (same
 * numbers, different text) is refused. */
/* The sent-by hash of a Via with host h and port: the lower-cased host, ':', the port's two
 * bytes, hashed (what ident.c's sent_by_hash documents), computed here without the memo. */
static uint64_t sent_by_ref(const char *h, unsigned port)
{
    char b[300];
    size_t n = strlen(h);
    for (size_t i = 0; i < n; i++)
        b[i] = (char)tolower((unsigned char)h[i]);
    b[n++] = ':';
    b[n++] = (char)(port >> 8);
    b[n++] = (char)(port & 0xff);
    uint64_t x = osn_sip_wire_hash(b, n);
    return x ? x : 1;
}

/* The two-entry sent-by memo (ident.c) gives what a fresh hash gives: sent-bys that share a
 * host but not a port, or a port but not a host, in an order that evicts entries, with case
 * changes, and across a change of key. */
static void test_sent_by_memo(void **state)
{
    (void)state;
    static const struct {
        const char *host;
        unsigned port;
    } seq[] = {{"127.0.0.1", 5060},     {"127.0.0.1", 5061}, {"127.0.0.1", 5060},
               {"127.0.0.2", 5060},     {"127.0.0.1", 5060}, {"H.example.COM", 5060},
               {"h.example.com", 5060}, {"127.0.0.1", 5061}, {"127.0.0.1", 5060},
               {"[::1]", 5060},         {"[::1]", 5060}};
    uint8_t key[16] = {0};
    for (int round = 0; round < 3; round++) {
        key[0] = (uint8_t)round;
        osn_sip_wire_key_set(key);
        for (size_t i = 0; i < sizeof seq / sizeof seq[0]; i++) {
            char msg[512];
            int n = snprintf(msg, sizeof msg,
                             "OPTIONS sip:a@example.com SIP/2.0\r\n"
                             "Via: SIP/2.0/UDP %s:%u;branch=z9hG4bKx\r\n"
                             "From: <sip:b@example.com>;tag=1\r\nTo: <sip:a@example.com>\r\n"
                             "Call-ID: c1\r\nCSeq: 1 OPTIONS\r\n\r\n",
                             seq[i].host, seq[i].port);
            struct osn_sip_msg m;
            assert_int_equal(osn_sip_wire_parse(&M, msg, (size_t)n), OSN_SIP_WIRE_ACCEPT);
            assert_int_equal(osn_sip_wire_to_txn(&M, &m), 0);
            if (m.sent_by != sent_by_ref(seq[i].host, seq[i].port))
                fail_msg("key %d, sent-by %zu (%s:%u): not the fresh hash", round, i, seq[i].host,
                         seq[i].port);
        }
    }
}

static void test_keys_and_table(void **state)
{
    (void)state;
    struct osn_sip_layer l;
    assert_int_equal(osn_sip_layer_init(&l, NULL, 4), 0);
    struct osn_sip_txn t;
    memset(&t, 0, sizeof t);
    struct osn_sip_out out;
    struct osn_sip_msg req, ack;
    assert_int_equal(parse_file("sipp", "sipp_uac_invite.sip", &M, BUF), 0);
    assert_int_equal(osn_sip_wire_to_txn(&M, &req), 0);
    assert_int_equal(osn_sip_stxn_start(&l, &t, &req, 0.0, &out), 0);
    struct osn_sip_wire_key k, kept, k2;
    char store[512];
    assert_int_equal(osn_sip_wire_key_of(&M, &k), 0);
    int used = osn_sip_wire_key_copy(&kept, store, sizeof store, &k);
    assert_true(used > 0);
    assert_int_equal(osn_sip_wire_key_copy(&kept, store, 3, &k), OSN_ETOOBIG);
    osn_sip_wire_key_copy(&kept, store, sizeof store, &k);
    memset(BUF, 0, sizeof BUF); /* the datagram is gone; the copy stays */
    assert_span(kept.branch, "z9hG4bK-11044-1-0");

    /* A 487 to it, then the ACK we would build for it: same transaction. */
    const char *r487 = "SIP/2.0 487 Request Terminated\r\n"
                       "Via: SIP/2.0/UDP 127.0.0.1:5061;branch=z9hG4bK-11044-1-0\r\n"
                       "From: sipp <sip:sipp@127.0.0.1:5061>;tag=11044SIPpTag001\r\n"
                       "To: service <sip:service@127.0.0.1:5070>;tag=x1\r\n"
                       "Call-ID: 1-11044@127.0.0.1\r\nCSeq: 1 INVITE\r\nContent-Length: 0\r\n\r\n";
    static char rbuf[1024];
    memcpy(rbuf, r487, strlen(r487));
    assert_int_equal(osn_sip_wire_parse(&M2, rbuf, strlen(r487)), 0);
    assert_int_equal(parse_file("sipp", "sipp_uac_invite.sip", &M, BUF), 0);
    int n = osn_sip_wire_print_ack(OUT, sizeof OUT, &M, &M2);
    assert_true(n > 0);
    assert_int_equal(osn_sip_wire_parse(&M3, OUT, (size_t)n), 0);
    assert_int_equal(M3.method, OSN_SIP_ACK);
    assert_int_equal(osn_sip_wire_to_txn(&M3, &ack), 0);
    assert_ptr_equal(osn_sip_layer_match(&l, &ack), &t);
    assert_int_equal(osn_sip_wire_key_of(&M3, &k2), 0);
    assert_true(osn_sip_wire_key_eq(&kept, &k2));

    /* A forged collision: the numbers of the INVITE, the text of another branch. */
    const char *other = "INVITE sip:service@127.0.0.1:5070 SIP/2.0\r\n"
                        "Via: SIP/2.0/UDP 127.0.0.1:5061;branch=z9hG4bK-other\r\n"
                        "From: <sip:x@y>;tag=1\r\nTo: <sip:z@y>\r\nCall-ID: 1-11044@127.0.0.1\r\n"
                        "CSeq: 1 INVITE\r\n\r\n";
    memcpy(rbuf, other, strlen(other));
    assert_int_equal(osn_sip_wire_parse(&M2, rbuf, strlen(other)), 0);
    struct osn_sip_msg forged;
    osn_sip_wire_to_txn(&M2, &forged);
    forged.branch = req.branch; /* as if SipHash had collided */
    assert_ptr_equal(osn_sip_layer_match(&l, &forged), &t);
    assert_int_equal(osn_sip_wire_key_of(&M2, &k2), 0);
    assert_false(osn_sip_wire_key_eq(&kept, &k2)); /* the node refuses the match */
    osn_sip_txn_abort(&l, &t);
    osn_sip_layer_release(&l);
}

/* RFC 2543 (no cookie): the 17.2.3 fallback; a retransmission and the ACK match, another
 * request does not. */
static void test_rfc2543(void **state)
{
    (void)state;
    struct osn_sip_msg inv, ack, other;
    assert_int_equal(parse_file("rfc4475", "inv2543.dat", &M, BUF), 0);
    assert_int_equal(osn_sip_wire_to_txn(&M, &inv), 0);
    assert_true(inv.branch != 0);
    const char *r404 = "SIP/2.0 404 Not Found\r\nVia: SIP/2.0/UDP iftgw.example.com\r\n"
                       "From: <sip:+13035551111@ift.client.example.net;user=phone>\r\n"
                       "To: sip:+16505552222@ss1.example.net;user=phone;tag=9\r\n"
                       "Call-ID: inv2543.1717@ift.client.example.com\r\nCSeq: 56 INVITE\r\n\r\n";
    static char rbuf[1024];
    memcpy(rbuf, r404, strlen(r404));
    assert_int_equal(osn_sip_wire_parse(&M2, rbuf, strlen(r404)), 0);
    int n = osn_sip_wire_print_ack(OUT, sizeof OUT, &M, &M2);
    assert_true(n > 0);
    assert_int_equal(osn_sip_wire_parse(&M3, OUT, (size_t)n), 0);
    assert_true(M3.rfc2543);
    assert_int_equal(osn_sip_wire_to_txn(&M3, &ack), 0);
    assert_true(ack.branch == inv.branch);
    struct osn_sip_wire_key a, b;
    osn_sip_wire_key_of(&M, &a);
    osn_sip_wire_key_of(&M3, &b);
    assert_true(osn_sip_wire_key_eq(&a, &b));
    /* Another CSeq: another transaction. */
    size_t len = load("rfc4475", "inv2543.dat", OUT2);
    char *c = strstr(OUT2, "CSeq: 56");
    c[7] = '7';
    assert_int_equal(osn_sip_wire_parse(&M2, OUT2, len), 0);
    osn_sip_wire_to_txn(&M2, &other);
    assert_true(other.branch != inv.branch);
    osn_sip_wire_key_of(&M2, &b);
    assert_false(osn_sip_wire_key_eq(&a, &b));
}

/* ---- printer ---- */

static const struct osn_sip_fwd FWD = {
        .transport = {"UDP", 3},
        .host = {"proxy.example.net", 17},
        .port = 5062,
        .branch = {"z9hG4bKp1", 9},
        .oc = {.flags = OSN_SIP_OC_PRESENT | OSN_SIP_OC_ALGO, .algo = OSN_SIP_ALGO_LOSS},
};

/* Span a of message ma and span b of message mb: the same place in their buffers (or both
 * absent; a valueless parameter, p set and n 0, counts as present). */
static void same_span(struct osn_span a, const struct osn_sip_wire *ma, struct osn_span b,
                      const struct osn_sip_wire *mb)
{
    assert_int_equal(a.p == NULL, b.p == NULL);
    assert_int_equal(a.n, b.n);
    if (a.p)
        assert_int_equal(a.p - ma->buf.p, b.p - mb->buf.p);
}

static void same_addr(const struct osn_sip_addr *a, const struct osn_sip_wire *ma,
                      const struct osn_sip_addr *b, const struct osn_sip_wire *mb)
{
    same_span(a->value, ma, b->value, mb);
    same_span(a->display, ma, b->display, mb);
    same_span(a->uri, ma, b->uri, mb);
    same_span(a->params, ma, b->params, mb);
    same_span(a->tag, ma, b->tag, mb);
    assert_int_equal(a->angle, b->angle);
    assert_int_equal(a->lr, b->lr);
    assert_int_equal(a->hdr, b->hdr);
}

/* Two parses of the same bytes (at a->buf.p and b->buf.p) agree field by field: every number,
 * every span's place, every list entry. */
static void same_parse(const struct osn_sip_wire *a, const struct osn_sip_wire *b)
{
    assert_int_equal(a->buf.n, b->buf.n);
    assert_memory_equal(a->buf.p, b->buf.p, a->buf.n);
    assert_int_equal(a->err.verdict, b->err.verdict);
    assert_int_equal(a->err.reason, b->err.reason);
    assert_int_equal(a->is_request, b->is_request);
    assert_int_equal(a->method, b->method);
    assert_int_equal(a->status, b->status);
    assert_int_equal(a->rfc2543, b->rfc2543);
    assert_int_equal(a->role, b->role);
    const struct osn_span *sa[] = {&a->msg,
                                   &a->method_name,
                                   &a->uri,
                                   &a->version,
                                   &a->reason_phrase,
                                   &a->start_line,
                                   &a->head,
                                   &a->body,
                                   &a->call_id,
                                   &a->content_type,
                                   &a->cseq_method_name,
                                   &a->retry_after.comment};
    const struct osn_span *sb[] = {&b->msg,
                                   &b->method_name,
                                   &b->uri,
                                   &b->version,
                                   &b->reason_phrase,
                                   &b->start_line,
                                   &b->head,
                                   &b->body,
                                   &b->call_id,
                                   &b->content_type,
                                   &b->cseq_method_name,
                                   &b->retry_after.comment};
    for (size_t i = 0; i < sizeof sa / sizeof sa[0]; i++)
        same_span(*sa[i], a, *sb[i], b);
    const int ia[] = {a->call_id_hdr,
                      a->from_hdr,
                      a->to_hdr,
                      a->cseq_hdr,
                      a->max_forwards_hdr,
                      a->content_length_hdr,
                      a->content_type_hdr,
                      a->retry_after_hdr,
                      a->nhdr,
                      a->nvia,
                      a->nroute,
                      a->nrecord_route,
                      a->ncontact,
                      a->nrequire,
                      a->nproxy_require,
                      a->contact_star,
                      a->max_forwards,
                      a->content_length,
                      (int)a->cseq,
                      a->cseq_method,
                      a->retry_after.present,
                      (int)a->retry_after.seconds,
                      (int)a->retry_after.duration};
    const int ib[] = {b->call_id_hdr,
                      b->from_hdr,
                      b->to_hdr,
                      b->cseq_hdr,
                      b->max_forwards_hdr,
                      b->content_length_hdr,
                      b->content_type_hdr,
                      b->retry_after_hdr,
                      b->nhdr,
                      b->nvia,
                      b->nroute,
                      b->nrecord_route,
                      b->ncontact,
                      b->nrequire,
                      b->nproxy_require,
                      b->contact_star,
                      b->max_forwards,
                      b->content_length,
                      (int)b->cseq,
                      b->cseq_method,
                      b->retry_after.present,
                      (int)b->retry_after.seconds,
                      (int)b->retry_after.duration};
    for (size_t i = 0; i < sizeof ia / sizeof ia[0]; i++)
        assert_int_equal(ia[i], ib[i]);
    same_addr(&a->from, a, &b->from, b);
    same_addr(&a->to, a, &b->to, b);
    for (int i = 0; i < a->nhdr; i++) {
        same_span(a->hdr[i].name, a, b->hdr[i].name, b);
        same_span(a->hdr[i].value, a, b->hdr[i].value, b);
        same_span(a->hdr[i].line, a, b->hdr[i].line, b);
        assert_int_equal(a->hdr[i].id, b->hdr[i].id);
    }
    for (int i = 0; i < a->nvia; i++) {
        const struct osn_sip_via *u = &a->via[i], *v = &b->via[i];
        same_span(u->value, a, v->value, b);
        same_span(u->protocol, a, v->protocol, b);
        same_span(u->version, a, v->version, b);
        same_span(u->transport, a, v->transport, b);
        same_span(u->host, a, v->host, b);
        same_span(u->branch, a, v->branch, b);
        same_span(u->received, a, v->received, b);
        same_span(u->rport_value, a, v->rport_value, b);
        same_span(u->maddr, a, v->maddr, b);
        same_span(u->params, a, v->params, b);
        same_span(u->oc_algo, a, v->oc_algo, b);
        assert_int_equal(u->port, v->port);
        assert_int_equal(u->ttl, v->ttl);
        assert_int_equal(u->hdr, v->hdr);
        assert_int_equal(u->rport, v->rport);
        assert_memory_equal(&u->oc, &v->oc, sizeof u->oc);
        for (int k = 0; k < 4; k++) {
            assert_int_equal(u->oc_len[k], v->oc_len[k]);
            if (u->oc_len[k])
                assert_int_equal(u->oc_at[k], v->oc_at[k]);
        }
    }
    for (int i = 0; i < a->nroute; i++)
        same_addr(&a->route[i], a, &b->route[i], b);
    for (int i = 0; i < a->nrecord_route; i++)
        same_addr(&a->record_route[i], a, &b->record_route[i], b);
    for (int i = 0; i < a->ncontact; i++)
        same_addr(&a->contact[i], a, &b->contact[i], b);
    for (int i = 0; i < a->nrequire; i++)
        same_span(a->require[i], a, b->require[i], b);
    for (int i = 0; i < a->nproxy_require; i++)
        same_span(a->proxy_require[i], a, b->proxy_require[i], b);
}

/* The forward of M by f printed with its parse (osn_sip_wire_print_forward_parsed, into OUT4
 * and M3) is the plain print OUT[0..n) and its parse M2 (made by check_forwarded): field by
 * field; and the client transaction's numbers made from the request's (to_txn_fwd) are those
 * of the parse. */
static char OUT4[MAXMSG];
static void check_parsed_forward(int n, const struct osn_sip_fwd *f)
{
    assert_int_equal(osn_sip_wire_print_forward_parsed(OUT4, sizeof OUT4, &M, f, &M3), n);
    same_parse(&M2, &M3);
    struct osn_sip_msg orig, plain, fwd;
    assert_int_equal(osn_sip_wire_to_txn(&M, &orig), 0);
    assert_int_equal(osn_sip_wire_to_txn(&M2, &plain), 0);
    assert_int_equal(osn_sip_wire_to_txn_fwd(&M3, &orig, &fwd), 0);
    assert_memory_equal(&plain, &fwd, sizeof plain);
}

/* Parses OUT[0..n) into M2 and checks what forwarding `M` by f must keep. */
static void check_forwarded_by(int n, const struct osn_sip_fwd *f)
{
    assert_true(n > 0);
    assert_int_equal(osn_sip_wire_parse_as(&M2, OUT, (size_t)n, M.role), OSN_SIP_WIRE_ACCEPT);
    assert_int_equal(M2.nvia, M.nvia + 1);
    assert_span(M2.via[0].branch, "z9hG4bKp1");
    assert_span(M2.via[0].host, "proxy.example.net");
    assert_int_equal(M2.via[0].port, 5062);
    assert_int_equal(M2.via[0].oc.flags, OSN_SIP_OC_PRESENT | OSN_SIP_OC_ALGO);
    assert_int_equal(M2.via[0].oc.algo, OSN_SIP_ALGO_LOSS);
    /* (what our transport adds to the top Via, received and rport, changes that one) */
    for (int i = f->via_received.n || f->via_rport ? 1 : 0; i < M.nvia; i++)
        assert_true(osn_span_eq(M2.via[i + 1].value, M.via[i].value));
    assert_int_equal(M2.max_forwards, M.max_forwards < 0 ? 70 : M.max_forwards - 1);
    assert_true(osn_span_eq(M2.call_id, M.call_id));
    assert_int_equal(M2.cseq, M.cseq);
    assert_true(osn_span_eq(M2.from.tag, M.from.tag));
    assert_true(osn_span_eq(M2.to.tag, M.to.tag));
    assert_true(osn_span_eq(M2.body, M.body));
    assert_true(osn_span_eq(M2.uri, M.uri));
    assert_int_equal(M2.method, M.method);
    check_parsed_forward(n, f);
}

/* A forward whose Via has no oc parameters takes that Via's facts from f instead of the Via
 * decoder (msg.c's our_via): the parse it hands over is still, field by field, the parse of what
 * it printed, for every accepted request of both corpora and every shape of f, those it takes
 * (with and without a port, TCP) and those it leaves to the decoder (an IPv6 host, a branch that
 * is not a token). */
static void test_print_forward_own_via(void **state)
{
    (void)state;
    struct osn_sip_fwd fs[5];
    for (int j = 0; j < 5; j++) {
        fs[j] = FWD;
        fs[j].oc = (struct osn_sip_oc){0};
    }
    fs[1].port = 0;
    fs[2].transport = (struct osn_span){"TCP", 3};
    fs[2].host = (struct osn_span){"192.0.2.7", 9};
    fs[3].host = (struct osn_span){"[2001:db8::1]", 13};
    fs[4].branch = (struct osn_span){"z9hG4bK;x=1", 11};
    int forwarded = 0;
    /* in both roles: a proxy's parse derived from a proxy's parse (OSN_SIP_WIRE_ROLE_PROXY) */
    for (size_t i = 0; i < 2 * (N4475 + NSIPP); i++) {
        size_t f = i % (N4475 + NSIPP);
        int role = i < N4475 + NSIPP ? OSN_SIP_WIRE_ROLE_FULL : OSN_SIP_WIRE_ROLE_PROXY;
        size_t len = f < N4475 ? load("rfc4475", RFC4475[f].file, BUF)
                               : load("sipp", SIPP[f - N4475], BUF);
        int v = osn_sip_wire_parse_as(&M, BUF, len, role);
        if (v != OSN_SIP_WIRE_ACCEPT || !M.is_request || M.max_forwards == 0 ||
            M.nvia >= OSN_SIP_WIRE_MAX_VIAS)
            continue;
        for (int j = 0; j < 5; j++) {
            int n = osn_sip_wire_print_forward(OUT, sizeof OUT, &M, &fs[j]);
            assert_true(n > 0);
            assert_int_equal(osn_sip_wire_parse_as(&M2, OUT, (size_t)n, role), OSN_SIP_WIRE_ACCEPT);
            check_parsed_forward(n, &fs[j]);
            forwarded++;
        }
    }
    assert_true(forwarded >= 2 * 5 * 20);
}

static void test_print_forward(void **state)
{
    (void)state;
    /* Every accepted request of both corpora forwards and parses back. */
    for (size_t i = 0; i < N4475 + NSIPP; i++) {
        int v = i < N4475 ? parse_file("rfc4475", RFC4475[i].file, &M, BUF)
                          : parse_file("sipp", SIPP[i - N4475], &M, BUF);
        if (v != OSN_SIP_WIRE_ACCEPT || !M.is_request || M.max_forwards == 0 ||
            M.nvia >= OSN_SIP_WIRE_MAX_VIAS)
            continue;
        int n = osn_sip_wire_print_forward(OUT, sizeof OUT, &M, &FWD);
        check_forwarded_by(n, &FWD);
        /* Every buffer too small is refused, never overrun. */
        for (int cap = 0; cap < n; cap += 7)
            assert_int_equal(osn_sip_wire_print_forward(OUT2, (size_t)cap, &M, &FWD), OSN_ETOOBIG);
    }
    /* Loose routing: wsinv's single Route names us and goes. */
    assert_int_equal(parse_file("rfc4475", "wsinv.dat", &M, BUF), 0);
    struct osn_sip_fwd f = FWD;
    f.pop_route = true;
    int n = osn_sip_wire_print_forward(OUT, sizeof OUT, &M, &f);
    check_forwarded_by(n, &f);
    assert_int_equal(M2.nroute, 0);
    /* Two values on one line: the second stays. */
    parse_str(REQ_HEAD "CSeq: 1 OPTIONS\r\nRoute: <sip:us;lr>, <sip:next;lr>\r\n"
                       "Route: <sip:last;lr>\r\n\r\n");
    n = osn_sip_wire_print_forward(OUT, sizeof OUT, &M, &f);
    check_forwarded_by(n, &f);
    assert_int_equal(M2.nroute, 2);
    assert_span(M2.route[0].uri, "sip:next;lr");
    assert_span(M2.route[1].uri, "sip:last;lr");
    /* RFC 5658 5: both values of our double Record-Route go, on one line or on two. */
    struct osn_sip_fwd f2 = FWD;
    f2.pop_route = 2;
    parse_str(REQ_HEAD "CSeq: 1 OPTIONS\r\nRoute: <sip:us;lr>, <sip:us;transport=tcp;lr>, "
                       "<sip:next;lr>\r\nRoute: <sip:last;lr>\r\n\r\n");
    n = osn_sip_wire_print_forward(OUT, sizeof OUT, &M, &f2);
    check_forwarded_by(n, &f2);
    assert_int_equal(M2.nroute, 2);
    assert_span(M2.route[0].uri, "sip:next;lr");
    assert_span(M2.route[1].uri, "sip:last;lr");
    parse_str(REQ_HEAD "CSeq: 1 OPTIONS\r\nRoute: <sip:us;lr>\r\nRoute: <sip:us;transport=tcp;lr>"
                       "\r\nRoute: <sip:last;lr>\r\n\r\n");
    n = osn_sip_wire_print_forward(OUT, sizeof OUT, &M, &f2);
    check_forwarded_by(n, &f2);
    assert_int_equal(M2.nroute, 1);
    assert_span(M2.route[0].uri, "sip:last;lr");
    parse_str(REQ_HEAD "CSeq: 1 OPTIONS\r\nRoute: <sip:us;lr>, <sip:us;transport=tcp;lr>\r\n\r\n");
    n = osn_sip_wire_print_forward(OUT, sizeof OUT, &M, &f2);
    check_forwarded_by(n, &f2);
    assert_int_equal(M2.nroute, 0);
    /* Record-Route (16.6 step 4): ours above the ones there, which keep their order; with
     * none, after the last header. The route set read back is ours first. */
    struct osn_sip_fwd g = FWD;
    g.record_route = (struct osn_span){"sip:10.0.0.1:5070;lr", 20};
    parse_str(REQ_HEAD "CSeq: 1 OPTIONS\r\nRecord-Route: <sip:a;lr>, <sip:b;lr>\r\n\r\n");
    n = osn_sip_wire_print_forward(OUT, sizeof OUT, &M, &g);
    check_forwarded_by(n, &g);
    assert_int_equal(M2.nrecord_route, 3);
    assert_span(M2.record_route[0].uri, "sip:10.0.0.1:5070;lr");
    assert_true(M2.record_route[0].lr);
    assert_span(M2.record_route[1].uri, "sip:a;lr");
    assert_span(M2.record_route[2].uri, "sip:b;lr");
    assert_int_equal(M2.nvia, M.nvia + 1);
    parse_str(REQ_HEAD "CSeq: 1 OPTIONS\r\n\r\n");
    n = osn_sip_wire_print_forward(OUT, sizeof OUT, &M, &g);
    check_forwarded_by(n, &g);
    assert_int_equal(M2.nrecord_route, 1);
    assert_span(M2.record_route[0].uri, "sip:10.0.0.1:5070;lr");
    assert_int_equal(M2.record_route[0].hdr, M2.nhdr - 1);
    /* RFC 5658 4: two values of ours, the outgoing leg's on top, both above the others. */
    g.record_route = (struct osn_span){"sip:10.0.0.1:5070;transport=tcp;lr", 34};
    g.record_route2 = (struct osn_span){"sip:10.0.0.1:5070;lr", 20};
    parse_str(REQ_HEAD "CSeq: 1 OPTIONS\r\nRecord-Route: <sip:a;lr>\r\n\r\n");
    n = osn_sip_wire_print_forward(OUT, sizeof OUT, &M, &g);
    check_forwarded_by(n, &g);
    assert_int_equal(M2.nrecord_route, 3);
    assert_span(M2.record_route[0].uri, "sip:10.0.0.1:5070;transport=tcp;lr");
    assert_span(M2.record_route[1].uri, "sip:10.0.0.1:5070;lr");
    assert_span(M2.record_route[2].uri, "sip:a;lr");
    /* Max-Forwards 0 is the caller's 483, not a forward. */
    assert_int_equal(parse_file("rfc4475", "zeromf.dat", &M, BUF), 0);
    assert_int_equal(osn_sip_wire_print_forward(OUT, sizeof OUT, &M, &FWD), OSN_EINVAL);
}

/* The client transaction a proxy builds from its forward's printer, without parsing it, is the
 * one a parse of the bytes gives (check_parsed_forward), for the requests of a call and more. */
static void test_forward_parsed(void **state)
{
    (void)state;
    static char many[8192];
    struct osn_sip_fwd rr = FWD, pop = FWD, recv = FWD;
    rr.record_route = (struct osn_span){"sip:10.0.0.1:5070;transport=tcp;lr", 34};
    rr.record_route2 = (struct osn_span){"sip:10.0.0.1:5070;lr", 20};
    pop.pop_route = 1;
    recv.via_received = (struct osn_span){";received=10.0.0.9", 18};
    recv.via_rport = 5099;
    const char *reqs[] = {
            /* INVITE with Record-Route, Contact, Require, a body, compact forms */
            "INVITE sip:bob@10.0.0.2 SIP/2.0\r\n"
            "v: SIP/2.0/UDP 10.0.0.3:5060;branch=z9hG4bKa1;rport\r\n"
            "Max-Forwards: 69\r\nRecord-Route: <sip:p1.example.com;lr>, <sip:p2;lr>\r\n"
            "f: \"Al\" <sip:al@a.example.com>;tag=t1\r\nt: <sip:bob@b.example.com>\r\n"
            "i: inv1@10.0.0.3\r\nCSeq: 7 INVITE\r\nm: <sip:al@10.0.0.3:5060>\r\n"
            "Require: 100rel, timer\r\nProxy-Require: foo\r\nSupported: x\r\n"
            "c: application/sdp\r\nl: 4\r\n\r\nv=0\r",
            /* BYE with Route values on two lines, the first one ours */
            "BYE sip:al@10.0.0.3:5060 SIP/2.0\r\n"
            "Via: SIP/2.0/UDP 10.0.0.2:5070;branch=z9hG4bKb1\r\n"
            "Route: <sip:10.0.0.1:5070;lr>, <sip:p2;lr>\r\nRoute: <sip:p3;lr>\r\n"
            "From: <sip:bob@b.example.com>;tag=t2\r\nTo: <sip:al@a.example.com>;tag=t1\r\n"
            "Call-ID: inv1@10.0.0.3\r\nCSeq: 1 BYE\r\nMax-Forwards: 70\r\n"
            "Content-Length: 0\r\n\r\n",
            /* CANCEL without Max-Forwards, an oc offer in its Via */
            "CANCEL sip:bob@10.0.0.2 SIP/2.0\r\n"
            "Via: SIP/2.0/UDP 10.0.0.3:5060;branch=z9hG4bKa1;oc;oc-algo=\"loss\"\r\n"
            "From: <sip:al@a.example.com>;tag=t1\r\nTo: <sip:bob@b.example.com>\r\n"
            "Call-ID: inv1@10.0.0.3\r\nCSeq: 7 CANCEL\r\nContent-Length: 0\r\n\r\n",
    };
    const struct osn_sip_fwd *fs[] = {&FWD, &rr, &pop, &recv};
    for (size_t i = 0; i < 2 * (sizeof reqs / sizeof reqs[0] + 1); i++) {
        /* each request in both roles, a proxy's parse (fewer fields) the second time */
        int role = i < 4 ? OSN_SIP_WIRE_ROLE_FULL : OSN_SIP_WIRE_ROLE_PROXY;
        size_t q = i % 4;
        const char *r = reqs[q < 3 ? q : 0];
        if (q == 3) { /* many Vias, some on one line, with oc and received parameters */
            size_t k = (size_t)snprintf(many, sizeof many, "OPTIONS sip:x@10.0.0.2 SIP/2.0\r\n");
            for (int v = 0; v < 40; v++)
                k += (size_t)snprintf(many + k, sizeof many - k,
                                      v % 3 ? "Via: SIP/2.0/UDP h%d.example.com;branch=z9hG4bKv%d;"
                                              "oc=20;oc-seq=1.5;received=10.1.1.%d\r\n"
                                            : "v: SIP/2.0/TCP [::%d]:5061;branch=z9hG4bKw%d, "
                                              "SIP/2.0/UDP 10.9.9.%d;branch=z9hG4bKz\r\n",
                                      v, v, v);
            snprintf(many + k, sizeof many - k,
                     "From: <sip:a@x>;tag=f\r\nTo: <sip:x@y>\r\nCall-ID: many\r\n"
                     "CSeq: 2 OPTIONS\r\nMax-Forwards: 9\r\n\r\n");
            r = many;
        }
        size_t len = strlen(r);
        memcpy(BUF, r, len);
        assert_int_equal(osn_sip_wire_parse_as(&M, BUF, len, role), OSN_SIP_WIRE_ACCEPT);
        for (size_t j = 0; j < sizeof fs / sizeof fs[0]; j++) {
            int n = osn_sip_wire_print_forward(OUT, sizeof OUT, &M, fs[j]);
            check_forwarded_by(n, fs[j]);
        }
    }
    /* A forward with more lines than a parse takes is refused by both ways alike. */
    size_t k = (size_t)snprintf(many, sizeof many, "%s", REQ_HEAD "CSeq: 1 OPTIONS\r\n");
    for (int h = 0; k + 8 < sizeof many && h < OSN_SIP_WIRE_MAX_HDRS - 5; h++)
        k += (size_t)snprintf(many + k, sizeof many - k, "X: %d\r\n", h);
    snprintf(many + k, sizeof many - k, "\r\n");
    assert_int_equal(osn_sip_wire_parse(&M, many, strlen(many)), OSN_SIP_WIRE_ACCEPT);
    int n = osn_sip_wire_print_forward(OUT, sizeof OUT, &M, &rr);
    assert_true(n > 0);
    assert_int_not_equal(osn_sip_wire_parse(&M2, OUT, (size_t)n), OSN_SIP_WIRE_ACCEPT);
    assert_int_equal(M2.err.reason, OSN_SIP_WIRE_ECAP);
    assert_int_equal(osn_sip_wire_print_forward_parsed(OUT4, sizeof OUT4, &M, &rr, &M3), n);
    assert_int_equal(M3.err.verdict, M2.err.verdict);
    assert_int_equal(M3.err.reason, OSN_SIP_WIRE_ECAP);
    assert_int_equal(M3.err.offset, M2.err.offset);
}

/* What a proxy's parse P of some bytes holds against the full parse F of the same bytes (both
 * accepted): every field a proxy uses, equal; every field it does not use, absent
 * (OSN_SIP_WIRE_ROLE_PROXY, osn/sip_wire.h). */
static void proxy_agrees(const struct osn_sip_wire *F, const struct osn_sip_wire *P)
{
    assert_int_equal(F->role, OSN_SIP_WIRE_ROLE_FULL);
    assert_int_equal(P->role, OSN_SIP_WIRE_ROLE_PROXY);
    assert_ptr_equal(F->buf.p, P->buf.p);
    const struct osn_span *sf[] = {
            &F->msg,           &F->method_name,      &F->uri,      &F->version,
            &F->reason_phrase, &F->start_line,       &F->head,     &F->body,
            &F->call_id,       &F->cseq_method_name, &F->from.tag, &F->to.tag};
    const struct osn_span *sp[] = {
            &P->msg,           &P->method_name,      &P->uri,      &P->version,
            &P->reason_phrase, &P->start_line,       &P->head,     &P->body,
            &P->call_id,       &P->cseq_method_name, &P->from.tag, &P->to.tag};
    for (size_t i = 0; i < sizeof sf / sizeof sf[0]; i++)
        same_span(*sf[i], F, *sp[i], P);
    const int nf[] = {F->is_request,
                      F->method,
                      F->status,
                      F->rfc2543,
                      F->call_id_hdr,
                      F->from_hdr,
                      F->to_hdr,
                      F->cseq_hdr,
                      F->max_forwards_hdr,
                      F->content_length_hdr,
                      F->nhdr,
                      F->nvia,
                      F->nroute,
                      F->nproxy_require,
                      F->max_forwards,
                      F->content_length,
                      (int)F->cseq,
                      F->cseq_method,
                      F->from.hdr,
                      F->to.hdr};
    const int np[] = {P->is_request,
                      P->method,
                      P->status,
                      P->rfc2543,
                      P->call_id_hdr,
                      P->from_hdr,
                      P->to_hdr,
                      P->cseq_hdr,
                      P->max_forwards_hdr,
                      P->content_length_hdr,
                      P->nhdr,
                      P->nvia,
                      P->nroute,
                      P->nproxy_require,
                      P->max_forwards,
                      P->content_length,
                      (int)P->cseq,
                      P->cseq_method,
                      P->from.hdr,
                      P->to.hdr};
    for (size_t i = 0; i < sizeof nf / sizeof nf[0]; i++)
        assert_int_equal(nf[i], np[i]);
    for (int i = 0; i < F->nhdr; i++) {
        same_span(F->hdr[i].name, F, P->hdr[i].name, P);
        same_span(F->hdr[i].value, F, P->hdr[i].value, P);
        same_span(F->hdr[i].line, F, P->hdr[i].line, P);
        assert_int_equal(F->hdr[i].id, P->hdr[i].id);
    }
    /* The decoders clear each entry before they fill it: equal entries are equal bytes. */
    for (int i = 0; i < F->nvia; i++)
        assert_memory_equal(&F->via[i], &P->via[i], sizeof F->via[i]);
    for (int i = 0; i < F->nroute; i++)
        assert_memory_equal(&F->route[i], &P->route[i], sizeof F->route[i]);
    for (int i = 0; i < F->nproxy_require; i++)
        same_span(F->proxy_require[i], F, P->proxy_require[i], P);
    if (F->is_request) { /* Record-Route read, Retry-After not */
        assert_int_equal(F->nrecord_route, P->nrecord_route);
        for (int i = 0; i < F->nrecord_route; i++)
            assert_memory_equal(&F->record_route[i], &P->record_route[i],
                                sizeof F->record_route[i]);
        assert_int_equal(P->retry_after_hdr, -1);
        assert_false(P->retry_after.present);
    } else { /* the other way round */
        assert_int_equal(P->nrecord_route, 0);
        assert_int_equal(F->retry_after_hdr, P->retry_after_hdr);
        assert_memory_equal(&F->retry_after, &P->retry_after, sizeof F->retry_after);
    }
    assert_int_equal(P->ncontact, 0);
    assert_false(P->contact_star);
    assert_int_equal(P->nrequire, 0);
    assert_int_equal(P->content_type_hdr, -1);
    assert_null(P->content_type.p);
    const struct osn_sip_addr *ft[] = {&P->from, &P->to};
    for (int k = 0; k < 2; k++) /* of From and To, only the tag */
        assert_true(!ft[k]->value.p && !ft[k]->display.p && !ft[k]->uri.p && !ft[k]->params.p &&
                    !ft[k]->angle && !ft[k]->lr);
}

/* The header line of m holding byte offset `at`, -1 for none (the start line, the body). */
static int line_of(const struct osn_sip_wire *m, uint32_t at)
{
    for (int i = 0; i < m->nhdr; i++) {
        size_t off = (size_t)(m->hdr[i].line.p - m->buf.p);
        if (at >= off && at < off + m->hdr[i].line.n)
            return i;
    }
    return -1;
}

/* RFC 4475 at a proxy (OSN_SIP_WIRE_ROLE_PROXY): the verdicts of the table at the top, except
 * for the two messages whose only fault is in a header a proxy does not use, which it forwards
 * as RFC 3261 16.3 step 1 says ("Any other components, well-formed or not, SHOULD be ignored
 * and remain unchanged when the message is forwarded"):
 *   3.1.2.13 regbadct: a '?' outside <> in Contact, which a registrar reads, never a proxy;
 *   3.1.2.14 badaspec: LWS inside To's <>, around its URI; of To a proxy reads only the tag.
 * Where both parses accept (the other 28, and SIPp's 6), the proxy's agrees (proxy_agrees);
 * where both refuse, they find the same fault in the same line (baddn's From: the full parse
 * stops at its URI, the proxy's after it, at the text that follows). */
static void test_rfc4475_proxy_verdicts(void **state)
{
    (void)state;
    static const char *const forwarded[] = {"regbadct.dat", "badaspec.dat"};
    int accepted = 0, answered = 0, dropped = 0, agreed = 0;
    for (size_t i = 0; i < N4475 + NSIPP; i++) {
        const char *file = i < N4475 ? RFC4475[i].file : SIPP[i - N4475];
        size_t n = load(i < N4475 ? "rfc4475" : "sipp", file, BUF);
        int vf = osn_sip_wire_parse_as(&M, BUF, n, OSN_SIP_WIRE_ROLE_FULL);
        int vp = osn_sip_wire_parse_as(&M2, BUF, n, OSN_SIP_WIRE_ROLE_PROXY);
        bool fwd = !strcmp(file, forwarded[0]) || !strcmp(file, forwarded[1]);
        if (fwd) {
            assert_int_equal(vf, OSN_SIP_WIRE_ANSWER);
            assert_int_equal(M.err.reason, OSN_SIP_WIRE_EADDR);
            assert_int_equal(vp, OSN_SIP_WIRE_ACCEPT);
        } else if (vp != vf || M2.err.reason != M.err.reason || M2.err.answer != M.err.answer ||
                   line_of(&M2, M2.err.offset) != line_of(&M, M.err.offset)) {
            fail_msg("%s: proxy verdict %d %s at %u, full %d %s at %u", file, vp,
                     osn_sip_wire_reason_name(M2.err.reason), M2.err.offset, vf,
                     osn_sip_wire_reason_name(M.err.reason), M.err.offset);
        }
        if (vf == OSN_SIP_WIRE_ACCEPT && vp == OSN_SIP_WIRE_ACCEPT) {
            proxy_agrees(&M, &M2);
            agreed++;
        }
        if (i < N4475) {
            accepted += vp == OSN_SIP_WIRE_ACCEPT;
            answered += vp == OSN_SIP_WIRE_ANSWER;
            dropped += vp == OSN_SIP_WIRE_DROP;
        }
    }
    assert_int_equal(accepted, 28 + 2);
    assert_int_equal(answered, 19 - 2);
    assert_int_equal(dropped, 3);
    assert_int_equal(agreed, 28 + (int)NSIPP);
}

/* Each header a proxy does not decode, broken, and the ones it does (the tag of From and To,
 * a request's Record-Route, a response's Retry-After) broken: the first kind is forwarded by a
 * proxy and refused by a full parse, the second refused by both, at the same place. */
static void test_proxy_role(void **state)
{
    (void)state;
    struct {
        const char *text;
        int full, proxy; /* verdicts */
    } cases[] = {
            /* Contact, Content-Type twice, Require and a request's Retry-After, all broken */
            {REQ_HEAD
             "CSeq: 1 OPTIONS\r\nContact: sip:a@b?x=1\r\nContent-Type: a/b\r\n"
             "Content-Type: c/d\r\nRequire: ,\r\nRetry-After: soon\r\nRoute: <sip:r;lr>\r\n"
             "Proxy-Require: pr\r\nRecord-Route: <sip:rr;lr>\r\nl: 0\r\n\r\n",
             OSN_SIP_WIRE_ANSWER, OSN_SIP_WIRE_ACCEPT},
            /* a response's Record-Route, Contact and Content-Type, broken; its Retry-After read */
            {"SIP/2.0 503 Busy\r\nVia: SIP/2.0/UDP h.example.com;branch=z9hG4bKx\r\n"
             "From: <sip:b@example.com>;tag=1\r\nTo: <sip:a@example.com>;tag=2\r\nCall-ID: c1\r\n"
             "CSeq: 1 INVITE\r\nRecord-Route: sip:rr\r\nContact: <sip:a@b\r\n"
             "Content-Type: x\r\nc: y\r\nRetry-After: 18 (lunch);duration=60\r\nl: 0\r\n\r\n",
             OSN_SIP_WIRE_DROP, OSN_SIP_WIRE_ACCEPT},
            /* To's URI and display name broken, its tag (and From's, the last of two) readable:
             * neither a quoted ";tag=" nor one inside <> is the tag */
            {REQ_HEAD_NOTO "To: \"x;tag=q\" <sip:a@b c;tag=u>;tag=t2\r\n"
                           "CSeq: 1 OPTIONS\r\n\r\n",
             OSN_SIP_WIRE_ANSWER, OSN_SIP_WIRE_ACCEPT},
            {REQ_HEAD_NOTO "To: \"Bob;tag=q\" < sip:a@b >;tag=\"x\"\r\nCSeq: 1 OPTIONS\r\n\r\n",
             OSN_SIP_WIRE_ANSWER, OSN_SIP_WIRE_ANSWER}, /* tag = token, not quoted */
            {REQ_HEAD_NOTO "To: <sip:a@b;tag=t\r\nCSeq: 1 OPTIONS\r\n\r\n", OSN_SIP_WIRE_ANSWER,
             OSN_SIP_WIRE_ANSWER}, /* '<' without '>': where the tag is, is unknown */
            {REQ_HEAD_NOTO "To: \"Bob <sip:a@b>;tag=t\r\nCSeq: 1 OPTIONS\r\n\r\n",
             OSN_SIP_WIRE_ANSWER, OSN_SIP_WIRE_ANSWER}, /* an unclosed quote */
            {REQ_HEAD_NOTO "To: <sip:a@b>;tag=t x\r\nCSeq: 1 OPTIONS\r\n\r\n", OSN_SIP_WIRE_ANSWER,
             OSN_SIP_WIRE_ANSWER}, /* text after the parameters */
            {REQ_HEAD_NOTO "To: <sip:a@b>;;tag=t\r\nCSeq: 1 OPTIONS\r\n\r\n", OSN_SIP_WIRE_ANSWER,
             OSN_SIP_WIRE_ANSWER}, /* an empty parameter */
            {REQ_HEAD_NOTO "To: <sip:a@b>;tag\r\nCSeq: 1 OPTIONS\r\n\r\n", OSN_SIP_WIRE_ANSWER,
             OSN_SIP_WIRE_ANSWER}, /* a tag without a value */
            {REQ_HEAD_NOTO "To: <sip:a@b>\r\nt: <sip:a@b>\r\nCSeq: 1 OPTIONS\r\n\r\n",
             OSN_SIP_WIRE_ANSWER, OSN_SIP_WIRE_ANSWER}, /* two To */
            /* an addr-spec To, its tag after the URI; a folded one, the tag on the next line */
            {REQ_HEAD_NOTO "To: sip:a@b;TAG=t3\r\nCSeq: 1 OPTIONS\r\n\r\n", OSN_SIP_WIRE_ACCEPT,
             OSN_SIP_WIRE_ACCEPT},
            {REQ_HEAD_NOTO "To: <sip:a@b>\r\n ; tag = t4 \r\nCSeq: 1 OPTIONS\r\n\r\n",
             OSN_SIP_WIRE_ACCEPT, OSN_SIP_WIRE_ACCEPT},
            {REQ_HEAD_NOTO "To: <sip:a@b>;tag=[::1]\r\nCSeq: 1 OPTIONS\r\n\r\n",
             OSN_SIP_WIRE_ACCEPT, OSN_SIP_WIRE_ACCEPT}, /* a host value, as gen-value allows */
            /* a request's Record-Route and a response's Retry-After, broken: refused by both */
            {REQ_HEAD "CSeq: 1 OPTIONS\r\nRecord-Route: sip:rr\r\n\r\n", OSN_SIP_WIRE_ANSWER,
             OSN_SIP_WIRE_ANSWER},
            {"SIP/2.0 503 Busy\r\nVia: SIP/2.0/UDP h.example.com;branch=z9hG4bKx\r\n"
             "From: <sip:b@example.com>;tag=1\r\nTo: <sip:a@example.com>;tag=2\r\nCall-ID: c1\r\n"
             "CSeq: 1 INVITE\r\nRetry-After: soon\r\n\r\n",
             OSN_SIP_WIRE_DROP, OSN_SIP_WIRE_DROP},
    };
    const char *const tags[] = {NULL, NULL, "t2", NULL, NULL, NULL,   NULL,
                                NULL, NULL, NULL, "t3", "t4", "[::1]"};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t n = strlen(cases[i].text);
        memcpy(BUF, cases[i].text, n);
        int vf = osn_sip_wire_parse_as(&M, BUF, n, OSN_SIP_WIRE_ROLE_FULL);
        int vp = osn_sip_wire_parse_as(&M2, BUF, n, OSN_SIP_WIRE_ROLE_PROXY);
        if (vf != cases[i].full || vp != cases[i].proxy)
            fail_msg("case %zu: full %d (%s), proxy %d (%s); expected %d, %d", i, vf,
                     osn_sip_wire_reason_name(M.err.reason), vp,
                     osn_sip_wire_reason_name(M2.err.reason), cases[i].full, cases[i].proxy);
        if (vf == OSN_SIP_WIRE_ACCEPT)
            proxy_agrees(&M, &M2);
        else if (vp != OSN_SIP_WIRE_ACCEPT) /* the same first fault, in the same line */
            assert_true(M.err.reason == M2.err.reason &&
                        line_of(&M, M.err.offset) == line_of(&M2, M2.err.offset));
        if (i < sizeof tags / sizeof tags[0] && tags[i])
            assert_span(M2.to.tag, tags[i]);
    }
    /* The first case, field by field: what the proxy read of the lines it does not decode. */
    size_t n = strlen(cases[0].text);
    memcpy(BUF, cases[0].text, n);
    assert_int_equal(osn_sip_wire_parse_as(&M2, BUF, n, OSN_SIP_WIRE_ROLE_PROXY), 0);
    assert_int_equal(M2.nhdr, 14);
    assert_int_equal(M2.hdr[5].id, OSN_SIP_HDR_CONTACT);
    assert_int_equal(M2.ncontact, 0);
    assert_int_equal(M2.nroute, 1);
    assert_int_equal(M2.nrecord_route, 1);
    assert_int_equal(M2.nproxy_require, 1);
    assert_span(M2.from.tag, "1");
    assert_null(M2.to.tag.p);
    assert_false(M2.retry_after.present);
    struct osn_sip_msg num;
    assert_int_equal(osn_sip_wire_to_txn(&M2, &num), 0);
    assert_int_equal(num.retry_after, -1);
    /* The response: its Retry-After as a full parse reads it; its numbers, too. */
    n = strlen(cases[1].text);
    memcpy(BUF, cases[1].text, n);
    assert_int_equal(osn_sip_wire_parse_as(&M2, BUF, n, OSN_SIP_WIRE_ROLE_PROXY), 0);
    assert_true(M2.retry_after.present);
    assert_int_equal(M2.retry_after.seconds, 18);
    assert_int_equal(M2.retry_after.duration, 60);
    assert_span(M2.retry_after.comment, "lunch");
    assert_int_equal(osn_sip_wire_to_txn(&M2, &num), 0);
    assert_int_equal(num.retry_after, 18);
    /* A proxy's forward of what it forwards without reading: the lines byte for byte. */
    n = strlen(cases[0].text);
    memcpy(BUF, cases[0].text, n);
    assert_int_equal(osn_sip_wire_parse_as(&M, BUF, n, OSN_SIP_WIRE_ROLE_PROXY), 0);
    int k = osn_sip_wire_print_forward_parsed(OUT, sizeof OUT, &M, &FWD, &M3);
    assert_true(k > 0);
    assert_non_null(strstr(OUT, "\r\nContact: sip:a@b?x=1\r\nContent-Type: a/b\r\nContent-Type: "
                                "c/d\r\nRequire: ,\r\nRetry-After: soon\r\n"));
    assert_int_equal(osn_sip_wire_parse_as(&M2, OUT, (size_t)k, OSN_SIP_WIRE_ROLE_PROXY), 0);
    same_parse(&M2, &M3);
    assert_true(osn_sip_wire_same(&M2, &M3));
    /* A full parse of the same bytes is another parse: not the same. */
    assert_int_equal(osn_sip_wire_parse_as(&M2, OUT, (size_t)k, OSN_SIP_WIRE_ROLE_FULL),
                     OSN_SIP_WIRE_ANSWER);
    memcpy(BUF, REQ_HEAD "CSeq: 1 OPTIONS\r\n\r\n", sizeof REQ_HEAD "CSeq: 1 OPTIONS\r\n\r\n");
    n = strlen(BUF);
    assert_int_equal(osn_sip_wire_parse_as(&M, BUF, n, OSN_SIP_WIRE_ROLE_PROXY), 0);
    assert_int_equal(osn_sip_wire_parse_as(&M2, BUF, n, OSN_SIP_WIRE_ROLE_FULL), 0);
    assert_false(osn_sip_wire_same(&M, &M2));
    assert_int_equal(osn_sip_wire_parse_as(&M, BUF, n, 2), OSN_EINVAL);
    assert_int_equal(osn_sip_wire_parse_as(&M, BUF, n, -1), OSN_EINVAL);
}

/* src/base/text.h, the writer under the printer: decimal and hex as snprintf writes them, and
 * nothing past the end of a buffer that is too small. */
static void test_text_writer(void **state)
{
    (void)state;
    const uint64_t xs[] = {0,         1,     9,           10,         15,
                           16,        99,    100,         255,        256,
                           65535,     65536, 4294967295u, 1ull << 32, 1234567890123ull,
                           UINT64_MAX};
    for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++)
        for (int width = 1; width <= 22; width += 3) {
            char want[96], got[96];
            unsigned long long x = xs[i];
            int k = snprintf(want, sizeof want, "%0*llu|%016llx|%llx|%llu", width, x, x, x, x);
            for (size_t cap = 0; cap <= (size_t)k + 1; cap++) {
                memset(got, '#', sizeof got);
                struct osn_text w = osn_text_at(got, cap);
                osn_text_dec(&w, xs[i], width);
                osn_text_put(&w, "|", 1);
                osn_text_hex(&w, xs[i], 16);
                osn_text_put(&w, "|", 1);
                osn_text_hex(&w, xs[i], 0); /* as few digits as it needs */
                osn_text_put(&w, "|", 1);
                osn_text_dec(&w, xs[i], 0);
                int n = osn_text_len(&w, got);
                if (cap < (size_t)k) {
                    assert_int_equal(n, -1);
                } else {
                    assert_int_equal(n, k);
                    assert_memory_equal(got, want, (size_t)k);
                }
                for (size_t j = cap; j < sizeof got; j++) /* nothing past the end */
                    assert_int_equal(got[j], '#');
            }
        }
}

static void test_print_response_fwd(void **state)
{
    (void)state;
    /* A 180 as it comes back through us: our Via on top of SIPp's. */
    assert_int_equal(parse_file("sipp", "sipp_uac_invite.sip", &M, BUF), 0);
    int n = osn_sip_wire_print_forward(OUT, sizeof OUT, &M, &FWD);
    assert_int_equal(osn_sip_wire_parse(&M2, OUT, (size_t)n), 0);
    struct osn_sip_reply r = {.status = 180, .to_tag = {"t9", 2}, .retry_after = -1};
    n = osn_sip_wire_print_reply(OUT2, sizeof OUT2, &M2, &r);
    assert_true(n > 0);
    assert_int_equal(osn_sip_wire_parse(&M3, OUT2, (size_t)n), 0);
    assert_int_equal(M3.nvia, 2);
    n = osn_sip_wire_print_response_fwd(OUT, sizeof OUT, &M3);
    assert_true(n > 0);
    assert_int_equal(osn_sip_wire_parse(&M2, OUT, (size_t)n), 0);
    assert_int_equal(M2.nvia, 1);
    assert_true(osn_span_eq(M2.via[0].value, M.via[0].value));
    assert_int_equal(M2.status, 180);
    assert_span(M2.to.tag, "t9");
    /* bcast's two Vias; wsinv-style two values on one line. */
    assert_int_equal(parse_file("rfc4475", "bcast.dat", &M, BUF), 0);
    n = osn_sip_wire_print_response_fwd(OUT, sizeof OUT, &M);
    assert_int_equal(osn_sip_wire_parse(&M2, OUT, (size_t)n), 0);
    assert_int_equal(M2.nvia, 1);
    assert_span(M2.via[0].host, "255.255.255.255");
    parse_str("SIP/2.0 200 OK\r\nVia: SIP/2.0/UDP a;branch=z9hG4bK1 , SIP/2.0/UDP b;branch=z9hG4bK2"
              "\r\nFrom: <sip:x@y>;tag=1\r\nTo: <sip:z@y>;tag=2\r\nCall-ID: c\r\nCSeq: 1 BYE\r\n"
              "Content-Length: 0\r\n\r\n");
    n = osn_sip_wire_print_response_fwd(OUT, sizeof OUT, &M);
    assert_int_equal(osn_sip_wire_parse(&M2, OUT, (size_t)n), 0);
    assert_int_equal(M2.nvia, 1);
    assert_span(M2.via[0].branch, "z9hG4bK2");
    /* A response with only our Via is not forwarded. */
    assert_int_equal(parse_file("sipp", "sipp_uas_180.sip", &M, BUF), 0);
    assert_int_equal(osn_sip_wire_print_response_fwd(OUT, sizeof OUT, &M), OSN_EINVAL);
}

/* The server half's feedback in a relayed response: our Via goes, the next one loses its own
 * oc parameters and gets ours; a third value on the same line and the other lines stay. */
static void test_print_response_fwd_oc(void **state)
{
    (void)state;
    struct osn_sip_oc oc = {.flags = OSN_SIP_OC_PRESENT | OSN_SIP_OC_VALUE | OSN_SIP_OC_ALGO |
                                     OSN_SIP_OC_VALIDITY,
                            .algo = OSN_SIP_ALGO_LOSS,
                            .value = 37,
                            .validity_ms = 500};
    parse_str("SIP/2.0 200 OK\r\nVia: SIP/2.0/UDP us;branch=z9hG4bK0\r\n"
              "Via: SIP/2.0/UDP edge;branch=z9hG4bK1;oc=5;oc-algo=\"loss\" , SIP/2.0/UDP uac;"
              "branch=z9hG4bK2\r\nFrom: <sip:x@y>;tag=1\r\nTo: <sip:z@y>;tag=2\r\nCall-ID: c\r\n"
              "CSeq: 1 INVITE\r\nContent-Length: 0\r\n\r\n");
    int n = osn_sip_wire_print_response_fwd_oc(OUT, sizeof OUT, &M, &oc);
    assert_true(n > 0);
    assert_int_equal(osn_sip_wire_parse(&M2, OUT, (size_t)n), 0);
    assert_int_equal(M2.nvia, 2);
    assert_span(M2.via[0].branch, "z9hG4bK1");
    assert_int_equal(M2.via[0].oc.value, 37);
    assert_int_equal(M2.via[0].oc.validity_ms, 500);
    assert_span(M2.via[1].branch, "z9hG4bK2");
    assert_int_equal(M2.via[1].oc.flags, 0);
    assert_span(M2.call_id, "c");
    /* Without oc it is the plain forwarder's job. */
    assert_int_equal(osn_sip_wire_print_response_fwd_oc(OUT, sizeof OUT, &M, NULL), OSN_EINVAL);
}

static void test_print_replies(void **state)
{
    (void)state;
    static const int codes[] = {100, 180, 200, 400, 408, 483, 500, 503};
    assert_int_equal(parse_file("rfc4475", "wsinv.dat", &M, BUF), 0);
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        struct osn_sip_reply r = {.status = (uint16_t)codes[i],
                                  .to_tag = {"newtag", 6},
                                  .retry_after = codes[i] == 503 ? 17 : -1};
        int n = osn_sip_wire_print_reply(OUT, sizeof OUT, &M, &r);
        assert_true(n > 0);
        assert_int_equal(osn_sip_wire_parse(&M2, OUT, (size_t)n), OSN_SIP_WIRE_ACCEPT);
        assert_int_equal(M2.status, codes[i]);
        assert_false(M2.is_request);
        assert_int_equal(M2.nvia, 3);
        for (int k = 0; k < 3; k++)
            assert_true(osn_span_eq(M2.via[k].value, M.via[k].value));
        assert_true(osn_span_eq(M2.call_id, M.call_id));
        assert_true(osn_span_eq(M2.from.tag, M.from.tag));
        assert_span(M2.to.tag, "1918181833n"); /* wsinv's To has a tag already */
        assert_int_equal(M2.cseq, 9);
        assert_int_equal(M2.method, OSN_SIP_INVITE);
        assert_int_equal(M2.content_length, 0);
        assert_true(is(M2.reason_phrase, osn_sip_reason_phrase(codes[i])));
        assert_int_equal(M2.retry_after.present, codes[i] == 503);
        if (codes[i] == 503)
            assert_int_equal(M2.retry_after.seconds, 17);
        for (int cap = 0; cap < n; cap += 5)
            assert_int_equal(osn_sip_wire_print_reply(OUT2, (size_t)cap, &M, &r), OSN_ETOOBIG);
    }
    /* 200 with a To tag added; 100 without (RFC 3261 8.2.6.2). */
    assert_int_equal(parse_file("sipp", "sipp_uac_invite.sip", &M, BUF), 0);
    struct osn_sip_reply r = {.status = 200, .to_tag = {"abc", 3}, .retry_after = -1};
    int n = osn_sip_wire_print_reply(OUT, sizeof OUT, &M, &r);
    assert_int_equal(osn_sip_wire_parse(&M2, OUT, (size_t)n), 0);
    assert_span(M2.to.tag, "abc");
    assert_span(M2.to.display, "service");
    r.status = 100;
    n = osn_sip_wire_print_reply(OUT, sizeof OUT, &M, &r);
    assert_int_equal(osn_sip_wire_parse(&M2, OUT, (size_t)n), 0);
    assert_int_equal((int)M2.to.tag.n, 0);
    /* RFC 7339: a 503 with the server's oc state in the top Via, the request's oc gone. */
    parse_str("INVITE sip:a@example.com SIP/2.0\r\n"
              "Via: SIP/2.0/UDP p1.example.net;branch=z9hG4bK2d4790.1;oc;oc-algo=\"loss,A\";x=1\r\n"
              "From: <sip:b@example.com>;tag=1\r\nTo: <sip:a@example.com>\r\nCall-ID: c1\r\n"
              "CSeq: 1 INVITE\r\nMax-Forwards: 70\r\n\r\n");
    assert_int_equal(M.err.reason, 0);
    assert_int_equal(M.via[0].oc.flags, OSN_SIP_OC_PRESENT | OSN_SIP_OC_ALGO);
    assert_int_equal(M.via[0].oc.algo, OSN_SIP_ALGO_LOSS);
    struct osn_sip_reply r503 = {.status = 503,
                                 .retry_after = 5,
                                 .oc = {.flags = OSN_SIP_OC_PRESENT | OSN_SIP_OC_VALUE |
                                                 OSN_SIP_OC_VALIDITY | OSN_SIP_OC_SEQ |
                                                 OSN_SIP_OC_ALGO,
                                        .algo = OSN_SIP_ALGO_LOSS,
                                        .value = 20,
                                        .validity_ms = 500,
                                        .seq_int = 1282321615,
                                        .seq_frac = 78200}};
    n = osn_sip_wire_print_reply(OUT, sizeof OUT, &M, &r503);
    assert_int_equal(osn_sip_wire_parse(&M2, OUT, (size_t)n), 0);
    struct osn_sip_msg num;
    assert_int_equal(osn_sip_wire_to_txn(&M2, &num), 0);
    assert_int_equal(num.status, 503);
    assert_int_equal(num.retry_after, 5);
    assert_int_equal(num.oc.flags, r503.oc.flags);
    assert_int_equal(num.oc.value, 20);
    assert_int_equal(num.oc.validity_ms, 500);
    assert_true(num.oc.seq_int == 1282321615u);
    assert_int_equal(num.oc.seq_frac, 78200);
    assert_int_equal(osn_sip_oc_seq_cmp(&num.oc, &r503.oc), 0);
    assert_span(M2.via[0].branch, "z9hG4bK2d4790.1");
    assert_span(M2.via[0].oc_algo, "loss");
    assert_non_null(strstr(OUT, ";x=1"));
    /* The numbers as text, against literals: the oc-seq fraction in five digits with its leading
     * zeros (RFC 7339 4.4 orders ".00042" below ".1"), zero as "0", the Retry-After. */
    assert_non_null(strstr(OUT, ";oc=20;oc-validity=500;oc-seq=1282321615.78200;oc-algo=\"loss\""));
    assert_non_null(strstr(OUT, "\r\nRetry-After: 5\r\n"));
    r503.oc.value = 0;
    r503.oc.seq_int = 0;
    r503.oc.seq_frac = 42;
    r503.retry_after = 4294967295;
    n = osn_sip_wire_print_reply(OUT, sizeof OUT, &M, &r503);
    assert_true(n > 0);
    assert_non_null(strstr(OUT, ";oc=0;oc-validity=500;oc-seq=0.00042;"));
    assert_non_null(strstr(OUT, "\r\nRetry-After: 4294967295\r\n"));
    /* A malformed but answerable request gets its 400 (4475 3.3.1: even without From/To). */
    for (size_t i = 0; i < N4475; i++) {
        if (RFC4475[i].verdict != OSN_SIP_WIRE_ANSWER)
            continue;
        parse_file("rfc4475", RFC4475[i].file, &M, BUF);
        struct osn_sip_reply bad = {.status = M.err.answer, .retry_after = -1};
        n = osn_sip_wire_print_reply(OUT, sizeof OUT, &M, &bad);
        assert_true(n > 0);
        /* It may lack what the request lacked (3.3.1 has no From or To to copy). */
        (void)osn_sip_wire_parse(&M2, OUT, (size_t)n);
        assert_int_equal(M2.status, M.err.answer);
        assert_true(M2.nvia >= 1);
        /* The phrase names the problem (RFC 3261 21.4.1), and every header line sent back is
         * one of the request's that ended before its first error, or a Via line without the
         * error: nothing broken is echoed. */
        assert_non_null(strstr(OUT, osn_sip_wire_reason_name(M.err.reason)));
        const char *line = strstr(OUT, "\r\n") + 2, *end;
        for (; (end = strstr(line, "\r\n")) && end > line; line = end + 2) {
            size_t len = (size_t)(end - line);
            if (strncmp(line, "Content-Length: 0", len) == 0)
                continue; /* ours */
            bool via = strncmp(line, "Via:", 4) == 0 || strncmp(line, "v:", 2) == 0;
            const char *limit = via ? M.buf.p + M.buf.n : M.buf.p + M.err.offset;
            bool found = false;
            for (const char *p = M.buf.p; !found && p + len <= limit; p++)
                found = memcmp(p, line, len) == 0 &&
                        !(p <= M.buf.p + M.err.offset && M.buf.p + M.err.offset < p + len);
            if (!found)
                fail_msg("%s: the 400 echoes '%.*s', not a line before the error at %u",
                         RFC4475[i].file, (int)len, line, M.err.offset);
        }
    }
}

/* zeromf (3.3.11): the proxy answers 483 instead of forwarding. */
static void test_print_483(void **state)
{
    (void)state;
    assert_int_equal(parse_file("rfc4475", "zeromf.dat", &M, BUF), 0);
    struct osn_sip_reply r = {.status = 483, .to_tag = {"p", 1}, .retry_after = -1};
    int n = osn_sip_wire_print_reply(OUT, sizeof OUT, &M, &r);
    assert_int_equal(osn_sip_wire_parse(&M2, OUT, (size_t)n), 0);
    assert_int_equal(M2.status, 483);
    assert_true(is(M2.reason_phrase, "Too Many Hops"));
}

static void test_print_ack(void **state)
{
    (void)state;
    assert_int_equal(parse_file("rfc4475", "wsinv.dat", &M, BUF), 0);
    struct osn_sip_reply r = {.status = 486, .to_tag = {"q", 1}, .retry_after = -1};
    int n = osn_sip_wire_print_reply(OUT2, sizeof OUT2, &M, &r);
    assert_int_equal(osn_sip_wire_parse(&M2, OUT2, (size_t)n), 0);
    n = osn_sip_wire_print_ack(OUT, sizeof OUT, &M, &M2);
    assert_true(n > 0);
    assert_int_equal(osn_sip_wire_parse(&M3, OUT, (size_t)n), 0);
    assert_int_equal(M3.method, OSN_SIP_ACK);
    assert_true(osn_span_eq(M3.uri, M.uri));
    assert_int_equal(M3.nvia, 1);
    assert_true(osn_span_eq(M3.via[0].value, M.via[0].value));
    assert_int_equal(M3.cseq, 9);
    assert_int_equal(M3.cseq_method, OSN_SIP_ACK);
    assert_true(osn_span_eq(M3.to.tag, M2.to.tag));
    assert_true(osn_span_eq(M3.from.tag, M.from.tag));
    assert_int_equal(M3.nroute, 1);
    assert_int_equal(M3.max_forwards, 68);
    /* Not for a 2xx (that ACK is the TU's, 13.2.2.4), not for a non-INVITE. */
    r.status = 200;
    n = osn_sip_wire_print_reply(OUT2, sizeof OUT2, &M, &r);
    osn_sip_wire_parse(&M2, OUT2, (size_t)n);
    assert_int_equal(osn_sip_wire_print_ack(OUT, sizeof OUT, &M, &M2), OSN_EINVAL);
}

/* Every printer's output from a packed copy (osn_sip_wire_pack) and from the parse it was made
 * of, for every accepted RFC 4475 and SIPp message: byte for byte the same after the original
 * datagram is overwritten (so no span still points into it); the same identities; and the copy
 * a small fraction of the parser's struct. */
static char OUT3[MAXMSG];

static void printed_pair(const struct osn_sip_wire *m, int which, char *out, int *n)
{
    struct osn_sip_reply r = {.status = 503, .to_tag = {"t1", 2}, .retry_after = 7};
    struct osn_sip_fwd f = {.transport = {"UDP", 3},
                            .host = {"10.0.0.1", 8},
                            .port = 5070,
                            .branch = {"z9hG4bKpack", 11},
                            .pop_route = true};
    struct osn_sip_oc oc = {.flags = OSN_SIP_OC_PRESENT | OSN_SIP_OC_VALUE, .value = 20};
    switch (which) {
    case 0:
        r.status = 100;
        *n = osn_sip_wire_print_reply(out, MAXMSG, m, &r);
        break;
    case 1:
        *n = osn_sip_wire_print_reply(out, MAXMSG, m, &r);
        break;
    case 2:
        *n = m->is_request ? osn_sip_wire_print_forward(out, MAXMSG, m, &f)
                           : osn_sip_wire_print_response_fwd_oc(out, MAXMSG, m, &oc);
        break;
    }
}

static void pack_one(const char *dir, const char *file, size_t *size)
{
    size_t len = load(dir, file, BUF);
    if (osn_sip_wire_parse(&M, BUF, len) != OSN_SIP_WIRE_ACCEPT)
        return;
    struct osn_sip_msg want = {0}, got = {0};
    struct osn_sip_wire_key kw, kg;
    assert_int_equal(osn_sip_wire_to_txn(&M, &want), 0);
    char keytext[4096];
    assert_int_equal(osn_sip_wire_key_of(&M, &kg), 0);
    assert_true(osn_sip_wire_key_copy(&kw, keytext, sizeof keytext, &kg) >= 0);
    char *ref = malloc(3 * (size_t)MAXMSG);
    int nref[3];
    for (int w = 0; w < 3; w++)
        printed_pair(&M, w, ref + w * MAXMSG, &nref[w]);
    *size = osn_sip_wire_packed_size(&M);
    char *block = malloc(*size);
    const struct osn_sip_wire *c = osn_sip_wire_pack(block, &M);
    assert_ptr_equal(c, block);
    memset(BUF, 'X', sizeof BUF); /* the datagram is gone */
    memset(&M, 0xa5, sizeof M);   /* and so is the parse */
    assert_int_equal(c->buf.n, len);
    assert_ptr_equal(c->buf.p, block + *size - len - 1);
    for (int i = 0; i < c->nhdr; i++)
        assert_true(c->hdr[i].line.p >= c->buf.p && c->hdr[i].line.p < c->buf.p + len);
    for (int w = 0; w < 3; w++) {
        int n;
        printed_pair(c, w, OUT3, &n);
        if (n != nref[w] || (n > 0 && memcmp(OUT3, ref + w * MAXMSG, (size_t)n)))
            fail_msg("%s: printer %d differs from the packed copy (%d vs %d bytes)", file, w, n,
                     nref[w]);
    }
    assert_int_equal(osn_sip_wire_to_txn(c, &got), 0);
    assert_true(got.branch == want.branch && got.sent_by == want.sent_by &&
                got.call_id == want.call_id && got.from_tag == want.from_tag &&
                got.to_tag == want.to_tag && got.cseq == want.cseq && got.method == want.method &&
                got.status == want.status);
    assert_int_equal(osn_sip_wire_key_of(c, &kg), 0);
    assert_true(osn_sip_wire_key_eq(&kw, &kg));
    assert_true(osn_span_eq(kg.call_id, kw.call_id) || !kw.call_id.p);
    /* Every span of the copy points into its bytes, an empty body at their very end too. */
    assert_true(!c->body.p || (c->body.p >= c->buf.p && c->body.p + c->body.n <= c->buf.p + len));
    assert_true(c->head.p >= c->buf.p && c->head.p + c->head.n <= c->buf.p + len);
    free(block);
    free(ref);
}

static void test_pack(void **state)
{
    (void)state;
    size_t size, packed = 0;
    for (size_t i = 0; i < N4475; i++)
        if (RFC4475[i].verdict == OSN_SIP_WIRE_ACCEPT)
            pack_one("rfc4475", RFC4475[i].file, &size), packed++;
    for (size_t i = 0; i < NSIPP; i++)
        pack_one("sipp", SIPP[i], &size), packed++;
    assert_int_equal(packed, 28 + NSIPP);
    /* SIPp's INVITE (15 header lines, 130 octets of body): its copy is its bytes plus its
     * fields and lists, under 2 KB, against about 31 KB for the parser's struct. */
    pack_one("sipp", "sipp_uac_invite.sip", &size);
    assert_true(size < 2048);
    assert_true(sizeof(struct osn_sip_wire) > 30000);
    assert_null(osn_sip_wire_pack(NULL, &M2));
    assert_int_equal(osn_sip_wire_parse(&M2, "garbage", 7), OSN_SIP_WIRE_DROP);
    char block[64];
    assert_null(osn_sip_wire_pack(block, &M2)); /* not accepted: nothing to keep */
}

static void test_names(void **state)
{
    (void)state;
    const char *compact = "vifmtlckseour";
    const int ids[] = {OSN_SIP_HDR_VIA,          OSN_SIP_HDR_CALL_ID,
                       OSN_SIP_HDR_FROM,         OSN_SIP_HDR_CONTACT,
                       OSN_SIP_HDR_TO,           OSN_SIP_HDR_CONTENT_LENGTH,
                       OSN_SIP_HDR_CONTENT_TYPE, OSN_SIP_HDR_SUPPORTED,
                       OSN_SIP_HDR_SUBJECT,      OSN_SIP_HDR_CONTENT_ENCODING,
                       OSN_SIP_HDR_EVENT,        OSN_SIP_HDR_ALLOW_EVENTS,
                       OSN_SIP_HDR_REFER_TO};
    for (int i = 0; compact[i]; i++) {
        char up = (char)(compact[i] - 32);
        assert_int_equal(osn_sip_hdr_id(&compact[i], 1), ids[i]);
        assert_int_equal(osn_sip_hdr_id(&up, 1), ids[i]);
    }
    for (int id = 1; id < OSN_SIP_NHDRS; id++) {
        const char *name = osn_sip_hdr_name(id);
        assert_int_equal(osn_sip_hdr_id(name, strlen(name)), id);
    }
    /* Every long name with one byte changed to each token character or its case flipped,
     * against a plain case-insensitive search of the names (the lookup reads words, not bytes). */
    static const char tok[] = "-.!%*_+`'~azAZ09kK";
    for (int id = 1; id < OSN_SIP_NHDRS; id++) {
        const char *name = osn_sip_hdr_name(id);
        size_t n = strlen(name);
        char v[32];
        for (size_t i = 0; i < n; i++) {
            for (size_t t = 0; t <= sizeof tok - 1; t++) {
                memcpy(v, name, n);
                if (t == sizeof tok - 1 && !isalpha((unsigned char)name[i]))
                    continue; /* a case flip of '-' is CR, no token character */
                v[i] = t < sizeof tok - 1 ? tok[t] : (char)(name[i] ^ 0x20);
                int want = OSN_SIP_HDR_OTHER;
                for (int j = 1; j < OSN_SIP_NHDRS; j++)
                    if (strlen(osn_sip_hdr_name(j)) == n && !strncasecmp(osn_sip_hdr_name(j), v, n))
                        want = j;
                if (n == 1)
                    continue; /* compact forms: above */
                if (osn_sip_hdr_id(v, n) != want)
                    fail_msg("'%.*s': id %d, not %d", (int)n, v, osn_sip_hdr_id(v, n), want);
            }
        }
    }
    assert_int_equal(osn_sip_hdr_id("mAX-fORWARDS", 12), OSN_SIP_HDR_MAX_FORWARDS);
    assert_int_equal(osn_sip_hdr_id("Max-Forward", 11), OSN_SIP_HDR_OTHER);
    assert_int_equal(osn_sip_hdr_id("C%6Fntact", 9), OSN_SIP_HDR_OTHER);
    assert_int_equal(osn_sip_method_of("invite", 6), OSN_SIP_OTHER); /* case-sensitive */
    for (int r = 0; r < OSN_SIP_WIRE_NREASONS; r++)
        assert_true(strcmp(osn_sip_wire_reason_name(r), "?") != 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_rfc4475_verdicts),
            cmocka_unit_test(test_wsinv),
            cmocka_unit_test(test_rfc4475_valid_fields),
            cmocka_unit_test(test_sipp_messages),
            cmocka_unit_test(test_via_and_friends),
            cmocka_unit_test(test_keyword_case),
            cmocka_unit_test(test_prefixes),
            cmocka_unit_test(test_bounds),
            cmocka_unit_test(test_scan_positions),
            cmocka_unit_test(test_long_scans),
            cmocka_unit_test(test_caps),
            cmocka_unit_test(test_siphash_vector),
            cmocka_unit_test(test_identities),
            cmocka_unit_test(test_own_branch),
            cmocka_unit_test(test_uri_scan),
            cmocka_unit_test(test_sent_by_memo),
            cmocka_unit_test(test_keys_and_table),
            cmocka_unit_test(test_rfc2543),
            cmocka_unit_test(test_print_forward),
            cmocka_unit_test(test_print_forward_own_via),
            cmocka_unit_test(test_forward_parsed),
            cmocka_unit_test(test_rfc4475_proxy_verdicts),
            cmocka_unit_test(test_proxy_role),
            cmocka_unit_test(test_text_writer),
            cmocka_unit_test(test_print_response_fwd),
            cmocka_unit_test(test_print_response_fwd_oc),
            cmocka_unit_test(test_print_replies),
            cmocka_unit_test(test_print_483),
            cmocka_unit_test(test_print_ack),
            cmocka_unit_test(test_names),
            cmocka_unit_test(test_pack),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * Differential test of the SIP parser (osn/sip_wire.h) against libosip2 (Debian libosip2-dev,
 * LGPL-2.1+), which is linked into this test only, never into osn. Over the RFC 4475 messages
 * and the fuzzer's seed corpus (fuzz/corpus/), both parse each message; where both accept, the
 * top Via branch and sent-by (host, IPv6 brackets aside, and port), Call-ID, CSeq number and
 * method, From and To tags, Max-Forwards and Content-Length must agree. Given a file name, it
 * compares that one message instead (exit 0 when both accept it and agree). Every disagreement, in
 * verdict or in a field, must be one listed in KNOWN below with its explanation, and every listed
 * one must still happen, so that the list stays the truth.
 *
 * libosip2 refuses many of RFC 4475's invalid messages itself; the ten it accepts are where it
 * does not check a rule (version, CSeq range and method, Content-Length sign, mandatory
 * headers, URI headers): there we answer 400 (505) or drop. Two valid messages it refuses, and
 * one field (Content-Length of a message without one) it reports differently.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <dirent.h>
#include <osipparser2/osip_parser.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "osn/sip_wire.h"

/* What differs, for one file. */
enum { ONLY_OSIP = 1, ONLY_OURS = 2, FIELD = 3 };

struct known {
    const char *file; /* name in fuzz/corpus/ */
    int kind;
    const char *field; /* FIELD: which */
    const char *why;
};

static const struct known KNOWN[] = {
        {"rfc4475_ncl.sip", ONLY_OSIP, NULL,
         "Content-Length -999: libosip2 keeps the text and takes the rest as body; 4475 3.1.2.3 "
         "asks for a 400"},
        {"rfc4475_scalar02.sip", ONLY_OSIP, NULL,
         "CSeq 36893488147419103232 (> 2^64): libosip2 keeps the number as text; RFC 3261 "
         "8.1.1.5 says 32 bits, 4475 3.1.2.4 asks for a 400"},
        {"rfc4475_scalarlg.sip", ONLY_OSIP, NULL,
         "a response with an overlarge CSeq and Retry-After: kept as text by libosip2; 4475 "
         "3.1.2.5 has it discarded"},
        {"rfc4475_escruri.sip", ONLY_OSIP, NULL,
         "escaped headers in a SIP Request-URI: libosip2 accepts; we take the RFC's reject "
         "option (4475 3.1.2.11 allows ignoring them)"},
        {"rfc4475_regbadct.sip", ONLY_OSIP, NULL,
         "Contact URI with '?' outside <>: libosip2 reads the rest as URI headers; RFC 3261 "
         "20.10 requires <>, 4475 3.1.2.13 a 400"},
        {"rfc4475_badvers.sip", ONLY_OSIP, NULL,
         "SIP/7.0: libosip2 does not check the version; 4475 3.1.2.16 asks for a 505 Version "
         "Not Supported"},
        {"rfc4475_mismatch01.sip", ONLY_OSIP, NULL,
         "CSeq method differs from the request's: libosip2 does not compare them; RFC 3261 "
         "8.1.1.5, 4475 3.1.2.17 ask for a 400"},
        {"rfc4475_mismatch02.sip", ONLY_OSIP, NULL, "as mismatch01 (4475 3.1.2.18)"},
        {"rfc4475_insuf.sip", ONLY_OSIP, NULL,
         "no From, To, Call-ID: libosip2's parser does not require them (its transaction layer "
         "would refuse the message later); 4475 3.3.1 asks for a 400"},
        {"rfc4475_bigcode.sip", ONLY_OSIP, NULL,
         "status code 4294967301: libosip2 reads it with atoi-style code; 4475 3.1.2.19 has it "
         "discarded"},
        {"rfc4475_intmeth.sip", ONLY_OURS, NULL,
         "To's display name holds quoted-pair escapes of BEL, NUL and DEL, valid per RFC 3261 "
         "25.1 (quoted-pair = \"\\\" %x00-09 / ...) and 4475 3.1.1.2; libosip2 works on "
         "NUL-terminated strings and loses the header end at the NUL"},
        {"rfc4475_novelsc.sip", ONLY_OURS, NULL,
         "Request-URI soap.beep://...: a valid scheme (RFC 3986 3.1 allows '.'), 4475 3.3.3 "
         "calls the message valid; libosip2's URI parser refuses the scheme"},
        {"rfc4475_inv2543.sip", FIELD, "content-length",
         "no Content-Length header (RFC 2543, UDP): we report it absent (-1) and take the rest "
         "of the datagram as body (RFC 3261 18.3); libosip2 makes one up from the body length"},
};
#define NKNOWN (sizeof KNOWN / sizeof KNOWN[0])

static struct osn_sip_wire M;

static bool eq_str(struct osn_span s, const char *c)
{
    if (!c)
        return s.p == NULL || s.n == 0;
    return s.n == strlen(c) && memcmp(s.p, c, s.n) == 0;
}

/* Compares the fields of an accepted message; returns the first that differs, or NULL. */
static const char *compare(const osip_message_t *sip)
{
    osip_via_t *via = NULL;
    osip_generic_param_t *br = NULL, *tag = NULL;
    if (osip_message_get_via(sip, 0, &via) < 0 || !via)
        return "via";
    osip_via_param_get_byname(via, "branch", &br);
    if (!eq_str(M.via[0].branch, br ? br->gvalue : NULL))
        return "branch";
    /* The sent-by: libosip2 keeps an IPv6 host without its brackets, we keep the text. */
    struct osn_span host = M.via[0].host;
    if (host.n >= 2 && host.p[0] == '[' && host.p[host.n - 1] == ']')
        host = (struct osn_span){host.p + 1, host.n - 2};
    if (!eq_str(host, via->host))
        return "via-host";
    if ((via->port ? atoi(via->port) : 0) != M.via[0].port)
        return "via-port";
    char *cid = NULL;
    if (osip_call_id_to_str(osip_message_get_call_id(sip), &cid) != 0)
        return "call-id";
    bool ok = eq_str(M.call_id, cid);
    osip_free(cid);
    if (!ok)
        return "call-id";
    const osip_cseq_t *cs = osip_message_get_cseq(sip);
    if (!cs || !cs->number || strtoull(cs->number, NULL, 10) != M.cseq)
        return "cseq";
    if (!eq_str(M.cseq_method_name, cs->method))
        return "cseq-method";
    tag = NULL;
    osip_from_get_tag(osip_message_get_from(sip), &tag);
    if (!eq_str(M.from.tag, tag ? tag->gvalue : NULL))
        return "from-tag";
    tag = NULL;
    osip_to_get_tag(osip_message_get_to(sip), &tag);
    if (!eq_str(M.to.tag, tag ? tag->gvalue : NULL))
        return "to-tag";
    osip_header_t *mf = NULL;
    osip_message_get_max_forwards(sip, 0, &mf);
    if ((mf && mf->hvalue ? atoi(mf->hvalue) : -1) != M.max_forwards)
        return "max-forwards";
    const osip_content_length_t *cl = osip_message_get_content_length(sip);
    if ((cl && cl->value ? atoi(cl->value) : -1) != M.content_length)
        return "content-length";
    return NULL;
}

static int cmp_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_differential(void **state)
{
    (void)state;
    char dir[512];
    snprintf(dir, sizeof dir, "%s/fuzz/corpus", OSN_SOURCE_DIR);
    DIR *d = opendir(dir);
    assert_non_null(d);
    char *names[1024];
    int nn = 0;
    struct dirent *e;
    while ((e = readdir(d)) && nn < 1024)
        if (e->d_name[0] != '.' && strstr(e->d_name, ".sip"))
            names[nn++] = strdup(e->d_name);
    closedir(d);
    qsort(names, (size_t)nn, sizeof names[0], cmp_names);
    assert_true(nn >= 50 + 6); /* RFC 4475 and SIPp, at least */

    bool seen[NKNOWN] = {false};
    int both = 0, unexplained = 0;
    static char buf[70000];
    for (int i = 0; i < nn; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        FILE *f = fopen(path, "rb");
        assert_non_null(f);
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = '\0';
        bool ours = osn_sip_wire_parse(&M, buf, n) == OSN_SIP_WIRE_ACCEPT;
        osip_message_t *sip = NULL;
        osip_message_init(&sip);
        bool theirs = osip_message_parse(sip, buf, n) == OSIP_SUCCESS;
        int kind = 0;
        const char *field = NULL;
        if (ours && theirs) {
            both++;
            field = compare(sip);
            kind = field ? FIELD : 0;
        } else if (ours != theirs)
            kind = theirs ? ONLY_OSIP : ONLY_OURS;
        osip_message_free(sip);
        if (!kind)
            continue;
        size_t k = 0;
        while (k < NKNOWN && !(strcmp(KNOWN[k].file, names[i]) == 0 && KNOWN[k].kind == kind &&
                               (kind != FIELD || strcmp(KNOWN[k].field, field) == 0)))
            k++;
        if (k == NKNOWN) {
            print_error("unexplained: %s: %s %s (ours: %s)\n", names[i],
                        kind == ONLY_OSIP   ? "only libosip2 accepts"
                        : kind == ONLY_OURS ? "only we accept"
                                            : "field differs:",
                        field ? field : "", osn_sip_wire_reason_name(M.err.reason));
            unexplained++;
        } else
            seen[k] = true;
    }
    for (size_t k = 0; k < NKNOWN; k++)
        if (!seen[k]) {
            print_error("listed but no longer seen: %s\n", KNOWN[k].file);
            unexplained++;
        }
    print_message("%d messages, %d accepted by both and equal in every compared field, %zu "
                  "listed disagreements\n",
                  nn, both, NKNOWN);
    for (int i = 0; i < nn; i++)
        free(names[i]);
    assert_int_equal(unexplained, 0);
}

/* One message, from a file: both parsers must accept it and agree on every compared field
 * (tests/node/ipv6.py gives it what the node forwarded over IPv6). Prints the top Via. */
static int one_file(const char *path)
{
    static char buf[70000];
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return 2;
    }
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    bool ours = osn_sip_wire_parse(&M, buf, n) == OSN_SIP_WIRE_ACCEPT;
    osip_message_t *sip = NULL;
    osip_message_init(&sip);
    bool theirs = osip_message_parse(sip, buf, n) == OSIP_SUCCESS;
    const char *field = ours && theirs ? compare(sip) : NULL;
    osip_via_t *via = NULL;
    if (theirs)
        osip_message_get_via(sip, 0, &via);
    printf("ours: %s, top Via sent-by %.*s port %u; libosip2: %s, host %s port %s; %s\n",
           ours ? "accepted" : osn_sip_wire_reason_name(M.err.reason),
           ours ? (int)M.via[0].host.n : 0, ours ? M.via[0].host.p : "", ours ? M.via[0].port : 0,
           theirs ? "accepted" : "refused", via && via->host ? via->host : "-",
           via && via->port ? via->port : "-",
           !ours || !theirs ? "not both accepted"
           : field          ? field
                            : "every field agrees");
    osip_message_free(sip);
    return ours && theirs && !field ? 0 : 1;
}

int main(int argc, char **argv)
{
    parser_init();
    if (argc == 2)
        return one_file(argv[1]);
    /* libosip2 logs each refusal on stderr ("| ERROR | ..."): noise, not a failure. */
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_differential),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * libFuzzer target for the SIP message parser, identities and printer (osn/sip_wire.h), built
 * with clang-16 -fsanitize=fuzzer,address,undefined (scripts/fuzz.sh, `make fuzz`). Each input
 * is one datagram. Beyond "no crash, no out-of-bounds read, no undefined behaviour", it checks
 * the round-trip invariants the printer promises:
 *
 *   - a verdict is one of accept / answer / drop, and "answer" carries 400 or 505;
 *   - an answerable request gets its answer printed, and that answer parses with the status;
 *   - an accepted message has identities, and its text key equals itself after a copy;
 *   - an accepted request forwarded (our Via, Max-Forwards - 1, top Route popped) parses back
 *     with every Via value, Call-ID, CSeq, tags, Request-URI and body unchanged;
 *   - a 200 (with To tag) and a 503 (Retry-After, oc state in the top Via) to it parse back with
 *     the request's Vias, Call-ID, CSeq and From tag, and the oc numbers we put in;
 *   - an accepted response with two Vias or more forwarded upstream parses back without its top
 *     Via value;
 *   - a proxy's parse (OSN_SIP_WIRE_ROLE_PROXY) accepts what the full parse accepts, with the
 *     same value in every field it fills, and of a request it forwards derives the parse a
 *     proxy's parse of the printed bytes gives (the debug check in print.c, on in this build).
 *
 * A broken invariant calls abort(), which libFuzzer reports as a crash with the input saved.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "osn/sip_wire.h"

static struct osn_sip_wire m, m2, pm, fm;
static char out[2 * OSN_SIP_WIRE_MAX_LEN + 4096];

#define CHECK(x)                                                                    \
    do {                                                                            \
        if (!(x)) {                                                                 \
            fprintf(stderr, "fuzz_sip.c:%d: broken invariant: %s\n", __LINE__, #x); \
            abort();                                                                \
        }                                                                           \
    } while (0)

/* Whether the printed message is one the parser can hold: not over a datagram, and room for
 * the header line and Via value the printer adds. */
static bool fits(int n)
{
    return n > 0 && n <= OSN_SIP_WIRE_MAX_LEN && m.nhdr + 2 < OSN_SIP_WIRE_MAX_HDRS &&
           m.nvia + 1 < OSN_SIP_WIRE_MAX_VIAS;
}

static void check_answer(const struct osn_sip_reply *r)
{
    int n = osn_sip_wire_print_reply(out, sizeof out, &m, r);
    CHECK(n > 0);
    if (!fits(n))
        return;
    int v = osn_sip_wire_parse(&m2, out, (size_t)n);
    CHECK(v >= 0);
    CHECK(m2.status == r->status && !m2.is_request);
    if (m.err.verdict != OSN_SIP_WIRE_ACCEPT)
        return; /* the answer copies the request's broken lines: no more to check */
    CHECK(v == OSN_SIP_WIRE_ACCEPT);
    CHECK(m2.nvia == m.nvia);
    for (int i = r->oc.flags ? 1 : 0; i < m.nvia; i++)
        CHECK(osn_span_eq(m2.via[i].value, m.via[i].value));
    CHECK(osn_span_eq(m2.via[0].branch, m.via[0].branch));
    CHECK(osn_span_eq(m2.call_id, m.call_id));
    CHECK(m2.cseq == m.cseq && osn_span_eq(m2.cseq_method_name, m.cseq_method_name));
    CHECK(osn_span_eq(m2.from.tag, m.from.tag));
    if (m.to.tag.p || r->status == 100)
        CHECK(osn_span_eq(m2.to.tag, m.to.tag));
    else
        CHECK(osn_span_eq(m2.to.tag, r->to_tag));
    CHECK(m2.retry_after.present == (r->retry_after >= 0));
    if (r->oc.flags) {
        struct osn_sip_msg num;
        CHECK(osn_sip_wire_to_txn(&m2, &num) == 0);
        CHECK(num.oc.flags == r->oc.flags && num.oc.value == r->oc.value &&
              num.oc.validity_ms == r->oc.validity_ms && osn_sip_oc_seq_cmp(&num.oc, &r->oc) == 0 &&
              num.oc.algo == r->oc.algo);
    }
}

static void check_forward(void)
{
    /* One Route value of ours, or two (RFC 5658 5), as the Call-ID's length says. */
    uint8_t pop = m.nroute == 0 ? 0 : (m.call_id.n & 1) && m.nroute > 1 ? 2 : 1;
    struct osn_sip_fwd f = {
            .transport = {"UDP", 3},
            .host = {"fuzz.example.net", 16},
            .port = 5060,
            .branch = {"z9hG4bKfuzz", 11},
            .oc = {.flags = OSN_SIP_OC_PRESENT | OSN_SIP_OC_ALGO,
                   .algo = OSN_SIP_ALGO_LOSS | OSN_SIP_ALGO_RATE},
            .pop_route = pop,
    };
    int n = osn_sip_wire_print_forward(out, sizeof out, &m, &f);
    if (m.max_forwards == 0) {
        CHECK(n < 0);
        return;
    }
    CHECK(n > 0);
    if (!fits(n))
        return;
    CHECK(osn_sip_wire_parse(&m2, out, (size_t)n) == OSN_SIP_WIRE_ACCEPT);
    CHECK(m2.nvia == m.nvia + 1);
    CHECK(osn_span_eq(m2.via[0].branch, f.branch));
    CHECK(m2.via[0].oc.flags == f.oc.flags && m2.via[0].oc.algo == f.oc.algo);
    for (int i = 0; i < m.nvia; i++)
        CHECK(osn_span_eq(m2.via[i + 1].value, m.via[i].value));
    CHECK(m2.max_forwards == (m.max_forwards < 0 ? 70 : m.max_forwards - 1));
    CHECK(m2.nroute == m.nroute - f.pop_route);
    CHECK(osn_span_eq(m2.call_id, m.call_id) && m2.cseq == m.cseq);
    CHECK(osn_span_eq(m2.from.tag, m.from.tag) && osn_span_eq(m2.to.tag, m.to.tag));
    CHECK(osn_span_eq(m2.uri, m.uri) && osn_span_eq(m2.body, m.body));
    CHECK(m2.method == m.method);
}

static void check_response_fwd(void)
{
    int n = osn_sip_wire_print_response_fwd(out, sizeof out, &m);
    CHECK(n > 0);
    if (n > OSN_SIP_WIRE_MAX_LEN)
        return;
    CHECK(osn_sip_wire_parse(&m2, out, (size_t)n) == OSN_SIP_WIRE_ACCEPT);
    CHECK(m2.nvia == m.nvia - 1);
    for (int i = 1; i < m.nvia; i++)
        CHECK(osn_span_eq(m2.via[i - 1].value, m.via[i].value));
    CHECK(m2.status == m.status && osn_span_eq(m2.call_id, m.call_id) && m2.cseq == m.cseq);
    CHECK(osn_span_eq(m2.body, m.body));
}

/* The proxy's parse pm of the datagram the full parse m accepted: the fields a proxy reads. */
static void check_proxy_agrees(void)
{
    CHECK(pm.err.verdict == OSN_SIP_WIRE_ACCEPT && pm.role == OSN_SIP_WIRE_ROLE_PROXY);
    CHECK(pm.nhdr == m.nhdr && pm.nvia == m.nvia && pm.nroute == m.nroute);
    CHECK(pm.is_request == m.is_request && pm.method == m.method && pm.status == m.status);
    for (int i = 0; i < m.nhdr; i++)
        CHECK(pm.hdr[i].id == m.hdr[i].id && pm.hdr[i].line.p == m.hdr[i].line.p &&
              pm.hdr[i].line.n == m.hdr[i].line.n && pm.hdr[i].value.p == m.hdr[i].value.p);
    for (int i = 0; i < m.nvia; i++)
        CHECK(!memcmp(&pm.via[i], &m.via[i], sizeof m.via[i]));
    for (int i = 0; i < m.nroute; i++)
        CHECK(!memcmp(&pm.route[i], &m.route[i], sizeof m.route[i]));
    CHECK(osn_span_eq(pm.call_id, m.call_id) && pm.cseq == m.cseq &&
          pm.cseq_method == m.cseq_method && pm.max_forwards == m.max_forwards &&
          pm.content_length == m.content_length && osn_span_eq(pm.body, m.body));
    CHECK(pm.from.tag.p == m.from.tag.p && pm.from.tag.n == m.from.tag.n);
    CHECK(pm.to.tag.p == m.to.tag.p && pm.to.tag.n == m.to.tag.n);
    CHECK(pm.ncontact == 0 && pm.nrequire == 0 && !pm.content_type.p);
    if (m.is_request) {
        CHECK(pm.nrecord_route == m.nrecord_route && !pm.retry_after.present);
        for (int i = 0; i < m.nrecord_route; i++)
            CHECK(!memcmp(&pm.record_route[i], &m.record_route[i], sizeof m.record_route[i]));
    } else {
        CHECK(pm.nrecord_route == 0 &&
              !memcmp(&pm.retry_after, &m.retry_after, sizeof m.retry_after));
    }
}

/* What a proxy does with an accepted request of its own parse pm: the forward, its parse derived
 * (checked against a proxy's parse of the bytes by the printer's debug check). */
static void check_proxy_forward(void)
{
    struct osn_sip_fwd f = {.transport = {"UDP", 3},
                            .host = {"fuzz.example.net", 16},
                            .branch = {"z9hG4bKfuzz", 11},
                            .pop_route = pm.nroute > 0,
                            .record_route = {"sip:fuzz.example.net;lr", 23}};
    int n = osn_sip_wire_print_forward_parsed(out, sizeof out, &pm, &f, &fm);
    CHECK(pm.max_forwards == 0 ? n < 0 : n > 0);
    if (n > 0 && n <= OSN_SIP_WIRE_MAX_LEN && pm.nhdr + 3 < OSN_SIP_WIRE_MAX_HDRS &&
        pm.nvia + 1 < OSN_SIP_WIRE_MAX_VIAS)
        CHECK(fm.err.verdict == OSN_SIP_WIRE_ACCEPT && fm.role == OSN_SIP_WIRE_ROLE_PROXY);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bool keyed;
    if (!keyed) {
        static const uint8_t key[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
        osn_sip_wire_key_set(key); /* reproducible runs */
        keyed = true;
    }
    int vp = osn_sip_wire_parse_as(&pm, (const char *)data, size, OSN_SIP_WIRE_ROLE_PROXY);
    CHECK(vp >= OSN_SIP_WIRE_ACCEPT && vp <= OSN_SIP_WIRE_DROP);
    if (vp == OSN_SIP_WIRE_ACCEPT && pm.is_request)
        check_proxy_forward();
    int v = osn_sip_wire_parse(&m, (const char *)data, size);
    CHECK(v >= OSN_SIP_WIRE_ACCEPT && v <= OSN_SIP_WIRE_DROP);
    if (v == OSN_SIP_WIRE_ACCEPT)
        check_proxy_agrees();
    CHECK((v == OSN_SIP_WIRE_ACCEPT) == (m.err.reason == OSN_SIP_WIRE_OK));
    CHECK(m.err.offset <= size);
    if (v == OSN_SIP_WIRE_ANSWER) {
        CHECK(m.err.answer == 400 || m.err.answer == 505);
        struct osn_sip_reply r = {.status = m.err.answer, .retry_after = -1};
        check_answer(&r);
        return 0;
    }
    if (v != OSN_SIP_WIRE_ACCEPT)
        return 0;
    CHECK(m.msg.p == (const char *)data && m.msg.n <= size);
    CHECK(m.body.p + m.body.n <= (const char *)data + size);
    struct osn_sip_msg num;
    CHECK(osn_sip_wire_to_txn(&m, &num) == 0);
    /* A response's Call-ID and From tag are its request's, not hashed (osn_sip_wire_to_txn). */
    CHECK(num.branch && num.sent_by &&
          (m.is_request ? num.call_id != 0 : !num.call_id && !num.from_tag));
    struct osn_sip_wire_key k, kept;
    static char store[3 * OSN_SIP_WIRE_MAX_LEN];
    CHECK(osn_sip_wire_key_of(&m, &k) == 0);
    CHECK(osn_sip_wire_key_copy(&kept, store, sizeof store, &k) >= 0);
    CHECK(osn_sip_wire_key_eq(&k, &kept));
    if (m.is_request) {
        check_forward();
        if (m.method != OSN_SIP_ACK) {
            struct osn_sip_reply ok = {.status = 200, .to_tag = {"ft", 2}, .retry_after = -1};
            check_answer(&ok);
            struct osn_sip_reply busy = {.status = 503,
                                         .retry_after = 7,
                                         .oc = {.flags = OSN_SIP_OC_PRESENT | OSN_SIP_OC_VALUE |
                                                         OSN_SIP_OC_VALIDITY | OSN_SIP_OC_SEQ |
                                                         OSN_SIP_OC_ALGO,
                                                .algo = OSN_SIP_ALGO_LOSS,
                                                .value = 20,
                                                .validity_ms = 500,
                                                .seq_int = 1282321615,
                                                .seq_frac = 78200}};
            check_answer(&busy);
        }
    } else if (m.nvia >= 2)
        check_response_fwd();
    return 0;
}

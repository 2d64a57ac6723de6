/*
 * SIP message parser and printer, private interface: the character classes of RFC 3261 25.1
 * as one table, a cursor over a header value that treats folds as whitespace, and the header
 * decoders msg.c calls (via.c, addr.c, scalar.c).
 *
 * A value span handed to a decoder never contains a line end other than a fold (msg.c checked
 * that every CR LF inside it is followed by SP or HTAB), so a decoder can treat CR and LF as
 * LWS and never needs to look past the span: every read is guarded by `p < end`.
 */
#ifndef OSN_SIP_WIRE_INT_H
#define OSN_SIP_WIRE_INT_H

#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "osn/sip_wire.h"

/* Character classes (bits of osn__sip_cc[]). */
#define CC_TOKEN \
    0x01 /* token: alphanum / "-" / "." / "!" / "%" / "*" / "_" / "+" / "`" / "'" / "~" */
#define CC_WS     0x02 /* SP, HTAB, CR, LF: LWS inside a value */
#define CC_DIGIT  0x04
#define CC_HOST   0x08 /* hostname and IPv4: alphanum / "-" / "." (and "_", seen in the wild) */
#define CC_ALPHA  0x10
#define CC_CTL    0x20 /* NUL..US except HTAB, and DEL */
#define CC_URI    0x40 /* in a URI here: visible ASCII but '<', '>' and '"' */
#define CC_SCHEME 0x80 /* after a URI scheme's first letter: alphanum / "+" / "-" / "." */

extern const uint8_t osn__sip_cc[256];

static inline bool is_cc(char c, uint8_t cls)
{
    return (osn__sip_cc[(unsigned char)c] & cls) != 0;
}

static inline char lower(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c + 32) : c;
}

static inline struct osn_span span(const char *p, const char *end)
{
    return (struct osn_span){p, (size_t)(end - p)};
}

static inline const char *skip_ws(const char *p, const char *end)
{
    while (p < end && is_cc(*p, CC_WS))
        p++;
    return p;
}

/* The first byte at or after p not in class cls, or end. Four bytes a step under one bound
 * check: tokens, hosts and URIs are most of the bytes a decoder reads (branches, tags, sent-bys),
 * and the bound check was half of a byte's cost. */
static inline const char *skip_cc(const char *p, const char *end, uint8_t cls)
{
    while (end - p >= 4) {
        if (!is_cc(p[0], cls))
            return p;
        if (!is_cc(p[1], cls))
            return p + 1;
        if (!is_cc(p[2], cls))
            return p + 2;
        if (!is_cc(p[3], cls))
            return p + 3;
        p += 4;
    }
    while (p < end && is_cc(*p, cls))
        p++;
    return p;
}

static inline const char *skip_token(const char *p, const char *end)
{
    return skip_cc(p, end, CC_TOKEN);
}

/* skip_token over a run that is usually long: a branch or a tag (16 to 40 bytes of letters and
 * digits), where skip_token's four bytes a step were a tenth of a proxy's parse. With SSE2 (every
 * x86-64) sixteen bytes a step while all are letters, digits, '-', '.' or '_' (token bytes all),
 * then skip_token from the first that is not. Short runs cost a vector step more: keep it for
 * values, not names. */
static inline const char *skip_token_long(const char *p, const char *end)
{
#if defined(__SSE2__)
    while (end - p >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
        __m128i l = _mm_or_si128(v, _mm_set1_epi8(0x20)); /* letters to lower case */
        /* signed compares: bytes >= 0x80 are negative, below every bound */
        __m128i alpha = _mm_and_si128(_mm_cmpgt_epi8(l, _mm_set1_epi8('a' - 1)),
                                      _mm_cmplt_epi8(l, _mm_set1_epi8('z' + 1)));
        /* '-' '.' '/' and the digits are 0x2d-0x39, of which only '/' is no token byte */
        __m128i num = _mm_andnot_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('/')),
                                       _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8('-' - 1)),
                                                     _mm_cmplt_epi8(v, _mm_set1_epi8('9' + 1))));
        __m128i ok = _mm_or_si128(_mm_or_si128(alpha, num), _mm_cmpeq_epi8(v, _mm_set1_epi8('_')));
        unsigned miss = ~(unsigned)_mm_movemask_epi8(ok) & 0xffffu;
        if (miss) {
            p += __builtin_ctz(miss);
            break;
        }
        p += 16;
    }
#endif
    return skip_token(p, end);
}

/* The n <= 8 bytes at p as a little-endian word with ASCII letters lower-cased, exactly: bit 7 of
 * a byte's low seven bits plus 0x3f is set from 'A' up, plus 0x25 from '[' up, so their
 * difference marks 'A'..'Z' (bytes >= 0x80 left out), and the mark shifted to 0x20 folds it.
 * Eight bytes under a dozen instructions: a byte loop was most of a keyword comparison. */
static inline uint64_t lower8(const char *p, size_t n)
{
    const uint64_t ones = 0x0101010101010101u, high = ones * 0x80;
    uint64_t x = 0;
    memcpy(&x, p, n);
    uint64_t h = x & ~high;
    uint64_t upper = ((h + ones * 0x3f) ^ (h + ones * 0x25)) & ~x & high;
    return x | (upper >> 2);
}

/* Whether s is lit (n bytes, lower case), ignoring the case of s. */
static inline bool span_is(struct osn_span s, const char *lit, size_t n)
{
    if (s.n != n)
        return false;
    if (n <= 8) { /* n is a constant where SPAN_IS is inlined: fixed-size loads */
        uint64_t w = 0;
        memcpy(&w, lit, n);
        return lower8(s.p, n) == w;
    }
    for (size_t i = 0; i < n; i++)
        if (lower(s.p[i]) != lit[i])
            return false;
    return true;
}
#define SPAN_IS(s, lit) span_is((s), (lit), sizeof(lit) - 1)

/* Skips a quoted string starting at p (which is '"'); returns the position after the closing
 * quote, or NULL when it does not close before end. quoted-pair (RFC 3261 25.1) escapes any
 * octet but CR and LF. */
const char *osn__sip_skip_quoted(const char *p, const char *end);

/* The end of a generic-param's gen-value at p (RFC 3261 25.1): a quoted string, or a token;
 * with `host`, also the host characters ':', '[' and ']' (IPv6 references). NULL when empty. */
const char *osn__sip_gen_value(const char *p, const char *end, bool host);

/* One ";" name [ "=" gen-value ] with *pp on the ';' (LWS allowed around both). Returns 1 with a
 * value, 0 without (then *val is empty at the end of the name), and *pp after the name or the
 * value; -1 when the name or the value is missing, *pp where. */
int osn__sip_param(const char **pp, const char *end, bool host, struct osn_span *name,
                   struct osn_span *val);

/* Parses 1*DIGIT at p into *v, at most `max`; returns the end of the digits, or NULL when there
 * are none or the number exceeds max (no overflow: it stops before). */
const char *osn__sip_number(const char *p, const char *end, uint64_t max, uint64_t *v);

/* Decoders of one header line's value. They return 0 or an OSN_SIP_WIRE_E* reason with *at the
 * offending position. */
int osn__sip_via_parse(struct osn_sip_wire *m, struct osn_span v, int hdr, const char **at);
/* One name-addr / addr-spec with parameters in [p, end). In a list (Contact, Route,
 * Record-Route) it may end at a comma, and on success *at is that comma or end; otherwise
 * anything after it is an error. */
int osn__sip_addr_parse(struct osn_sip_addr *a, const char *p, const char *end, bool list,
                        const char **at);
/* A From or To value in [p, end) read as osn__sip_addr_parse reads it, but only its tag kept
 * (a->tag is the only field written: the parser's reset zeroed the others) and neither display
 * name nor URI checked: what a proxy uses (OSN_SIP_WIRE_ROLE_PROXY). Every value
 * osn__sip_addr_parse accepts is accepted, with the same tag. */
int osn__sip_addr_tag(struct osn_sip_addr *a, const char *p, const char *end, const char **at);
int osn__sip_addr_list(struct osn_sip_wire *m, int id, struct osn_span v, int hdr, const char **at);
int osn__sip_cseq_parse(struct osn_sip_wire *m, struct osn_span v, const char **at);
int osn__sip_retry_after_parse(struct osn_sip_wire *m, struct osn_span v, const char **at);
int osn__sip_options_parse(struct osn_sip_wire *m, int id, struct osn_span v, const char **at);
bool osn__sip_uri_ok(struct osn_span u, bool request_uri);
/* Whether URI u has the lr parameter (RFC 3261 19.1.1, 16.4). */
bool osn__sip_has_lr(struct osn_span u);

/* Where the header lines of a message printed from a parsed one came from: line i starts at
 * offset at[i] of the printed bytes and is a byte-for-byte copy of the source's header line
 * src[i], or new text (OSN__SIP_LINE_NEW; OSN__SIP_LINE_VIA, OSN__SIP_LINE_MAXFWD and
 * OSN__SIP_LINE_RR/RR2 for a forward's own Via, Max-Forwards and Record-Route lines); at[n] is
 * where the empty line starts. The printer fills it (print.c), osn__sip_wire_derive reads it. */
struct osn__sip_lines {
    int n;
    bool over; /* more lines than OSN_SIP_WIRE_MAX_HDRS */
    uint32_t at[OSN_SIP_WIRE_MAX_HDRS + 1];
    int16_t src[OSN_SIP_WIRE_MAX_HDRS];
    /* The forward's own Via, new text marked OSN__SIP_LINE_VIA: the derivation takes its facts
     * from fwd rather than decoding it (msg.c's our_via). */
    const struct osn_sip_fwd *fwd;
};
#define OSN__SIP_LINE_NEW    (-1)
#define OSN__SIP_LINE_VIA    (-2)
#define OSN__SIP_LINE_MAXFWD (-3) /* a forward's Max-Forwards */
#define OSN__SIP_LINE_RR     (-4) /* a forward's Record-Route: <fwd->record_route> */
#define OSN__SIP_LINE_RR2    (-5) /* and its second, <fwd->record_route2> */

/* The parse of buf[0..len), printed from accepted message src as `lines` says, with the start
 * line copied from src's at offset 0 and the body after the empty line: what
 * osn_sip_wire_parse(m, buf, len) gives, but a copied line's facts are src's moved to where the
 * copy lies, and only the new lines go through the header decoders. The verdict. */
int osn__sip_wire_derive(struct osn_sip_wire *m, const char *buf, size_t len,
                         const struct osn_sip_wire *src, const struct osn__sip_lines *lines);

#endif

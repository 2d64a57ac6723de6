/*
 * The SIP message parser (osn_sip_wire_parse): one datagram into a zero-copy view, RFC 3261 7 and
 * 25. It reads the start line, then the header lines one logical line at a time (a line and
 * its folds, 7.3.1), records each line with its id, hands the headers the transaction layer and
 * a proxy need to their decoders (via.c, addr.c, scalar.c), and finally takes the body by
 * Content-Length (18.3).
 *
 * Errors are of two kinds. A hard error leaves no way to find the next header (no line end, a
 * status line that is not one, a cap exceeded): parsing stops. A soft error is confined to one
 * line or value (a bad Via parameter, a Request-URI with LWS): the first one is recorded, and
 * parsing goes on so that the verdict can say whether the request is still answerable, which
 * needs the method and the top Via's sent-by (RFC 3261 18.2.2). Either way the view's err holds
 * the first error's reason and byte offset.
 *
 * Cost: one pass over the head, one comparison or two per header name, no allocation, no
 * recursion; every loop advances its cursor and every read checks it against the end.
 */
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "osn/err.h"
#include "sip_wire_int.h"

/* Records the first error (later ones are ignored) and returns it. */
static int fail(struct osn_sip_wire *m, int reason, const char *at)
{
    if (m->err.reason == OSN_SIP_WIRE_OK) {
        m->err.reason = (uint8_t)reason;
        m->err.offset = (uint32_t)(at - m->buf.p);
    }
    return reason;
}

/* "SIP/2.0" (case-insensitive, RFC 3261 7.1 and 25: ABNF literals are), anything else of the
 * form "SIP/" 1*DIGIT "." 1*DIGIT is a version we do not support, anything else is not a
 * version. Returns 0, OSN_SIP_WIRE_EVERSION or OSN_SIP_WIRE_ESTARTLINE. */
static int version(struct osn_span v)
{
    if (SPAN_IS(v, "sip/2.0"))
        return 0;
    if (v.n < 7 || !span_is((struct osn_span){v.p, 4}, "sip/", 4))
        return OSN_SIP_WIRE_ESTARTLINE;
    const char *p = v.p + 4, *end = v.p + v.n;
    const char *q = p;
    while (q < end && is_cc(*q, CC_DIGIT))
        q++;
    if (q == p || q >= end || *q != '.')
        return OSN_SIP_WIRE_ESTARTLINE;
    p = ++q;
    while (q < end && is_cc(*q, CC_DIGIT))
        q++;
    return q == p || q != end ? OSN_SIP_WIRE_ESTARTLINE : OSN_SIP_WIRE_EVERSION;
}

/* Status-Line = SIP-Version SP Status-Code SP Reason-Phrase (RFC 3261 7.2). Hard errors. */
static int status_line(struct osn_sip_wire *m, const char *p, const char *end)
{
    const char *sp = memchr(p, ' ', (size_t)(end - p));
    if (!sp)
        return fail(m, OSN_SIP_WIRE_ESTARTLINE, p);
    m->version = span(p, sp);
    int rc = version(m->version);
    if (rc)
        return fail(m, rc, p);
    p = sp + 1;
    if (end - p < 4 || !is_cc(p[0], CC_DIGIT) || !is_cc(p[1], CC_DIGIT) || !is_cc(p[2], CC_DIGIT) ||
        p[3] != ' ')
        return fail(m, OSN_SIP_WIRE_ESTATUS, p);
    int code = (p[0] - '0') * 100 + (p[1] - '0') * 10 + (p[2] - '0');
    if (code < 100 || code > 699)
        return fail(m, OSN_SIP_WIRE_ESTATUS, p);
    m->status = (uint16_t)code;
    /* Reason-Phrase = *(reserved / unreserved / escaped / UTF8-NONASCII / UTF8-CONT / SP /
     * HTAB): anything but controls, which the line scan already refused. */
    m->reason_phrase = span(p + 4, end);
    return 0;
}

/* Request-Line = Method SP Request-URI SP SIP-Version (RFC 3261 7.1), exactly one SP each:
 * RFC 4475 3.1.2.8-10 (LWS in the URI, several SP, trailing SP) are rejected, not read
 * liberally, because a proxy copies the line and must not pass them on. Returns 0, a hard
 * error (no method: nothing to answer), or a soft one recorded in m->err. */
static int request_line(struct osn_sip_wire *m, const char *p, const char *end)
{
    const char *q = skip_token(p, end);
    if (q == p || q >= end || *q != ' ')
        return fail(m, OSN_SIP_WIRE_ESTARTLINE, q);
    m->method_name = span(p, q);
    m->method = (uint8_t)osn_sip_method_of(p, (size_t)(q - p));
    m->is_request = true;
    const char *u = q + 1;
    const char *usp = memchr(u, ' ', (size_t)(end - u));
    if (!usp || usp == u) {
        fail(m, OSN_SIP_WIRE_ESTARTLINE, u);
        return 0;
    }
    m->uri = span(u, usp);
    const char *v = usp + 1;
    const char *vsp = memchr(v, ' ', (size_t)(end - v));
    if (vsp) {
        /* "SIP/2.0 " then only SP: trailing white space (4475 3.1.2.10); otherwise the URI
         * had LWS in it (3.1.2.8). */
        const char *t = vsp;
        while (t < end && *t == ' ')
            t++;
        m->version = span(v, vsp);
        fail(m, t == end && !version(m->version) ? OSN_SIP_WIRE_ESTARTLINE : OSN_SIP_WIRE_EURI,
             vsp);
        return 0;
    }
    m->version = span(v, end);
    int rc = version(m->version);
    if (rc)
        fail(m, rc, v);
    if (!osn__sip_uri_ok(m->uri, true))
        fail(m, OSN_SIP_WIRE_EURI, u);
    return 0;
}

/* The first byte at or after p that is a control character (< 0x20 or DEL) or non-ASCII, or
 * end: the bytes line_end must look at one by one. SSE2 (every x86-64) takes 16 bytes a step;
 * elsewhere the "hasless" and "haszero" tricks of Bit Twiddling Hacks take 8. */
static inline const char *skip_plain(const char *p, const char *end)
{
#if defined(__SSE2__)
    const __m128i one = _mm_set1_epi8(1), sp1 = _mm_set1_epi8(0x21);
    while (end - p >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
        /* One signed compare of byte + 1 (wrapping) with 0x21 flags all of them: 0x00-0x1f
         * become 0x01-0x20, DEL and 0x80-0xfe become negative, 0xff becomes 0. */
        __m128i hit = _mm_cmplt_epi8(_mm_add_epi8(v, one), sp1);
        unsigned mask = (unsigned)_mm_movemask_epi8(hit);
        if (mask)
            return p + __builtin_ctz(mask);
        p += 16;
    }
#else
    const uint64_t ones = 0x0101010101010101u, high = 0x8080808080808080u;
    while (end - p >= 8) {
        uint64_t x;
        memcpy(&x, p, 8);
        uint64_t d = x ^ (ones * 0x7f);
        if ((((x - ones * 0x20) & ~x) | ((d - ones) & ~d) | x) & high)
            break;
        p += 8;
    }
#endif
    while (p < end && (unsigned char)*p >= 0x20 && (unsigned char)*p < 0x7f)
        p++;
    return p;
}

/* The end of the logical line starting at p (after its LF, folds included), with *vend the
 * end of its text (before the CRLF or LF). NULL on a control character (*vend: where) or when
 * the datagram ends first (*vend = NULL). One pass, 16 bytes at a time over ordinary text. */
/* Inlined into its two callers: the call was about a tenth of the function's cost. */
static inline __attribute__((always_inline)) const char *line_end(const char *p, const char *end,
                                                                  const char **vend)
{
    const char *start = p;
    for (;;) {
        p = skip_plain(p, end);
        if (p >= end) {
            *vend = NULL;
            return NULL;
        }
        /* CR LF first: it ends nearly every stop of skip_plain. */
        const char *lf;
        if (*p == '\r' && p + 1 < end && p[1] == '\n') {
            lf = p + 1;
        } else if (*p == '\n') {
            lf = p;
        } else if ((unsigned char)*p >= 0x80 || *p == '\t') {
            p++; /* UTF-8 (checked, where it matters, by the decoders) or HTAB */
            continue;
        } else if (*p != '\r' && p > start && p[-1] == '\\') {
            /* A control character escaped as a quoted-pair (RFC 3261 25.1: "\\" %x00-09 /
             * %x0B-0C / %x0E-7F), as in RFC 4475 3.1.1.2; the decoders check the quotes around
             * it. Not CR (LF was taken above). */
            p++;
            continue;
        } else {
            *vend = p; /* NUL, bare CR, other controls */
            return NULL;
        }
        if (lf + 1 < end && (lf[1] == ' ' || lf[1] == '\t')) {
            p = lf + 2; /* a fold: part of this line (RFC 3261 7.3.1) */
            continue;
        }
        *vend = p;
        return lf + 1;
    }
}

static bool has_ws(struct osn_span s)
{
    size_t i = 0;
#if defined(__SSE2__)
    /* Sixteen bytes a step, as skip_plain: every message has a Call-ID of 30 bytes or more. */
    const __m128i sp = _mm_set1_epi8(0x21), del = _mm_set1_epi8(0x7f);
    for (; i + 16 <= s.n; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s.p + i));
        if (_mm_movemask_epi8(_mm_or_si128(_mm_cmplt_epi8(v, sp), _mm_cmpeq_epi8(v, del))))
            return true;
    }
#endif
    for (; i < s.n; i++)
        if (!((unsigned char)s.p[i] > 0x20 && (unsigned char)s.p[i] < 0x7f))
            return true;
    return false;
}

/* A single-valued header seen twice (RFC 3261 7.3.1: only list headers may repeat). */
static int once(struct osn_sip_wire *m, int *slot, int i, const char *at)
{
    if (*slot >= 0)
        return fail(m, OSN_SIP_WIRE_EDUP, at);
    *slot = i;
    return 0;
}

/* Decodes header i; a failure is soft (recorded, parsing goes on). */
static void decode(struct osn_sip_wire *m, int i)
{
    struct osn_sip_hdr *h = &m->hdr[i];
    struct osn_span v = h->value;
    const char *at = v.p, *end = v.p + v.n;
    uint64_t x;
    int rc = 0;
    switch (h->id) {
    case OSN_SIP_HDR_VIA:
        rc = osn__sip_via_parse(m, v, i, &at);
        break;
    case OSN_SIP_HDR_FROM:
    case OSN_SIP_HDR_TO: {
        bool from = h->id == OSN_SIP_HDR_FROM;
        if (once(m, from ? &m->from_hdr : &m->to_hdr, i, h->line.p))
            return;
        struct osn_sip_addr *a = from ? &m->from : &m->to;
        rc = m->role == OSN_SIP_WIRE_ROLE_PROXY ? osn__sip_addr_tag(a, v.p, end, &at)
                                                : osn__sip_addr_parse(a, v.p, end, false, &at);
        a->hdr = (uint16_t)i;
        break;
    }
    case OSN_SIP_HDR_CALL_ID:
        if (once(m, &m->call_id_hdr, i, h->line.p))
            return;
        /* callid = word [ "@" word ]: visible ASCII, no LWS (RFC 3261 25.1). */
        m->call_id = v;
        if (v.n == 0 || has_ws(v))
            rc = OSN_SIP_WIRE_ECALLID;
        break;
    case OSN_SIP_HDR_CSEQ:
        if (once(m, &m->cseq_hdr, i, h->line.p))
            return;
        rc = osn__sip_cseq_parse(m, v, &at);
        break;
    case OSN_SIP_HDR_MAX_FORWARDS:
        if (once(m, &m->max_forwards_hdr, i, h->line.p))
            return;
        /* RFC 3261 20.22: "an integer in the range 0-255"; 4475 3.1.2.4 lets a liberal element
         * ignore an out-of-range one, we reject it. */
        at = osn__sip_number(v.p, end, 255, &x);
        if (!at || at != end) {
            at = at ? at : v.p;
            rc = OSN_SIP_WIRE_EMAXFWD;
        } else
            m->max_forwards = (int16_t)x;
        break;
    case OSN_SIP_HDR_CONTENT_LENGTH:
        if (once(m, &m->content_length_hdr, i, h->line.p))
            return;
        at = osn__sip_number(v.p, end, INT32_MAX, &x);
        if (!at || at != end) {
            at = at ? at : v.p;
            rc = OSN_SIP_WIRE_ECLEN;
        } else
            m->content_length = (int32_t)x;
        break;
    case OSN_SIP_HDR_CONTENT_TYPE:
        if (once(m, &m->content_type_hdr, i, h->line.p))
            return;
        m->content_type = v;
        break;
    case OSN_SIP_HDR_RETRY_AFTER:
        if (once(m, &m->retry_after_hdr, i, h->line.p))
            return;
        rc = osn__sip_retry_after_parse(m, v, &at);
        break;
    case OSN_SIP_HDR_CONTACT:
    case OSN_SIP_HDR_ROUTE:
    case OSN_SIP_HDR_RECORD_ROUTE:
        rc = osn__sip_addr_list(m, h->id, v, i, &at);
        break;
    case OSN_SIP_HDR_REQUIRE:
    case OSN_SIP_HDR_PROXY_REQUIRE:
        rc = osn__sip_options_parse(m, h->id, v, &at);
        break;
    default:
        break;
    }
    if (rc)
        fail(m, rc, at);
}

/* The ids of the headers a proxy does not decode (OSN_SIP_WIRE_ROLE_PROXY, osn/sip_wire.h), in
 * a request and in a response: their lines are recorded, never read. */
#define BIT(id) (UINT64_C(1) << (id))
#define PROXY_SKIP \
    (BIT(OSN_SIP_HDR_CONTACT) | BIT(OSN_SIP_HDR_CONTENT_TYPE) | BIT(OSN_SIP_HDR_REQUIRE))
static const uint64_t proxy_skip[2] = {PROXY_SKIP | BIT(OSN_SIP_HDR_RECORD_ROUTE),
                                       PROXY_SKIP | BIT(OSN_SIP_HDR_RETRY_AFTER)};
_Static_assert(OSN_SIP_NHDRS <= 64, "header ids fit a 64-bit mask");

/* Whether header id goes through decode() in m's role. */
static inline bool decoded(const struct osn_sip_wire *m, int id)
{
    return id != OSN_SIP_HDR_OTHER &&
           !(m->role == OSN_SIP_WIRE_ROLE_PROXY && (proxy_skip[m->is_request] >> id & 1));
}

static void reset(struct osn_sip_wire *m, const char *buf, size_t len)
{
    /* Only the scalar part: the arrays are written as they fill. */
    memset(m, 0, offsetof(struct osn_sip_wire, hdr));
    m->hdr = m->room.hdr;
    m->via = m->room.via;
    m->route = m->room.route;
    m->record_route = m->room.record_route;
    m->contact = m->room.contact;
    m->require = m->room.require;
    m->proxy_require = m->room.proxy_require;
    m->buf = (struct osn_span){buf, len};
    m->call_id_hdr = m->from_hdr = m->to_hdr = m->cseq_hdr = -1;
    m->max_forwards_hdr = m->content_length_hdr = m->content_type_hdr = -1;
    m->retry_after_hdr = -1;
    m->max_forwards = -1;
    m->content_length = -1;
    m->retry_after.duration = -1;
}

/* The verdict of a message whose first error is recorded. */
static int verdict(struct osn_sip_wire *m)
{
    if (m->err.reason == OSN_SIP_WIRE_OK) {
        m->err.verdict = OSN_SIP_WIRE_ACCEPT;
        return OSN_SIP_WIRE_ACCEPT;
    }
    if (m->is_request && m->method_name.n && m->nvia > 0 && m->via[0].host.n > 0 &&
        m->method != OSN_SIP_ACK) {
        /* RFC 3261 17: an ACK gets no response, so a malformed one is dropped. */
        m->err.verdict = OSN_SIP_WIRE_ANSWER;
        m->err.answer = m->err.reason == OSN_SIP_WIRE_EVERSION ? 505 : 400;
        return OSN_SIP_WIRE_ANSWER;
    }
    m->err.verdict = OSN_SIP_WIRE_DROP;
    return OSN_SIP_WIRE_DROP;
}

/* Header line [ls, next) of m, its text ending at vend: a new entry of m->hdr, decoded. An
 * error is soft (recorded, parsing goes on); OSN_SIP_WIRE_ECAP when the line does not fit. */
static int header_line(struct osn_sip_wire *m, const char *ls, const char *vend, const char *next)
{
    /* header-name HCOLON: token, then SP/HTAB, then ':' (RFC 3261 25.1, 7.3.1). */
    const char *p = ls, *e = NULL;
#if defined(__SSE2__)
    if (vend - p >= 16) {
        /* The name's end by one vector compare, then its id: a known name is a token (its
         * bytes case-fold onto letters and '-', which only CR, always followed by LF here, could
         * fake), so only an unknown one pays the byte scan that checks it. */
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
        __m128i hit = _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(':')),
                                   _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(' ')),
                                                _mm_cmpeq_epi8(v, _mm_set1_epi8('\t'))));
        unsigned mask = (unsigned)_mm_movemask_epi8(hit);
        if (mask)
            e = p + __builtin_ctz(mask);
    }
#endif
    const char *q = e ? e : skip_token(p, vend);
    /* One call site, so that LTO inlines it. */
    int id = osn_sip_hdr_id(p, (size_t)(q - p));
    /* No token byte is ':', SP or HTAB, so an unknown name's token ends at e or before it, as a
     * scan to vend would find. */
    if (e && id == OSN_SIP_HDR_OTHER)
        q = skip_token(p, e);
    const char *c = q;
    while (c < vend && (*c == ' ' || *c == '\t'))
        c++;
    if (q == p || c >= vend || *c != ':') {
        fail(m, OSN_SIP_WIRE_EHDRNAME, q); /* soft: the line is skipped */
        return 0;
    }
    if (m->nhdr >= OSN_SIP_WIRE_MAX_HDRS) {
        fail(m, OSN_SIP_WIRE_ECAP, ls);
        return OSN_SIP_WIRE_ECAP;
    }
    const char *vs = skip_ws(c + 1, vend), *ve = vend;
    while (ve > vs && is_cc(ve[-1], CC_WS))
        ve--;
    int i = m->nhdr++;
    struct osn_sip_hdr *h = &m->hdr[i];
    h->name = span(p, q);
    h->value = span(vs, ve);
    h->line = span(ls, next);
    h->id = (uint8_t)id;
    if (decoded(m, id))
        decode(m, i);
    return 0;
}

/* Line [ls, next) that print_forward wrote as "Via: SIP/2.0/" transport SP host [":" port]
 * ";branch=" branch CRLF from f (OSN__SIP_LINE_VIA): its facts without the Via decoder, which was
 * a tenth of a forward's instructions. The result is what header_line gives, provided host is a
 * hostname or IPv4 address and transport and branch are tokens, which is checked (skip_cc, the
 * decoder's own scans); false, nothing written, when it is not so or f has oc parameters. */
static bool our_via(struct osn_sip_wire *m, const char *ls, const char *next,
                    const struct osn_sip_fwd *f)
{
    const ptrdiff_t head = sizeof "Via: SIP/2.0/" - 1;
    if (!f || f->oc.flags || m->nhdr >= OSN_SIP_WIRE_MAX_HDRS || m->nvia >= OSN_SIP_WIRE_MAX_VIAS ||
        !f->transport.n || !f->host.n || !f->branch.n ||
        next - ls < head + (ptrdiff_t)(f->transport.n + 1 + f->host.n))
        return false;
    const char *v = ls + 5, *t = ls + head, *te = t + f->transport.n;
    const char *h = te + 1, *he = h + f->host.n;
    if (skip_token(t, te) != te || skip_cc(h, he, CC_HOST) != he)
        return false;
    const char *b = he; /* then ":" port, ";branch=" */
    if (f->port) {
        b++;
        while (b < next && is_cc(*b, CC_DIGIT))
            b++;
    }
    const char *be = b + 8 + f->branch.n;
    if (be + 2 != next || skip_token_long(b + 8, be) != be)
        return false;
    int i = m->nhdr++;
    struct osn_sip_hdr *hd = &m->hdr[i];
    hd->name = (struct osn_span){ls, 3};
    hd->value = span(v, be);
    hd->line = span(ls, next);
    hd->id = OSN_SIP_HDR_VIA;
    struct osn_sip_via *via = &m->via[m->nvia++];
    memset(via, 0, sizeof *via);
    via->ttl = -1;
    via->hdr = (uint16_t)i;
    via->value = span(v, be);
    via->protocol = (struct osn_span){v, 3};
    via->version = (struct osn_span){v + 4, 3};
    via->transport = span(t, te);
    via->host = span(h, he);
    via->port = f->port;
    via->params = span(b, be);
    via->branch = span(b + 8, be);
    return true;
}

/* Line [ls, next) that print_forward wrote as "Max-Forwards: " 1*3DIGIT CRLF
 * (OSN__SIP_LINE_MAXFWD): the number is read here, where the line's place is known, instead of
 * by the header name lookup and decoder; false, nothing written, when the line is not of that
 * form or the header is already there (header_line then records it as a parse does). */
static bool our_max_forwards(struct osn_sip_wire *m, const char *ls, const char *next)
{
    const ptrdiff_t head = sizeof "Max-Forwards: " - 1;
    const char *v = ls + head, *ve = next - 2;
    if (m->nhdr >= OSN_SIP_WIRE_MAX_HDRS || m->max_forwards_hdr >= 0 || ve - v < 1 || ve - v > 3 ||
        memcmp(ls, "Max-Forwards: ", (size_t)head) != 0)
        return false;
    int x = 0;
    for (const char *p = v; p < ve; p++) {
        if (!is_cc(*p, CC_DIGIT))
            return false;
        x = x * 10 + (*p - '0');
    }
    if (x > 255)
        return false;
    int i = m->nhdr++;
    struct osn_sip_hdr *h = &m->hdr[i];
    h->name = (struct osn_span){ls, 12};
    h->value = span(v, ve);
    h->line = span(ls, next);
    h->id = OSN_SIP_HDR_MAX_FORWARDS;
    m->max_forwards_hdr = i;
    m->max_forwards = (int16_t)x;
    return true;
}

/* Line [ls, next) that print_forward wrote as "Record-Route: <" uri ">" CRLF (OSN__SIP_LINE_RR,
 * OSN__SIP_LINE_RR2, uri our f->record_route or record_route2): the value decoded here, where its
 * parts are known, rather than by the list decoder, which cost an initial INVITE's forward 400
 * instructions. The result is what header_line gives, provided the URI passes the check the
 * decoder makes (osn__sip_uri_ok, which also refuses a '>' in it); false, nothing written,
 * otherwise or when a list is full (header_line then records it as a parse does). */
static bool our_record_route(struct osn_sip_wire *m, const char *ls, const char *next,
                             struct osn_span uri)
{
    const ptrdiff_t head = sizeof "Record-Route: <" - 1;
    const char *u = ls + head, *ue = u + uri.n;
    if (m->nhdr >= OSN_SIP_WIRE_MAX_HDRS || m->nrecord_route >= OSN_SIP_WIRE_MAX_ROUTES || !uri.n ||
        next - ls != head + (ptrdiff_t)uri.n + 3 || ue[0] != '>' ||
        !osn__sip_uri_ok(span(u, ue), false))
        return false;
    int i = m->nhdr++;
    struct osn_sip_hdr *h = &m->hdr[i];
    h->name = (struct osn_span){ls, 12};
    h->value = span(u - 1, ue + 1);
    h->line = span(ls, next);
    h->id = OSN_SIP_HDR_RECORD_ROUTE;
    struct osn_sip_addr *a = &m->record_route[m->nrecord_route++];
    memset(a, 0, sizeof *a);
    a->value = h->value;
    a->uri = span(u, ue);
    a->angle = true;
    a->lr = osn__sip_has_lr(a->uri);
    a->hdr = (uint16_t)i;
    return true;
}

/* What follows the header section, p just after its empty line: the checks of the message as a
 * whole, the body, the verdict. */
static int finish(struct osn_sip_wire *m, const char *p)
{
    const char *buf = m->buf.p, *end = m->buf.p + m->buf.n;
    m->head.n = (size_t)(p - m->head.p);

    /* RFC 3261 8.1.1: To, From, CSeq, Call-ID, Via are mandatory (Max-Forwards too, but RFC
     * 2543 elements do not send it and 4475 3.4.1 is valid without it). */
    if (m->nvia == 0 || m->from_hdr < 0 || m->to_hdr < 0 || m->call_id_hdr < 0 || m->cseq_hdr < 0)
        fail(m, OSN_SIP_WIRE_EMISSING, m->head.p);
    if (m->cseq_hdr >= 0) {
        if (!m->is_request)
            m->method = m->cseq_method;
        else if (m->method_name.n && m->cseq_method_name.n &&
                 !osn_span_eq(m->method_name, m->cseq_method_name))
            /* RFC 3261 8.1.1.5 (and 4475 3.1.2.17-18): same method as the request line. */
            fail(m, OSN_SIP_WIRE_ECSEQMETHOD, m->hdr[m->cseq_hdr].value.p);
    }
    if (m->nvia > 0) {
        struct osn_span b = m->via[0].branch;
        m->rfc2543 = !(b.n >= 7 && memcmp(b.p, "z9hG4bK", 7) == 0);
    }

    /* Body (RFC 3261 18.3): Content-Length octets, the rest of the datagram ignored; without
     * Content-Length, the rest of the datagram. */
    size_t avail = (size_t)(end - p);
    if (m->content_length >= 0) {
        if ((size_t)m->content_length > avail) {
            fail(m, OSN_SIP_WIRE_ETRUNCATED, end);
            m->body = span(p, end);
        } else
            m->body = (struct osn_span){p, (size_t)m->content_length};
    } else
        m->body = span(p, end);
    m->msg = span(buf, m->body.p + m->body.n);
    return verdict(m);
}

int osn_sip_wire_parse(struct osn_sip_wire *m, const char *buf, size_t len)
{
    return osn_sip_wire_parse_as(m, buf, len, OSN_SIP_WIRE_ROLE_FULL);
}

int osn_sip_wire_parse_as(struct osn_sip_wire *m, const char *buf, size_t len, int role)
{
    if (!m || !buf || (role != OSN_SIP_WIRE_ROLE_FULL && role != OSN_SIP_WIRE_ROLE_PROXY))
        return OSN_EINVAL;
    reset(m, buf, len);
    m->role = (uint8_t)role;
    const char *p = buf, *end = buf + len, *vend;
    if (len == 0 || len > OSN_SIP_WIRE_MAX_LEN) {
        fail(m, OSN_SIP_WIRE_ETOOLONG, p);
        return verdict(m);
    }
    /* RFC 3261 7.5: "SHOULD ignore any CRLF appearing before the start-line". */
    while (p < end && (*p == '\r' || *p == '\n'))
        p++;
    const char *next = line_end(p, end, &vend);
    if (!next || vend == p) {
        fail(m, next || !vend ? OSN_SIP_WIRE_ENOEND : OSN_SIP_WIRE_ECHAR, vend ? vend : end);
        return verdict(m);
    }
    /* A start line cannot fold: a continuation after it is the first header's error. */
    const char *lf = memchr(p, '\n', (size_t)(vend - p));
    if (lf) {
        fail(m, OSN_SIP_WIRE_ESTARTLINE, lf);
        return verdict(m);
    }
    m->start_line = span(p, vend);
    if (vend - p >= 4 && span_is((struct osn_span){p, 4}, "sip/", 4)) {
        if (status_line(m, p, vend))
            return verdict(m);
    } else if (request_line(m, p, vend))
        return verdict(m);

    /* Header lines up to the empty line. */
    p = next;
    m->head.p = p;
    for (;;) {
        if (p >= end) {
            fail(m, OSN_SIP_WIRE_ENOEND, end);
            return verdict(m);
        }
        if (*p == '\n' || (*p == '\r' && p + 1 < end && p[1] == '\n')) {
            p += *p == '\n' ? 1 : 2;
            break;
        }
        const char *ls = p;
        next = line_end(p, end, &vend);
        if (!next) {
            fail(m, vend ? OSN_SIP_WIRE_ECHAR : OSN_SIP_WIRE_ENOEND, vend ? vend : end);
            return verdict(m);
        }
        if (header_line(m, ls, vend, next) == OSN_SIP_WIRE_ECAP ||
            m->err.reason == OSN_SIP_WIRE_ECAP)
            return verdict(m);
        p = next;
    }
    return finish(m, p);
}

/* ---- the parse of a message printed from a parsed one (osn__sip_wire_derive) ---- */

/* Span s of a source line that starts at `from`, moved to the copy of that line at `to`. */
static struct osn_span moved(struct osn_span s, const char *from, const char *to)
{
    return s.p ? (struct osn_span){to + (s.p - from), s.n} : s;
}

static struct osn_sip_addr moved_addr(const struct osn_sip_addr *a, const char *from,
                                      const char *to, int i)
{
    struct osn_sip_addr b = *a;
    b.value = moved(a->value, from, to);
    b.display = moved(a->display, from, to);
    b.uri = moved(a->uri, from, to);
    b.params = moved(a->params, from, to);
    b.tag = moved(a->tag, from, to);
    b.hdr = (uint16_t)i;
    return b;
}

/* The Via values of src line j (from *k on, in order), as values of m's line i at `to`. */
static int copy_vias(struct osn_sip_wire *m, const struct osn_sip_wire *src, int *k, int j, int i,
                     const char *to)
{
    const char *from = src->hdr[j].line.p;
    /* oc_at are offsets in the buffer: the line's own offset changes by this much */
    long d = (long)(to - m->buf.p) - (long)(from - src->buf.p);
    for (; *k < src->nvia && src->via[*k].hdr < j; ++*k)
        ;
    for (; *k < src->nvia && src->via[*k].hdr == j; ++*k) {
        if (m->nvia >= OSN_SIP_WIRE_MAX_VIAS)
            return OSN_SIP_WIRE_ECAP;
        const struct osn_sip_via *a = &src->via[*k];
        struct osn_sip_via *v = &m->via[m->nvia++];
        *v = *a;
        v->value = moved(a->value, from, to);
        v->protocol = moved(a->protocol, from, to);
        v->version = moved(a->version, from, to);
        v->transport = moved(a->transport, from, to);
        v->host = moved(a->host, from, to);
        v->branch = moved(a->branch, from, to);
        v->received = moved(a->received, from, to);
        v->rport_value = moved(a->rport_value, from, to);
        v->maddr = moved(a->maddr, from, to);
        v->params = moved(a->params, from, to);
        v->oc_algo = moved(a->oc_algo, from, to);
        for (int o = 0; o < 4; o++)
            if (a->oc_len[o])
                v->oc_at[o] = (uint16_t)(a->oc_at[o] + d);
        v->hdr = (uint16_t)i;
    }
    return 0;
}

/* The name-addr values of src's list `sl` (ns entries) from line j, appended to m's list. */
static int copy_addrs(struct osn_sip_addr *dl, int *nd, int cap, const struct osn_sip_addr *sl,
                      int ns, int *k, int j, int i, const char *from, const char *to)
{
    for (; *k < ns && sl[*k].hdr < j; ++*k)
        ;
    for (; *k < ns && sl[*k].hdr == j; ++*k) {
        if (*nd >= cap)
            return OSN_SIP_WIRE_ECAP;
        dl[(*nd)++] = moved_addr(&sl[*k], from, to, i);
    }
    return 0;
}

/* The option tags of src's list `sl` that lie in the line [from, from + n). */
static int copy_options(struct osn_span *dl, int *nd, const struct osn_span *sl, int ns, int *k,
                        const char *from, size_t n, const char *to)
{
    for (; *k < ns && sl[*k].p < from; ++*k)
        ;
    for (; *k < ns && sl[*k].p < from + n; ++*k) {
        if (*nd >= OSN_SIP_WIRE_MAX_OPTIONS)
            return OSN_SIP_WIRE_ECAP;
        dl[(*nd)++] = moved(sl[*k], from, to);
    }
    return 0;
}

/* Cursors into src's lists, each at the first value not yet copied. */
struct cursors {
    int via, route, rr, contact, require, preq;
};

/* Copies src's header line j, and what src decoded from it, as m's line i at `to`. */
static int copy_line(struct osn_sip_wire *m, const struct osn_sip_wire *src, int j, const char *to,
                     struct cursors *c)
{
    const struct osn_sip_hdr *sh = &src->hdr[j];
    const char *from = sh->line.p;
    if (m->nhdr >= OSN_SIP_WIRE_MAX_HDRS)
        return OSN_SIP_WIRE_ECAP;
    int i = m->nhdr++;
    struct osn_sip_hdr *h = &m->hdr[i];
    h->name = moved(sh->name, from, to);
    h->value = moved(sh->value, from, to);
    h->line = moved(sh->line, from, to);
    h->id = sh->id;
    int rc = 0;
    switch (sh->id) {
    case OSN_SIP_HDR_VIA:
        rc = copy_vias(m, src, &c->via, j, i, to);
        break;
    case OSN_SIP_HDR_FROM:
    case OSN_SIP_HDR_TO:
        if (j == src->from_hdr) {
            m->from_hdr = i;
            m->from = moved_addr(&src->from, from, to, i);
        } else if (j == src->to_hdr) {
            m->to_hdr = i;
            m->to = moved_addr(&src->to, from, to, i);
        }
        break;
    case OSN_SIP_HDR_CALL_ID:
        if (j == src->call_id_hdr) {
            m->call_id_hdr = i;
            m->call_id = moved(src->call_id, from, to);
        }
        break;
    case OSN_SIP_HDR_CSEQ:
        if (j == src->cseq_hdr) {
            m->cseq_hdr = i;
            m->cseq = src->cseq;
            m->cseq_method = src->cseq_method;
            m->cseq_method_name = moved(src->cseq_method_name, from, to);
        }
        break;
    case OSN_SIP_HDR_MAX_FORWARDS:
        if (j == src->max_forwards_hdr) {
            m->max_forwards_hdr = i;
            m->max_forwards = src->max_forwards;
        }
        break;
    case OSN_SIP_HDR_CONTENT_LENGTH:
        if (j == src->content_length_hdr) {
            m->content_length_hdr = i;
            m->content_length = src->content_length;
        }
        break;
    case OSN_SIP_HDR_CONTENT_TYPE:
        if (j == src->content_type_hdr) {
            m->content_type_hdr = i;
            m->content_type = moved(src->content_type, from, to);
        }
        break;
    case OSN_SIP_HDR_RETRY_AFTER:
        if (j == src->retry_after_hdr) {
            m->retry_after_hdr = i;
            m->retry_after = src->retry_after;
            m->retry_after.comment = moved(src->retry_after.comment, from, to);
        }
        break;
    case OSN_SIP_HDR_ROUTE:
        rc = copy_addrs(m->route, &m->nroute, OSN_SIP_WIRE_MAX_ROUTES, src->route, src->nroute,
                        &c->route, j, i, from, to);
        break;
    case OSN_SIP_HDR_RECORD_ROUTE:
        rc = copy_addrs(m->record_route, &m->nrecord_route, OSN_SIP_WIRE_MAX_ROUTES,
                        src->record_route, src->nrecord_route, &c->rr, j, i, from, to);
        break;
    case OSN_SIP_HDR_CONTACT:
        m->contact_star = m->contact_star || src->contact_star;
        rc = copy_addrs(m->contact, &m->ncontact, OSN_SIP_WIRE_MAX_CONTACT, src->contact,
                        src->ncontact, &c->contact, j, i, from, to);
        break;
    case OSN_SIP_HDR_REQUIRE:
        rc = copy_options(m->require, &m->nrequire, src->require, src->nrequire, &c->require, from,
                          sh->line.n, to);
        break;
    case OSN_SIP_HDR_PROXY_REQUIRE:
        rc = copy_options(m->proxy_require, &m->nproxy_require, src->proxy_require,
                          src->nproxy_require, &c->preq, from, sh->line.n, to);
        break;
    default:
        break;
    }
    return rc;
}

int osn__sip_wire_derive(struct osn_sip_wire *m, const char *buf, size_t len,
                         const struct osn_sip_wire *src, const struct osn__sip_lines *lines)
{
    if (!m || !buf || !src || !lines || !src->is_request || src->err.verdict != OSN_SIP_WIRE_ACCEPT)
        return OSN_EINVAL;
    reset(m, buf, len);
    m->role = src->role; /* the new lines decoded as a parse of src's role decodes them */
    size_t head_end = lines->at[lines->n]; /* with `over`, the first line too many */
    if (len > OSN_SIP_WIRE_MAX_LEN || head_end + 2 > len ||
        src->start_line.n > (lines->n ? lines->at[0] : head_end)) {
        fail(m, OSN_SIP_WIRE_ENOEND, buf);
        return verdict(m);
    }
    /* the start line, a copy at offset 0 */
    const char *from = src->start_line.p;
    m->is_request = true;
    m->method = src->method;
    m->start_line = moved(src->start_line, from, buf);
    m->method_name = moved(src->method_name, from, buf);
    m->uri = moved(src->uri, from, buf);
    m->version = moved(src->version, from, buf);
    m->head.p = buf + (lines->n ? lines->at[0] : head_end);
    struct cursors c = {0};
    for (int i = 0; i < lines->n; i++) {
        const char *ls = buf + lines->at[i], *next = buf + lines->at[i + 1];
        int rc = 0;
        if (lines->src[i] >= 0)
            rc = copy_line(m, src, lines->src[i], ls, &c);
        else if (!(lines->src[i] == OSN__SIP_LINE_VIA && our_via(m, ls, next, lines->fwd)) &&
                 !(lines->src[i] == OSN__SIP_LINE_MAXFWD && our_max_forwards(m, ls, next)) &&
                 !(lines->src[i] == OSN__SIP_LINE_RR && lines->fwd &&
                   our_record_route(m, ls, next, lines->fwd->record_route)) &&
                 !(lines->src[i] == OSN__SIP_LINE_RR2 && lines->fwd &&
                   our_record_route(m, ls, next, lines->fwd->record_route2)))
            rc = header_line(m, ls, next - 2, next); /* text, CR LF */
        if (rc == OSN_SIP_WIRE_ECAP || m->err.reason == OSN_SIP_WIRE_ECAP) {
            if (m->err.reason != OSN_SIP_WIRE_ECAP)
                fail(m, OSN_SIP_WIRE_ECAP, ls);
            return verdict(m);
        }
    }
    if (lines->over) { /* as a parse stops at the first line too many */
        fail(m, OSN_SIP_WIRE_ECAP, buf + head_end);
        return verdict(m);
    }
    return finish(m, buf + head_end + 2);
}

/*
 * Address headers (RFC 3261 20.10, 20.20, 20.39, 20.30, 20.34 and 25.1): From, To, Contact,
 * Route and Record-Route values, each a name-addr or an addr-spec with parameters, and the URI
 * check the Request-URI shares.
 *
 *   name-addr = [ display-name ] LAQUOT addr-spec RAQUOT
 *   display-name = *(token LWS) / quoted-string
 *
 * RFC 3261 20.10: a URI with a comma, question mark or semicolon must be in angle brackets,
 * and without them every parameter after the URI is a header parameter. A list header's values
 * are read one after the other, each ending at a comma that is outside quotes and angle
 * brackets, so that RFC 4475's "crazy?,/;;*" user part stays one URI.
 */
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "sip_wire_int.h"

/* A URI as the grammar of this parser reads it: scheme ":" then visible ASCII without LWS,
 * angle brackets or quotes (RFC 3986 3.1, RFC 3261 19.1.1). In a SIP or SIPS Request-URI the
 * header part ("?..." after the host) is refused (RFC 3261 19.1.5, RFC 4475 3.1.2.11): the
 * user part, up to the first '@', may contain '?'. */
#if defined(__SSE2__)
/* The bytes of 16 at p that no URI here holds: <= SP (or >= 0x80, negative when signed), DEL,
 * '<', '>' or '"'; a mask of them. */
static inline unsigned uri_bad16(const char *p)
{
    const __m128i sp = _mm_set1_epi8(0x21), del = _mm_set1_epi8(0x7f);
    const __m128i lt = _mm_set1_epi8('<'), gt = _mm_set1_epi8('>'), dq = _mm_set1_epi8('"');
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)p);
    __m128i bad =
            _mm_or_si128(_mm_or_si128(_mm_cmplt_epi8(v, sp), _mm_cmpeq_epi8(v, del)),
                         _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, lt), _mm_cmpeq_epi8(v, gt)),
                                      _mm_cmpeq_epi8(v, dq)));
    return (unsigned)_mm_movemask_epi8(bad);
}
#endif

bool osn__sip_uri_ok(struct osn_span u, bool request_uri)
{
    const char *p = u.p, *end = u.p + u.n;
    if (p >= end || !is_cc(*p, CC_ALPHA))
        return false;
    p = skip_cc(p, end, CC_SCHEME);
    if (p >= end || *p != ':' || p + 1 >= end)
        return false;
    struct osn_span scheme = span(u.p, p);
#if defined(__SSE2__)
    if (u.n >= 16) {
        /* The whole URI, sixteen bytes a step and the last step overlapping the one before, so
         * that no byte goes through the byte loop: the scheme and ':' are URI bytes too, so
         * checking them again changes nothing. Twenty-three URIs a proxied call, most of 16 to
         * 30 bytes, whose tails were half of this function's cost. */
        const char *q = u.p;
        for (; end - q > 16; q += 16)
            if (uri_bad16(q))
                return false;
        if (uri_bad16(end - 16))
            return false;
    } else if (skip_cc(p + 1, end, CC_URI) != end)
        return false;
#else
    if (skip_cc(p + 1, end, CC_URI) != end)
        return false;
#endif
    if (request_uri && (SPAN_IS(scheme, "sip") || SPAN_IS(scheme, "sips"))) {
        const char *at = memchr(p, '@', (size_t)(end - p));
        if (memchr(at ? at : p, '?', (size_t)(end - (at ? at : p))))
            return false;
    }
    return true;
}

bool osn__sip_has_lr(struct osn_span u)
{
    /* From ';' to ';' before any '?' (memchr, not a byte loop: every Route and Record-Route
     * value comes here). A ';' too near the end to be followed by "lr" ends the search. */
    const char *end = u.p + u.n, *q = memchr(u.p, '?', u.n);
    const char *stop = q ? q : end;
    for (const char *c = memchr(u.p, ';', (size_t)(stop - u.p)); c && end - c >= 3;
         c = memchr(c + 1, ';', (size_t)(stop - c - 1))) {
        if (lower(c[1]) == 'l' && lower(c[2]) == 'r' &&
            (c + 3 == end || c[3] == ';' || c[3] == '=' || c[3] == '?'))
            return true;
    }
    return false;
}

int osn__sip_addr_parse(struct osn_sip_addr *a, const char *p, const char *end, bool list,
                        const char **at)
{
    memset(a, 0, sizeof *a);
    p = skip_ws(p, end);
    const char *s = p, *q;
    *at = p;
    if (p >= end)
        return OSN_SIP_WIRE_EADDR;
    if (*p == '"') {
        q = osn__sip_skip_quoted(p, end);
        if (!q)
            return OSN_SIP_WIRE_EADDR; /* RFC 4475 3.1.2.6 */
        a->display = span(p, q);
        p = skip_ws(q, end);
        if (p >= end || *p != '<')
            return (*at = p, OSN_SIP_WIRE_EADDR);
    } else if (*p != '<') {
        q = p;
        while (q < end && (is_cc(*q, CC_TOKEN) || is_cc(*q, CC_WS)))
            q++;
        if (q < end && *q == '<') {
            const char *d = q;
            while (d > p && is_cc(d[-1], CC_WS))
                d--;
            a->display = span(p, d);
            p = q;
        }
    }
    if (p < end && *p == '<') {
        q = memchr(p, '>', (size_t)(end - p));
        if (!q)
            return (*at = p, OSN_SIP_WIRE_EADDR);
        a->uri = span(p + 1, q);
        a->angle = true;
        if (!osn__sip_uri_ok(a->uri, false))
            return (*at = p + 1, OSN_SIP_WIRE_EADDR); /* e.g. LWS inside <> (4475 3.1.2.14) */
        p = q + 1;
    } else {
        /* addr-spec: the URI ends at the first ';' or LWS, and may not hold ',' or '?'. */
        q = p;
        while (q < end && *q != ';' && !is_cc(*q, CC_WS) && !(list && *q == ','))
            q++;
        a->uri = span(p, q);
        if (!osn__sip_uri_ok(a->uri, false) || memchr(p, ',', (size_t)(q - p)) ||
            memchr(p, '?', (size_t)(q - p)))
            return OSN_SIP_WIRE_EADDR; /* 4475 3.1.2.13, 3.1.2.15 */
        p = q;
    }
    const char *vend = p;
    for (;;) {
        p = skip_ws(p, end);
        if (p >= end || *p != ';')
            break;
        if (!a->params.p)
            a->params.p = p;
        struct osn_span name, val;
        int has = osn__sip_param(&p, end, true, &name, &val);
        if (has < 0)
            return (*at = p, OSN_SIP_WIRE_EADDR);
        if (SPAN_IS(name, "tag")) {
            if (!has)
                return (*at = p, OSN_SIP_WIRE_EADDR);
            if (*val.p == '"')
                return (*at = val.p, OSN_SIP_WIRE_EADDR); /* tag = token */
            a->tag = val;
        }
        vend = p;
    }
    if (a->params.p)
        a->params.n = (size_t)(vend - a->params.p);
    a->value = span(s, vend);
    p = skip_ws(p, end);
    *at = p; /* in a list: where the next value's comma is */
    if (p != end && !(list && *p == ','))
        return OSN_SIP_WIRE_EADDR;
    return 0;
}

int osn__sip_addr_tag(struct osn_sip_addr *a, const char *p, const char *end, const char **at)
{
    /* The same walk as osn__sip_addr_parse to the end of the URI, without checking the display
     * name's tokens or the URI (a proxy uses neither): where the URI ends is found as it finds
     * it, so the header parameters, and the tag among them, are the ones it reads. */
    const char *q;
    a->tag = (struct osn_span){NULL, 0}; /* the rest as the parser's reset left it: zero */
    p = skip_ws(p, end);
    *at = p;
    if (p >= end)
        return OSN_SIP_WIRE_EADDR;
    if (*p == '"') {
        q = osn__sip_skip_quoted(p, end);
        if (!q)
            return OSN_SIP_WIRE_EADDR;
        p = skip_ws(q, end);
        if (p >= end || *p != '<')
            return (*at = p, OSN_SIP_WIRE_EADDR);
    } else if (*p != '<') {
        q = p;
        while (q < end && (is_cc(*q, CC_TOKEN) || is_cc(*q, CC_WS)))
            q++;
        if (q < end && *q == '<')
            p = q;
    }
    if (*p == '<') {
        q = memchr(p, '>', (size_t)(end - p));
        if (!q)
            return (*at = p, OSN_SIP_WIRE_EADDR);
        p = q + 1;
    } else {
        while (p < end && *p != ';' && !is_cc(*p, CC_WS))
            p++;
    }
    p = skip_ws(p, end);
    /* Most values end in ";tag=" token: read at once, as the loop below would read it. */
    if (end - p > 5 && lower8(p, 5) == lower8(";tag=", 5) && skip_token_long(p + 5, end) == end) {
        a->tag = span(p + 5, end);
        return 0;
    }
    while (p < end) {
        if (*p != ';')
            return (*at = p, OSN_SIP_WIRE_EADDR);
        struct osn_span name, val;
        int has = osn__sip_param(&p, end, true, &name, &val);
        if (has < 0)
            return (*at = p, OSN_SIP_WIRE_EADDR);
        if (SPAN_IS(name, "tag")) {
            if (!has)
                return (*at = p, OSN_SIP_WIRE_EADDR);
            if (*val.p == '"')
                return (*at = val.p, OSN_SIP_WIRE_EADDR); /* tag = token */
            a->tag = val;
        }
        p = skip_ws(p, end);
    }
    return 0;
}

int osn__sip_addr_list(struct osn_sip_wire *m, int id, struct osn_span v, int hdr, const char **at)
{
    const char *p = v.p, *end = v.p + v.n;
    struct osn_sip_addr *arr;
    int *n, cap;
    if (id == OSN_SIP_HDR_CONTACT) {
        arr = m->contact, n = &m->ncontact, cap = OSN_SIP_WIRE_MAX_CONTACT;
        /* Contact: * (RFC 3261 20.10, REGISTER only; the registrar checks the rest). */
        if (v.n == 1 && *p == '*') {
            m->contact_star = true;
            return 0;
        }
    } else if (id == OSN_SIP_HDR_ROUTE)
        arr = m->route, n = &m->nroute, cap = OSN_SIP_WIRE_MAX_ROUTES;
    else
        arr = m->record_route, n = &m->nrecord_route, cap = OSN_SIP_WIRE_MAX_ROUTES;
    for (;;) {
        if (*n >= cap)
            return (*at = p, OSN_SIP_WIRE_ECAP);
        struct osn_sip_addr *a = &arr[*n];
        int rc = osn__sip_addr_parse(a, p, end, true, at);
        if (rc)
            return rc;
        /* Route and Record-Route are name-addr only (RFC 3261 20.30, 20.34). */
        if (id != OSN_SIP_HDR_CONTACT) {
            if (!a->angle)
                return (*at = a->value.p, OSN_SIP_WIRE_EADDR);
            a->lr = osn__sip_has_lr(a->uri);
        }
        a->hdr = (uint16_t)hdr;
        (*n)++;
        if (*at >= end)
            return 0;
        p = *at + 1; /* after the comma */
    }
}

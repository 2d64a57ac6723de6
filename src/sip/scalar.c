/*
 * Small header decoders: CSeq (RFC 3261 20.16), Retry-After (20.33) and the option-tag lists
 * of Require and Proxy-Require (20.32, 20.29). Numbers are read with a bound, never with
 * strtoul: an overlarge value (RFC 4475 3.1.2.4-5) is a verdict, not an overflow.
 */
#include "sip_wire_int.h"

/* CSeq = 1*DIGIT LWS Method. 8.1.1.5 says the number must be a 32-bit unsigned integer (and
 * below 2^31 when a UAC picks it); we accept what fits 32 bits and refuse the rest. */
int osn__sip_cseq_parse(struct osn_sip_wire *m, struct osn_span v, const char **at)
{
    const char *p = v.p, *end = v.p + v.n;
    uint64_t x;
    const char *q = osn__sip_number(p, end, UINT32_MAX, &x);
    *at = p;
    if (!q)
        return OSN_SIP_WIRE_ECSEQ;
    p = skip_ws(q, end);
    if (p == q)
        return (*at = q, OSN_SIP_WIRE_ECSEQ);
    q = skip_token(p, end);
    if (q == p || q != end)
        return (*at = q, OSN_SIP_WIRE_ECSEQ);
    m->cseq = (uint32_t)x;
    m->cseq_method_name = span(p, q);
    m->cseq_method = (uint8_t)osn_sip_method_of(p, (size_t)(q - p));
    return 0;
}

/* Retry-After = delta-seconds [ comment ] *( SEMI retry-param ); retry-param = "duration"
 * EQUAL delta-seconds / generic-param. The comment may nest; it is skipped with a depth
 * counter, never by recursion. */
int osn__sip_retry_after_parse(struct osn_sip_wire *m, struct osn_span v, const char **at)
{
    struct osn_sip_retry_after *r = &m->retry_after;
    const char *p = v.p, *end = v.p + v.n;
    uint64_t x;
    const char *q = osn__sip_number(p, end, UINT32_MAX, &x);
    *at = p;
    if (!q)
        return OSN_SIP_WIRE_ERETRYAFTER; /* not a number, or above 2^32 - 1 (4475 3.1.2.5) */
    r->seconds = (uint32_t)x;
    p = skip_ws(q, end);
    if (p < end && *p == '(') {
        const char *cs = p + 1;
        unsigned depth = 0;
        for (; p < end; p++) {
            if (*p == '\\') {
                if (++p >= end)
                    break;
            } else if (*p == '(')
                depth++;
            else if (*p == ')' && --depth == 0)
                break;
        }
        if (p >= end)
            return (*at = cs - 1, OSN_SIP_WIRE_ERETRYAFTER);
        r->comment = span(cs, p);
        p = skip_ws(p + 1, end);
    }
    while (p < end && *p == ';') {
        struct osn_span name, val;
        int has = osn__sip_param(&p, end, false, &name, &val);
        if (has < 0)
            return (*at = p, OSN_SIP_WIRE_ERETRYAFTER);
        if (has && SPAN_IS(name, "duration")) {
            if (osn__sip_number(val.p, val.p + val.n, UINT32_MAX, &x) != val.p + val.n)
                return (*at = val.p, OSN_SIP_WIRE_ERETRYAFTER);
            r->duration = (int64_t)x;
        }
        p = skip_ws(p, end);
    }
    if (p != end)
        return (*at = p, OSN_SIP_WIRE_ERETRYAFTER);
    r->present = true;
    return 0;
}

/* Require / Proxy-Require = option-tag *(COMMA option-tag), option-tag = token. */
int osn__sip_options_parse(struct osn_sip_wire *m, int id, struct osn_span v, const char **at)
{
    bool proxy = id == OSN_SIP_HDR_PROXY_REQUIRE;
    struct osn_span *arr = proxy ? m->proxy_require : m->require;
    int *n = proxy ? &m->nproxy_require : &m->nrequire;
    const char *p = v.p, *end = v.p + v.n;
    for (;;) {
        p = skip_ws(p, end);
        const char *q = skip_token(p, end);
        *at = p;
        if (q == p)
            return OSN_SIP_WIRE_EOPTION;
        if (*n >= OSN_SIP_WIRE_MAX_OPTIONS)
            return OSN_SIP_WIRE_ECAP;
        arr[(*n)++] = span(p, q);
        p = skip_ws(q, end);
        if (p >= end)
            return 0;
        if (*p != ',')
            return (*at = p, OSN_SIP_WIRE_EOPTION);
        p++;
    }
}

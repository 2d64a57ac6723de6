/*
 * Via decoding (RFC 3261 20.42 and 25.1 via-parm, RFC 3581 rport, RFC 7339 9 overload-control
 * parameters): one header line's comma-separated via-parms into m->via[], each with its
 * sent-protocol, sent-by and the parameters a proxy and the transaction layer use.
 *
 *   via-parm      = sent-protocol LWS sent-by *( SEMI via-params )
 *   sent-protocol = protocol-name SLASH protocol-version SLASH transport
 *   sent-by       = host [ COLON port ]
 *
 * SLASH, SEMI, EQUAL and COLON allow LWS on both sides (RFC 3261 25.1), so RFC 4475's
 * "SIP  /   2.0\r\n /UDP" is one sent-protocol. The oc parameters become the numbers of
 * struct osn_sip_oc; the text extent of each is kept so that a printer can replace them.
 */
#include <string.h>

#include "sip_wire_int.h"

/* A parameter value: quoted-string, or token / host / IPv6 characters (gen-value, RFC 3261
 * 25.1). Returns its end, or NULL when empty or an unterminated quote. */
/* RFC 7339 9: oc-seq = 1*12DIGIT "." 1*5DIGIT; the fraction normalised to 5 digits so that
 * "1.78" orders as 1.78000 (osn_sip_oc_seq_cmp). */
static bool oc_seq(struct osn_span v, struct osn_sip_oc *oc)
{
    const char *p = v.p, *end = v.p + v.n;
    uint64_t i, f;
    const char *q = osn__sip_number(p, end, 999999999999u, &i);
    if (!q || q - p > 12 || q >= end || *q != '.')
        return false;
    const char *r = osn__sip_number(q + 1, end, 99999, &f);
    if (!r || r != end || r - (q + 1) > 5)
        return false;
    for (long d = r - (q + 1); d < 5; d++)
        f *= 10;
    oc->seq_int = i;
    oc->seq_frac = (uint32_t)f;
    return true;
}

/* oc-algo = DQUOTE algo-list *(COMMA algo-list) DQUOTE (RFC 7339 9, RFC 7415 5); unknown
 * algorithms are allowed and ignored. A bare token is read leniently as a one-item list. */
static bool oc_algo(struct osn_span v, struct osn_sip_via *via)
{
    const char *p = v.p, *end = v.p + v.n;
    if (p < end && *p == '"') {
        if (end - p < 2 || end[-1] != '"')
            return false;
        p++;
        end--;
    }
    via->oc_algo = span(p, end);
    while (p < end) {
        p = skip_ws(p, end);
        const char *q = p;
        while (q < end && (is_cc(*q, CC_ALPHA) || is_cc(*q, CC_DIGIT)))
            q++;
        if (q == p)
            return false;
        struct osn_span a = span(p, q);
        if (SPAN_IS(a, "loss"))
            via->oc.algo |= OSN_SIP_ALGO_LOSS;
        else if (SPAN_IS(a, "rate"))
            via->oc.algo |= OSN_SIP_ALGO_RATE;
        p = skip_ws(q, end);
        if (p < end && *p != ',')
            return false;
        if (p < end)
            p++;
    }
    return true;
}

/* Records one parameter. Returns false when its value is malformed. */
static bool via_param(struct osn_sip_wire *m, struct osn_sip_via *via, struct osn_span name,
                      struct osn_span val, const char *ps, const char *pe)
{
    uint64_t x;
    int oc = -1;
    switch (lower(name.p[0])) {
    case 'b':
        if (SPAN_IS(name, "branch")) {
            if (!val.p || val.n == 0 || val.p[0] == '"')
                return false;
            via->branch = val;
        }
        return true;
    case 'r':
        if (SPAN_IS(name, "received"))
            via->received = val;
        else if (SPAN_IS(name, "rport")) {
            via->rport = true;
            if (val.p && val.n && osn__sip_number(val.p, val.p + val.n, 65535, &x) != val.p + val.n)
                return false;
            via->rport_value = val;
        }
        return true;
    case 'm':
        if (SPAN_IS(name, "maddr"))
            via->maddr = val;
        return true;
    case 't':
        if (SPAN_IS(name, "ttl")) {
            if (!val.p || osn__sip_number(val.p, val.p + val.n, 255, &x) != val.p + val.n)
                return false;
            via->ttl = (int16_t)x;
        }
        return true;
    case 'o':
        break;
    default:
        return true;
    }
    if (SPAN_IS(name, "oc")) {
        oc = 0;
        via->oc.flags |= OSN_SIP_OC_PRESENT;
        if (val.p && val.n) {
            if (osn__sip_number(val.p, val.p + val.n, UINT32_MAX, &x) != val.p + val.n)
                return false;
            via->oc.value = (uint32_t)x;
            via->oc.flags |= OSN_SIP_OC_VALUE;
        }
    } else if (SPAN_IS(name, "oc-validity")) {
        oc = 1;
        if (!val.p || osn__sip_number(val.p, val.p + val.n, UINT32_MAX, &x) != val.p + val.n)
            return false;
        via->oc.validity_ms = (uint32_t)x;
        via->oc.flags |= OSN_SIP_OC_VALIDITY;
    } else if (SPAN_IS(name, "oc-seq")) {
        oc = 2;
        if (!val.p || !oc_seq(val, &via->oc))
            return false;
        via->oc.flags |= OSN_SIP_OC_SEQ;
    } else if (SPAN_IS(name, "oc-algo")) {
        oc = 3;
        if (!val.p || !oc_algo(val, via))
            return false;
        via->oc.flags |= OSN_SIP_OC_ALGO;
    }
    if (oc >= 0) {
        via->oc_at[oc] = (uint16_t)(ps - m->buf.p);
        via->oc_len[oc] = (uint16_t)(pe - ps);
    }
    return true;
}

/* host = hostname / IPv4address / IPv6reference. Returns its end or NULL. */
static const char *host(const char *p, const char *end)
{
    const char *s = p;
    if (p < end && *p == '[') {
        for (p++; p < end && (is_cc(*p, CC_HOST) || *p == ':'); p++)
            ;
        return p < end && *p == ']' && p > s + 1 ? p + 1 : NULL;
    }
    p = skip_cc(p, end, CC_HOST);
    return p == s ? NULL : p;
}

int osn__sip_via_parse(struct osn_sip_wire *m, struct osn_span v, int hdr, const char **at)
{
    const char *p = v.p, *end = v.p + v.n, *q;
    for (;;) {
        p = skip_ws(p, end);
        *at = p;
        if (m->nvia >= OSN_SIP_WIRE_MAX_VIAS)
            return OSN_SIP_WIRE_ECAP;
        struct osn_sip_via *via = &m->via[m->nvia];
        memset(via, 0, sizeof *via);
        via->ttl = -1;
        via->hdr = (uint16_t)hdr;
        const char *s = p;
        struct osn_span *part[3] = {&via->protocol, &via->version, &via->transport};
        int k = 0;
        /* "SIP/2.0/" then the transport, as nearly every Via has it, read at once (one word
         * compared, case folded) rather than as three tokens with LWS allowed around each '/':
         * it was a quarter of a Via's decoding. Anything else takes the general path. */
        if (end - p > 8 && lower8(p, 8) == lower8("sip/2.0/", 8) &&
            (q = skip_token(p + 8, end)) > p + 8) {
            via->protocol = (struct osn_span){p, 3};
            via->version = (struct osn_span){p + 4, 3};
            via->transport = span(p + 8, q);
            p = q;
            k = 3;
        }
        for (; k < 3; k++) {
            if (k) {
                p = skip_ws(p, end);
                if (p >= end || *p != '/')
                    return (*at = p, OSN_SIP_WIRE_EVIA);
                p = skip_ws(p + 1, end);
            }
            q = skip_token(p, end);
            if (q == p)
                return (*at = p, OSN_SIP_WIRE_EVIA);
            *part[k] = span(p, q);
            p = q;
        }
        q = skip_ws(p, end);
        if (q == p)
            return (*at = p, OSN_SIP_WIRE_EVIA);
        p = q;
        q = host(p, end);
        if (!q)
            return (*at = p, OSN_SIP_WIRE_EVIA);
        via->host = span(p, q);
        m->nvia++; /* counted from here: the sent-by is what an answer needs */
        p = skip_ws(q, end);
        if (p < end && *p == ':') {
            uint64_t port;
            p = skip_ws(p + 1, end);
            q = osn__sip_number(p, end, 65535, &port);
            if (!q)
                return (*at = p, OSN_SIP_WIRE_EVIA);
            via->port = (uint16_t)port;
            p = q;
        }
        const char *vend = p;
        for (;;) {
            p = skip_ws(p, end);
            if (p >= end || *p != ';')
                break;
            const char *ps = p;
            if (!via->params.p)
                via->params.p = p;
            struct osn_span name, val;
            if (osn__sip_param(&p, end, true, &name, &val) < 0)
                return (*at = p, OSN_SIP_WIRE_EVIA);
            if (!via_param(m, via, name, val, ps, p))
                return (*at = ps, OSN_SIP_WIRE_EVIA);
            vend = p;
        }
        via->value = span(s, vend);
        if (via->params.p)
            via->params.n = (size_t)(vend - via->params.p);
        p = skip_ws(p, end);
        if (p >= end)
            return 0;
        if (*p != ',')
            return (*at = p, OSN_SIP_WIRE_EVIA);
        p++;
    }
}

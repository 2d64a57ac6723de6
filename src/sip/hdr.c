/*
 * SIP message text basics shared by the parser and the printer: the character classes of RFC
 * 3261 25.1 as one 256-byte table, header names to ids (long and compact forms, ASCII case
 * folded, RFC 3261 7.3.1 and 7.3.3), method names, reason phrases and the small scanners
 * (quoted strings, bounded numbers) every decoder uses.
 *
 * The header-name lookup is a switch on the lower-cased first letter followed by one length
 * check and one comparison, libre's "compact-form switch" without its perfect hash: a typical
 * name costs one or two comparisons of a dozen bytes.
 */
#include <string.h>

#include "sip_wire_int.h"

/* RFC 3261 25.1 character classes, generated (one column per bit of sip_wire_int.h's CC_*):
 * token = alphanum / "-" / "." / "!" / "%" / "*" / "_" / "+" / "`" / "'" / "~"; WS = SP, HTAB,
 * CR, LF; HOST = alphanum / "-" / "." / "_"; CTL = 0x00-0x1f but HTAB, and 0x7f; URI = 0x21-0x7e
 * but '<', '>' and '"'; SCHEME = alphanum / "+" / "-" / "." (RFC 3986 3.1). Bytes >= 0x80 are in no
 * class: UTF-8 is allowed only where a decoder says so. */
const uint8_t osn__sip_cc[256] = {
        /* 0x00 */ 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
        /* 0x08 */ 0x20, 0x02, 0x22, 0x20, 0x20, 0x22, 0x20, 0x20,
        /* 0x10 */ 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
        /* 0x18 */ 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20,
        /* 0x20 */ 0x02, 0x41, 0x00, 0x40, 0x40, 0x41, 0x40, 0x41,
        /* 0x28 */ 0x40, 0x40, 0x41, 0xc1, 0x40, 0xc9, 0xc9, 0x40,
        /* 0x30 */ 0xcd, 0xcd, 0xcd, 0xcd, 0xcd, 0xcd, 0xcd, 0xcd,
        /* 0x38 */ 0xcd, 0xcd, 0x40, 0x40, 0x00, 0x40, 0x00, 0x40,
        /* 0x40 */ 0x40, 0xd9, 0xd9, 0xd9, 0xd9, 0xd9, 0xd9, 0xd9,
        /* 0x48 */ 0xd9, 0xd9, 0xd9, 0xd9, 0xd9, 0xd9, 0xd9, 0xd9,
        /* 0x50 */ 0xd9, 0xd9, 0xd9, 0xd9, 0xd9, 0xd9, 0xd9, 0xd9,
        /* 0x58 */ 0xd9, 0xd9, 0xd9, 0x40, 0x40, 0x40, 0x40, 0x49,
        /* 0x60 */ 0x41, 0xd9, 0xd9, 0xd9, 0xd9, 0xd9, 0xd9, 0xd9,
        /* 0x68 */ 0xd9, 0xd9, 0xd9, 0xd9, 0xd9, 0xd9, 0xd9, 0xd9,
        /* 0x70 */ 0xd9, 0xd9, 0xd9, 0xd9, 0xd9, 0xd9, 0xd9, 0xd9,
        /* 0x78 */ 0xd9, 0xd9, 0xd9, 0x40, 0x40, 0x40, 0x41, 0x20,
        /* 0x80 */ 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        /* 0x88 */ 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        /* 0x90 */ 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        /* 0x98 */ 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        /* 0xa0 */ 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        /* 0xa8 */ 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        /* 0xb0 */ 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        /* 0xb8 */ 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        /* 0xc0 */ 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        /* 0xc8 */ 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        /* 0xd0 */ 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        /* 0xd8 */ 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        /* 0xe0 */ 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        /* 0xe8 */ 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        /* 0xf0 */ 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        /* 0xf8 */ 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
};

/* Canonical names with their lengths, so that the lookup compares a length before any byte. */
#define H(s)             \
    {                    \
        s, sizeof(s) - 1 \
    }
static const struct {
    const char *s;
    uint8_t n;
} hdr_names[OSN_SIP_NHDRS] = {
        [OSN_SIP_HDR_OTHER] = H(""),
        [OSN_SIP_HDR_ACCEPT] = H("Accept"),
        [OSN_SIP_HDR_ACCEPT_CONTACT] = H("Accept-Contact"),
        [OSN_SIP_HDR_ALLOW] = H("Allow"),
        [OSN_SIP_HDR_ALLOW_EVENTS] = H("Allow-Events"),
        [OSN_SIP_HDR_AUTHORIZATION] = H("Authorization"),
        [OSN_SIP_HDR_CALL_ID] = H("Call-ID"),
        [OSN_SIP_HDR_CONTACT] = H("Contact"),
        [OSN_SIP_HDR_CONTENT_ENCODING] = H("Content-Encoding"),
        [OSN_SIP_HDR_CONTENT_LENGTH] = H("Content-Length"),
        [OSN_SIP_HDR_CONTENT_TYPE] = H("Content-Type"),
        [OSN_SIP_HDR_CSEQ] = H("CSeq"),
        [OSN_SIP_HDR_DATE] = H("Date"),
        [OSN_SIP_HDR_EVENT] = H("Event"),
        [OSN_SIP_HDR_EXPIRES] = H("Expires"),
        [OSN_SIP_HDR_FROM] = H("From"),
        [OSN_SIP_HDR_IDENTITY] = H("Identity"),
        [OSN_SIP_HDR_IDENTITY_INFO] = H("Identity-Info"),
        [OSN_SIP_HDR_MAX_FORWARDS] = H("Max-Forwards"),
        [OSN_SIP_HDR_PROXY_AUTHORIZATION] = H("Proxy-Authorization"),
        [OSN_SIP_HDR_PROXY_REQUIRE] = H("Proxy-Require"),
        [OSN_SIP_HDR_RECORD_ROUTE] = H("Record-Route"),
        [OSN_SIP_HDR_REFER_TO] = H("Refer-To"),
        [OSN_SIP_HDR_REFERRED_BY] = H("Referred-By"),
        [OSN_SIP_HDR_REJECT_CONTACT] = H("Reject-Contact"),
        [OSN_SIP_HDR_REQUEST_DISPOSITION] = H("Request-Disposition"),
        [OSN_SIP_HDR_REQUIRE] = H("Require"),
        [OSN_SIP_HDR_RETRY_AFTER] = H("Retry-After"),
        [OSN_SIP_HDR_ROUTE] = H("Route"),
        [OSN_SIP_HDR_SESSION_EXPIRES] = H("Session-Expires"),
        [OSN_SIP_HDR_SUBJECT] = H("Subject"),
        [OSN_SIP_HDR_SUPPORTED] = H("Supported"),
        [OSN_SIP_HDR_TIMESTAMP] = H("Timestamp"),
        [OSN_SIP_HDR_TO] = H("To"),
        [OSN_SIP_HDR_VIA] = H("Via"),
        [OSN_SIP_HDR_WWW_AUTHENTICATE] = H("WWW-Authenticate"),
};
#undef H

const char *osn_sip_hdr_name(int id)
{
    return id > 0 && id < OSN_SIP_NHDRS ? hdr_names[id].s : "";
}

/* Whether name[0..n) is `id`'s long name, ignoring case. Canonical names are letters and '-',
 * so OR-ing 0x20 into both sides folds case exactly: no other token character maps onto a
 * letter or '-' that way. */
static bool is_name(const char *name, size_t n, int id)
{
    if (hdr_names[id].n != n)
        return false;
    const char *s = hdr_names[id].s;
    if (n >= 8) {
        /* Eight bytes a step, the last step overlapping the one before. */
        const uint64_t fold = 0x2020202020202020u;
        uint64_t a, b;
        for (size_t i = 0; i + 8 <= n; i += 8) {
            memcpy(&a, name + i, 8);
            memcpy(&b, s + i, 8);
            if ((a | fold) != (b | fold))
                return false;
        }
        memcpy(&a, name + n - 8, 8);
        memcpy(&b, s + n - 8, 8);
        return (a | fold) == (b | fold);
    }
    /* Shorter: two overlapping loads of four bytes (two for "To" and "Via"), no byte loop. */
    if (n >= 4) {
        const uint32_t fold = 0x20202020u;
        uint32_t a0, b0, a1, b1;
        memcpy(&a0, name, 4);
        memcpy(&b0, s, 4);
        memcpy(&a1, name + n - 4, 4);
        memcpy(&b1, s + n - 4, 4);
        return ((a0 | fold) == (b0 | fold)) & ((a1 | fold) == (b1 | fold));
    }
    const uint16_t fold = 0x2020u;
    uint16_t a0, b0, a1, b1;
    memcpy(&a0, name, 2);
    memcpy(&b0, s, 2);
    memcpy(&a1, name + n - 2, 2);
    memcpy(&b1, s + n - 2, 2);
    return ((a0 | fold) == (b0 | fold)) & ((a1 | fold) == (b1 | fold));
}

/* RFC 3261 7.3.3 and the registry of compact forms (RFC 3841, 4474, 4028, 3515, 3892, 6665). */
static int compact(char c)
{
    switch (c) {
    case 'a':
        return OSN_SIP_HDR_ACCEPT_CONTACT;
    case 'b':
        return OSN_SIP_HDR_REFERRED_BY;
    case 'c':
        return OSN_SIP_HDR_CONTENT_TYPE;
    case 'd':
        return OSN_SIP_HDR_REQUEST_DISPOSITION;
    case 'e':
        return OSN_SIP_HDR_CONTENT_ENCODING;
    case 'f':
        return OSN_SIP_HDR_FROM;
    case 'i':
        return OSN_SIP_HDR_CALL_ID;
    case 'j':
        return OSN_SIP_HDR_REJECT_CONTACT;
    case 'k':
        return OSN_SIP_HDR_SUPPORTED;
    case 'l':
        return OSN_SIP_HDR_CONTENT_LENGTH;
    case 'm':
        return OSN_SIP_HDR_CONTACT;
    case 'n':
        return OSN_SIP_HDR_IDENTITY_INFO;
    case 'o':
        return OSN_SIP_HDR_EVENT;
    case 'r':
        return OSN_SIP_HDR_REFER_TO;
    case 's':
        return OSN_SIP_HDR_SUBJECT;
    case 't':
        return OSN_SIP_HDR_TO;
    case 'u':
        return OSN_SIP_HDR_ALLOW_EVENTS;
    case 'v':
        return OSN_SIP_HDR_VIA;
    case 'x':
        return OSN_SIP_HDR_SESSION_EXPIRES;
    case 'y':
        return OSN_SIP_HDR_IDENTITY;
    default:
        return OSN_SIP_HDR_OTHER;
    }
}

int osn_sip_hdr_id(const char *name, size_t n)
{
    if (!name || n == 0)
        return OSN_SIP_HDR_OTHER;
    if (n == 1)
        return compact(lower(name[0]));
    if (n > 19)
        return OSN_SIP_HDR_OTHER;
    /* Candidates by length and first letter: at most two (Call-ID and Contact, Referred-By and
     * Retry-After), so a name costs one table read and one or two comparisons of whole words;
     * the scan of up to five candidates by length alone was 5% of a proxy's instructions. */
    static const uint8_t cand[20][26][2] = {
            [2]['t' - 'a'] = {OSN_SIP_HDR_TO},
            [3]['v' - 'a'] = {OSN_SIP_HDR_VIA},
            [4]['c' - 'a'] = {OSN_SIP_HDR_CSEQ},
            [4]['d' - 'a'] = {OSN_SIP_HDR_DATE},
            [4]['f' - 'a'] = {OSN_SIP_HDR_FROM},
            [5]['a' - 'a'] = {OSN_SIP_HDR_ALLOW},
            [5]['e' - 'a'] = {OSN_SIP_HDR_EVENT},
            [5]['r' - 'a'] = {OSN_SIP_HDR_ROUTE},
            [6]['a' - 'a'] = {OSN_SIP_HDR_ACCEPT},
            [7]['c' - 'a'] = {OSN_SIP_HDR_CALL_ID, OSN_SIP_HDR_CONTACT},
            [7]['e' - 'a'] = {OSN_SIP_HDR_EXPIRES},
            [7]['r' - 'a'] = {OSN_SIP_HDR_REQUIRE},
            [7]['s' - 'a'] = {OSN_SIP_HDR_SUBJECT},
            [8]['i' - 'a'] = {OSN_SIP_HDR_IDENTITY},
            [8]['r' - 'a'] = {OSN_SIP_HDR_REFER_TO},
            [9]['s' - 'a'] = {OSN_SIP_HDR_SUPPORTED},
            [9]['t' - 'a'] = {OSN_SIP_HDR_TIMESTAMP},
            [11]['r' - 'a'] = {OSN_SIP_HDR_REFERRED_BY, OSN_SIP_HDR_RETRY_AFTER},
            [12]['a' - 'a'] = {OSN_SIP_HDR_ALLOW_EVENTS},
            [12]['c' - 'a'] = {OSN_SIP_HDR_CONTENT_TYPE},
            [12]['m' - 'a'] = {OSN_SIP_HDR_MAX_FORWARDS},
            [12]['r' - 'a'] = {OSN_SIP_HDR_RECORD_ROUTE},
            [13]['a' - 'a'] = {OSN_SIP_HDR_AUTHORIZATION},
            [13]['i' - 'a'] = {OSN_SIP_HDR_IDENTITY_INFO},
            [13]['p' - 'a'] = {OSN_SIP_HDR_PROXY_REQUIRE},
            [14]['a' - 'a'] = {OSN_SIP_HDR_ACCEPT_CONTACT},
            [14]['c' - 'a'] = {OSN_SIP_HDR_CONTENT_LENGTH},
            [14]['r' - 'a'] = {OSN_SIP_HDR_REJECT_CONTACT},
            [15]['s' - 'a'] = {OSN_SIP_HDR_SESSION_EXPIRES},
            [16]['c' - 'a'] = {OSN_SIP_HDR_CONTENT_ENCODING},
            [16]['w' - 'a'] = {OSN_SIP_HDR_WWW_AUTHENTICATE},
            [19]['p' - 'a'] = {OSN_SIP_HDR_PROXY_AUTHORIZATION},
            [19]['r' - 'a'] = {OSN_SIP_HDR_REQUEST_DISPOSITION},
    };
    unsigned c = (unsigned)((name[0] | 0x20) - 'a');
    if (c >= 26)
        return OSN_SIP_HDR_OTHER;
    for (int k = 0; k < 2 && cand[n][c][k]; k++)
        if (is_name(name, n, cand[n][c][k]))
            return cand[n][c][k];
    return OSN_SIP_HDR_OTHER;
}

int osn_sip_method_of(const char *name, size_t n)
{
    /* RFC 3261 7.1: methods are case-sensitive. */
#define IS(lit) (n == sizeof(lit) - 1 && memcmp(name, lit, n) == 0)
    if (!name)
        return OSN_SIP_NOMETHOD;
    if (IS("INVITE"))
        return OSN_SIP_INVITE;
    if (IS("ACK"))
        return OSN_SIP_ACK;
    if (IS("BYE"))
        return OSN_SIP_BYE;
    if (IS("CANCEL"))
        return OSN_SIP_CANCEL;
    if (IS("OPTIONS"))
        return OSN_SIP_OPTIONS;
    if (IS("REGISTER"))
        return OSN_SIP_REGISTER;
#undef IS
    return OSN_SIP_OTHER;
}

bool osn_span_eq(struct osn_span a, struct osn_span b)
{
    return a.n == b.n && (a.n == 0 || memcmp(a.p, b.p, a.n) == 0);
}

bool osn_span_caseeq(struct osn_span a, struct osn_span b)
{
    if (a.n != b.n)
        return false;
    for (size_t i = 0; i < a.n; i++)
        if (lower(a.p[i]) != lower(b.p[i]))
            return false;
    return true;
}

const char *osn__sip_gen_value(const char *p, const char *end, bool host)
{
    if (p < end && *p == '"')
        return osn__sip_skip_quoted(p, end);
    const char *s = p;
    for (;;) { /* token runs, joined by the IPv6 characters a host value may have */
        p = skip_token_long(p, end);
        if (!host || p >= end || (*p != ':' && *p != '[' && *p != ']'))
            break;
        p++;
    }
    return p == s ? NULL : p;
}

int osn__sip_param(const char **pp, const char *end, bool host, struct osn_span *name,
                   struct osn_span *val)
{
    const char *p = skip_ws(*pp + 1, end), *q = skip_token(p, end);
    if (q == p)
        return (*pp = p, -1); /* ";;" (RFC 4475 3.1.2.1) */
    *name = span(p, q);
    p = skip_ws(q, end);
    if (p >= end || *p != '=') {
        *val = (struct osn_span){name->p + name->n, 0};
        *pp = q;
        return 0;
    }
    p = skip_ws(p + 1, end);
    q = osn__sip_gen_value(p, end, host);
    if (!q)
        return (*pp = p, -1);
    *val = span(p, q);
    *pp = q;
    return 1;
}

const char *osn__sip_skip_quoted(const char *p, const char *end)
{
    for (p++; p < end; p++) {
        if (*p == '"')
            return p + 1;
        if (*p == '\\') {
            /* RFC 3261 25.1: quoted-pair = "\" (%x00-09 / %x0B-0C / %x0E-7F) */
            if (p + 1 >= end || p[1] == '\r' || p[1] == '\n' || (unsigned char)p[1] > 0x7f)
                return NULL;
            p++;
        }
    }
    return NULL;
}

const char *osn__sip_number(const char *p, const char *end, uint64_t max, uint64_t *v)
{
    uint64_t x = 0;
    const uint64_t lim = max / 10, rem = max % 10; /* one division, not one per digit */
    const char *s = p;
    for (; p < end && is_cc(*p, CC_DIGIT); p++) {
        uint64_t d = (uint64_t)(*p - '0');
        if (x > lim || (x == lim && d > rem))
            return NULL;
        x = x * 10 + d;
    }
    if (p == s)
        return NULL;
    *v = x;
    return p;
}

const char *osn_sip_wire_reason_name(int reason)
{
    static const char *const names[OSN_SIP_WIRE_NREASONS] = {
            [OSN_SIP_WIRE_OK] = "ok",
            [OSN_SIP_WIRE_ETOOLONG] = "empty or longer than a datagram",
            [OSN_SIP_WIRE_ESTARTLINE] = "start line malformed",
            [OSN_SIP_WIRE_EVERSION] = "SIP version not supported",
            [OSN_SIP_WIRE_EURI] = "Request-URI malformed",
            [OSN_SIP_WIRE_ESTATUS] = "status code out of range",
            [OSN_SIP_WIRE_EHDRNAME] = "header name malformed",
            [OSN_SIP_WIRE_ECHAR] = "control character",
            [OSN_SIP_WIRE_ENOEND] = "no end of headers",
            [OSN_SIP_WIRE_ECAP] = "too many headers or values",
            [OSN_SIP_WIRE_EVIA] = "Via malformed",
            [OSN_SIP_WIRE_EADDR] = "From, To, Contact or Route malformed",
            [OSN_SIP_WIRE_ECALLID] = "Call-ID malformed",
            [OSN_SIP_WIRE_ECSEQ] = "CSeq malformed",
            [OSN_SIP_WIRE_ECSEQMETHOD] = "CSeq method differs from the request's",
            [OSN_SIP_WIRE_EMAXFWD] = "Max-Forwards malformed",
            [OSN_SIP_WIRE_ECLEN] = "Content-Length malformed",
            [OSN_SIP_WIRE_ETRUNCATED] = "body shorter than Content-Length",
            [OSN_SIP_WIRE_ERETRYAFTER] = "Retry-After malformed",
            [OSN_SIP_WIRE_EOPTION] = "option tag malformed",
            [OSN_SIP_WIRE_EDUP] = "single-valued header repeated",
            [OSN_SIP_WIRE_EMISSING] = "mandatory header missing",
    };
    return reason >= 0 && reason < OSN_SIP_WIRE_NREASONS ? names[reason] : "?";
}

const char *osn_sip_reason_phrase(int status)
{
    /* RFC 3261 21, the codes a proxy or UAS of this toolkit sends or forwards most. */
    switch (status) {
    case 100:
        return "Trying";
    case 180:
        return "Ringing";
    case 181:
        return "Call Is Being Forwarded";
    case 182:
        return "Queued";
    case 183:
        return "Session Progress";
    case 200:
        return "OK";
    case 202:
        return "Accepted";
    case 400:
        return "Bad Request";
    case 403:
        return "Forbidden";
    case 404:
        return "Not Found";
    case 408:
        return "Request Timeout";
    case 420:
        return "Bad Extension";
    case 480:
        return "Temporarily Unavailable";
    case 481:
        return "Call/Transaction Does Not Exist";
    case 482:
        return "Loop Detected";
    case 483:
        return "Too Many Hops";
    case 486:
        return "Busy Here";
    case 487:
        return "Request Terminated";
    case 500:
        return "Server Internal Error";
    case 501:
        return "Not Implemented";
    case 503:
        return "Service Unavailable";
    case 504:
        return "Server Time-out";
    case 505:
        return "Version Not Supported";
    case 603:
        return "Decline";
    default:
        return "";
    }
}

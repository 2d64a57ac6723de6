/*
 * SDP offer/answer for a UAS that sends and receives no media (RFC 4566 syntax, RFC 3264 rules).
 *
 * The offer is checked line by line (RFC 4566 5: "<type>=<value>", v= first, then o=, s=, and
 * at least one t= before the first m=; a connection address at session level or in every media
 * section; each m= line "<media> <port>[/<count>] <proto> <fmt> ..."); anything else is
 * malformed, which the UAS answers 488 (RFC 3261 21.4.26).
 *
 * The answer (RFC 3264 6): as many m= lines as the offer, in its order, the same media and
 * proto; each accepted stream takes the first format offered (with that format's rtpmap and
 * fmtp lines), a stream offered with port 0 stays rejected (port 0); the t= line is the offer's
 * (6: "MUST be equal"). Every accepted stream is marked inactive: this UAS neither sends nor
 * receives media, and inactive is the one direction RFC 3264 6.1 allows against any offered
 * one (sendrecv, sendonly, recvonly, inactive), so the peer sends no RTP toward a port where
 * nothing listens. The port is the caller's choice (the node uses 9, the discard port).
 *
 * An INVITE without an offer gets one (RFC 3261 13.3.1.4: its 2xx MUST carry an offer): one
 * audio stream, PCMU, inactive; the answer in the ACK is not read.
 */
#include <stdio.h>
#include <string.h>

#include "osn/err.h"
#include "sip_wire_int.h"
#include "writer.h"

#define SDP_MAX_MEDIA 16

/* One line of the body: its type letter and value (without "x=" and the line end). */
struct line {
    char type;
    struct osn_span value;
};

/* The next line of [*p, end); false at the end. A line ends in CRLF or, leniently, LF. */
static bool next_line(const char **p, const char *end, struct osn_span *l)
{
    if (*p >= end)
        return false;
    const char *s = *p, *nl = memchr(s, '\n', (size_t)(end - s));
    const char *e = nl ? nl : end;
    *p = nl ? nl + 1 : end;
    if (e > s && e[-1] == '\r')
        e--;
    *l = (struct osn_span){s, (size_t)(e - s)};
    return true;
}

/* The space-separated word k (0-based) of a value, absent when there are fewer. */
static struct osn_span word(struct osn_span v, int k)
{
    const char *p = v.p, *end = v.p + v.n;
    for (int i = 0;; i++) {
        while (p < end && *p == ' ')
            p++;
        const char *s = p;
        while (p < end && *p != ' ')
            p++;
        if (s == p)
            return (struct osn_span){NULL, 0};
        if (i == k)
            return (struct osn_span){s, (size_t)(p - s)};
    }
}

static bool all_digits(struct osn_span s)
{
    if (!s.n || s.n > 5)
        return false;
    for (size_t i = 0; i < s.n; i++)
        if (s.p[i] < '0' || s.p[i] > '9')
            return false;
    return true;
}

/* One m= section of the offer, as the answer needs it. */
struct media {
    struct osn_span media, proto, fmt; /* fmt: the first format */
    bool rejected;                     /* port 0 */
    bool has_c;
    const char *from, *to; /* its lines after the m= line, for rtpmap/fmtp */
};

struct offer {
    struct osn_span t; /* the first t= line's value */
    bool session_c;
    int nmedia;
    struct media m[SDP_MAX_MEDIA];
};

/* "<port>[/<count>]" with port 0..65535. */
static bool port_of(struct osn_span s, bool *zero)
{
    const char *slash = memchr(s.p, '/', s.n);
    struct osn_span port = {s.p, slash ? (size_t)(slash - s.p) : s.n};
    if (!all_digits(port) ||
        (slash && !all_digits((struct osn_span){slash + 1, (size_t)(s.p + s.n - slash - 1)})))
        return false;
    unsigned v = 0;
    for (size_t i = 0; i < port.n; i++)
        v = v * 10 + (unsigned)(port.p[i] - '0');
    *zero = v == 0;
    return v <= 65535;
}

static bool parse_offer(struct osn_span body, struct offer *o)
{
    const char *p = body.p, *end = body.p + body.n;
    struct osn_span l;
    int n = 0;
    bool have_o = false, have_s = false;
    *o = (struct offer){0};
    while (next_line(&p, end, &l)) {
        if (l.n == 0 && p >= end)
            break; /* the body's last line end */
        /* RFC 4566 5: exactly one letter, '=', no space before the value. */
        if (l.n < 2 || l.p[1] != '=' || l.p[0] < 'a' || l.p[0] > 'z')
            return false;
        char t = l.p[0];
        struct osn_span v = {l.p + 2, l.n - 2};
        if (n++ == 0 && !(t == 'v' && v.n == 1 && v.p[0] == '0'))
            return false;
        struct media *cur = o->nmedia ? &o->m[o->nmedia - 1] : NULL;
        if (cur && t != 'm')
            cur->to = l.p + l.n;
        switch (t) {
        case 'o':
            have_o = !cur && word(v, 5).n && !word(v, 6).n;
            if (!have_o)
                return false;
            break;
        case 's':
            have_s = !cur;
            break;
        case 't':
            if (!cur && !o->t.n)
                o->t = v;
            break;
        case 'c':
            /* "<nettype> <addrtype> <address>" */
            if (!word(v, 2).n || word(v, 3).n)
                return false;
            if (cur)
                cur->has_c = true;
            else
                o->session_c = true;
            break;
        case 'm': {
            bool zero;
            if (!have_o || !have_s || !o->t.n || o->nmedia == SDP_MAX_MEDIA)
                return false;
            struct media *m = &o->m[o->nmedia++];
            *m = (struct media){.media = word(v, 0), .proto = word(v, 2), .fmt = word(v, 3)};
            if (!m->fmt.n || !port_of(word(v, 1), &zero))
                return false;
            m->rejected = zero;
            m->from = m->to = l.p + l.n;
            break;
        }
        default:
            break;
        }
    }
    if (!have_o || !have_s || !o->t.n)
        return false;
    for (int i = 0; i < o->nmedia; i++)
        if (!o->session_c && !o->m[i].has_c && !o->m[i].rejected)
            return false;
    return true;
}

int osn_sdp_offer_check(struct osn_span content_type, struct osn_span body)
{
    if (!body.n)
        return OSN_SDP_NO_OFFER;
    /* media-type "application/sdp", parameters allowed, case-insensitive (RFC 3261 7.3.1) */
    struct osn_span ct = content_type;
    while (ct.n && (ct.p[ct.n - 1] == ' ' || ct.p[ct.n - 1] == '\t'))
        ct.n--;
    const char *semi = ct.p ? memchr(ct.p, ';', ct.n) : NULL;
    if (semi)
        ct.n = (size_t)(semi - ct.p);
    while (ct.n && (ct.p[ct.n - 1] == ' ' || ct.p[ct.n - 1] == '\t'))
        ct.n--;
    if (!osn_span_caseeq(ct, (struct osn_span){"application/sdp", 15}))
        return OSN_SDP_NOT_SDP;
    struct offer *o = &(struct offer){0};
    return parse_offer(body, o) ? OSN_SDP_OFFER : OSN_SDP_MALFORMED;
}

static void putf(struct osn_text *w, const char *fmt, unsigned long long a, unsigned long long b)
{
    char buf[64];
    int k = snprintf(buf, sizeof buf, fmt, a, b);
    put(w, buf, (size_t)k);
}

/* The offer's "a=rtpmap:<fmt> ..." and "a=fmtp:<fmt> ..." lines of media m, as they came. */
static void format_lines(struct osn_text *w, const struct media *m)
{
    static const char *const attrs[] = {"a=rtpmap:", "a=fmtp:"};
    for (int k = 0; k < 2; k++) {
        const char *p = m->from;
        struct osn_span l;
        size_t an = strlen(attrs[k]);
        while (next_line(&p, m->to, &l)) {
            if (l.n > an + m->fmt.n && !memcmp(l.p, attrs[k], an) &&
                !memcmp(l.p + an, m->fmt.p, m->fmt.n) && l.p[an + m->fmt.n] == ' ') {
                putsp(w, l);
                put(w, "\r\n", 2);
            }
        }
    }
}

/* "IN IP4 <addr>" and the line end (o= puts a space before it). */
static void put_addr(struct osn_text *w, const struct osn_sdp_local *l)
{
    put(w, l->ip6 ? "IN IP6 " : "IN IP4 ", 7);
    putsp(w, l->addr);
    put(w, "\r\n", 2);
}

int osn_sdp_print_answer(char *out, size_t cap, struct osn_span offer,
                         const struct osn_sdp_local *l)
{
    struct offer *o = &(struct offer){0};
    if (!out || !l || !l->addr.n)
        return OSN_EINVAL;
    if (!offer.n) {
        /* No offer to answer: ours (RFC 3261 13.3.1.4), one audio stream, PCMU (RFC 3551). */
        o->t = (struct osn_span){"0 0", 3};
        o->nmedia = 1;
        o->m[0] = (struct media){.media = {"audio", 5}, .proto = {"RTP/AVP", 7}, .fmt = {"0", 1}};
    } else if (!parse_offer(offer, o))
        return OSN_EINVAL;
    struct osn_text w = osn_text_at(out, cap);
    put(&w, "v=0\r\n", 5);
    putf(&w, "o=osn %llu %llu ", l->session_id, l->session_id);
    put_addr(&w, l);
    put(&w, "s=-\r\nc=", 7);
    put_addr(&w, l);
    put(&w, "t=", 2);
    putsp(&w, o->t);
    put(&w, "\r\n", 2);
    for (int i = 0; i < o->nmedia; i++) {
        const struct media *m = &o->m[i];
        put(&w, "m=", 2);
        putsp(&w, m->media);
        putf(&w, " %llu ", m->rejected ? 0 : l->port, 0);
        putsp(&w, m->proto);
        put(&w, " ", 1);
        putsp(&w, m->fmt);
        put(&w, "\r\n", 2);
        if (m->rejected)
            continue;
        if (offer.n)
            format_lines(&w, m);
        else
            put(&w, "a=rtpmap:0 PCMU/8000\r\n", 22);
        put(&w, "a=inactive\r\n", 12);
    }
    if (w.over)
        return OSN_ETOOBIG;
    return (int)(w.p - out);
}

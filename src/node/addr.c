/*
 * The node's UDP addresses, IPv4 or IPv6: "HOST:PORT" read from a scenario key and written for
 * people (the ready line, stderr) and for SIP (the sent-by of our Via, the uas's Contact).
 *
 * An IPv6 address goes in brackets, as RFC 3261's IPv6reference writes it in a sent-by or a
 * SIP URI ("[::1]:5060", 25.1 and RFC 5118 4.1): without them "::1:5060" could be the address
 * ::1:5060 with no port. Only literal addresses are read (no names: the node never resolves,
 * so it never waits on DNS), and no IPv6 zone ("%eth0"): a link-local sent-by would need the
 * zone in every Via, which RFC 3261 has no grammar for. A union of the two sockaddr forms
 * (28 bytes) rather than a sockaddr_storage (128) is kept, because every server transaction
 * keeps the address its request came from.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "node_int.h"
#include "osn/err.h"

/* The digit at p as 0..9, or a number above 9 (not a digit, or p at the end). */
static inline unsigned digit_at(const char *p, const char *end)
{
    return p < end ? (unsigned)(unsigned char)*p - '0' : 10u;
}

bool addr_ipv4(const char *p, size_t n, struct in_addr *out)
{
    /* glibc's inet_pton4 reads a byte at a time through a table of digits and writes the result
     * through a temporary; one pass over at most 15 bytes does here, each part's one to three
     * digits unrolled (ten literals a proxied call, and the loop over a part's digits with its
     * four tests a byte was 2 % of a proxy's instructions). */
    if (n < 7 || n > 15)
        return false;
    uint32_t a = 0;
    const char *end = p + n;
    for (int part = 0; part < 4; part++) {
        if (part && (p >= end || *p++ != '.'))
            return false;
        unsigned v = digit_at(p, end), d;
        if (v > 9)
            return false;
        p++;
        if ((d = digit_at(p, end)) <= 9) {
            if (v == 0)
                return false; /* a leading zero ("01") */
            v = v * 10 + d;
            p++;
            if ((d = digit_at(p, end)) <= 9) {
                v = v * 10 + d;
                p++;
            }
        }
        if (v > 255)
            return false;
        a = a << 8 | v;
    }
    if (p != end)
        return false;
    out->s_addr = htonl(a);
    return true;
}

int addr_parse(const char *text, union node_addr *a, char *why, size_t whysize)
{
    char h[64];
    const char *colon = strrchr(text, ':'), *hs = text, *he;
    memset(a, 0, sizeof *a);
    if (text[0] == '[') { /* IPv6reference: "[" IPv6address "]" */
        const char *close = strchr(text, ']');
        if (!close || close[1] != ':') {
            snprintf(why, whysize, "an IPv6 address needs \"]:PORT\" after it, as in [::1]:5060");
            return OSN_EINVAL;
        }
        hs = text + 1;
        he = close;
        colon = close + 1;
    } else {
        if (!colon || colon == text) {
            snprintf(why, whysize, "no \":PORT\"");
            return OSN_EINVAL;
        }
        if (memchr(text, ':', (size_t)(colon - text))) {
            snprintf(why, whysize, "an IPv6 address goes in brackets, as in [::1]:5060");
            return OSN_EINVAL;
        }
        he = colon;
    }
    if ((size_t)(he - hs) >= sizeof h || he == hs) {
        snprintf(why, whysize, "no address before the port, or a longer one than any address");
        return OSN_EINVAL;
    }
    memcpy(h, hs, (size_t)(he - hs));
    h[he - hs] = '\0';
    char *end;
    errno = 0;
    long p = strtol(colon + 1, &end, 10);
    if (errno || end == colon + 1 || *end || p < 0 || p > 65535 || colon[1] == '-' ||
        colon[1] == '+' || colon[1] == ' ') { /* 0: any free port */
        snprintf(why, whysize, "the port is not a number from 0 to 65535");
        return OSN_EINVAL;
    }
    if (text[0] == '[') {
        a->v6.sin6_family = AF_INET6;
        a->v6.sin6_port = htons((uint16_t)p);
        if (inet_pton(AF_INET6, h, &a->v6.sin6_addr) != 1) {
            snprintf(why, whysize, "'%s' is not an IPv6 address (literal, no zone)", h);
            return OSN_EINVAL;
        }
    } else {
        a->v4.sin_family = AF_INET;
        a->v4.sin_port = htons((uint16_t)p);
        if (inet_pton(AF_INET, h, &a->v4.sin_addr) != 1) {
            snprintf(why, whysize, "'%s' is not an IPv4 address (the node resolves no names)", h);
            return OSN_EINVAL;
        }
    }
    return 0;
}

int addr_parse_tp(const char *text, union node_addr *a, bool *tcp, char *why, size_t whysize)
{
    const char *semi = strchr(text, ';');
    char host[64];
    *tcp = false;
    if (!semi)
        return addr_parse(text, a, why, whysize);
    if ((size_t)(semi - text) >= sizeof host) {
        snprintf(why, whysize, "longer than any HOST:PORT");
        return OSN_EINVAL;
    }
    memcpy(host, text, (size_t)(semi - text));
    host[semi - text] = '\0';
    /* One parameter, the transport (RFC 3261 19.1.1: names and values compare in any case). */
    static const char key[] = ";transport=";
    if (strncasecmp(semi, key, sizeof key - 1) != 0) {
        snprintf(why, whysize, "'%s' is no parameter the node knows: only ;transport=udp or tcp",
                 semi);
        return OSN_EINVAL;
    }
    const char *v = semi + sizeof key - 1;
    if (!strcasecmp(v, "tcp")) {
        *tcp = true;
    } else if (strcasecmp(v, "udp") != 0) {
        snprintf(why, whysize, "transport '%s' is not udp or tcp", v);
        return OSN_EINVAL;
    }
    return addr_parse(host, a, why, whysize);
}

uint16_t addr_port(const union node_addr *a)
{
    return ntohs(a->sa.sa_family == AF_INET6 ? a->v6.sin6_port : a->v4.sin_port);
}

void addr_set_port(union node_addr *a, uint16_t port)
{
    if (a->sa.sa_family == AF_INET6)
        a->v6.sin6_port = htons(port);
    else
        a->v4.sin_port = htons(port);
}

void addr_host(const union node_addr *a, char *out, size_t size)
{
    char h[INET6_ADDRSTRLEN];
    bool v6 = a->sa.sa_family == AF_INET6;
    if (!inet_ntop(a->sa.sa_family, v6 ? (const void *)&a->v6.sin6_addr : &a->v4.sin_addr, h,
                   sizeof h))
        snprintf(h, sizeof h, "?");
    snprintf(out, size, v6 ? "[%s]" : "%s", h);
}

void addr_text(const union node_addr *a, char *out, size_t size)
{
    char h[INET6_ADDRSTRLEN + 2];
    addr_host(a, h, sizeof h);
    snprintf(out, size, "%s:%u", h, (unsigned)addr_port(a));
}

bool addr_eq(const union node_addr *a, const union node_addr *b)
{
    if (a->sa.sa_family != b->sa.sa_family)
        return false;
    if (a->sa.sa_family == AF_INET6)
        return a->v6.sin6_port == b->v6.sin6_port &&
               !memcmp(&a->v6.sin6_addr, &b->v6.sin6_addr, sizeof a->v6.sin6_addr);
    return a->v4.sin_port == b->v4.sin_port && a->v4.sin_addr.s_addr == b->v4.sin_addr.s_addr;
}

struct osn_span addr_via_received(const union node_addr *from, const struct osn_sip_via *v,
                                  char buf[ADDR_RECEIVED_MAX], uint16_t *rport)
{
    union node_addr sent = {0};
    char h[INET6_ADDRSTRLEN];
    bool v6 = from->sa.sa_family == AF_INET6;
    *rport = v->rport && v->rport_value.p && !v->rport_value.n ? addr_port(from) : 0;
    if (v->received.p) /* already there (a sender's own): left as it came */
        return (struct osn_span){buf, 0};
    /* The sent-by host as an address of the source's family: brackets off an IPv6reference. */
    struct osn_span host = v->host;
    if (host.n >= 2 && host.p[0] == '[' && host.p[host.n - 1] == ']')
        host = (struct osn_span){host.p + 1, host.n - 2};
    bool same = false;
    if (host.n < sizeof h) {
        memcpy(h, host.p, host.n);
        h[host.n] = '\0';
        same = v6 ? inet_pton(AF_INET6, h, &sent.v6.sin6_addr) == 1 &&
                               !memcmp(&sent.v6.sin6_addr, &from->v6.sin6_addr, 16)
                  : addr_ipv4(h, host.n, &sent.v4.sin_addr) &&
                               sent.v4.sin_addr.s_addr == from->v4.sin_addr.s_addr;
    }
    /* RFC 3261 18.2.1: when the sent-by is a name or another address; RFC 3581 4: always
     * with rport. The value is a bare IPv6address (via-received, 25.1; RFC 5118 4.5). */
    if ((same && !*rport) ||
        !inet_ntop(from->sa.sa_family, v6 ? (const void *)&from->v6.sin6_addr : &from->v4.sin_addr,
                   h, sizeof h))
        return (struct osn_span){buf, 0};
    int k = snprintf(buf, ADDR_RECEIVED_MAX, ";received=%s", h);
    return (struct osn_span){buf, k > 0 ? (size_t)k : 0};
}

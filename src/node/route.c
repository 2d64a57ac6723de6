/*
 * Where the node sends a request it forwards: the facts of its Route header the proxy's
 * decision needs (osn_proxy_route, src/elem/proxy.c: loose routing, RFC 3261 16.4, 16.6 step 7,
 * 16.12), and the address of the URI the decision names. The node resolves no names: a Route
 * or Request-URI host must be an IPv4 literal or an IPv6reference ("[::1]", RFC 3261 25.1; the
 * node's own addresses, and those of the SIPp and Kamailio peers it is tested with, are); a URI
 * it cannot resolve is a forward that fails.
 */
#include <arpa/inet.h>
#include <string.h>
#include <strings.h>

#include "../base/text.h"
#include "node_int.h"
#include "osn/err.h"

/* The host and port of SIP URI `uri` (RFC 3261 19.1.1: sip:[userinfo@]host[:port][;params]
 * [?headers]) as an IPv4 or IPv6 address; a missing port is 5060 (19.1.2). OSN_EINVAL when it is
 * not that. */
int route_uri_addr(struct osn_span uri, union node_addr *to)
{
    /* Six calls a proxied call (each Route's names_us and each forward's target): the scheme by
     * four folded bytes, the host's end by memchr, and the host copied only for inet_pton (IPv6),
     * not a byte loop and a copy each time. */
    const char *p = uri.p, *end = uri.p + uri.n;
    /* "sip:" in any case: OR 0x20 folds exactly these letters (only 'S' and 's' give 's') */
    if (uri.n < 4 || (p[0] | 0x20) != 's' || (p[1] | 0x20) != 'i' || (p[2] | 0x20) != 'p' ||
        p[3] != ':')
        return OSN_EINVAL;
    p += 4;
    /* The host part ends at the first ';' or '?' after the userinfo's '@' (if any). */
    const char *semi = memchr(p, ';', (size_t)(end - p));
    const char *stop = semi ? semi : end;
    const char *qm = memchr(p, '?', (size_t)(stop - p));
    if (qm)
        stop = qm;
    const char *at = memchr(p, '@', (size_t)(stop - p));
    if (at)
        p = at + 1;
    /* An IPv6reference is the host in brackets; its colons are not the port's (25.1). */
    bool v6 = p < stop && *p == '[';
    const char *close = v6 ? memchr(p, ']', (size_t)(stop - p)) : NULL;
    if (v6 && !close)
        return OSN_EINVAL;
    const char *hs = v6 ? p + 1 : p, *after = v6 ? close + 1 : p;
    const char *colon = memchr(after, ':', (size_t)(stop - after));
    const char *hend = v6 ? close : colon ? colon : stop;
    if (v6 && after != stop && after != colon)
        return OSN_EINVAL; /* something between "]" and the port */
    if (hend == hs || (size_t)(hend - hs) >= 64)
        return OSN_EINVAL;
    unsigned long port = 5060;
    if (colon) {
        port = 0;
        if (colon + 1 == stop)
            return OSN_EINVAL;
        for (const char *q = colon + 1; q < stop; q++) {
            if (*q < '0' || *q > '9' || (port = port * 10 + (unsigned long)(*q - '0')) > 65535)
                return OSN_EINVAL;
        }
        if (port == 0)
            return OSN_EINVAL;
    }
    memset(to, 0, sizeof *to);
    if (v6) {
        char host[64];
        memcpy(host, hs, (size_t)(hend - hs));
        host[hend - hs] = '\0';
        to->v6.sin6_family = AF_INET6;
        to->v6.sin6_port = htons((uint16_t)port);
        return inet_pton(AF_INET6, host, &to->v6.sin6_addr) == 1 ? 0 : OSN_EINVAL;
    }
    to->v4.sin_family = AF_INET;
    to->v4.sin_port = htons((uint16_t)port);
    return addr_ipv4(hs, (size_t)(hend - hs), &to->v4.sin_addr) ? 0 : OSN_EINVAL;
}

/* Whether SIP URI `uri` says ";transport=tcp" among its uri-parameters (RFC 3261 19.1.1: after
 * the host and port, before any '?headers'; names and values in any case). */
static bool uri_tcp(struct osn_span uri)
{
    const char *p = uri.p, *end = uri.p + uri.n;
    const char *q = memchr(p, '?', uri.n);
    if (q)
        end = q;
    const char *at = memchr(p, '@', (size_t)(end - p));
    if (at)
        p = at + 1; /* a ';' in the userinfo is not a parameter's */
    static const char key[] = "transport=tcp";
    size_t kn = sizeof key - 1;
    for (const char *c = memchr(p, ';', (size_t)(end - p)); c;
         c = memchr(c + 1, ';', (size_t)(end - c - 1))) {
        const char *v = c + 1, *stop = memchr(v, ';', (size_t)(end - v));
        size_t len = (size_t)((stop ? stop : end) - v);
        if (len == kn && !strncasecmp(v, key, kn))
            return true;
    }
    return false;
}

/* Whether URI `uri` names this node: its address and port are the ones we listen on (RFC 3261
 * 16.4: "a value this proxy placed into a Record-Route header field", which names us so). */
static bool names_us(const struct node *n, struct osn_span uri)
{
    union node_addr a;
    return route_uri_addr(uri, &a) == 0 && addr_eq(&a, &n->listen);
}

int route_plan(const struct node *n, const struct osn_sip_wire *req, int hop,
               struct osn_proxy_route_out *r, union node_addr *to, bool *tcp)
{
    struct osn_proxy_route_in in = {.method = req->method,
                                    .nroute = req->nroute,
                                    .top_is_us = req->nroute > 0 && names_us(n, req->route[0].uri),
                                    .second_is_us =
                                            req->nroute > 1 && names_us(n, req->route[1].uri),
                                    .in_dialog = req->to.tag.n > 0,
                                    .record_route = n->cfg->record_route};
    osn_proxy_route(&in, r);
    struct osn_span uri;
    switch (r->target) {
    case OSN_PROXY_TO_ROUTE:
        uri = req->route[r->pop].uri;
        break;
    case OSN_PROXY_TO_URI:
        uri = req->uri;
        break;
    default: {
        const struct next_hop *h = &n->hops[hop >= 0 && (size_t)hop < n->nhops ? hop : 0];
        *to = h->addr;
        *tcp = h->tcp;
        return 0;
    }
    }
    /* RFC 3263 4.1: a URI's transport parameter says which transport; without one, UDP to a
     * numeric address. A URI naming a next hop configured over TCP goes over TCP all the same:
     * its connection is the one the node opened. */
    int err = route_uri_addr(uri, to);
    *tcp = !err && (uri_tcp(uri) || tcp_is_hop(n, to));
    return err;
}

int route_record_uri(const struct node *n, bool tcp, char *out, size_t cap)
{
    /* "sip:HOST:PORT[;transport=tcp];lr" and a NUL */
    struct osn_text w = osn_text_at(out, cap);
    osn_text_put(&w, "sip:", 4);
    osn_text_puts(&w, n->host);
    osn_text_put(&w, ":", 1);
    osn_text_dec(&w, n->port, 1);
    if (tcp)
        osn_text_puts(&w, ";transport=tcp");
    osn_text_put(&w, ";lr", 4); /* with its NUL */
    int k = osn_text_len(&w, out);
    return k < 0 ? OSN_ETOOBIG : k - 1;
}

/*
 * Keeping a parse: a parsed message copied with its datagram into one block of a few hundred
 * bytes, so that a server that keeps the bytes (a queued message, a transaction's request) keeps
 * their parse too and never parses them again. The copy holds the lists only as far as they are
 * filled, not the parser's fixed room, and every span is moved to the same offset in the copied
 * datagram. The copy is a struct osn_sip_wire cut short before `room`, which nothing but the
 * parser touches.
 */
#include <stdalign.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sip_wire_int.h"

/* Rounds n up to malloc's alignment, so that every list in the block is aligned for its type. */
static size_t up(size_t n)
{
    size_t a = alignof(max_align_t);
    return (n + a - 1) / a * a;
}

/* The block's parts in order: fields, then each list, then the datagram. */
struct layout {
    size_t hdr, via, route, record_route, contact, require, proxy_require, bytes, size;
};

static struct layout layout_of(const struct osn_sip_wire *m)
{
    struct layout l;
    l.hdr = up(offsetof(struct osn_sip_wire, room));
    l.via = up(l.hdr + (size_t)m->nhdr * sizeof *m->hdr);
    l.route = up(l.via + (size_t)m->nvia * sizeof *m->via);
    l.record_route = up(l.route + (size_t)m->nroute * sizeof *m->route);
    l.contact = up(l.record_route + (size_t)m->nrecord_route * sizeof *m->record_route);
    l.require = up(l.contact + (size_t)m->ncontact * sizeof *m->contact);
    l.proxy_require = up(l.require + (size_t)m->nrequire * sizeof *m->require);
    l.bytes = l.proxy_require + (size_t)m->nproxy_require * sizeof *m->proxy_require;
    l.size = l.bytes + m->buf.n + 1;
    return l;
}

size_t osn_sip_wire_packed_size(const struct osn_sip_wire *m)
{
    return m ? layout_of(m).size : 0;
}

/* Moves span s from the datagram at `from` (n bytes) to the same offset at `to`; a span outside
 * it (absent, or a constant) stays. */
static void move(struct osn_span *s, const char *from, size_t n, const char *to)
{
    /* One unsigned comparison for "absent, before or after": NULL or a pointer below `from`
     * wraps to an offset above n. A pack moves about 80 spans, three packs a proxied call, and
     * the three comparisons were 5% of a proxy's instructions (bench/node_callgrind.sh). */
    uintptr_t d = (uintptr_t)s->p - (uintptr_t)from;
    if (d <= n)
        s->p = to + d;
}

/* Moves span s, which an accepted message always has and always inside its datagram, without
 * move()'s check: half its instructions, on most of the spans a pack moves (the header lines',
 * a Via's sent-protocol and sent-by), which were a tenth of a proxy's pack. */
static inline void shift(struct osn_span *s, const char *from, const char *to)
{
    s->p = to + (s->p - from);
}

static void move_addr(struct osn_sip_addr *a, const char *from, size_t n, const char *to)
{
    struct osn_span *sp[] = {&a->value, &a->display, &a->uri, &a->params, &a->tag};
    for (size_t i = 0; i < sizeof sp / sizeof sp[0]; i++)
        move(sp[i], from, n, to);
}

static void move_via(struct osn_sip_via *v, const char *from, size_t n, const char *to)
{
    /* A Via of an accepted message has these (the decoder counts it once its sent-by is read,
     * and a message is accepted only when every Via read to its end). */
    shift(&v->value, from, to);
    shift(&v->protocol, from, to);
    shift(&v->version, from, to);
    shift(&v->transport, from, to);
    shift(&v->host, from, to);
    struct osn_span *sp[] = {&v->branch, &v->received, &v->rport_value,
                             &v->maddr,  &v->params,   &v->oc_algo};
    for (size_t i = 0; i < sizeof sp / sizeof sp[0]; i++)
        move(sp[i], from, n, to);
}

/* Copies list `src` of k entries of `size` bytes to offset `at` of the block. */
static void *list(char *block, size_t at, const void *src, int k, size_t size)
{
    if (k > 0)
        memcpy(block + at, src, (size_t)k * size);
    return block + at;
}

struct osn_sip_wire *osn_sip_wire_pack(void *mem, const struct osn_sip_wire *m)
{
    if (!mem || !m || m->err.verdict != OSN_SIP_WIRE_ACCEPT || m->err.reason != OSN_SIP_WIRE_OK)
        return NULL;
    struct layout l = layout_of(m);
    char *block = mem;
    struct osn_sip_wire *c = mem;
    memcpy(c, m, offsetof(struct osn_sip_wire, room));
    c->hdr = list(block, l.hdr, m->hdr, m->nhdr, sizeof *m->hdr);
    c->via = list(block, l.via, m->via, m->nvia, sizeof *m->via);
    c->route = list(block, l.route, m->route, m->nroute, sizeof *m->route);
    c->record_route =
            list(block, l.record_route, m->record_route, m->nrecord_route, sizeof *m->route);
    c->contact = list(block, l.contact, m->contact, m->ncontact, sizeof *m->contact);
    c->require = list(block, l.require, m->require, m->nrequire, sizeof *m->require);
    c->proxy_require =
            list(block, l.proxy_require, m->proxy_require, m->nproxy_require, sizeof *m->require);
    char *to = block + l.bytes;
    const char *from = m->buf.p;
    size_t n = m->buf.n;
    memcpy(to, from, n);
    to[n] = '\0';
    struct osn_span *sp[] = {&c->buf,
                             &c->msg,
                             &c->method_name,
                             &c->uri,
                             &c->version,
                             &c->reason_phrase,
                             &c->start_line,
                             &c->head,
                             &c->body,
                             &c->call_id,
                             &c->content_type,
                             &c->cseq_method_name,
                             &c->retry_after.comment};
    for (size_t i = 0; i < sizeof sp / sizeof sp[0]; i++)
        move(sp[i], from, n, to);
    move_addr(&c->from, from, n, to);
    move_addr(&c->to, from, n, to);
    for (int i = 0; i < c->nhdr; i++) { /* a header line is all inside the datagram */
        shift(&c->hdr[i].name, from, to);
        shift(&c->hdr[i].value, from, to);
        shift(&c->hdr[i].line, from, to);
    }
    for (int i = 0; i < c->nvia; i++)
        move_via(&c->via[i], from, n, to);
    for (int i = 0; i < c->nroute; i++)
        move_addr(&c->route[i], from, n, to);
    for (int i = 0; i < c->nrecord_route; i++)
        move_addr(&c->record_route[i], from, n, to);
    for (int i = 0; i < c->ncontact; i++)
        move_addr(&c->contact[i], from, n, to);
    for (int i = 0; i < c->nrequire; i++)
        move(&c->require[i], from, n, to);
    for (int i = 0; i < c->nproxy_require; i++)
        move(&c->proxy_require[i], from, n, to);
    return c;
}

/* Rewrites m's header list entries with their padding zeroed: the parser and a derivation leave
 * different bytes there, which are no field. */
static void zero_padding(const struct osn_sip_wire *m)
{
    for (int i = 0; i < m->nhdr; i++) {
        struct osn_sip_hdr z;
        memset(&z, 0, sizeof z);
        z.name = m->hdr[i].name;
        z.value = m->hdr[i].value;
        z.line = m->hdr[i].line;
        z.id = m->hdr[i].id;
        memcpy(&m->hdr[i], &z, sizeof z);
    }
}

bool osn_sip_wire_same(const struct osn_sip_wire *a, const struct osn_sip_wire *b)
{
    size_t k = osn_sip_wire_packed_size(a);
    if (k != osn_sip_wire_packed_size(b))
        return false;
    zero_padding(a);
    zero_padding(b);
    unsigned char *at = malloc(k), *was = malloc(k);
    bool same = at && was && osn_sip_wire_pack(at, a);
    if (same) {
        memcpy(was, at, k);
        same = osn_sip_wire_pack(at, b) && memcmp(was, at, k) == 0;
    }
    free(at);
    free(was);
    return same;
}

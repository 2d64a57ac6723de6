/*
 * A message coded against another: what a server transaction in its final wait may still send
 * (its final response, or the ACK of a non-2xx) kept in a few dozen bytes instead of a whole
 * copy, because nearly all of it repeats the message that makes it send (RFC 3261 8.2.6.2: a
 * response copies its request's Vias, From, To, Call-ID and CSeq; 17.1.1.3: the ACK of a non-2xx
 * copies its response's Via, From, To, Call-ID and CSeq number). The node's kept table
 * (src/node/kept.c) keeps its records so; it knows nothing of SIP lines, and this file knows
 * nothing of the node.
 *
 * The code is a list of copies (a line's longest prefix found in a line of the reference) and
 * literal bytes (what the message adds: a status line, a To tag, the overload feedback in a Via,
 * Content-Length), 40 to 80 bytes for a 200 to a BYE of 400. A copy names the line, not the
 * offset, so that a reference whose other lines differ (a Max-Forwards of another length) still
 * prints the same message; what is printed is checked against the first message's length and
 * keyed hash, so a reference that differs prints nothing rather than something else.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "osn/sip_wire.h"

/* The code: a byte b < 0x80 is a literal of b + 1 bytes that follow; b >= 0x80 a copy of
 * ((b & 0x7f) << 8 | next byte) bytes from the start of the line whose index (from 0, the start
 * line) is in the two bytes after (little end): by line, not by offset, so that a copy whose
 * other lines differ (a Max-Forwards of another length) still prints the same response. A blob
 * is its own size (4 bytes), the printed message's length (2) and keyed hash (8), then the
 * code. */
#define BLOB_HEAD 14
#define COPY_MAX  0x7fff
#define MIN_COPY  6 /* a shorter common prefix is written out: a copy costs 4 bytes */

struct coder {
    uint8_t *out;
    size_t n, cap;
    const char *lit; /* pending literal bytes */
    size_t nlit;
    size_t coff, ncopy; /* pending copy: its offset in ref, its length */
    unsigned cline;     /* the line it starts */
    bool bad;
};

static void put(struct coder *c, const void *p, size_t len)
{
    if (c->n + len > c->cap) {
        c->bad = true;
        return;
    }
    memcpy(c->out + c->n, p, len);
    c->n += len;
}

static void flush(struct coder *c)
{
    while (c->nlit) {
        size_t k = c->nlit > 128 ? 128 : c->nlit;
        uint8_t b = (uint8_t)(k - 1);
        put(c, &b, 1);
        put(c, c->lit, k);
        c->lit += k;
        c->nlit -= k;
    }
    if (c->ncopy) {
        uint8_t b[4] = {(uint8_t)(0x80 | c->ncopy >> 8), (uint8_t)c->ncopy, (uint8_t)c->cline,
                        (uint8_t)(c->cline >> 8)};
        put(c, b, sizeof b);
        c->ncopy = 0;
    }
}

static void literal(struct coder *c, const char *p, size_t len)
{
    if (!len)
        return;
    if (c->ncopy)
        flush(c);
    if (c->nlit && c->lit + c->nlit == p) {
        c->nlit += len;
        return;
    }
    flush(c);
    c->lit = p;
    c->nlit = len;
}

static void copy(struct coder *c, unsigned line, size_t off, size_t len)
{
    if (c->nlit)
        flush(c);
    if (c->ncopy && c->coff + c->ncopy == off && c->ncopy + len <= COPY_MAX) {
        c->ncopy += len;
        return;
    }
    flush(c);
    c->cline = line;
    c->coff = off;
    c->ncopy = len;
}

/* The length of the common prefix of a[0..most) and b[0..most). Eight bytes a step (the first
 * byte that differs is the lowest of the XOR's on a little-endian machine, the highest on a
 * big-endian one): a kept response's lines are mostly copies of its request's, 50 to 100 bytes
 * each, and byte by byte this loop was a quarter of the coding. */
static size_t common(const char *a, const char *b, size_t most)
{
    size_t k = 0;
    for (; k + 8 <= most; k += 8) {
        uint64_t x, y;
        memcpy(&x, a + k, 8);
        memcpy(&y, b + k, 8);
        if (x != y) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
            return k + (size_t)__builtin_clzll(x ^ y) / 8;
#else
            return k + (size_t)__builtin_ctzll(x ^ y) / 8;
#endif
        }
    }
    while (k < most && a[k] == b[k])
        k++;
    return k;
}

#define MAX_REF_LINES 256

/* The start of each line of ref[0..rlen) into start[] (MAX_REF_LINES at most); their count. */
static size_t lines_of(const char *ref, size_t rlen, size_t start[MAX_REF_LINES])
{
    size_t nl = 0;
    for (size_t i = 0; i < rlen && nl < MAX_REF_LINES;) {
        start[nl++] = i;
        const char *e = memchr(ref + i, '\n', rlen - i);
        i = e ? (size_t)(e - ref) + 1 : rlen;
    }
    return nl;
}

uint8_t *osn_sip_wire_delta(const char *msg, size_t len, const char *ref, size_t rlen, size_t *size)
{
    size_t start[MAX_REF_LINES];
    if (len > 0xffff || rlen > 0xffff)
        return NULL;
    size_t nl = lines_of(ref, rlen, start);
    size_t cap = BLOB_HEAD + len + len / 128 + 8;
    struct coder c = {.out = malloc(cap), .cap = cap, .n = BLOB_HEAD};
    if (!c.out)
        return NULL;
    for (size_t i = 0; i < len;) {
        const char *e = memchr(msg + i, '\n', len - i);
        size_t end = e ? (size_t)(e - msg) + 1 : len, best = 0, at = 0, line = 0;
        for (size_t l = 0; l < nl; l++) {
            size_t r0 = start[l], rn = (l + 1 < nl ? start[l + 1] : rlen) - r0;
            size_t most = rn < end - i ? rn : end - i;
            if (most < MIN_COPY || memcmp(ref + r0, msg + i, 4) != 0)
                continue; /* another header's line: most lines are ruled out here */
            size_t k = common(ref + r0, msg + i, most);
            if (k > best) {
                best = k;
                at = r0;
                line = l;
            }
            /* The rest of the line matched: no later line can match more (and the first line
             * that matched as much is this one), so the search ends; most lines of a response
             * are whole copies of its request's, and the later ones were compared for nothing. */
            if (best == end - i)
                break;
        }
        if (best > COPY_MAX)
            best = COPY_MAX; /* the rest of so long a line goes as a literal */
        if (best >= MIN_COPY) {
            copy(&c, (unsigned)line, at, best);
            i += best;
        }
        literal(&c, msg + i, end - i);
        i = end;
    }
    flush(&c);
    if (c.bad) {
        free(c.out);
        return NULL;
    }
    uint32_t n32 = (uint32_t)c.n;
    uint16_t n16 = (uint16_t)len;
    uint64_t h = osn_sip_wire_hash(msg, len);
    memcpy(c.out, &n32, 4);
    memcpy(c.out + 4, &n16, 2);
    memcpy(c.out + 6, &h, 8);
    *size = c.n;
    uint8_t *shrunk = realloc(c.out, c.n);
    return shrunk ? shrunk : c.out;
}

size_t osn_sip_wire_delta_size(const uint8_t *blob)
{
    uint32_t size;
    memcpy(&size, blob, 4);
    return size;
}

int osn_sip_wire_undelta(char *out, const uint8_t *blob, const char *ref, size_t rlen)
{
    uint16_t want;
    uint64_t h;
    size_t n = 0, size = osn_sip_wire_delta_size(blob), start[MAX_REF_LINES];
    size_t nl = lines_of(ref, rlen, start);
    memcpy(&want, blob + 4, 2);
    memcpy(&h, blob + 6, 8);
    for (size_t i = BLOB_HEAD; i < size;) {
        uint8_t b = blob[i];
        if (b < 0x80) {
            size_t k = (size_t)b + 1;
            if (i + 1 + k > size || n + k > want)
                return -1;
            memcpy(out + n, blob + i + 1, k);
            n += k;
            i += 1 + k;
        } else {
            if (i + 4 > size)
                return -1;
            size_t k = (size_t)(b & 0x7f) << 8 | blob[i + 1];
            size_t line = (size_t)blob[i + 2] | (size_t)blob[i + 3] << 8;
            size_t off = line < nl ? start[line] : rlen;
            if (off + k > rlen || n + k > want)
                return -1;
            memcpy(out + n, ref + off, k);
            n += k;
            i += 4;
        }
    }
    return n == want && osn_sip_wire_hash(out, n) == h ? (int)n : -1;
}

/*
 * The bounded writer the SIP printer (print.c) and the SDP answer (sdp.c) write through: running
 * out of room sets a flag instead of writing past the end, so a caller's buffer of any size is
 * safe and the caller returns OSN_ETOOBIG once at the end. Static inline because the printer
 * calls it for every line of every message the node sends.
 */
#ifndef OSN_SIP_WRITER_H
#define OSN_SIP_WRITER_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "osn/err.h"
#include "osn/sip_wire.h"

struct wr {
    char *p, *end;
    bool over;
};

static inline void put(struct wr *w, const char *s, size_t n)
{
    if (w->over || (size_t)(w->end - w->p) < n) {
        w->over = true;
        return;
    }
    if (n)
        memcpy(w->p, s, n);
    w->p += n;
}

static inline void puts_(struct wr *w, const char *s)
{
    put(w, s, strlen(s));
}

static inline void putsp(struct wr *w, struct osn_span s)
{
    put(w, s.p, s.n);
}

/* x in decimal, at least `width` digits (zeros in front). By hand, not snprintf: the printer
 * writes several numbers a message, and snprintf's format machinery cost about 850
 * instructions a number, a tenth of a proxy's instructions per call (bench/node_callgrind.sh). */
static inline void putu_w(struct wr *w, uint64_t x, int width)
{
    char b[24];
    int i = (int)sizeof b;
    do {
        b[--i] = (char)('0' + x % 10);
        x /= 10;
    } while (x || (int)sizeof b - i < width);
    put(w, b + i, sizeof b - (size_t)i);
}

static inline void putu(struct wr *w, uint64_t x)
{
    putu_w(w, x, 1);
}

/* The length written, or OSN_ETOOBIG when it did not fit. */
static inline int done(struct wr *w, char *out)
{
    if (w->over)
        return OSN_ETOOBIG;
    return (int)(w->p - out);
}

#endif

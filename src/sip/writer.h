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
#include <stdio.h>
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

static inline void putu(struct wr *w, uint64_t x)
{
    char b[24];
    int n = snprintf(b, sizeof b, "%llu", (unsigned long long)x);
    put(w, b, (size_t)n);
}

/* The length written, or OSN_ETOOBIG when it did not fit. */
static inline int done(struct wr *w, char *out)
{
    if (w->over)
        return OSN_ETOOBIG;
    return (int)(w->p - out);
}

#endif

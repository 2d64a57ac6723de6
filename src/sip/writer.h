/*
 * The bounded writer the SIP printer (print.c) and the SDP answer (sdp.c) write through: the
 * tree's one text writer (src/base/text.h) under the short names those files use. Running out
 * of room sets a flag instead of writing past the end, so a caller's buffer of any size is safe
 * and the caller returns OSN_ETOOBIG once at the end.
 */
#ifndef OSN_SIP_WRITER_H
#define OSN_SIP_WRITER_H

#include "../base/text.h"
#include "osn/err.h"
#include "osn/sip_wire.h"

static inline void put(struct osn_text *w, const char *s, size_t n)
{
    osn_text_put(w, s, n);
}

static inline void puts_(struct osn_text *w, const char *s)
{
    osn_text_puts(w, s);
}

static inline void putsp(struct osn_text *w, struct osn_span s)
{
    osn_text_put(w, s.p, s.n);
}

/* x in decimal, at least `width` digits (zeros in front). */
static inline void putu_w(struct osn_text *w, uint64_t x, int width)
{
    osn_text_dec(w, x, width);
}

static inline void putu(struct osn_text *w, uint64_t x)
{
    osn_text_dec(w, x, 1);
}

/* The length written, or OSN_ETOOBIG when it did not fit. */
static inline int done(struct osn_text *w, char *out)
{
    int k = osn_text_len(w, out);
    return k < 0 ? OSN_ETOOBIG : k;
}

#endif

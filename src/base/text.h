/*
 * The one bounded text writer of the tree: bytes, decimal and hexadecimal numbers into a
 * caller's buffer. Running out of room sets a flag instead of writing past the end, so a buffer
 * of any size is safe and the caller checks once at the end (osn_text_len). Numbers are written
 * by hand, not by snprintf: its format machinery cost about 850 instructions a number, and the
 * SIP printer and the node write several a message (bench/node_callgrind.sh).
 *
 * Internal to the build (not installed, not under include/osn): base is below sip and node, so
 * both include it as "../base/text.h". Static inline because the printer calls it for every
 * line of every message the node sends.
 */
#ifndef OSN_BASE_TEXT_H
#define OSN_BASE_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct osn_text {
    char *p, *end; /* the next byte to write; one past the buffer's last */
    bool over;     /* something did not fit: nothing more is written */
};

/* A writer over buf[0..cap) (borrowed). */
static inline struct osn_text osn_text_at(char *buf, size_t cap)
{
    return (struct osn_text){buf, buf + cap, false};
}

static inline void osn_text_put(struct osn_text *w, const char *s, size_t n)
{
    if (w->over || (size_t)(w->end - w->p) < n) {
        w->over = true;
        return;
    }
    if (n)
        memcpy(w->p, s, n);
    w->p += n;
}

static inline void osn_text_puts(struct osn_text *w, const char *s)
{
    osn_text_put(w, s, strlen(s));
}

/* A string literal, its length known when compiled. */
#define OSN_TEXT_LIT(w, lit) osn_text_put((w), (lit), sizeof(lit) - 1)

/* x in decimal, at least `width` digits (zeros in front). Written in place, right to left
 * once its length is known: no copy through a scratch buffer. */
static inline void osn_text_dec(struct osn_text *w, uint64_t x, int width)
{
    int n = 1;
    for (uint64_t t = x; t >= 10; t /= 10)
        n++;
    if (n < width)
        n = width;
    if (w->over || w->end - w->p < n) {
        w->over = true;
        return;
    }
    w->p += n;
    for (char *q = w->p; n > 0; n--, x /= 10)
        *--q = (char)('0' + x % 10);
}

/* The low 4 * digits bits of x as exactly `digits` lower-case hex digits (digits <= 16), as
 * "%0*" PRIx64 writes a number that fits; digits 0: as few as x needs, as "%" PRIx64. */
static inline void osn_text_hex(struct osn_text *w, uint64_t x, int digits)
{
    if (digits == 0)
        for (uint64_t t = x, n = 1; !digits; t >>= 4, n++)
            if (t < 16)
                digits = (int)n;
    if (w->over || w->end - w->p < digits) {
        w->over = true;
        return;
    }
    w->p += digits;
    for (char *q = w->p; digits > 0; digits--, x >>= 4)
        *--q = "0123456789abcdef"[x & 15];
}

/* The bytes written from start, or -1 when something did not fit. */
static inline int osn_text_len(const struct osn_text *w, const char *start)
{
    return w->over ? -1 : (int)(w->p - start);
}

#endif

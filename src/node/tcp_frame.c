/*
 * Where a SIP message ends in a TCP byte stream. On a stream there is no datagram to say so:
 * RFC 3261 18.3 makes Content-Length mandatory there, and a message is its header, the blank
 * line that ends it, and Content-Length bytes of body. CRLFs before a start line are skipped (7.5);
 * a double CRLF is RFC 5626's keep-alive ping (3.5.1), which the caller answers with one CRLF.
 *
 * Only the Content-Length header is read here, by name (long or compact form "l", any case,
 * RFC 3261 7.3.1 and 7.3.3); the message itself is parsed once, as a datagram is, by the caller.
 * A header line folded onto the next (7.3.1) is not a Content-Length line's value: a folded
 * Content-Length is read as absent, and answered as a message without one.
 */
#include <string.h>
#include <strings.h>

#include "node_int.h"

/* Whether line [p, e) is a Content-Length header; its value's start in *v. */
static bool is_length(const char *p, const char *e, const char **v)
{
    static const char name[] = "content-length";
    size_t k = sizeof name - 1;
    if ((size_t)(e - p) > k && !strncasecmp(p, name, k))
        p += k;
    else if (e - p > 1 && (*p == 'l' || *p == 'L'))
        p += 1;
    else
        return false;
    while (p < e && (*p == ' ' || *p == '\t'))
        p++;
    if (p == e || *p != ':')
        return false;
    *v = p + 1;
    return true;
}

/* The value of a Content-Length line from v to e: its number, or -1 when it is none (1DIGIT at
 * least, RFC 3261 20.14; more than 9 digits is longer than any message here). */
static long length_value(const char *v, const char *e)
{
    long x = 0;
    int digits = 0;
    while (v < e && (*v == ' ' || *v == '\t'))
        v++;
    for (; v < e && *v >= '0' && *v <= '9'; v++, digits++)
        if (digits < 9)
            x = x * 10 + (*v - '0');
    while (v < e && (*v == ' ' || *v == '\t'))
        v++;
    return digits == 0 || digits > 9 || v != e ? -1 : x;
}

int tcp_frame(const char *p, size_t n, size_t max, struct tcp_frame *f)
{
    static const char ping[] = "\r\n\r\n";
    *f = (struct tcp_frame){0};
    if (n >= 1 && p[0] == '\r') {
        size_t k = n < 4 ? n : 4;
        if (memcmp(p, ping, k) == 0) { /* a ping, or the start of one */
            if (k < 4)
                return TCP_FRAME_MORE;
            f->skip = 4;
            return TCP_FRAME_PING;
        }
        if (n >= 2 && p[1] == '\n') {
            f->skip = 2;
            return TCP_FRAME_CRLF;
        }
    }
    size_t scan = n < max ? n : max;
    const char *end = NULL;
    for (const char *q = p; scan >= 4 && q + 4 <= p + scan;) {
        q = memchr(q, '\r', (size_t)(p + scan - q));
        if (!q || q + 4 > p + scan)
            break;
        if (!memcmp(q, ping, 4)) {
            end = q;
            break;
        }
        q++;
    }
    if (!end)
        return n >= max ? TCP_FRAME_TOO_LONG : TCP_FRAME_MORE;
    f->head = (size_t)(end - p) + 4;
    long cl = -2; /* -2: none seen */
    const char *line = memchr(p, '\n', (size_t)(end - p));
    while (line && line < end) {
        const char *s = line + 1, *e = memchr(s, '\r', (size_t)(end + 2 - s));
        const char *v;
        if (!e)
            break;
        if (is_length(s, e, &v)) {
            long x = length_value(v, e);
            if (x < 0 || (cl >= 0 && x != cl))
                return TCP_FRAME_BAD_LENGTH;
            cl = x;
        }
        line = e + 1 <= end ? e + 1 : NULL;
    }
    if (cl == -2)
        return TCP_FRAME_NO_LENGTH;
    if (f->head + (size_t)cl > max)
        return TCP_FRAME_TOO_LONG;
    if (n < f->head + (size_t)cl)
        return TCP_FRAME_MORE;
    f->len = f->head + (size_t)cl;
    return TCP_FRAME_MSG;
}

/*
 * The node's deadlines: a binary min-heap ordered by (time, insertion order), with lazy
 * cancellation. An entry names its object and the object's generation for that timer when it
 * was armed; cancelling or re-arming a timer only increments the generation, and an entry that
 * no longer matches is skipped when it reaches the top. So a cancel costs O(1), and the heap
 * holds at most the armed timers plus those cancelled within their own lifetime (at most 64*T1
 * for SIP timers), a bound proportional to the message rate. Objects are pool memory that stays
 * mapped while the node runs, so a stale entry never points at freed memory.
 */
#include <stdlib.h>

#include "node_int.h"
#include "osn/err.h"

static bool before(const struct tm_entry *a, const struct tm_entry *b)
{
    return a->at < b->at || (a->at == b->at && a->seq < b->seq);
}

int timers_push(struct timers *t, double at, enum tm_kind kind, void *obj, uint32_t gen)
{
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 1024;
        struct tm_entry *h = realloc(t->h, cap * sizeof *h);
        if (!h)
            return OSN_ENOMEM;
        t->h = h;
        t->cap = cap;
    }
    struct tm_entry e = {.at = at, .seq = t->seq++, .obj = obj, .gen = gen, .kind = (uint8_t)kind};
    size_t i = t->n++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!before(&e, &t->h[p]))
            break;
        t->h[i] = t->h[p];
        i = p;
    }
    t->h[i] = e;
    return 0;
}

void timers_pop(struct timers *t)
{
    if (!t->n)
        return;
    struct tm_entry last = t->h[--t->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= t->n)
            break;
        if (c + 1 < t->n && before(&t->h[c + 1], &t->h[c]))
            c++;
        if (!before(&t->h[c], &last))
            break;
        t->h[i] = t->h[c];
        i = c;
    }
    if (t->n)
        t->h[i] = last;
}

void timers_release(struct timers *t)
{
    free(t->h);
    *t = (struct timers){0};
}

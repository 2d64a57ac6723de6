/*
 * The UAS's INVITE server transactions by Call-ID. The ACK of a 2xx is a transaction of its own
 * (RFC 3261 17.1.1.3) with a new branch: the UAS finds the INVITE it acknowledges by its Call-ID
 * and CSeq number (13.2.2.4: the ACK's is the INVITE's; a re-INVITE shares the Call-ID),
 * confirmed on the text (the keyed hash may collide). Open addressing with linear probing and
 * tombstones, at most half full.
 */
#include <stdlib.h>

#include "node_int.h"
#include "osn/err.h"

#define TOMB ((struct ntx *)&tomb_marker)
static const char tomb_marker;

static uint64_t key_of(const struct ntx *x)
{
    return x->t.req.call_id;
}

static int grow(struct dialogs *d)
{
    size_t cap = d->mask ? 2 * (d->mask + 1) : 1024;
    struct ntx **s = calloc(cap, sizeof *s);
    if (!s)
        return OSN_ENOMEM;
    for (size_t i = 0; d->slot && i <= d->mask; i++) {
        struct ntx *x = d->slot[i];
        if (!x || x == TOMB)
            continue;
        size_t j = key_of(x) & (cap - 1);
        while (s[j])
            j = (j + 1) & (cap - 1);
        s[j] = x;
    }
    free(d->slot);
    d->slot = s;
    d->mask = cap - 1;
    d->used = d->n;
    return 0;
}

int dialogs_put(struct dialogs *d, struct ntx *x)
{
    if ((d->used + 1) * 2 > (d->mask ? d->mask + 1 : 0) && grow(d) != 0)
        return OSN_ENOMEM;
    size_t j = key_of(x) & d->mask;
    while (d->slot[j] && d->slot[j] != TOMB)
        j = (j + 1) & d->mask;
    if (!d->slot[j])
        d->used++;
    d->slot[j] = x;
    d->n++;
    x->in_dialogs = true;
    return 0;
}

struct ntx *dialogs_get(const struct dialogs *d, uint64_t call_id, struct osn_span text,
                        uint32_t cseq)
{
    if (!d->slot)
        return NULL;
    for (size_t j = call_id & d->mask; d->slot[j]; j = (j + 1) & d->mask) {
        struct ntx *x = d->slot[j];
        if (x != TOMB && key_of(x) == call_id && x->t.req.cseq == cseq &&
            osn_span_eq(x->key.call_id, text))
            return x;
    }
    return NULL;
}

void dialogs_del(struct dialogs *d, struct ntx *x)
{
    if (!x->in_dialogs || !d->slot)
        return;
    for (size_t j = key_of(x) & d->mask; d->slot[j]; j = (j + 1) & d->mask)
        if (d->slot[j] == x) {
            d->slot[j] = TOMB;
            d->n--;
            break;
        }
    x->in_dialogs = false;
}

void dialogs_release(struct dialogs *d)
{
    free(d->slot);
    *d = (struct dialogs){0};
}

/* ---- the calls a UAS knows (struct calls): linear probing, deletion by backward shift ---- */

static size_t calls_home(const struct calls *c, uint64_t key)
{
    return (size_t)(key ^ key >> 29) & c->mask;
}

static void calls_insert(struct calls *c, uint64_t key, double t)
{
    size_t j = calls_home(c, key);
    while (c->slot[j].key && c->slot[j].key != key)
        j = (j + 1) & c->mask;
    if (!c->slot[j].key)
        c->n++;
    c->slot[j] = (struct call_slot){key, t};
}

/* Twice the room, or the same room without the calls older than CALLS_AGE. */
static int calls_grow(struct calls *c, double now)
{
    size_t cap = c->mask ? c->mask + 1 : 1024;
    size_t live = 0;
    for (size_t i = 0; c->slot && i <= c->mask; i++)
        live += c->slot[i].key && now - c->slot[i].t < CALLS_AGE;
    if ((live + 1) * 2 > cap)
        cap *= 2;
    if (cap / 2 > CALLS_MAX)
        return OSN_ENOMEM;
    struct calls d = {calloc(cap, sizeof *d.slot), cap - 1, 0};
    if (!d.slot)
        return OSN_ENOMEM;
    for (size_t i = 0; c->slot && i <= c->mask; i++)
        if (c->slot[i].key && now - c->slot[i].t < CALLS_AGE)
            calls_insert(&d, c->slot[i].key, c->slot[i].t);
    free(c->slot);
    *c = d;
    return 0;
}

int calls_put(struct calls *c, uint64_t key, double now)
{
    if ((c->n + 1) * 2 > (c->mask ? c->mask + 1 : 0) && calls_grow(c, now) != 0)
        return OSN_ENOMEM;
    calls_insert(c, key, now);
    return 0;
}

bool calls_has(const struct calls *c, uint64_t key)
{
    if (!c->slot)
        return false;
    for (size_t j = calls_home(c, key); c->slot[j].key; j = (j + 1) & c->mask)
        if (c->slot[j].key == key)
            return true;
    return false;
}

void calls_del(struct calls *c, uint64_t key)
{
    if (!c->slot)
        return;
    size_t j = calls_home(c, key);
    while (c->slot[j].key && c->slot[j].key != key)
        j = (j + 1) & c->mask;
    if (!c->slot[j].key)
        return;
    c->slot[j].key = 0;
    c->n--;
    /* Backward shift: move up each later entry of the run that may sit at j. */
    for (size_t k = (j + 1) & c->mask; c->slot[k].key; k = (k + 1) & c->mask) {
        size_t h = calls_home(c, c->slot[k].key);
        if (((k - h) & c->mask) >= ((k - j) & c->mask)) {
            c->slot[j] = c->slot[k];
            c->slot[k].key = 0;
            j = k;
        }
    }
}

void calls_release(struct calls *c)
{
    free(c->slot);
    *c = (struct calls){0};
}

/*
 * The UAS's INVITE server transactions by Call-ID. The ACK of a 2xx is a transaction of its own
 * (RFC 3261 17.1.1.3) with a new branch: the UAS finds the call it acknowledges by its Call-ID,
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

struct ntx *dialogs_get(const struct dialogs *d, uint64_t call_id, struct osn_span text)
{
    if (!d->slot)
        return NULL;
    for (size_t j = call_id & d->mask; d->slot[j]; j = (j + 1) & d->mask) {
        struct ntx *x = d->slot[j];
        if (x != TOMB && key_of(x) == call_id && osn_span_eq(x->key.call_id, text))
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

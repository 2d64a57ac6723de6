/*
 * The UAS's INVITE server transactions by Call-ID. The ACK of a 2xx is a transaction of its own
 * (RFC 3261 17.1.1.3) with a new branch: the UAS finds the INVITE it acknowledges by its Call-ID
 * and CSeq number (13.2.2.4: the ACK's is the INVITE's; a re-INVITE shares the Call-ID),
 * confirmed on the text (the keyed hash may collide). And the calls the UAS knows (node_int.h,
 * CALLS_MAX), for a BYE or CANCEL to find. Both are maps (map.c) keyed by the Call-ID's hash: of
 * the transaction, and of the time of the call's 2xx.
 */
#include <stdint.h>
#include <string.h>

#include "node_int.h"
#include "osn/err.h"

int dialogs_put(struct map *d, struct ntx *x)
{
    if (map_add(d, x->t.req.call_id, (uint64_t)(uintptr_t)x) != 0)
        return OSN_ENOMEM;
    x->in_dialogs = true;
    return 0;
}

struct ntx *dialogs_get(const struct map *d, uint64_t call_id, struct osn_span text, uint32_t cseq)
{
    for (struct map_slot *e = NULL; (e = map_find(d, call_id, e));) {
        struct ntx *x = (struct ntx *)(uintptr_t)e->val;
        if (x->t.req.cseq == cseq && osn_span_eq(x->key.call_id, text))
            return x;
    }
    return NULL;
}

void dialogs_del(struct map *d, struct ntx *x)
{
    if (!x->in_dialogs)
        return;
    for (struct map_slot *e = NULL; (e = map_find(d, x->t.req.call_id, e));)
        if (e->val == (uint64_t)(uintptr_t)x) {
            map_del(d, e);
            break;
        }
    x->in_dialogs = false;
}

/* ---- the calls a UAS knows: the time of each one's 2xx as the value's bits ---- */

static double t_of(const struct map_slot *e)
{
    double t;
    memcpy(&t, &e->val, sizeof t);
    return t;
}

/* The calls younger than `age` at `now`: those a rebuild keeps. */
struct keep_young {
    double now, age;
};

static bool young(void *ctx, const struct map_slot *e)
{
    const struct keep_young *k = ctx;
    return k->now - t_of(e) < k->age;
}

static size_t count_young(const struct map *c, struct keep_young *k)
{
    size_t live = 0;
    for (size_t i = 0; c->slot && i <= c->mask; i++)
        live += c->slot[i].key && young(k, &c->slot[i]);
    return live;
}

int calls_put(struct map *c, uint64_t key, double now, uint64_t *forgotten)
{
    struct map_slot *e = map_find(c, key, NULL);
    uint64_t v;
    memcpy(&v, &now, sizeof v);
    if (e) {
        e->val = v;
        return 0;
    }
    /* Full: twice the room, or the same room without the calls older than CALLS_AGE. */
    size_t cap = c->slot ? c->mask + 1 : 1024;
    if ((c->n + 1) * 2 > (c->slot ? cap : 0)) {
        struct keep_young k = {now, CALLS_AGE};
        size_t live = count_young(c, &k), before = c->n;
        if ((live + 1) * 2 > cap)
            cap *= 2;
        /* At the bound the oldest calls go, the age kept halved until at most half the bound
         * is left (a BYE for one then gets 481, counted): callers that never send their ACK or
         * BYE (a flood of INVITEs; calls their caller gave up under overload) must cost calls,
         * never the node (it ended "out of memory" at 72,000 calls/s, 2026-12-07). */
        if (cap / 2 > CALLS_MAX) {
            cap = 2 * CALLS_MAX;
            while ((live + 1) * 2 > CALLS_MAX && k.age > 1e-6) {
                k.age /= 2;
                live = count_young(c, &k);
            }
            if ((live + 1) * 2 > CALLS_MAX)
                k.age = 0; /* a million calls within a microsecond: forget them all */
        }
        if (map_rebuild(c, cap, young, &k) != 0)
            return OSN_ENOMEM;
        *forgotten += before - c->n;
    }
    return map_add(c, key, v);
}

bool calls_has(const struct map *c, uint64_t key)
{
    return map_find(c, key, NULL) != NULL;
}

void calls_del(struct map *c, uint64_t key)
{
    struct map_slot *e = map_find(c, key, NULL);
    if (e)
        map_del(c, e);
}

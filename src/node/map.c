/*
 * A hash map of 64-bit keys to 64-bit values (struct map in node_int.h): open addressing with
 * linear probing, at most half full so that a probe always ends at an empty slot, and deletion
 * by backward shift, so that no tombstone lengthens the probes of a table whose entries come and
 * go at the call rate. One implementation for the node's sets keyed by a message's hashes: the
 * new requests waiting in the server (pending.c), a UAS's INVITEs by Call-ID and the calls it
 * knows (dialogs.c).
 */
#include <stdlib.h>

#include "node_int.h"
#include "osn/err.h"

#define MIN_SLOTS 256

static uint64_t stored(uint64_t key)
{
    return key ? key : 1; /* 0 is an empty slot */
}

struct map_slot *map_find(const struct map *m, uint64_t key, const struct map_slot *after)
{
    if (!m->slot)
        return NULL;
    key = stored(key);
    /* Every entry of a key sits in the run of full slots that starts at its home. */
    for (size_t j = after ? ((size_t)(after - m->slot) + 1) & m->mask : key & m->mask;
         m->slot[j].key; j = (j + 1) & m->mask)
        if (m->slot[j].key == key)
            return &m->slot[j];
    return NULL;
}

static void put(struct map_slot *slot, size_t mask, struct map_slot e)
{
    size_t j = e.key & mask;
    while (slot[j].key)
        j = (j + 1) & mask;
    slot[j] = e;
}

int map_rebuild(struct map *m, size_t cap, bool (*keep)(void *ctx, const struct map_slot *e),
                void *ctx)
{
    struct map_slot *s = calloc(cap, sizeof *s);
    size_t n = 0;
    if (!s)
        return OSN_ENOMEM;
    for (size_t i = 0; m->slot && i <= m->mask; i++)
        if (m->slot[i].key && (!keep || keep(ctx, &m->slot[i]))) {
            put(s, cap - 1, m->slot[i]);
            n++;
        }
    free(m->slot);
    *m = (struct map){s, cap - 1, n};
    return 0;
}

int map_add(struct map *m, uint64_t key, uint64_t val)
{
    size_t cap = m->slot ? m->mask + 1 : 0;
    if ((m->n + 1) * 2 > cap && map_rebuild(m, cap ? 2 * cap : MIN_SLOTS, NULL, NULL) != 0)
        return OSN_ENOMEM;
    put(m->slot, m->mask, (struct map_slot){stored(key), val});
    m->n++;
    return 0;
}

void map_del(struct map *m, struct map_slot *e)
{
    size_t j = (size_t)(e - m->slot);
    m->slot[j].key = 0;
    m->n--;
    /* Each later entry of the run moves up into the hole unless its home lies after the hole
     * (cyclically in (j, k]), where a probe for it would no longer pass the hole. */
    for (size_t k = (j + 1) & m->mask; m->slot[k].key; k = (k + 1) & m->mask) {
        size_t h = m->slot[k].key & m->mask;
        if (((k - h) & m->mask) >= ((k - j) & m->mask)) {
            m->slot[j] = m->slot[k];
            m->slot[k].key = 0;
            j = k;
        }
    }
}

void map_release(struct map *m)
{
    free(m->slot);
    *m = (struct map){0};
}

/*
 * The event set of include/osn/des.h: two array 4-ary heaps ordered by (time, key) with a slot
 * back-pointer in each event, plus one FIFO per fixed timer duration.
 *
 * A heap moves 24-byte slots {t, seq, ev} so that sifting compares keys without touching the
 * events; only the final slot of a moving event is written back into ev->pos. Sifts use a hole
 * (one write per level instead of a swap). Cancel moves the last slot into the hole and sifts it
 * up or down, O(log n). The second heap takes the events due beyond the horizon: they are few
 * per unit of time but many at once (call holds of seconds), and kept apart they no longer
 * lengthen every sift of the short ones. A heap of few slots is kept as a sorted array
 * instead ("small sets" below).
 *
 * A FIFO holds events of one timer class in (time, key) order: q->now never decreases, so a push
 * goes at the tail, or a place or two before it when entries of its time have greater keys
 * (osn__des_fifo_insert). It is a ring of slots indexed by a running count (ev->pos);
 * cancelling an entry clears its event pointer and the head skips cleared entries, so no
 * operation touches an event other than its own.
 *
 * The next event is the least of the two heap tops and the leading FIFO's head. The head keys
 * are cached side by side in q->ft/q->fs, and the non-empty FIFOs are kept in order of them
 * (q->ford), so that a pop moves its FIFO back a place or two instead of rescanning all.
 */
#include "osn/des.h"
#include "osn/des_tuning.h"

#include <stdlib.h>

#include "osn/err.h"
#include "osn/mem.h"

/* Events this many places behind a FIFO head are prefetched when the head moves. */
#define AHEAD 8

/* The heaps are 4-ary: half the levels of a binary heap, so a sift writes the back-pointers of
 * half as many (often cold) events, and the four children of a slot share a cache line or two. */
#define ARITY 4

/* Where the next event is: a FIFO id >= 0, or one of these. SRC_NONE is the FIFO order's
 * sentinel, which leads it when no FIFO has an event (its head key never beats a heap's). */
enum { SRC_NEAR = -1, SRC_FAR = -2, SRC_NONE = OSN__DES_NOFIFO };

/* A ring of cap slots. A ring of a megabyte or more (the 64*T1 timers of the SIP network reach
 * 6 MB) takes huge-page blocks (osn/mem.h): fewer page faults and TLB misses. */
static struct osn__des_slot *ring_alloc(size_t cap)
{
    size_t bytes = cap * sizeof(struct osn__des_slot);
    return bytes >= OSN_MEM_BLOCK / 2 ? osn_mem_block_alloc(bytes) : malloc(bytes);
}

static void ring_free(struct osn__des_slot *r, size_t cap)
{
    size_t bytes = cap * sizeof(struct osn__des_slot);
    if (bytes >= OSN_MEM_BLOCK / 2)
        osn_mem_block_free(r, bytes);
    else
        free(r);
}

static inline bool slot_less(const struct osn__des_slot *a, const struct osn__des_slot *b)
{
    return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static int heap_init(struct osn__des_heap *h, size_t cap)
{
    h->s = malloc(cap * sizeof *h->s);
    h->n = 0;
    h->cap = h->s ? cap : 0;
    h->sorted = true;
    return h->s ? 0 : OSN_ENOMEM;
}

int osn_des_init(struct osn_des *q, size_t cap)
{
    if (!q)
        return OSN_EINVAL;
    *q = (struct osn_des){.horizon = INFINITY, .popped = -1};
    for (int k = 0; k < 2; k++) {
        q->ht[k] = INFINITY;
        q->hs[k] = UINT64_MAX;
    }
    for (int i = 0; i <= OSN_DES_MAX_FIFOS; i++) {
        q->ft[i] = INFINITY;
        q->fs[i] = UINT64_MAX;
    }
    q->ford[0] = OSN__DES_NOFIFO;
    if (heap_init(&q->heap[0], cap < 16 ? 16 : cap) != 0 || heap_init(&q->heap[1], 16) != 0) {
        osn_des_release(q);
        return OSN_ENOMEM;
    }
    return 0;
}

void osn_des_release(struct osn_des *q)
{
    if (!q)
        return;
    free(q->heap[0].s);
    free(q->heap[1].s);
    for (int i = 0; i < q->nfifo; i++)
        if (q->fifo[i].ring)
            ring_free(q->fifo[i].ring, q->fifo[i].mask + 1);
    *q = (struct osn_des){0};
}

void osn_des_set_horizon(struct osn_des *q, double horizon)
{
    if (q && horizon >= 0)
        q->horizon = horizon;
}

/* Grows a FIFO's ring to `cap` slots (a power of two above its size). Entries keep their
 * indices (only their place in the ring moves), so the events' pos stay valid and no event is
 * touched. */
static int ring_resize(struct osn__des_fifo *f, size_t cap)
{
    struct osn__des_slot *r = ring_alloc(cap);
    if (!r)
        return OSN_ENOMEM;
    for (uint64_t i = f->head; i != f->tail; i++)
        r[i & (cap - 1)] = f->ring[i & f->mask];
    if (f->head == f->tail) /* the last push's slot is not copied: no push compares with it */
        f->last_t = -INFINITY;
    if (f->ring)
        ring_free(f->ring, f->mask + 1);
    f->ring = r;
    f->mask = cap - 1;
    return 0;
}

/* Doubles a FIFO's ring (64 slots for the first). */
static int ring_grow(struct osn__des_fifo *f)
{
    return ring_resize(f, f->ring ? 2 * (f->mask + 1) : 64);
}

int osn_des_timer_reserve(struct osn_des *q, int id, size_t n)
{
    if (!q || id < 0 || id >= q->nfifo || n > ((size_t)1 << 40))
        return OSN_EINVAL;
    struct osn__des_fifo *f = &q->fifo[id];
    size_t cap = f->mask + 1;
    while (cap < n)
        cap *= 2;
    return cap == f->mask + 1 ? 0 : ring_resize(f, cap);
}

int osn_des_timer_class(struct osn_des *q, double duration, int *id)
{
    if (!q || !id || !isfinite(duration) || duration < 0 || q->nfifo >= OSN_DES_MAX_FIFOS)
        return OSN_EINVAL;
    q->fifo[q->nfifo] = (struct osn__des_fifo){
            .d = duration,
            .before = 128,
            .after = (int)sizeof(struct osn_des_ev) + 64,
            .last_t = -INFINITY};           /* no push yet: the first compares with no slot */
    if (ring_grow(&q->fifo[q->nfifo]) != 0) /* every class has a ring: the push needs no check */
        return OSN_ENOMEM;
    q->ft[q->nfifo] = INFINITY;
    q->fs[q->nfifo] = UINT64_MAX;
    q->fpre[q->nfifo] = true; /* before + after > 0 */
    *id = q->nfifo++;
    return 0;
}

int osn_des_timer_prefetch(struct osn_des *q, int id, int before, int after)
{
    if (!q || id < 0 || id >= q->nfifo || before < 0 || before > 1024 || after < 0 || after > 1024)
        return OSN_EINVAL;
    q->fifo[id].before = before;
    q->fifo[id].after = after;
    q->fpre[id] = before + after > 0;
    return 0;
}

/* ---- heaps ---- */

/* Moves slot s up from hole i to its place. */
static void sift_up(struct osn__des_slot *h, size_t i, struct osn__des_slot s)
{
    while (i > 0) {
        size_t p = (i - 1) / ARITY;
        if (!slot_less(&s, &h[p]))
            break;
        h[i] = h[p];
        h[i].ev->pos = i;
        i = p;
    }
    h[i] = s;
    s.ev->pos = i;
}

/* Moves slot s down from hole i in a heap of n slots. */
static void sift_down(struct osn__des_slot *h, size_t n, size_t i, struct osn__des_slot s)
{
    for (;;) {
        size_t c = ARITY * i + 1, end = c + ARITY < n ? c + ARITY : n;
        if (c >= n)
            break;
        for (size_t k = c + 1; k < end; k++)
            if (slot_less(&h[k], &h[c]))
                c = k;
        if (!slot_less(&h[c], &s))
            break;
        h[i] = h[c];
        h[i].ev->pos = i;
        i = c;
    }
    h[i] = s;
    s.ev->pos = i;
}

/* ---- small sets ----
 *
 * The near heap of the SIP network holds some twenty events (a service completion per server,
 * an arrival per source), and there a 4-ary heap spends most of its time sifting. Up to
 * SORTED_MAX slots the set is an array sorted by decreasing key: the next event is the last
 * slot, so a pop is O(1), and an insert moves only the slots that come due before it (few: a
 * new event is mostly among the soonest). Beyond SORTED_MAX it turns into a heap (a reversed
 * sorted array is one) and below SORTED_BACK back into a sorted array. */
#define SORTED_MAX  OSN__DES_SORTED_MAX
#define SORTED_BACK 16

static void set_pos(struct osn__des_slot *s, size_t i)
{
    s->ev->pos = i;
}

static void sorted_remove(struct osn__des_heap *h, size_t i)
{
    for (h->n--; i < h->n; i++) {
        h->s[i] = h->s[i + 1];
        set_pos(&h->s[i], i);
    }
}

/* Sorted (decreasing) -> heap: the reversed array is increasing, which is a heap. */
static void to_heap(struct osn__des_heap *h)
{
    for (size_t i = 0, j = h->n - 1; i < j; i++, j--) {
        struct osn__des_slot x = h->s[i];
        h->s[i] = h->s[j];
        h->s[j] = x;
    }
    for (size_t i = 0; i < h->n; i++)
        set_pos(&h->s[i], i);
    h->sorted = false;
}

/* Heap -> sorted: an insertion sort (fewer than SORTED_BACK slots), each slot inserted into the
 * sorted prefix before it; it is passed by value, so the prefix may grow over its place. */
static void to_sorted(struct osn__des_heap *h)
{
    size_t n = h->n;
    h->n = 0;
    for (size_t i = 0; i < n; i++)
        osn__des_sorted_insert(h, h->s[i]);
    h->sorted = true;
}

/* The least slot, NULL when empty. */
static inline const struct osn__des_slot *heap_top(const struct osn__des_heap *h)
{
    return h->n == 0 ? NULL : h->sorted ? &h->s[h->n - 1] : &h->s[0];
}

/* Refreshes the cached top key of heap k. */
static inline void top_cache(struct osn_des *q, int k)
{
    const struct osn__des_slot *top = heap_top(&q->heap[k]);
    q->ht[k] = top ? top->t : INFINITY;
    q->hs[k] = top ? top->seq : UINT64_MAX;
}

static void heap_remove(struct osn__des_heap *h, struct osn_des_ev *ev)
{
    size_t i = ev->pos;
    ev->pos = OSN_DES_IDLE;
    if (h->sorted) {
        sorted_remove(h, i);
        return;
    }
    struct osn__des_slot last = h->s[--h->n];
    if (i == h->n)
        return;
    if (i > 0 && slot_less(&last, &h->s[(i - 1) / ARITY]))
        sift_up(h->s, i, last);
    else
        sift_down(h->s, h->n, i, last);
}

/* osn_des_at_key (osn/des.h) when its inline part does not apply. */
int osn__des_at_slow(struct osn_des *q, struct osn_des_ev *ev, double t, uint64_t key)
{
    if (!q || !ev || osn_des_pending(ev) || !(t >= q->now))
        return OSN_EINVAL;
    int far = t - q->now > q->horizon;
    struct osn__des_heap *h = &q->heap[far];
    if (h->n == h->cap) {
        size_t cap = h->cap * 2;
        struct osn__des_slot *s = realloc(h->s, cap * sizeof *s);
        if (!s)
            return OSN_ENOMEM;
        h->s = s;
        h->cap = cap;
    }
    ev->fifo = -far;
    struct osn__des_slot sl = {t, key, ev};
    if (h->sorted && h->n >= SORTED_MAX)
        to_heap(h);
    if (h->sorted)
        osn__des_sorted_insert(h, sl);
    else
        sift_up(h->s, h->n++, sl);
    top_cache(q, far);
    return 0;
}

/* ---- FIFOs ---- */

/* Whether FIFO a's head comes before FIFO b's. */
static inline bool head_less(const struct osn_des *q, int a, int b)
{
    return q->ft[a] < q->ft[b] || (q->ft[a] == q->ft[b] && q->fs[a] < q->fs[b]);
}

void osn__des_fifo_enter(struct osn_des *q, int id)
{
    int p = q->nford++;
    q->ford[q->nford] = OSN__DES_NOFIFO;
    for (; p > 0 && head_less(q, id, q->ford[p - 1]); p--)
        q->ford[p] = q->ford[p - 1];
    q->ford[p] = (int8_t)id;
}

/* Moves FIFO id's head past cancelled entries, refreshes its cached head key and its place in
 * q->ford: a head only moves later, so the FIFO only moves back (or out, when empty). */
static void fifo_settle(struct osn_des *q, int id)
{
    struct osn__des_fifo *f = &q->fifo[id];
    int p = 0;
    while (q->ford[p] != id) /* most often 0: pops come from the leading FIFO */
        p++;
    while (f->head != f->tail && !f->ring[f->head & f->mask].ev)
        f->head++;
    if (f->head == f->tail) {
        q->ft[id] = INFINITY;
        q->fs[id] = UINT64_MAX;
        for (q->nford--; p <= q->nford; p++) /* the sentinel moves up too */
            q->ford[p] = q->ford[p + 1];
        return;
    }
    const struct osn__des_slot *h = &f->ring[f->head & f->mask];
    q->ft[id] = h->t;
    q->fs[id] = h->seq;
    for (; head_less(q, q->ford[p + 1], id); p++) /* the sentinel stops it */
        q->ford[p] = q->ford[p + 1];
    q->ford[p] = (int8_t)id;
    /* The events a few places behind the head fire soon and sit in cold memory: ask for them
     * now, so that their owners' fields are in cache when they fire. */
    if (q->fpre[id] && f->tail - f->head > AHEAD) {
        const struct osn_des_ev *a = f->ring[(f->head + AHEAD) & f->mask].ev;
        if (a) {
            uintptr_t line = ((uintptr_t)a - (uintptr_t)f->before) & ~(uintptr_t)63;
            for (; line < (uintptr_t)a + (uintptr_t)f->after; line += 64)
                __builtin_prefetch((const void *)line, 1, 2);
        }
    }
}

/* osn_des_timer_key (osn/des.h) when its inline part cannot go on: bad arguments, or a full
 * ring. */
int osn__des_timer_slow(struct osn_des *q, struct osn_des_ev *ev, int id, uint64_t key)
{
    if (!q || !ev || osn_des_pending(ev) || id < 0 || id >= q->nfifo)
        return OSN_EINVAL;
    struct osn__des_fifo *f = &q->fifo[id];
    if (f->tail - f->head > f->mask && ring_grow(f) != 0)
        return OSN_ENOMEM;
    osn__des_fifo_push(q, ev, id, key);
    return 0;
}

/* osn__des_fifo_push's out-of-line part: the last push was due at t with a key above `key`. The
 * entries due at t with greater keys (live or cancelled) move one place on, each live one's
 * pos with it, and ev takes the hole; the tail's key stays the greatest. Two
 * elements pushing at one instant over one link delay make this, a place or two back; the ring
 * stays in (time, key) order. When ev becomes the head (every entry was due at t with a greater
 * key), the FIFO's head key falls, and the FIFO moves forward in q->ford; into it, when the
 * FIFO was empty (its last push fired or was cancelled). */
void osn__des_fifo_insert(struct osn_des *q, struct osn_des_ev *ev, int id, double t, uint64_t key)
{
    struct osn__des_fifo *f = &q->fifo[id];
    bool empty = f->head == f->tail;
    uint64_t i = f->tail++;
    for (; i != f->head; i--) {
        const struct osn__des_slot *prev = &f->ring[(i - 1) & f->mask];
        if (!(prev->t == t && prev->seq > key))
            break;
        struct osn__des_slot *to = &f->ring[i & f->mask];
        *to = *prev;
        if (to->ev)
            to->ev->pos = (size_t)i;
    }
    f->ring[i & f->mask] = (struct osn__des_slot){t, key, ev};
    ev->fifo = id + 1;
    ev->pos = (size_t)i;
    q->nfifo_events++;
    if (i != f->head)
        return;
    q->ft[id] = t;
    q->fs[id] = key;
    if (empty) {
        osn__des_fifo_enter(q, id);
        return;
    }
    int p = 0;
    while (q->ford[p] != id)
        p++;
    for (; p > 0 && head_less(q, id, q->ford[p - 1]); p--)
        q->ford[p] = q->ford[p - 1];
    q->ford[p] = (int8_t)id;
}

/* Takes ev off its FIFO: clears its entry, and settles the head when it was the head. */
static void fifo_unlink(struct osn_des *q, struct osn_des_ev *ev)
{
    int id = ev->fifo - 1;
    struct osn__des_fifo *f = &q->fifo[id];
    f->ring[ev->pos & f->mask].ev = NULL;
    if ((uint64_t)ev->pos == f->head)
        fifo_settle(q, id);
    ev->pos = OSN_DES_IDLE;
    ev->fifo = 0;
    q->nfifo_events--;
}

/* ---- the next event ---- */

bool osn_des_key(const struct osn_des *q, const struct osn_des_ev *ev, double *t, uint64_t *seq)
{
    if (!q || !ev || ev->pos == OSN_DES_IDLE)
        return false;
    const struct osn__des_slot *sl;
    if (ev->fifo > 0) {
        const struct osn__des_fifo *f = &q->fifo[ev->fifo - 1];
        sl = &f->ring[ev->pos & f->mask];
    } else {
        sl = &q->heap[-ev->fifo].s[ev->pos];
    }
    if (t)
        *t = sl->t;
    if (seq)
        *seq = sl->seq;
    return true;
}

void osn__des_cancel_pending(struct osn_des *q, struct osn_des_ev *ev)
{
    if (ev->fifo > 0)
        fifo_unlink(q, ev);
    else {
        heap_remove(&q->heap[-ev->fifo], ev);
        top_cache(q, -ev->fifo);
    }
    ev->fifo = 0;
}

/* Where the next event is (a FIFO id, SRC_NEAR, SRC_FAR or SRC_NONE): the least of the two
 * heap tops and the leading FIFO's head. */
static int next_source(const struct osn_des *q)
{
    int best = q->ford[0]; /* the sentinel when no FIFO has an event */
    double bt = q->ft[best];
    uint64_t bs = q->fs[best];
    for (int k = 0; k < 2; k++) { /* an empty heap's (INFINITY, UINT64_MAX) never wins */
        if (q->ht[k] < bt || (q->ht[k] == bt && q->hs[k] < bs)) {
            bt = q->ht[k];
            bs = q->hs[k];
            best = k ? SRC_FAR : SRC_NEAR;
        }
    }
    return best; /* the sentinel's id is SRC_NONE */
}

double osn_des_peek(const struct osn_des *q)
{
    int src = next_source(q);
    return src < 0 ? q->ht[src == SRC_FAR] : q->ft[src]; /* SRC_NONE's ft: INFINITY */
}

/* The pop of FIFO src's head, src leading q->ford (next_source chose it): fifo_settle's work with
 * its place known (0), the ring's fields read once, and the leader's place in q->ford kept
 * unless a later FIFO's head now comes first. Always inline: a pop of a FIFO is most pops, and
 * out of line (fifo_settle) it saved and restored six registers of the loop around it. */
static inline __attribute__((always_inline)) struct osn_des_ev *fifo_pop(struct osn_des *q, int src)
{
    struct osn__des_fifo *f = &q->fifo[src];
    struct osn__des_slot *ring = f->ring;
    uint64_t head = f->head, tail = f->tail;
    size_t mask = f->mask;
    struct osn_des_ev *ev = ring[head++ & mask].ev; /* the head is live */
    q->now = q->ft[src];
    q->popped = src;
    q->nfifo_events--;
    while (head != tail && !ring[head & mask].ev)
        head++;
    f->head = head;
    if (head == tail) {
        q->ft[src] = INFINITY;
        q->fs[src] = UINT64_MAX;
        q->nford--;
        for (int p = 0; p <= q->nford; p++) /* the sentinel moves up too */
            q->ford[p] = q->ford[p + 1];
        return ev;
    }
    const struct osn__des_slot *h = &ring[head & mask];
    double t = h->t;
    uint64_t seq = h->seq;
    q->ft[src] = t;
    q->fs[src] = seq;
    int p = 0;
    for (;; p++) { /* the sentinel stops it */
        int b = q->ford[p + 1];
        if (!(q->ft[b] < t || (q->ft[b] == t && q->fs[b] < seq)))
            break;
        q->ford[p] = (int8_t)b;
    }
    if (p > 0)
        q->ford[p] = (int8_t)src;
    /* As fifo_settle: the event a few places behind the head, asked for now (a FIFO that asks
     * for nothing, the most popped, tested first). */
    if (q->fpre[src] && tail - head > AHEAD) {
        const struct osn_des_ev *a = ring[(head + AHEAD) & mask].ev;
        if (a) {
            uintptr_t line = ((uintptr_t)a - (uintptr_t)f->before) & ~(uintptr_t)63;
            for (; line < (uintptr_t)a + (uintptr_t)f->after; line += 64)
                __builtin_prefetch((const void *)line, 1, 2);
        }
    }
    return ev;
}

struct osn_des_ev *osn_des_pop(struct osn_des *q)
{
    int src = next_source(q);
    struct osn_des_ev *ev;
    if (src >= 0) {
        if (src == SRC_NONE)
            return NULL;
        ev = fifo_pop(q, src);
    } else {
        struct osn__des_heap *h = &q->heap[src == SRC_FAR];
        q->popped = -1;
        if (h->sorted) {
            /* top_cache's work, with the heap known sorted */
            const struct osn__des_slot *sl = &h->s[--h->n];
            int k = src == SRC_FAR;
            ev = sl->ev;
            q->now = sl->t;
            q->ht[k] = h->n ? sl[-1].t : INFINITY;
            q->hs[k] = h->n ? sl[-1].seq : UINT64_MAX;
            ev->fifo = 0;
            ev->pos = OSN_DES_IDLE;
            return ev;
        } else {
            ev = h->s[0].ev;
            q->now = h->s[0].t;
            if (--h->n > 0)
                sift_down(h->s, h->n, 0, h->s[h->n]);
            if (h->n < SORTED_BACK)
                to_sorted(h);
        }
        top_cache(q, src == SRC_FAR);
    }
    ev->fifo = 0;
    ev->pos = OSN_DES_IDLE;
    return ev;
}

/*
 * Internals of the event engine, not an API: the layout of struct osn_des (which callers embed
 * by value, so it must be complete in their translation units) and the bodies of the inline
 * calls that include/osn/des.h declares. They are inline because the SIP network schedules two
 * or three events per message and a call would cost as much as the work. Nothing outside
 * src/des may name an osn__des_* or osn__zig* symbol; include osn/des.h, never this file.
 */
#ifndef OSN_DES_INLINE_H
#define OSN_DES_INLINE_H

#ifndef OSN_DES_H
#error "include osn/des.h, which includes this file"
#endif

/* A heap slot or a FIFO ring entry: the event's key, so ordering never touches the event. */
struct osn__des_slot {
    double t;
    uint64_t seq;
    struct osn_des_ev *ev; /* NULL in a ring: cancelled */
};

struct osn__des_fifo {
    double d;                   /* the duration of this timer class (s) */
    struct osn__des_slot *ring; /* entry i at ring[i & mask] */
    uint64_t head, tail;        /* live and cancelled entries are head..tail-1; head is live */
    size_t mask;                /* ring capacity - 1 (capacity 0: no ring yet) */
    /* What the prefetch ahead of the head asks for (osn_des_timer_prefetch): the cache lines
     * from `before` bytes before an event to `after` bytes after its start. */
    int before, after;
    /* The time of the last entry pushed at the tail (the ring's slot tail - 1 keeps it, and its
     * key), here so that a push compares one word it writes anyway: only a push of that time
     * reads the ring's last slot. */
    double last_t;
    /* To 64 bytes: q->fifo[id] is then id << 6, one instruction at every push and pop, where
     * 48 bytes took three (id * 3 << 4). */
    uint64_t pad;
};
_Static_assert(sizeof(void *) != 8 || sizeof(struct osn__des_fifo) == 64,
               "struct osn__des_fifo: keep it 64 bytes");

/* An array 4-ary heap of slots. */
struct osn__des_heap {
    struct osn__des_slot *s; /* heap: s[0] is the least; sorted: s[n-1] is */
    size_t n, cap;
    bool sorted; /* few slots: kept sorted by decreasing key instead of as a heap */
};

struct osn_des {
    double now; /* time of the last event popped (starts at 0) */
    uint64_t seq;
    /* heap[0] holds heap events due within `horizon` of the time they were scheduled, heap[1]
     * the later ones (osn_des_set_horizon). */
    struct osn__des_heap heap[2];
    double horizon;
    /* Head keys of the FIFOs side by side (INFINITY when empty), so that ordering the FIFOs
     * reads a few words; entry OSN__DES_NOFIFO is a sentinel, (INFINITY, UINT64_MAX) always. */
    double ft[OSN_DES_MAX_FIFOS + 1];
    uint64_t fs[OSN_DES_MAX_FIFOS + 1];
    /* The top keys of heap[0] and heap[1] likewise (INFINITY, UINT64_MAX when empty). */
    double ht[2];
    uint64_t hs[2];
    /* The non-empty FIFOs by head key, least first: a pop moves its FIFO back a place or two
     * instead of comparing every head. ford[nford] is the sentinel OSN__DES_NOFIFO, whose key
     * no head comes after: the leader is ford[0] without a test, and a FIFO moving back stops
     * at the end without one. */
    int8_t ford[OSN_DES_MAX_FIFOS + 1];
    int nford;
    /* Whether FIFO i asks for a prefetch ahead of its head (its before + after > 0), beside the
     * head keys: a pop reads one byte here instead of its FIFO's two ints (evset.c, fifo_pop). */
    bool fpre[OSN_DES_MAX_FIFOS];
    struct osn__des_fifo fifo[OSN_DES_MAX_FIFOS];
    int nfifo;
    size_t nfifo_events;
    int popped; /* where the last osn_des_pop took its event: a FIFO id, or -1 (a heap) */
};

/* The sentinel of struct osn_des's ford, ft and fs. */
#define OSN__DES_NOFIFO OSN_DES_MAX_FIFOS

static inline void osn_des_ev_init(struct osn_des_ev *ev, int type)
{
    *ev = (struct osn_des_ev){0};
    ev->pos = OSN_DES_IDLE;
    ev->type = type;
}

static inline bool osn_des_pending(const struct osn_des_ev *ev)
{
    return ev->pos != OSN_DES_IDLE;
}

/* Pending events, heap and FIFOs together. */
static inline size_t osn_des_count(const struct osn_des *q)
{
    return q->heap[0].n + q->heap[1].n + q->nfifo_events;
}

/* Up to this many slots a heap is a sorted array (src/des/evset.c, "small sets"). */
#define OSN__DES_SORTED_MAX 48

int osn__des_at_slow(struct osn_des *q, struct osn_des_ev *ev, double t, uint64_t key);

/* Inserts slot sl into sorted heap h, which has room, moving the slots due before it one place
 * on; returns its place (h->n - 1 when it is the new least). */
static inline size_t osn__des_sorted_insert(struct osn__des_heap *h, struct osn__des_slot sl)
{
    size_t p = h->n++;
    for (; p > 0 && (h->s[p - 1].t < sl.t || (h->s[p - 1].t == sl.t && h->s[p - 1].seq < sl.seq));
         p--) {
        h->s[p] = h->s[p - 1];
        h->s[p].ev->pos = p;
    }
    h->s[p] = sl;
    sl.ev->pos = p;
    return p;
}

static inline int osn_des_at_key(struct osn_des *q, struct osn_des_ev *ev, double t, uint64_t key)
{
    if (q && ev && ev->pos == OSN_DES_IDLE && t >= q->now && !(t - q->now > q->horizon)) {
        struct osn__des_heap *h = &q->heap[0];
        if (h->sorted && h->n < OSN__DES_SORTED_MAX && h->n < h->cap) {
            struct osn__des_slot sl = {t, key, ev};
            ev->fifo = 0;
            if (osn__des_sorted_insert(h, sl) == h->n - 1) { /* the new least: the cached top */
                q->ht[0] = t;
                q->hs[0] = key;
            }
            return 0;
        }
    }
    return osn__des_at_slow(q, ev, t, key);
}

static inline int osn_des_at(struct osn_des *q, struct osn_des_ev *ev, double t)
{
    /* the set's count moves on only for an event scheduled */
    int err = osn_des_at_key(q, ev, t, q ? q->seq : 0);
    if (err == 0)
        q->seq++;
    return err;
}

int osn__des_timer_slow(struct osn_des *q, struct osn_des_ev *ev, int id, uint64_t key);

/* FIFO id, empty until now, takes its place in q->ford. */
void osn__des_fifo_enter(struct osn_des *q, int id);

/* Puts idle ev, due at t with key `key`, into FIFO id, whose ring has room and whose last push
 * was due at t with a greater key: among the entries due at t, in key order (evset.c). */
void osn__des_fifo_insert(struct osn_des *q, struct osn_des_ev *ev, int id, double t, uint64_t key);

/* Ring slots the push prefetches ahead of the tail (three cache lines on). */
#define OSN__DES_PUSH_AHEAD 8

/* Appends idle ev with key `key` to FIFO id, whose ring has room. Pushes come at a now that
 * never decreases, so the ring stays in time order; among equal times (two senders pushing at
 * one instant) a key below the tail's goes back among them, out of line. Always inline: GCC
 * drops the prefetch of a static helper it keeps out of line (it takes the helper for side-effect
 * free). */
static inline __attribute__((always_inline)) void
osn__des_fifo_push(struct osn_des *q, struct osn_des_ev *ev, int id, uint64_t key)
{
    struct osn__des_fifo *f = &q->fifo[id];
    double t = q->now + f->d;
    if (__builtin_expect(t == f->last_t, 0) && key < f->ring[(f->tail - 1) & f->mask].seq) {
        osn__des_fifo_insert(q, ev, id, t, key);
        return;
    }
    f->last_t = t;
    ev->fifo = id + 1;
    ev->pos = (size_t)f->tail;
    f->ring[f->tail & f->mask] = (struct osn__des_slot){t, key, ev};
    /* The ring of a long timer is written a slot after another into memory last met one
     * duration ago (cold): ask for the line a few slots on now, so that writing it waits for
     * nothing. */
    __builtin_prefetch(&f->ring[(f->tail + OSN__DES_PUSH_AHEAD) & f->mask], 1, 3);
    if (f->head == f->tail++) {
        q->ft[id] = t;
        q->fs[id] = key;
        osn__des_fifo_enter(q, id);
    }
    q->nfifo_events++;
}

static inline int osn_des_timer_key(struct osn_des *q, struct osn_des_ev *ev, int id, uint64_t key)
{
    if (q && ev && ev->pos == OSN_DES_IDLE && (unsigned)id < (unsigned)q->nfifo) {
        const struct osn__des_fifo *f = &q->fifo[id];
        if (f->tail - f->head <= f->mask) {
            osn__des_fifo_push(q, ev, id, key);
            return 0;
        }
    }
    return osn__des_timer_slow(q, ev, id, key);
}

static inline int osn_des_timer(struct osn_des *q, struct osn_des_ev *ev, int id)
{
    int err = osn_des_timer_key(q, ev, id, q ? q->seq : 0);
    if (err == 0)
        q->seq++;
    return err;
}

void osn__des_cancel_pending(struct osn_des *q, struct osn_des_ev *ev);

static inline void osn_des_cancel(struct osn_des *q, struct osn_des_ev *ev)
{
    if (!q || !ev || ev->pos == OSN_DES_IDLE)
        return;
    /* A FIFO entry behind the head (the SIP network's replaced and stopped timers, most
     * cancels) is only cleared, here; the head's cancel moves the head on (evset.c). */
    if (ev->fifo > 0) {
        struct osn__des_fifo *f = &q->fifo[ev->fifo - 1];
        if ((uint64_t)ev->pos != f->head) {
            f->ring[ev->pos & f->mask].ev = NULL;
            ev->pos = OSN_DES_IDLE;
            ev->fifo = 0;
            q->nfifo_events--;
            return;
        }
    }
    osn__des_cancel_pending(q, ev);
}

/* Ziggurat tables of the exponential law (src/des/zig.c, built at program start). */
struct osn__zig {
    uint64_t ke[256]; /* acceptance thresholds of the 56-bit abscissa */
    double we[256];   /* layer widths / 2^56 */
    double fe[256];   /* exp(-x_i) */
};
extern struct osn__zig osn__zig_exp;
double osn__zig_exp_slow(struct osn_rng *r, uint64_t u);

static inline double osn_des_exp1(struct osn_rng *r)
{
    uint64_t u = osn_rng_next(r);
    unsigned i = (unsigned)(u & 255);
    uint64_t j = u >> 8;
    if (j < osn__zig_exp.ke[i])
        return (double)j * osn__zig_exp.we[i];
    return osn__zig_exp_slow(r, u);
}

#endif

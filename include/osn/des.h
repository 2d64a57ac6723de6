/*
 * The discrete-event engine: an event set, service-time laws and arrival processes.
 *
 * Event set. Events are caller-owned structs (embed a struct osn_des_ev in your own object);
 * scheduling never allocates except when the heap array grows, which is amortised. General
 * events live in an array 4-ary heap whose entries carry their keys and a back-pointer, and
 * each event knows its heap slot, so cancel is O(log n); while there are few, the array is
 * kept sorted instead (pop O(1)). Timers of a fixed duration (SIP timers
 * come in a handful of durations) go to a FIFO per duration instead: since now only grows, a
 * FIFO of now + d is already in time order, so insert, cancel and pop are O(1). A FIFO is a
 * ring of {time, seq, event} entries, so appending, popping and comparing heads read only the
 * ring (sequential memory), and cancelling clears the event's entry without touching any other
 * event: with 10^5 pending timers in cold memory that is what keeps the set fast. The next event
 * is the least of the heap top and the FIFO heads. Every schedule takes a sequence number from
 * one counter and the order is (time, seq), so simultaneous events fire in the order they were
 * scheduled and runs are reproducible.
 *
 * Laws and arrivals use the model vocabulary of include/osn/model.h (struct osn_law,
 * struct osn_mmpp, enum osn_arrival_kind), so the simulator and the solver read the same
 * scenarios.
 */
#ifndef OSN_DES_H
#define OSN_DES_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "osn/model.h"
#include "osn/rng.h"

/* ---- event set ---- */

#define OSN_DES_MAX_FIFOS 16
#define OSN_DES_IDLE      SIZE_MAX

/* An event: embed it in the object it belongs to. Zero it, or call osn_des_ev_init(). */
struct osn_des_ev {
    /* Heap slot or FIFO ring index while pending, OSN_DES_IDLE when idle. The key (time, seq)
     * lives only in that slot (osn_des_key), so an event is 16 bytes: the SIP network embeds
     * two in each of ~10^5 transactions. */
    size_t pos;
    int fifo; /* timer class + 1 while on a FIFO, 0 in heap[0] (or idle), -1 in heap[1] */
    int type; /* free for the caller */
};

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
};

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
     * reads a few words. */
    double ft[OSN_DES_MAX_FIFOS];
    uint64_t fs[OSN_DES_MAX_FIFOS];
    /* The top keys of heap[0] and heap[1] likewise (INFINITY, UINT64_MAX when empty). */
    double ht[2];
    uint64_t hs[2];
    /* The non-empty FIFOs by head key, least first: a pop moves its FIFO back a place or two
     * instead of comparing every head. */
    int8_t ford[OSN_DES_MAX_FIFOS];
    int nford;
    struct osn__des_fifo fifo[OSN_DES_MAX_FIFOS];
    int nfifo;
    size_t nfifo_events;
    int popped; /* where the last osn_des_pop took its event: a FIFO id, or -1 (a heap) */
};

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

/* Initialises an empty event set with room for `cap` heap events. Returns 0 or OSN_ENOMEM. */
int osn_des_init(struct osn_des *q, size_t cap);

/* Frees the heap array and the FIFO rings. Pending events are simply forgotten (they are the
 * caller's). */
void osn_des_release(struct osn_des *q);

/* Adds a timer class of fixed `duration` >= 0; *id receives its number. OSN_EINVAL when the
 * duration is not finite or there are OSN_DES_MAX_FIFOS classes already. */
int osn_des_timer_class(struct osn_des *q, double duration, int *id);

/* The events of timer class `id` a few places behind its head are prefetched: by default the
 * cache lines from 128 bytes before each event to 64 bytes after its end. An owner that embeds
 * its events in objects of its own names the bytes its handlers read instead, from `before`
 * bytes before the event to `after` bytes after its start (0 <= before, after <= 1024): say
 * the whole object, and no line of a neighbour; 0, 0 asks for nothing (a short timer, whose
 * events are still in cache). Only speed changes. OSN_EINVAL on a bad id or span. */
int osn_des_timer_prefetch(struct osn_des *q, int id, int before, int after);

/* Gives timer class `id` room for `n` pending events at once, so that its ring does not grow
 * (and copy itself) by doubling up to there. Only speed changes: a ring still grows beyond. A
 * large ring is mapped memory, touched only as far as it is used. Returns 0, OSN_EINVAL or
 * OSN_ENOMEM (the ring is then unchanged). */
int osn_des_timer_reserve(struct osn_des *q, int id, size_t n);

/* Heap events due more than `horizon` (s) after they are scheduled go to a second heap, so that
 * a crowd of long timers (call holding times) does not deepen the heap that the many short ones
 * (service completions) sift through. Only speed changes: the order is (time, seq) whatever the
 * horizon. The default is INFINITY (one heap). */
void osn_des_set_horizon(struct osn_des *q, double horizon);

/* Up to this many slots a heap is a sorted array (src/des/heap.c, "small sets"). */
#define OSN__DES_SORTED_MAX 48

int osn__des_at_slow(struct osn_des *q, struct osn_des_ev *ev, double t);

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

/* Schedules idle `ev` at time t >= q->now in the heap. Returns 0, OSN_EINVAL (pending event,
 * t < now or t not a number) or OSN_ENOMEM. Inline for the common case, an event due within the
 * horizon while the near heap is a small sorted array with room: the SIP network schedules a
 * service completion so for most messages. */
static inline int osn_des_at(struct osn_des *q, struct osn_des_ev *ev, double t)
{
    if (q && ev && ev->pos == OSN_DES_IDLE && t >= q->now && !(t - q->now > q->horizon)) {
        struct osn__des_heap *h = &q->heap[0];
        if (h->sorted && h->n < OSN__DES_SORTED_MAX && h->n < h->cap) {
            struct osn__des_slot sl = {t, q->seq++, ev};
            ev->fifo = 0;
            if (osn__des_sorted_insert(h, sl) == h->n - 1) { /* the new least: the cached top */
                q->ht[0] = t;
                q->hs[0] = sl.seq;
            }
            return 0;
        }
    }
    return osn__des_at_slow(q, ev, t);
}

int osn__des_timer_slow(struct osn_des *q, struct osn_des_ev *ev, int id);

/* FIFO id, empty until now, takes its place in q->ford. */
void osn__des_fifo_enter(struct osn_des *q, int id);

/* Ring slots the push prefetches ahead of the tail (three cache lines on). */
#define OSN__DES_PUSH_AHEAD 8

/* Appends idle ev to FIFO id, whose ring has room. Always inline: GCC drops the prefetch of a
 * static helper it keeps out of line (it takes the helper for side-effect free). */
static inline __attribute__((always_inline)) void osn__des_fifo_push(struct osn_des *q,
                                                                     struct osn_des_ev *ev, int id)
{
    struct osn__des_fifo *f = &q->fifo[id];
    double t = q->now + f->d;
    uint64_t seq = q->seq++;
    ev->fifo = id + 1;
    ev->pos = (size_t)f->tail;
    f->ring[f->tail & f->mask] = (struct osn__des_slot){t, seq, ev};
    /* The ring of a long timer is written a slot after another into memory last met one
     * duration ago (cold): ask for the line a few slots on now, so that writing it waits for
     * nothing. */
    __builtin_prefetch(&f->ring[(f->tail + OSN__DES_PUSH_AHEAD) & f->mask], 1, 3);
    if (f->head == f->tail++) {
        q->ft[id] = t;
        q->fs[id] = seq;
        osn__des_fifo_enter(q, id);
    }
    q->nfifo_events++;
}

/* Schedules idle `ev` at now + duration of timer class `id`. O(1) amortised (the class's ring
 * doubles when full). Returns 0, OSN_EINVAL or OSN_ENOMEM. Inline: the SIP network schedules
 * two or three of these per message, and a call costs as much as the work. */
static inline int osn_des_timer(struct osn_des *q, struct osn_des_ev *ev, int id)
{
    if (q && ev && ev->pos == OSN_DES_IDLE && (unsigned)id < (unsigned)q->nfifo) {
        const struct osn__des_fifo *f = &q->fifo[id];
        if (f->tail - f->head <= f->mask) {
            osn__des_fifo_push(q, ev, id);
            return 0;
        }
    }
    return osn__des_timer_slow(q, ev, id);
}

/* The key of pending event ev: its firing time and sequence number (the order it was scheduled
 * in, which breaks ties). false, and nothing written, when ev is idle. */
bool osn_des_key(const struct osn_des *q, const struct osn_des_ev *ev, double *t, uint64_t *seq);

void osn__des_cancel_pending(struct osn_des *q, struct osn_des_ev *ev);

/* Removes a pending event (no-op when idle). O(log n) in the heap, O(1) on a FIFO. Inline, as
 * most cancels in the SIP network find the event idle. */
static inline void osn_des_cancel(struct osn_des *q, struct osn_des_ev *ev)
{
    if (q && ev && ev->pos != OSN_DES_IDLE)
        osn__des_cancel_pending(q, ev);
}

/* Time of the next event, INFINITY when none is pending. */
double osn_des_peek(const struct osn_des *q);

/* Removes and returns the next event in (time, seq) order and sets q->now to its time; NULL
 * when none is pending. The event is idle on return and may be scheduled again. */
struct osn_des_ev *osn_des_pop(struct osn_des *q);

/* The FIFO the last osn_des_pop took its event from, -1 when a heap (or none yet). */
static inline int osn_des_popped_fifo(const struct osn_des *q)
{
    return q->popped;
}

/* The pending event k places behind the head of FIFO id (k = 0: the head), NULL when the FIFO
 * is shorter or that entry was cancelled. It lets an owner prefetch what its events will need
 * a few firings ahead: read only, the event stays where it is. Unchecked, as it runs on every
 * pop: id must be a class of q (osn_des_popped_fifo gives one when it is >= 0). */
static inline const struct osn_des_ev *osn_des_fifo_peek(const struct osn_des *q, int id,
                                                         uint64_t k)
{
    const struct osn__des_fifo *f = &q->fifo[id];
    return k < f->tail - f->head ? f->ring[(f->head + k) & f->mask].ev : NULL;
}

/* ---- service-time laws (struct osn_law, include/osn/model.h) ---- */

/* Ziggurat tables of the exponential law (src/des/zig.c, built at program start). */
struct osn__zig {
    uint64_t ke[256]; /* acceptance thresholds of the 56-bit abscissa */
    double we[256];   /* layer widths / 2^56 */
    double fe[256];   /* exp(-x_i) */
};
extern struct osn__zig osn__zig_exp;
double osn__zig_exp_slow(struct osn_rng *r, uint64_t u);

/*
 * An exponential variate of mean 1 (ziggurat, src/des/zig.c): one xoshiro output, a compare and
 * a multiply on about 99% of calls, about 4x faster than -log(U).
 */
static inline double osn_des_exp1(struct osn_rng *r)
{
    uint64_t u = osn_rng_next(r);
    unsigned i = (unsigned)(u & 255);
    uint64_t j = u >> 8;
    if (j < osn__zig_exp.ke[i])
        return (double)j * osn__zig_exp.we[i];
    return osn__zig_exp_slow(r, u);
}

/* A standard normal variate (Marsaglia's polar method; the second value is dropped). */
double osn_des_normal(struct osn_rng *r);

/* Checks a law's parameters. Returns 0 or OSN_EINVAL with a sentence in msg (may be NULL). */
int osn_des_law_check(const struct osn_law *law, char *msg, size_t msgsize);

/* One draw of a checked law. */
double osn_des_law_draw(const struct osn_law *law, struct osn_rng *r);

/* The law's mean and variance (for tests and for Little's-law checks). */
double osn_des_law_mean(const struct osn_law *law);
double osn_des_law_var(const struct osn_law *law);

/* ---- arrival processes ---- */

/* The arrival stream of a model: Poisson (one flow or two), MMPP-K, or a trace. */
struct osn_des_arr {
    enum osn_arrival_kind kind;
    double t;                 /* time of the last arrival drawn */
    double rate;              /* Poisson: total offered rate */
    double p1;                /* Poisson: probability an arrival is of flow 1 (index 0) */
    int flows;                /* 1 or 2 */
    int phase;                /* MMPP: the current phase (the phase of the last arrival) */
    int K;                    /* MMPP phases */
    double lam[OSN_MMPP_MAX]; /* MMPP arrival rate of each phase */
    double out[OSN_MMPP_MAX]; /* MMPP total phase-switch rate */
    double cum[OSN_MMPP_MAX][OSN_MMPP_MAX]; /* MMPP cumulative switch probabilities */
    const double *trace;                    /* trace instants, borrowed from the model */
    size_t ntrace, next;
};

/* Sets up the arrival stream of `m` (borrowing m's trace). Returns 0 or OSN_EINVAL with a
 * sentence in msg (may be NULL). */
int osn_des_arr_init(struct osn_des_arr *a, const struct osn_model *m, char *msg, size_t msgsize);

/* Restarts the stream at time 0 in phase `phase` (MMPP) or at the first trace instant. */
void osn_des_arr_reset(struct osn_des_arr *a, int phase);

/* Draws the next arrival: returns its absolute time (INFINITY when a trace is exhausted or an
 * MMPP phase neither arrives nor switches) and its flow (0 or 1) in *flow; a->phase is the phase
 * the arrival came in. */
double osn_des_arr_next(struct osn_des_arr *a, struct osn_rng *r, int *flow);

/* The long-run arrival rate: Poisson rate, MMPP sum of pi_k lam_k (pi the stationary phase
 * vector), trace count / last instant. */
double osn_des_arr_mean_rate(const struct osn_des_arr *a);

#endif

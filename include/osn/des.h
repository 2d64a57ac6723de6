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
 * is the least of the heap top and the FIFO heads. The order is (time, key): osn_des_at and
 * osn_des_timer take the key from one counter of the set, so simultaneous events fire in the
 * order they were scheduled and runs are reproducible; osn_des_at_key and osn_des_timer_key take
 * the caller's, so that simultaneous events fire in an order the caller defines (the SIP network
 * keys an event by the element that scheduled it and that element's own count, OSN_DES_KEY, so
 * the order no longer depends on the order elements scheduled in).
 *
 * Laws and arrivals use the vocabulary of include/osn/law.h (struct osn_law, struct osn_arrivals),
 * which the solver shares, so the simulator and the solver read the same scenarios; des never
 * includes the solver's header.
 */
#ifndef OSN_DES_H
#define OSN_DES_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "osn/law.h"
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

/* The event set. Its layout is in osn/des_inline.h: callers embed it by value and read only
 * q->now (the time of the last event popped, starting at 0). */
struct osn_des;

/* An idle event of the caller's `type`. */
static inline void osn_des_ev_init(struct osn_des_ev *ev, int type);

/* Whether ev is scheduled (in the heap or on a FIFO). */
static inline bool osn_des_pending(const struct osn_des_ev *ev);

/* Pending events, heap and FIFOs together. */
static inline size_t osn_des_count(const struct osn_des *q);

/* Initialises an empty event set with room for `cap` heap events. Returns 0 or OSN_ENOMEM. */
int osn_des_init(struct osn_des *q, size_t cap);

/* Frees the heap array and the FIFO rings. Pending events are simply forgotten (they are the
 * caller's). */
void osn_des_release(struct osn_des *q);

/* Adds a timer class of fixed `duration` >= 0; *id receives its number. OSN_EINVAL when the
 * duration is not finite or there are OSN_DES_MAX_FIFOS classes already. */
int osn_des_timer_class(struct osn_des *q, double duration, int *id);

/* Schedules idle `ev` at time t >= q->now in the heap. Returns 0, OSN_EINVAL (pending event,
 * t < now or t not a number) or OSN_ENOMEM. Inline for the common case, an event due within the
 * horizon while the near heap is a small sorted array with room: the SIP network schedules a
 * service completion so for most messages. */
static inline int osn_des_at(struct osn_des *q, struct osn_des_ev *ev, double t);

/* Schedules idle `ev` at now + duration of timer class `id`. O(1) amortised (the class's ring
 * doubles when full). Returns 0, OSN_EINVAL or OSN_ENOMEM. Inline: the SIP network schedules
 * two or three of these per message, and a call costs as much as the work. */
static inline int osn_des_timer(struct osn_des *q, struct osn_des_ev *ev, int id);

/* The key of the `count`-th event scheduled by `sender` (below 2^16; count below 2^48): at equal
 * times, a sender's events come in its own order and, across senders, by sender. */
#define OSN_DES_KEY(sender, count) (((uint64_t)(sender) << 48) | (uint64_t)(count))

/* osn_des_at and osn_des_timer with the caller's key for ties: among events due at one time,
 * the least key fires first, whatever order they were scheduled in. A caller that keys its
 * events so should key all of them (the set's own counter starts at 0, as sender 0's keys do).
 * O(1) on a FIFO when the key is above those of the FIFO's last entries of equal time, else
 * the entries of equal time with greater keys move a place each. */
static inline int osn_des_at_key(struct osn_des *q, struct osn_des_ev *ev, double t, uint64_t key);
static inline int osn_des_timer_key(struct osn_des *q, struct osn_des_ev *ev, int id, uint64_t key);

/* Removes a pending event (no-op when idle). O(log n) in the heap, O(1) on a FIFO. Inline, as
 * most cancels in the SIP network find the event idle. */
static inline void osn_des_cancel(struct osn_des *q, struct osn_des_ev *ev);

/* The key of pending event ev: its firing time and the key that breaks ties (the set's count
 * at its scheduling, or the caller's: osn_des_at_key). false, and nothing written, when ev is idle.
 */
bool osn_des_key(const struct osn_des *q, const struct osn_des_ev *ev, double *t, uint64_t *seq);

/* Time of the next event, INFINITY when none is pending. */
double osn_des_peek(const struct osn_des *q);

/* Removes and returns the next event in (time, key) order and sets q->now to its time; NULL
 * when none is pending. The event is idle on return and may be scheduled again. */
struct osn_des_ev *osn_des_pop(struct osn_des *q);

/* The speed-only knobs (prefetch, ring reservation, the far-heap horizon) and the FIFO
 * read-ahead are in osn/des_tuning.h. */

/* The layout and the inline bodies of the calls above. */
#include "osn/des_inline.h"

/* ---- service-time laws (struct osn_law, include/osn/law.h) ---- */

/*
 * An exponential variate of mean 1 (ziggurat, src/des/zig.c): one xoshiro output, a compare and
 * a multiply on about 99% of calls, about 4x faster than -log(U).
 */
static inline double osn_des_exp1(struct osn_rng *r);

/* Checks a law's parameters. Returns 0 or OSN_EINVAL with a sentence in msg (may be NULL). */
int osn_des_law_check(const struct osn_law *law, char *msg, size_t msgsize);

/* One draw of a checked law. */
double osn_des_law_draw(const struct osn_law *law, struct osn_rng *r);

/* The law's mean and variance (for tests and for Little's-law checks). */
double osn_des_law_mean(const struct osn_law *law);
double osn_des_law_var(const struct osn_law *law);

/*
 * The end of `work` seconds of service begun at t on a server whose speed is f (in (0, 1]) during
 * [a, b) and 1 elsewhere: the tau at which the integral of the speed from t reaches work
 * (work-conserving: a message begun before a slowdown finishes its remaining work at the lower
 * speed). b may be INFINITY; a >= b means no slowdown (t + work).
 */
double osn_des_slowed_end(double t, double work, double a, double b, double f);

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
    const double *trace;                    /* trace instants, borrowed from the spec */
    size_t ntrace, next;
};

/* Sets up the arrival stream described by `s` (borrowing s's trace). Returns 0 or OSN_EINVAL
 * with a sentence in msg (may be NULL). */
int osn_des_arr_setup(struct osn_des_arr *a, const struct osn_arrivals *s, char *msg,
                      size_t msgsize);

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

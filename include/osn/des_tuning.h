/*
 * Tuning of the event set, for the network simulator's hot loop (src/sim/net*.c): none of these
 * calls changes which event fires when, only how fast. They assume what include/osn/des.h says
 * of the layout: an event is embedded in its owner's object, a FIFO is a ring of 24-byte
 * {time, seq, event} slots read in order, and the owner knows which bytes around its events its
 * handlers read (the span it asks osn_des_timer_prefetch() to bring into cache). Code that only
 * schedules and pops events needs osn/des.h alone.
 */
#ifndef OSN_DES_TUNING_H
#define OSN_DES_TUNING_H

#include <stddef.h>
#include <stdint.h>

#include "osn/des.h"

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

#endif

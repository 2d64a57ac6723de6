/*
 * The event set of include/osn/des.h: an array binary heap ordered by (time, seq) with a slot
 * back-pointer in each event, plus one FIFO per fixed timer duration.
 *
 * The heap moves 24-byte slots {t, seq, ev} so that sifting compares keys without touching the
 * events; only the final slot of a moving event is written back into ev->pos. Sifts use a hole
 * (one write per level instead of a swap). Cancel moves the last slot into the hole and sifts it
 * up or down, O(log n). A FIFO holds events of one timer class in schedule order, which is also
 * (time, seq) order because q->now never decreases.
 */
#include "osn/des.h"

#include <stdlib.h>

#include "osn/err.h"

static inline bool slot_less(const struct osn__des_slot *a, const struct osn__des_slot *b)
{
    return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static inline bool ev_less(const struct osn_des_ev *a, const struct osn_des_ev *b)
{
    return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

int osn_des_init(struct osn_des *q, size_t cap)
{
    if (!q)
        return OSN_EINVAL;
    *q = (struct osn_des){0};
    if (cap < 16)
        cap = 16;
    q->heap = malloc(cap * sizeof *q->heap);
    if (!q->heap)
        return OSN_ENOMEM;
    q->cap = cap;
    return 0;
}

void osn_des_release(struct osn_des *q)
{
    if (!q)
        return;
    free(q->heap);
    *q = (struct osn_des){0};
}

int osn_des_timer_class(struct osn_des *q, double duration, int *id)
{
    if (!q || !id || !isfinite(duration) || duration < 0 || q->nfifo >= OSN_DES_MAX_FIFOS)
        return OSN_EINVAL;
    q->fifo[q->nfifo] = (struct osn__des_fifo){duration, NULL, NULL, 0};
    *id = q->nfifo++;
    return 0;
}

/* Moves slot s up from hole i to its place. */
static void sift_up(struct osn__des_slot *h, size_t i, struct osn__des_slot s)
{
    while (i > 0) {
        size_t p = (i - 1) / 2;
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
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && slot_less(&h[c + 1], &h[c]))
            c++;
        if (!slot_less(&h[c], &s))
            break;
        h[i] = h[c];
        h[i].ev->pos = i;
        i = c;
    }
    h[i] = s;
    s.ev->pos = i;
}

int osn_des_at(struct osn_des *q, struct osn_des_ev *ev, double t)
{
    if (!q || !ev || osn_des_pending(ev) || !(t >= q->now))
        return OSN_EINVAL;
    if (q->n == q->cap) {
        size_t cap = q->cap * 2;
        struct osn__des_slot *h = realloc(q->heap, cap * sizeof *h);
        if (!h)
            return OSN_ENOMEM;
        q->heap = h;
        q->cap = cap;
    }
    ev->t = t;
    ev->seq = q->seq++;
    sift_up(q->heap, q->n++, (struct osn__des_slot){t, ev->seq, ev});
    return 0;
}

int osn_des_timer(struct osn_des *q, struct osn_des_ev *ev, int id)
{
    if (!q || !ev || osn_des_pending(ev) || id < 0 || id >= q->nfifo)
        return OSN_EINVAL;
    struct osn__des_fifo *f = &q->fifo[id];
    ev->t = q->now + f->d;
    ev->seq = q->seq++;
    ev->fifo = id + 1;
    ev->next = NULL;
    ev->prev = f->tail;
    if (f->tail)
        f->tail->next = ev;
    else
        f->head = ev;
    f->tail = ev;
    f->n++;
    q->nfifo_events++;
    return 0;
}

static void fifo_unlink(struct osn_des *q, struct osn_des_ev *ev)
{
    struct osn__des_fifo *f = &q->fifo[ev->fifo - 1];
    if (ev->prev)
        ev->prev->next = ev->next;
    else
        f->head = ev->next;
    if (ev->next)
        ev->next->prev = ev->prev;
    else
        f->tail = ev->prev;
    ev->prev = ev->next = NULL;
    ev->fifo = 0;
    f->n--;
    q->nfifo_events--;
}

static void heap_remove(struct osn_des *q, struct osn_des_ev *ev)
{
    size_t i = ev->pos;
    struct osn__des_slot last = q->heap[--q->n];

    ev->pos = OSN_DES_IDLE;
    if (i == q->n)
        return;
    if (i > 0 && slot_less(&last, &q->heap[(i - 1) / 2]))
        sift_up(q->heap, i, last);
    else
        sift_down(q->heap, q->n, i, last);
}

void osn_des_cancel(struct osn_des *q, struct osn_des_ev *ev)
{
    if (!q || !ev)
        return;
    if (ev->fifo)
        fifo_unlink(q, ev);
    else if (ev->pos != OSN_DES_IDLE)
        heap_remove(q, ev);
}

/* The next event without removing it, NULL when empty. */
static struct osn_des_ev *next_event(const struct osn_des *q)
{
    struct osn_des_ev *best = q->n ? q->heap[0].ev : NULL;
    for (int i = 0; i < q->nfifo; i++) {
        struct osn_des_ev *h = q->fifo[i].head;
        if (h && (!best || ev_less(h, best)))
            best = h;
    }
    return best;
}

double osn_des_peek(const struct osn_des *q)
{
    const struct osn_des_ev *ev = next_event(q);
    return ev ? ev->t : INFINITY;
}

struct osn_des_ev *osn_des_pop(struct osn_des *q)
{
    struct osn_des_ev *ev = next_event(q);
    if (!ev)
        return NULL;
    if (ev->fifo) {
        fifo_unlink(q, ev);
    } else {
        ev->pos = OSN_DES_IDLE;
        if (--q->n > 0)
            sift_down(q->heap, q->n, 0, q->heap[q->n]);
    }
    q->now = ev->t;
    return ev;
}

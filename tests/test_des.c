/*
 * The event engine: 10^5 random schedule / cancel / pop steps on the two heaps and four timer
 * FIFOs against a plain array searched for its (time, seq) minimum, and keyed steps (the
 * caller's tie-breaking keys, scheduled out of key order) likewise; service laws against their
 * means, variances and (exponential) distribution function; arrival processes against their
 * rates.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <stdlib.h>

#include "osn/des.h"
#include "osn/des_tuning.h"
#include "osn/err.h"
#include "testutil.h"

#define NEV 2000

/* The reference: pending event ids with their times and schedule numbers. */
struct ref {
    int id[NEV];
    double t[NEV];
    uint64_t seq[NEV];
    int n;
};

static int ref_min(const struct ref *r)
{
    int best = 0;
    for (int i = 1; i < r->n; i++)
        if (r->t[i] < r->t[best] || (r->t[i] == r->t[best] && r->seq[i] < r->seq[best]))
            best = i;
    return best;
}

static void ref_remove(struct ref *r, int i)
{
    r->n--;
    r->id[i] = r->id[r->n];
    r->t[i] = r->t[r->n];
    r->seq[i] = r->seq[r->n];
}

/* The steps, with heap events due beyond `horizon` in the second heap. Phases of 4000 steps
 * alternately fill the set (to hundreds of events) and drain it, so that each heap turns from
 * a sorted array into a heap and back, several times. Four FIFO classes, two of them due at
 * whole-number offsets as half the heap events are (ties), so that the order of the FIFOs'
 * heads (q->ford) holds several, and FIFOs empty and come back as the set drains and fills. */
static void random_steps(double horizon)
{
    static struct osn_des_ev ev[NEV];
    static struct ref ref;
    struct osn_des q;
    struct osn_rng r;
    static const double dur[4] = {2.0, 0.5, 1.0, 0.75};
    int fifo[4];
    uint64_t seq = 0;
    int turned[2] = {0, 0}; /* near heap: into a heap, back into a sorted array */
    bool was_sorted = true;

    ref.n = 0;
    assert_int_equal(osn_des_init(&q, 4), 0); /* small: the heap must grow */
    osn_des_set_horizon(&q, horizon);
    for (int k = 0; k < 4; k++)
        assert_int_equal(osn_des_timer_class(&q, dur[k], &fifo[k]), 0);
    for (int i = 0; i < NEV; i++)
        osn_des_ev_init(&ev[i], i);
    osn_rng_seed(&r, 2024);
    for (int step = 0; step < 100000; step++) {
        double u = osn_rng_u01(&r), pin = (step / 4000) % 2 ? 0.25 : 0.70;
        int i = (int)(osn_rng_next(&r) % NEV);
        if (q.heap[0].sorted != was_sorted)
            turned[was_sorted ? 0 : 1]++;
        was_sorted = q.heap[0].sorted;
        if (u < pin && !osn_des_pending(&ev[i])) {
            /* Whole-number offsets half of the time, so that many events tie. */
            double dt =
                    osn_rng_u01(&r) < 0.5 ? (double)(osn_rng_next(&r) % 4) : 3 * osn_rng_u01(&r);
            int how = (int)(osn_rng_next(&r) % 6); /* 4, 5: a heap event */
            if (how >= 4)
                assert_int_equal(osn_des_at(&q, &ev[i], q.now + dt), 0);
            else
                assert_int_equal(osn_des_timer(&q, &ev[i], fifo[how]), 0);
            double t;
            uint64_t sq;
            assert_true(osn_des_key(&q, &ev[i], &t, &sq));
            assert_true(sq == seq);
            assert_true(how >= 4 ? t == q.now + dt : t == q.now + dur[how]);
            ref.id[ref.n] = i;
            ref.t[ref.n] = t;
            ref.seq[ref.n++] = seq++;
            assert_int_equal(osn_des_at(&q, &ev[i], q.now + 1), OSN_EINVAL); /* pending */
        } else if (u < pin + 0.15) {
            if (!osn_des_pending(&ev[i]))
                continue;
            osn_des_cancel(&q, &ev[i]);
            assert_false(osn_des_pending(&ev[i]));
            assert_false(osn_des_key(&q, &ev[i], NULL, NULL));
            for (int k = 0; k < ref.n; k++)
                if (ref.id[k] == i) {
                    ref_remove(&ref, k);
                    break;
                }
        } else {
            struct osn_des_ev *e = osn_des_pop(&q);
            if (ref.n == 0) {
                assert_null(e);
                continue;
            }
            int k = ref_min(&ref);
            assert_non_null(e);
            assert_int_equal(e->type, ref.id[k]);
            assert_true(q.now == ref.t[k]);
            assert_false(osn_des_pending(e));
            ref_remove(&ref, k);
        }
        assert_int_equal((int)osn_des_count(&q), ref.n);
        assert_true(osn_des_peek(&q) == (ref.n ? ref.t[ref_min(&ref)] : INFINITY));
    }
    assert_int_equal(osn_des_at(&q, &ev[0], q.now - 1), OSN_EINVAL);
    if (horizon > 0) { /* with horizon 0 the near heap holds only same-instant events */
        assert_true(turned[0] >= 3);
        assert_true(turned[1] >= 3);
    }
    osn_des_release(&q);
}

static void test_random_steps_vs_array(void **state)
{
    (void)state;
    random_steps(INFINITY); /* one heap */
    random_steps(1.0);      /* offsets of 0..3: both heaps busy */
    random_steps(0.0);      /* all but same-instant events in the far heap */
}

/* A reserve made while events are pending keeps them and their order; a reserved ring takes that
 * many without growing; bad arguments are refused. */
static void test_timer_reserve(void **state)
{
    (void)state;
    enum { N = 5000 };
    static struct osn_des_ev ev[N];
    struct osn_des q;
    int f;
    assert_int_equal(osn_des_init(&q, 0), 0);
    assert_int_equal(osn_des_timer_class(&q, 1.0, &f), 0);
    for (int i = 0; i < N; i++)
        osn_des_ev_init(&ev[i], i);
    for (int i = 0; i < 100; i++) /* a few pops and pushes, so that the ring has wrapped */
        assert_int_equal(osn_des_timer(&q, &ev[i], f), 0);
    for (int i = 0; i < 60; i++)
        assert_int_equal(osn_des_pop(&q)->type, i);
    assert_int_equal(osn_des_timer_reserve(&q, f, N), 0);
    size_t mask = q.fifo[f].mask;
    assert_true(mask + 1 >= N);
    for (int i = 100; i < N; i++) {
        q.now += 1e-6; /* later entries, later times */
        assert_int_equal(osn_des_timer(&q, &ev[i], f), 0);
    }
    assert_true(q.fifo[f].mask == mask);                   /* no growth */
    assert_int_equal(osn_des_timer_reserve(&q, f, 10), 0); /* smaller: nothing to do */
    assert_true(q.fifo[f].mask == mask);
    for (int i = 60; i < N; i++)
        assert_int_equal(osn_des_pop(&q)->type, i);
    assert_null(osn_des_pop(&q));
    assert_int_equal(osn_des_timer_reserve(&q, f + 1, 10), OSN_EINVAL);
    assert_int_equal(osn_des_timer_reserve(&q, -1, 10), OSN_EINVAL);
    assert_int_equal(osn_des_timer_reserve(NULL, f, 10), OSN_EINVAL);
    osn_des_release(&q);
}

/* The FIFOs' order after a FIFO empties by the cancel of its head (not by a pop): the FIFO
 * behind it moves back past the last one and stays in the order. Three classes, one event each
 * (due 1, 2, 2.5); the first is cancelled; at 0.75 a second event goes on the 2 s class (due
 * 2.75, after the 2.5 s class's head), so the pop at 2 moves that class back to the end. */
static void test_fifo_order_after_head_cancel(void **state)
{
    (void)state;
    struct osn_des q;
    struct osn_des_ev ev[5];
    int f[3];
    static const double dur[3] = {1.0, 2.0, 2.5};

    assert_int_equal(osn_des_init(&q, 16), 0);
    for (int k = 0; k < 3; k++)
        assert_int_equal(osn_des_timer_class(&q, dur[k], &f[k]), 0);
    for (int i = 0; i < 5; i++)
        osn_des_ev_init(&ev[i], i);
    for (int k = 0; k < 3; k++)
        assert_int_equal(osn_des_timer(&q, &ev[k], f[k]), 0);
    osn_des_cancel(&q, &ev[0]); /* the 1 s class's head, and its only event */
    assert_int_equal(osn_des_at(&q, &ev[3], 0.75), 0);
    assert_ptr_equal(osn_des_pop(&q), &ev[3]);
    assert_int_equal(osn_des_timer(&q, &ev[4], f[1]), 0); /* due 2.75 */
    static const int want[] = {1, 2, 4};
    static const double at[] = {2.0, 2.5, 2.75};
    for (int k = 0; k < 3; k++) {
        struct osn_des_ev *e = osn_des_pop(&q);
        assert_non_null(e);
        assert_int_equal(e->type, want[k]);
        assert_true(q.now == at[k]);
    }
    assert_null(osn_des_pop(&q));
    assert_int_equal((int)osn_des_count(&q), 0);
    osn_des_release(&q);
}

/* The read-ahead of a FIFO (osn_des_fifo_peek, osn_des_popped_fifo) names the events that will
 * fire next on it, skips none and moves none; a prefetch span changes no order. */
static void test_fifo_read_ahead(void **state)
{
    (void)state;
    struct osn_des q;
    struct osn_des_ev ev[8], h;
    int f, g;
    assert_int_equal(osn_des_init(&q, 0), 0);
    assert_int_equal(osn_des_timer_class(&q, 1.0, &f), 0);
    assert_int_equal(osn_des_timer_class(&q, 0.25, &g), 0);
    assert_int_equal(osn_des_timer_prefetch(&q, f, 0, 0), 0); /* nothing asked for */
    assert_int_equal(osn_des_timer_prefetch(&q, g, 1024, 1024), 0);
    assert_int_equal(osn_des_timer_prefetch(&q, g + 1, 0, 0), OSN_EINVAL);
    assert_int_equal(osn_des_timer_prefetch(&q, f, -1, 0), OSN_EINVAL);
    assert_int_equal(osn_des_timer_prefetch(&q, f, 0, 1025), OSN_EINVAL);
    assert_int_equal(osn_des_timer_prefetch(NULL, f, 0, 0), OSN_EINVAL);
    assert_int_equal(osn_des_popped_fifo(&q), -1);
    for (int i = 0; i < 8; i++) {
        osn_des_ev_init(&ev[i], i);
        assert_int_equal(osn_des_timer(&q, &ev[i], f), 0);
    }
    osn_des_ev_init(&h, 100);
    assert_int_equal(osn_des_at(&q, &h, 0.5), 0);
    osn_des_cancel(&q, &ev[3]);
    for (uint64_t k = 0; k < 8; k++) /* the cancelled entry keeps its place, as NULL */
        assert_ptr_equal(osn_des_fifo_peek(&q, f, k), k == 3 ? NULL : &ev[k]);
    assert_null(osn_des_fifo_peek(&q, f, 8));
    assert_null(osn_des_fifo_peek(&q, g, 0));
    assert_ptr_equal(osn_des_pop(&q), &h);
    assert_int_equal(osn_des_popped_fifo(&q), -1);
    assert_ptr_equal(osn_des_pop(&q), &ev[0]);
    assert_int_equal(osn_des_popped_fifo(&q), f);
    assert_ptr_equal(osn_des_fifo_peek(&q, f, 0), &ev[1]);
    assert_ptr_equal(osn_des_fifo_peek(&q, f, 5), &ev[6]);
    assert_int_equal(osn_des_timer(&q, &ev[0], g), 0); /* due 1.25, after the rest of f */
    for (int i = 1; i < 8; i++) {
        if (i == 3)
            continue;
        assert_ptr_equal(osn_des_pop(&q), &ev[i]);
        assert_int_equal(osn_des_popped_fifo(&q), f);
    }
    assert_ptr_equal(osn_des_pop(&q), &ev[0]);
    assert_int_equal(osn_des_popped_fifo(&q), g);
    assert_true(q.now == 1.25);
    assert_null(osn_des_pop(&q));
    osn_des_release(&q);
}

/* Events at one instant fire in the order they were scheduled, heap and FIFO mixed. */
static void test_ties_fire_in_schedule_order(void **state)
{
    (void)state;
    struct osn_des q;
    struct osn_des_ev ev[6];
    int f;
    assert_int_equal(osn_des_init(&q, 0), 0);
    assert_int_equal(osn_des_timer_class(&q, 1.0, &f), 0);
    for (int i = 0; i < 6; i++)
        osn_des_ev_init(&ev[i], i);
    for (int i = 5; i >= 0; i--) /* reverse ids, so id order is not schedule order */
        assert_int_equal(i % 2 ? osn_des_at(&q, &ev[i], 1.0) : osn_des_timer(&q, &ev[i], f), 0);
    for (int i = 5; i >= 0; i--)
        assert_int_equal(osn_des_pop(&q)->type, i);
    assert_null(osn_des_pop(&q));
    osn_des_release(&q);
}

/* Events at one instant keyed by their senders (osn_des_at_key, osn_des_timer_key) fire by key,
 * not in the order they were scheduled: sender 2 schedules first, sender 1 after, and sender
 * 1's events fire first, each sender's in its own order, heap and FIFO mixed. A FIFO takes a
 * lesser key behind entries of its time (past a cancelled one), and before its head, after which
 * it must lead a FIFO whose head is due at the same instant. */
static void test_ties_fire_by_sender_key(void **state)
{
    (void)state;
    struct osn_des q;
    struct osn_des_ev ev[9];
    int f, g;
    assert_int_equal(osn_des_init(&q, 0), 0);
    assert_int_equal(osn_des_timer_class(&q, 1.0, &f), 0);
    assert_int_equal(osn_des_timer_class(&q, 1.0, &g), 0); /* same duration: tied heads */
    for (int i = 0; i < 9; i++)
        osn_des_ev_init(&ev[i], i);
    /* sender 2: counts 0..3, due 1.0 (two on FIFO f, one on the heap, one on FIFO g) */
    assert_int_equal(osn_des_timer_key(&q, &ev[4], f, OSN_DES_KEY(2, 0)), 0);
    assert_int_equal(osn_des_at_key(&q, &ev[5], 1.0, OSN_DES_KEY(2, 1)), 0);
    assert_int_equal(osn_des_timer_key(&q, &ev[8], f, OSN_DES_KEY(2, 2)), 0); /* cancelled */
    assert_int_equal(osn_des_timer_key(&q, &ev[6], f, OSN_DES_KEY(2, 3)), 0);
    assert_int_equal(osn_des_timer_key(&q, &ev[7], g, OSN_DES_KEY(2, 4)), 0);
    osn_des_cancel(&q, &ev[8]);
    /* sender 1, after: counts 0..3, all before every event of sender 2 */
    assert_int_equal(osn_des_timer_key(&q, &ev[0], f, OSN_DES_KEY(1, 0)), 0); /* f's new head */
    assert_int_equal(osn_des_at_key(&q, &ev[1], 1.0, OSN_DES_KEY(1, 1)), 0);
    assert_int_equal(osn_des_timer_key(&q, &ev[2], g, OSN_DES_KEY(1, 2)), 0); /* g's new head */
    assert_int_equal(osn_des_timer_key(&q, &ev[3], f, OSN_DES_KEY(1, 3)), 0);
    uint64_t key;
    double t;
    assert_true(osn_des_key(&q, &ev[3], &t, &key));
    assert_true(t == 1.0 && key == OSN_DES_KEY(1, 3));
    assert_true(osn_des_key(&q, &ev[6], &t, &key)); /* moved on, its key with it */
    assert_true(t == 1.0 && key == OSN_DES_KEY(2, 3));
    assert_int_equal((int)osn_des_count(&q), 8);
    for (int i = 0; i < 8; i++) {
        struct osn_des_ev *e = osn_des_pop(&q);
        assert_non_null(e);
        assert_int_equal(e->type, i);
        assert_true(q.now == 1.0);
    }
    assert_null(osn_des_pop(&q));
    /* A FIFO emptied by a cancel, then a lesser key of the cancelled one's time: it goes in as
     * the FIFO's only event, and leads g, whose head is due at the same time with a greater key
     * (pushed first). */
    assert_int_equal(osn_des_timer_key(&q, &ev[1], g, OSN_DES_KEY(3, 0)), 0);
    assert_int_equal(osn_des_timer_key(&q, &ev[8], f, OSN_DES_KEY(2, 5)), 0);
    osn_des_cancel(&q, &ev[8]);
    assert_int_equal(osn_des_timer_key(&q, &ev[0], f, OSN_DES_KEY(1, 4)), 0);
    assert_ptr_equal(osn_des_pop(&q), &ev[0]);
    assert_ptr_equal(osn_des_pop(&q), &ev[1]);
    assert_true(q.now == 2.0);
    assert_null(osn_des_pop(&q));
    osn_des_release(&q);
}

/* 2 x 10^4 random keyed steps: events of four senders, each keyed by its sender's own count,
 * due at few distinct times (whole quarters, FIFO durations of 0.25 and 0.5) so that most pops
 * are of ties, against a plain array searched for its (time, key) minimum. Senders are drawn at
 * random, so keys of one instant reach the FIFOs and the heap out of order. */
static void test_keyed_steps_vs_array(void **state)
{
    (void)state;
    static struct osn_des_ev ev[NEV];
    static struct ref ref;
    static const double dur[2] = {0.25, 0.5};
    struct osn_des q;
    struct osn_rng r;
    int fifo[2];
    uint64_t count[4] = {0};
    long moved_back = 0;

    ref.n = 0;
    assert_int_equal(osn_des_init(&q, 4), 0);
    for (int k = 0; k < 2; k++)
        assert_int_equal(osn_des_timer_class(&q, dur[k], &fifo[k]), 0);
    for (int i = 0; i < NEV; i++)
        osn_des_ev_init(&ev[i], i);
    osn_rng_seed(&r, 7);
    for (int step = 0; step < 20000; step++) {
        double u = osn_rng_u01(&r);
        int i = (int)(osn_rng_u01(&r) * NEV);
        if (u < 0.55 && !osn_des_pending(&ev[i])) {
            int sender = (int)(osn_rng_u01(&r) * 4);
            uint64_t key = OSN_DES_KEY(sender, count[sender]++);
            int how = (int)(osn_rng_u01(&r) * 3);
            double t;
            if (how == 2) {
                t = q.now + 0.25 * (double)(int)(osn_rng_u01(&r) * 4);
                assert_int_equal(osn_des_at_key(&q, &ev[i], t, key), 0);
            } else {
                t = q.now + dur[how];
                assert_int_equal(osn_des_timer_key(&q, &ev[i], fifo[how], key), 0);
            }
            for (int k = 0; k < ref.n; k++)
                moved_back += ref.t[k] == t && ref.seq[k] > key;
            ref.id[ref.n] = i;
            ref.t[ref.n] = t;
            ref.seq[ref.n++] = key;
        } else if (u < 0.65 && osn_des_pending(&ev[i])) {
            osn_des_cancel(&q, &ev[i]);
            for (int k = 0; k < ref.n; k++)
                if (ref.id[k] == i) {
                    ref_remove(&ref, k);
                    break;
                }
        } else if (ref.n > 0) {
            int k = ref_min(&ref);
            struct osn_des_ev *e = osn_des_pop(&q);
            assert_non_null(e);
            assert_int_equal(e->type, ref.id[k]);
            assert_true(q.now == ref.t[k]);
            ref_remove(&ref, k);
        }
        assert_int_equal((int)osn_des_count(&q), ref.n);
    }
    while (ref.n > 0) {
        int k = ref_min(&ref);
        assert_int_equal(osn_des_pop(&q)->type, ref.id[k]);
        ref_remove(&ref, k);
    }
    assert_null(osn_des_pop(&q));
    assert_true(moved_back > 1000); /* the steps did schedule ties out of key order */
    osn_des_release(&q);
}

static void check_law(const struct osn_law *law, double mean, double var, uint64_t seed)
{
    struct osn_rng r;
    const int n = 400000;
    double s = 0, s2 = 0;
    assert_int_equal(osn_des_law_check(law, NULL, 0), 0);
    assert_true(rel(osn_des_law_mean(law), mean) < 1e-12);
    assert_true(fabs(osn_des_law_var(law) - var) < 1e-12 * (1 + var));
    osn_rng_seed(&r, seed);
    for (int i = 0; i < n; i++) {
        double x = osn_des_law_draw(law, &r);
        assert_true(x >= 0);
        s += x;
        s2 += x * x;
    }
    double m = s / n, v = s2 / n - m * m;
    assert_true(fabs(m - mean) <= 5 * sqrt(var / n) + 1e-12);
    assert_true(fabs(v - var) <= 0.05 * var + 1e-12);
}

static void test_laws(void **state)
{
    (void)state;
    struct osn_law l = {0};
    l.kind = OSN_LAW_EXP, l.rate = 2;
    check_law(&l, 0.5, 0.25, 1);
    l.kind = OSN_LAW_DET;
    check_law(&l, 0.5, 0, 2);
    l.kind = OSN_LAW_ERLANG, l.k = 11; /* more than one group of 8 phases */
    check_law(&l, 0.5, 0.25 / 11, 3);
    l.kind = OSN_LAW_UNIFORM, l.cv = 0.5;
    check_law(&l, 0.5, 0.25 * 0.25, 4);
    l.kind = OSN_LAW_LOGNORMAL, l.cv = 0.8;
    check_law(&l, 0.5, 0.25 * 0.64, 5);
    struct osn_law h = {0};
    h.kind = OSN_LAW_HYPEREXP, h.nbranch = 2;
    h.probs[0] = 0.25, h.rates[0] = 0.5, h.probs[1] = 0.75, h.rates[1] = 3;
    /* mean 0.25/0.5 + 0.75/3 = 0.75; E[X^2] = 2(0.25/0.25 + 0.75/9) = 2.1666... */
    check_law(&h, 0.75, 2 * (1 + 0.75 / 9) - 0.5625, 6);
    double samples[4] = {1, 2, 3, 6};
    struct osn_law e = {0};
    e.kind = OSN_LAW_EMPIRICAL, e.samples = samples, e.nsamples = 4;
    check_law(&e, 3, (4 + 1 + 0 + 9) / 4.0, 7);

    struct osn_law badl = {0};
    badl.kind = OSN_LAW_UNIFORM, badl.rate = 1, badl.cv = 0.7;
    assert_int_equal(osn_des_law_check(&badl, NULL, 0), OSN_EINVAL);
    badl.kind = OSN_LAW_EXP, badl.rate = 0;
    assert_int_equal(osn_des_law_check(&badl, NULL, 0), OSN_EINVAL);
    h.probs[1] = 0.7;
    assert_int_equal(osn_des_law_check(&h, NULL, 0), OSN_EINVAL);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The ziggurat exponential: Kolmogorov-Smirnov against 1 - e^-x, and the tail beyond r. */
static void test_exponential_distribution(void **state)
{
    (void)state;
    const int n = 1000000;
    double *x = malloc(n * sizeof *x);
    struct osn_rng r;
    assert_non_null(x);
    osn_rng_seed(&r, 77);
    long tail = 0;
    for (int i = 0; i < n; i++) {
        x[i] = osn_des_exp1(&r);
        tail += x[i] > 8;
    }
    qsort(x, n, sizeof *x, cmp_double);
    double d = 0;
    for (int i = 0; i < n; i++) {
        double f = -expm1(-x[i]);
        d = fmax(d, fmax(fabs(f - (double)i / n), fabs((double)(i + 1) / n - f)));
    }
    /* 1.95/sqrt(n) is the 0.1% critical value of the KS statistic. */
    assert_true(d < 1.95 / sqrt(n));
    /* P(X > 8) = e^-8: about 335 of 10^6, binomial sd about 18. */
    assert_true(fabs((double)tail - n * exp(-8)) < 5 * sqrt(n * exp(-8)));
    free(x);
}

static double count_rate(struct osn_des_arr *a, double horizon, uint64_t seed, long flows[2])
{
    struct osn_rng r;
    long n = 0;
    int flow;
    osn_rng_seed(&r, seed);
    flows[0] = flows[1] = 0;
    while (osn_des_arr_next(a, &r, &flow) <= horizon) {
        n++;
        flows[flow]++;
    }
    return n / horizon;
}

/* des reads arrivals as a struct osn_arrivals; the tests describe them as models. */
static int arr_from_model(struct osn_des_arr *a, const struct osn_model *m)
{
    struct osn_arrivals spec = osn_model_arrivals(m);
    return osn_des_arr_setup(a, &spec, NULL, 0);
}

static void test_arrivals(void **state)
{
    (void)state;
    struct osn_model m = two_loop(1.5, 0.75, 5, 10, 20);
    struct osn_des_arr a;
    long flows[2];
    const double T = 2e5;

    assert_int_equal(arr_from_model(&a, &m), 0);
    double rate = count_rate(&a, T, 1, flows);
    assert_true(fabs(rate - 1.5) < 5 * sqrt(1.5 / T));

    m.flows = 2, m.rate1 = 0.4, m.rate2 = 1.6;
    assert_int_equal(arr_from_model(&a, &m), 0);
    rate = count_rate(&a, T, 2, flows);
    assert_true(fabs(rate - 2.0) < 5 * sqrt(2.0 / T));
    assert_true(fabs((double)flows[0] / (flows[0] + flows[1]) - 0.2) < 5 * sqrt(0.16 / (2 * T)));

    /* Two phases, rates 3 and 0.5, switching 0->1 at 0.2, 1->0 at 0.3: pi = (0.6, 0.4). */
    m.flows = 1, m.process = OSN_ARR_MMPP;
    m.mmpp.K = 2, m.mmpp.rate[0] = 3, m.mmpp.rate[1] = 0.5;
    m.mmpp.gen[0][1] = 0.2, m.mmpp.gen[1][0] = 0.3;
    assert_int_equal(arr_from_model(&a, &m), 0);
    assert_true(rel(osn_des_arr_mean_rate(&a), 0.6 * 3 + 0.4 * 0.5) < 1e-14);
    rate = count_rate(&a, T, 3, flows);
    /* Bursty: the count's variance exceeds Poisson's; allow 3% (about 10 sd of the phase mix). */
    assert_true(fabs(rate - 2.0) < 0.06);

    double tr[5] = {0.5, 0.5, 1.25, 3, 7};
    m.process = OSN_ARR_TRACE, m.trace = tr, m.ntrace = 5;
    assert_int_equal(arr_from_model(&a, &m), 0);
    struct osn_rng r;
    int flow;
    osn_rng_seed(&r, 1);
    for (int i = 0; i < 5; i++)
        assert_true(osn_des_arr_next(&a, &r, &flow) == tr[i]);
    assert_true(isinf(osn_des_arr_next(&a, &r, &flow)));
    tr[3] = 0.1; /* not ascending */
    assert_int_equal(arr_from_model(&a, &m), OSN_EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_random_steps_vs_array),
            cmocka_unit_test(test_ties_fire_in_schedule_order),
            cmocka_unit_test(test_ties_fire_by_sender_key),
            cmocka_unit_test(test_keyed_steps_vs_array),
            cmocka_unit_test(test_timer_reserve),
            cmocka_unit_test(test_fifo_read_ahead),
            cmocka_unit_test(test_fifo_order_after_head_cancel),
            cmocka_unit_test(test_laws),
            cmocka_unit_test(test_exponential_distribution),
            cmocka_unit_test(test_arrivals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

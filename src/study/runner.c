/*
 * The replication runner (osn/study.h): the streams, the worker threads, the share of a split
 * run, the kept replications skipped, and the progress reports.
 */
#include "osn/study.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "osn/err.h"

struct job {
    struct osn_study_reps *r;
    struct osn_rng *streams; /* stream i of replication i */
    _Atomic double *now;     /* each replication's simulated time; NULL without progress */
    atomic_long next, done, ran;
    atomic_int err;           /* the first error (0: none) */
    pthread_mutex_t msg_lock; /* r->msg is the first failing replication's */
};

/* The streams of n replications (NULL when out of memory): stream i is the master seed's state
 * jumped i times, so replication i draws the same numbers on any thread and any rank. */
static struct osn_rng *streams_new(uint64_t seed, long n)
{
    struct osn_rng *s = malloc((size_t)(n > 0 ? n : 1) * sizeof *s);
    if (!s)
        return NULL;
    osn_rng_seed(&s[0], seed);
    for (long i = 1; i < n; i++) {
        s[i] = s[i - 1];
        osn_rng_jump(&s[i]);
    }
    return s;
}

/* Records err (not 0) as the job's error when it is the first; true then. */
static bool fail(struct job *j, int err)
{
    int zero = 0;
    return err != 0 && atomic_compare_exchange_strong(&j->err, &zero, err);
}

/* Replication i, or nothing when it is kept or another process's (exchanged after the run). It
 * works on a copy of its stream on this thread's stack: streams[i] shares a cache line with its
 * neighbours, which other threads read as often. */
static int one(struct job *j, long i)
{
    struct osn_study_reps *r = j->r;
    char msg[sizeof r->msg] = "";
    int err = 0;
    if (i >= r->have && osn_split_mine(r->split, r->n - r->have, i - r->have)) {
        struct osn_rng rng = j->streams[i];
        err = r->rep(r->ctx, i, &rng, j->now ? &j->now[i] : NULL, msg, sizeof msg);
        if (!err)
            atomic_fetch_add(&j->ran, 1);
    }
    if (j->now)
        atomic_store(&j->now[i], r->span);
    if (fail(j, err)) {
        pthread_mutex_lock(&j->msg_lock);
        snprintf(r->msg, sizeof r->msg, "%s", msg);
        pthread_mutex_unlock(&j->msg_lock);
    }
    return err;
}

static void *worker(void *arg)
{
    struct job *j = arg;
    for (;;) {
        long i = atomic_fetch_add(&j->next, 1);
        if (i >= j->r->n || atomic_load(&j->err))
            break;
        one(j, i);
        atomic_fetch_add(&j->done, 1);
    }
    return NULL;
}

/* Reports progress until every replication is done or one has failed. */
static void watch(struct job *j)
{
    const struct osn_study_reps *r = j->r;
    while (atomic_load(&j->done) < r->n && atomic_load(&j->err) == 0) {
        struct timespec ts = {0, 200000000};
        nanosleep(&ts, NULL);
        double sofar = 0;
        for (long i = 0; i < r->n; i++)
            sofar += atomic_load_explicit(&j->now[i], memory_order_relaxed);
        r->progress(r->ctx, sofar / (r->span * (double)r->n));
    }
}

/* The worker threads (and the watch on this one); 0 or OSN_EIO when none could be started. */
static int run_threads(struct job *j)
{
    const struct osn_study_reps *r = j->r;
    long want = r->threads < r->n ? r->threads : r->n;
    int nthr = want > OSN_STUDY_MAX_THREADS ? OSN_STUDY_MAX_THREADS : want < 1 ? 1 : (int)want;
    int started = 0;
    pthread_t tid[OSN_STUDY_MAX_THREADS];

    if (nthr == 1 && !r->progress) {
        worker(j);
        return 0;
    }
    for (; started < nthr; started++)
        if (pthread_create(&tid[started], NULL, worker, j) != 0)
            break;
    if (started == 0)
        return OSN_EIO;
    if (r->progress)
        watch(j);
    for (int i = 0; i < started; i++)
        pthread_join(tid[i], NULL);
    return 0;
}

int osn_study_reps_run(struct osn_study_reps *r)
{
    struct job j = {.r = r};
    int err = OSN_ENOMEM;

    if (!r || !r->rep || r->n < 1 || r->have < 0 || r->have > r->n)
        return OSN_EINVAL;
    r->ran = 0;
    r->msg[0] = '\0';
    pthread_mutex_init(&j.msg_lock, NULL);
    j.streams = streams_new(r->seed, r->n);
    if (r->progress)
        j.now = calloc((size_t)r->n, sizeof *j.now);
    if (!j.streams || (r->progress && !j.now))
        goto out;
    err = run_threads(&j);
    if (!err)
        err = atomic_load(&j.err);
    r->ran = atomic_load(&j.ran);
out:
    free(j.streams);
    free((void *)j.now);
    pthread_mutex_destroy(&j.msg_lock);
    return err;
}

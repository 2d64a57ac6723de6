/* Replications on worker threads (par.h). */
#include "par.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "osn/err.h"

bool osn__par_fail(struct osn__par *p, int err)
{
    int zero = 0;
    return err != 0 && atomic_compare_exchange_strong(&p->err, &zero, err);
}

/* Reports progress until every replication is done or one has failed. */
static void watch(struct osn__par *p)
{
    while (atomic_load(&p->done) < p->n && atomic_load(&p->err) == 0) {
        struct timespec ts = {0, 200000000};
        nanosleep(&ts, NULL);
        double sofar = 0;
        for (int i = 0; i < p->n; i++)
            sofar += atomic_load_explicit(&p->now[i], memory_order_relaxed);
        p->report(p->ctx, sofar / p->span);
    }
}

static void *worker(void *arg)
{
    struct osn__par *p = arg;
    for (;;) {
        int i = atomic_fetch_add(&p->next, 1);
        if (i >= p->n || atomic_load(&p->err))
            break;
        int err = p->rep(p->ctx, i);
        if (err)
            osn__par_fail(p, err);
        atomic_fetch_add(&p->done, 1);
    }
    return NULL;
}

int osn__par_run(struct osn__par *p, int threads)
{
    int nthr = threads < p->n ? threads : p->n, started = 0;
    pthread_t tid[OSN__PAR_MAX_THREADS];

    if (nthr > OSN__PAR_MAX_THREADS)
        nthr = OSN__PAR_MAX_THREADS;
    if (nthr <= 1 && !p->report) {
        worker(p);
        return atomic_load(&p->err);
    }
    for (; started < (nthr < 1 ? 1 : nthr); started++)
        if (pthread_create(&tid[started], NULL, worker, p) != 0)
            break;
    if (started == 0)
        return OSN_EIO;
    if (p->report)
        watch(p);
    for (int i = 0; i < started; i++)
        pthread_join(tid[i], NULL);
    return atomic_load(&p->err);
}

struct osn_rng *osn__par_streams(uint64_t seed, size_t n)
{
    struct osn_rng *s = malloc((n ? n : 1) * sizeof *s);
    if (!s)
        return NULL;
    osn_rng_seed(&s[0], seed);
    for (size_t i = 1; i < n; i++) {
        s[i] = s[i - 1];
        osn_rng_jump(&s[i]);
    }
    return s;
}

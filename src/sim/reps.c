/* Replications kept from one run to the next (osn/reps.h). */
#include "osn/reps.h"

#include <stdlib.h>
#include <string.h>

#include "osn/err.h"

/* *p grown from `old` to `n` items of `size` bytes, the new ones zeroed; 0 or -1. */
static int grow(void *p, long old, long n, size_t size)
{
    void **pp = p;
    char *q = realloc(*pp, (size_t)n * size);
    if (!q)
        return -1;
    memset(q + (size_t)old * size, 0, (size_t)(n - old) * size);
    *pp = q;
    return 0;
}

int osn_reps_reserve(struct osn_reps *r, long n, int ntot)
{
    if (r->n > 0 && r->ntot != ntot)
        return OSN_EINVAL;
    r->ntot = ntot;
    if (n <= r->cap)
        return 0;
    if (grow(&r->tot, r->cap, n, (size_t)ntot * sizeof *r->tot) != 0 ||
        grow(&r->events, r->cap, n, sizeof *r->events) != 0 ||
        grow(&r->messages, r->cap, n, sizeof *r->messages) != 0 ||
        grow(&r->nret, r->cap, n, sizeof *r->nret) != 0 ||
        grow(&r->ret, r->cap, n, sizeof *r->ret) != 0)
        return OSN_ENOMEM; /* the arrays grown so far are larger than cap says: harmless */
    r->cap = n;
    return 0;
}

void osn_reps_free(struct osn_reps *r)
{
    for (long i = 0; r->ret && i < r->cap; i++)
        free(r->ret[i]);
    free(r->tot);
    free(r->events);
    free(r->messages);
    free(r->nret);
    free(r->ret);
    *r = (struct osn_reps){0};
}

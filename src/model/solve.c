/*
 * osn_solve(): picks the method and runs it.
 *
 * "auto" runs the structured solver, which handles every model and gives every measure
 * (including the spread of the return time); the closed forms exist for the one-flow two-loop
 * model only and serve as its independent check.
 */
#include "model_int.h"

#include "osn/err.h"

static int closed_applies(const struct osn_model *m)
{
    return m->kind == OSN_KIND_TWO_LOOP && m->flows == 1 && m->policy == OSN_POLICY_I;
}

int osn_solve(const struct osn_model *m, enum osn_method method, struct osn_measures *out,
              osn_dist_fn dist, void *arg)
{
    if (!m || !out)
        return OSN_EINVAL;
    *out = (struct osn_measures){0};
    if (method == OSN_METHOD_CLOSED) {
        if (!closed_applies(m))
            return OSN_ENOTSUP;
        return osn__closed_solve(m, out, dist, arg);
    }
    return osn__general_solve(m, out, dist, arg);
}

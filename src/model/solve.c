/*
 * osn_solve(): picks the method and runs it.
 *
 * "auto" runs the structured solver, which handles every model and gives every measure
 * (including the spread of the return time); the closed forms exist for the one-flow two-loop
 * model only and serve as its independent check.
 */
#include "model_int.h"

#include "osn/err.h"

const char *osn_solve_unsupported(const struct osn_model *m, enum osn_method method)
{
    if (m->process == OSN_ARR_TRACE)
        return "trace input has no exact analysis (use osn sim)";
    if (m->process == OSN_ARR_MMPP)
        return "MMPP input is not supported by osn solve yet";
    if (m->service.kind != OSN_LAW_EXP)
        return "only exponential service (service.law = exp) is supported by osn solve yet";
    if (method == OSN_METHOD_CLOSED &&
        !(m->kind == OSN_KIND_TWO_LOOP && m->flows == 1 && m->policy == OSN_POLICY_I))
        return "closed forms exist only for the one-flow two-loop model under policy I; use "
               "--method general or auto";
    return NULL;
}

int osn_solve(const struct osn_model *m, enum osn_method method, struct osn_measures *out,
              osn_dist_fn dist, void *arg)
{
    if (!m || !out)
        return OSN_EINVAL;
    *out = (struct osn_measures){0};
    if (osn_solve_unsupported(m, method))
        return OSN_ENOTSUP;
    if (method == OSN_METHOD_CLOSED)
        return osn__closed_solve(m, out, dist, arg);
    return osn__general_solve(m, out, dist, arg);
}

/*
 * osn_solve(): picks the method and runs it.
 *
 * "auto" and "general" run the structured level solver for exponential service (every measure,
 * including the spread of the return time) and the embedded chain at departures for other
 * service laws; the closed forms exist for the one-flow two-loop M|M|1 model only and serve as
 * its independent check.
 */
#include "model_int.h"

#include "osn/err.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>

/*
 * Rough operation count of the embedded chain: every start state (about 2R) uniformises a path
 * of at most min(M, R) states over M terms, M about the mean number of arrivals per service plus
 * ten standard deviations. Past this budget (minutes of work) osn solve refuses and says why.
 */
#define EMBEDDED_BUDGET 4e9

static double embedded_cost(const struct osn_model *m)
{
    double lam = fmax(osn_model_accept_rate(m, 0), osn_model_accept_rate(m, 1));
    double x = lam / m->mu, M = x + 10 * sqrt(x) + 40, Mtail;
    /* The weights themselves: a law with a heavy tail (lognormal cv = 10 once ran for over
     * 300 s at R = 20) needs many terms, each a quadrature of thousands of points, worth about
     * ten steps of the chain each. */
    double weights = 10 * osn__mixpois_cost(&m->service, lam, &Mtail);
    M = fmax(M, Mtail);
    if (Mtail > 4e6) /* osn__mixpois() gives up past 4e6 terms: say so before, not after */
        return INFINITY;
    return 2.0 * (double)m->R * M * fmin(M, (double)m->R) + weights;
}

/* Whether the service law's tail, not R or the load, makes the embedded chain costly. */
static bool heavy_tail(const struct osn_model *m)
{
    double lam = fmax(osn_model_accept_rate(m, 0), osn_model_accept_rate(m, 1));
    double x = lam / m->mu, Mtail;
    enum osn_law_kind k = m->service.kind;
    osn__mixpois_cost(&m->service, lam, &Mtail);
    return k != OSN_LAW_DET && k != OSN_LAW_ERLANG && Mtail > 10 * (x + 10 * sqrt(x) + 40);
}

const char *osn_solve_unsupported(const struct osn_model *m, enum osn_method method)
{
    if (m->process == OSN_ARR_TRACE)
        return "trace input has no exact analysis (use osn sim)";
    if (m->process == OSN_ARR_MMPP && m->service.kind != OSN_LAW_EXP)
        return "MMPP input needs exponential service in osn solve (the embedded chain for "
               "general service takes Poisson input; use osn sim)";
    if (m->service.kind != OSN_LAW_EXP && method != OSN_METHOD_CLOSED &&
        embedded_cost(m) > EMBEDDED_BUDGET)
        return heavy_tail(m) ? "the service law's tail is too heavy for the embedded chain at "
                               "this load (its longest services hold millions of arrivals): "
                               "lower service.cv (or the longest samples), or use osn sim"
                             : "general service at this load and R is too costly for the "
                               "embedded chain (about R x (arrivals per service)^2 steps); lower "
                               "R or the load, or use osn sim";
    if (method == OSN_METHOD_CLOSED &&
        !(m->kind == OSN_KIND_TWO_LOOP && m->flows == 1 && m->policy == OSN_POLICY_I &&
          m->process == OSN_ARR_POISSON && m->service.kind == OSN_LAW_EXP))
        return "closed forms exist only for the one-flow two-loop M|M|1 model under policy I; "
               "use --method general or auto";
    return NULL;
}

int osn_solve(const struct osn_model *m, enum osn_method method, struct osn_measures *out,
              osn_dist_fn dist, void *arg)
{
    return osn_solve_cached(m, method, out, dist, arg, NULL);
}

int osn_solve_cached(const struct osn_model *m, enum osn_method method, struct osn_measures *out,
                     osn_dist_fn dist, void *arg, struct osn_solve_cache *cache)
{
    if (!m || !out)
        return OSN_EINVAL;
    *out = (struct osn_measures){0};
    if (osn_solve_unsupported(m, method))
        return OSN_ENOTSUP;
    if (method == OSN_METHOD_CLOSED)
        return osn__closed_solve(m, out, dist, arg);
    if (m->service.kind != OSN_LAW_EXP)
        return osn__embedded_solve(m, out, dist, arg, cache);
    return osn__general_solve(m, out, dist, arg);
}

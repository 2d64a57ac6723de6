/*
 * Arrival processes (include/osn/des.h): Poisson with one or two flows, MMPP-K and traces.
 *
 * Two Poisson flows are drawn as their superposition (rate lambda1 + lambda2) with each arrival
 * assigned to flow 1 with probability lambda1 / (lambda1 + lambda2). An MMPP in phase k races
 * its arrival rate against its total switch rate: the next transition comes after an
 * exponential of the sum, and is an arrival with probability lam_k / (lam_k + out_k), else a
 * switch to phase j with probability gen[k][j] / out_k. A trace replays its instants.
 */
#include "osn/des.h"

#include <stdio.h>

#include "osn/err.h"

static int bad(char *msg, size_t size, const char *what)
{
    if (msg && size)
        snprintf(msg, size, "%s", what);
    return OSN_EINVAL;
}

static int ok_rate(double x)
{
    return isfinite(x) && x >= 0;
}

static int init_mmpp(struct osn_des_arr *a, const struct osn_mmpp *mp, char *msg, size_t size)
{
    if (mp->K < 1 || mp->K > OSN_MMPP_MAX)
        return bad(msg, size, "an MMPP needs 1 to 8 phases");
    a->K = mp->K;
    double total = 0;
    for (int k = 0; k < mp->K; k++) {
        if (!ok_rate(mp->rate[k]))
            return bad(msg, size, "MMPP phase rates must be finite and >= 0");
        a->lam[k] = mp->rate[k];
        total += mp->rate[k];
        a->out[k] = 0;
        for (int j = 0; j < mp->K; j++) {
            if (j == k)
                continue;
            if (!ok_rate(mp->gen[k][j]))
                return bad(msg, size, "MMPP switch rates must be finite and >= 0");
            a->out[k] += mp->gen[k][j];
        }
        double c = 0;
        for (int j = 0; j < mp->K; j++) {
            if (j != k && a->out[k] > 0)
                c += mp->gen[k][j] / a->out[k];
            a->cum[k][j] = c;
        }
    }
    if (total <= 0)
        return bad(msg, size, "an MMPP needs a phase with a positive arrival rate");
    return 0;
}

int osn_des_arr_setup(struct osn_des_arr *a, const struct osn_arrivals *m, char *msg,
                      size_t msgsize)
{
    if (!a || !m)
        return OSN_EINVAL;
    *a = (struct osn_des_arr){0};
    a->kind = m->process;
    a->flows = m->flows == 2 ? 2 : 1;
    switch (m->process) {
    case OSN_ARR_POISSON:
        if (a->flows == 2) {
            if (!ok_rate(m->rate1) || !ok_rate(m->rate2) || m->rate1 + m->rate2 <= 0)
                return bad(msg, msgsize, "two flows need rates >= 0, not both 0");
            a->rate = m->rate1 + m->rate2;
            a->p1 = m->rate1 / a->rate;
        } else {
            if (!(ok_rate(m->rate) && m->rate > 0))
                return bad(msg, msgsize, "the arrival rate must be a positive number");
            a->rate = m->rate;
            a->p1 = 1;
        }
        return 0;
    case OSN_ARR_MMPP:
        a->flows = 1;
        return init_mmpp(a, &m->mmpp, msg, msgsize);
    case OSN_ARR_TRACE:
        a->flows = 1;
        if (!m->trace || m->ntrace == 0)
            return bad(msg, msgsize, "the arrival trace is empty");
        for (size_t i = 0; i < m->ntrace; i++)
            if (!(isfinite(m->trace[i]) && m->trace[i] >= 0) ||
                (i > 0 && m->trace[i] < m->trace[i - 1]))
                return bad(msg, msgsize, "trace instants must be finite, >= 0 and ascending");
        a->trace = m->trace;
        a->ntrace = m->ntrace;
        return 0;
    }
    return bad(msg, msgsize, "unknown arrival process");
}

void osn_des_arr_reset(struct osn_des_arr *a, int phase)
{
    a->t = 0;
    a->next = 0;
    a->phase = phase >= 0 && phase < a->K ? phase : 0;
}

double osn_des_arr_next(struct osn_des_arr *a, struct osn_rng *r, int *flow)
{
    *flow = 0;
    switch (a->kind) {
    case OSN_ARR_POISSON:
        a->t += osn_des_exp1(r) / a->rate;
        if (a->flows == 2 && osn_rng_u01(r) >= a->p1)
            *flow = 1;
        return a->t;
    case OSN_ARR_MMPP:
        for (;;) {
            int k = a->phase;
            double tot = a->lam[k] + a->out[k];
            if (tot <= 0)
                return a->t = INFINITY;
            a->t += osn_des_exp1(r) / tot;
            double u = osn_rng_u01(r) * tot;
            if (u < a->lam[k])
                return a->t;
            u = (u - a->lam[k]) / a->out[k];
            int j = 0;
            while (j < a->K - 1 && (j == k || u >= a->cum[k][j]))
                j++;
            if (j == k) /* only when rounding put u at the very top: take the last other phase */
                j = k > 0 ? k - 1 : k + 1;
            a->phase = j;
        }
    case OSN_ARR_TRACE:
        if (a->next >= a->ntrace)
            return a->t = INFINITY;
        return a->t = a->trace[a->next++];
    }
    return INFINITY;
}

/* Stationary vector of the phase generator by GTH elimination (no subtractions). */
static void mmpp_stationary(const struct osn_des_arr *a, double pi[OSN_MMPP_MAX])
{
    double q[OSN_MMPP_MAX][OSN_MMPP_MAX];
    int K = a->K;
    for (int i = 0; i < K; i++)
        for (int j = 0; j < K; j++)
            q[i][j] = i == j ? 0 : a->out[i] * (a->cum[i][j] - (j > 0 ? a->cum[i][j - 1] : 0));
    for (int n = K - 1; n > 0; n--) {
        double s = 0;
        for (int j = 0; j < n; j++)
            s += q[n][j];
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                if (i != j && s > 0)
                    q[i][j] += q[i][n] * q[n][j] / s;
        for (int i = 0; i < n; i++)
            q[i][n] = s > 0 ? q[i][n] / s : 0;
    }
    double tot = 1;
    pi[0] = 1;
    for (int n = 1; n < K; n++) {
        pi[n] = 0;
        for (int i = 0; i < n; i++)
            pi[n] += pi[i] * q[i][n];
        tot += pi[n];
    }
    for (int n = 0; n < K; n++)
        pi[n] /= tot;
}

double osn_des_arr_mean_rate(const struct osn_des_arr *a)
{
    double pi[OSN_MMPP_MAX], rate = 0;
    switch (a->kind) {
    case OSN_ARR_POISSON:
        return a->rate;
    case OSN_ARR_MMPP:
        mmpp_stationary(a, pi);
        for (int k = 0; k < a->K; k++)
            rate += pi[k] * a->lam[k];
        return rate;
    case OSN_ARR_TRACE:
        return a->trace[a->ntrace - 1] > 0 ? (double)a->ntrace / a->trace[a->ntrace - 1] : NAN;
    }
    return NAN;
}

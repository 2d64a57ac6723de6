/*
 * The hysteretic model's parameters: resolving the named cases into bi-level thresholds,
 * checking them, and the accepted arrival rate of each mode (docs/models.md, "Modes and
 * thresholds").
 */
#include "model_int.h"

#include <math.h>
#include <stdio.h>
#include <unistd.h>

#include "osn/err.h"

void osn_model_resolve(struct osn_model *m)
{
    /* mu is the service rate; service.rate says the same for the simulator's laws. */
    m->service.rate = m->mu;
    switch (m->kind) {
    case OSN_KIND_TWO_LOOP:
        m->L1 = m->L;
        m->H1 = m->H;
        m->L2 = m->H;
        m->H2 = m->R;
        break;
    case OSN_KIND_SINGLE_LOOP:
        m->L1 = m->L;
        m->H1 = m->H;
        m->L2 = m->R - 1;
        m->H2 = m->R;
        break;
    case OSN_KIND_BI_LEVEL:
        m->L = m->L1;
        m->H = m->H1;
        break;
    }
}

void osn_mmpp_phase_probs(const struct osn_mmpp *p, double *pi)
{
    const int K = p->K;
    double a[OSN_MMPP_MAX][OSN_MMPP_MAX], s[OSN_MMPP_MAX];
    for (int i = 0; i < K; i++)
        for (int j = 0; j < K; j++)
            a[i][j] = p->gen[i][j];
    for (int k = K - 1; k >= 1; k--) {
        double sum = 0;
        for (int j = 0; j < k; j++)
            sum += a[k][j];
        s[k] = sum;
        for (int i = 0; i < k; i++)
            for (int j = 0; j < k; j++)
                if (j != i && sum > 0)
                    a[i][j] += a[i][k] * a[k][j] / sum;
    }
    double tot = pi[0] = 1;
    for (int k = 1; k < K; k++) {
        double v = 0;
        for (int i = 0; i < k; i++)
            v += pi[i] * a[i][k];
        pi[k] = s[k] > 0 ? v / s[k] : 0;
        tot += pi[k];
    }
    for (int k = 0; k < K; k++)
        pi[k] /= tot;
}

double osn_mmpp_mean_rate(const struct osn_mmpp *p, int s)
{
    double pi[OSN_MMPP_MAX], r = 0;
    osn_mmpp_phase_probs(p, pi);
    for (int k = 0; k < p->K; k++)
        r += pi[k] * p->accept[s][k] * p->rate[k];
    return r;
}

double osn_model_accept_rate(const struct osn_model *m, int s)
{
    if (m->process == OSN_ARR_MMPP)
        return osn_mmpp_mean_rate(&m->mmpp, s);
    if (s == 2)
        return 0;
    if (m->flows == 2)
        return s == 0 ? m->rate1 + m->rate2 : m->rate1;
    return s == 0 ? m->rate : m->overload_rate;
}

/* Bytes per state the general solver keeps at its peak (see measures.c and lsolve.c). */
#define BYTES_PER_STATE 96

size_t osn_model_solver_bytes(const struct osn_model *m)
{
    double K = m->process == OSN_ARR_MMPP ? m->mmpp.K : 1;
    double states = 3.0 * K * ((double)m->R + 1);
    double bytes = states * BYTES_PER_STATE + (1u << 20);
    if (m->service.kind != OSN_LAW_EXP) /* the dense embedded matrix of extended doubles */
        bytes += states * states * 16;
    else /* the kept (-S_n)^-1 of both chains (lsolve.c), were no elimination step skipped */
        bytes += states * 3.0 * K * 2 * 16;
    return bytes > 1e18 ? (size_t)1e18 : (size_t)bytes;
}

static int fail(const char **bad_key, char *msg, size_t msgsize, const char *key, int err,
                const char *fmt, long a, long b)
{
    if (bad_key)
        *bad_key = key;
    if (msg && msgsize)
        snprintf(msg, msgsize, fmt, a, b);
    return err;
}

static int bad_rate(double x, int allow_zero)
{
    return !isfinite(x) || x < 0 || (!allow_zero && x == 0);
}

static int check_thresholds(const struct osn_model *m, const char **bk, char *msg, size_t n)
{
    const int named = m->kind != OSN_KIND_BI_LEVEL;
    if (m->R < 2 || m->R > OSN_R_MAX)
        return fail(bk, msg, n, "thresholds.R", OSN_ECONFIG, "R = %ld must be in 2 .. %ld", m->R,
                    OSN_R_MAX);
    if (m->L1 < 0)
        return fail(bk, msg, n, named ? "thresholds.L" : "thresholds.L1", OSN_ECONFIG,
                    "L = %ld must be >= 0", m->L1, 0);
    if (m->H1 <= m->L1)
        return fail(bk, msg, n, named ? "thresholds.H" : "thresholds.H1", OSN_ECONFIG,
                    "H = %ld must be greater than L = %ld", m->H1, m->L1);
    if (named && m->H1 >= m->R)
        return fail(bk, msg, n, "thresholds.H", OSN_ECONFIG, "H = %ld must be less than R = %ld",
                    m->H1, m->R);
    if (!named) {
        if (m->H2 <= m->H1)
            return fail(bk, msg, n, "thresholds.H2", OSN_ECONFIG,
                        "H2 = %ld must be greater than H1 = %ld", m->H2, m->H1);
        if (m->H2 > m->R)
            return fail(bk, msg, n, "thresholds.H2", OSN_ECONFIG,
                        "H2 = %ld must not exceed R = %ld", m->H2, m->R);
        if (m->L2 <= m->L1)
            return fail(bk, msg, n, "thresholds.L2", OSN_ECONFIG,
                        "L2 = %ld must be greater than L1 = %ld", m->L2, m->L1);
        if (m->L2 >= m->H2)
            return fail(bk, msg, n, "thresholds.L2", OSN_ECONFIG,
                        "L2 = %ld must be less than H2 = %ld", m->L2, m->H2);
    }
    return 0;
}

static int check_rates(const struct osn_model *m, const char **bk, char *msg, size_t n)
{
    if (bad_rate(m->mu, 0))
        return fail(bk, msg, n, "service.rate", OSN_ECONFIG,
                    "the service rate must be a positive finite number", 0, 0);
    if (m->flows == 2) {
        if (bad_rate(m->rate1, 1))
            return fail(bk, msg, n, "arrivals.rate1", OSN_ECONFIG,
                        "rate1 must be a non-negative finite number", 0, 0);
        if (bad_rate(m->rate2, 1))
            return fail(bk, msg, n, "arrivals.rate2", OSN_ECONFIG,
                        "rate2 must be a non-negative finite number", 0, 0);
        if (m->rate1 + m->rate2 <= 0)
            return fail(bk, msg, n, "arrivals.rate1", OSN_ECONFIG, "rate1 + rate2 must be positive",
                        0, 0);
        return 0;
    }
    if (m->flows != 1)
        return fail(bk, msg, n, "arrivals.flows", OSN_ECONFIG, "flows must be 1 or 2", 0, 0);
    if (bad_rate(m->rate, 0))
        return fail(bk, msg, n, "arrivals.rate", OSN_ECONFIG,
                    "the arrival rate must be a positive finite number", 0, 0);
    if (bad_rate(m->overload_rate, 1))
        return fail(bk, msg, n, "arrivals.overload_rate", OSN_ECONFIG,
                    "the overload rate must be a non-negative finite number", 0, 0);
    if (m->overload_rate > m->rate)
        return fail(bk, msg, n, "arrivals.overload_rate", OSN_ECONFIG,
                    "the overload rate must not exceed the arrival rate (it is the part accepted "
                    "in overload mode)",
                    0, 0);
    return 0;
}

static int check_memory(const struct osn_model *m, const char **bk, char *msg, size_t n)
{
    long pages = sysconf(_SC_PHYS_PAGES);
    long page = sysconf(_SC_PAGESIZE);
    double avail = pages > 0 && page > 0 ? (double)pages * (double)page : 8e9;
    double need = (double)osn_model_solver_bytes(m);
    if (need > 0.75 * avail)
        return fail(bk, msg, n, "thresholds.R", OSN_ETOOBIG,
                    "R = %ld needs about %ld MiB, more than this machine's memory allows", m->R,
                    (long)(need / 1048576));
    return 0;
}

int osn_model_check(const struct osn_model *m, const char **bad_key, char *msg, size_t msgsize)
{
    if (m->policy != OSN_POLICY_I && m->policy != OSN_POLICY_II)
        return fail(bad_key, msg, msgsize, "model.policy", OSN_ECONFIG, "policy must be I or II", 0,
                    0);
    int err = check_thresholds(m, bad_key, msg, msgsize);
    if (!err)
        err = check_rates(m, bad_key, msg, msgsize);
    if (!err)
        err = check_memory(m, bad_key, msg, msgsize);
    return err;
}

const char *osn_method_name(enum osn_method method)
{
    switch (method) {
    case OSN_METHOD_GENERAL:
        return "general";
    case OSN_METHOD_CLOSED:
        return "closed";
    default:
        return "auto";
    }
}

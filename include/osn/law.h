/*
 * The vocabulary of service-time laws and arrival processes that the exact analysis (model) and
 * the event engine (des) share: types only, no code. It sits under both so that des reads a law
 * or an arrival process without including model (docs/design.md: des -> base, model -> base).
 */
#ifndef OSN_LAW_H
#define OSN_LAW_H

#include <stddef.h>

/* Service-time laws, shared by the solver and the simulator. `rate` is always 1/mean. */
enum osn_law_kind {
    OSN_LAW_EXP,       /* exponential */
    OSN_LAW_DET,       /* constant 1/rate */
    OSN_LAW_ERLANG,    /* k phases, each of rate k*rate */
    OSN_LAW_HYPEREXP,  /* branch i with probability probs[i], exponential of rate rates[i] */
    OSN_LAW_UNIFORM,   /* uniform with mean 1/rate and coefficient of variation cv <= 1/sqrt(3) */
    OSN_LAW_LOGNORMAL, /* lognormal with mean 1/rate and coefficient of variation cv */
    OSN_LAW_EMPIRICAL, /* drawn uniformly from samples[] */
};

#define OSN_LAW_MAX_BRANCHES 8

struct osn_law {
    enum osn_law_kind kind;
    double rate; /* 1/mean, for every law (derived for hyperexp and empirical) */
    int k;       /* erlang */
    int nbranch; /* hyperexp */
    double probs[OSN_LAW_MAX_BRANCHES], rates[OSN_LAW_MAX_BRANCHES];
    double cv;       /* uniform, lognormal (lognormal sigma = sqrt(log(1 + cv^2))) */
    double *samples; /* empirical: owned by the scenario that loaded it */
    size_t nsamples;
};

/* Arrival processes, shared by the solver and the simulator. */
enum osn_arrival_kind {
    OSN_ARR_POISSON, /* one flow (rate, overload_rate) or two flows (rate1, rate2) */
    OSN_ARR_MMPP,    /* Markov-modulated Poisson, K phases */
    OSN_ARR_TRACE,   /* arrival instants from a file (simulation only) */
};

#define OSN_MMPP_MAX 8

struct osn_mmpp {
    int K;
    double rate[OSN_MMPP_MAX];              /* arrival rate in each phase */
    double gen[OSN_MMPP_MAX][OSN_MMPP_MAX]; /* phase switch rates, off-diagonal; diagonal 0 */
    double accept[3][OSN_MMPP_MAX];         /* fraction accepted per mode and phase (a0 = 1,
                                               a2 = 0 unless given) */
};

/*
 * An arrival process as the event engine reads it: the fields of a model's [arrivals] section
 * (osn_model_arrivals() fills one from a struct osn_model). The trace is borrowed.
 */
struct osn_arrivals {
    enum osn_arrival_kind process;
    int flows;            /* 1, or 2 (Poisson only) */
    double rate;          /* one flow: offered rate */
    double rate1, rate2;  /* two flows: offered rates */
    struct osn_mmpp mmpp; /* process == OSN_ARR_MMPP */
    const double *trace;  /* process == OSN_ARR_TRACE: ascending instants (s) */
    size_t ntrace;
};

#endif

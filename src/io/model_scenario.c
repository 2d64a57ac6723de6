/*
 * Scenario files, second layer: the model's sections ([model], [thresholds], [arrivals],
 * [service]) turned into a resolved, checked struct osn_model.
 *
 * osn_ini_collect() gathers the assignments with their origins; this file parses the final
 * values, checks that each key belongs to the chosen kind, number of flows, arrival process and
 * service law, fills the model, and runs osn_model_resolve() and osn_model_check(). A complaint
 * from the model about a key is mapped back to where that key (or the key it was derived from)
 * was set, or to "(default)". Because values are parsed only after collection, an override
 * replaces a bad file value without the bad value ever being looked at.
 */
#include "osn/model_scenario.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "io_int.h"
#include "osn/err.h"

/* A default that depends on other keys (the others are osn_scenario_model_default()'s). */
#define DEF_ACCEPT 0.5 /* overload_rate = rate/2 unless given */

static const char *const kind_names[] = {"two-loop", "single-loop", "bi-level", NULL};
/* The words of enum osn_policy, for every scenario key that takes one (io_int.h). */
const char *const osn__policy_names[] = {"I", "II", "1", "2", NULL};
static const char *const process_names[] = {"poisson", "mmpp", "trace", NULL};
static const char *const law_names[] = {"exp",     "det",       "erlang",    "hyperexp",
                                        "uniform", "lognormal", "empirical", NULL};

static int fold_policy(void *cfg, const struct osn_key_origin *o, const double *v, int n, char *err,
                       size_t errsize)
{
    struct osn_model *m = cfg;

    (void)o, (void)v, (void)n, (void)err, (void)errsize;
    m->policy = (enum osn_policy)(m->policy % 2);
    return 0;
}

/*
 * The model's keys. Which keys a model takes depends on its kind, arrival process, number of
 * flows and service law (misplaced() below, the one place that says so); the loader checks
 * every value against its type and range and stores the keys that have one home in struct
 * osn_model. The others (no OSN_KEY_AT: synonyms, lists, files, keys whose default follows
 * another's) are checked by the loader and read by apply_*(), which hold the cross-key rules.
 */
#define M struct osn_model
#define THRESHOLD(n, m_, help_)                                                                   \
    {                                                                                             \
        "thresholds", n, OSN_KEY_LONG, .lo = 0, .hi = OSN_R_MAX, OSN_KEY_AT(M, m_), .help = help_ \
    }
static const struct osn_key_spec model_keys[] = {
        {"model", "kind", OSN_KEY_CHOICE, .choices = kind_names, OSN_KEY_AT(M, kind),
         .help = "two-loop <L,H>|<H,R>, single-loop <L,H>|B, or bi-level (L1, H1, L2, H2, R)"},
        {"model", "policy", OSN_KEY_CHOICE, .choices = osn__policy_names, OSN_KEY_AT(M, policy),
         .hook = fold_policy, .def = "I",
         .help = "I (or 1): modes change at threshold crossings; II (or 2): only at departures"},
        THRESHOLD("L", L, "two-loop, single-loop: overload ends when the queue falls to L"),
        THRESHOLD("H", H, "two-loop, single-loop: overload begins when the queue reaches H"),
        THRESHOLD("R", R, "the capacity; two-loop: discard from R; single-loop: a synonym of B"),
        {"thresholds", "B", OSN_KEY_LONG, .lo = 0, .hi = OSN_R_MAX, .def = "20",
         .help = "single-loop: discard at B (give B or R)"},
        THRESHOLD("L1", L1, "bi-level; 0 <= L1 < H1 < H2 <= R, L1 < L2 < H2"),
        THRESHOLD("H1", H1, "bi-level: overload onset"),
        THRESHOLD("L2", L2, "bi-level: discard ends"),
        THRESHOLD("H2", H2, "bi-level: discard onset"),
        {"arrivals", "process", OSN_KEY_CHOICE, .choices = process_names, OSN_KEY_AT(M, process),
         .help = "poisson, mmpp (exponential service only), or trace (`osn sim` only)"},
        {"arrivals", "flows", OSN_KEY_LONG, .lo = 1, .hi = 2, OSN_KEY_AT(M, flows),
         .help = "1, or 2 Poisson flows: flow 1 has priority, flow 2 is blocked in overload"},
        {"arrivals", "rate", OSN_KEY_DOUBLE, .lo = 0, .lo_excl = true, OSN_KEY_AT(M, rate),
         .unit = "1/s", .help = "one flow: offered rate lambda"},
        {"arrivals", "overload_rate", OSN_KEY_DOUBLE, .lo = 0, .def = "rate/2", .unit = "1/s",
         .help = "one flow: rate lambda' <= lambda accepted in overload (give overload_rate or "
                 "overload_accept)"},
        {"arrivals", "overload_accept", OSN_KEY_DOUBLE, .lo = 0, .def = "0.5",
         .help = "one flow: lambda' = a x lambda, a in (0, 1]; mmpp: the fraction accepted in "
                 "overload, in [0, 1]"},
        {"arrivals", "rate1", OSN_KEY_DOUBLE, .lo = 0, OSN_KEY_AT(M, rate1), .unit = "1/s",
         .help = "two flows: flow 1's rate (rate1 and rate2 not both 0)"},
        {"arrivals", "rate2", OSN_KEY_DOUBLE, .lo = 0, OSN_KEY_AT(M, rate2), .unit = "1/s",
         .help = "two flows: flow 2's rate"},
        {"arrivals", "phase_rates", OSN_KEY_LIST, .hi = OSN_MMPP_MAX, .unit = "1/s",
         .help = "mmpp: lambda_1, ..., lambda_K (K = 2..8)"},
        {"arrivals", "phase_switch", OSN_KEY_LIST, .hi = OSN_MMPP_MAX * OSN_MMPP_MAX, .unit = "1/s",
         .help = "mmpp: the K(K-1) off-diagonal rates of the phase generator, row by row "
                 "(K = 2: a12, a21)"},
        {"arrivals", "overload_rates", OSN_KEY_LIST, .hi = OSN_MMPP_MAX, .unit = "1/s",
         .help = "mmpp: or the accepted rate of each phase"},
        {"arrivals", "file", OSN_KEY_STRING,
         .help = "trace: arrival instants, one per line, ascending (a path relative to the "
                 "scenario file)"},
        {"service", "law", OSN_KEY_CHOICE, .choices = law_names, OSN_KEY_AT(M, service.kind),
         .help = "the service-time law"},
        {"service", "rate", OSN_KEY_DOUBLE, .lo = 0, .lo_excl = true, OSN_KEY_AT(M, service.rate),
         .unit = "1/s",
         .help = "1/mean service time (all but hyperexp and empirical, whose mean follows from "
                 "them)"},
        {"service", "k", OSN_KEY_LONG, .lo = 1, .hi = 1000000, OSN_KEY_AT(M, service.k), .def = "2",
         .help = "erlang: phases"},
        {"service", "probs", OSN_KEY_LIST, .hi = OSN_LAW_MAX_BRANCHES,
         .help = "hyperexp: branch probabilities (sum 1)"},
        {"service", "rates", OSN_KEY_LIST, .hi = OSN_LAW_MAX_BRANCHES, .unit = "1/s",
         .help = "hyperexp: branch rates, > 0"},
        {"service", "cv", OSN_KEY_DOUBLE, .lo = 0, .def = "0.5 uniform, 1 lognormal",
         .help = "uniform (<= 1/sqrt 3), lognormal: coefficient of variation"},
        {"service", "sigma", OSN_KEY_DOUBLE, .lo = 0,
         .help = "lognormal: or the sigma of log B (give cv or sigma)"},
        {"service", "file", OSN_KEY_STRING,
         .help = "empirical: service times, one per line (a path relative to the scenario "
                 "file)"},
};
#undef THRESHOLD
#undef M

const struct osn_ini_schema osn_model_schema = {model_keys,
                                                sizeof model_keys / sizeof model_keys[0], NULL};

void osn_scenario_model_default(struct osn_model *m)
{
    memset(m, 0, sizeof *m);
    m->kind = OSN_KIND_TWO_LOOP;
    m->policy = OSN_POLICY_I;
    m->flows = 1;
    m->process = OSN_ARR_POISSON;
    m->service.kind = OSN_LAW_EXP;
    m->service.rate = 1.0;
    m->L = m->L1 = 5;
    m->H = m->H1 = m->L2 = 10;
    m->R = m->H2 = 20;
    m->rate = 1.2;
    m->rate1 = 0.6;
    m->rate2 = 0.6;
}

/* One load: the scenario being filled and the caller's error buffer. */
struct loader {
    struct osn_scenario *sc;
    char *msg;
    size_t msgsize;
    bool no_solver; /* for the simulator: the solver's memory estimate does not apply */
};

static const struct osn_key_origin *get(const struct loader *ld, const char *key)
{
    return osn_ini_get(&ld->sc->ini, key);
}

static int fail(struct loader *ld, int err, const char *fmt, ...)
        __attribute__((format(printf, 3, 4)));

static int fail(struct loader *ld, int err, const char *fmt, ...)
{
    va_list ap;
    if (ld->msg && ld->msgsize) {
        va_start(ap, fmt);
        vsnprintf(ld->msg, ld->msgsize, fmt, ap);
        va_end(ap);
    }
    return err;
}

static bool is_key(const struct osn_key_origin *o, const char *key)
{
    return strcmp(o->key, key) == 0;
}

/* The one rule between the keys that decide which other keys apply. */
static int check_shape(struct loader *ld, const struct osn_model *m)
{
    const struct osn_key_origin *o = get(ld, "arrivals.flows");

    if (o && m->process != OSN_ARR_POISSON && m->flows == 2)
        return osn_ini_bad(o, ld->msg, ld->msgsize,
                           "two flows are Poisson flows (arrivals.process = poisson)");
    return 0;
}

/* Which service keys each law takes (rate is taken by all but hyperexp and empirical). */
static bool law_takes(enum osn_law_kind law, const char *name)
{
    if (strcmp(name, "law") == 0)
        return true;
    switch (law) {
    case OSN_LAW_ERLANG:
        return strcmp(name, "rate") == 0 || strcmp(name, "k") == 0;
    case OSN_LAW_HYPEREXP:
        return strcmp(name, "probs") == 0 || strcmp(name, "rates") == 0;
    case OSN_LAW_UNIFORM:
        return strcmp(name, "rate") == 0 || strcmp(name, "cv") == 0;
    case OSN_LAW_LOGNORMAL:
        return strcmp(name, "rate") == 0 || strcmp(name, "cv") == 0 || strcmp(name, "sigma") == 0;
    case OSN_LAW_EMPIRICAL:
        return strcmp(name, "file") == 0;
    default:
        return strcmp(name, "rate") == 0;
    }
}

/* Returns NULL when key `o` applies to the model's shape, else the reason. */
static const char *misplaced(const struct osn_model *m, const struct osn_key_origin *o)
{
    const char *k = o->key;

    if (strncmp(k, "thresholds.", 11) == 0) {
        const char *t = k + 11;
        bool bi = strcmp(t, "L1") == 0 || strcmp(t, "H1") == 0 || strcmp(t, "L2") == 0 ||
                  strcmp(t, "H2") == 0;
        switch (m->kind) {
        case OSN_KIND_TWO_LOOP:
            if (bi || strcmp(t, "B") == 0)
                return "does not apply to a two-loop model (its thresholds are L, H, R)";
            break;
        case OSN_KIND_SINGLE_LOOP:
            if (bi)
                return "does not apply to a single-loop model (its thresholds are L, H and B "
                       "or R)";
            break;
        case OSN_KIND_BI_LEVEL:
            if (strcmp(t, "L") == 0 || strcmp(t, "H") == 0 || strcmp(t, "B") == 0)
                return "does not apply to a bi-level model (its thresholds are L1, H1, L2, H2, "
                       "R)";
            break;
        }
        return NULL;
    }
    if (strncmp(k, "service.", 8) == 0)
        return law_takes(m->service.kind, k + 8) ? NULL
                                                 : "does not apply to this service law (see "
                                                   "'osn solve --help')";
    if (strncmp(k, "arrivals.", 9) != 0 || is_key(o, "arrivals.process") ||
        is_key(o, "arrivals.flows"))
        return NULL;
    switch (m->process) {
    case OSN_ARR_MMPP:
        if (is_key(o, "arrivals.phase_rates") || is_key(o, "arrivals.phase_switch") ||
            is_key(o, "arrivals.overload_accept") || is_key(o, "arrivals.overload_rates"))
            return NULL;
        return "does not apply to MMPP input (it takes phase_rates, phase_switch and "
               "overload_accept or overload_rates)";
    case OSN_ARR_TRACE:
        if (is_key(o, "arrivals.file") || is_key(o, "arrivals.overload_accept"))
            return NULL;
        return "does not apply to trace input (it takes file and overload_accept)";
    default:
        break;
    }
    if (is_key(o, "arrivals.phase_rates") || is_key(o, "arrivals.phase_switch") ||
        is_key(o, "arrivals.overload_rates"))
        return "applies only with arrivals.process = mmpp";
    if (is_key(o, "arrivals.file"))
        return "applies only with arrivals.process = trace";
    if (m->flows == 2) {
        if (is_key(o, "arrivals.rate") || is_key(o, "arrivals.overload_rate") ||
            is_key(o, "arrivals.overload_accept"))
            return "does not apply with flows = 2 (give rate1 and rate2; flow 2 is blocked in "
                   "overload)";
    } else if (is_key(o, "arrivals.rate1") || is_key(o, "arrivals.rate2")) {
        return "applies only with flows = 2 (one flow uses rate and overload_rate)";
    }
    return NULL;
}

/* The value of a model field named by a scenario key, for "(default)" messages. */
static void model_value(const struct osn_model *m, const char *key, char *buf, size_t size)
{
    const struct {
        const char *key;
        const long *ival;
        const double *dval;
    } fields[] = {
            {"thresholds.L", &m->L, NULL},
            {"thresholds.H", &m->H, NULL},
            {"thresholds.L1", &m->L1, NULL},
            {"thresholds.H1", &m->H1, NULL},
            {"thresholds.L2", &m->L2, NULL},
            {"thresholds.H2", &m->H2, NULL},
            {"thresholds.R", &m->R, NULL},
            {"thresholds.B", &m->R, NULL},
            {"arrivals.rate", NULL, &m->rate},
            {"arrivals.overload_rate", NULL, &m->overload_rate},
            {"arrivals.rate1", NULL, &m->rate1},
            {"arrivals.rate2", NULL, &m->rate2},
            {"service.rate", NULL, &m->mu},
    };

    snprintf(buf, size, "?");
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        if (strcmp(fields[i].key, key) != 0)
            continue;
        if (fields[i].ival)
            snprintf(buf, size, "%ld", *fields[i].ival);
        else
            snprintf(buf, size, "%g", *fields[i].dval);
    }
}

/*
 * Maps a key named by osn_model_check() to the key the user set. The derived thresholds of the
 * named kinds map to the keys they come from, overload_rate to overload_accept, and the one-flow
 * rates of a two-flow model to rate1. Returns NULL when none was set (a default); *shown is then
 * the user-facing name of the key.
 */
static const struct osn_key_origin *origin_of(const struct loader *ld, const char *bad,
                                              const char **shown)
{
    const char *cand[3] = {bad, NULL, NULL};
    const struct osn_key_origin *o;
    const struct osn_model *m = &ld->sc->model;

    if (m->kind == OSN_KIND_TWO_LOOP) {
        if (strcmp(bad, "thresholds.L1") == 0)
            cand[0] = "thresholds.L";
        else if (strcmp(bad, "thresholds.H1") == 0 || strcmp(bad, "thresholds.L2") == 0)
            cand[0] = "thresholds.H";
        else if (strcmp(bad, "thresholds.H2") == 0)
            cand[0] = "thresholds.R";
    } else if (m->kind == OSN_KIND_SINGLE_LOOP) {
        if (strcmp(bad, "thresholds.L1") == 0)
            cand[0] = "thresholds.L";
        else if (strcmp(bad, "thresholds.H1") == 0)
            cand[0] = "thresholds.H";
        else if (strcmp(bad, "thresholds.L2") == 0 || strcmp(bad, "thresholds.H2") == 0 ||
                 strcmp(bad, "thresholds.R") == 0)
            cand[0] = "thresholds.R", cand[1] = "thresholds.B";
    }
    if (m->flows == 1 && strcmp(bad, "arrivals.overload_rate") == 0)
        cand[1] = "arrivals.overload_accept";
    if (m->flows == 2 &&
        (strcmp(bad, "arrivals.rate") == 0 || strcmp(bad, "arrivals.overload_rate") == 0))
        cand[0] = "arrivals.rate1", cand[1] = "arrivals.rate2";

    *shown = cand[0];
    for (int i = 0; i < 3 && cand[i]; i++)
        if ((o = get(ld, cand[i])))
            return o;
    return NULL;
}

/*
 * True when `later` (an override) replaces `earlier`, a synonym set in the file: an override of
 * overload_accept drops the file's overload_rate, and of B the file's R. Two synonyms from the
 * same source stay an error.
 */
static bool replaces(const struct osn_key_origin *later, const struct osn_key_origin *earlier)
{
    return strncmp(later->where, "--set", 5) == 0 && strncmp(earlier->where, "--set", 5) != 0;
}

/*
 * Reads the numbers of a samples or trace file named by key `o` (relative paths are taken from
 * the scenario file's directory when the key came from the file). Returns 0 with a new array.
 */
static int read_numbers(struct loader *ld, const struct osn_key_origin *o, bool ascending,
                        double **out, size_t *count)
{
    char path[4096];
    const char *scen = ld->sc->ini.path;
    const char *slash = strrchr(scen, '/');
    if (o->value[0] != '/' && strncmp(o->where, "--set", 5) != 0 && slash)
        snprintf(path, sizeof path, "%.*s/%s", (int)(slash - scen), scen, o->value);
    else
        snprintf(path, sizeof path, "%s", o->value);
    FILE *f = fopen(path, "r");
    if (!f)
        return osn_ini_bad(o, ld->msg, ld->msgsize, "cannot open %s: %s", path, strerror(errno));
    size_t n = 0, cap = 1024;
    double *v = malloc(cap * sizeof *v);
    char line[512];
    int lineno = 0, rc = 0, st;
    size_t len;
    while (v && (st = osn_ini_getline(f, line, sizeof line, &len)) != OSN_INI_LINE_EOF) {
        lineno++;
        char *p = line, *end;
        if (st != OSN_INI_LINE_OK) { /* /dev/zero as service.file once spun forever */
            rc = fail(ld, OSN_ECONFIG, "%s:%d: %s (from key '%s' at %s)", path, lineno,
                      st == OSN_INI_LINE_NUL ? "a NUL byte: binary data, not a list of numbers"
                                             : "line longer than 510 characters",
                      o->key, o->where);
            break;
        }
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '#' || *p == ';' || *p == '\n' || *p == '\0')
            continue;
        double x = strtod(p, &end);
        while (*end == ' ' || *end == '\t' || *end == '\r' || *end == '\n')
            end++;
        if (end == p || *end || !isfinite(x) || x < 0 || (ascending && n > 0 && x < v[n - 1])) {
            rc = fail(ld, OSN_ECONFIG, "%s:%d: %s (from key '%s' at %s)", path, lineno,
                      ascending ? "expected one arrival time per line, non-negative and "
                                  "ascending"
                                : "expected one non-negative number per line",
                      o->key, o->where);
            break;
        }
        if (n == cap) {
            double *w = realloc(v, 2 * cap * sizeof *v);
            if (!w) {
                free(v);
                v = NULL;
                break;
            }
            v = w;
            cap *= 2;
        }
        v[n++] = x;
    }
    fclose(f);
    if (!v)
        return fail(ld, OSN_ENOMEM, "%s: out of memory reading %s", o->where, path);
    if (!rc && n == 0)
        rc = osn_ini_bad(o, ld->msg, ld->msgsize, "%s holds no numbers", path);
    if (rc) {
        free(v);
        return rc;
    }
    *out = v;
    *count = n;
    return 0;
}

/* [service]: the law's parameters, checked. */
static int apply_service(struct loader *ld, struct osn_model *m)
{
    struct osn_law *law = &m->service;
    const struct osn_key_origin *o, *probs = get(ld, "service.probs"),
                                    *rates = get(ld, "service.rates");
    char *msg = ld->msg;
    size_t ms = ld->msgsize;
    int rc;

    switch (law->kind) {
    case OSN_LAW_ERLANG:
        if (!get(ld, "service.k"))
            law->k = 2;
        break;
    case OSN_LAW_HYPEREXP: {
        int np = 0, nr = 0;
        if (!probs || !rates)
            return fail(ld, OSN_ECONFIG,
                        "%s: service.law = hyperexp needs service.probs and service.rates",
                        (o = get(ld, "service.law")) ? o->where : "(default)");
        if ((rc = osn_ini_doubles(probs, law->probs, OSN_LAW_MAX_BRANCHES, &np, msg, ms)) ||
            (rc = osn_ini_doubles(rates, law->rates, OSN_LAW_MAX_BRANCHES, &nr, msg, ms)))
            return rc;
        if (np != nr)
            return osn_ini_bad(rates, msg, ms, "%d rates for %d probabilities", nr, np);
        double sp = 0, mean = 0;
        for (int i = 0; i < np; i++) {
            if (!(law->rates[i] > 0))
                return osn_ini_bad(rates, msg, ms, "every rate must be greater than 0");
            sp += law->probs[i];
            mean += law->probs[i] / law->rates[i];
        }
        if (fabs(sp - 1) > 1e-9)
            return osn_ini_bad(probs, msg, ms, "probabilities sum to %.12g, not 1", sp);
        law->nbranch = np;
        law->rate = 1 / mean;
        break;
    }
    case OSN_LAW_UNIFORM:
    case OSN_LAW_LOGNORMAL: {
        const struct osn_key_origin *cv = get(ld, "service.cv"), *sg = get(ld, "service.sigma");
        law->cv = law->kind == OSN_LAW_UNIFORM ? 0.5 : 1;
        if (cv && sg)
            return osn_ini_bad(sg, msg, ms, "give service.cv or service.sigma, not both");
        if (cv && (rc = osn_ini_double(cv, 0, false, &law->cv, msg, ms)))
            return rc;
        if (sg) {
            double sigma;
            if ((rc = osn_ini_double(sg, 0, false, &sigma, msg, ms)))
                return rc;
            law->cv = sqrt(expm1(sigma * sigma));
        }
        if (law->kind == OSN_LAW_UNIFORM && law->cv > 1 / sqrt(3.0) + 1e-12)
            return osn_ini_bad(cv ? cv : get(ld, "service.law"), msg, ms,
                               "a uniform law on [0, 2/rate] has the largest cv, 1/sqrt(3)");
        break;
    }
    case OSN_LAW_EMPIRICAL: {
        if (!(o = get(ld, "service.file")))
            return fail(ld, OSN_ECONFIG, "%s: service.law = empirical needs service.file",
                        get(ld, "service.law")->where);
        if ((rc = read_numbers(ld, o, false, &law->samples, &law->nsamples)))
            return rc;
        double sum = 0;
        for (size_t i = 0; i < law->nsamples; i++)
            sum += law->samples[i];
        if (!(sum > 0))
            return osn_ini_bad(o, msg, ms, "the samples have mean 0");
        law->rate = (double)law->nsamples / sum;
        if (!isfinite(sum)) { /* samples near the top of the double range: mean by parts */
            double mean = 0;
            for (size_t i = 0; i < law->nsamples; i++)
                mean += law->samples[i] / (double)law->nsamples;
            law->rate = 1 / mean;
            sum = mean * (double)law->nsamples;
        }
        /* A file of 4.9e-324 once blamed service.rate = inf, a key nobody set. */
        if (!isfinite(law->rate) || !(law->rate > 0))
            return osn_ini_bad(o, msg, ms,
                               "the samples' mean %g s gives no finite service rate (1/mean)",
                               sum / (double)law->nsamples);
        break;
    }
    default:
        break;
    }
    m->mu = law->rate;
    return 0;
}

/* [arrivals] with process = mmpp. */
static int apply_mmpp(struct loader *ld, struct osn_model *m)
{
    struct osn_mmpp *p = &m->mmpp;
    const struct osn_key_origin *pr = get(ld, "arrivals.phase_rates"),
                                *ps = get(ld, "arrivals.phase_switch"),
                                *acc = get(ld, "arrivals.overload_accept"),
                                *ors = get(ld, "arrivals.overload_rates");
    const char *where = get(ld, "arrivals.process")->where;
    double sw[OSN_MMPP_MAX * OSN_MMPP_MAX];
    int n = 0, ns = 0, rc;

    if (!pr || !ps)
        return fail(ld, OSN_ECONFIG,
                    "%s: arrivals.process = mmpp needs arrivals.phase_rates and "
                    "arrivals.phase_switch",
                    where);
    if ((rc = osn_ini_doubles(pr, p->rate, OSN_MMPP_MAX, &n, ld->msg, ld->msgsize)))
        return rc;
    if (n < 2)
        return osn_ini_bad(pr, ld->msg, ld->msgsize, "an MMPP has at least 2 phases");
    p->K = n;
    if ((rc = osn_ini_doubles(ps, sw, OSN_MMPP_MAX * OSN_MMPP_MAX, &ns, ld->msg, ld->msgsize)))
        return rc;
    if (ns != n * (n - 1))
        return osn_ini_bad(ps, ld->msg, ld->msgsize,
                           "expected the %d off-diagonal switch rates of a %d-phase generator, "
                           "row by row",
                           n * (n - 1), n);
    for (int i = 0, k = 0; i < n; i++) {
        double out = 0;
        for (int j = 0; j < n; j++) {
            p->gen[i][j] = i == j ? 0 : sw[k++];
            out += p->gen[i][j];
        }
        if (!(out > 0))
            return osn_ini_bad(ps, ld->msg, ld->msgsize, "phase %d is never left", i + 1);
    }
    if (acc && ors)
        return osn_ini_bad(ors, ld->msg, ld->msgsize,
                           "give arrivals.overload_accept or arrivals.overload_rates, not both");
    double a = DEF_ACCEPT;
    if (acc && (rc = osn_ini_double(acc, 0, false, &a, ld->msg, ld->msgsize)))
        return rc;
    if (a > 1)
        return osn_ini_bad(acc, ld->msg, ld->msgsize, "must be a fraction in [0, 1]");
    double r1[OSN_MMPP_MAX];
    if (ors) {
        int nr = 0;
        if ((rc = osn_ini_doubles(ors, r1, OSN_MMPP_MAX, &nr, ld->msg, ld->msgsize)))
            return rc;
        if (nr != n)
            return osn_ini_bad(ors, ld->msg, ld->msgsize, "expected %d rates, one per phase", n);
    }
    for (int k = 0; k < n; k++) {
        p->accept[0][k] = 1;
        p->accept[2][k] = 0;
        if (ors) {
            if (r1[k] > p->rate[k])
                return osn_ini_bad(ors, ld->msg, ld->msgsize,
                                   "phase %d: %g exceeds its phase rate %g", k + 1, r1[k],
                                   p->rate[k]);
            p->accept[1][k] = p->rate[k] > 0 ? r1[k] / p->rate[k] : 0;
        } else {
            p->accept[1][k] = a;
        }
    }
    /* The long-run rates stand for the flow in checks, messages and the echo. */
    m->flows = 1;
    m->rate = osn_mmpp_mean_rate(p, 0);
    m->overload_rate = osn_mmpp_mean_rate(p, 1);
    if (!(m->rate > 0))
        return osn_ini_bad(pr, ld->msg, ld->msgsize, "every phase rate is 0");
    return 0;
}

/* [arrivals] with process = poisson or trace, and the two-flow keys. */
static int apply_poisson(struct loader *ld, struct osn_model *m)
{
    const struct osn_key_origin *o, *accept = NULL, *orate = NULL;
    double rate = m->rate, overload_rate = 0, accept_frac = DEF_ACCEPT;
    int rc;

    for (int i = 0; i < ld->sc->ini.nkeys; i++) {
        o = &ld->sc->ini.keys[i];
        if (is_key(o, "arrivals.overload_rate") || is_key(o, "arrivals.overload_accept")) {
            if ((orate || accept) && replaces(o, orate ? orate : accept))
                orate = accept = NULL;
            if (orate || accept)
                return fail(ld, OSN_ECONFIG,
                            "%s: key '%s': give arrivals.overload_rate or "
                            "arrivals.overload_accept, not both (other one at %s)",
                            o->where, o->key, (orate ? orate : accept)->where);
            if (is_key(o, "arrivals.overload_rate")) {
                if ((rc = osn_ini_double(o, 0, false, &overload_rate, ld->msg, ld->msgsize)))
                    return rc;
                orate = o;
            } else {
                if ((rc = osn_ini_double(o, 0, true, &accept_frac, ld->msg, ld->msgsize)))
                    return rc;
                if (accept_frac > 1)
                    return osn_ini_bad(o, ld->msg, ld->msgsize, "must be a fraction in (0, 1]");
                accept = o;
            }
        }
    }
    if (m->process == OSN_ARR_TRACE) {
        if (!(o = get(ld, "arrivals.file")))
            return fail(ld, OSN_ECONFIG, "%s: arrivals.process = trace needs arrivals.file",
                        get(ld, "arrivals.process")->where);
        if ((rc = read_numbers(ld, o, true, &m->trace, &m->ntrace)))
            return rc;
        double span = m->trace[m->ntrace - 1];
        rate = span > 0 ? (double)m->ntrace / span : 1;
    }
    if (m->flows == 1) {
        m->rate = rate;
        m->overload_rate = orate ? overload_rate : accept_frac * rate;
        m->rate1 = m->rate2 = 0;
        if (orate && overload_rate > rate)
            return osn_ini_bad(orate, ld->msg, ld->msgsize,
                               "exceeds arrivals.rate (%g): overload control only thins traffic",
                               rate);
    } else {
        /* Two flows make the same (mode, n) chain as one flow thinned to flow 1. */
        m->rate = m->rate1 + m->rate2;
        m->overload_rate = m->rate1;
    }
    return 0;
}

/* Parses the collected values into the model, resolves and checks it. */
static int apply(struct loader *ld)
{
    struct osn_scenario *sc = ld->sc;
    struct osn_model *m = &sc->model;
    const struct osn_key_origin *o, *rkey = NULL;
    const char *reason, *bad = NULL, *shown;
    char why[256], val[64];
    int rc;

    osn_scenario_model_default(m);
    if ((rc = osn_ini_load(&sc->ini, &osn_model_schema, m, ld->msg, ld->msgsize)) ||
        (rc = check_shape(ld, m)))
        return rc;

    for (int i = 0; i < sc->ini.nkeys; i++) {
        o = &sc->ini.keys[i];
        if (strncmp(o->key, "model.", 6) != 0 && strncmp(o->key, "thresholds.", 11) != 0 &&
            strncmp(o->key, "arrivals.", 9) != 0 && strncmp(o->key, "service.", 8) != 0)
            continue; /* a section of the caller's schema */
        if ((reason = misplaced(m, o)))
            return fail(ld, OSN_ECONFIG, "%s: key '%s' %s", o->where, o->key, reason);
        if (!is_key(o, "thresholds.R") && !is_key(o, "thresholds.B"))
            continue;
        /* R and B are one threshold: the later of the two, an override, wins over the file. */
        if (rkey && !replaces(o, rkey))
            return fail(ld, OSN_ECONFIG,
                        "%s: key '%s': give thresholds.R or thresholds.B, not both "
                        "(other one at %s)",
                        o->where, o->key, rkey->where);
        rkey = o;
    }
    if (rkey && (rc = osn_ini_long(rkey, 0, OSN_R_MAX, &m->R, ld->msg, ld->msgsize)))
        return rc;
    if ((rc = apply_service(ld, m)))
        return rc;
    rc = m->process == OSN_ARR_MMPP ? apply_mmpp(ld, m) : apply_poisson(ld, m);
    if (rc)
        return rc;

    osn_model_resolve(m);
    why[0] = '\0';
    rc = osn_model_check(m, &bad, why, sizeof why);
    /* The check of the solver's memory comes last, so everything else has been checked: R =
     * 1e9 once refused `osn sim` with the solver's 268 GB, while the simulator needs little. */
    if (rc == OSN_ETOOBIG && ld->no_solver)
        rc = 0;
    if (rc) {
        if (!why[0])
            snprintf(why, sizeof why, "%s", osn_strerror(rc));
        if (!bad)
            return fail(ld, rc, "%s: %s", sc->ini.path[0] ? sc->ini.path : "scenario", why);
        o = origin_of(ld, bad, &shown);
        if (o)
            return fail(ld, rc, "%s: key '%s' = '%s': %s", o->where, o->key, o->value, why);
        model_value(m, shown, val, sizeof val);
        return fail(ld, rc, "(default): key '%s' = '%s': %s", shown, val, why);
    }
    return 0;
}

void osn_scenario_release(struct osn_scenario *sc)
{
    if (!sc)
        return;
    free(sc->model.service.samples);
    free(sc->model.trace);
    sc->model.service.samples = NULL;
    sc->model.trace = NULL;
    sc->model.service.nsamples = sc->model.ntrace = 0;
    osn_ini_free(&sc->ini);
}

int osn_scenario_load(struct osn_scenario *sc, const char *path, const char *const *sets, int nsets,
                      const struct osn_ini_schema *extra, char *err, size_t errsize)
{
    return osn_scenario_load_sim(sc, path, sets, nsets, extra, false, err, errsize);
}

int osn_scenario_load_sim(struct osn_scenario *sc, const char *path, const char *const *sets,
                          int nsets, const struct osn_ini_schema *extra, bool for_sim, char *err,
                          size_t errsize)
{
    if (err && errsize)
        err[0] = '\0';
    if (!sc) {
        if (err && errsize)
            snprintf(err, errsize, "osn_scenario_load: invalid argument");
        return OSN_EINVAL;
    }
    /* Built aside and copied on success, so *sc is only written when the load succeeds. */
    struct osn_scenario *tmp = calloc(1, sizeof *tmp);
    if (!tmp) {
        if (err && errsize)
            snprintf(err, errsize, "out of memory");
        return OSN_ENOMEM;
    }
    struct loader ld = {tmp, err, errsize, for_sim};
    int rc = osn_ini_collect(&tmp->ini, path, sets, nsets, extra ? extra : &osn_model_schema, err,
                             errsize);
    if (!rc)
        rc = apply(&ld);
    if (rc)
        osn_scenario_release(tmp);
    else
        *sc = *tmp;
    free(tmp);
    return rc;
}

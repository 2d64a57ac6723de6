/*
 * Result writers: the human table, JSON and CSV.
 *
 * All three print the same measures from one table (key, unit, meaning). The measures are
 * osn_xd values that may lie outside the double range (a cycle time of 1e+2000 s): the table
 * prints them as osn_xd_format() gives them, never as inf or 0; JSON and CSV write a value that
 * fits a double as a full-precision number (17 significant digits, which round-trips) and any
 * other as a decimal string with 12 digits, and JSON lists those keys in "beyond_double_range"
 * so a reader knows which strings to expect. A value that is not a number at all (0/0 when a
 * mode is never visited) is "n/a" in the table, null in JSON and an empty CSV cell, as is
 * T_ret_sd when the method did not compute it.
 */
#include "io_int.h"

#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "osn/err.h"
#include "osn/version.h"

enum row_type {
    ROW_XD,     /* an osn_xd measure */
    ROW_STATES, /* the state count (a long) */
    ROW_METHOD, /* the method name */
};

struct row {
    const char *key;
    enum row_type type;
    size_t off; /* offset of the osn_xd in struct osn_measures */
    const char *unit;
    const char *meaning;
};

#define XD(key, field, unit, meaning)                                    \
    {                                                                    \
        key, ROW_XD, offsetof(struct osn_measures, field), unit, meaning \
    }

/* The measures in output order; loss_flow1/loss_flow2 follow separately. */
static const struct row rows[] = {
        XD("P0", P[0], "", "fraction of time in normal mode"),
        XD("P1", P[1], "", "fraction of time in overload mode"),
        XD("P2", P[2], "", "fraction of time in discard mode"),
        XD("N_mean", N_mean, "", "mean number of customers in the system"),
        XD("throughput", throughput, "1/s", "departures per second"),
        XD("sojourn", sojourn, "s", "mean time in the system, N_mean/throughput"),
        XD("T_ret", T_ret, "s", "mean return time, overload onset to normal mode"),
        XD("T_ret_sd", T_ret_sd, "s", "standard deviation of the return time"),
        XD("T_ret_p50", T_ret_q[0], "s", "median return time"),
        XD("T_ret_p90", T_ret_q[1], "s", "90% of overload episodes end within this"),
        XD("T_ret_p95", T_ret_q[2], "s", "95% of overload episodes end within this"),
        XD("T_ret_p99", T_ret_q[3], "s", "99% of overload episodes end within this"),
        XD("T_ret_dist_err", T_ret_dist_err, "", "error estimate of P(T_ret > t) (absolute)"),
        XD("T_cyc", T_cyc, "s", "mean control cycle, onset to next onset (1/nu01)"),
        XD("T_norm", T_norm, "s", "mean normal period, T_cyc - T_ret"),
        XD("T_disc", T_disc, "s", "mean discard visit, P2/nu12"),
        XD("mode_change_rate", mode_change_rate, "1/s", "mode changes per second"),
        XD("theta", theta, "", "fraction of offered traffic not accepted"),
        {"states", ROW_STATES, 0, "", "states of the Markov chain"},
        XD("nu01", nu01, "1/s", "overload onsets per second"),
        XD("nu12", nu12, "1/s", "discard onsets per second"),
        XD("T_ret_renewal", T_ret_renewal, "s", "(P1+P2)/nu01, renewal check of T_ret"),
        XD("prob_sum", prob_sum, "", "sum of the stationary probabilities (1)"),
        {"method", ROW_METHOD, 0, "", "method that ran"},
};

#define NROWS (sizeof rows / sizeof rows[0])

static struct osn_xd row_xd(const struct osn_measures *ms, const struct row *r)
{
    struct osn_xd x;
    memcpy(&x, (const char *)ms + r->off, sizeof x);
    return x;
}

/* False for a measure that has no value: not computed, or not a number. */
static bool has_value(const struct osn_measures *ms, const char *key, struct osn_xd x)
{
    if (strcmp(key, "T_ret_sd") == 0 && !ms->have_sd)
        return false;
    if (strncmp(key, "T_ret_p", 7) == 0 || strcmp(key, "T_ret_dist_err") == 0)
        return ms->have_tret_q && isfinite(x.m);
    return isfinite(x.m);
}

static const char *kind_name(enum osn_model_kind kind)
{
    switch (kind) {
    case OSN_KIND_TWO_LOOP:
        return "two-loop";
    case OSN_KIND_SINGLE_LOOP:
        return "single-loop";
    case OSN_KIND_BI_LEVEL:
        return "bi-level";
    }
    return "?";
}

static const char *policy_name(enum osn_policy policy)
{
    return osn__policy_names[policy == OSN_POLICY_II];
}

static const char *const law_names[] = {"exp",     "det",       "erlang",   "hyperexp",
                                        "uniform", "lognormal", "empirical"};
/* Kendall letters of the service laws. */
static const char *const law_letters[] = {"M", "D", "E", "H", "U", "LN", "G"};

static const char *input_letters(const struct osn_model *m, char *buf, size_t size)
{
    if (m->process == OSN_ARR_MMPP)
        snprintf(buf, size, "MMPP%d", m->mmpp.K);
    else if (m->process == OSN_ARR_TRACE)
        snprintf(buf, size, "Trace");
    else
        snprintf(buf, size, "%s", m->flows == 2 ? "M2" : "M");
    return buf;
}

/* "two-loop M|M|1 <L,H>|<H,R>: L=5 H=10 R=20, lambda=1.2 lambda'=0.6 mu=1, policy I" */
void osn__report_model_line(FILE *f, const struct osn_model *m)
{
    char ibuf[32];
    const char *input = input_letters(m, ibuf, sizeof ibuf);
    const char *law = law_letters[m->service.kind];

    switch (m->kind) {
    case OSN_KIND_TWO_LOOP:
        fprintf(f, "two-loop %s|%s|1 <L,H>|<H,R>: L=%ld H=%ld R=%ld", input, law, m->L, m->H, m->R);
        break;
    case OSN_KIND_SINGLE_LOOP:
        fprintf(f, "single-loop %s|%s|1 <L,H>|B: L=%ld H=%ld B=%ld", input, law, m->L, m->H, m->R);
        break;
    case OSN_KIND_BI_LEVEL:
        fprintf(f, "bi-level %s|%s|1: L1=%ld H1=%ld L2=%ld H2=%ld R=%ld", input, law, m->L1, m->H1,
                m->L2, m->H2, m->R);
        break;
    }
    if (m->flows == 2)
        fprintf(f, ", lambda1=%.6g lambda2=%.6g", m->rate1, m->rate2);
    else if (m->process == OSN_ARR_MMPP)
        fprintf(f, ", mean lambda=%.6g lambda'=%.6g", m->rate, m->overload_rate);
    else
        fprintf(f, ", lambda=%.6g lambda'=%.6g", m->rate, m->overload_rate);
    fprintf(f, " mu=%.6g, policy %s\n", m->mu, policy_name(m->policy));
}

/* A measure for the table: 7 significant digits at any magnitude, or "n/a". */
static const char *table_value(const struct osn_measures *ms, const char *key, struct osn_xd x,
                               char *buf, size_t size)
{
    return has_value(ms, key, x) ? osn_xd_format(x, 7, buf, size) : "n/a";
}

static void print_row(FILE *f, const char *key, const char *value, const char *unit,
                      const char *meaning)
{
    fprintf(f, "  %-17s %-15s %-4s %s\n", key, value, unit, meaning);
}

/*
 * Prints the model, the method and one line per measure (name, value to 7 significant digits,
 * unit, meaning). Write errors are left in the stream's error flag for the caller to check.
 */
void osn_report_table(FILE *f, const struct osn_scenario *sc, const struct osn_measures *ms)
{
    char buf[64];

    osn__report_model_line(f, &sc->model);
    if (sc->ini.path[0])
        fprintf(f, "scenario: %s\n", sc->ini.path);
    if (ms->method == OSN_METHOD_CLOSED)
        fprintf(f, "method: closed (closed forms, %ld states)\n", ms->states);
    else
        fprintf(f, "method: %s (structured block-tridiagonal solver, %ld states)\n",
                osn_method_name(ms->method), ms->states);
    fprintf(f, "\n");
    print_row(f, "measure", "value", "unit", "meaning");
    for (size_t i = 0; i < NROWS; i++) {
        const struct row *r = &rows[i];
        if (r->type != ROW_XD)
            continue; /* states and method are in the header */
        struct osn_xd x = row_xd(ms, r);
        print_row(f, r->key, table_value(ms, r->key, x, buf, sizeof buf), r->unit, r->meaning);
    }
    if (sc->model.flows == 2) {
        print_row(f, "loss_flow1", table_value(ms, "loss_flow1", ms->loss_flow1, buf, sizeof buf),
                  "", "fraction of flow 1 (priority) arrivals lost");
        print_row(f, "loss_flow2", table_value(ms, "loss_flow2", ms->loss_flow2, buf, sizeof buf),
                  "", "fraction of flow 2 arrivals lost");
    }
    for (int k = 0; k < ms->nphase; k++) {
        char key[32], meaning[96], b2[64];
        snprintf(key, sizeof key, "T_ret_phase%d", k + 1);
        snprintf(meaning, sizeof meaning,
                 "mean return time after an onset in phase %d (%s of onsets)", k + 1,
                 table_value(ms, key, ms->onset_phase[k], b2, sizeof b2));
        print_row(f, key, table_value(ms, key, ms->T_ret_phase[k], buf, sizeof buf), "s", meaning);
    }
}

/* ---- JSON ---- */

/* A measure as JSON: a real if it fits a double, else a string listed in `beyond`. */
static json_t *xd_json(struct osn_xd x, const char *key, json_t *beyond)
{
    char buf[64];

    if (!isfinite(x.m))
        return json_null();
    if (osn_xd_fits_double(x))
        return json_real(osn_xd_to_double(x));
    if (json_array_append_new(beyond, json_string(key)) != 0)
        return NULL;
    return json_string(osn_xd_format(x, 12, buf, sizeof buf));
}

/* root[key] = v (from xd_json); when v is a string beyond the double range, also a real
 * KEY_log10 after it, so that a dataframe column of KEY_log10 stays numeric where KEY cannot. */
static int set_measure(json_t *root, const char *key, json_t *v, struct osn_xd x)
{
    char lkey[64];

    if (json_object_set_new(root, key, v) != 0)
        return -1;
    if (!json_is_string(v))
        return 0;
    snprintf(lkey, sizeof lkey, "%s_log10", key);
    return json_object_set_new(root, lkey, json_real(osn_xd_log10(x)));
}

/* root[key] = an array of the n measures x (from xd_json); when one of them is a string beyond
 * the double range, also KEY_log10, the array of their log10 (null for 0 or no value), as for
 * a single measure. key is listed in `beyond` once. */
static int set_measures(json_t *root, const char *key, const struct osn_xd *x, int n,
                        json_t *beyond)
{
    json_t *a = json_array(), *lg = json_array(), *scratch = json_array();
    bool any = false;
    char lkey[64];
    int err = !a || !lg || !scratch;

    for (int k = 0; k < n && !err; k++) {
        json_t *v = xd_json(x[k], key, scratch);
        any |= json_is_string(v);
        err |= json_array_append_new(a, v);
        err |= json_array_append_new(
                lg, isfinite(x[k].m) && x[k].m != 0 ? json_real(osn_xd_log10(x[k])) : json_null());
    }
    json_decref(scratch);
    err |= json_object_set_new(root, key, a);
    snprintf(lkey, sizeof lkey, "%s_log10", key);
    if (any && !err) {
        err |= json_array_append_new(beyond, json_string(key));
        err |= json_object_set_new(root, lkey, lg);
    } else {
        json_decref(lg);
    }
    return err ? -1 : 0;
}

/* The "scenario" object: the model as solved, where it came from and every key that was set. */
json_t *osn__report_scenario_json(const struct osn_scenario *sc)
{
    const struct osn_model *m = &sc->model;
    json_t *o = json_object();
    json_t *keys = json_object();
    int err = 0;

    if (!o || !keys) {
        json_decref(o);
        json_decref(keys);
        return NULL;
    }
    err |= json_object_set_new(o, "kind", json_string(kind_name(m->kind)));
    err |= json_object_set_new(o, "policy", json_string(policy_name(m->policy)));
    if (m->kind != OSN_KIND_BI_LEVEL) {
        err |= json_object_set_new(o, "L", json_integer(m->L));
        err |= json_object_set_new(o, "H", json_integer(m->H));
    }
    if (m->kind == OSN_KIND_SINGLE_LOOP)
        err |= json_object_set_new(o, "B", json_integer(m->R));
    err |= json_object_set_new(o, "L1", json_integer(m->L1));
    err |= json_object_set_new(o, "H1", json_integer(m->H1));
    err |= json_object_set_new(o, "L2", json_integer(m->L2));
    err |= json_object_set_new(o, "H2", json_integer(m->H2));
    err |= json_object_set_new(o, "R", json_integer(m->R));
    err |= json_object_set_new(o, "flows", json_integer(m->flows));
    if (m->flows == 2) {
        err |= json_object_set_new(o, "rate1", json_real(m->rate1));
        err |= json_object_set_new(o, "rate2", json_real(m->rate2));
    } else {
        err |= json_object_set_new(o, "rate", json_real(m->rate));
        err |= json_object_set_new(o, "overload_rate", json_real(m->overload_rate));
    }
    static const char *const process_names[] = {"poisson", "mmpp", "trace"};
    err |= json_object_set_new(o, "process", json_string(process_names[m->process]));
    if (m->process == OSN_ARR_MMPP) {
        json_t *pr = json_array(), *a1 = json_array();
        for (int k = 0; k < m->mmpp.K; k++) {
            err |= json_array_append_new(pr, json_real(m->mmpp.rate[k]));
            err |= json_array_append_new(a1, json_real(m->mmpp.accept[1][k]));
        }
        err |= json_object_set_new(o, "phase_rates", pr);
        err |= json_object_set_new(o, "overload_accept", a1);
    }
    err |= json_object_set_new(o, "law", json_string(law_names[m->service.kind]));
    err |= json_object_set_new(o, "mu", json_real(m->mu));
    err |= json_object_set_new(o, "source",
                               sc->ini.path[0] ? json_string(sc->ini.path) : json_null());
    for (int i = 0; i < sc->ini.nkeys; i++)
        err |= json_object_set_new(keys, sc->ini.keys[i].key, json_string(sc->ini.keys[i].value));
    err |= json_object_set_new(o, "keys", keys);
    if (err) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* Builds the whole result document; NULL when out of memory. */
static json_t *result_json(const struct osn_scenario *sc, const struct osn_measures *ms)
{
    json_t *root = json_object();
    json_t *beyond = json_array();
    int err = 0;

    if (!root || !beyond) {
        json_decref(root);
        json_decref(beyond);
        return NULL;
    }
    for (size_t i = 0; i < NROWS; i++) {
        const struct row *r = &rows[i];
        json_t *v;
        if (r->type == ROW_STATES) {
            v = json_integer(ms->states);
        } else if (r->type == ROW_METHOD) {
            v = json_string(osn_method_name(ms->method));
        } else {
            struct osn_xd x = row_xd(ms, r);
            v = has_value(ms, r->key, x) ? xd_json(x, r->key, beyond) : json_null();
            err |= set_measure(root, r->key, v, x);
            continue;
        }
        err |= json_object_set_new(root, r->key, v);
    }
    if (sc->model.flows == 2) {
        err |= set_measure(root, "loss_flow1", xd_json(ms->loss_flow1, "loss_flow1", beyond),
                           ms->loss_flow1);
        err |= set_measure(root, "loss_flow2", xd_json(ms->loss_flow2, "loss_flow2", beyond),
                           ms->loss_flow2);
    } else {
        /* One flow: its loss is theta. */
        err |= set_measure(root, "loss_flow1", xd_json(ms->theta, "loss_flow1", beyond), ms->theta);
    }
    if (ms->nphase > 0) {
        err |= set_measures(root, "onset_phase", ms->onset_phase, ms->nphase, beyond);
        err |= set_measures(root, "T_ret_phase", ms->T_ret_phase, ms->nphase, beyond);
    }
    err |= json_object_set_new(root, "beyond_double_range", beyond);
    err |= json_object_set_new(root, "scenario", osn__report_scenario_json(sc));
    if (err) {
        json_decref(root);
        return NULL;
    }
    return root;
}

int osn_report_json_write(FILE *f, const struct osn_scenario *sc, const struct osn_measures *ms,
                          char *err, size_t errsize)
{
    json_t *root;
    int rc = 0;

    if (!f || !sc || !ms)
        return OSN_EINVAL;
    root = result_json(sc, ms);
    if (!root) {
        if (err && errsize)
            snprintf(err, errsize, "out of memory building the JSON result");
        return OSN_ENOMEM;
    }
    rc = osn__report_json_dump(f, root, 17, err, errsize);
    json_decref(root);
    return rc;
}

/* Adds "osn_version" to an object that lacks it; 0 or -1 (out of memory). */
static int stamp_version(json_t *o)
{
    if (!json_is_object(o) || json_object_get(o, "osn_version"))
        return 0;
    return json_object_set_new(o, "osn_version", json_string(osn_version()));
}

int osn__report_json_dump(FILE *f, json_t *doc, int precision, char *err, size_t errsize)
{
    int stamp = stamp_version(doc);
    size_t i;
    json_t *el;

    json_array_foreach(doc, i, el)
    {
        stamp |= stamp_version(el);
    }
    if (stamp) {
        if (err && errsize)
            snprintf(err, errsize, "out of memory building the JSON result");
        return OSN_ENOMEM;
    }
    if (json_dumpf(doc, f, JSON_INDENT(2) | JSON_REAL_PRECISION(precision)) != 0 ||
        fputc('\n', f) == EOF) {
        if (err && errsize)
            snprintf(err, errsize, "cannot write the JSON result");
        return OSN_EIO;
    }
    return 0;
}

/* ---- CSV ---- */

/* One CSV cell: %.17g, the 12-digit decimal string beyond the double range, or empty. */
static void csv_xd(FILE *f, struct osn_xd x, bool present)
{
    char buf[64];

    if (!present || !isfinite(x.m))
        return;
    if (osn_xd_fits_double(x))
        fprintf(f, "%.17g", osn_xd_to_double(x));
    else
        fputs(osn_xd_format(x, 12, buf, sizeof buf), f);
}

/* log10 of a measure for its KEY_log10 column: empty when absent, zero or not a number. */
static void csv_log10(FILE *f, struct osn_xd x, bool present)
{
    if (present && isfinite(x.m) && x.m != 0)
        fprintf(f, "%.17g", osn_xd_log10(x));
}

/*
 * The header is the same for every model, so rows of several runs can be concatenated:
 * loss_flow2 is an empty cell with one flow, and loss_flow1 is then theta. After the measures,
 * KEY_log10 for each of them (numeric even where KEY is a string beyond the double range), then
 * the OSN version that wrote the row.
 */
int osn_report_csv_write(FILE *f, const struct osn_scenario *sc, const struct osn_measures *ms,
                         char *err, size_t errsize)
{
    if (!f || !sc || !ms)
        return OSN_EINVAL;
    for (size_t i = 0; i < NROWS; i++)
        fprintf(f, "%s,", rows[i].key);
    fprintf(f, "loss_flow1,loss_flow2");
    for (size_t i = 0; i < NROWS; i++)
        if (rows[i].type == ROW_XD)
            fprintf(f, ",%s_log10", rows[i].key);
    fprintf(f, ",loss_flow1_log10,loss_flow2_log10,osn_version\n");
    for (size_t i = 0; i < NROWS; i++) {
        const struct row *r = &rows[i];
        if (r->type == ROW_STATES) {
            fprintf(f, "%ld", ms->states);
        } else if (r->type == ROW_METHOD) {
            fputs(osn_method_name(ms->method), f);
        } else {
            struct osn_xd x = row_xd(ms, r);
            csv_xd(f, x, has_value(ms, r->key, x));
        }
        fputc(',', f);
    }
    if (sc->model.flows == 2) {
        csv_xd(f, ms->loss_flow1, true);
        fputc(',', f);
        csv_xd(f, ms->loss_flow2, true);
    } else {
        csv_xd(f, ms->theta, true);
        fputc(',', f);
    }
    for (size_t i = 0; i < NROWS; i++) {
        const struct row *r = &rows[i];
        if (r->type != ROW_XD)
            continue;
        struct osn_xd x = row_xd(ms, r);
        fputc(',', f);
        csv_log10(f, x, has_value(ms, r->key, x));
    }
    fputc(',', f);
    csv_log10(f, sc->model.flows == 2 ? ms->loss_flow1 : ms->theta, true);
    fputc(',', f);
    csv_log10(f, ms->loss_flow2, sc->model.flows == 2);
    fprintf(f, ",%s", osn_version());
    if (fputc('\n', f) == EOF || ferror(f)) {
        if (err && errsize)
            snprintf(err, errsize, "cannot write the CSV result");
        return OSN_EIO;
    }
    return 0;
}

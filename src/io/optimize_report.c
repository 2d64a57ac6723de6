/*
 * The document of `osn optimize --json` (include/osn/optimize_scenario.h), written by the command
 * and by the library's osn_optimize_json(): osn_report_json_write()'s own for the reported pair,
 * read back and extended with the optimiser's keys, so that its solve keys can never drift from
 * `osn solve --json`. A value that fits a double is a real, any other a 12-digit string.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "osn/err.h"
#include "osn/optimize_scenario.h"

typedef struct osn_xd xd;

static const char *const con_measure[OSN_OPT_NCON] = {"P1+P2", "theta", "P2", "T_cyc"};

/* An osn_xd as JSON: a real when it fits a double, else a 12-digit string; null if NaN. */
static json_t *xd_json(xd x)
{
    char buf[64];

    if (!isfinite(x.m))
        return json_null();
    if (osn_xd_fits_double(x))
        return json_real(osn_xd_to_double(x));
    return json_string(osn_xd_format(x, 12, buf, sizeof buf));
}

/* A double as JSON; null when not finite (json_real() refuses those: a slack of -inf once made
 * the whole document fail as "out of memory"). */
static json_t *real_json(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

/* o[key] = xd_json(x), and KEY_log10 beside it when that is a string beyond the double range
 * (as the solve document does), so that the field of a dataframe stays numeric. */
static int set_xd(json_t *o, const char *key, xd x)
{
    char lkey[64];
    json_t *v = xd_json(x);
    int err = json_object_set_new(o, key, v);

    if (!err && json_is_string(v)) {
        snprintf(lkey, sizeof lkey, "%s_log10", key);
        err = json_object_set_new(o, lkey, json_real(osn_xd_log10(x)));
    }
    return err;
}

/* A reported pair: L, H, violation, T_ret and, for a quantile objective, that quantile under
 * its own name (T_ret_p95, ...), the value the pair was ranked by. */
static json_t *pair_json(const struct osn_opt_point *pt, enum osn_opt_objective obj)
{
    if (!pt->found)
        return json_null();
    json_t *o = json_pack("{sIsIso}", "L", (json_int_t)pt->L, "H", (json_int_t)pt->H, "violation",
                          real_json(pt->violation));
    if (o && (set_xd(o, "T_ret", pt->ms.T_ret) != 0 ||
              (obj != OSN_OPT_T_RET && set_xd(o, osn_opt_objective_name(obj),
                                              osn_opt_objective_value(obj, &pt->ms)) != 0))) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* The solve document of the reported pair, read back from osn_report_json_write(). */
static json_t *solve_doc(const struct osn_scenario *at, const struct osn_measures *ms, char *err,
                         size_t errsize, int *rc)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *mf = open_memstream(&buf, &len);
    json_t *doc = NULL;

    *rc = OSN_ENOMEM;
    if (!mf) {
        snprintf(err, errsize, "out of memory");
        return NULL;
    }
    *rc = osn_report_json_write(mf, at, ms, err, errsize);
    if (fclose(mf) != 0 && !*rc)
        *rc = OSN_ENOMEM;
    if (!*rc) {
        json_error_t je;
        doc = json_loadb(buf, len, 0, &je);
        if (!doc) {
            *rc = OSN_ENOMEM;
            snprintf(err, errsize, "cannot re-read the solve document: %s", je.text);
        }
    }
    free(buf);
    return doc;
}

int osn_opt_json_write(FILE *f, const struct osn_scenario *at, const struct osn_opt_cfg *cfg,
                       const struct osn_opt_result *res, char *err, size_t errsize)
{
    const struct osn_opt_point *pt = res->best.found ? &res->best : &res->closest;
    json_t *doc, *cons;
    int rc, e = 0;

    doc = solve_doc(at, &pt->ms, err, errsize, &rc);
    if (!doc)
        return rc;
    cons = json_object();
    for (int c = 0; c < OSN_OPT_NCON && cons; c++) {
        if (!cfg->has[c])
            continue;
        json_t *o = json_pack("{sssoso}", "measure", con_measure[c], "bound",
                              real_json(cfg->bound[c]), res->best.found ? "slack" : "violation",
                              real_json(res->best.found ? res->slack[c] : pt->viol[c]));
        if (o)
            e |= set_xd(o, "value", osn_opt_con_value((enum osn_opt_con)c, &pt->ms));
        e |= json_object_set_new(cons, osn_opt_con_name((enum osn_opt_con)c), o);
    }
    e |= json_object_set_new(doc, "L", json_integer(pt->L));
    e |= json_object_set_new(doc, "H", json_integer(pt->H));
    e |= json_object_set_new(doc, "found", json_boolean(res->best.found));
    e |= json_object_set_new(doc, "evaluated", json_integer(res->evaluated));
    e |= json_object_set_new(doc, "feasible", json_integer(res->feasible));
    e |= json_object_set_new(doc, "skipped", json_integer(res->skipped));
    e |= json_object_set_new(doc, "solved_in_full", json_integer(res->solved));
    e |= json_object_set_new(doc, "objective", json_string(osn_opt_objective_name(cfg->objective)));
    e |= set_xd(doc, "objective_value", osn_opt_objective_value(cfg->objective, &pt->ms));
    e |= json_object_set_new(doc, "binding",
                             res->binding >= 0
                                     ? json_string(osn_opt_con_name((enum osn_opt_con)res->binding))
                                     : json_null());
    e |= json_object_set_new(doc, "constraints", cons);
    e |= json_object_set_new(doc, "next_better", pair_json(&res->next, cfg->objective));
    e |= json_object_set_new(doc, "unconstrained", pair_json(&res->free, cfg->objective));
    if (!res->best.found)
        e |= json_object_set_new(doc, "closest_violation", real_json(res->closest.violation));
    if (e) {
        json_decref(doc);
        snprintf(err, errsize, "out of memory building the JSON result");
        return OSN_ENOMEM;
    }
    rc = 0;
    if (json_dumpf(doc, f, JSON_INDENT(2) | JSON_REAL_PRECISION(17)) != 0 ||
        fputc('\n', f) == EOF || fflush(f) != 0) {
        snprintf(err, errsize, "cannot write the JSON result: %s", strerror(errno));
        rc = OSN_EIO;
    }
    json_decref(doc);
    return rc;
}

void osn_opt_failure_text(int rc, const struct osn_opt_cfg *cfg, const struct osn_opt_result *res,
                          char *buf, size_t size)
{
    bool quantile = cfg->objective != OSN_OPT_T_RET;

    if (rc == 0) {
        snprintf(buf, size, "%s", "");
    } else if (!res->failed.found) {
        snprintf(buf, size, "%s", osn_strerror(rc));
    } else if (quantile && rc == OSN_ETOOBIG) {
        snprintf(buf, size,
                 "the return time's distribution at the pair (%ld, %ld) is out of reach (a long, "
                 "nearly deterministic return time, docs/solver.md), so its %s is not known: "
                 "lower thresholds.R, or minimise T_ret",
                 res->failed.L, res->failed.H, osn_opt_objective_name(cfg->objective));
    } else if (quantile && rc == OSN_ENOTSUP) {
        snprintf(buf, size,
                 "the return time at the pair (%ld, %ld) has no distribution (overload never "
                 "starts), so %s is not defined there",
                 res->failed.L, res->failed.H, osn_opt_objective_name(cfg->objective));
    } else {
        snprintf(buf, size, "%s at the pair (%ld, %ld)", osn_strerror(rc), res->failed.L,
                 res->failed.H);
    }
}

/*
 * Commands as library calls (include/osn/json_api.h). The same steps as src/cli/cmd_solve.c, with
 * the document written into memory instead of a file, so that a binding's dict and the
 * command's --json can never differ.
 */
#include "osn/json_api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "osn/err.h"
#include "osn/model_scenario.h"
#include "osn/optimize_scenario.h"

static int method_of(const char *name, enum osn_method *m, char *err, size_t errsize)
{
    if (!name || strcmp(name, "auto") == 0)
        *m = OSN_METHOD_AUTO;
    else if (strcmp(name, "general") == 0)
        *m = OSN_METHOD_GENERAL;
    else if (strcmp(name, "closed") == 0)
        *m = OSN_METHOD_CLOSED;
    else {
        snprintf(err, errsize, "method '%s': expected auto, general or closed", name);
        return OSN_ECONFIG;
    }
    return 0;
}

int osn_solve_json(const char *scenario, const char *const *sets, int nsets, const char *method,
                   char **json, char *err, size_t errsize)
{
    struct osn_scenario *sc = NULL;
    struct osn_measures ms;
    enum osn_method m;
    char *buf = NULL;
    size_t len = 0;
    FILE *mf = NULL;
    int rc;

    if (!json || !err || errsize == 0 || nsets < 0 || (nsets > 0 && !sets))
        return OSN_EINVAL;
    *json = NULL;
    err[0] = '\0';
    if ((rc = method_of(method, &m, err, errsize)))
        return rc;
    /* The scenario holds its key records: keep it off the stack (a binding's thread may have
     * a small one). */
    if (!(sc = calloc(1, sizeof *sc))) {
        rc = OSN_ENOMEM;
        goto out;
    }
    rc = osn_scenario_load(sc, scenario, sets, nsets, NULL, err, errsize);
    if (rc)
        goto out;
    const char *why = osn_solve_unsupported(&sc->model, m);
    if (why) {
        snprintf(err, errsize, "%s%s", m == OSN_METHOD_CLOSED ? "method closed: " : "", why);
        rc = OSN_ENOTSUP;
        goto out;
    }
    if ((rc = osn_solve(&sc->model, m, &ms, NULL, NULL))) {
        snprintf(err, errsize, "solver failed: %s", osn_strerror(rc));
        goto out;
    }
    /* The return-time quantiles, as `osn solve` prints them (n/a where there is no
     * distribution: osn_tret_quantiles()). */
    if ((rc = osn_tret_quantiles(&sc->model, &ms)) != 0) {
        snprintf(err, errsize, "return-time distribution failed: %s", osn_strerror(rc));
        goto out;
    }
    if (!(mf = open_memstream(&buf, &len))) {
        rc = OSN_ENOMEM;
        goto out;
    }
    rc = osn_report_json_write(mf, sc, &ms, err, errsize);
    if (fclose(mf) != 0 && !rc)
        rc = OSN_ENOMEM;
    if (!rc) {
        *json = buf;
        buf = NULL;
    }
out:
    if (rc && !err[0])
        snprintf(err, errsize, "%s", osn_strerror(rc));
    free(buf);
    osn_scenario_release(sc);
    free(sc);
    return rc;
}

/* Writes a document into a new string: what the writer writes into *json, or an error. */
static int to_string(int (*write)(FILE *f, const void *ctx, char *err, size_t errsize),
                     const void *ctx, char **json, char *err, size_t errsize)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *mf = open_memstream(&buf, &len);
    int rc;

    if (!mf)
        return OSN_ENOMEM;
    rc = write(mf, ctx, err, errsize);
    if (fclose(mf) != 0 && !rc)
        rc = OSN_ENOMEM;
    if (rc)
        free(buf);
    else
        *json = buf;
    return rc;
}

struct opt_doc {
    const struct osn_scenario *at;
    const struct osn_opt_cfg *cfg;
    const struct osn_opt_result *res;
};

static int write_opt(FILE *f, const void *ctx, char *err, size_t errsize)
{
    const struct opt_doc *d = ctx;
    return osn_opt_json_write(f, d->at, d->cfg, d->res, err, errsize);
}

int osn_optimize_json(const char *scenario, const char *const *sets, int nsets, char **json,
                      char *err, size_t errsize)
{
    struct osn_scenario *sc = NULL, *at = NULL;
    struct osn_opt_cfg cfg;
    struct osn_opt_result *res = NULL;
    int rc;

    if (!json || !err || errsize == 0 || nsets < 0 || (nsets > 0 && !sets))
        return OSN_EINVAL;
    *json = NULL;
    err[0] = '\0';
    sc = calloc(1, sizeof *sc);
    at = calloc(1, sizeof *at);
    res = calloc(1, sizeof *res);
    if (!sc || !at || !res) {
        rc = OSN_ENOMEM;
        goto out;
    }
    rc = osn_optimize_scenario_load(sc, &cfg, scenario, sets, nsets, false, NULL, err, errsize);
    if (rc)
        goto out;
    rc = osn_optimize(&sc->model, &cfg, res, NULL, NULL, NULL, NULL);
    if (rc == OSN_ECONFIG)
        snprintf(err, errsize, "%s: no valid (L, H) pair in this model",
                 sc->ini.path[0] ? sc->ini.path : "scenario");
    else if (rc) {
        char why[512];
        osn_opt_failure_text(rc, &cfg, res, why, sizeof why);
        snprintf(err, errsize, "optimisation failed: %s", why);
    }
    if (rc)
        goto out;
    /* The scenario as solved at the reported pair, for the document's solve keys and echo. */
    const struct osn_opt_point *pt = res->best.found ? &res->best : &res->closest;
    *at = *sc;
    osn_optimize_set_pair(&at->model, pt->L, pt->H);
    struct opt_doc doc = {at, &cfg, res};
    rc = to_string(write_opt, &doc, json, err, errsize);
out:
    if (rc && !err[0])
        snprintf(err, errsize, "%s", osn_strerror(rc));
    osn_scenario_release(sc); /* `at` is a shallow copy: not released */
    free(sc);
    free(at);
    free(res);
    return rc;
}

char *osn_json_free(char *json)
{
    free(json);
    return NULL;
}

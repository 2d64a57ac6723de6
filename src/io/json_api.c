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

char *osn_json_free(char *json)
{
    free(json);
    return NULL;
}

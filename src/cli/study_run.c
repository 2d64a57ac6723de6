/*
 * The runners of a study (study.h): one point of `osn sim` (network or node), `osn solve` or
 * `osn fluid`, through the same loader, checks, run and JSON writer as the single run, so that
 * a point's object is exactly what the single run with those --set values writes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "osn/err.h"
#include "osn/fluid.h"
#include "osn/fluid_scenario.h"
#include "osn/model.h"
#include "osn/model_scenario.h"
#include "osn/net.h"
#include "osn/net_scenario.h"
#include "osn/sim.h"
#include "osn/sim_scenario.h"
#include "study.h"

/* A writer's JSON, read back as an object: the writers stay the one definition of the keys. */
struct json_buf {
    char *text;
    size_t len;
    FILE *f;
};

static FILE *json_buf_open(struct json_buf *b, char *err, size_t errsize)
{
    *b = (struct json_buf){0};
    if (!(b->f = open_memstream(&b->text, &b->len)))
        snprintf(err, errsize, "out of memory");
    return b->f;
}

/* Closes b and parses it into *out; rc is the writer's status. */
static int json_buf_take(struct json_buf *b, int rc, json_t **out, char *err, size_t errsize)
{
    json_error_t je;
    if (fclose(b->f) != 0 && rc == 0) {
        snprintf(err, errsize, "out of memory");
        rc = OSN_ENOMEM;
    }
    if (rc == 0 && !(*out = json_loadb(b->text, b->len, 0, &je))) {
        snprintf(err, errsize, "cannot read back the run's JSON: %s", je.text);
        rc = OSN_EIO;
    }
    if (rc == 0 && !json_is_object(*out)) {
        json_decref(*out);
        *out = NULL;
        snprintf(err, errsize, "the run's JSON is not an object");
        rc = OSN_EIO;
    }
    free(b->text);
    return rc;
}

static int run_net(const struct osn_study_run *r, json_t **out, char *err, size_t errsize)
{
    struct osn_net_scenario *sc = calloc(1, sizeof *sc);
    struct osn_net_result *res = calloc(1, sizeof *res);
    struct json_buf b;
    int rc = OSN_ENOMEM;

    if (!sc || !res) {
        snprintf(err, errsize, "out of memory");
        goto out;
    }
    if ((rc = osn_net_scenario_load(sc, r->scenario, r->sets, r->nsets, err, errsize)) != 0)
        goto out;
    sc->cfg.threads = r->threads;
    sc->cfg.keep = r->keep;
    sc->cfg.split = r->split;
    if ((rc = osn_net_scenario_check(sc, err, errsize)) != 0 || r->check_only ||
        (rc = osn_net_run(&sc->cfg, res, err, errsize)) != 0)
        goto out;
    if (!json_buf_open(&b, err, errsize)) {
        rc = OSN_ENOMEM;
        goto out;
    }
    const struct osn_net_scenario *scs = sc;
    const struct osn_net_result *rs = res;
    rc = osn_net_report_json_write(b.f, &scs, &rs, 1, NULL, err, errsize);
    rc = json_buf_take(&b, rc, out, err, errsize);
out:
    osn_net_scenario_release(sc);
    free(sc);
    osn_net_result_release(res);
    free(res);
    return rc;
}

/* A network's totals per replication depend on its elements, so on the point's scenario: 0 asks
 * the study to take a checkpoint's count as it is, and osn_net_run checks it against the
 * point's network (net.replications: "not this network's"). */
static int net_reps_ntot(void)
{
    return 0;
}

static int run_node(const struct osn_study_run *r, json_t **out, char *err, size_t errsize)
{
    struct osn_sim_scenario *s = calloc(1, sizeof *s);
    struct osn_sim_result res;
    struct json_buf b;
    int rc = OSN_ENOMEM;

    if (!s) {
        snprintf(err, errsize, "out of memory");
        return rc;
    }
    if ((rc = osn_sim_scenario_load(s, r->scenario, r->sets, r->nsets, err, errsize)) != 0)
        goto out;
    s->cfg.threads = r->threads;
    s->cfg.keep = r->keep;
    s->cfg.split = r->split;
    if ((rc = osn_sim_scenario_check(s, err, errsize)) != 0 ||
        (rc = osn_sim_scenario_check_cost(s, err, errsize)) != 0 || r->check_only ||
        (rc = osn_sim_run(&s->sc.model, &s->cfg, &res, err, errsize)) != 0)
        goto out;
    if (!json_buf_open(&b, err, errsize)) {
        rc = OSN_ENOMEM;
        goto out;
    }
    rc = osn_sim_report_json_write(b.f, s, &res, err, errsize);
    rc = json_buf_take(&b, rc, out, err, errsize);
out:
    osn_sim_scenario_release(s);
    free(s);
    return rc;
}

static int run_solve(const struct osn_study_run *r, json_t **out, char *err, size_t errsize)
{
    struct osn_scenario *sc = calloc(1, sizeof *sc);
    enum osn_method method = OSN_METHOD_AUTO;
    struct osn_measures ms;
    struct json_buf b;
    int rc = OSN_ENOMEM;

    if (!sc) {
        snprintf(err, errsize, "out of memory");
        return rc;
    }
    if (r->method && strcmp(r->method, "general") == 0)
        method = OSN_METHOD_GENERAL;
    else if (r->method && strcmp(r->method, "closed") == 0)
        method = OSN_METHOD_CLOSED;
    if ((rc = osn_scenario_load(sc, r->scenario, r->sets, r->nsets, NULL, err, errsize)) != 0)
        goto out;
    const char *why = osn_solve_unsupported(&sc->model, method);
    if (why) {
        snprintf(err, errsize, "%s%s", method == OSN_METHOD_CLOSED ? "--method closed: " : "", why);
        rc = OSN_ENOTSUP;
        goto out;
    }
    if (r->check_only)
        goto out;
    if ((rc = osn_solve(&sc->model, method, &ms, NULL, NULL)) != 0) {
        snprintf(err, errsize, "solver failed: %s", osn_strerror(rc));
        goto out;
    }
    /* The return-time quantiles, as `osn solve` prints them (n/a where there is no
     * distribution: osn_tret_quantiles()). */
    if ((rc = osn_tret_quantiles(&sc->model, &ms)) != 0) {
        snprintf(err, errsize, "return-time distribution failed: %s", osn_strerror(rc));
        goto out;
    }
    if (!json_buf_open(&b, err, errsize)) {
        rc = OSN_ENOMEM;
        goto out;
    }
    rc = osn_report_json_write(b.f, sc, &ms, err, errsize);
    rc = json_buf_take(&b, rc, out, err, errsize);
out:
    osn_scenario_release(sc);
    free(sc);
    return rc;
}

static int run_fluid(const struct osn_study_run *r, json_t **out, char *err, size_t errsize)
{
    struct osn_fluid_scenario *sc = calloc(1, sizeof *sc);
    struct osn_fluid_result *res = NULL;
    struct json_buf b;
    int rc = OSN_ENOMEM;

    if (!sc) {
        snprintf(err, errsize, "out of memory");
        return rc;
    }
    if ((rc = osn_fluid_scenario_load(sc, r->scenario, r->sets, r->nsets, err, errsize)) != 0 ||
        r->check_only || (rc = osn_fluid_run(&res, &sc->cfg, err, errsize)) != 0)
        goto out;
    if (!json_buf_open(&b, err, errsize)) {
        rc = OSN_ENOMEM;
        goto out;
    }
    rc = osn_fluid_report_json_write(b.f, sc, res, err, errsize);
    rc = json_buf_take(&b, rc, out, err, errsize);
out:
    osn_fluid_result_free(res);
    osn_fluid_scenario_release(sc);
    free(sc);
    return rc;
}

static const char *const net_headline[] = {"offered", "goodput",       "setup_delay_mean",
                                           "failed",  "retrans_ratio", NULL};
static const char *const net_precise[] = {"goodput", "setup_delay_mean", NULL};
static const char *const node_headline[] = {"P0", "P1", "P2", "T_ret", "theta", NULL};
static const char *const node_precise[] = {"P0", "T_ret", NULL};
static const char *const solve_headline[] = {"P0", "P1", "P2", "T_ret", "theta", NULL};
static const char *const fluid_headline[] = {"goodput",    "failed", "final_queue",
                                             "peak_delay", "state",  NULL};
static const char *const none[] = {NULL};

const struct osn_study_runner osn_study_net = {"sim",        "net.seed",   "net.replications",
                                               net_headline, net_precise,  false,
                                               run_net,      net_reps_ntot};
const struct osn_study_runner osn_study_node = {"sim",         "sim.seed",       "sim.replications",
                                                node_headline, node_precise,     false,
                                                run_node,      osn_sim_reps_ntot};
const struct osn_study_runner osn_study_solve = {"solve", NULL, NULL,      solve_headline,
                                                 none,    true, run_solve, NULL};
const struct osn_study_runner osn_study_fluid = {"fluid", NULL,  NULL,      fluid_headline,
                                                 none,    false, run_fluid, NULL};

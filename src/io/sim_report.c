/*
 * Result writers of the simulator: the table, JSON and CSV of a struct osn_sim_result.
 *
 * Keys, units and meanings come from the sim module (osn_sim_measure_key() ...), and they are
 * the `osn solve` keys wherever the measure exists there. The model line of the table and the
 * "scenario" object of the JSON document are taken from the solver's writers (report.c) by
 * rendering them into a memory stream, so that both commands describe a scenario identically
 * without a second copy of that code. A value without an estimate (no discard visit observed,
 * one replication and so no interval) is "n/a" in the table, null in JSON and an empty CSV cell.
 */
#include "osn/sim_scenario.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io_int.h"
#include "osn/err.h"
#include "osn/version.h"

/* Measures not shown for this model: flow 2's loss with one flow. */
static bool shown(const struct osn_sim_scenario *s, enum osn_sim_measure i)
{
    return !(i == OSN_SIM_LOSS_FLOW2 && s->sc.model.flows != 2);
}

void osn_sim_report_table(FILE *f, const struct osn_sim_scenario *s,
                          const struct osn_sim_result *res)
{
    const struct osn_sim_cfg *c = &s->cfg;
    char val[64], hw[64];

    osn__report_model_line(f, &s->sc.model);
    if (s->sc.ini.path[0])
        fprintf(f, "scenario: %s\n", s->sc.ini.path);
    fprintf(f,
            "method: simulation, %d independent replications of %g s after a %g s warm-up, "
            "seed %llu\n",
            res->replications, res->time > 0 ? res->time : c->time, c->warmup,
            (unsigned long long)c->seed);
    fprintf(f,
            "        +- is the %g%% confidence half-width (jackknife over replications, t "
            "quantile)\n",
            100 * res->level);
    if (c->feedback_delay > 0)
        fprintf(f, "feedback delay: %g s (the upstream throttles by the mode of %g s ago)\n",
                c->feedback_delay, c->feedback_delay);
    fprintf(f, "events: %llu in %.3g s, %.3g M events/s on %d thread%s\n",
            (unsigned long long)res->events, res->wall_s, res->events_per_s / 1e6, res->threads,
            res->threads == 1 ? "" : "s");
    fprintf(f, "\n  %-17s %-13s   %-9s %-4s %s\n", "measure", "value", "+-", "unit", "meaning");
    for (int i = 0; i < OSN_SIM_NMEASURES; i++) {
        const struct osn_sim_est *e = &res->est[i];
        if (!shown(s, i))
            continue;
        if (isfinite(e->value))
            snprintf(val, sizeof val, "%.7g", e->value);
        else
            snprintf(val, sizeof val, "n/a");
        if (isfinite(e->hw))
            snprintf(hw, sizeof hw, "%.2g", e->hw);
        else
            snprintf(hw, sizeof hw, "n/a");
        fprintf(f, "  %-17s %-13s +- %-9s %-4s %s\n", osn_sim_measure_key(i), val, hw,
                osn_sim_measure_unit(i), osn_sim_measure_meaning(i));
    }
}

static json_t *num_or_null(double x)
{
    return isfinite(x) ? json_real(x) : json_null();
}

int osn_sim_report_json_write(FILE *f, const struct osn_sim_scenario *s,
                              const struct osn_sim_result *res, char *err, size_t errsize)
{
    json_t *root = json_object(), *sc = osn__report_scenario_json(&s->sc);
    char key[80];
    int bad = !root || !sc, rc = 0;

    for (int i = 0; i < OSN_SIM_NMEASURES && !bad; i++) {
        if (!shown(s, i))
            continue;
        const struct osn_sim_est *e = &res->est[i];
        snprintf(key, sizeof key, "%s_ci", osn_sim_measure_key(i));
        bad |= json_object_set_new(root, osn_sim_measure_key(i), num_or_null(e->value));
        bad |= json_object_set_new(root, key, num_or_null(e->hw));
    }
    if (!bad) {
        const struct osn_sim_cfg *c = &s->cfg;
        bad |= json_object_set_new(root, "method", json_string("sim"));
        bad |= json_object_set_new(root, "ci_method",
                                   json_string("independent replications, jackknife, t"));
        bad |= json_object_set_new(root, "ci_level", json_real(res->level));
        bad |= json_object_set_new(root, "replications", json_integer(res->replications));
        bad |= json_object_set_new(root, "events", json_integer((json_int_t)res->events));
        bad |= json_object_set_new(root, "time", json_real(res->time > 0 ? res->time : c->time));
        bad |= json_object_set_new(root, "warmup", json_real(c->warmup));
        bad |= json_object_set_new(root, "seed", json_integer((json_int_t)c->seed));
        bad |= json_object_set_new(root, "feedback_delay", json_real(c->feedback_delay));
        bad |= json_object_set_new(root, "beyond_double_range", json_array());
        /* --seed and --replications may set these after the file was read: the run's values,
         * whichever way they were set; then every key's value as run. */
        char v[32];
        json_t *keys = json_object_get(sc, "keys");
        snprintf(v, sizeof v, "%d", c->replications);
        bad |= json_object_set_new(keys, "sim.replications", json_string(v));
        snprintf(v, sizeof v, "%llu", (unsigned long long)c->seed);
        bad |= json_object_set_new(keys, "sim.seed", json_string(v));
        bad |= json_object_set_new(sc, "resolved", osn__sim_scenario_resolved(s));
        bad |= json_object_set_new(root, "scenario", sc);
        sc = NULL;
        /* What the wall clock measured, apart: the rest of a same-seed file is identical. */
        bad |= json_object_set_new(root, "timing",
                                   json_pack("{sososi}", "wall_s", num_or_null(res->wall_s),
                                             "events_per_s", num_or_null(res->events_per_s),
                                             "threads", res->threads));
    }
    if (bad) {
        if (err && errsize)
            snprintf(err, errsize, "out of memory building the JSON result");
        rc = OSN_ENOMEM;
    } else {
        rc = osn__report_json_dump(f, root, 17, err, errsize);
    }
    json_decref(sc);
    json_decref(root);
    return rc;
}

static void csv_num(FILE *f, double x)
{
    if (isfinite(x))
        fprintf(f, "%.17g", x);
}

int osn_sim_report_csv_write(FILE *f, const struct osn_sim_scenario *s,
                             const struct osn_sim_result *res, char *err, size_t errsize)
{
    /* The same columns for every model, so rows of several runs can be concatenated; the
     * wall-clock columns last, under timing. */
    for (int i = 0; i < OSN_SIM_NMEASURES; i++)
        fprintf(f, "%s,%s_ci,", osn_sim_measure_key(i), osn_sim_measure_key(i));
    fprintf(f, "replications,events,seed,osn_version,timing.wall_s,timing.events_per_s\n");
    for (int i = 0; i < OSN_SIM_NMEASURES; i++) {
        csv_num(f, res->est[i].value);
        fputc(',', f);
        csv_num(f, res->est[i].hw);
        fputc(',', f);
    }
    fprintf(f, "%d,%llu,%llu,%s,", res->replications, (unsigned long long)res->events,
            (unsigned long long)s->cfg.seed, osn_version());
    csv_num(f, res->wall_s);
    fputc(',', f);
    csv_num(f, res->events_per_s);
    if (fputc('\n', f) == EOF || ferror(f)) {
        if (err && errsize)
            snprintf(err, errsize, "cannot write the CSV result");
        return OSN_EIO;
    }
    return 0;
}

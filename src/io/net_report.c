/*
 * Result writers of the SIP network simulator: the table, JSON and CSV of struct
 * osn_net_result, following src/io/sim_report.c: a value without an estimate is "n/a" in the
 * table, null in JSON and an empty CSV cell; each estimate's half-width is KEY_ci. A sweep is
 * one JSON array (one object per value of the swept key) or one CSV row per value.
 */
#include "osn/net_scenario.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io_int.h"
#include "osn/err.h"
#include "osn/version.h"

static const char *const topo_name[] = {"collapse", "tandem", "fanin", "fanout", "tree", "mesh"};

void osn_net_report_table(FILE *f, const struct osn_net_scenario *s,
                          const struct osn_net_result *res)
{
    const struct osn_net_cfg *c = &s->cfg;
    char val[64], hw[64];

    /* What sizes the shape: a tandem's mid proxies (1 to OSN_NET_MAX_MIDS), the others' edges
     * (and a fanout's cores). */
    char size[48];
    int E = c->topology >= OSN_NET_FANIN ? c->edges : 1;
    if (c->topology == OSN_NET_TANDEM)
        snprintf(size, sizeof size, "%d mid%s", c->mids, c->mids > 1 ? "s" : "");
    else if (c->topology == OSN_NET_MESH)
        snprintf(size, sizeof size, "%d regions of %d edges", c->regions, c->edges);
    else if (c->topology == OSN_NET_TREE)
        snprintf(size, sizeof size, "%d sources, %d proxies", E,
                 osn_net_role_count(c, OSN_NET_ROLE_EDGE) +
                         osn_net_role_count(c, OSN_NET_ROLE_CORE));
    else if (c->topology == OSN_NET_FANOUT)
        snprintf(size, sizeof size, "%d edge%s, %d cores", E, E > 1 ? "s" : "", c->cores);
    else
        snprintf(size, sizeof size, "%d edge%s", E, E > 1 ? "s" : "");
    fprintf(f, "SIP network %s (%s), control %s, detector %s\n", topo_name[c->topology], size,
            osn_ctl_kind_name(c->ctl_kind), osn_ctl_det_kind_name(c->ctl.det.kind));
    if (s->ini.path[0])
        fprintf(f, "scenario: %s\n", s->ini.path);
    fprintf(f,
            "method: simulation, %d independent replications of %g s after a %g s warm-up, "
            "seed %llu; +- is the %g%% half-width\n",
            res->replications, c->time, c->warmup, (unsigned long long)c->seed, 100 * res->level);
    fprintf(f, "messages: %llu in %.3g s, %.3g M SIP messages/s\n",
            (unsigned long long)res->messages, res->wall_s, res->msgs_per_s / 1e6);
    fprintf(f, "\n  %-17s %-13s   %-9s %-4s %s\n", "measure", "value", "+-", "unit", "meaning");
    for (int i = 0; i < OSN_NET_NMEASURES; i++) {
        const struct osn_net_est *e = &res->est[i];
        snprintf(val, sizeof val, isfinite(e->value) ? "%.6g" : "n/a", e->value);
        snprintf(hw, sizeof hw, isfinite(e->hw) ? "%.2g" : "n/a", e->hw);
        fprintf(f, "  %-17s %-13s +- %-9s %-4s %s\n", osn_net_measure_key(i), val, hw,
                osn_net_measure_unit(i), osn_net_measure_meaning(i));
    }
    fprintf(f, "\nper element (1/s unless noted; util and queue_mean are time averages)\n");
    fprintf(f, "  %-7s", "element");
    for (int i = 0; i < OSN_NET_E_NMEASURES; i++)
        fprintf(f, " %10s", osn_net_elem_measure_key(i));
    fputc('\n', f);
    for (int e = 0; e < res->nelem; e++) {
        fprintf(f, "  %-7s", res->elem_name[e]);
        for (int i = 0; i < OSN_NET_E_NMEASURES; i++)
            fprintf(f, " %10.4g", res->elem[e][i].value);
        fputc('\n', f);
    }
}

static json_t *num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *result_json(const struct osn_net_scenario *s, const struct osn_net_result *r,
                           const char *sweep_key)
{
    json_t *o = json_object(), *els = json_array();
    char key[80];

    if (!o || !els) {
        json_decref(o);
        json_decref(els);
        return NULL;
    }
    if (sweep_key) {
        const struct osn_key_origin *k = osn_ini_get(&s->ini, sweep_key);
        json_object_set_new(o, "sweep_key", json_string(sweep_key));
        json_object_set_new(o, "sweep_value", k ? json_real(atof(k->value)) : json_null());
    }
    for (int i = 0; i < OSN_NET_NMEASURES; i++) {
        json_object_set_new(o, osn_net_measure_key(i), num(r->est[i].value));
        snprintf(key, sizeof key, "%s_ci", osn_net_measure_key(i));
        json_object_set_new(o, key, num(r->est[i].hw));
    }
    for (int e = 0; e < r->nelem; e++) {
        json_t *el = json_object();
        json_object_set_new(el, "name", json_string(r->elem_name[e]));
        for (int i = 0; i < OSN_NET_E_NMEASURES; i++) {
            json_object_set_new(el, osn_net_elem_measure_key(i), num(r->elem[e][i].value));
            snprintf(key, sizeof key, "%s_ci", osn_net_elem_measure_key(i));
            json_object_set_new(el, key, num(r->elem[e][i].hw));
        }
        json_array_append_new(els, el);
    }
    json_object_set_new(o, "elements", els);
    json_object_set_new(o, "topology", json_string(topo_name[s->cfg.topology]));
    json_object_set_new(o, "control", json_string(osn_ctl_kind_name(s->cfg.ctl_kind)));
    json_object_set_new(o, "replications", json_integer(r->replications));
    json_object_set_new(o, "time", json_real(s->cfg.time));
    json_object_set_new(o, "warmup", json_real(s->cfg.warmup));
    json_object_set_new(o, "seed", json_integer((json_int_t)s->cfg.seed));
    json_object_set_new(o, "detector", json_string(osn_ctl_det_kind_name(s->cfg.ctl.det.kind)));
    json_object_set_new(o, "messages", json_integer((json_int_t)r->messages));
    json_object_set_new(o, "scenario", osn__net_scenario_json(s));
    /* What the wall clock measured, apart: the rest of a same-seed file is identical. */
    json_object_set_new(o, "timing",
                        json_pack("{sososi}", "wall_s", num(r->wall_s), "msgs_per_s",
                                  num(r->msgs_per_s), "threads", s->cfg.threads));
    return o;
}

int osn_net_report_json_write(FILE *f, const struct osn_net_scenario *const *s,
                              const struct osn_net_result *const *res, int n, const char *sweep_key,
                              char *err, size_t errsize)
{
    json_t *doc = sweep_key ? json_array() : NULL;
    int rc = OSN_ENOMEM;

    for (int i = 0; i < n; i++) {
        json_t *o = result_json(s[i], res[i], sweep_key);
        if (!o)
            goto out;
        if (!sweep_key) {
            doc = o;
            break;
        }
        json_array_append_new(doc, o);
    }
    if (!doc)
        goto out;
    rc = osn__report_json_dump(f, doc, 10, err, errsize);
out:
    if (rc == OSN_ENOMEM && err && errsize)
        snprintf(err, errsize, "out of memory");
    json_decref(doc);
    return rc;
}

int osn_net_report_csv_write(FILE *f, const struct osn_net_scenario *const *s,
                             const struct osn_net_result *const *res, int n, const char *sweep_key,
                             char *err, size_t errsize)
{
    if (sweep_key)
        fprintf(f, "%s,", sweep_key);
    for (int i = 0; i < OSN_NET_NMEASURES; i++)
        fprintf(f, "%s,%s_ci,", osn_net_measure_key(i), osn_net_measure_key(i));
    fprintf(f, "replications,messages,control,detector,seed,osn_version,timing.wall_s,"
               "timing.msgs_per_s\n");
    for (int r = 0; r < n; r++) {
        if (sweep_key) {
            const struct osn_key_origin *k = osn_ini_get(&s[r]->ini, sweep_key);
            fprintf(f, "%s,", k ? k->value : "");
        }
        for (int i = 0; i < OSN_NET_NMEASURES; i++) {
            const struct osn_net_est *e = &res[r]->est[i];
            if (isfinite(e->value))
                fprintf(f, "%.10g", e->value);
            fputc(',', f);
            if (isfinite(e->hw))
                fprintf(f, "%.4g", e->hw);
            fputc(',', f);
        }
        fprintf(f, "%d,%llu,%s,%s,%llu,%s,%.4g,%.4g\n", res[r]->replications,
                (unsigned long long)res[r]->messages, osn_ctl_kind_name(s[r]->cfg.ctl_kind),
                osn_ctl_det_kind_name(s[r]->cfg.ctl.det.kind), (unsigned long long)s[r]->cfg.seed,
                osn_version(), res[r]->wall_s, res[r]->msgs_per_s);
    }
    if (ferror(f)) {
        if (err && errsize)
            snprintf(err, errsize, "write error");
        return OSN_EIO;
    }
    return 0;
}

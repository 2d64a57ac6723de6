/*
 * The summary of an `osn node` run (osn/node_scenario.h): a table and a JSON object whose keys
 * match the network simulator's where they mean the same thing, so that sim and real can be
 * compared line by line (osn testbed does).
 */
#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "io_int.h"
#include "osn/err.h"
#include "osn/net_scenario.h"
#include "osn/node_scenario.h"

static double per_s(uint64_t n, double t)
{
    return t > 0 ? (double)n / t : 0;
}

void osn_node_report_table(FILE *f, const struct osn_node_scenario *s,
                           const struct osn_node_stats *st)
{
    const struct osn_node_cfg *c = &s->cfg;
    fprintf(f, "osn node: %s on %s", osn_node_element_name(c->element),
            st->listen[0] ? st->listen : c->listen);
    if (c->element != OSN_NODE_UAS)
        fprintf(f, " -> %s", c->next_hop);
    fprintf(f, ", control %s, %.1f s\n", osn_ctl_kind_name(c->ctl_kind), st->elapsed_s);
    for (int i = 0; i < osn_node_counter_count(); i++)
        fprintf(f, "  %-18s %12llu  %s\n", osn_node_counter_name(i),
                (unsigned long long)osn_node_counter_value(st, i), osn_node_counter_meaning(i));
    if (st->nworkers > 1) { /* how the kernel spread the calls over the workers */
        size_t calls_in = offsetof(struct osn_node_stats, calls_in) / sizeof(uint64_t);
        fprintf(f, "  %-18s", "calls_in by worker");
        for (int w = 0; w < st->nworkers && w < OSN_NODE_MAX_WORKERS; w++)
            fprintf(f, "%s%llu", w ? " + " : " ", (unsigned long long)st->worker[w][calls_in]);
        fputc('\n', f);
    }
    for (int i = 0; i < st->nhops; i++) {
        const struct osn_node_hop_stats *h = &st->hops[i];
        fprintf(f,
                "  next hop %-22s weight %d: %llu INVITEs, %llu sent, %llu shed, %llu timeouts, "
                "%llu failovers to it%s\n",
                h->server, h->weight, (unsigned long long)h->invites, (unsigned long long)h->sent,
                (unsigned long long)h->shed, (unsigned long long)h->timeouts,
                (unsigned long long)h->failovers, h->down ? " (down)" : "");
    }
    fprintf(f, "  %-18s %12llu  kB, peak resident memory\n", "rss_peak_kb",
            (unsigned long long)st->rss_peak_kb);
    if (c->element == OSN_NODE_UAC)
        osn__node_uac_table(f, &st->uac);
}

static json_t *num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

/* Every key of the run with the value used, defaults included, by section as in the scenario
 * file: [node], the element's [server NAME], [control], [sip]. */
static json_t *resolved_json(const struct osn_node_cfg *c)
{
    static const char *const kinds[OSN_ELEM_NKINDS] = {
            "cost_invite", "cost_retrans", "cost_response", "cost_ack",
            "cost_bye",    "cost_reject",  "cost_cancel"};
    char section[32];
    json_t *r = json_object(), *sv = json_object();

    json_object_set_new(
            r, "node",
            json_pack("{sssssosososIsIso}", "element", osn_node_element_name(c->element), "listen",
                      c->listen, "next_hop",
                      c->element == OSN_NODE_UAS ? json_null() : json_string(c->next_hop),
                      "duration", num(c->duration), "stats_interval", num(c->stats_interval),
                      "max_transactions", (json_int_t)osn_node_max_transactions(c), "max_memory",
                      (json_int_t)c->max_memory, "metrics",
                      c->metrics[0] ? json_string(c->metrics) : json_null()));
    json_object_set_new(json_object_get(r, "node"), "workers", json_integer(c->workers));
    json_object_set_new(json_object_get(r, "node"), "mid", json_integer(c->mid));
    json_object_set_new(json_object_get(r, "node"), "name",
                        c->name[0] ? json_string(c->name) : json_null());
    json_object_set_new(json_object_get(r, "node"), "warmup", num(c->warmup));
    for (int k = 0; k < OSN_ELEM_NKINDS; k++)
        json_object_set_new(sv, kinds[k], num(c->cost[k]));
    json_object_set_new(sv, "buffer", json_integer(c->buffer));
    snprintf(section, sizeof section, "server %s", osn_node_element_name(c->element));
    json_object_set_new(r, section, sv);
    /* [control] and [sip] as the network scenario's table reads them. */
    struct osn_net_cfg *net = calloc(1, sizeof *net);
    if (net) {
        osn_net_cfg_default(net);
        net->ctl_kind = c->ctl_kind;
        net->ctl = c->ctl;
        net->sip = c->sip;
        json_object_set_new(r, "control", osn__keys_json(&osn_net_schema, "control", net));
        json_t *sip = osn__keys_json(&osn_net_schema, "sip", net);
        json_object_del(sip, "client_mode"); /* the UACs' (the simulator's), not a node's */
        json_object_set_new(r, "sip", sip);
    }
    free(net);
    return r;
}

/* A proxy's or a uas's rates per second of the run. */
static void proxy_rates(json_t *o, const struct osn_node_stats *st, double t)
{
    json_object_set_new(o, "offered", json_real(per_s(st->calls_in, t)));
    json_object_set_new(o, "admitted", json_real(per_s(st->calls_forwarded, t)));
    json_object_set_new(o, "goodput", json_real(per_s(st->calls_ok, t)));
    json_object_set_new(o, "failed_rejected", json_real(per_s(st->rejected_503, t)));
    json_object_set_new(o, "failed_timeout", json_real(per_s(st->timeouts_408, t)));
    json_object_set_new(o, "dropped_per_s", json_real(per_s(st->dropped, t)));
    json_object_set_new(o, "util", json_real(t > 0 ? st->busy_s / t : 0));
    for (int m = 0; m < 3; m++) {
        char k[16];
        snprintf(k, sizeof k, "core_P%d", m);
        json_object_set_new(o, k, json_real(t > 0 ? st->mode_time[m] / t : 0));
    }
}

int osn_node_report_json_write(FILE *f, const struct osn_node_scenario *s,
                               const struct osn_node_stats *st, char *err, size_t errsize)
{
    const struct osn_node_cfg *c = &s->cfg;
    double t = st->elapsed_s;
    json_t *o = json_object(), *keys = json_object();
    int rc;

    if (!o || !keys) {
        json_decref(o);
        json_decref(keys);
        snprintf(err, errsize, "out of memory building the JSON summary");
        return OSN_ENOMEM;
    }
    json_object_set_new(o, "element", json_string(osn_node_element_name(c->element)));
    /* node.name: the element of the scenario's topology it played, null when none */
    json_object_set_new(o, "name", c->name[0] ? json_string(c->name) : json_null());
    json_object_set_new(o, "control", json_string(osn_ctl_kind_name(c->ctl_kind)));
    /* The addresses bound (the ports chosen when the scenario said 0); scenario_resolved keeps
     * what was asked. */
    json_object_set_new(o, "listen", json_string(st->listen[0] ? st->listen : c->listen));
    json_object_set_new(o, "metrics", st->metrics[0] ? json_string(st->metrics) : json_null());
    json_object_set_new(o, "next_hop",
                        c->element == OSN_NODE_UAS ? json_null() : json_string(c->next_hop));
    json_object_set_new(o, "elapsed_s", json_real(t));
    for (int i = 0; i < osn_node_counter_count(); i++)
        json_object_set_new(o, osn_node_counter_name(i),
                            json_integer((json_int_t)osn_node_counter_value(st, i)));
    json_object_set_new(o, "rss_peak_kb", json_integer((json_int_t)st->rss_peak_kb));
    /* What a kept transaction costs, its table's bytes over its records at their peak. */
    json_object_set_new(o, "kept_bytes_per_transaction",
                        st->kept_peak
                                ? json_real((double)st->kept_bytes_peak / (double)st->kept_peak)
                                : json_null());
    /* Several next hops: each one's counts (RFC 7339 5.10: the overload state is per server). */
    if (st->nhops > 0) {
        json_t *hops = json_array();
        for (int i = 0; i < st->nhops; i++) {
            const struct osn_node_hop_stats *h = &st->hops[i];
            json_array_append_new(
                    hops,
                    json_pack("{sssisIsIsIsIsIsIsIsIsb}", "server", h->server, "weight", h->weight,
                              "offered", (json_int_t)h->offered, "sent", (json_int_t)h->sent,
                              "invites", (json_int_t)h->invites, "shed", (json_int_t)h->shed,
                              "timeouts", (json_int_t)h->timeouts, "got_503",
                              (json_int_t)h->got_503, "downs", (json_int_t)h->downs, "failovers",
                              (json_int_t)h->failovers, "down", h->down));
        }
        json_object_set_new(o, "next_hops", hops);
    }
    /* Several workers: each one's counters (the ones above are their sums). */
    if (st->nworkers > 1) {
        json_t *ws = json_array();
        for (int w = 0; w < st->nworkers && w < OSN_NODE_MAX_WORKERS; w++) {
            json_t *one = json_object();
            for (int i = 0; i < osn_node_counter_count(); i++)
                json_object_set_new(one, osn_node_counter_name(i),
                                    json_integer((json_int_t)st->worker[w][i]));
            json_array_append_new(ws, one);
        }
        json_object_set_new(o, "workers", ws);
    }
    /* Rates per second of the run, as this element sees them; the generator's are the UAC's. */
    if (c->element == OSN_NODE_UAC)
        osn__node_uac_json(o, &st->uac);
    else
        proxy_rates(o, st, t);
    for (int i = 0; i < s->ini.nkeys; i++)
        json_object_set_new(keys, s->ini.keys[i].key, json_string(s->ini.keys[i].value));
    json_object_set_new(o, "scenario", keys);
    json_object_set_new(o, "scenario_resolved", resolved_json(c));
    json_object_set_new(o, "scenario_file", json_string(s->ini.path));
    rc = osn__report_json_dump(f, o, 10, err, errsize);
    json_decref(o);
    return rc;
}

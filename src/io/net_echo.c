/*
 * The network scenario as it ran, for the result files (src/io/net_report.c): where it came
 * from, every key that was set with its value as written, and every key of the schema that acts
 * with the value the simulator used, defaults included, so that a result file says what produced
 * it without the scenario file beside it. The values are read through the key table
 * (src/io/net_scenario.c), section by section.
 */
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io_int.h"
#include "osn/net_scenario.h"

static json_t *num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

enum {
    LIST_ROOM =
            2 * OSN_NET_MAX_STEPS > OSN_NET_MAX_EDGES ? 2 * OSN_NET_MAX_STEPS : OSN_NET_MAX_EDGES
};

/* The value of key k in cfg as JSON: a number (an integer when its home is whole), a name, a
 * boolean, text, a list (of pairs). */
static json_t *key_json(const struct osn_key_spec *k, const void *cfg)
{
    double v[1], *list;
    int n;
    json_t *a;

    switch (k->type) {
    case OSN_KEY_CHOICE:
        return json_string(k->choices[osn_ini_key_index(k, cfg)]);
    case OSN_KEY_BOOL:
        return json_boolean(osn_ini_key_index(k, cfg));
    case OSN_KEY_STRING:
        return json_string((const char *)cfg + k->off);
    case OSN_KEY_LIST:
        /* the longest list: a profile's steps, or a share for each of net.edges' sources (a
         * written topology's rates of their own) */
        if (!(list = malloc(LIST_ROOM * sizeof *list)))
            return json_null();
        n = osn_ini_key_numbers(k, cfg, list, LIST_ROOM);
        a = json_array();
        for (int i = 0; i < n; i += k->pairs ? 2 : 1)
            json_array_append_new(a, k->pairs ? json_pack("[oo]", num(list[i]), num(list[i + 1]))
                                              : num(list[i]));
        free(list);
        return a;
    default:
        n = osn_ini_key_numbers(k, cfg, v, 1);
        if (n < 1)
            return json_null();
        if (k->type == OSN_KEY_LONG || k->store != OSN_KS_DOUBLE)
            return json_integer((json_int_t)v[0]);
        return num(v[0]);
    }
}

json_t *osn__keys_json(const struct osn_ini_schema *schema, const char *section, const void *cfg)
{
    json_t *o = json_object();

    for (size_t i = 0; i < schema->n; i++) {
        const struct osn_key_spec *k = &schema->defs[i];
        if (strcmp(k->section, section) == 0 && k->type != OSN_KEY_NONE &&
            osn_ini_key_acts(schema, k, cfg))
            json_object_set_new(o, k->name, key_json(k, cfg));
    }
    return o;
}

json_t *osn__net_scenario_json(const struct osn_net_scenario *s)
{
    const struct osn_net_cfg *c = &s->cfg;
    json_t *keys = json_object(), *r = json_object();

    for (int i = 0; i < s->ini.nkeys; i++)
        json_object_set_new(keys, s->ini.keys[i].key, json_string(s->ini.keys[i].value));
    /* --seed and --replications may set these after the file was read: always the run's
     * values, so that the keys say what ran, whichever way it was set. */
    char v[32];
    snprintf(v, sizeof v, "%d", c->replications);
    json_object_set_new(keys, "net.replications", json_string(v));
    snprintf(v, sizeof v, "%" PRIu64, c->seed);
    json_object_set_new(keys, "net.seed", json_string(v));
    const char *family = NULL;
    for (size_t i = 0; i < osn_net_schema.n; i++) {
        const char *sec = osn_net_schema.defs[i].section;
        if (osn_net_schema.defs[i].family > 0)
            family = sec; /* [server coreN]: one section per core, below */
        else if (osn_net_schema.defs[i].family)
            continue; /* [element NAME], ...: their keys are in "keys" as written */
        else if (!json_object_get(r, sec))
            json_object_set_new(r, sec, osn__keys_json(&osn_net_schema, sec, c));
    }
    /* A fanout's cores past the first, each under its own name: the family's keys read `core`,
     * so each is read from a copy whose `core` is that core. */
    for (int n = 2; family && c->topology == OSN_NET_FANOUT && n <= c->cores; n++) {
        struct osn_net_cfg *t = malloc(sizeof *t);
        if (!t)
            break;
        *t = *c;
        t->core = c->more_cores[n - 2];
        snprintf(v, sizeof v, "server core%d", n);
        json_object_set_new(r, v, osn__keys_json(&osn_net_schema, family, t));
        free(t);
    }
    return json_pack("{sososo}", "source", s->ini.path[0] ? json_string(s->ini.path) : json_null(),
                     "keys", keys, "resolved", r);
}

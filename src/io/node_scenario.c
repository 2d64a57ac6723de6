/*
 * Scenario files of `osn node` (osn/node_scenario.h): the [node] keys on top of a network
 * scenario's, read with the same origins and messages.
 */
#include "osn/node_scenario.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "osn/err.h"
#include "osn/net_scenario.h"

static const struct osn_ini_keydef node_keys[] = {
        {"node", "element"},  {"node", "listen"},          {"node", "next_hop"},
        {"node", "duration"}, {"node", "stats_interval"},  {"node", "max_transactions"},
        {"node", "metrics"},  {"node", "per_source_rate"},
};

static const struct osn_ini_schema node_schema = {node_keys, sizeof node_keys / sizeof node_keys[0],
                                                  &osn_net_schema};

static int text(const struct osn_ini *ini, const char *key, char *out, size_t size, char *err,
                size_t errsize)
{
    const struct osn_key_origin *o = osn_ini_get(ini, key);
    if (!o)
        return 0;
    if (strlen(o->value) >= size)
        return osn_ini_bad(o, err, errsize, "longer than %zu characters", size - 1);
    snprintf(out, size, "%s", o->value);
    return 0;
}

static int parse_node(const struct osn_ini *ini, struct osn_node_cfg *c, char *err, size_t errsize)
{
    static const char *const elements[] = {"edge", "core", "uas", NULL};
    const struct osn_key_origin *o;
    int rc = 0;
    long v;

    if ((o = osn_ini_get(ini, "node.element")))
        rc = osn_ini_choice(o, elements, &c->element, err, errsize);
    if (!rc)
        rc = text(ini, "node.listen", c->listen, sizeof c->listen, err, errsize);
    if (!rc)
        rc = text(ini, "node.next_hop", c->next_hop, sizeof c->next_hop, err, errsize);
    if (!rc)
        rc = text(ini, "node.metrics", c->metrics, sizeof c->metrics, err, errsize);
    if (!rc && (o = osn_ini_get(ini, "node.duration")))
        rc = osn_ini_double(o, 0, false, &c->duration, err, errsize);
    if (!rc && (o = osn_ini_get(ini, "node.stats_interval")))
        rc = osn_ini_double(o, 0, true, &c->stats_interval, err, errsize);
    if (!rc && (o = osn_ini_get(ini, "node.per_source_rate")))
        rc = osn_ini_double(o, 0, false, &c->per_source_rate, err, errsize);
    if (!rc && (o = osn_ini_get(ini, "node.max_transactions"))) {
        rc = osn_ini_long(o, 1, 100000000, &v, err, errsize);
        c->max_transactions = (size_t)v;
    }
    return rc;
}

/* The network scenario's element `el` as this node: its server, the control, the timers. */
static void from_net(const struct osn_net_cfg *net, struct osn_node_cfg *c)
{
    const struct osn_net_server_cfg *sv = c->element == OSN_NODE_EDGE   ? &net->edge
                                          : c->element == OSN_NODE_CORE ? &net->core
                                                                        : &net->uas;
    memcpy(c->cost, sv->cost, sizeof c->cost);
    c->buffer = sv->buffer;
    snprintf(c->ctl_kind, sizeof c->ctl_kind, "%s", net->ctl_kind);
    c->ctl = net->ctl;
    c->sip = net->sip;
}

int osn_node_scenario_load(struct osn_node_scenario *s, const char *path, const char *const *sets,
                           int nsets, char *err, size_t errsize)
{
    struct osn_node_scenario *tmp = calloc(1, sizeof *tmp);
    struct osn_net_cfg *net = calloc(1, sizeof *net);
    const char *bad = NULL;
    char why[256];
    int rc;

    if (!tmp || !net) {
        rc = OSN_ENOMEM;
        snprintf(err, errsize, "out of memory");
        goto out;
    }
    rc = osn_ini_collect(&tmp->ini, path, sets, nsets, &node_schema, err, errsize);
    if (rc)
        goto out;
    osn_net_cfg_default(net);
    osn_node_cfg_default(&tmp->cfg);
    rc = osn_net_scenario_parse(&tmp->ini, net, err, errsize);
    if (!rc)
        rc = parse_node(&tmp->ini, &tmp->cfg, err, errsize);
    if (rc)
        goto out;
    from_net(net, &tmp->cfg);
    if (osn_node_check(&tmp->cfg, &bad, why, sizeof why) != 0) {
        const struct osn_key_origin *o = bad ? osn_ini_get(&tmp->ini, bad) : NULL;
        if (o)
            rc = osn_ini_bad(o, err, errsize, "%s", why);
        else {
            snprintf(err, errsize, "%s%s%s: %s", tmp->ini.path[0] ? tmp->ini.path : "scenario",
                     bad ? ": key " : "", bad ? bad : "", why);
            rc = OSN_ECONFIG;
        }
        goto out;
    }
    *s = *tmp;
out:
    free(tmp);
    free(net);
    return rc;
}

/*
 * Scenario files of `osn node`: a network scenario (osn/net_scenario.h) plus a [node] section
 * that says which element of it this process is and where it listens. The element's costs and
 * buffer come from its [server NAME] section, the control from [control] (the server half at
 * the core, the client half at the edge, as the simulator wires a collapse chain), the timers
 * from [sip]: one file describes the system for `osn sim` and for a deployment on loopback.
 * The [node] keys: docs/scenario.md (osn_node_schema's table, src/io/node_scenario.c).
 */
#ifndef OSN_NODE_SCENARIO_H
#define OSN_NODE_SCENARIO_H

#include <stdio.h>

#include "osn/ini.h"
#include "osn/node.h"

/* The keys of a node scenario: [node], then the network's. */
extern const struct osn_ini_schema osn_node_schema;

struct osn_node_scenario {
    struct osn_ini ini;
    struct osn_node_cfg cfg;
};

/* Loads a node scenario (path may be NULL: defaults and overrides). Returns 0, or OSN_ECONFIG /
 * OSN_EIO with one line in err naming FILE:LINE or the --set flag and the key. On success s owns
 * its keys: osn_node_scenario_release() frees them. */
int osn_node_scenario_load(struct osn_node_scenario *s, const char *path, const char *const *sets,
                           int nsets, char *err, size_t errsize);

/* Frees the keys a loaded scenario holds. NULL, or a scenario zeroed or released: nothing. */
void osn_node_scenario_release(struct osn_node_scenario *s);

/* The summary of a run as one JSON object: the element, the counters, rates over the elapsed
 * time with the simulator's keys where they mean the same thing (offered, goodput, admitted,
 * failed_rejected, core_P0..P2, util), and every scenario key set. Returns 0 or OSN_EIO. */
int osn_node_report_json_write(FILE *f, const struct osn_node_scenario *s,
                               const struct osn_node_stats *st, char *err, size_t errsize);

/* The summary as a readable table. */
void osn_node_report_table(FILE *f, const struct osn_node_scenario *s,
                           const struct osn_node_stats *st);

#endif

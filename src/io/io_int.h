/*
 * io private interface: pieces of the result writers that the other writers of this module
 * (the simulator's, the optimiser's) reuse, so that every command describes a model the same way.
 */
#ifndef OSN_IO_INT_H
#define OSN_IO_INT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "osn/ctl.h"
#include "osn/model_scenario.h"

/* The words of a switching policy, for [model] policy and [control] policy alike: I and II, or
 * 1 and 2; a word's index modulo 2 is its enum osn_policy (model_scenario.c). */
extern const char *const osn__policy_names[];

/* "two-loop M|M|1 <L,H>|<H,R>: L=5 H=10 R=20, lambda=1.2 lambda'=0.6 mu=1, policy I\n" */
void osn__report_model_line(FILE *f, const struct osn_model *m);

/* The "scenario" JSON object: the model as solved, its source and every key set (new ref). */
json_t *osn__report_scenario_json(const struct osn_scenario *sc);

/* The topology the user wrote ([element NAME], [source NAME], [link A-B]; src/io/net_topo.c)
 * into c: the built-in shape it has, its servers, links and names. Returns 0 (also when the file
 * writes none), or OSN_ECONFIG with the file:line and key in err. */
struct osn_ini;
struct osn_net_cfg;
int osn__net_topo_load(const struct osn_ini *ini, struct osn_net_cfg *c, char *err, size_t errsize);

struct osn_net_scenario;
/* The network scenario as it ran: its source, the keys set, and every key of the schema with
 * the value used, defaults included (src/io/net_echo.c; new ref, NULL when out of memory). */
json_t *osn__net_scenario_json(const struct osn_net_scenario *s);

/* The queue simulator's scenario as run: every key that applies to the model's shape with the
 * value used, defaults included, by section (src/io/sim_echo.c; new ref, NULL when out of
 * memory). */
struct osn_sim_scenario;
json_t *osn__sim_scenario_resolved(const struct osn_sim_scenario *s);

/* The keys of `section` in schema's own table with their values in cfg (the struct the table's
 * offsets are into), in table order, those that do not act left out (src/io/net_echo.c; new
 * ref). */
struct osn_ini_schema;
json_t *osn__keys_json(const struct osn_ini_schema *schema, const char *section, const void *cfg);

/*
 * Writes a result document to f, indented, reals to `precision` significant digits, and a final
 * newline. A document that is an object (or each object of an array: a sweep) first gets
 * "osn_version", so that every result file names the build that wrote it. Returns 0, or OSN_EIO
 * with "cannot write the JSON result" in err (OSN_ENOMEM when the version cannot be added).
 */
int osn__report_json_dump(FILE *f, json_t *doc, int precision, char *err, size_t errsize);

/* The load generator's measures (node_uac_report.c): keys into o, and the table's lines. */
struct osn_node_uac_stats;
void osn__node_uac_json(json_t *o, const struct osn_node_uac_stats *u);
void osn__node_uac_table(FILE *f, const struct osn_node_uac_stats *u);

#endif

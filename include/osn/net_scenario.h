/*
 * Scenario files and result writers of the SIP network simulator (`osn sim` on a scenario with
 * a [net] or [source] section), in the io library.
 *
 * Sections [net], [source], [server edge|core|uas], [link access|trunk|uas], [control] and
 * [sip] (a [node] section, the node's, is accepted and not read): every key is one line of the
 * table in src/io/net_scenario.c, which docs/scenario.md and `osn sim --help` print. Every error
 * names FILE:LINE or the --set flag and the key, as for the other scenario formats.
 */
#ifndef OSN_NET_SCENARIO_H
#define OSN_NET_SCENARIO_H

#include <stdbool.h>
#include <stdio.h>

#include "osn/ini.h"
#include "osn/net.h"

/* The keys of a network scenario (its own chain: it does not take the model's sections). */
extern const struct osn_ini_schema osn_net_schema;

struct osn_net_scenario {
    struct osn_ini ini;     /* every key set, with its origin */
    struct osn_net_cfg cfg; /* the values over osn_net_cfg_default() */
};

/* True when the file at `path` has a [net] or [source] section (a network scenario). */
bool osn_net_scenario_sniff(const char *path);

/* Loads a network scenario. Returns 0, or OSN_ECONFIG / OSN_EIO / OSN_ENOMEM with one line in
 * err; *s is written only on success, and then owns allocations: osn_net_scenario_release(). */
int osn_net_scenario_load(struct osn_net_scenario *s, const char *path, const char *const *sets,
                          int nsets, char *err, size_t errsize);

/* Frees what a scenario osn_net_scenario_load() filled owns (its keys, a written topology's
 * element names) and clears it; a copy of s or of s->cfg made before shares them and must not be
 * used after. NULL, or a scenario zeroed or already released: nothing. */
void osn_net_scenario_release(struct osn_net_scenario *s);

/* Frees the arrays osn_net_scenario_parse() allocated for the file (cfg.elem_names, link,
 * edge_own and src.share) and clears them with their counts (named, nlinks, edges_own and
 * src.nshares 0). NULL, or none: nothing. */
void osn_net_cfg_arrays_free(struct osn_net_cfg *c);

/* The keys of s that a network simulation does not read (the [node] section, which only `osn
 * node` reads), as "node.element (FILE:LINE), ..." in buf (truncated to size). Returns how many
 * there are. */
int osn_net_scenario_unread(const struct osn_net_scenario *s, char *buf, size_t size);

/* The values of collected keys over the defaults already in *c (osn_net_cfg_default): for
 * loaders that read a network scenario's sections among their own (`osn node`). Returns 0 or
 * OSN_ECONFIG with the key and where it was set in err. The arrays of the file (a written
 * topology's element names, links and first proxies of their own, the sources' shares) are
 * allocated into c, also on failure: free them with osn_net_cfg_arrays_free(). */
int osn_net_scenario_parse(const struct osn_ini *ini, struct osn_net_cfg *c, char *err,
                           size_t errsize);

/* Checks s->cfg after command-line changes; the message names the key and where it was set. */
int osn_net_scenario_check(const struct osn_net_scenario *s, char *err, size_t errsize);

/* An upper estimate of the memory a run of c needs at its peak (bytes; the calls in flight at
 * the peak arrival rate) and, in *calls (if not NULL), the calls it simulates. The check above
 * refuses a run past half the machine's memory. */
double osn_net_scenario_memory(const struct osn_net_cfg *c, double *calls);

/* The table: the network, then "key value +- half-width unit meaning", then the elements. */
void osn_net_report_table(FILE *f, const struct osn_net_scenario *s,
                          const struct osn_net_result *res);

/* One JSON object per result (the measure keys, KEY_ci, "elements", run figures). `sweep_key`
 * and `sweep_value` (may be NULL) record the swept key. Returns 0, OSN_ENOMEM or OSN_EIO. */
int osn_net_report_json_write(FILE *f, const struct osn_net_scenario *const *s,
                              const struct osn_net_result *const *res, int n, const char *sweep_key,
                              char *err, size_t errsize);

/* CSV: a header line and one row per result. */
int osn_net_report_csv_write(FILE *f, const struct osn_net_scenario *const *s,
                             const struct osn_net_result *const *res, int n, const char *sweep_key,
                             char *err, size_t errsize);

/* --replications-out: a header line and one row per replication of each run (the swept key's
 * value first in a sweep): replication, seed, stream, then each measure's estimate from that
 * replication alone (per_rep[run], filled through osn_net_cfg.rep_measures). 0 or OSN_EIO. */
int osn_net_report_reps_csv_write(FILE *f, const struct osn_net_scenario *const *s,
                                  const double *const *per_rep, int n, const char *sweep_key,
                                  char *err, size_t errsize);

#endif

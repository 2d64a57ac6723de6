/*
 * Parameter studies: several --set values given as ranges (LO:HI:STEP) or lists (A,B,C) form
 * a grid, the cartesian product of their values, and each point of the grid is one run of a
 * subcommand. The driver (study.c) knows nothing of what a run computes: a runner (study_run.c)
 * loads the scenario with the point's --set values, runs it and hands back its JSON object, to
 * which the driver adds the point's keys. On top of the grid: --resume FILE (a checkpoint
 * rewritten after every point, and every --precision round; the points it holds are not run
 * again, a point in progress goes on from its replications) and --precision REL (replications
 * in rounds until the headline half-widths are at most REL x the estimate).
 */
#ifndef OSN_CLI_STUDY_H
#define OSN_CLI_STUDY_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

struct osn_reps;
struct osn_split;

/* What one run of a point is given: the scenario and every --set (the point's values in place
 * of the ranges and lists, then --seed and --replications as keys). */
struct study_run {
    const char *scenario; /* NULL: defaults only (osn solve) */
    const char **sets;
    int nsets;
    int threads;        /* worker threads of a simulation */
    const char *method; /* osn solve --method, or NULL */
    bool check_only;    /* load and check the point, do not run it */
    /* A simulation's replications kept from the point's earlier rounds (osn/reps.h): not run
     * again, and afterwards all of the run's; NULL: none kept. */
    struct osn_reps *keep;
    /* NULL, or the MPI ranks that share the point's replications (osn/split.h), each running
     * the same point at the same time. */
    const struct osn_split *split;
};

/* How the driver runs one subcommand. */
struct study_runner {
    const char *cmd;             /* "sim", "solve", "fluid": messages and the study id */
    const char *seed_key;        /* the scenario key --seed sets; NULL: no --seed */
    const char *reps_key;        /* the key --replications sets; NULL: deterministic */
    const char *const *headline; /* JSON keys of the table's columns, NULL-ended */
    const char *const *precise;  /* keys whose KEY_ci --precision bounds, NULL-ended */
    bool method;                 /* takes --method (osn solve) */
    /* Runs one point into *out (a JSON object). 0, or not 0 with a reason in err. */
    int (*run)(const struct study_run *r, json_t **out, char *err, size_t errsize);
    /* The totals of one kept replication (struct osn_reps.ntot); NULL: no replications. */
    int (*reps_ntot)(void);
};

extern const struct study_runner osn_study_net, osn_study_node, osn_study_solve, osn_study_fluid;

/* Whether argv asks for a study: a --set list (A,B with no blank), --resume, --precision or
 * --max-replications, two ranges, or one range when `range_is_study` (only the network
 * simulator had a one-range sweep of its own before). */
bool osn_study_wanted(int argc, char **argv, bool range_is_study);

/* Runs the study argv asks for; returns the exit status (0, or 2 after saying why). */
int osn_study_main(const struct study_runner *r, int argc, char **argv);

/* The --help paragraph on studies, for every subcommand that has them. */
void osn_study_usage(FILE *f, bool replications);

#endif

/*
 * Campaigns (the study module): parameter grids, replications in --precision rounds, the
 * --resume checkpoint and the sharing of the points among MPI ranks. Several --set values given
 * as ranges (LO:HI:STEP) or lists (A,B,C) form a grid, the cartesian product of their values,
 * and each point of the grid is one run of a subcommand. The driver knows nothing of what a run
 * computes, nor of SIP: the command hands it a runner (struct osn_study_runner) that loads the
 * scenario with the point's --set values, runs it and hands back its JSON object, to which the
 * driver adds the point's keys. On top of the grid: --resume FILE (a checkpoint rewritten after
 * every point, and every --precision round; the points it holds are not run again, a point in
 * progress goes on from its replications) and --precision REL (replications in rounds until
 * the headline half-widths are at most REL x the estimate).
 *
 * The command (src/cli) parses the options into struct osn_study_opts and checks their values;
 * the outputs (JSON, CSV, the table) are its too. Every function here that fails leaves why in
 * s->err and returns OSN_STUDY_FAILED: the command says it.
 */
#ifndef OSN_CAMPAIGN_H
#define OSN_CAMPAIGN_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "osn/split.h"

/* What a failed study returns (the exit status of the command). */
#define OSN_STUDY_FAILED 2

#define STUDY_MAX_VALUES 1000   /* values of one varied key */
#define STUDY_MAX_POINTS 100000 /* points of a grid */
#define STUDY_MAX_AXES   16     /* varied keys */

struct osn_study_axis {
    int set;      /* index of its --set */
    char key[96]; /* SECTION.KEY as given */
    char **vals;  /* the values as --set takes them (a range's as %.10g) */
    int n;
};

struct osn_study_grid {
    struct osn_study_axis *axes; /* in the order of the --set flags */
    int naxes;
    long npoints; /* product of the axes' n; 1 without axes */
};

/* Whether the key key[0..len) takes a list of numbers as its one value (service.probs...): a
 * comma in its value is not a grid's. */
bool osn_study_key_takes_list(const char *key, size_t len);

/* Reads the ranges and lists among sets into g. 0, or not 0 with a reason naming the flag in
 * err. */
int osn_study_grid_parse(struct osn_study_grid *g, const char *const *sets, int nsets, char *err,
                         size_t errsize);

void osn_study_grid_free(struct osn_study_grid *g);

/* The value index on each axis of point p (idx has naxes entries). */
void osn_study_grid_point(const struct osn_study_grid *g, long p, int *idx);

/* The JSON value of axis a's value v: a number when the text is one, else the string. */
json_t *osn_study_grid_value(const struct osn_study_axis *a, int v);

/* "KEY=VAL, KEY=VAL" of point p, for messages. */
void osn_study_grid_describe(const struct osn_study_grid *g, long p, char *buf, size_t size);

struct osn_reps;

/* What one run of a point is given: the scenario and every --set (the point's values in place
 * of the ranges and lists, then --seed and --replications as keys). */
struct osn_study_run {
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
struct osn_study_runner {
    const char *cmd;             /* "sim", "solve", "fluid": messages and the study id */
    const char *seed_key;        /* the scenario key --seed sets; NULL: no --seed */
    const char *reps_key;        /* the key --replications sets; NULL: deterministic */
    const char *const *headline; /* JSON keys of the table's columns, NULL-ended */
    const char *const *precise;  /* keys whose KEY_ci --precision bounds, NULL-ended */
    bool method;                 /* takes --method (osn solve) */
    /* Runs one point into *out (a JSON object). 0, or not 0 with a reason in err. */
    int (*run)(const struct osn_study_run *r, json_t **out, char *err, size_t errsize);
    /* The totals of one kept replication (struct osn_reps.ntot); NULL: no replications; 0: they
     * depend on the point (a network's elements), a checkpoint's count is taken as it is and the
     * simulator checks it when the point goes on. */
    int (*reps_ntot)(void);
};

#define STUDY_MAX_REPLICATIONS 100000
#define STUDY_NREFUSED         5 /* options of a single run that a study refuses, by name */

struct osn_study_opts {
    const char *scenario;
    const char **sets;
    int nsets;
    const char *json, *csv, *seed, *reps, *threads, *resume, *precision, *max_reps, *method;
    /* --trace, --trace-interval, --dist, --plot, --replications-out: single runs only */
    const char *refused[STUDY_NREFUSED];
    bool quiet, help;
};

struct osn_study {
    const struct osn_study_runner *r;
    struct osn_study_opts o;
    struct osn_study_grid g;
    char id[32];
    long reps0, max_reps; /* first round's replications (0: the scenario's), the maximum */
    double rel;           /* --precision; 0 without */
    long threads;
    json_t **points; /* one object per grid point, NULL while not run */
    /* With --precision, one per grid point: the replications of a point in progress, kept
     * from round to round and saved in the checkpoint after each */
    struct study_partial *partial;  /* (private to src/study) */
    long resumed, ran, in_progress; /* points taken, run, and resumed in the middle */
    int rank;                       /* this process's MPI rank (0: the one that writes) */
    /* With fewer points to run than ranks, every rank runs every point, sharing its
     * replications (split); otherwise the points are dealt over the ranks. */
    bool shared;
    struct osn_split split;
    /* The ranks have begun to exchange (the barrier after every point was checked): before it,
     * every rank reads the same arguments, files and checkpoint, so an error is met by every
     * rank alike and each leaves on its own (osn_study_mpi_finish_everywhere, study_mpi.h) */
    bool exchanged;
    char err[2048]; /* why the study failed */
};

/* Runs the study s describes (its runner, options and grid set, the options checked): gives it
 * its id, takes the --resume checkpoint, checks every point, then runs the points this rank
 * runs (rank of size). 0 or OSN_STUDY_FAILED with why in s->err. */
int osn_study_campaign_run(struct osn_study *s, int rank, int size);

/* Frees what s holds (not s). */
void osn_study_free(struct osn_study *s);

/* The points done, in grid order, as one array (a new reference, NULL without memory). */
json_t *osn_study_done_array(const struct osn_study *s);

/* Writes doc as the study's JSON; 0 or -1. */
int osn_study_dump(FILE *f, const json_t *doc);

#endif

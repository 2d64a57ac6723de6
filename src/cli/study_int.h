/* What the files of the study driver share (study.c, study_resume.c, study_table.c). */
#ifndef OSN_CLI_STUDY_INT_H
#define OSN_CLI_STUDY_INT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "osn/split.h"
#include "study.h"
#include "study_grid.h"
#include "study_partial.h"

#define MAX_REPLICATIONS 100000
#define STUDY_NREFUSED   5 /* options of a single run that a study refuses, by name */

struct study_opts {
    const char *scenario;
    const char **sets;
    int nsets;
    const char *json, *csv, *seed, *reps, *threads, *resume, *precision, *max_reps, *method;
    /* --trace, --trace-interval, --dist, --plot, --replications-out: single runs only */
    const char *refused[STUDY_NREFUSED];
    bool quiet, help;
};

struct study {
    const struct study_runner *r;
    struct study_opts o;
    struct study_grid g;
    char id[32];
    long reps0, max_reps; /* first round's replications (0: the scenario's), the maximum */
    double rel;           /* --precision; 0 without */
    long threads;
    json_t **points; /* one object per grid point, NULL while not run */
    /* With --precision, one per grid point: the replications of a point in progress, kept
     * from round to round and saved in the checkpoint after each */
    struct study_partial *partial;
    long resumed, ran, in_progress; /* points taken, run, and resumed in the middle */
    int rank;                       /* this process's MPI rank (0: the one that writes) */
    /* With fewer points to run than ranks, every rank runs every point, sharing its
     * replications (split); otherwise the points are dealt over the ranks. */
    bool shared;
    struct osn_split split;
    char err[2048]; /* why a point failed (run_point) */
};

/* Fills s->points from the --resume file (when it exists) and counts them in s->resumed, and
 * s->partial with its points in progress (s->in_progress); a file that is not this study's, or
 * whose points in progress are damaged, is refused and left as it is. 0 or OSN_EXIT_ERROR
 * (told). */
int study_resume_load(struct study *s);

/* The table on stdout: a row per point, grouped by the first varied key. */
void study_table(FILE *f, const struct study *s);

/* The points done, in grid order, as one array (a new reference, NULL without memory). */
json_t *study_done_array(const struct study *s);

/* Point p's entry: its varied keys with their values, then study_id (a new reference). */
json_t *study_point_head(const struct study *s, long p);

/* The replication count of --precision's round r (1, 2, ...): --replications, doubled at each
 * round up to --max-replications. */
long study_round_reps(const struct study *s, int r);

/* Writes doc as the study's JSON; 0 or -1. */
int study_dump(FILE *f, const json_t *doc);

#endif

/*
 * The grid of a study: which --set values vary (a range LO:HI:STEP or a list A,B,C) and the
 * points, their cartesian product, the first varied key changing slowest.
 */
#ifndef OSN_CLI_STUDY_GRID_H
#define OSN_CLI_STUDY_GRID_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define STUDY_MAX_VALUES 1000   /* values of one varied key */
#define STUDY_MAX_POINTS 100000 /* points of a grid */
#define STUDY_MAX_AXES   16     /* varied keys */

struct study_axis {
    int set;      /* index of its --set */
    char key[96]; /* SECTION.KEY as given */
    char **vals;  /* the values as --set takes them (a range's as %.10g) */
    int n;
};

struct study_grid {
    struct study_axis *axes; /* in the order of the --set flags */
    int naxes;
    long npoints; /* product of the axes' n; 1 without axes */
};

/* Whether the key key[0..len) takes a list of numbers as its one value (service.probs...): a
 * comma in its value is not a grid's. */
bool study_key_takes_list(const char *key, size_t len);

/* Reads the ranges and lists among sets into g. 0, or not 0 with a reason naming the flag in
 * err. */
int study_grid_parse(struct study_grid *g, const char *const *sets, int nsets, char *err,
                     size_t errsize);

void study_grid_free(struct study_grid *g);

/* The value index on each axis of point p (idx has naxes entries). */
void study_grid_point(const struct study_grid *g, long p, int *idx);

/* The JSON value of axis a's value v: a number when the text is one, else the string. */
json_t *study_grid_value(const struct study_axis *a, int v);

/* "KEY=VAL, KEY=VAL" of point p, for messages. */
void study_grid_describe(const struct study_grid *g, long p, char *buf, size_t size);

#endif

/*
 * A point in progress in a study's --resume checkpoint (with --precision): the replications its
 * rounds have run so far, each with the raw totals the simulator pools (osn/reps.h), so that a
 * study killed in the middle of a point goes on from them and writes the numbers an
 * uninterrupted run writes, bit for bit. In the checkpoint it is the point's entry (its varied
 * keys and study_id) with an object "study_partial" in place of the results:
 *   replications  the replications held (those of the rounds done)
 *   rounds        the rounds done
 *   totals        the totals per replication (the simulator's struct osn_reps.ntot)
 *   records       one string per replication: "EVENTS MESSAGES K (INDEX VALUE) x K NRET
 *                 VALUE x NRET", the K non-zero totals by index, then the return times; every
 *                 value in the shortest decimal that reads back as the same double
 *   checksum      FNV-1a (64 bits, hex) of the above: a record changed by hand or by a damaged
 *                 disk is refused, not run on
 */
#ifndef OSN_STUDY_PARTIAL_H
#define OSN_STUDY_PARTIAL_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "osn/reps.h"

struct study_partial {
    struct osn_reps reps; /* the replications of the rounds done so far */
    int rounds;           /* rounds done */
    long from_file;       /* replications read from the --resume file */
    long ran;             /* replications this process simulated for the point */
    bool counted;         /* ran counts every replication run for it (not another rank's) */
};

/* Adds "study_partial" with pt's replications to o (the point's entry). 0, or -1 without
 * memory. */
int osn__study_partial_put(json_t *o, const struct study_partial *pt);

/* Reads the "study_partial" of the entry o into *pt (empty before) when its totals are ntot per
 * replication. 0, or -1 with why in err (pt then empty). */
int osn__study_partial_get(const json_t *o, int ntot, struct study_partial *pt, char *err,
                           size_t errsize);

#endif

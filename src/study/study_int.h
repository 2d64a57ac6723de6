/* What the files of the study driver share (campaign.c, resume.c). */
#ifndef OSN_STUDY_INT_H
#define OSN_STUDY_INT_H

#include "osn/campaign.h"
#include "partial.h"

/* Leaves the message in s->err (which may be one of the arguments) and returns
 * OSN_STUDY_FAILED. */
int osn__study_fail(struct osn_study *s, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));

/* Fills s->points from the --resume file (when it exists) and counts them in s->resumed, and
 * s->partial with its points in progress (s->in_progress); a file that is not this study's, or
 * whose points in progress are damaged, is refused and left as it is. 0 or OSN_STUDY_FAILED. */
int osn__study_resume_load(struct osn_study *s);

/* Point p's entry: its varied keys with their values, then study_id (a new reference). */
json_t *osn__study_point_head(const struct osn_study *s, long p);

/* The replication count of --precision's round r (1, 2, ...): --replications, doubled at each
 * round up to --max-replications. */
long osn__study_round_reps(const struct osn_study *s, int r);

#endif

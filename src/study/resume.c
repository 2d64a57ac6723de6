/*
 * --resume FILE of a study: the checkpoint the driver rewrites after every point (and, with
 * --precision, after every round). The points it holds are taken as they are and not run again;
 * a point in progress (an entry with study_partial) goes on from the replications it holds. A
 * file that is not JSON, not an array of points, from another study (another study_id: the
 * scenario file, a fixed --set, --seed, --replications or --precision changed), with a point
 * outside this grid or twice, or with a point in progress whose replications are damaged or do
 * not fit the rounds of this study, is refused before anything runs, and left as it is.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "study_int.h"

/* The grid point whose varied values o carries; -1 when none. */
static long find_point(const struct osn_study *s, const json_t *o)
{
    int idx[STUDY_MAX_AXES];
    for (long p = 0; p < s->g.npoints; p++) {
        osn_study_grid_point(&s->g, p, idx);
        bool same = true;
        for (int k = 0; k < s->g.naxes && same; k++) {
            json_t *want = osn_study_grid_value(&s->g.axes[k], idx[k]);
            same = json_equal(json_object_get(o, s->g.axes[k].key), want);
            json_decref(want);
        }
        if (same)
            return p;
    }
    return -1;
}

/* Entry i, point p in progress, into s->partial[p]. 0 or OSN_STUDY_FAILED. */
static int take_partial(struct osn_study *s, const json_t *o, long p, size_t i)
{
    char why[512];
    if (!s->partial)
        snprintf(why, sizeof why, "this study has no --precision, whose rounds it would go on");
    else if (osn__study_partial_get(o, s->r->reps_ntot(), &s->partial[p], why, sizeof why) != 0)
        ; /* why says it */
    else if (osn__study_round_reps(s, s->partial[p].rounds) != s->partial[p].reps.n ||
             s->partial[p].reps.n >= s->max_reps) {
        snprintf(why, sizeof why,
                 "its %ld replications after %d rounds are not what the rounds of this study "
                 "run (--replications %ld doubled up to --max-replications %ld)",
                 s->partial[p].reps.n, s->partial[p].rounds, s->reps0, s->max_reps);
        osn_reps_free(&s->partial[p].reps);
    } else {
        s->in_progress++;
        return 0;
    }
    return osn__study_fail(
            s,
            "--resume %s: entry %zu, a point in progress, is refused: %s; the file is "
            "left as it is",
            s->o.resume, i + 1, why);
}

int osn__study_resume_load(struct osn_study *s)
{
    const char *path = s->o.resume;
    struct stat st;
    json_error_t je;

    if (stat(path, &st) != 0 && errno == ENOENT)
        return 0; /* a new study: the checkpoint starts with its first point */
    json_t *doc = json_load_file(path, 0, &je);
    if (!doc)
        return osn__study_fail(s,
                               "--resume %s: not a result file of a study (line %d: %s); it "
                               "is left as it is",
                               path, je.line, je.text);
    int rc = 0;
    size_t i;
    json_t *o;
    if (!json_is_array(doc)) {
        rc = osn__study_fail(s,
                             "--resume %s: not a result file of a study (expected a JSON "
                             "array of points, as --json writes for a study); it is left as it is",
                             path);
        goto out;
    }
    json_array_foreach(doc, i, o)
    {
        const char *id = json_string_value(json_object_get(o, "study_id"));
        if (!json_is_object(o) || !id) {
            rc = osn__study_fail(s,
                                 "--resume %s: entry %zu is not a point of a study (no "
                                 "study_id); the file is left as it is",
                                 path, i + 1);
            goto out;
        }
        if (strcmp(id, s->id) != 0) {
            rc = osn__study_fail(s,
                                 "--resume %s: entry %zu belongs to another study (study_id "
                                 "%s, this one %s: the scenario file, a fixed --set, --seed, "
                                 "--replications or --precision differ); the file is left as "
                                 "it is",
                                 path, i + 1, id, s->id);
            goto out;
        }
        long p = find_point(s, o);
        if (p < 0) {
            rc = osn__study_fail(s,
                                 "--resume %s: entry %zu is not a point of this grid (a value "
                                 "of a varied --set was dropped?); the file is left as it is",
                                 path, i + 1);
            goto out;
        }
        if (s->points[p] || (s->partial && s->partial[p].reps.n > 0)) {
            rc = osn__study_fail(s,
                                 "--resume %s: entry %zu repeats an earlier point; the file is "
                                 "left as it is",
                                 path, i + 1);
            goto out;
        }
        if (json_object_get(o, "study_partial")) {
            if ((rc = take_partial(s, o, p, i)) != 0)
                goto out;
            continue;
        }
        s->points[p] = json_incref(o);
        s->resumed++;
    }
out:
    json_decref(doc);
    return rc;
}

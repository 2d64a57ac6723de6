/*
 * --resume FILE of a study: the checkpoint the driver rewrites after every point. The points it
 * holds are taken as they are and not run again. A file that is not JSON, not an array of
 * points, from another study (another study_id: the scenario file, a fixed --set, --seed,
 * --replications or --precision changed), or with a point outside this grid or twice, is
 * refused before anything runs, and left as it is.
 */
#include <errno.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "study_int.h"

/* The grid point whose varied values o carries; -1 when none. */
static long find_point(const struct study *s, const json_t *o)
{
    int idx[STUDY_MAX_AXES];
    for (long p = 0; p < s->g.npoints; p++) {
        study_grid_point(&s->g, p, idx);
        bool same = true;
        for (int k = 0; k < s->g.naxes && same; k++) {
            json_t *want = study_grid_value(&s->g.axes[k], idx[k]);
            same = json_equal(json_object_get(o, s->g.axes[k].key), want);
            json_decref(want);
        }
        if (same)
            return p;
    }
    return -1;
}

int study_resume_load(struct study *s)
{
    const char *cmd = s->r->cmd, *path = s->o.resume;
    struct stat st;
    json_error_t je;

    if (stat(path, &st) != 0 && errno == ENOENT)
        return 0; /* a new study: the checkpoint starts with its first point */
    json_t *doc = json_load_file(path, 0, &je);
    if (!doc)
        return osn_cli_die(cmd,
                           "--resume %s: not a result file of a study (line %d: %s); it "
                           "is left as it is",
                           path, je.line, je.text);
    int rc = 0;
    size_t i;
    json_t *o;
    if (!json_is_array(doc)) {
        rc = osn_cli_die(cmd,
                         "--resume %s: not a result file of a study (expected a JSON "
                         "array of points, as --json writes for a study); it is left as it is",
                         path);
        goto out;
    }
    json_array_foreach(doc, i, o)
    {
        const char *id = json_string_value(json_object_get(o, "study_id"));
        if (!json_is_object(o) || !id) {
            rc = osn_cli_die(cmd,
                             "--resume %s: entry %zu is not a point of a study (no "
                             "study_id); the file is left as it is",
                             path, i + 1);
            goto out;
        }
        if (strcmp(id, s->id) != 0) {
            rc = osn_cli_die(cmd,
                             "--resume %s: entry %zu belongs to another study (study_id "
                             "%s, this one %s: the scenario file, a fixed --set, --seed, "
                             "--replications or --precision differ); the file is left as "
                             "it is",
                             path, i + 1, id, s->id);
            goto out;
        }
        long p = find_point(s, o);
        if (p < 0) {
            rc = osn_cli_die(cmd,
                             "--resume %s: entry %zu is not a point of this grid (a value "
                             "of a varied --set was dropped?); the file is left as it is",
                             path, i + 1);
            goto out;
        }
        if (s->points[p]) {
            rc = osn_cli_die(cmd,
                             "--resume %s: entry %zu repeats an earlier point; the file is "
                             "left as it is",
                             path, i + 1);
            goto out;
        }
        s->points[p] = json_incref(o);
        s->resumed++;
    }
out:
    json_decref(doc);
    return rc;
}

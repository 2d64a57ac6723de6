/* The table of a study (study.h): one row per point, a blank line between the groups of
 * the first varied key, the varied keys then the runner's headline measures. */
#include <string.h>

#include "study.h"

/* A column is as wide as its key, at least 12. */
static int width(const char *key)
{
    int n = (int)strlen(key);
    return n < 12 ? 12 : n;
}

static void cell(FILE *f, int w, const json_t *v)
{
    if (json_is_number(v))
        fprintf(f, " %*.6g", w, json_number_value(v));
    else if (json_is_string(v))
        fprintf(f, " %*s", w, json_string_value(v));
    else if (json_is_boolean(v))
        fprintf(f, " %*s", w, json_is_true(v) ? "yes" : "no");
    else
        fprintf(f, " %*s", w, "n/a");
}

void study_table(FILE *f, const struct osn_study *s)
{
    const char *const *h = s->r->headline;
    fprintf(f, "study of %ld point%s (study_id %s)", s->g.npoints, s->g.npoints > 1 ? "s" : "",
            s->id);
    if (s->o.resume)
        fprintf(f, ", %ld from %s, %ld run now", s->resumed, s->o.resume, s->ran);
    fputs("\n\n ", f);
    for (int k = 0; k < s->g.naxes; k++)
        fprintf(f, " %*s", width(s->g.axes[k].key), s->g.axes[k].key);
    for (int k = 0; h[k]; k++)
        fprintf(f, " %*s", width(h[k]), h[k]);
    if (s->rel)
        fprintf(f, " %12s %12s", "replications", "precise");
    fputc('\n', f);
    const json_t *group = NULL;
    for (long p = 0; p < s->g.npoints; p++) {
        const json_t *o = s->points[p];
        if (!o)
            continue;
        const json_t *g0 = s->g.naxes > 1 ? json_object_get(o, s->g.axes[0].key) : NULL;
        if (group && g0 && !json_equal((json_t *)group, (json_t *)g0))
            fputc('\n', f);
        group = g0;
        fputc(' ', f);
        for (int k = 0; k < s->g.naxes; k++)
            cell(f, width(s->g.axes[k].key), json_object_get(o, s->g.axes[k].key));
        for (int k = 0; h[k]; k++)
            cell(f, width(h[k]), json_object_get(o, h[k]));
        if (s->rel) {
            cell(f, 12, json_object_get(o, "replications"));
            cell(f, 12, json_object_get(o, "precision_reached"));
        }
        fputc('\n', f);
    }
}

/* The grid of a study (osn/campaign.h). */
#include "osn/campaign.h"

#include <ctype.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The keys whose one value is a list of numbers ("1,2" or "1 2"): a comma there separates the
 * numbers of one value, never the values of a grid. Kept in step with the loaders' calls of
 * osn_ini_doubles() (the src/io scenario loaders). */
static const char *const list_keys[] = {"service.probs",
                                        "service.rates",
                                        "arrivals.phase_rates",
                                        "arrivals.phase_switch",
                                        "arrivals.overload_rates",

                                        "profile.mmpp_rates",
                                        "profile.mmpp_switch",
                                        "source.mmpp_rates",
                                        "source.mmpp_switch",
                                        "source.steps",
                                        NULL};

bool osn_study_key_takes_list(const char *key, size_t len)
{
    for (int i = 0; list_keys[i]; i++)
        if (strlen(list_keys[i]) == len && strncasecmp(key, list_keys[i], len) == 0)
            return true;
    return false;
}

static bool has_blank(const char *s)
{
    for (; *s; s++)
        if (isspace((unsigned char)*s))
            return true;
    return false;
}

static int add_value(struct osn_study_axis *a, const char *s, size_t len)
{
    char **v = realloc(a->vals, sizeof *v * (size_t)(a->n + 1));
    if (!v)
        return -1;
    a->vals = v;
    if (!(v[a->n] = strndup(s, len)))
        return -1;
    a->n++;
    return 0;
}

/* A range LO:HI:STEP: 1 and the values in a; 0 when value is not one; -1 after an error. */
static int parse_range(struct osn_study_axis *a, const char *set, const char *value, char *err,
                       size_t errsize)
{
    double lo, hi, st;
    char tail;
    if (sscanf(value, "%lf:%lf:%lf%c", &lo, &hi, &st, &tail) != 3)
        return 0;
    if (!(st > 0) || !(hi >= lo) || (hi - lo) / st >= STUDY_MAX_VALUES) {
        snprintf(err, errsize,
                 "--set %s: a range is LO:HI:STEP with STEP > 0, HI >= LO, at most %d values", set,
                 STUDY_MAX_VALUES);
        return -1;
    }
    for (int k = 0; lo + k * st <= hi * (1 + 1e-12) + 1e-12; k++) {
        char buf[64];
        int len = snprintf(buf, sizeof buf, "%.10g", lo + k * st);
        if (add_value(a, buf, (size_t)len) != 0) {
            snprintf(err, errsize, "out of memory");
            return -1;
        }
    }
    return 1;
}

/* A list A,B,C (a comma and no blank: "0 100, 10 300" stays one value of a list-valued key). */
static int parse_list(struct osn_study_axis *a, const char *set, const char *value, char *err,
                      size_t errsize)
{
    if (!strchr(value, ',') || has_blank(value) || osn_study_key_takes_list(a->key, strlen(a->key)))
        return 0;
    for (const char *s = value;;) {
        size_t len = strcspn(s, ",");
        if (len == 0) {
            snprintf(err, errsize,
                     "--set %s: an empty value in the list (two commas, or one at "
                     "an end)",
                     set);
            return -1;
        }
        for (int i = 0; i < a->n; i++)
            if (strlen(a->vals[i]) == len && strncmp(a->vals[i], s, len) == 0) {
                snprintf(err, errsize, "--set %s: the value '%.*s' is listed twice", set, (int)len,
                         s);
                return -1;
            }
        if (a->n >= STUDY_MAX_VALUES) {
            snprintf(err, errsize, "--set %s: more than %d values", set, STUDY_MAX_VALUES);
            return -1;
        }
        if (add_value(a, s, len) != 0) {
            snprintf(err, errsize, "out of memory");
            return -1;
        }
        if (!s[len])
            return 1;
        s += len + 1;
    }
}

int osn_study_grid_parse(struct osn_study_grid *g, const char *const *sets, int nsets, char *err,
                         size_t errsize)
{
    *g = (struct osn_study_grid){.npoints = 1};
    for (int i = 0; i < nsets; i++) {
        const char *eq = strchr(sets[i], '=');
        if (!eq)
            continue; /* the scenario loader names what is wrong with it */
        struct osn_study_axis a = {.set = i};
        snprintf(a.key, sizeof a.key, "%.*s", (int)(eq - sets[i]), sets[i]);
        int r = parse_range(&a, sets[i], eq + 1, err, errsize);
        if (r == 0)
            r = parse_list(&a, sets[i], eq + 1, err, errsize);
        if (r > 0) {
            for (int k = 0; k < g->naxes; k++)
                if (strcmp(g->axes[k].key, a.key) == 0) {
                    snprintf(err, errsize, "--set %s: the key %s is varied twice", sets[i], a.key);
                    r = -1;
                }
            if (r > 0 && g->naxes >= STUDY_MAX_AXES) {
                snprintf(err, errsize, "--set %s: more than %d varied keys", sets[i],
                         STUDY_MAX_AXES);
                r = -1;
            }
            if (r > 0 && g->npoints * a.n > STUDY_MAX_POINTS) {
                snprintf(err, errsize, "--set %s: the grid would have more than %d points", sets[i],
                         STUDY_MAX_POINTS);
                r = -1;
            }
        }
        struct osn_study_axis *ax =
                r > 0 ? realloc(g->axes, sizeof *ax * (size_t)(g->naxes + 1)) : NULL;
        if (r > 0 && !ax) {
            snprintf(err, errsize, "out of memory");
            r = -1;
        }
        if (r <= 0) {
            for (int k = 0; k < a.n; k++)
                free(a.vals[k]);
            free(a.vals);
            if (r < 0) {
                osn_study_grid_free(g);
                return -1;
            }
            continue;
        }
        g->axes = ax;
        g->axes[g->naxes++] = a;
        g->npoints *= a.n;
    }
    return 0;
}

void osn_study_grid_free(struct osn_study_grid *g)
{
    for (int k = 0; k < g->naxes; k++) {
        for (int v = 0; v < g->axes[k].n; v++)
            free(g->axes[k].vals[v]);
        free(g->axes[k].vals);
    }
    free(g->axes);
    *g = (struct osn_study_grid){.npoints = 1};
}

void osn_study_grid_point(const struct osn_study_grid *g, long p, int *idx)
{
    for (int k = g->naxes - 1; k >= 0; k--) {
        idx[k] = (int)(p % g->axes[k].n);
        p /= g->axes[k].n;
    }
}

json_t *osn_study_grid_value(const struct osn_study_axis *a, int v)
{
    char *end;
    double x = strtod(a->vals[v], &end);
    if (end != a->vals[v] && !*end && isfinite(x))
        return json_real(x);
    return json_string(a->vals[v]);
}

void osn_study_grid_describe(const struct osn_study_grid *g, long p, char *buf, size_t size)
{
    int idx[STUDY_MAX_AXES];
    size_t len = 0;
    buf[0] = '\0';
    osn_study_grid_point(g, p, idx);
    for (int k = 0; k < g->naxes && len < size; k++)
        len += (size_t)snprintf(buf + len, size - len, "%s%s=%s", k ? ", " : "", g->axes[k].key,
                                g->axes[k].vals[idx[k]]);
}

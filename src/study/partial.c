/* A point in progress in a study's checkpoint (partial.h): its replications as text. */
#include "partial.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_REPLICATIONS 100000

/* FNV-1a, 64 bits: finds a damaged record, not a forged one. */
static void fnv(uint64_t *h, const char *s)
{
    for (; *s; s++)
        *h = (*h ^ (unsigned char)*s) * 0x100000001b3ULL;
    *h = (*h ^ '\n') * 0x100000001b3ULL;
}

static uint64_t checksum_head(long n, int rounds, int ntot)
{
    char head[96];
    uint64_t h = 0xcbf29ce484222325ULL;
    snprintf(head, sizeof head, "%ld %d %d", n, rounds, ntot);
    fnv(&h, head);
    return h;
}

/* " V": the shortest decimal that strtod() reads back as v (17 digits always do). */
static void put_num(FILE *f, double v)
{
    char buf[40];
    for (int prec = 15; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    fprintf(f, " %s", buf);
}

/* Whether a total is left out of a record: +0.0 only (a -0.0 keeps its sign). */
static bool is_zero(double v)
{
    return v == 0 && !signbit(v);
}

/* Replication i of r as one line of text (malloc'd; NULL without memory). */
static char *record(const struct osn_reps *r, long i)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    const double *tot = r->tot + (size_t)i * (size_t)r->ntot;
    int k = 0;
    if (!f)
        return NULL;
    for (int t = 0; t < r->ntot; t++)
        k += !is_zero(tot[t]);
    fprintf(f, "%llu %llu %d", (unsigned long long)r->events[i], (unsigned long long)r->messages[i],
            k);
    for (int t = 0; t < r->ntot; t++)
        if (!is_zero(tot[t])) {
            fprintf(f, " %d", t);
            put_num(f, tot[t]);
        }
    fprintf(f, " %ld", r->nret[i]);
    for (long j = 0; j < r->nret[i]; j++)
        put_num(f, r->ret[i][j]);
    if (fclose(f) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

int osn__study_partial_put(json_t *o, const struct study_partial *pt)
{
    const struct osn_reps *r = &pt->reps;
    json_t *p = json_object(), *recs = json_array();
    uint64_t h = checksum_head(r->n, pt->rounds, r->ntot);
    char sum[20];
    int rc = p && recs ? 0 : -1;
    for (long i = 0; rc == 0 && i < r->n; i++) {
        char *text = record(r, i);
        if (!text || json_array_append_new(recs, json_string(text)) != 0)
            rc = -1;
        else
            fnv(&h, text);
        free(text);
    }
    snprintf(sum, sizeof sum, "%016llx", (unsigned long long)h);
    if (rc == 0 && (json_object_set_new(p, "replications", json_integer(r->n)) != 0 ||
                    json_object_set_new(p, "rounds", json_integer(pt->rounds)) != 0 ||
                    json_object_set_new(p, "totals", json_integer(r->ntot)) != 0 ||
                    json_object_set(p, "records", recs) != 0 ||
                    json_object_set_new(p, "checksum", json_string(sum)) != 0 ||
                    json_object_set(o, "study_partial", p) != 0))
        rc = -1;
    json_decref(recs);
    json_decref(p);
    return rc;
}

/* Reading a record: tokens parted by one blank, nothing else. */
struct cursor {
    const char *p;
    bool ok;
};

/* Steps over the blank after a token; the end of the text ends the last one. */
static void next(struct cursor *c, const char *end)
{
    if (end == c->p || (*end != ' ' && *end != '\0'))
        c->ok = false;
    c->p = *end == ' ' ? end + 1 : end;
}

static unsigned long long get_count(struct cursor *c)
{
    char *end;
    if (!c->ok || !isdigit((unsigned char)*c->p)) {
        c->ok = false;
        return 0;
    }
    errno = 0;
    unsigned long long v = strtoull(c->p, &end, 10);
    if (errno)
        c->ok = false;
    next(c, end);
    return v;
}

static double get_num(struct cursor *c)
{
    char *end;
    if (!c->ok || !*c->p || isspace((unsigned char)*c->p)) {
        c->ok = false;
        return 0;
    }
    double v = strtod(c->p, &end);
    next(c, end);
    return v;
}

/* Replication i of r from text; false when the text is not a record of r's shape. */
static bool parse_record(struct osn_reps *r, long i, const char *text)
{
    struct cursor c = {text, true};
    double *tot = r->tot + (size_t)i * (size_t)r->ntot;
    r->events[i] = get_count(&c);
    r->messages[i] = get_count(&c);
    unsigned long long k = get_count(&c);
    long last = -1;
    if (k > (unsigned long long)r->ntot)
        return false;
    for (unsigned long long j = 0; j < k && c.ok; j++) {
        unsigned long long t = get_count(&c);
        if (t >= (unsigned long long)r->ntot || (long)t <= last)
            return false;
        last = (long)t;
        tot[t] = get_num(&c);
    }
    unsigned long long nret = get_count(&c);
    if (!c.ok || nret > strlen(c.p) / 2 + 1) /* each value takes a digit and a blank */
        return false;
    r->nret[i] = (long)nret;
    if (nret > 0 && !(r->ret[i] = malloc((size_t)nret * sizeof *r->ret[i])))
        return false;
    for (unsigned long long j = 0; j < nret && c.ok; j++)
        r->ret[i][j] = get_num(&c);
    return c.ok && *c.p == '\0';
}

int osn__study_partial_get(const json_t *o, int ntot, struct study_partial *pt, char *err,
                           size_t errsize)
{
    const json_t *p = json_object_get(o, "study_partial");
    const json_t *recs = json_object_get(p, "records");
    json_int_t n = json_integer_value(json_object_get(p, "replications"));
    json_int_t rounds = json_integer_value(json_object_get(p, "rounds"));
    json_int_t tot = json_integer_value(json_object_get(p, "totals"));
    const char *sum = json_string_value(json_object_get(p, "checksum"));
    char want[20];

    *pt = (struct study_partial){0};
    if (!json_is_object(p) || !json_is_array(recs) || !sum || n < 1 || n > MAX_REPLICATIONS ||
        rounds < 1 || rounds > 64 || json_array_size(recs) != (size_t)n) {
        snprintf(err, errsize,
                 "its study_partial lacks replications (1 .. 100000), rounds, records (one a "
                 "replication) or checksum");
        return -1;
    }
    if (ntot == 0 && tot >= 1 && tot <= (1 << 24))
        ntot = (int)tot; /* the runner's count depends on the point: its simulator checks it */
    if (tot != ntot) {
        snprintf(err, errsize,
                 "its replications hold %lld totals each, this simulator's %d (another "
                 "version of osn?)",
                 (long long)tot, ntot);
        return -1;
    }
    uint64_t h = checksum_head((long)n, (int)rounds, ntot);
    for (size_t i = 0; i < (size_t)n; i++) {
        const char *text = json_string_value(json_array_get(recs, i));
        if (!text) {
            snprintf(err, errsize, "its record %zu is not a string", i + 1);
            return -1;
        }
        fnv(&h, text);
    }
    snprintf(want, sizeof want, "%016llx", (unsigned long long)h);
    if (strcmp(want, sum) != 0) {
        snprintf(err, errsize,
                 "its records do not match their checksum (%s, computed %s): the file was "
                 "changed or damaged",
                 sum, want);
        return -1;
    }
    if (osn_reps_reserve(&pt->reps, (long)n, ntot) != 0) {
        snprintf(err, errsize, "out of memory");
        return -1;
    }
    for (size_t i = 0; i < (size_t)n; i++)
        if (!parse_record(&pt->reps, (long)i, json_string_value(json_array_get(recs, i)))) {
            snprintf(err, errsize, "its record %zu is not a replication's totals", i + 1);
            osn_reps_free(&pt->reps);
            return -1;
        }
    pt->reps.n = (long)n;
    pt->rounds = (int)rounds;
    pt->from_file = (long)n;
    return 0;
}

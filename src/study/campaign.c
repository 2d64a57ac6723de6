/*
 * The driver of a parameter study (osn/campaign.h): gives the study its id, takes the points a
 * --resume checkpoint already holds, checks every point, runs the others one after the other
 * (each simulation on all its threads, the replications of a point being the parallel work),
 * with --precision in rounds of doubling replications, and deals the points over the MPI ranks
 * (or shares one point's replications among them). The command (src/cli/study.c) parses the
 * options before and writes the outputs after.
 *
 * Rounds add to the replications of the rounds before (osn/reps.h): replication i always draws
 * from stream i of the seed and the estimates pool the replications' raw totals in replication
 * order, so a point that took N replications over its rounds is exactly `--replications N`,
 * to the bit, and each replication runs once. With --resume those replications are saved in the
 * checkpoint after every round (partial.h): a point killed in its rounds goes on from them.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "osn/afile.h"
#include "osn/study_mpi.h"
#include "study_int.h"

int osn__study_fail(struct osn_study *s, const char *fmt, ...)
{
    char buf[sizeof s->err];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    memcpy(s->err, buf, sizeof buf);
    return OSN_STUDY_FAILED;
}

/* FNV-1a, 64 bits: a fingerprint of what decides the numbers, not a security measure. */
static void fnv(uint64_t *h, const void *p, size_t n)
{
    const unsigned char *s = p;
    for (size_t i = 0; i < n; i++)
        *h = (*h ^ s[i]) * 0x100000001b3ULL;
}

static void fnv_str(uint64_t *h, const char *s)
{
    fnv(h, s ? s : "\x01", s ? strlen(s) + 1 : 1);
}

/* The study's id: the command, the scenario file's bytes, every --set (a varied one by its key
 * only, so that a grid can be topped up with values), --seed, --replications, --precision,
 * --max-replications and --method. Two runs with the same id compute the same points. */
static int study_id(struct osn_study *s)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    fnv_str(&h, s->r->cmd);
    if (s->o.scenario) {
        FILE *f = fopen(s->o.scenario, "rb");
        char buf[8192];
        size_t n;
        if (!f)
            return osn__study_fail(s, "%s: %s", s->o.scenario, strerror(errno));
        while ((n = fread(buf, 1, sizeof buf, f)) > 0)
            fnv(&h, buf, n);
        fclose(f);
    }
    for (int i = 0; i < s->o.nsets; i++) {
        const char *set = s->o.sets[i];
        for (int k = 0; k < s->g.naxes; k++)
            if (s->g.axes[k].set == i)
                set = s->g.axes[k].key;
        fnv_str(&h, set);
    }
    const char *rest[] = {s->o.seed, s->o.reps, s->o.precision, s->o.max_reps, s->o.method};
    for (size_t i = 0; i < sizeof rest / sizeof *rest; i++)
        fnv_str(&h, rest[i]);
    snprintf(s->id, sizeof s->id, "%016llx", (unsigned long long)h);
    return 0;
}

/* Whether every --precision measure of o has a half-width at most rel x its estimate. */
static bool precise_enough(const struct osn_study *s, const json_t *o)
{
    char key[96];
    for (const char *const *k = s->r->precise; *k; k++) {
        snprintf(key, sizeof key, "%s_ci", *k);
        const json_t *v = json_object_get(o, *k), *h = json_object_get(o, key);
        if (!json_is_number(v) || !json_is_number(h) ||
            !(json_number_value(h) <= s->rel * fabs(json_number_value(v))))
            return false;
    }
    return true;
}

long osn__study_round_reps(const struct osn_study *s, int r)
{
    long n = s->reps0;
    for (int k = 1; k < r && n < s->max_reps; k++)
        n = n * 2 < s->max_reps ? n * 2 : s->max_reps;
    return n;
}

json_t *osn__study_point_head(const struct osn_study *s, long p)
{
    int idx[STUDY_MAX_AXES];
    json_t *o = json_object();
    osn_study_grid_point(&s->g, p, idx);
    for (int k = 0; o && k < s->g.naxes; k++)
        json_object_set_new(o, s->g.axes[k].key, osn_study_grid_value(&s->g.axes[k], idx[k]));
    if (o)
        json_object_set_new(o, "study_id", json_string(s->id));
    return o;
}

static int checkpoint_write(const struct osn_study *s, char *err, size_t errsize);

/* "point 2 of 6 (KEY=V, KEY=V): " of point p, nothing without a grid. */
static void where_is(const struct osn_study *s, long p, char *buf, size_t size)
{
    char vals[1024];
    buf[0] = '\0';
    osn_study_grid_describe(&s->g, p, vals, sizeof vals);
    if (s->g.naxes)
        snprintf(buf, size, "point %ld of %ld (%.900s): ", p + 1, s->g.npoints, vals);
}

/* Runs point p (with --precision, in rounds, from the replications s->partial[p] holds) into
 * s->points[p]; with check_only, loads and checks it only. With --precision and --resume, rank
 * 0 rewrites the checkpoint after every round that does not end the point. 0, or
 * OSN_STUDY_FAILED with the reason, naming the point, in s->err. */
static int run_point(struct osn_study *s, long p, bool check_only)
{
    const char **sets = s->o.sets; /* room for two more: osn_cli_parse(..., 2, ...) */
    const char *saved[STUDY_MAX_AXES];
    char vals[STUDY_MAX_AXES][512], seed[64], reps[64], err[1024] = "", where[1024];
    int idx[STUDY_MAX_AXES], nsets = s->o.nsets, rounds = 0, rc;
    struct study_partial *pt = s->partial ? &s->partial[p] : NULL;
    long n = s->reps0;
    json_t *res = NULL;

    if (pt && pt->reps.n > 0) { /* resumed: its last round again, run on no new replication */
        n = pt->reps.n;
        rounds = pt->rounds - 1;
    }

    osn_study_grid_point(&s->g, p, idx);
    for (int k = 0; k < s->g.naxes; k++) {
        const struct osn_study_axis *a = &s->g.axes[k];
        saved[k] = sets[a->set];
        snprintf(vals[k], sizeof vals[k], "%s=%s", a->key, a->vals[idx[k]]);
        sets[a->set] = vals[k];
    }
    if (s->o.seed) {
        snprintf(seed, sizeof seed, "%s=%s", s->r->seed_key, s->o.seed);
        sets[nsets++] = seed;
    }
    if (s->reps0)
        sets[nsets++] = reps;
    struct osn_study_run run = {s->o.scenario,
                                sets,
                                nsets,
                                (int)s->threads,
                                s->o.method,
                                check_only,
                                pt ? &pt->reps : NULL,
                                s->shared && !check_only ? &s->split : NULL};
    for (;;) {
        rounds++;
        if (s->reps0)
            snprintf(reps, sizeof reps, "%s=%ld", s->r->reps_key, n);
        json_decref(res);
        res = NULL;
        if ((rc = s->r->run(&run, &res, err, sizeof err)) != 0 || check_only || !s->rel)
            break;
        pt->ran += pt->reps.ran;
        if (precise_enough(s, res) || n >= s->max_reps)
            break;
        pt->rounds = rounds;
        if (s->o.resume && s->rank == 0 && checkpoint_write(s, err, sizeof err) != 0) {
            snprintf(s->err, sizeof s->err, "--resume: %s", err);
            json_decref(res);
            return OSN_STUDY_FAILED;
        }
        n = n * 2 < s->max_reps ? n * 2 : s->max_reps;
    }
    for (int k = 0; k < s->g.naxes; k++)
        sets[s->g.axes[k].set] = saved[k];
    if (rc) {
        where_is(s, p, where, sizeof where);
        snprintf(s->err, sizeof s->err, "%s%s", where, err[0] ? err : "failed");
        json_decref(res);
        return OSN_STUDY_FAILED;
    }
    if (check_only)
        return 0;
    if (pt) /* ran alone, or its share with the other ranks' to add (run_shared) */
        pt->counted = !s->shared;
    json_t *o = osn__study_point_head(s, p);
    if (s->rel) {
        json_object_set_new(o, "precision_target", json_real(s->rel));
        json_object_set_new(o, "precision_reached", json_boolean(precise_enough(s, res)));
        json_object_set_new(o, "precision_rounds", json_integer(rounds));
    }
    json_object_update(o, res); /* the varied keys first, then the run's own */
    json_decref(res);
    s->points[p] = o;
    return 0;
}

/* With --precision, says on stderr what happened to point p (from its JSON, wherever it ran). */
static void announce(const struct osn_study *s, long p)
{
    const json_t *o = s->points[p];
    char where[1100];
    if (!s->rel || s->o.quiet)
        return;
    where_is(s, p, where, sizeof where);
    long rounds = (long)json_integer_value(json_object_get(o, "precision_rounds"));
    fprintf(stderr, "osn %s: %s%s with %lld replications (%ld round%s)", s->r->cmd, where,
            json_is_true(json_object_get(o, "precision_reached"))
                    ? "precision reached"
                    : "precision NOT reached, stopped at the maximum",
            (long long)json_integer_value(json_object_get(o, "replications")), rounds,
            rounds > 1 ? "s" : "");
    const struct study_partial *pt = &s->partial[p];
    if (pt->from_file && pt->counted)
        fprintf(stderr, "; %ld of them from %s, %ld run now", pt->from_file, s->o.resume, pt->ran);
    else if (pt->from_file) /* run by another rank, which counted what it ran */
        fprintf(stderr, "; %ld of them from %s", pt->from_file, s->o.resume);
    fputc('\n', stderr);
}

static int checkpoint(struct osn_study *s);

/* The replications every rank simulated for point p, summed over the ranks (one allgather). */
static long ran_by_all(const struct osn_study *s, long p)
{
    long *ran = calloc((size_t)s->split.parts, sizeof *ran), sum = 0;
    if (!ran)
        return -1;
    ran[s->split.part] = s->partial[p].ran;
    if (osn_study_mpi_allgather(NULL, ran, s->split.parts, sizeof *ran, s->split.parts) != 0)
        sum = -1;
    for (int k = 0; sum >= 0 && k < s->split.parts; k++)
        sum += ran[k];
    free(ran);
    return sum;
}

/* Runs the points the checkpoint lacks on every rank at once, their replications shared (a
 * study of fewer points to run than ranks: dealing them would leave ranks idle); rank 0
 * announces them and keeps the checkpoint. 0 or OSN_STUDY_FAILED. */
static int run_shared(struct osn_study *s)
{
    for (long p = 0; p < s->g.npoints; p++) {
        if (s->points[p])
            continue;
        if (run_point(s, p, false) != 0)
            return osn__study_fail(s, "%s", s->err);
        s->ran++;
        if (s->partial && (s->partial[p].ran = ran_by_all(s, p)) < 0)
            return osn__study_fail(s, "the ranks could not count their replications");
        if (s->partial)
            s->partial[p].counted = true;
        announce(s, p);
        if (s->partial)
            osn_reps_free(&s->partial[p].reps);
        if (s->o.resume && s->rank == 0 && checkpoint(s) != 0)
            return OSN_STUDY_FAILED;
    }
    return 0;
}

/* Runs the points the checkpoint lacks, dealt over the ranks (study_mpi.h): rank 0 gathers
 * them in grid order, announces them and keeps the checkpoint; with fewer points to run than
 * ranks, run_shared() instead. 0 or OSN_STUDY_FAILED. */
static int run_points(struct osn_study *s, int rank, int size)
{
    long todo = 0;
    for (long p = 0; p < s->g.npoints; p++)
        todo += !s->points[p];
    if (size > 1 && todo < size && s->r->reps_key) {
        s->shared = true;
        s->split = (struct osn_split){rank, size, osn_study_mpi_allgather, NULL};
        if (!s->o.quiet)
            fprintf(stderr,
                    "osn %s: %ld point%s to run on %d ranks: each point's replications "
                    "shared by the ranks\n",
                    s->r->cmd, todo, todo == 1 ? "" : "s", size);
        return run_shared(s);
    }
    long j = 0;
    for (long p = 0; p < s->g.npoints; p++) {
        if (s->points[p])
            continue;
        int owner = (int)(j++ % size), st = 0;
        if (owner == rank) {
            st = run_point(s, p, false);
            if (rank != 0) {
                char *text = st ? NULL
                                : json_dumps(s->points[p], JSON_COMPACT | JSON_REAL_PRECISION(17));
                osn_study_mpi_send(st     ? st
                                   : text ? 0
                                          : OSN_STUDY_FAILED,
                                   st     ? s->err
                                   : text ? text
                                          : "out of memory");
                free(text);
                if (st)
                    return st;
                continue;
            }
        } else if (rank == 0) {
            char *text = osn_study_mpi_recv(owner, &st);
            json_error_t je;
            if (!text)
                snprintf(s->err, sizeof s->err, "no result from rank %d", owner);
            else if (st)
                snprintf(s->err, sizeof s->err, "(rank %d) %s", owner, text);
            else if (!(s->points[p] = json_loads(text, 0, &je)))
                snprintf(s->err, sizeof s->err, "rank %d sent a result that is not JSON: %s", owner,
                         je.text),
                        st = OSN_STUDY_FAILED;
            free(text);
            st = text ? st : OSN_STUDY_FAILED;
        } else {
            continue;
        }
        if (st)
            return osn__study_fail(s, "%s", s->err);
        s->ran++;
        announce(s, p);
        if (s->partial) /* done: its replications leave the checkpoint */
            osn_reps_free(&s->partial[p].reps);
        if (s->o.resume && checkpoint(s) != 0)
            return OSN_STUDY_FAILED;
    }
    return 0;
}

/* The points done, in grid order, as one array (new reference). */
json_t *osn_study_done_array(const struct osn_study *s)
{
    json_t *a = json_array();
    for (long p = 0; p < s->g.npoints; p++)
        if (s->points[p])
            json_array_append(a, s->points[p]);
    return a;
}

int osn_study_dump(FILE *f, const json_t *doc)
{
    if (json_dumpf(doc, f, JSON_INDENT(2) | JSON_REAL_PRECISION(17)) != 0 || fputc('\n', f) == EOF)
        return -1;
    return 0;
}

/* The checkpoint: the points done and, in their place, the points in progress with their
 * replications (partial.h), in grid order (new reference; NULL without memory). */
static json_t *checkpoint_array(const struct osn_study *s)
{
    json_t *a = json_array();
    for (long p = 0; a && p < s->g.npoints; p++) {
        json_t *o = s->points[p] ? json_incref(s->points[p]) : NULL;
        if (!o && s->partial && s->partial[p].reps.n > 0 &&
            (!(o = osn__study_point_head(s, p)) ||
             osn__study_partial_put(o, &s->partial[p]) != 0)) {
            json_decref(o);
            json_decref(a);
            return NULL;
        }
        if (o && json_array_append_new(a, o) != 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

/* Rewrites the --resume checkpoint (temporary + rename: a kill leaves the last complete one).
 * 0, or -1 with why in err. */
static int checkpoint_write(const struct osn_study *s, char *err, size_t errsize)
{
    struct osn_afile af = {0};
    json_t *doc = checkpoint_array(s);
    int rc = doc ? 0 : -1;
    if (!doc)
        snprintf(err, errsize, "out of memory");
    if (rc == 0 && osn_afile_open(&af, s->o.resume, err, errsize) != 0)
        rc = -1;
    if (rc == 0 && osn_study_dump(af.f, doc) != 0)
        snprintf(err, errsize, "%s: write failed", s->o.resume), rc = -1;
    if (rc == 0 && osn_afile_commit(&af, err, errsize) != 0)
        rc = -1;
    json_decref(doc);
    if (rc && doc)
        osn_afile_abort(&af);
    return rc;
}

/* checkpoint_write(); 0, or OSN_STUDY_FAILED with what failed in s->err. */
static int checkpoint(struct osn_study *s)
{
    char err[512];
    if (checkpoint_write(s, err, sizeof err) != 0)
        return osn__study_fail(s, "--resume: %s", err);
    return 0;
}

/* " (K of them in progress: N replications done)" for the start message. */
static const char *in_progress(const struct osn_study *s, char *buf, size_t size)
{
    long reps = 0;
    for (long p = 0; p < s->g.npoints; p++)
        reps += s->partial[p].reps.n;
    snprintf(buf, size, " (%ld of them in progress: %ld replication%s done)", s->in_progress, reps,
             reps == 1 ? "" : "s");
    return buf;
}

int osn_study_campaign_run(struct osn_study *s, int rank, int size)
{
    const char *cmd = s->r->cmd;
    char buf[128];

    if (study_id(s) != 0)
        return OSN_STUDY_FAILED;
    if (!(s->points = calloc((size_t)s->g.npoints, sizeof *s->points)) ||
        (s->rel && !(s->partial = calloc((size_t)s->g.npoints, sizeof *s->partial))))
        return osn__study_fail(s, "out of memory");
    if (s->o.resume && osn__study_resume_load(s) != 0)
        return OSN_STUDY_FAILED;
    if (s->o.resume && !s->o.quiet && rank == 0)
        fprintf(stderr, "osn %s: study of %ld points: %ld from %s, %ld to run%s\n", cmd,
                s->g.npoints, s->resumed, s->o.resume, s->g.npoints - s->resumed,
                s->in_progress ? in_progress(s, buf, sizeof buf) : "");
    /* Every point is loaded and checked before any runs: a bad value at the end of a grid is
     * told at once, not after hours of the points before it. */
    for (long p = 0; p < s->g.npoints; p++)
        if (!s->points[p] && run_point(s, p, true) != 0)
            return OSN_STUDY_FAILED;
    /* Every rank has read the checkpoint before rank 0 rewrites it. */
    s->exchanged = true;
    osn_study_mpi_barrier();
    return run_points(s, rank, size);
}

void osn_study_free(struct osn_study *s)
{
    for (long p = 0; s->points && p < s->g.npoints; p++)
        json_decref(s->points[p]);
    for (long p = 0; s->partial && p < s->g.npoints; p++)
        osn_reps_free(&s->partial[p].reps);
    free(s->points);
    free(s->partial);
    osn_study_grid_free(&s->g);
    s->points = NULL;
    s->partial = NULL;
}

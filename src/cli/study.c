/*
 * `osn sim|solve|fluid` as a parameter study (study.h): reads the study's options and checks
 * their values, hands the study to the driver of src/study (osn/campaign.h: the grid, the
 * checkpoint, the rounds, the ranks), then writes one JSON array (an object per point: the
 * varied keys, study_id, the run's own keys), one CSV row per point (the top-level scalars of
 * that object) and a table grouped by the first varied key.
 */
#include "study.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "osn/study_mpi.h"
#include "outputs.h"

static const char *const refused_name[STUDY_NREFUSED] = {"--trace", "--trace-interval", "--dist",
                                                         "--plot", "--replications-out"};

static bool is_option(const char *a, const char *name)
{
    size_t n = strlen(name);
    return strncmp(a, name, n) == 0 && (a[n] == '\0' || a[n] == '=');
}

bool osn_study_wanted(int argc, char **argv, bool range_is_study)
{
    int ranges = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        if (strcmp(a, "--") == 0)
            break;
        if (is_option(a, "--resume") || is_option(a, "--precision") ||
            is_option(a, "--max-replications"))
            return true;
        if (!is_option(a, "--set"))
            continue;
        v = a[5] == '=' ? a + 6 : i + 1 < argc ? argv[++i] : NULL;
        const char *eq = v ? strchr(v, '=') : NULL;
        double lo, hi, st;
        char tail;
        if (!eq)
            continue;
        if (sscanf(eq + 1, "%lf:%lf:%lf%c", &lo, &hi, &st, &tail) == 3)
            ranges++;
        else if (strchr(eq + 1, ',') && !strpbrk(eq + 1, " \t\n\r\f\v") &&
                 !osn_study_key_takes_list(v, (size_t)(eq - v)))
            return true;
    }
    return ranges > 1 || (ranges == 1 && range_is_study);
}

static int parse_args(const char *cmd, int argc, char **argv, struct osn_study_opts *o)
{
    struct osn_cli_opt opts[20] = {
            {"--quiet", "-q", OSN_CLI_FLAG, &o->quiet},
            {"--json", NULL, OSN_CLI_OUTPUT, &o->json},
            {"--csv", NULL, OSN_CLI_OUTPUT, &o->csv},
            {"--seed", NULL, OSN_CLI_VALUE, &o->seed},
            {"--replications", NULL, OSN_CLI_VALUE, &o->reps},
            {"--threads", NULL, OSN_CLI_VALUE, &o->threads},
            /* a VALUE, not a FILE: --json may name the checkpoint too (the final write) */
            {"--resume", NULL, OSN_CLI_VALUE, &o->resume},
            {"--precision", NULL, OSN_CLI_VALUE, &o->precision},
            {"--max-replications", NULL, OSN_CLI_VALUE, &o->max_reps},
            {"--method", NULL, OSN_CLI_VALUE, &o->method},
    };
    int n = 10;
    for (int k = 0; k < STUDY_NREFUSED; k++)
        opts[n++] = (struct osn_cli_opt){refused_name[k], NULL, OSN_CLI_VALUE, &o->refused[k]};
    opts[n] = (struct osn_cli_opt){NULL, NULL, 0, NULL};
    struct osn_cli_args a = {0};
    int rc = osn_cli_parse(cmd, argc, argv, opts, 2, &a);
    o->scenario = a.scenario;
    o->sets = a.sets;
    o->nsets = a.nsets;
    o->help = a.help;
    return rc;
}

/* Checks the options against the runner; fills the numbers of s. 0 or OSN_EXIT_ERROR (told). */
static int check_options(struct osn_study *s)
{
    const char *cmd = s->r->cmd;
    const struct osn_study_opts *o = &s->o;
    long v;

    for (int k = 0; k < STUDY_NREFUSED; k++)
        if (o->refused[k])
            return osn_cli_die(cmd,
                               "%s writes one run's detail: it does not go with a study "
                               "(a grid, --resume or --precision)",
                               refused_name[k]);
    if (o->resume && strcmp(o->resume, "-") == 0)
        return osn_cli_die(cmd, "option '--resume' needs a file name, not -");
    if (o->method && !s->r->method)
        return osn_cli_die(cmd, "unknown option '--method' (see 'osn %s --help')", cmd);
    if (o->method && strcmp(o->method, "auto") != 0 && strcmp(o->method, "general") != 0 &&
        strcmp(o->method, "closed") != 0)
        return osn_cli_die(cmd, "--method '%s': expected auto, general or closed", o->method);
    if ((o->seed || o->reps || o->threads) && !s->r->reps_key)
        return osn_cli_die(cmd, "%s: osn %s is not a simulation (unknown option)",
                           o->seed   ? "--seed"
                           : o->reps ? "--replications"
                                     : "--threads",
                           cmd);
    if (o->seed && osn_cli_long(cmd, "--seed", o->seed, 0, 0x7fffffffffffffffL, &v) != 0)
        return OSN_EXIT_ERROR;
    if (o->reps &&
        osn_cli_long(cmd, "--replications", o->reps, 1, STUDY_MAX_REPLICATIONS, &s->reps0) != 0)
        return OSN_EXIT_ERROR;
    s->threads = osn_cli_threads_default();
    if (o->threads && osn_cli_long(cmd, "--threads", o->threads, 1, 256, &s->threads) != 0)
        return OSN_EXIT_ERROR;
    if (o->max_reps && !o->precision)
        return osn_cli_die(cmd, "--max-replications bounds --precision's rounds: give "
                                "--precision REL too");
    if (!o->precision)
        return 0;
    if (!s->r->reps_key)
        return osn_cli_die(cmd,
                           "--precision: osn %s computes exact numbers, it has no "
                           "replications to add",
                           cmd);
    char *end;
    errno = 0;
    s->rel = strtod(o->precision, &end);
    if (!o->precision[0] || *end || !(s->rel > 0 && s->rel < 1))
        return osn_cli_die(cmd,
                           "--precision %s: expected a relative half-width in (0, 1), "
                           "e.g. 0.05",
                           o->precision);
    if (!o->reps)
        s->reps0 = 4;
    if (s->reps0 < 2)
        return osn_cli_die(cmd,
                           "--replications %ld: --precision needs at least 2 to start "
                           "(a half-width takes two)",
                           s->reps0);
    s->max_reps = 256;
    if (o->max_reps && osn_cli_long(cmd, "--max-replications", o->max_reps, s->reps0,
                                    STUDY_MAX_REPLICATIONS, &s->max_reps) != 0)
        return OSN_EXIT_ERROR;
    if (!o->max_reps && s->max_reps < s->reps0)
        s->max_reps = s->reps0;
    return 0;
}

static int w_json(FILE *f, const void *ctx, char *err, size_t errsize)
{
    json_t *doc = osn_study_done_array(ctx);
    int rc = doc && osn_study_dump(f, doc) == 0 ? 0 : -1;
    json_decref(doc);
    if (rc)
        snprintf(err, errsize, "cannot write the JSON result");
    return rc;
}

/* A CSV cell of a JSON scalar (quoted when it holds a comma, quote or line break). */
static void csv_cell(FILE *f, const json_t *v)
{
    if (json_is_string(v)) {
        const char *s = json_string_value(v);
        if (!strpbrk(s, ",\"\n\r")) {
            fputs(s, f);
            return;
        }
        fputc('"', f);
        for (; *s; s++)
            fputs(*s == '"' ? "\"\"" : (char[]){*s, 0}, f);
        fputc('"', f);
    } else if (json_is_integer(v)) {
        fprintf(f, "%lld", (long long)json_integer_value(v));
    } else if (json_is_real(v)) {
        fprintf(f, "%.17g", json_real_value(v));
    } else if (json_is_boolean(v)) {
        fputs(json_is_true(v) ? "true" : "false", f);
    } /* null, objects and arrays: an empty cell (objects and arrays are not columns) */
}

static int w_csv(FILE *f, const void *ctx, char *err, size_t errsize)
{
    const struct osn_study *s = ctx;
    json_t *cols = json_object(); /* the union of the scalar keys, in order of appearance */
    const char *key;
    json_t *v;

    for (long p = 0; p < s->g.npoints; p++)
        if (s->points[p])
            json_object_foreach(s->points[p], key, v) if (!json_is_object(v) && !json_is_array(v))
                    json_object_set_new(cols, key, json_true());
    int first = 1;
    json_object_foreach(cols, key, v)
    {
        fprintf(f, "%s%s", first ? "" : ",", key);
        first = 0;
    }
    fputc('\n', f);
    for (long p = 0; p < s->g.npoints; p++) {
        if (!s->points[p])
            continue;
        first = 1;
        json_object_foreach(cols, key, v)
        {
            if (!first)
                fputc(',', f);
            first = 0;
            csv_cell(f, json_object_get(s->points[p], key));
        }
        fputc('\n', f);
    }
    json_decref(cols);
    if (ferror(f)) {
        snprintf(err, errsize, "write error");
        return -1;
    }
    return 0;
}

static int run_study(struct osn_study *s, int rank, int size)
{
    const char *cmd = s->r->cmd;
    char err[1024];
    struct osn_cli_output outs[] = {{"--json", s->o.json, w_json, {0}},
                                    {"--csv", s->o.csv, w_csv, {0}}};

    if (osn_study_grid_parse(&s->g, s->o.sets, s->o.nsets, err, sizeof err) != 0)
        return osn_cli_die(cmd, "%s", err);
    if (check_options(s) != 0)
        return OSN_EXIT_ERROR;
    if (osn_study_campaign_run(s, rank, size) != 0)
        return osn_cli_die(cmd, "%s", s->err);
    if (rank != 0)
        return 0;
    int rc = osn_cli_outputs_write(cmd, outs, 2, s);
    if (rc == 0 && !s->o.quiet && !osn_cli_outputs_to_stdout(outs, 2))
        study_table(stdout, s);
    if (rc == 0 && (osn_cli_stdout_done(cmd) != 0 || osn_cli_outputs_commit(cmd, outs, 2) != 0))
        rc = OSN_EXIT_ERROR;
    osn_cli_outputs_abort(outs, 2);
    return rc;
}

int osn_study_main(const struct osn_study_runner *r, int argc, char **argv)
{
    struct osn_study s = {.r = r, .g = {.npoints = 1}};
    int rank, size;

    if (osn_study_mpi_init(r->cmd, &rank, &size) != 0)
        return OSN_EXIT_ERROR;
    s.rank = rank;
    if (rank != 0) { /* rank 0 tells what happened; the others send it their points */
        FILE *out = freopen("/dev/null", "w", stdout), *err = freopen("/dev/null", "w", stderr);
        (void)out; /* failing, the messages go where they went: nothing worse */
        (void)err;
    }
    int rc = parse_args(r->cmd, argc, argv, &s.o);

    if (rc == 0 && s.o.help) {
        fprintf(stdout, "See 'osn %s --help' without a study's options; on studies:\n", r->cmd);
        osn_study_usage(stdout, r->reps_key != NULL);
    } else if (rc == 0) {
        rc = run_study(&s, rank, size);
    }
    /* An error before the ranks exchanged (a bad option, a bad point of the grid: every rank
     * checks every point first) is every rank's alike: each leaves on its own, with no
     * MPI_Abort, whose killing of ranks already on their way out makes Open MPI 4.1's mpirun
     * hang or crash now and then (CTest cli_study_mpi, "bad point on 3 ranks"). */
    if (rc != 0 && !s.exchanged)
        osn_study_mpi_finish_everywhere(rc);
    else
        osn_study_mpi_finish(rc);
    osn_study_free(&s);
    free(s.o.sets);
    return rc;
}

void osn_study_usage(FILE *f, bool replications)
{
    fputs("\n"
          "Studies (parameter grids):\n"
          "  --set KEY=LO:HI:STEP      a range of values\n"
          "  --set KEY=A,B,C           a list of values (a comma and no blank; a key\n"
          "                            whose one value is a list of numbers, such as\n"
          "                            source.steps or service.probs, keeps its commas)\n"
          "  Several ranges or lists form a grid, their cartesian product (the first\n"
          "  one changing slowest): one run per point. JSON is an array of one object\n"
          "  per point: the varied keys with their values, study_id, then the run's own\n"
          "  keys; CSV one row per point (the object's top-level values); the table\n"
          "  one row per point, grouped by the first varied key.\n"
          "  --resume FILE             a checkpoint of the study, rewritten after every\n"
          "                            point: the points it holds are not run again (a\n"
          "                            study killed halfway goes on where it stopped).\n"
          "                            With --precision, also after every round: a point\n"
          "                            killed in its rounds goes on from the replications\n"
          "                            the file holds, and ends as if never stopped.\n"
          "                            A file of another study (another study_id: the\n"
          "                            scenario file, a fixed --set or an option that\n"
          "                            changes the numbers differ) is refused, untouched.\n"
          "  Under mpirun or srun the points are dealt over the ranks, each on its\n"
          "  --threads (with fewer points to run than ranks, and for a single osn sim\n"
          "  run without a grid, the ranks share the replications instead); rank 0\n"
          "  writes the outputs, the same as one process writes (docs/campaigns.md).\n",
          f);
    if (replications)
        fputs("  --precision REL           replications in rounds, doubling from\n"
              "                            --replications [4], until the half-width of the\n"
              "                            headline measures (network: goodput and\n"
              "                            setup_delay_mean; node: P0 and T_ret) is at most\n"
              "                            REL x the estimate, or --max-replications [256]\n"
              "                            is reached; each point says which happened\n"
              "                            (precision_reached, replications, precision_rounds).\n"
              "                            A round adds replications to the earlier rounds'\n"
              "                            (each runs once), and a point's numbers are those\n"
              "                            of --replications N.\n",
              f);
}

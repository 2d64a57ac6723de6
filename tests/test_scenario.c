/*
 * Unit tests of scenario loading (src/io/model_scenario.c) and atomic output files
 * (src/ini/afile.c).
 *
 * Every error kind must come back as OSN_ECONFIG, OSN_EIO or OSN_ETOOBIG with one message that
 * names where the bad value was set (the file and line, the --set flag, or "(default)") and the
 * key, so each error test writes a scenario to a temporary file under /tmp and checks the
 * message for all three. The rest checks values: defaults, overrides winning over the file,
 * overload_accept, the synonyms and kind-specific keys, and that a failed load leaves the
 * caller's scenario untouched.
 */
#include <setjmp.h> /* cmocka needs these before its header */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "osn/err.h"
#include "osn/model_scenario.h"
#include "osn/net_scenario.h"
#include "osn/optimize_scenario.h"
#include "osn/sim_scenario.h"

/* A scenario written to a temporary file; removed by drop(). */
struct tmpfile {
    char path[64];
};

static void write_scenario(struct tmpfile *t, const char *text)
{
    snprintf(t->path, sizeof t->path, "/tmp/osn_test_scenario_XXXXXX");
    int fd = mkstemp(t->path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    assert_true(fputs(text, f) >= 0);
    assert_int_equal(fclose(f), 0);
}

static void drop(struct tmpfile *t)
{
    unlink(t->path);
}

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Asserts that `hay` contains `needle`, printing both when it does not. */
static void assert_contains(const char *hay, const char *needle)
{
    if (!strstr(hay, needle))
        fail_msg("message \"%s\" lacks \"%s\"", hay, needle);
}

/*
 * Loads `text` (and the overrides) and checks the failure: code `rc`, and a message naming the
 * file with line `line` (0: the file is not named at all by design), the key, and `extra`.
 */
static void expect_error(const char *text, const char *const *sets, int nsets, int rc, int line,
                         const char *key, const char *extra)
{
    struct tmpfile t;
    struct osn_scenario *sc = calloc(1, sizeof *sc);
    char err[1024], where[128];

    assert_non_null(sc);
    write_scenario(&t, text);
    assert_int_equal(osn_scenario_load(sc, t.path, sets, nsets, NULL, err, sizeof err), rc);
    if (line > 0) {
        snprintf(where, sizeof where, "%s:%d:", t.path, line);
        assert_contains(err, where);
    }
    if (key)
        assert_contains(err, key);
    if (extra)
        assert_contains(err, extra);
    assert_null(strchr(err, '\n'));
    drop(&t);
    free(sc);
}

static void load_ok(struct osn_scenario *sc, const char *text, const char *const *sets, int nsets)
{
    struct tmpfile t;
    char err[1024] = "";
    int rc;

    write_scenario(&t, text);
    osn_scenario_release(sc); /* the load before's (sc is zeroed or loaded) */
    rc = osn_scenario_load(sc, t.path, sets, nsets, NULL, err, sizeof err);
    if (rc)
        fail_msg("load failed: %s (%s)", err, osn_err_name(rc));
    drop(&t);
}

/* ---- values ---- */

static void test_defaults(void **state)
{
    struct osn_scenario sc = {0};
    char err[256];
    (void)state;

    assert_int_equal(osn_scenario_load(&sc, NULL, NULL, 0, NULL, err, sizeof err), 0);
    assert_int_equal(sc.model.kind, OSN_KIND_TWO_LOOP);
    assert_int_equal(sc.model.policy, OSN_POLICY_I);
    assert_int_equal(sc.model.flows, 1);
    assert_int_equal(sc.model.L, 5);
    assert_int_equal(sc.model.H, 10);
    assert_int_equal(sc.model.R, 20);
    /* Resolved: two-loop means L1=L, H1=H, L2=H, H2=R. */
    assert_int_equal(sc.model.L1, 5);
    assert_int_equal(sc.model.H1, 10);
    assert_int_equal(sc.model.L2, 10);
    assert_int_equal(sc.model.H2, 20);
    assert_true(sc.model.rate == 1.2);
    assert_true(sc.model.overload_rate == 0.6);
    assert_true(sc.model.mu == 1.0);
    assert_int_equal(sc.ini.nkeys, 0);
    assert_string_equal(sc.ini.path, "");
    osn_scenario_release(&sc);
}

static void test_file_values_and_origins(void **state)
{
    struct osn_scenario sc = {0};
    (void)state;

    load_ok(&sc,
            "; comment line\n"
            "# another comment\n"
            "\n"
            "[model]\n"
            "kind = two-loop\n"
            "policy = II\n"
            "[thresholds]\n"
            "L = 10   ; inline comment\n"
            "  H = 15\n" /* indented: a key, not a continuation of L */
            "R = 20\n"
            "[arrivals]\n"
            "rate = 1.2\n"
            "overload_rate = 0.6\n"
            "[service]\n"
            "law = exp\n"
            "rate = 1\n",
            NULL, 0);
    assert_int_equal(sc.model.policy, OSN_POLICY_II);
    assert_int_equal(sc.model.L, 10);
    assert_int_equal(sc.model.H, 15);
    assert_int_equal(sc.model.R, 20);
    assert_true(sc.model.overload_rate == 0.6);
    assert_int_equal(sc.ini.nkeys, 9);
    assert_string_equal(sc.ini.keys[2].key, "thresholds.L");
    assert_string_equal(sc.ini.keys[2].value, "10");
    /* Line 8: comments and blank lines are counted. */
    assert_non_null(strstr(sc.ini.keys[2].where, ":8"));
    assert_string_equal(sc.ini.keys[3].key, "thresholds.H");
    assert_non_null(strstr(sc.ini.keys[3].where, ":9"));
    assert_string_equal(sc.ini.keys[8].key, "service.rate");
    assert_non_null(strstr(sc.ini.keys[8].where, ":16"));
    osn_scenario_release(&sc);
}

static void test_overrides_win(void **state)
{
    struct osn_scenario sc = {0};
    const char *sets[] = {"arrivals.rate=2", "thresholds.H = 12", "service.rate=3"};
    (void)state;

    load_ok(&sc, "[arrivals]\nrate = 1.2\noverload_rate = 0.6\n[thresholds]\nH = 11\n", sets, 3);
    assert_true(sc.model.rate == 2.0);
    assert_true(sc.model.overload_rate == 0.6);
    assert_int_equal(sc.model.H, 12);
    assert_true(sc.model.mu == 3.0);
    /* One record per key, showing the final value and where it came from. */
    assert_int_equal(sc.ini.nkeys, 4);
    assert_string_equal(sc.ini.keys[0].key, "arrivals.rate");
    assert_string_equal(sc.ini.keys[0].value, "2");
    assert_string_equal(sc.ini.keys[0].where, "--set arrivals.rate=2");
    assert_string_equal(sc.ini.keys[2].value, "12");
    assert_string_equal(sc.ini.keys[3].key, "service.rate");
    osn_scenario_release(&sc);
}

static void test_override_replaces_bad_file_value(void **state)
{
    struct osn_scenario sc = {0};
    const char *sets[] = {"arrivals.rate=1.5"};
    (void)state;

    load_ok(&sc, "[arrivals]\nrate = oops\n", sets, 1);
    assert_true(sc.model.rate == 1.5);
    osn_scenario_release(&sc);
}

static void test_overload_accept(void **state)
{
    struct osn_scenario sc = {0};
    const char *sets[] = {"arrivals.rate=2"};
    (void)state;

    load_ok(&sc, "[arrivals]\nrate = 2\noverload_accept = 0.25\n", NULL, 0);
    assert_true(sc.model.overload_rate == 0.5);
    load_ok(&sc, "[arrivals]\noverload_accept = 1\n", sets, 1);
    assert_true(sc.model.overload_rate == 2.0);
    /* Without either key lambda' = lambda/2. */
    load_ok(&sc, "[arrivals]\nrate = 3\n", NULL, 0);
    assert_true(sc.model.overload_rate == 1.5);
    /* MMPP input with the other sections present. */
    load_ok(&sc,
            "[model]\nkind = two-loop\n[arrivals]\nprocess = mmpp\nphase_rates = 0.4, 3\n"
            "phase_switch = 0.1, 0.2\noverload_rates = 0.2, 1\n[service]\nrate = 2\n",
            NULL, 0);
    assert_int_equal(sc.model.process, OSN_ARR_MMPP);
    assert_int_equal(sc.model.mmpp.K, 2);
    assert_true(sc.model.mmpp.accept[1][1] == 1.0 / 3);
    assert_true(fabs(sc.model.rate - (0.4 * 2 + 3 * 1) / 3) < 1e-15);
    /* An override of one synonym replaces the other one from the file. */
    const char *accept[] = {"arrivals.overload_accept=0.25"};
    load_ok(&sc, "[arrivals]\nrate = 2\noverload_rate = 1.5\n", accept, 1);
    assert_true(sc.model.overload_rate == 0.5);
    const char *b[] = {"thresholds.B=30"};
    load_ok(&sc, "[model]\nkind = single-loop\n[thresholds]\nR = 10\n", b, 1);
    assert_int_equal(sc.model.R, 30);
    osn_scenario_release(&sc);
}

static void test_single_loop_and_b(void **state)
{
    struct osn_scenario sc = {0};
    (void)state;

    load_ok(&sc, "[model]\nkind = single-loop\n[thresholds]\nL = 3\nH = 8\nB = 12\n", NULL, 0);
    assert_int_equal(sc.model.kind, OSN_KIND_SINGLE_LOOP);
    assert_int_equal(sc.model.R, 12);
    assert_int_equal(sc.model.L2, 11);
    assert_int_equal(sc.model.H2, 12);
    load_ok(&sc, "[model]\nkind = single-loop\n[thresholds]\nR = 13\n", NULL, 0);
    assert_int_equal(sc.model.R, 13);
    osn_scenario_release(&sc);
}

static void test_bi_level_and_two_flows(void **state)
{
    struct osn_scenario sc = {0};
    (void)state;

    load_ok(&sc,
            "[model]\nkind = bi-level\n[thresholds]\nL1 = 2\nH1 = 6\nL2 = 9\nH2 = 14\nR = 16\n"
            "[arrivals]\nflows = 2\nrate1 = 0.7\nrate2 = 0\n",
            NULL, 0);
    assert_int_equal(sc.model.kind, OSN_KIND_BI_LEVEL);
    assert_int_equal(sc.model.L1, 2);
    assert_int_equal(sc.model.H1, 6);
    assert_int_equal(sc.model.L2, 9);
    assert_int_equal(sc.model.H2, 14);
    assert_int_equal(sc.model.R, 16);
    assert_int_equal(sc.model.flows, 2);
    assert_true(sc.model.rate1 == 0.7);
    assert_true(sc.model.rate2 == 0.0);
    osn_scenario_release(&sc);
}

static void test_failure_leaves_scenario_alone(void **state)
{
    struct osn_scenario sc;
    const char *sets[] = {"arrivals.rate=-1"};
    char err[256];
    (void)state;

    memset(&sc, 0x5a, sizeof sc);
    assert_int_equal(osn_scenario_load(&sc, NULL, sets, 1, NULL, err, sizeof err), OSN_ECONFIG);
    assert_int_equal(sc.ini.nkeys, 0x5a5a5a5a);
}

/* ---- errors ---- */

static void test_err_unknown_section(void **state)
{
    (void)state;
    expect_error("[model]\nkind = two-loop\n[modle]\nkind = two-loop\n", NULL, 0, OSN_ECONFIG, 3,
                 "modle", "unknown section");
    /* A section without keys is caught too. */
    expect_error("[thresholds]\nL = 1\n\n[servise]\n", NULL, 0, OSN_ECONFIG, 4, "servise",
                 "unknown section");
}

static void test_err_unknown_key(void **state)
{
    (void)state;
    expect_error("[arrivals]\nrate = 1\nrat = 2\n", NULL, 0, OSN_ECONFIG, 3, "arrivals.rat",
                 "unknown key");
    expect_error("rate = 1\n", NULL, 0, OSN_ECONFIG, 1, "rate", "outside any section");
}

static void test_err_bad_numbers(void **state)
{
    (void)state;
    expect_error("[arrivals]\nrate = 1.2x\n", NULL, 0, OSN_ECONFIG, 2, "arrivals.rate",
                 "not a number");
    expect_error("[arrivals]\n\nrate = nan\n", NULL, 0, OSN_ECONFIG, 3, "arrivals.rate", "finite");
    expect_error("[arrivals]\nrate = inf\n", NULL, 0, OSN_ECONFIG, 2, "arrivals.rate", "finite");
    expect_error("[arrivals]\nrate =\n", NULL, 0, OSN_ECONFIG, 2, "arrivals.rate", "empty");
    expect_error("[arrivals]\nrate = 1.2 # comment\n", NULL, 0, OSN_ECONFIG, 2, "arrivals.rate",
                 "';'");
    expect_error("[thresholds]\nL = 2.5\n", NULL, 0, OSN_ECONFIG, 2, "thresholds.L",
                 "whole number");
    expect_error("[thresholds]\nR = 99999999999999999999999\n", NULL, 0, OSN_ECONFIG, 2,
                 "thresholds.R", "largest");
    expect_error("[thresholds]\nL = -1\n", NULL, 0, OSN_ECONFIG, 2, "thresholds.L", "negative");
    expect_error("[arrivals]\nflows = 3\n", NULL, 0, OSN_ECONFIG, 2, "arrivals.flows",
                 "largest allowed value (2)");
}

static void test_err_rates_out_of_range(void **state)
{
    (void)state;
    expect_error("[arrivals]\nrate = 0\n", NULL, 0, OSN_ECONFIG, 2, "arrivals.rate",
                 "greater than 0");
    expect_error("[service]\nrate = -1\n", NULL, 0, OSN_ECONFIG, 2, "service.rate",
                 "greater than 0");
    expect_error("[arrivals]\noverload_rate = -0.1\n", NULL, 0, OSN_ECONFIG, 2,
                 "arrivals.overload_rate", "negative");
    expect_error("[arrivals]\nrate = 1\noverload_rate = 2\n", NULL, 0, OSN_ECONFIG, 3,
                 "arrivals.overload_rate", "exceeds");
    expect_error("[arrivals]\noverload_accept = 1.5\n", NULL, 0, OSN_ECONFIG, 2,
                 "arrivals.overload_accept", "(0, 1]");
    expect_error("[arrivals]\noverload_accept = 0\n", NULL, 0, OSN_ECONFIG, 2,
                 "arrivals.overload_accept", NULL);
    /* overload_rate = 0 is allowed (all traffic refused in overload). */
    struct osn_scenario sc = {0};
    load_ok(&sc, "[arrivals]\noverload_rate = 0\n", NULL, 0);
    assert_true(sc.model.overload_rate == 0.0);
    osn_scenario_release(&sc);
}

static void test_err_thresholds_order(void **state)
{
    (void)state;
    /* The model check names thresholds.H; it was set on line 3. */
    expect_error("[thresholds]\nL = 10\nH = 8\nR = 20\n", NULL, 0, OSN_ECONFIG, 3, "thresholds.H",
                 "greater than L");
    expect_error("[thresholds]\nL = 3\nH = 25\nR = 20\n", NULL, 0, OSN_ECONFIG, 3, "thresholds.H",
                 "less than R");
    /* Bi-level: H2 derived nowhere, set on line 6. */
    expect_error("[model]\nkind = bi-level\n[thresholds]\nL1 = 2\nH1 = 6\nH2 = 5\nL2 = 4\n"
                 "R = 10\n",
                 NULL, 0, OSN_ECONFIG, 6, "thresholds.H2", NULL);
    /* Single-loop with B: a complaint about R maps to B. */
    expect_error("[model]\nkind = single-loop\n[thresholds]\nB = 1\n", NULL, 0, OSN_ECONFIG, 4,
                 "thresholds.B", NULL);
}

static void test_err_default_blamed(void **state)
{
    struct osn_scenario sc = {0};
    const char *sets[] = {"thresholds.L=12"};
    char err[512];
    (void)state;

    /* H keeps its default 10, which is now below L. */
    expect_error("[thresholds]\nL = 12\n", NULL, 0, OSN_ECONFIG, 0, "thresholds.H", "(default)");
    assert_int_equal(osn_scenario_load(&sc, NULL, sets, 1, NULL, err, sizeof err), OSN_ECONFIG);
    assert_contains(err, "(default)");
    assert_contains(err, "thresholds.H");
    osn_scenario_release(&sc);
}

static void test_err_too_big(void **state)
{
    (void)state;
    expect_error("[thresholds]\nL = 5\nH = 10\nR = 1000000000\n", NULL, 0, OSN_ETOOBIG, 4,
                 "thresholds.R", "memory");
}

static void test_err_missing_and_unreadable(void **state)
{
    struct osn_scenario sc = {0};
    char err[512], dir[] = "/tmp/osn_test_dir_XXXXXX";
    (void)state;

    assert_int_equal(
            osn_scenario_load(&sc, "/tmp/osn-no-such-file.ini", NULL, 0, NULL, err, sizeof err),
            OSN_EIO);
    assert_contains(err, "/tmp/osn-no-such-file.ini");
    assert_contains(err, "No such file");
    /* A directory opens but cannot be read. */
    assert_non_null(mkdtemp(dir));
    assert_int_equal(osn_scenario_load(&sc, dir, NULL, 0, NULL, err, sizeof err), OSN_EIO);
    assert_contains(err, dir);
    rmdir(dir);
    osn_scenario_release(&sc);
}

static void test_err_malformed_line(void **state)
{
    (void)state;
    expect_error("[arrivals]\nrate = 1\nthis line has no equals sign\n", NULL, 0, OSN_ECONFIG, 3,
                 NULL, "malformed");
    expect_error("[arrivals\nrate = 1\n", NULL, 0, OSN_ECONFIG, 1, NULL, "malformed");
    /* A malformed line before a key error is the one reported. */
    expect_error("[arrivals]\ngarbage\nbogus = 1\n", NULL, 0, OSN_ECONFIG, 2, NULL, "malformed");
    /* An over-long line is an error, not silently split. */
    char text[6000] = "[arrivals]\nrate = 1";
    size_t n = strlen(text);
    memset(text + n, '0', 5000);
    text[n + 5000] = '\n';
    text[n + 5001] = '\0';
    expect_error(text, NULL, 0, OSN_ECONFIG, 2, NULL, "longer than");
}

static void test_err_duplicate_key(void **state)
{
    (void)state;
    expect_error("[arrivals]\nrate = 1\n[thresholds]\nL = 1\n[arrivals]\nrate = 2\n", NULL, 0,
                 OSN_ECONFIG, 6, "arrivals.rate", "given twice");
    /* Names are case-insensitive, so this is the same key. */
    expect_error("[thresholds]\nl = 1\nL = 2\n", NULL, 0, OSN_ECONFIG, 3, "thresholds.L",
                 "given twice");
}

static void test_err_key_for_other_kind(void **state)
{
    (void)state;
    expect_error("[thresholds]\nL1 = 1\n", NULL, 0, OSN_ECONFIG, 2, "thresholds.L1", "two-loop");
    expect_error("[thresholds]\nB = 10\n", NULL, 0, OSN_ECONFIG, 2, "thresholds.B", "two-loop");
    expect_error("[thresholds]\nL = 1\n[model]\nkind = bi-level\n", NULL, 0, OSN_ECONFIG, 2,
                 "thresholds.L", "bi-level");
    expect_error("[model]\nkind = single-loop\n[thresholds]\nH2 = 10\n", NULL, 0, OSN_ECONFIG, 4,
                 "thresholds.H2", "single-loop");
    expect_error("[model]\nkind = single-loop\n[thresholds]\nR = 10\nB = 10\n", NULL, 0,
                 OSN_ECONFIG, 5, "thresholds.B", "not both");
    expect_error("[arrivals]\nrate1 = 1\n", NULL, 0, OSN_ECONFIG, 2, "arrivals.rate1", "flows = 2");
    expect_error("[arrivals]\nflows = 2\nrate = 1\n", NULL, 0, OSN_ECONFIG, 3, "arrivals.rate",
                 "flows = 2");
    expect_error("[arrivals]\noverload_rate = 0.5\noverload_accept = 0.5\n", NULL, 0, OSN_ECONFIG,
                 3, "arrivals.overload_accept", "not both");
}

static void test_err_enums(void **state)
{
    (void)state;
    expect_error("[model]\nkind = three-loop\n", NULL, 0, OSN_ECONFIG, 2, "model.kind", NULL);
    expect_error("[model]\npolicy = III\n", NULL, 0, OSN_ECONFIG, 2, "model.policy", NULL);
    expect_error("[service]\nlaw = weibull\n", NULL, 0, OSN_ECONFIG, 2, "service.law",
                 "expected one of");
    expect_error("[service]\nlaw = det\nk = 3\n", NULL, 0, OSN_ECONFIG, 3, "service.k",
                 "does not apply");
    expect_error("[service]\nlaw = hyperexp\nprobs = 0.5, 0.6\nrates = 1, 2\n", NULL, 0,
                 OSN_ECONFIG, 3, "service.probs", "sum to");
    expect_error("[arrivals]\nprocess = mmpp\nphase_rates = 1, 2\nphase_switch = 1\n", NULL, 0,
                 OSN_ECONFIG, 4, "arrivals.phase_switch", "off-diagonal");
    expect_error("[arrivals]\nphase_rates = 1, 2\n", NULL, 0, OSN_ECONFIG, 2,
                 "arrivals.phase_rates", "mmpp");
}

/*
 * One key schema (issue 29): every key of the model, [sim] and [optimize] tables is typed and
 * documented, so that --help and docs/scenario.md (made from the tables) cover it, and the
 * defaults the tables document are the ones a scenario without keys gets (docs/commands/solve.md:
 * two-loop, L=5 H=10 R=20, lambda=1.2, mu=1, policy I; [sim] as osn_sim_cfg_default()).
 */
static void test_key_tables(void **state)
{
    const struct osn_ini_schema *tables[] = {&osn_model_schema, &osn_sim_schema,
                                             &osn_optimize_schema};
    struct osn_model m;
    struct osn_sim_cfg sim;
    char text[64];
    (void)state;

    for (size_t t = 0; t < 3; t++)
        for (size_t i = 0; i < tables[t]->n; i++) {
            const struct osn_key_spec *k = &tables[t]->defs[i];
            if (k->type == OSN_KEY_NONE || !k->help || !k->help[0])
                fail_msg("key %s.%s has no type or no help", k->section, k->name);
        }
    osn_scenario_model_default(&m);
    osn_ini_key_text(osn_ini_key_find(&osn_model_schema, "thresholds.L"), &m, text, sizeof text);
    assert_string_equal(text, "5");
    osn_ini_key_text(osn_ini_key_find(&osn_model_schema, "thresholds.R"), &m, text, sizeof text);
    assert_string_equal(text, "20");
    osn_ini_key_text(osn_ini_key_find(&osn_model_schema, "arrivals.rate"), &m, text, sizeof text);
    assert_string_equal(text, "1.2");
    osn_ini_key_text(osn_ini_key_find(&osn_model_schema, "model.kind"), &m, text, sizeof text);
    assert_string_equal(text, "two-loop");
    osn_sim_cfg_default(&sim);
    osn_ini_key_text(osn_ini_key_find(&osn_sim_schema, "sim.replications"), &sim, text,
                     sizeof text);
    assert_string_equal(text, "10");
}

/* One policy enum: "2" and "II" are policy II in the model, as in ctl (osn/policy.h). */
static void test_policy_words(void **state)
{
    struct osn_scenario sc = {0};
    (void)state;

    assert_int_equal(OSN_POLICY_I, 0);
    load_ok(&sc, "[model]\npolicy = 2\n", NULL, 0);
    assert_int_equal(sc.model.policy, OSN_POLICY_II);
    load_ok(&sc, "[model]\npolicy = i\n", NULL, 0);
    assert_int_equal(sc.model.policy, OSN_POLICY_I);
    expect_error("[model]\npolicy = 0\n", NULL, 0, OSN_ECONFIG, 2, "model.policy", "I, II");
    osn_scenario_release(&sc);
}

/* One list of policy words: a network's [control] policy takes the model's, "2" for II too. */
static void test_policy_words_net(void **state)
{
    struct osn_net_scenario *ns = calloc(1, sizeof *ns);
    const char *const two[] = {"control.policy=2"}, *const one[] = {"control.policy=1"},
                      *const ii[] = {"control.policy=II"}, *const bad[] = {"control.policy=0"};
    struct tmpfile t;
    char err[1024] = "";
    (void)state;

    assert_non_null(ns);
    write_scenario(&t, "[net]\ntopology = collapse\n");
    osn_net_scenario_release(ns);
    assert_int_equal(osn_net_scenario_load(ns, t.path, two, 1, err, sizeof err), 0);
    assert_int_equal(ns->cfg.ctl.det.policy, OSN_POLICY_II);
    osn_net_scenario_release(ns);
    assert_int_equal(osn_net_scenario_load(ns, t.path, one, 1, err, sizeof err), 0);
    assert_int_equal(ns->cfg.ctl.det.policy, OSN_POLICY_I);
    osn_net_scenario_release(ns);
    assert_int_equal(osn_net_scenario_load(ns, t.path, ii, 1, err, sizeof err), 0);
    assert_int_equal(ns->cfg.ctl.det.policy, OSN_POLICY_II);
    assert_int_equal(osn_net_scenario_load(ns, t.path, bad, 1, err, sizeof err), OSN_ECONFIG);
    assert_contains(err, "control.policy");
    assert_contains(err, "I, II, 1, 2");
    drop(&t);
    osn_net_scenario_release(ns);
    free(ns);
}

static void test_err_set_flags(void **state)
{
    struct osn_scenario sc = {0};
    char err[512];
    (void)state;

    const char *bad_syntax[] = {"arrivals.rate"};
    assert_int_equal(osn_scenario_load(&sc, NULL, bad_syntax, 1, NULL, err, sizeof err),
                     OSN_ECONFIG);
    assert_contains(err, "--set arrivals.rate");
    assert_contains(err, "SECTION.KEY=VALUE");

    const char *no_dot[] = {"rate=1"};
    assert_int_equal(osn_scenario_load(&sc, NULL, no_dot, 1, NULL, err, sizeof err), OSN_ECONFIG);
    assert_contains(err, "--set rate=1");

    const char *bad_value[] = {"service.rate=fast"};
    assert_int_equal(osn_scenario_load(&sc, NULL, bad_value, 1, NULL, err, sizeof err),
                     OSN_ECONFIG);
    assert_contains(err, "--set service.rate=fast");
    assert_contains(err, "service.rate");

    const char *unknown[] = {"arrivals.burst=2"};
    assert_int_equal(osn_scenario_load(&sc, NULL, unknown, 1, NULL, err, sizeof err), OSN_ECONFIG);
    assert_contains(err, "--set arrivals.burst=2");
    assert_contains(err, "unknown key");

    /* The file is fine; the override breaks the threshold order and is named. */
    const char *order[] = {"thresholds.H=30"};
    expect_error("[thresholds]\nL = 5\nH = 10\nR = 20\n", order, 1, OSN_ECONFIG, 0,
                 "--set thresholds.H=30", "thresholds.H");
    osn_scenario_release(&sc);
}

/* ---- atomic files ---- */

static void test_afile_abort_leaves_nothing(void **state)
{
    struct osn_afile af;
    char err[256], path[] = "/tmp/osn_test_afile_XXXXXX";
    int fd;
    (void)state;

    fd = mkstemp(path); /* reserve a unique name, then remove it */
    assert_true(fd >= 0);
    close(fd);
    unlink(path);

    assert_int_equal(osn_afile_open(&af, path, err, sizeof err), 0);
    assert_true(fputs("half a result", af.f) >= 0);
    assert_true(exists(af.tmp));
    char tmp[sizeof af.tmp];
    snprintf(tmp, sizeof tmp, "%s", af.tmp);
    osn_afile_abort(&af);
    assert_false(exists(path));
    assert_false(exists(tmp));
    osn_afile_abort(&af); /* twice is harmless */
}

static void test_afile_commit(void **state)
{
    struct osn_afile af;
    char err[256], buf[64] = "", path[] = "/tmp/osn_test_afile_XXXXXX";
    int fd;
    FILE *f;
    (void)state;

    fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_true(write(fd, "old", 3) == 3);
    close(fd);

    assert_int_equal(osn_afile_open(&af, path, err, sizeof err), 0);
    fputs("new", af.f);
    /* Until the commit the old file is untouched. */
    f = fopen(path, "r");
    assert_non_null(f);
    assert_non_null(fgets(buf, sizeof buf, f));
    fclose(f);
    assert_string_equal(buf, "old");
    char tmp[sizeof af.tmp];
    snprintf(tmp, sizeof tmp, "%s", af.tmp);
    assert_int_equal(osn_afile_commit(&af, err, sizeof err), 0);
    assert_false(exists(tmp));
    f = fopen(path, "r");
    assert_non_null(f);
    assert_non_null(fgets(buf, sizeof buf, f));
    fclose(f);
    assert_string_equal(buf, "new");
    osn_afile_abort(&af); /* after a commit: a no-op, the file stays */
    assert_true(exists(path));
    unlink(path);
}

static void test_afile_bad_directory(void **state)
{
    struct osn_afile af;
    char err[256];
    (void)state;

    assert_int_equal(osn_afile_open(&af, "/tmp/osn-no-such-dir/out.json", err, sizeof err),
                     OSN_EIO);
    assert_contains(err, "/tmp/osn-no-such-dir/out.json");
    osn_afile_abort(&af);
}

/* Reads a whole small file into buf (NUL-terminated). */
static void slurp(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    size_t n = fread(buf, 1, size - 1, f);
    buf[n] = '\0';
    fclose(f);
}

/* A fresh directory for one test's files. */
static void scratch_dir(char *dir)
{
    strcpy(dir, "/tmp/osn_test_afile_dir_XXXXXX");
    assert_non_null(mkdtemp(dir));
}

static void write_through(const char *path, const char *text)
{
    struct osn_afile af;
    char err[256];
    assert_int_equal(osn_afile_open(&af, path, err, sizeof err), 0);
    fputs(text, af.f);
    assert_int_equal(osn_afile_commit(&af, err, sizeof err), 0);
}

/* A symbolic link is followed: its target is written, the link stays a link. */
static void test_afile_follows_symlink(void **state)
{
    char dir[64], real[128], link[128], dangling[128], target2[128], buf[64];
    struct stat st;
    (void)state;

    scratch_dir(dir);
    snprintf(real, sizeof real, "%s/real.json", dir);
    snprintf(link, sizeof link, "%s/link.json", dir);
    snprintf(dangling, sizeof dangling, "%s/dangling.json", dir);
    snprintf(target2, sizeof target2, "%s/new.json", dir);
    write_through(real, "old");
    assert_int_equal(symlink("real.json", link), 0); /* relative to the link's directory */
    write_through(link, "new");
    assert_int_equal(lstat(link, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    slurp(real, buf, sizeof buf);
    assert_string_equal(buf, "new");
    /* A dangling link creates its target, as the shell's > does. */
    assert_int_equal(symlink(target2, dangling), 0);
    write_through(dangling, "created");
    assert_int_equal(lstat(dangling, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    slurp(target2, buf, sizeof buf);
    assert_string_equal(buf, "created");
    unlink(real);
    unlink(link);
    unlink(dangling);
    unlink(target2);
    assert_int_equal(rmdir(dir), 0); /* no temporary left behind */
}

/* A replaced file keeps its mode (here 0640 and a read-only 0444 one, which only root may
 * replace; anyone else is refused, as cp refuses). */
static void test_afile_keeps_mode(void **state)
{
    char dir[64], path[128], ro[128], err[256], buf[64];
    struct osn_afile af;
    struct stat st;
    (void)state;

    scratch_dir(dir);
    snprintf(path, sizeof path, "%s/out.csv", dir);
    snprintf(ro, sizeof ro, "%s/ro.csv", dir);
    write_through(path, "old");
    assert_int_equal(chmod(path, 0640), 0);
    write_through(path, "new");
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0640);

    write_through(ro, "old");
    assert_int_equal(chmod(ro, 0444), 0);
    if (geteuid() == 0) {
        write_through(ro, "new");
        slurp(ro, buf, sizeof buf);
        assert_string_equal(buf, "new");
    } else {
        assert_int_equal(osn_afile_open(&af, ro, err, sizeof err), OSN_EIO);
        assert_contains(err, "Permission denied");
        osn_afile_abort(&af);
        slurp(ro, buf, sizeof buf);
        assert_string_equal(buf, "old");
    }
    assert_int_equal(stat(ro, &st), 0);
    assert_int_equal(st.st_mode & 07777, 0444);
    unlink(path);
    unlink(ro);
    assert_int_equal(rmdir(dir), 0);
}

/* A character device is written directly, never replaced: /dev/full stays a device and the
 * failed write is reported. (With the old rename, root turned it into a regular file.) */
static void test_afile_device_written_directly(void **state)
{
    struct osn_afile af;
    char err[256];
    struct stat st;
    (void)state;

    if (stat("/dev/full", &st) != 0 || !S_ISCHR(st.st_mode))
        skip();
    assert_int_equal(osn_afile_open(&af, "/dev/full", err, sizeof err), 0);
    assert_true(af.is_direct);
    assert_string_equal(af.tmp, "");
    fputs("a result", af.f);
    assert_int_equal(osn_afile_commit(&af, err, sizeof err), OSN_EIO);
    assert_contains(err, "/dev/full");
    assert_contains(err, "No space left on device");
    osn_afile_abort(&af);
    assert_int_equal(stat("/dev/full", &st), 0);
    assert_true(S_ISCHR(st.st_mode));
}

/* A FIFO is written directly: its reader gets the result and it stays a FIFO. */
static void test_afile_fifo_written_directly(void **state)
{
    char dir[64], fifo[128], err[256], buf[64] = "";
    struct osn_afile af;
    struct stat st;
    (void)state;

    scratch_dir(dir);
    snprintf(fifo, sizeof fifo, "%s/pipe", dir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    /* The reader opens first (non-blocking), so that the writer's open does not wait. */
    int rd = open(fifo, O_RDONLY | O_NONBLOCK);
    assert_true(rd >= 0);
    assert_int_equal(osn_afile_open(&af, fifo, err, sizeof err), 0);
    assert_true(af.is_direct);
    fputs("through the pipe", af.f);
    assert_int_equal(osn_afile_commit(&af, err, sizeof err), 0);
    assert_int_equal(read(rd, buf, sizeof buf - 1), 16);
    close(rd);
    assert_string_equal(buf, "through the pipe");
    assert_int_equal(lstat(fifo, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
    unlink(fifo);
    assert_int_equal(rmdir(dir), 0);
}

/* A directory is refused, naming it. */
static void test_afile_directory_refused(void **state)
{
    struct osn_afile af;
    char err[256];
    (void)state;

    assert_int_equal(osn_afile_open(&af, "/tmp", err, sizeof err), OSN_EIO);
    assert_contains(err, "/tmp");
    assert_contains(err, "Is a directory");
    osn_afile_abort(&af);
}

/* Finish then publish: a finished file is not in place until published, and an abort after
 * the finish removes it (the way a run with several outputs gives up when one fails). */
static void test_afile_finish_abort(void **state)
{
    char dir[64], path[128], err[256];
    struct osn_afile af;
    (void)state;

    scratch_dir(dir);
    snprintf(path, sizeof path, "%s/out.json", dir);
    assert_int_equal(osn_afile_open(&af, path, err, sizeof err), 0);
    fputs("{}", af.f);
    assert_int_equal(osn_afile_finish(&af, err, sizeof err), 0);
    assert_false(exists(path));
    osn_afile_abort(&af);
    assert_false(exists(path));
    assert_int_equal(rmdir(dir), 0); /* the temporary is gone too */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_defaults),
            cmocka_unit_test(test_key_tables),
            cmocka_unit_test(test_policy_words),
            cmocka_unit_test(test_policy_words_net),
            cmocka_unit_test(test_file_values_and_origins),
            cmocka_unit_test(test_overrides_win),
            cmocka_unit_test(test_override_replaces_bad_file_value),
            cmocka_unit_test(test_overload_accept),
            cmocka_unit_test(test_single_loop_and_b),
            cmocka_unit_test(test_bi_level_and_two_flows),
            cmocka_unit_test(test_failure_leaves_scenario_alone),
            cmocka_unit_test(test_err_unknown_section),
            cmocka_unit_test(test_err_unknown_key),
            cmocka_unit_test(test_err_bad_numbers),
            cmocka_unit_test(test_err_rates_out_of_range),
            cmocka_unit_test(test_err_thresholds_order),
            cmocka_unit_test(test_err_default_blamed),
            cmocka_unit_test(test_err_too_big),
            cmocka_unit_test(test_err_missing_and_unreadable),
            cmocka_unit_test(test_err_malformed_line),
            cmocka_unit_test(test_err_duplicate_key),
            cmocka_unit_test(test_err_key_for_other_kind),
            cmocka_unit_test(test_err_enums),
            cmocka_unit_test(test_err_set_flags),
            cmocka_unit_test(test_afile_abort_leaves_nothing),
            cmocka_unit_test(test_afile_commit),
            cmocka_unit_test(test_afile_bad_directory),
            cmocka_unit_test(test_afile_follows_symlink),
            cmocka_unit_test(test_afile_keeps_mode),
            cmocka_unit_test(test_afile_device_written_directly),
            cmocka_unit_test(test_afile_fifo_written_directly),
            cmocka_unit_test(test_afile_directory_refused),
            cmocka_unit_test(test_afile_finish_abort),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

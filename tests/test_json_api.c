/*
 * Unit tests of the one-call library entry points (src/io/json_api.c, include/osn/json_api.h),
 * which the Python module uses: osn_solve_json() gives the document of `osn solve --json` with
 * the closed-form T_ret of the tour's model; osn_optimize_json() gives an optimum whose T_ret is
 * what osn_solve_json() gives at that pair; every error comes back with its code, a message
 * naming the key, and no document. Run under ASan + UBSan in `make check` like every unit test.
 */
#include <setjmp.h> /* cmocka needs these before its header */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "osn/err.h"
#include "osn/json_api.h"
#include "osn/version.h"

static const char *const tour[] = {"arrivals.rate=1.2", "arrivals.overload_rate=0.6",
                                   "thresholds.L=10", "thresholds.H=15", "thresholds.R=20"};

static json_t *parse(char *text)
{
    json_error_t je;
    json_t *doc = json_loads(text, 0, &je);
    assert_non_null(doc);
    osn_json_free(text);
    return doc;
}

static void test_solve_closed_form(void **state)
{
    (void)state;
    char err[256], *text = NULL;

    assert_int_equal(osn_solve_json(NULL, tour, 5, NULL, &text, err, sizeof err), 0);
    json_t *doc = parse(text);
    double ref = 12.5 - 7.5 * pow(0.6, 5); /* docs/models.md, the geometric T_ret */
    assert_true(fabs(json_real_value(json_object_get(doc, "T_ret")) - ref) < 1e-12 * ref);
    assert_string_equal(json_string_value(json_object_get(doc, "osn_version")), osn_version());
    assert_int_equal(json_integer_value(json_object_get(json_object_get(doc, "scenario"), "R")),
                     20);
    json_decref(doc);

    /* The closed forms and the general solver agree on it. */
    assert_int_equal(osn_solve_json(NULL, tour, 5, "closed", &text, err, sizeof err), 0);
    doc = parse(text);
    assert_true(fabs(json_real_value(json_object_get(doc, "T_ret")) - ref) < 1e-12 * ref);
    assert_string_equal(json_string_value(json_object_get(doc, "method")), "closed");
    json_decref(doc);
}

static void test_solve_beyond_double(void **state)
{
    (void)state;
    const char *const sets[] = {"arrivals.rate=50", "thresholds.L=0", "thresholds.H=1000",
                                "thresholds.R=2000"};
    char err[256], *text = NULL;

    assert_int_equal(osn_solve_json(NULL, sets, 4, "general", &text, err, sizeof err), 0);
    json_t *doc = parse(text);
    const char *t_ret = json_string_value(json_object_get(doc, "T_ret"));
    assert_non_null(t_ret);
    double lg = json_real_value(json_object_get(doc, "T_ret_log10"));
    /* "9.07271855856e+1400": the mantissa and the exponent, read apart. */
    const char *e = strchr(t_ret, 'e');
    assert_non_null(e);
    char head[32];
    snprintf(head, sizeof head, "%.*s", (int)(e - t_ret), t_ret);
    double mant = atof(head);
    assert_true(fabs(lg - (atof(e + 1) + log10(mant))) < 1e-9);
    json_decref(doc);
}

static void test_solve_errors(void **state)
{
    (void)state;
    const char *const bad_h[] = {"thresholds.H=30"};
    const char *const bi[] = {"model.kind=bi-level"};
    const char *const nokey[] = {"arrivals.colour=red"};
    char err[256], *text = (char *)1;

    assert_int_equal(osn_solve_json(NULL, bad_h, 1, NULL, &text, err, sizeof err), OSN_ECONFIG);
    assert_null(text);
    assert_non_null(strstr(err, "thresholds.H"));
    assert_int_equal(osn_solve_json(NULL, nokey, 1, NULL, &text, err, sizeof err), OSN_ECONFIG);
    assert_non_null(strstr(err, "colour"));
    assert_int_equal(osn_solve_json(NULL, bi, 1, "closed", &text, err, sizeof err), OSN_ENOTSUP);
    assert_null(text);
    assert_int_equal(osn_solve_json(NULL, NULL, 0, "fast", &text, err, sizeof err), OSN_ECONFIG);
    assert_non_null(strstr(err, "fast"));
    assert_int_equal(osn_solve_json("/nonexistent.ini", NULL, 0, NULL, &text, err, sizeof err),
                     OSN_EIO);
    assert_non_null(strstr(err, "/nonexistent.ini"));
    assert_int_equal(osn_solve_json(NULL, NULL, 0, NULL, NULL, err, sizeof err), OSN_EINVAL);
}

static void test_optimize(void **state)
{
    (void)state;
    const char *path = OSN_SOURCE_DIR "/examples/optimize/two_loop_constrained.ini";
    const char *const search[] = {"arrivals.rate=0.9", "thresholds.R=20",
                                  "optimize.max_throttle=0.5", "optimize.max_discard=1e-3"};
    char err[256], *text = NULL, pair[2][64];

    /* A file: an optimum, and the constraint that binds it. */
    assert_int_equal(osn_optimize_json(path, NULL, 0, &text, err, sizeof err), 0);
    json_t *doc = parse(text);
    assert_true(json_is_true(json_object_get(doc, "found")));
    assert_non_null(json_string_value(json_object_get(doc, "binding")));
    json_decref(doc);

    /* Overrides only; the optimum's T_ret is the solver's at that pair of the same model. */
    assert_int_equal(osn_optimize_json(NULL, search, 4, &text, err, sizeof err), 0);
    doc = parse(text);
    assert_true(json_is_true(json_object_get(doc, "found")));
    long L = (long)json_integer_value(json_object_get(doc, "L"));
    long H = (long)json_integer_value(json_object_get(doc, "H"));
    double t_ret = json_real_value(json_object_get(doc, "T_ret"));
    assert_true(json_real_value(json_object_get(doc, "P2")) <= 1e-3);
    json_decref(doc);
    snprintf(pair[0], sizeof pair[0], "thresholds.L=%ld", L);
    snprintf(pair[1], sizeof pair[1], "thresholds.H=%ld", H);
    const char *const sets[] = {search[0], search[1], pair[0], pair[1]};
    assert_int_equal(osn_solve_json(NULL, sets, 4, "general", &text, err, sizeof err), 0);
    doc = parse(text);
    assert_true(json_real_value(json_object_get(doc, "T_ret")) == t_ret);
    json_decref(doc);

    /* Too long a search: solving every pair (policy II is not screened) past R = 2700, and
     * even the screened two-loop M|M|1 scan at R = 4e5 (8e10 pairs). */
    const char *const huge[][2] = {{"thresholds.R=5000", "model.policy=II"},
                                   {"thresholds.R=400000", "model.policy=I"}};
    for (int i = 0; i < 2; i++) {
        text = NULL;
        assert_int_equal(osn_optimize_json(NULL, huge[i], 2, &text, err, sizeof err), OSN_ETOOBIG);
        assert_null(text);
        assert_non_null(strstr(err, "thresholds.R"));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_solve_closed_form),
            cmocka_unit_test(test_solve_beyond_double),
            cmocka_unit_test(test_solve_errors),
            cmocka_unit_test(test_optimize),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * Unit tests of the scenario core alone (src/ini/): key collection with file:line, --set
 * overrides, the value parsers and an atomic output file. The executable links osn_ini and
 * nothing else of OSN (tests/tests.cmake), so it is also the check that the core links without
 * the simulator, the solver and the fluid model (docs/design.md: ini -> base).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "osn/afile.h"
#include "osn/err.h"
#include "osn/ini.h"

static const struct osn_key_spec defs[] = {{"run", "time"}, {"run", "seed"}};
static const struct osn_ini_schema schema = {defs, 2, NULL};

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static void test_collect_and_override(void **state)
{
    (void)state;
    char path[] = "/tmp/osn_test_ini_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    write_file(path, "[run]\ntime = 10\nseed = 7\n");

    struct osn_ini ini;
    char err[512];
    const char *sets[] = {"run.seed=9"};
    assert_int_equal(osn_ini_collect(&ini, path, sets, 1, &schema, err, sizeof err), 0);
    const struct osn_key_origin *o = osn_ini_get(&ini, "run.time");
    assert_non_null(o);
    assert_string_equal(o->value, "10");
    double t;
    assert_int_equal(osn_ini_double(o, 0, true, &t, err, sizeof err), 0);
    assert_true(t == 10);
    o = osn_ini_get(&ini, "run.seed");
    assert_string_equal(o->value, "9"); /* the override replaces the file's value */
    assert_string_equal(o->where, "--set run.seed=9");

    /* An unknown key is refused with the file and line. */
    write_file(path, "[run]\ntime = 10\nspeed = 3\n");
    assert_int_equal(osn_ini_collect(&ini, path, NULL, 0, &schema, err, sizeof err), OSN_ECONFIG);
    assert_non_null(strstr(err, ":3:"));
    unlink(path);
}

static void test_afile(void **state)
{
    (void)state;
    char path[] = "/tmp/osn_test_afile_XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    struct osn_afile af;
    char err[512];
    assert_int_equal(osn_afile_open(&af, path, err, sizeof err), 0);
    fputs("done\n", af.f);
    assert_int_equal(osn_afile_commit(&af, err, sizeof err), 0);
    char buf[16] = {0};
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    assert_non_null(fgets(buf, sizeof buf, f));
    fclose(f);
    assert_string_equal(buf, "done\n");
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_collect_and_override),
            cmocka_unit_test(test_afile),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

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
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
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
    osn_ini_free(&ini);
    assert_null(ini.keys);
    assert_null(osn_ini_get(&ini, "run.time"));
    osn_ini_free(&ini); /* twice: nothing */
    osn_ini_free(NULL);

    /* An unknown key is refused with the file and line. */
    write_file(path, "[run]\ntime = 10\nspeed = 3\n");
    assert_int_equal(osn_ini_collect(&ini, path, NULL, 0, &schema, err, sizeof err), OSN_ECONFIG);
    assert_non_null(strstr(err, ":3:"));
    unlink(path);
}

/* A key table: every type, stored where OSN_KEY_AT says, a hook, and a key that acts only with
 * another's choice. */
struct kcfg {
    double time;
    long n;
    unsigned mode; /* an enum's home */
    bool on;
    char name[8];
    double pair[2];
    double copy; /* the hook's second home of time */
    double cap;  /* inf allowed; acts with two of the three modes */
};

static const char *const modes[] = {"a", "b", "c", NULL};

static int copy_time(void *cfg, const struct osn_key_origin *o, const double *v, int n, char *err,
                     size_t errsize)
{
    struct kcfg *c = cfg;
    (void)o, (void)v, (void)n, (void)err, (void)errsize;
    c->copy = c->time;
    return 0;
}

static const struct osn_key_spec kdefs[] = {
        {"k", "time", OSN_KEY_DOUBLE, 0, 0, true, OSN_KEY_AT(struct kcfg, time), .hook = copy_time},
        {"k", "n", OSN_KEY_LONG, 1, 10, OSN_KEY_AT(struct kcfg, n)},
        {"k", "mode", OSN_KEY_CHOICE, .choices = modes, OSN_KEY_AT(struct kcfg, mode)},
        {"k", "on", OSN_KEY_BOOL, OSN_KEY_AT(struct kcfg, on)},
        {"k", "name", OSN_KEY_STRING, OSN_KEY_AT(struct kcfg, name)},
        {"k", "pair", OSN_KEY_LIST, 0, 2, OSN_KEY_AT(struct kcfg, pair), .when_key = "k.mode",
         .when_is = "b"},
        {"k", "cap", OSN_KEY_DOUBLE, 1, 0, false, OSN_KEY_AT(struct kcfg, cap), .inf = true,
         .when_key = "k.mode", .when_is = "a|c"},
};
static const struct osn_ini_schema kschema = {kdefs, sizeof kdefs / sizeof kdefs[0], NULL};

/* Loads the overrides sets[0..n) into *c (zeroed first); returns the loader's status. */
static int kload(struct kcfg *c, const char **sets, int n, char *err, size_t errsize)
{
    struct osn_ini ini;
    int rc = osn_ini_collect(&ini, NULL, sets, n, &kschema, err, errsize);
    *c = (struct kcfg){0};
    if (rc)
        return rc;
    rc = osn_ini_load(&ini, &kschema, c, err, errsize);
    osn_ini_free(&ini);
    return rc;
}

static void test_key_table(void **state)
{
    (void)state;
    struct kcfg c;
    char err[512], text[64];
    const char *ok[] = {"k.time=2.5", "k.n=7", "k.mode=B", "k.on=yes", "k.name=abc", "k.pair=1 2"};
    assert_int_equal(kload(&c, ok, 6, err, sizeof err), 0);
    assert_true(c.time == 2.5 && c.copy == 2.5 && c.n == 7 && c.mode == 1 && c.on);
    assert_string_equal(c.name, "abc");
    assert_true(c.pair[0] == 1 && c.pair[1] == 2);
    osn_ini_key_text(&kdefs[5], &c, text, sizeof text);
    assert_string_equal(text, "1 2");
    osn_ini_key_text(&kdefs[2], &c, text, sizeof text);
    assert_string_equal(text, "b");

    /* Each refusal names the key and says why. */
    const char *bad[][2] = {{"k.time=0", "greater than 0"},
                            {"k.n=11", "largest allowed value (10)"},
                            {"k.mode=d", "expected one of: a, b, c"},
                            {"k.on=maybe", "expected one of"},
                            {"k.name=abcdefgh", "longer than 7 characters"},
                            {"k.pair=1", "expected 2 numbers"},
                            {"k.pair=1 2", "acts only with k.mode = b (it is a here)"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(kload(&c, &bad[i][0], 1, err, sizeof err), OSN_ECONFIG);
        assert_non_null(strstr(err, bad[i][1]));
        assert_non_null(strstr(err, "--set k."));
    }

    /* An unbounded double: inf, infinite or none in any case is INFINITY; else a number >= lo. */
    const char *inf[][2] = {
            {"k.cap=inf", "k.mode=a"}, {"k.cap=Infinite", "k.mode=c"}, {"k.cap=NONE", "k.mode=a"}};
    for (size_t i = 0; i < sizeof inf / sizeof inf[0]; i++) {
        assert_int_equal(kload(&c, inf[i], 2, err, sizeof err), 0);
        assert_true(isinf(c.cap) && c.cap > 0);
        assert_true(osn_ini_key_acts(&kschema, &kdefs[6], &c));
    }
    const char *capped[] = {"k.cap=2.5"};
    assert_int_equal(kload(&c, capped, 1, err, sizeof err), 0);
    assert_true(c.cap == 2.5);
    osn_ini_key_text(&kdefs[6], &(struct kcfg){.cap = INFINITY}, text, sizeof text);
    assert_string_equal(text, "inf");
    /* when_is "a|c": the key acts with either name and with no other (not with b, nor with a
     * name that only starts like one of them). */
    const char *cap_b[][2] = {{"k.cap=3", "k.mode=b"},
                              {"k.cap=0.5", "k.mode=a"},
                              {"k.cap=infinity", "k.mode=a"},
                              {"k.time=inf", "k.mode=a"}};
    const char *cap_why[] = {"acts only with k.mode = a|c (it is b here)", "at least 1",
                             "must be a finite number", "must be a finite number"};
    for (size_t i = 0; i < sizeof cap_b / sizeof cap_b[0]; i++) {
        assert_int_equal(kload(&c, cap_b[i], 2, err, sizeof err), OSN_ECONFIG);
        assert_non_null(strstr(err, cap_why[i]));
    }
    c = (struct kcfg){.mode = 1};
    assert_false(osn_ini_key_acts(&kschema, &kdefs[6], &c));
    assert_true(osn_ini_key_acts(&kschema, &kdefs[3], &c)); /* no when_key: always */
    assert_ptr_equal(osn_ini_key_find(&kschema, "k.on"), &kdefs[3]);
    assert_null(osn_ini_key_find(&kschema, "k.off"));
}

/* A named family ([el NAME] v = ...): as many distinct keys as a file has sections. */
static const struct osn_key_spec many_defs[] = {{"el *", "v", .family = OSN_INI_FAMILY_NAMED},
                                                {"run", "time"}};
static const struct osn_ini_schema many_schema = {many_defs, 2, NULL};

/* Writes n sections "[el eI]\nv = 7I\n" (I = 0 .. n-1) after "[run]\ntime = 1\n", and then, when
 * dup, "[el e0]\nv = 9\n" again. Key I is on line 4 + 2 I. */
static void write_many(const char *path, int n, bool dup)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("[run]\ntime = 1\n", f);
    for (int i = 0; i < n; i++)
        fprintf(f, "[el e%d]\nv = %ld\n", i, 7L * i);
    if (dup)
        fputs("[el e0]\nv = 9\n", f);
    fclose(f);
}

/*
 * Keys grown at run time: OSN_INI_MAX_KEYS keys (131,072) load, each found by osn_ini_get() with
 * the value and line written (an independent reference: the writer's formula), in the order
 * given; an override still replaces, a key given twice is still refused; one key more than the
 * bound is refused naming FILE:LINE. The load and the 131,073 look-ups must take less than 20 s
 * (0.4 s of CPU with the index, 1.2 s under ASan; with a linear search, 2 x 8.6e9 comparisons,
 * the test had not ended after 600 s).
 */
static void test_many_keys(void **state)
{
    (void)state;
    char path[] = "/tmp/osn_test_ini_many_XXXXXX", err[512], key[64], want[192];
    int fd = mkstemp(path);
    const int n = OSN_INI_MAX_KEYS - 1; /* and run.time: the bound exactly */
    assert_true(fd >= 0);
    close(fd);
    write_many(path, n, false);

    struct osn_ini ini;
    const char *sets[] = {"el e4000.v=1.5", "el new.v=2"};
    time_t t0 = time(NULL);
    /* The override of a new key is one too many. */
    assert_int_equal(osn_ini_collect(&ini, path, sets, 2, &many_schema, err, sizeof err),
                     OSN_ECONFIG);
    assert_non_null(strstr(err, "--set el new.v=2: more than 131072 keys"));
    assert_int_equal(osn_ini_collect(&ini, path, sets, 1, &many_schema, err, sizeof err), 0);
    assert_int_equal(ini.nkeys, OSN_INI_MAX_KEYS);
    assert_string_equal(ini.keys[0].key, "run.time");
    for (int i = 0; i < n; i++) {
        snprintf(key, sizeof key, "el e%d.v", i);
        const struct osn_key_origin *o = osn_ini_get(&ini, key);
        assert_non_null(o);
        assert_ptr_equal(o, &ini.keys[1 + i]);
        snprintf(want, sizeof want, "%ld", 7L * i);
        assert_string_equal(o->value, i == 4000 ? "1.5" : want);
        snprintf(want, sizeof want, "%s:%d", path, 4 + 2 * i);
        assert_string_equal(o->where, i == 4000 ? "--set el e4000.v=1.5" : want);
    }
    assert_null(osn_ini_get(&ini, "el e131071.v"));
    assert_null(osn_ini_get(&ini, "el E1.v")); /* names are told apart by case */
    assert_true(difftime(time(NULL), t0) < 20);
    osn_ini_free(&ini);

    /* One key more, in the file: refused at its line. */
    write_many(path, n + 1, false);
    assert_int_equal(osn_ini_collect(&ini, path, NULL, 0, &many_schema, err, sizeof err),
                     OSN_ECONFIG);
    snprintf(want, sizeof want, "%s:%d: more than 131072 keys", path, 4 + 2 * n);
    assert_non_null(strstr(err, want));

    /* A key given twice among many: refused, naming both lines. */
    write_many(path, 20000, true);
    assert_int_equal(osn_ini_collect(&ini, path, NULL, 0, &many_schema, err, sizeof err),
                     OSN_ECONFIG);
    snprintf(want, sizeof want, "%s:%d: key 'el e0.v' given twice (first at %s:4)", path,
             4 + 2 * 20000, path);
    assert_non_null(strstr(err, want));
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
            cmocka_unit_test(test_key_table),
            cmocka_unit_test(test_many_keys),
            cmocka_unit_test(test_afile),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * The node's hash map (src/node/map.c) against a trivially correct reference: a plain array of
 * (key, value) entries searched from end to end. 100,000 random adds, finds and deletes over a
 * few hundred keys whose low bits mostly agree, so that runs of full slots are long, wrap around
 * the end of the table and are cut by deletions in their middle (backward shift); several
 * entries per key, as the dialogs keep for INVITEs that share a Call-ID; and rebuilds that drop
 * entries, as the calls a UAS knows lose those too old. After every step each key's entries
 * must be the reference's, as a multiset.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdlib.h>

#include "node_int.h"

#define NKEYS   300
#define REF_MAX 600

struct ref {
    uint64_t key[REF_MAX], val[REF_MAX];
    int n;
};

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Key i: most have one of the last four slots of any table as their home, so that their run
 * wraps around the table's end; every seventh has a home of its own; key 0 is among them (stored
 * as 1, which no other key is here). */
static uint64_t key_of(int i)
{
    return i == 0 ? 0
                  : (uint64_t)i << 20 | (i % 7 == 0 ? (uint64_t)i : 0xfffffu - (uint64_t)(i % 4));
}

/* Whether key k has the same entries (values, with their counts) in m and in r. */
static bool same(const struct map *m, const struct ref *r, uint64_t k)
{
    int in_map = 0, in_ref = 0;
    for (struct map_slot *e = NULL; (e = map_find(m, k, e));) {
        int want = 0, got = 0;
        for (int i = 0; i < r->n; i++)
            want += r->key[i] == k && r->val[i] == e->val;
        for (struct map_slot *f = NULL; (f = map_find(m, k, f));)
            got += f->val == e->val;
        if (want != got)
            return false;
        in_map++;
    }
    for (int i = 0; i < r->n; i++)
        in_ref += r->key[i] == k;
    return in_map == in_ref;
}

static bool odd_val(void *ctx, const struct map_slot *e)
{
    (void)ctx;
    return e->val & 1;
}

static void test_against_reference(void **state)
{
    (void)state;
    struct map m = {0};
    struct ref *r = calloc(1, sizeof *r);
    uint64_t s = 88172645463325252ULL;
    assert_non_null(r);
    for (int step = 0; step < 100000; step++) {
        uint64_t k = key_of((int)(rnd(&s) % NKEYS)), op = rnd(&s) % 100;
        if (op < 45 && r->n < REF_MAX) { /* add: values 0..3, so a key repeats values too */
            uint64_t v = rnd(&s) % 4;
            assert_int_equal(map_add(&m, k, v), 0);
            r->key[r->n] = k;
            r->val[r->n++] = v;
        } else if (op < 90) { /* delete one entry of k, the one map_find gives */
            struct map_slot *e = map_find(&m, k, NULL);
            int i = 0;
            while (i < r->n && !(e && r->key[i] == k && r->val[i] == e->val))
                i++;
            assert_true(e ? i < r->n : true);
            if (e) {
                map_del(&m, e);
                r->key[i] = r->key[--r->n];
                r->val[i] = r->val[r->n];
            }
        } else if (op == 99) { /* a rebuild that keeps the odd values only */
            assert_int_equal(map_rebuild(&m, m.slot ? m.mask + 1 : 256, odd_val, NULL), 0);
            for (int i = 0; i < r->n;)
                if (r->val[i] & 1) {
                    i++;
                } else {
                    r->key[i] = r->key[--r->n];
                    r->val[i] = r->val[r->n];
                }
        }
        assert_int_equal(m.n, r->n);
        assert_true(same(&m, r, k));
        if (step % 1000 == 0)
            for (int i = 0; i < NKEYS; i++)
                assert_true(same(&m, r, key_of(i)));
    }
    /* At most half full, always: every probe ends. */
    assert_true(m.n * 2 <= m.mask + 1);
    map_release(&m);
    assert_null(m.slot);
    free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_against_reference)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * What the network tests share (test_net_topo.c, test_net_tree.c): freeing a loaded scenario,
 * one run that must succeed, and two runs' figures compared bit for bit.
 */
#ifndef OSN_TESTS_NET_RUN_UTIL_H
#define OSN_TESTS_NET_RUN_UTIL_H

#include <setjmp.h> /* cmocka needs these before its header */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "osn/net.h"
#include "osn/net_scenario.h"

static void unload(struct osn_net_scenario *s)
{
    osn_net_scenario_release(s);
    free(s);
}

static void run(const struct osn_net_cfg *cfg, struct osn_net_result *r)
{
    char msg[256] = "";
    memset(r, 0, sizeof *r);
    int rc = osn_net_run(cfg, r, msg, sizeof msg);
    if (rc)
        fprintf(stderr, "run: %s\n", msg);
    assert_int_equal(rc, 0);
}

/* Both runs' figures, bit for bit (NaN half-widths compare as bits too). */
static void assert_same(const struct osn_net_result *a, const struct osn_net_result *b)
{
    assert_int_equal(a->nelem, b->nelem);
    assert_memory_equal(a->est, b->est, sizeof a->est);
    assert_memory_equal(a->elem, b->elem, (size_t)a->nelem * sizeof *a->elem);
    assert_true(a->messages == b->messages);
    assert_true(a->events == b->events);
}

#endif

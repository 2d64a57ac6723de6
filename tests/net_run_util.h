/*
 * What the network tests share (test_net_topo.c, test_net_tree.c, test_net_mesh.c): loading a
 * scenario's text, freeing it, one run that must succeed, and two runs' figures compared bit
 * for bit.
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
#include <unistd.h>

#include "osn/net.h"
#include "osn/net_scenario.h"

/* The scenario `text` (a temporary file) with the --set values `sets`; *rc its load's code. */
static inline struct osn_net_scenario *load_text(const char *text, const char *const *sets,
                                                 int nsets, char *err, size_t errsize, int *rc)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/osn_test_net_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    assert_true(fputs(text, f) >= 0);
    assert_int_equal(fclose(f), 0);
    struct osn_net_scenario *s = calloc(1, sizeof *s);
    assert_non_null(s);
    *rc = osn_net_scenario_load(s, path, sets, nsets, err, errsize);
    unlink(path);
    return s;
}

static inline struct osn_net_scenario *must_load(const char *text, const char *const *sets,
                                                 int nsets)
{
    char err[512] = "";
    int rc;
    struct osn_net_scenario *s = load_text(text, sets, nsets, err, sizeof err, &rc);
    if (rc)
        fprintf(stderr, "%s\n", err);
    assert_int_equal(rc, 0);
    return s;
}

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

/* The overload of examples/fanin.ini: 1,000 calls/s into a core of about 370. */
#define LOADED                                                                                 \
    "[source]\nrate = 1000\nhold = 5\n[server core]\nbuffer = 50000\n[server edge]\nbuffer = " \
    "2000\n"

/* The network of `net` (a [net] section's lines) with LOADED, which must load as `topology`,
 * runs bit for bit as `topology = fanin` of 4 edges, in overload under rate and loss control. */
static inline void assert_loaded_fanin(const char *net, enum osn_net_topology topology)
{
    static const char *const controls[] = {"control.kind=rate", "control.kind=loss"};
    char text[512];
    snprintf(text, sizeof text, "%s%s", net, LOADED);
    for (size_t c = 0; c < 2; c++) {
        const char *sets[] = {"net.time=3", "net.warmup=2", "net.replications=2", controls[c]};
        struct osn_net_scenario *f =
                must_load("[net]\ntopology = fanin\nedges = 4\n" LOADED, sets, 4);
        struct osn_net_scenario *o = must_load(text, sets, 4);
        assert_int_equal(o->cfg.topology, topology);
        assert_int_equal(osn_net_role_count(&o->cfg, OSN_NET_ROLE_SOURCE), 4);
        struct osn_net_result rf, ro;
        run(&f->cfg, &rf);
        run(&o->cfg, &ro);
        assert_true(rf.est[OSN_NET_FAILED].value > 0); /* in overload: the control acts */
        assert_same(&rf, &ro);
        osn_net_result_release(&rf);
        osn_net_result_release(&ro);
        unload(f);
        unload(o);
    }
}

#endif

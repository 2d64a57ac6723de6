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

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "osn/err.h"
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

/* [server px]'s costs: INVITE 0.4 ms, each other message 0.1 ms. */
#define PX_INVITE 0.0004
#define PX_OTHER  0.0001
#define PX                                                                                      \
    "[server px]\ncost_invite = 0.0004\ncost_response = 0.0001\ncost_ack = 0.0001\ncost_bye = " \
    "0.0001\n"

/* A call's CPU at a px proxy with n responses: INVITE, ACK, BYE and the responses. */
static inline double px_call(int n)
{
    return PX_INVITE + (2 + n) * PX_OTHER;
}

/* Element e's utilisation is `want` (a closed form) within 2%. */
static inline void assert_util(const struct osn_net_result *r, int e, double want)
{
    double util = r->elem[e][OSN_NET_E_UTIL].value;
    if (!(fabs(util / want - 1) < 0.02))
        fprintf(stderr, "%s: util %g, closed form %g\n", r->elem_name[e], util, want);
    assert_true(fabs(util / want - 1) < 0.02);
}

/* The scenario `text` with --set `set` (or none) is refused: OSN_ECONFIG, its message naming
 * `key` and saying `why`. */
static inline void assert_refused(const char *text, const char *set, const char *key,
                                  const char *why)
{
    char err[1024] = "";
    int rc;
    const char *sets[] = {set};
    struct osn_net_scenario *s = load_text(text, sets, set ? 1 : 0, err, sizeof err, &rc);
    if (rc == 0 || !strstr(err, key) || !strstr(err, why))
        fprintf(stderr, "want %s, %s in: %s\n", key, why, err);
    assert_int_equal(rc, OSN_ECONFIG);
    assert_non_null(strstr(err, key));
    assert_non_null(strstr(err, why));
    unload(s);
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

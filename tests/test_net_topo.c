/*
 * The topology the user writes (src/io/net_topo.c): [element NAME], [source NAME] and [link A-B]
 * sections against independent references.
 *
 * - examples/fanin_topology.ini, examples/fanin.ini written out by hand, gives the run of
 *   `topology = fanin` bit for bit: every estimate, half-width and count of the network and of
 *   every element (only the rows' names differ), under two controls.
 * - examples/ims_chain.ini (P-CSCF, S-CSCF, AS with costs of their own) at low load: each
 *   element's CPU utilisation is the closed form offered x (invite + ack + bye + n x response),
 *   n = 4 at a proxy before a proxy, 3 at the AS, 0 at the UAS.
 * - Bad descriptions are refused with the file:line and the key: an unknown next hop, a cycle,
 *   a proxy without next hop, a source without `to`, net.topology beside the elements, a link
 *   the graph has not, a server section that does not exist, a shape the hop path does not carry.
 */
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

#define EX OSN_SOURCE_DIR "/examples/"

static struct osn_net_scenario *load(const char *path, const char *const *sets, int nsets,
                                     char *err, size_t errsize, int *rc)
{
    struct osn_net_scenario *s = calloc(1, sizeof *s);
    assert_non_null(s);
    *rc = osn_net_scenario_load(s, path, sets, nsets, err, errsize);
    return s;
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

static void test_fanin_written_is_fanin(void **state)
{
    (void)state;
    static const char *const controls[] = {"control.kind=rate", "control.kind=loss"};
    char err[512] = "";
    int rc;

    for (size_t c = 0; c < sizeof controls / sizeof controls[0]; c++) {
        const char *sets[] = {"net.time=3", "net.warmup=2", "net.replications=2", controls[c]};
        struct osn_net_scenario *b = load(EX "fanin.ini", sets, 4, err, sizeof err, &rc);
        assert_int_equal(rc, 0);
        struct osn_net_scenario *w = load(EX "fanin_topology.ini", sets, 4, err, sizeof err, &rc);
        if (rc)
            fprintf(stderr, "%s\n", err);
        assert_int_equal(rc, 0);
        assert_int_equal(w->cfg.topology, OSN_NET_FANIN);
        assert_int_equal(w->cfg.edges, 8);
        struct osn_net_result rb, rw;
        run(&b->cfg, &rb);
        run(&w->cfg, &rw);
        assert_same(&rb, &rw);
        /* The rows carry the file's names, in the built-in order. */
        assert_string_equal(rw.elem_name[0], "region0");
        assert_string_equal(rw.elem_name[8], "p0");
        assert_string_equal(rw.elem_name[16], "s");
        assert_string_equal(rw.elem_name[17], "callee");
        assert_string_equal(rb.elem_name[16], "core");
        osn_net_result_release(&rb);
        osn_net_result_release(&rw);
        free(b);
        free(w);
    }
}

/* CPU seconds of one call at a server with n responses (no retransmissions at low load). */
static double per_call(const struct osn_net_server_cfg *s, int n)
{
    return s->cost[OSN_NET_K_INVITE] + s->cost[OSN_NET_K_ACK] + s->cost[OSN_NET_K_BYE] +
           n * s->cost[OSN_NET_K_RESP];
}

static void test_ims_chain_utilisation(void **state)
{
    (void)state;
    const char *sets[] = {"net.replications=4"};
    char err[512] = "";
    int rc;
    struct osn_net_scenario *s = load(EX "ims_chain.ini", sets, 1, err, sizeof err, &rc);
    if (rc)
        fprintf(stderr, "%s\n", err);
    assert_int_equal(rc, 0);
    assert_int_equal(s->cfg.topology, OSN_NET_TANDEM);
    /* [link pcscf-scscf] and [link scscf-as] are the trunk; the rest keep their 5 ms. */
    assert_true(s->cfg.trunk.delay == 0.002);
    assert_true(s->cfg.access.delay == 0.005 && s->cfg.uas_link.delay == 0.005);
    struct osn_net_result r;
    run(&s->cfg, &r);
    static const char *const names[] = {"callers", "pcscf", "scscf", "as", "callee"};
    assert_int_equal(r.nelem, 5);
    for (int i = 0; i < 5; i++)
        assert_string_equal(r.elem_name[i], names[i]);
    /* The costs as the file writes them (an independent copy of its numbers, not the cfg's). */
    static const struct {
        int elem, nresp;
        double invite, resp, ack, bye;
    } want[] = {
            {1, 4, 0.0002, 0.00005, 0.0001, 0.0001},
            {2, 4, 0.0008, 0.0002, 0.0003, 0.0004},
            {3, 3, 0.0005, 0.0001, 0.0002, 0.0002},
    };
    double offered = r.est[OSN_NET_OFFERED].value;
    assert_true(fabs(offered - 100) < 10);
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        double cost = want[k].invite + want[k].ack + want[k].bye + want[k].nresp * want[k].resp;
        double util = r.elem[want[k].elem][OSN_NET_E_UTIL].value;
        /* The offered calls, each one's work: 2 % (the window's calls against its BYEs). */
        assert_true(fabs(util / (offered * cost) - 1) < 0.02);
    }
    /* The UAS's costs are [server uas]'s defaults: its closed form from the configuration. */
    double uas = r.elem[4][OSN_NET_E_UTIL].value;
    assert_true(fabs(uas / (offered * per_call(&s->cfg.uas, 0)) - 1) < 0.02);
    /* The S-CSCF is the mid proxy with its own costs: its capacity is its own. */
    assert_true(fabs(r.elem[2][OSN_NET_E_CAPACITY].value -
                     1 / (0.0008 + 0.0003 + 0.0004 + 4 * 0.0002)) < 1e-9);
    osn_net_result_release(&r);
    free(s);
}

/* A scenario written to a temporary file, loaded: the error and its message. */
static int load_text(const char *text, char *err, size_t errsize, char *path, size_t pathsize)
{
    snprintf(path, pathsize, "/tmp/osn_test_topo_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    assert_true(fputs(text, f) >= 0);
    assert_int_equal(fclose(f), 0);
    int rc;
    struct osn_net_scenario *s = load(path, NULL, 0, err, errsize, &rc);
    free(s);
    unlink(path);
    return rc;
}

static void assert_refused(const char *text, const char *where, const char *key, const char *why)
{
    char err[1024] = "", path[64], at[96];
    int rc = load_text(text, err, sizeof err, path, sizeof path);
    snprintf(at, sizeof at, "%s:%s", path, where);
    if (rc != OSN_ECONFIG || !strstr(err, at) || !strstr(err, key) || !strstr(err, why))
        fprintf(stderr, "want %s, %s, %s in: %s\n", at, key, why, err);
    assert_int_equal(rc, OSN_ECONFIG);
    assert_non_null(strstr(err, at));
    assert_non_null(strstr(err, key));
    assert_non_null(strstr(err, why));
}

#define SRC   "[source a]\nto = e\n"
#define CHAIN "[element e]\nrole = proxy\nserver = edge\nnext_hop = c\n"
#define CORE  "[element c]\nrole = proxy\nserver = core\nnext_hop = u\n"
#define UAS   "[element u]\nrole = uas\n"

static void test_errors(void **state)
{
    (void)state;
    char err[1024], path[64];
    /* The well-formed one first: a collapse. */
    assert_int_equal(load_text(SRC CHAIN CORE UAS, err, sizeof err, path, sizeof path), 0);
    assert_refused(SRC "[element e]\nrole = proxy\nserver = edge\nnext_hop = x\n" CORE UAS, "6",
                   "element e.next_hop", "next hop 'x' is not an [element NAME]");
    assert_refused(SRC CHAIN "[element c]\nrole = proxy\nserver = core\nnext_hop = e\n" UAS, "10",
                   "element c.next_hop", "a cycle");
    assert_refused(SRC CHAIN "[element c]\nrole = proxy\nserver = core\n" UAS, "8",
                   "element c.role", "has no next_hop");
    assert_refused("[source a]\nrate = 5\n" CHAIN CORE UAS, "2", "source a.rate", "needs `to`");
    assert_refused("[source a]\nto = nobody\n" CHAIN CORE UAS, "2", "source a.to",
                   "'nobody' is not an [element NAME]");
    assert_refused("[net]\ntopology = fanin\n" SRC CHAIN CORE UAS, "2", "net.topology",
                   "leave net.topology out");
    assert_refused(SRC CHAIN CORE UAS "[link a-c]\ndelay = 0.01\n", "14", "link a-c.delay",
                   "not a link of the graph");
    assert_refused(SRC "[element e]\nrole = proxy\nserver = mine\nnext_hop = c\n" CORE UAS, "5",
                   "element e.server", "no [server mine] section");
    assert_refused(SRC CHAIN "[element c]\nrole = proxy\nserver = core\nnext_hop = d\n"
                             "[element d]\nrole = proxy\nserver = core\nnext_hop = f\n"
                             "[element f]\nrole = proxy\nserver = core\nnext_hop = u\n" UAS,
                   "14", "element d.next_hop", "a core must forward to the UAS alone");
    assert_refused(SRC CHAIN CORE UAS "[element v]\nrole = uas\n", "14", "element v.role",
                   "no call of this shape reaches");
    /* Two sources into proxies of their own (a fanin), their access links of two delays: the
     * hop path has one access link. */
    assert_refused("[source a]\nto = e\n[source b]\nto = f\n"
                   "[element e]\nrole = proxy\nserver = edge\nnext_hop = c\n"
                   "[element f]\nrole = proxy\nserver = edge\nnext_hop = c\n" CORE UAS
                   "[link a-e]\ndelay = 0.01\n[link b-f]\ndelay = 0.02\n",
                   "22", "link b-f.delay", "differs from [link a-e]");
    /* ... and one written, the other not (the default 5 ms). */
    assert_refused("[source a]\nto = e\n[source b]\nto = f\n"
                   "[element e]\nrole = proxy\nserver = edge\nnext_hop = c\n"
                   "[element f]\nrole = proxy\nserver = edge\nnext_hop = c\n" CORE UAS
                   "[link a-e]\ndelay = 0.01\n",
                   "20", "link a-e.delay", "that no [link A-B] describes");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_errors),
            cmocka_unit_test(test_fanin_written_is_fanin),
            cmocka_unit_test(test_ims_chain_utilisation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

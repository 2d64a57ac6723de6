/*
 * The topology the user writes (src/io/net_topo.c): [element NAME], [source NAME] and [link A-B]
 * sections against independent references.
 *
 * - examples/fanin_topology.ini, examples/fanin.ini written out by hand, gives the run of
 *   `topology = fanin` bit for bit: every estimate, half-width and count of the network and of
 *   every element (only the rows' names differ), under two controls.
 * - examples/ims_chain.ini (six proxies, P-CSCF to the callee's P-CSCF, with costs of their
 *   own) at low load: each element's CPU utilisation is the closed form offered x (invite + ack
 *   + bye + n x response), n = 4 at a proxy before a proxy, 3 at the last, 0 at the UAS.
 * - chains of 3 to 7 identical proxies at low load: each proxy more adds its INVITE's and a
 *   response's cost and its link's delay twice to the mean setup delay.
 * - the built-in tandem written out as three proxies gives its run bit for bit.
 * - links per (from, to) on fan-ins written by hand at low load: a link 5 ms longer adds 2 x
 *   5 ms to its source's calls' mean setup delay and nothing to the others'; 14 distinct new
 *   delays (7 past the FIFO classes, on the heap) each add twice theirs.
 * - sources of different rates: each offers its own, its first proxy busy rate x per-call cost.
 * - osn_net_check checks a written chain's mids.
 * - a fan-in of 1,000 edges written out (5,004 keys, 2,002 elements) gives the run of
 *   `topology = fanin`, `edges = 1000` bit for bit; more sources than net.edges allows
 *   (16,385) are refused at the first one too many.
 * - a written fan-in of 16,384 edges loads in less than 8 s of CPU (36.6 s with names found
 *   by scans; 0.42 s with the index).
 * - the element order's decoder gives each shape's order written by hand.
 * - Bad descriptions are refused with the file:line and the key: an unknown next hop, a cycle,
 *   a proxy without next hop, a source without `to`, net.topology beside the elements, a link
 *   the graph has not (or not named A-B), a server section that does not exist, a shape the hop
 *   path does not carry (a fan-out past the first proxy, a chain longer than a path's 8 hops).
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
#include <time.h>
#include <unistd.h>

#include "net_run_util.h"
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

/* Frees a scenario load() returned. */

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
        unload(b);
        unload(w);
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
    assert_int_equal(s->cfg.mids, 4);
    /* The [link A-B] between proxies are the trunk; the rest keep their 5 ms. */
    assert_true(s->cfg.trunk.delay == 0.002);
    assert_true(s->cfg.access.delay == 0.005 && s->cfg.uas_link.delay == 0.005);
    struct osn_net_result r;
    run(&s->cfg, &r);
    static const char *const names[] = {"callers", "pcscf",   "scscf",   "as",
                                        "icscf",   "scscf_t", "pcscf_t", "callee"};
    assert_int_equal(r.nelem, 8);
    for (int i = 0; i < 8; i++)
        assert_string_equal(r.elem_name[i], names[i]);
    /* The costs as the file writes them (an independent copy of its numbers, not the cfg's). */
    static const struct {
        int elem, nresp;
        double invite, resp, ack, bye;
    } want[] = {
            {1, 4, 0.0002, 0.00005, 0.0001, 0.0001},   /* pcscf */
            {2, 4, 0.0008, 0.0002, 0.0003, 0.0004},    /* scscf */
            {3, 4, 0.0005, 0.0001, 0.0002, 0.0002},    /* as */
            {4, 4, 0.0003, 0.00005, 0.00005, 0.00005}, /* icscf */
            {5, 4, 0.0008, 0.0002, 0.0003, 0.0004},    /* scscf_t: [server scscf] */
            {6, 3, 0.0002, 0.00005, 0.0001, 0.0001},   /* pcscf_t: [server pcscf], the core */
    };
    double offered = r.est[OSN_NET_OFFERED].value;
    assert_true(fabs(offered - 100) < 10);
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        double cost = want[k].invite + want[k].ack + want[k].bye + want[k].nresp * want[k].resp;
        double util = r.elem[want[k].elem][OSN_NET_E_UTIL].value;
        /* The offered calls, each one's work: 2 % (the window's calls against its BYEs). */
        if (!(fabs(util / (offered * cost) - 1) < 0.02))
            fprintf(stderr, "%s: util %g, closed form %g\n", names[want[k].elem], util,
                    offered * cost);
        assert_true(fabs(util / (offered * cost) - 1) < 0.02);
    }
    /* The UAS's costs are [server uas]'s defaults: its closed form from the configuration. */
    double uas = r.elem[7][OSN_NET_E_UTIL].value;
    assert_true(fabs(uas / (offered * per_call(&s->cfg.uas, 0)) - 1) < 0.02);
    /* The S-CSCFs are mid proxies with their own costs: their capacity is their own. */
    assert_true(fabs(r.elem[2][OSN_NET_E_CAPACITY].value -
                     1 / (0.0008 + 0.0003 + 0.0004 + 4 * 0.0002)) < 1e-9);
    assert_true(fabs(r.elem[4][OSN_NET_E_CAPACITY].value -
                     1 / (0.0003 + 0.00005 + 0.00005 + 4 * 0.00005)) < 1e-9);
    osn_net_result_release(&r);
    unload(s);
}

/* A new temporary file open for writing, its name in path. */
static FILE *temp_file(char path[64])
{
    snprintf(path, 64, "/tmp/osn_test_topo_XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    return f;
}

/* Writes a scenario to a temporary file; its path into path. */
static void write_text(const char *text, char *path, size_t pathsize)
{
    assert_true(pathsize >= 64);
    FILE *f = temp_file(path);
    assert_true(fputs(text, f) >= 0);
    assert_int_equal(fclose(f), 0);
}

/* A chain of n proxies p1 .. pn of [server px], links of `delay` between them, into the UAS:
 * its run at `rate` calls/s. */
static void run_chain(int n, double rate, double delay, const char *const *sets, int nsets,
                      struct osn_net_result *r)
{
    char text[4096], path[64], err[512] = "";
    size_t used = (size_t)snprintf(text, sizeof text,
                                   "[source]\nrate = %g\nhold = 1\n[source a]\nto = p1\n"
                                   "[server px]\ncost_invite = 0.0004\ncost_response = 0.0001\n"
                                   "cost_ack = 0.0001\ncost_bye = 0.0001\n",
                                   rate);
    for (int i = 1; i <= n; i++) {
        char next[8];
        snprintf(next, sizeof next, i < n ? "p%d" : "u", i + 1);
        used += (size_t)snprintf(text + used, sizeof text - used,
                                 "[element p%d]\nrole = proxy\nserver = px\nnext_hop = %s\n", i,
                                 next);
        if (i < n)
            used += (size_t)snprintf(text + used, sizeof text - used,
                                     "[link p%d-p%d]\ndelay = %g\n", i, i + 1, delay);
    }
    snprintf(text + used, sizeof text - used, "[element u]\nrole = uas\n");
    write_text(text, path, sizeof path);
    int rc;
    struct osn_net_scenario *s = load(path, sets, nsets, err, sizeof err, &rc);
    unlink(path);
    if (rc)
        fprintf(stderr, "%s\n", err);
    assert_int_equal(rc, 0);
    assert_int_equal(s->cfg.topology, n == 2 ? OSN_NET_COLLAPSE : OSN_NET_TANDEM);
    run(&s->cfg, r);
    assert_int_equal(r->nelem, n + 2);
    unload(s);
}

/*
 * Chains of 3 to 7 identical proxies at low load (2 calls/s, each proxy busy 0.2 % of the
 * time): a call's INVITE crosses each proxy and the link after it, and its 180 comes back the
 * same way, so each proxy more adds its INVITE's cost, a 180's cost and the link's delay twice
 * to the setup delay (INVITE -> 180 at the UAC): 0.4 + 0.1 + 2 x 3 ms = 6.5 ms. The source, the
 * UAS and their links are the same in every chain, so the differences of the mean setup delays
 * are that, times the proxies added, up to the little queueing the other calls' messages make.
 */
static void test_chain_setup_delay_per_hop(void **state)
{
    (void)state;
    const char *sets[] = {"net.time=100", "net.warmup=5", "net.replications=2"};
    const double per_hop = 0.0004 + 0.0001 + 2 * 0.003;
    struct osn_net_result r3;
    run_chain(3, 2, 0.003, sets, 3, &r3);
    double d3 = r3.est[OSN_NET_SETUP_MEAN].value;
    for (int n = 4; n <= 7; n++) {
        struct osn_net_result r;
        run_chain(n, 2, 0.003, sets, 3, &r);
        double grew = r.est[OSN_NET_SETUP_MEAN].value - d3;
        if (!(fabs(grew - (n - 3) * per_hop) < 1e-5))
            fprintf(stderr, "%d proxies: setup delay %g s, %g more than 3 proxies' (want %g)\n", n,
                    r.est[OSN_NET_SETUP_MEAN].value, grew, (n - 3) * per_hop);
        assert_true(fabs(grew - (n - 3) * per_hop) < 1e-5);
        /* every call good; each proxy but the last sees 4 responses a call, the last 3 */
        assert_true(r.est[OSN_NET_FAILED].value == 0);
        for (int i = 1; i <= n; i++) {
            double resp = r.elem[i][OSN_NET_E_PROC + OSN_NET_K_RESP].value;
            double inv = r.elem[i][OSN_NET_E_PROC + OSN_NET_K_INVITE].value;
            assert_true(fabs(resp / inv - (i < n ? 4 : 3)) < 0.05);
        }
        osn_net_result_release(&r);
    }
    osn_net_result_release(&r3);
}

/* Writes a written fan-in of e sources, each to a first proxy of its own over a link of `delay`
 * s, into the core c and the UAS u, to a new temporary file whose name goes to path. */
static void write_fanin(char path[64], int e, double delay)
{
    FILE *f = temp_file(path);
    for (int i = 0; i < e; i++)
        fprintf(f, "[source s%d]\nto = e%d\n[link s%d-e%d]\ndelay = %g\n", i, i, i, i, delay);
    for (int i = 0; i < e; i++)
        fprintf(f, "[element e%d]\nrole = proxy\nserver = edge\nnext_hop = c\n", i);
    fputs("[element c]\nrole = proxy\nserver = core\nnext_hop = u\n[element u]\nrole = uas\n", f);
    assert_int_equal(fclose(f), 0);
}

/*
 * A fan-in of 1,000 edges written out by hand, as a script writes it: [source sI] (to = eI),
 * [link sI-eI] (delay), [element eI] (proxy, server edge, next hop c) for I = 0 .. 999, then
 * [element c] (the core) and [element u] (the UAS): 5,004 keys (scripts/fanin_written.sh writes
 * the same file). Its run is the run of
 * `topology = fanin`, `edges = 1000` with the same access delay, bit for bit: every estimate,
 * half-width and count of the network and of each of the 2,002 elements, whose rows carry the
 * file's names. Loading it must take less than 10 s (0.05 s of CPU in osn sim; docs/scale.md).
 * With 128 named sections at most, as before, the load is refused.
 */
static void test_fanin_1000_written(void **state)
{
    (void)state;
    enum { E = 1000 };
    const char *sets[] = {"net.time=0.5", "net.warmup=0.5", "net.replications=2",
                          "control.kind=rate", "source.rate=1000"};
    char path[64], err[512] = "";
    int rc;

    write_fanin(path, E, 0.007);
    time_t t0 = time(NULL);
    struct osn_net_scenario *w = load(path, sets, 5, err, sizeof err, &rc);
    if (rc)
        fprintf(stderr, "%s\n", err);
    assert_int_equal(rc, 0);
    assert_true(difftime(time(NULL), t0) < 10);
    assert_int_equal(w->ini.nkeys, 5 * E + 4 + 5); /* the file's and the overrides */
    assert_int_equal(w->cfg.topology, OSN_NET_FANIN);
    assert_int_equal(w->cfg.edges, E);
    assert_int_equal(w->cfg.named, 2 * E + 2);
    assert_true(w->cfg.access.delay == 0.007);

    unlink(path);
    write_text("[net]\ntopology = fanin\nedges = 1000\n[link access]\ndelay = 0.007\n", path,
               sizeof path);
    struct osn_net_scenario *b = load(path, sets, 5, err, sizeof err, &rc);
    unlink(path);
    assert_int_equal(rc, 0);
    struct osn_net_result rb, rw;
    run(&b->cfg, &rb);
    run(&w->cfg, &rw);
    assert_same(&rb, &rw);
    assert_int_equal(rw.nelem, 2 * E + 2);
    assert_true(rb.est[OSN_NET_GOODPUT].value > 0 && rb.messages > 0);
    char want[16];
    for (int i = 0; i < E; i++) {
        snprintf(want, sizeof want, "s%d", i);
        assert_string_equal(rw.elem_name[i], want);
        snprintf(want, sizeof want, "e%d", i);
        assert_string_equal(rw.elem_name[E + i], want);
    }
    assert_string_equal(rw.elem_name[2 * E], "c");
    assert_string_equal(rw.elem_name[2 * E + 1], "u");
    assert_string_equal(rb.elem_name[2 * E], "core");
    osn_net_result_release(&rb);
    osn_net_result_release(&rw);
    unload(b);
    unload(w);
}

/* More sources than net.edges allows (16,384): refused at the first one too many, naming its key
 * and line, before the graph is searched. */
static void test_too_many_sources(void **state)
{
    (void)state;
    char path[64], err[512] = "", want[192];
    int rc;

    FILE *f = temp_file(path);
    for (int i = 0; i <= OSN_NET_MAX_EDGES; i++)
        fprintf(f, "[source s%d]\nto = e\n", i);
    fputs("[element e]\nrole = proxy\nserver = edge\nnext_hop = u\n[element u]\nrole = uas\n", f);
    assert_int_equal(fclose(f), 0);
    struct osn_net_scenario *s = load(path, NULL, 0, err, sizeof err, &rc);
    unload(s);
    assert_int_equal(rc, OSN_ECONFIG);
    snprintf(want, sizeof want, "%s:%d: key 'source s16384.to' = 'e': more than 16384 sources",
             path, 2 * OSN_NET_MAX_EDGES + 2);
    if (!strstr(err, want))
        fprintf(stderr, "want '%s' in: %s\n", want, err);
    assert_non_null(strstr(err, want));
    unlink(path);
}

/* The built-in tandem (edge, mid, core) written out as a chain of three proxies is the same run
 * bit for bit, under rate control. */
static void test_tandem_written_is_tandem(void **state)
{
    (void)state;
    const char *sets[] = {"net.time=3", "net.warmup=2", "net.replications=2", "control.kind=rate",
                          "source.rate=500"};
    const char *text = "[source a]\nto = e\n"
                       "[element e]\nrole = proxy\nserver = edge\nnext_hop = m\n"
                       "[element m]\nrole = proxy\nserver = edge\nnext_hop = c\n"
                       "[element c]\nrole = proxy\nserver = core\nnext_hop = u\n"
                       "[element u]\nrole = uas\n";
    char path[64], err[512] = "";
    int rc;
    write_text(text, path, sizeof path);
    struct osn_net_scenario *w = load(path, sets, 5, err, sizeof err, &rc);
    unlink(path);
    assert_int_equal(rc, 0);
    assert_int_equal(w->cfg.topology, OSN_NET_TANDEM);
    assert_int_equal(w->cfg.mids, 1);
    write_text("[net]\ntopology = tandem\n", path, sizeof path);
    struct osn_net_scenario *b = load(path, sets, 5, err, sizeof err, &rc);
    unlink(path);
    assert_int_equal(rc, 0);
    struct osn_net_result rb, rw;
    run(&b->cfg, &rb);
    run(&w->cfg, &rw);
    assert_same(&rb, &rw);
    assert_true(rb.est[OSN_NET_CORE_UTIL].value > 0.5); /* a load that exercises the control */
    osn_net_result_release(&rb);
    osn_net_result_release(&rw);
    unload(b);
    unload(w);
}

/* A scenario written to a temporary file, loaded: the error and its message. */
static int load_topo_text(const char *text, char *err, size_t errsize, char *path, size_t pathsize)
{
    write_text(text, path, pathsize);
    int rc;
    struct osn_net_scenario *s = load(path, NULL, 0, err, errsize, &rc);
    unload(s);
    unlink(path);
    return rc;
}

static void assert_refused_at(const char *text, const char *where, const char *key, const char *why)
{
    char err[1024] = "", path[64], at[96];
    int rc = load_topo_text(text, err, sizeof err, path, sizeof path);
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
    assert_int_equal(load_topo_text(SRC CHAIN CORE UAS, err, sizeof err, path, sizeof path), 0);
    assert_refused_at(SRC "[element e]\nrole = proxy\nserver = edge\nnext_hop = x\n" CORE UAS, "6",
                      "element e.next_hop", "next hop 'x' is not an [element NAME]");
    assert_refused_at(SRC CHAIN "[element c]\nrole = proxy\nserver = core\nnext_hop = e\n" UAS,
                      "10", "element c.next_hop", "a cycle");
    assert_refused_at(SRC CHAIN "[element c]\nrole = proxy\nserver = core\n" UAS, "8",
                      "element c.role", "has no next_hop");
    assert_refused_at("[source a]\nrate = 5\n" CHAIN CORE UAS, "2", "source a.rate", "needs `to`");
    assert_refused_at("[source a]\nto = nobody\n" CHAIN CORE UAS, "2", "source a.to",
                      "'nobody' is not an [element NAME]");
    assert_refused_at("[net]\ntopology = fanin\n" SRC CHAIN CORE UAS, "2", "net.topology",
                      "leave net.topology out");
    assert_refused_at(SRC CHAIN CORE UAS "[link a-c]\ndelay = 0.01\n", "14", "link a-c.delay",
                      "not a link of the graph");
    assert_refused_at(SRC "[element e]\nrole = proxy\nserver = mine\nnext_hop = c\n" CORE UAS, "5",
                      "element e.server", "no [server mine] section");
    /* A fan-out past the first proxy: the last proxy of a chain forwards to two. */
    assert_refused_at(SRC CHAIN "[element c]\nrole = proxy\nserver = core\nnext_hop = d\n"
                                "[element d]\nrole = proxy\nserver = core\nnext_hop = u, f\n"
                                "[element f]\nrole = proxy\nserver = core\nnext_hop = u\n" UAS,
                      "14", "element d.next_hop", "a core must forward to the UAS alone");
    /* A chain of 8 proxies (e, p2 .. p8): the path has 8 hops at most. */
    assert_refused_at(SRC "[element e]\nrole = proxy\nserver = edge\nnext_hop = p2\n"
                          "[element p2]\nrole = proxy\nserver = edge\nnext_hop = p3\n"
                          "[element p3]\nrole = proxy\nserver = edge\nnext_hop = p4\n"
                          "[element p4]\nrole = proxy\nserver = edge\nnext_hop = p5\n"
                          "[element p5]\nrole = proxy\nserver = edge\nnext_hop = p6\n"
                          "[element p6]\nrole = proxy\nserver = edge\nnext_hop = p7\n"
                          "[element p7]\nrole = proxy\nserver = edge\nnext_hop = p8\n"
                          "[element p8]\nrole = proxy\nserver = core\nnext_hop = u\n" UAS,
                      "30", "element p7.next_hop", "a chain of more than 7 proxies");
    assert_refused_at(SRC CHAIN CORE UAS "[element v]\nrole = uas\n", "14", "element v.role",
                      "no call of this shape reaches");
    /* A link named otherwise than A-B: the message says the form. */
    assert_refused_at(SRC CHAIN CORE UAS "[link e_c]\ndelay = 0.01\n", "14", "link e_c.delay",
                      "a link is named [link A-B]");
}

/* A fanin written by hand: n sources s0.. each into a proxy e0.. of its own ([server edge]),
 * into one core c ([server core]) and the UAS, at `rate` calls/s each; source i's access link
 * has access[i] s more than the default 5 ms, edge i's link into the core trunk[i] more (a
 * [link A-B] written only where that is not 0). Its run into r. */
static void run_fanin(int n, double rate, const double *access, const double *trunk,
                      struct osn_net_result *r)
{
    const char *sets[] = {"net.time=200", "net.warmup=5", "net.replications=4"};
    char text[8192], path[64], err[512] = "";
    size_t used = (size_t)snprintf(text, sizeof text, "[source]\nhold = 1\n");
    for (int i = 0; i < n; i++) {
        used += (size_t)snprintf(text + used, sizeof text - used,
                                 "[source s%d]\nto = e%d\nrate = %g\n"
                                 "[element e%d]\nrole = proxy\nserver = edge\nnext_hop = c\n",
                                 i, i, rate, i);
        if (access[i] != 0)
            used += (size_t)snprintf(text + used, sizeof text - used,
                                     "[link s%d-e%d]\ndelay = %.17g\n", i, i, 0.005 + access[i]);
        if (trunk[i] != 0)
            used += (size_t)snprintf(text + used, sizeof text - used,
                                     "[link e%d-c]\ndelay = %.17g\n", i, 0.005 + trunk[i]);
    }
    snprintf(text + used, sizeof text - used, CORE UAS);
    write_text(text, path, sizeof path);
    int rc;
    struct osn_net_scenario *s = load(path, sets, 3, err, sizeof err, &rc);
    unlink(path);
    if (rc)
        fprintf(stderr, "%s\n", err);
    assert_int_equal(rc, 0);
    assert_int_equal(s->cfg.topology, OSN_NET_FANIN);
    run(&s->cfg, r);
    assert_int_equal(r->nelem, 2 * n + 2);
    unload(s);
}

/* Source i's mean setup delay in run a less in run b, within tol: tol is 3 times the two
 * half-widths (at 2 calls/s the servers are busy well under 1 % of the time, so a setup delay
 * is its links' delays and its messages' costs up to the rare wait behind another call's
 * message: the half-widths are that wait's spread), and at least 1 us. */
static void assert_setup_grew(const struct osn_net_result *a, const struct osn_net_result *b, int i,
                              double want)
{
    const struct osn_net_est *x = &a->elem[i][OSN_NET_E_SRC_SETUP];
    const struct osn_net_est *y = &b->elem[i][OSN_NET_E_SRC_SETUP];
    double tol = fmax(3 * (x->hw + y->hw), 1e-6);
    if (!(fabs(x->value - y->value - want) < tol))
        fprintf(stderr, "source %d: setup %g +- %g against %g +- %g: grew %g, want %g +- %g\n", i,
                x->value, x->hw, y->value, y->hw, x->value - y->value, want, tol);
    assert_true(x->value > 0 && y->value > 0);
    assert_true(fabs(x->value - y->value - want) < tol);
}

/*
 * Links per (from, to): a fanin of 3 written by hand where edge 2's link into the core is 5 ms
 * longer than the others'. Source 2's calls cross it twice before their 180 (the INVITE down,
 * the 180 back), so their mean setup delay is 2 x 5 ms more than in the same fanin with every
 * link alike, and sources 0 and 1's are unchanged.
 */
static void test_link_own_delay(void **state)
{
    (void)state;
    const double none[3] = {0, 0, 0}, trunk[3] = {0, 0, 0.005};
    struct osn_net_result same, own;
    run_fanin(3, 2, none, none, &same);
    run_fanin(3, 2, none, trunk, &own);
    assert_setup_grew(&own, &same, 0, 0);
    assert_setup_grew(&own, &same, 1, 0);
    assert_setup_grew(&own, &same, 2, 2 * 0.005);
    /* the sources' setup delays are the network's over their calls */
    double sum = 0, n = 0;
    for (int i = 0; i < 3; i++) {
        double calls = own.elem[i][OSN_NET_E_SRC_GOODPUT].value;
        sum += calls * own.elem[i][OSN_NET_E_SRC_SETUP].value, n += calls;
    }
    assert_true(fabs(sum / n / own.est[OSN_NET_SETUP_MEAN].value - 1) < 0.01);
    osn_net_result_release(&same);
    osn_net_result_release(&own);
}

/*
 * Links past the FIFO timer classes: 8 sources whose access links are each 1 ms longer than
 * the one before, and whose edges' links into the core are each 0.3 ms longer. The SIP timers
 * take 8 of the 16 FIFO classes (T1 .. 64 T1 and T4: T2 is 8 T1, Timer D 64 T1) and the
 * links' 5 ms one, so 7 of the 14 new delays go to the event heap (docs/scale.md, rule 3).
 * Each source's mean setup delay is 2 x its two links' extra more than with every link alike,
 * FIFO or heap.
 */
static void test_link_own_heap(void **state)
{
    (void)state;
    double none[8] = {0}, access[8], trunk[8];
    for (int i = 0; i < 8; i++)
        access[i] = 0.001 * i, trunk[i] = 0.0003 * i;
    struct osn_net_result same, own;
    run_fanin(8, 2, none, none, &same);
    run_fanin(8, 2, access, trunk, &own);
    for (int i = 0; i < 8; i++)
        assert_setup_grew(&own, &same, i, 2 * (access[i] + trunk[i]));
    osn_net_result_release(&same);
    osn_net_result_release(&own);
}

/*
 * Sources of different rates: a fanin of 3 written by hand, its sources offering 20, 40 and 80
 * calls/s ([source NAME] rate). Each source offers its own rate, and each first proxy is busy
 * its rate x its per-call cost of the time (INVITE, ACK, BYE and 4 responses at [server edge]'s
 * costs, the closed form of test_ims_chain_utilisation), within 2 %: over 4 x 400 s the
 * smallest source starts 32,000 calls, whose count's relative spread is 0.6 %.
 */
static void test_source_rates(void **state)
{
    (void)state;
    const char *sets[] = {"net.time=400", "net.warmup=5", "net.replications=4"};
    const double rate[3] = {20, 40, 80};
    char text[2048], path[64], err[512] = "";
    size_t used = (size_t)snprintf(text, sizeof text, "[source]\nhold = 1\n");
    for (int i = 0; i < 3; i++)
        used += (size_t)snprintf(text + used, sizeof text - used,
                                 "[source s%d]\nto = e%d\nrate = %g\n"
                                 "[element e%d]\nrole = proxy\nserver = edge\nnext_hop = c\n",
                                 i, i, rate[i], i);
    snprintf(text + used, sizeof text - used, CORE UAS);
    write_text(text, path, sizeof path);
    int rc;
    struct osn_net_scenario *s = load(path, sets, 3, err, sizeof err, &rc);
    unlink(path);
    if (rc)
        fprintf(stderr, "%s\n", err);
    assert_int_equal(rc, 0);
    struct osn_net_result r;
    run(&s->cfg, &r);
    for (int i = 0; i < 3; i++) {
        double offered = r.elem[i][OSN_NET_E_SRC_OFFERED].value;
        double util = r.elem[3 + i][OSN_NET_E_UTIL].value;
        double want = rate[i] * per_call(&s->cfg.edge, 4);
        if (!(fabs(offered / rate[i] - 1) < 0.02 && fabs(util / want - 1) < 0.02))
            fprintf(stderr, "source %d: offered %g (rate %g), its proxy busy %g (want %g)\n", i,
                    offered, rate[i], util, want);
        assert_true(fabs(offered / rate[i] - 1) < 0.02);
        assert_true(fabs(util / want - 1) < 0.02);
    }
    osn_net_result_release(&r);
    unload(s);
}

/*
 * First proxies of different costs: a fanin of 3 written by hand, each source at 40 calls/s
 * into a proxy of its own [server NAME] (INVITE 0.2, 0.4, 0.8 ms; the other kinds a quarter of
 * that): each proxy is busy 40 x (invite + ack + bye + 4 responses) of its own costs, within
 * 2 % (16,000 calls a source over 4 x 100 s: 0.8 % spread), and its capacity is its own.
 */
static void test_edge_costs(void **state)
{
    (void)state;
    const char *sets[] = {"net.time=100", "net.warmup=5", "net.replications=4"};
    const double inv[3] = {0.0002, 0.0004, 0.0008};
    char text[4096], path[64], err[512] = "";
    size_t used = (size_t)snprintf(text, sizeof text, "[source]\nhold = 1\n");
    for (int i = 0; i < 3; i++)
        used += (size_t)snprintf(text + used, sizeof text - used,
                                 "[source s%d]\nto = e%d\nrate = 40\n"
                                 "[element e%d]\nrole = proxy\nserver = x%d\nnext_hop = c\n"
                                 "[server x%d]\ncost_invite = %g\ncost_response = %g\n"
                                 "cost_ack = %g\ncost_bye = %g\n",
                                 i, i, i, i, i, inv[i], inv[i] / 4, inv[i] / 4, inv[i] / 4);
    snprintf(text + used, sizeof text - used, CORE UAS);
    write_text(text, path, sizeof path);
    int rc;
    struct osn_net_scenario *s = load(path, sets, 3, err, sizeof err, &rc);
    unlink(path);
    if (rc)
        fprintf(stderr, "%s\n", err);
    assert_int_equal(rc, 0);
    struct osn_net_result r;
    run(&s->cfg, &r);
    for (int i = 0; i < 3; i++) {
        double per = inv[i] + 2 * inv[i] / 4 + 4 * inv[i] / 4; /* invite, ack, bye, 4 responses */
        double util = r.elem[3 + i][OSN_NET_E_UTIL].value;
        if (!(fabs(util / (40 * per) - 1) < 0.02))
            fprintf(stderr, "proxy %d: busy %g, want %g\n", i, util, 40 * per);
        assert_true(fabs(util / (40 * per) - 1) < 0.02);
        assert_true(fabs(r.elem[3 + i][OSN_NET_E_CAPACITY].value * per - 1) < 1e-9);
    }
    osn_net_result_release(&r);
    unload(s);
}

/* osn_net_check checks a written chain's mids, which have costs of their own (the file's
 * schema checks them as it reads them; a configuration made in C is checked here): a mid with
 * no buffer is blamed on its element's `server` key. */
static void test_check_mids(void **state)
{
    (void)state;
    const char *text = "[source a]\nto = e\n"
                       "[element e]\nrole = proxy\nserver = edge\nnext_hop = m\n"
                       "[element m]\nrole = proxy\nserver = edge\nnext_hop = c\n" CORE UAS;
    char path[64], err[512] = "";
    int rc;
    write_text(text, path, sizeof path);
    struct osn_net_scenario *s = load(path, NULL, 0, err, sizeof err, &rc);
    unlink(path);
    assert_int_equal(rc, 0);
    assert_true(s->cfg.mid_own && s->cfg.mids == 1);
    const char *key = NULL;
    assert_int_equal(osn_net_check(&s->cfg, &key, err, sizeof err), 0);
    s->cfg.mid[0].buffer = 0;
    assert_int_equal(osn_net_check(&s->cfg, &key, err, sizeof err), OSN_EINVAL);
    assert_string_equal(key, "element m.server");
    assert_non_null(strstr(err, "buffer"));
    unload(s);
}

/*
 * A written fan-in past the bounds the configuration once had by value: 130 sources, each over
 * a link of its own (delay 6, 7, 8 or 9 ms, none the place's 5 ms: 130 links of their own, more
 * than the 128 once kept), of a rate of its own (0.5 or 1 call/s: 130 shares, more than 64)
 * into a first proxy of costs of its own (every third [server pa], the others [server pb]: 130,
 * more than 64). Its run is, bit for bit, the built-in `topology = fanin`, `edges = 130` given
 * the same by hand: each source's share, each edge's costs ([server core]'s defaults under the
 * section's keys, a CANCEL costing a BYE), each link between source i and edge i (the
 * simulator's order: sources, then edges). And the figures are what the costs say: each class
 * of first proxies is busy its sources' calls x its per-call cost, within 3 % (about 4,000
 * calls a class).
 */
static void test_fanin_past_bounds(void **state)
{
    (void)state;
    enum { E = 130 };
    const char *sets[] = {"net.time=20", "net.warmup=3", "net.replications=2", "control.kind=rate"};
    const double inv[2] = {0.0004, 0.0008}; /* [server pa], [server pb]: INVITE; the rest / 4 */
    char path[64], err[512] = "";
    double rate[E], total = 0;
    int rc;

    FILE *f = temp_file(path);
    fputs("[source]\nhold = 1\n", f);
    for (int k = 0; k < 2; k++)
        fprintf(f,
                "[server p%c]\ncost_invite = %g\ncost_response = %g\ncost_ack = %g\n"
                "cost_bye = %g\n",
                "ab"[k], inv[k], inv[k] / 4, inv[k] / 4, inv[k] / 4);
    for (int i = 0; i < E; i++) {
        rate[i] = i % 2 ? 1.0 : 0.5;
        total += rate[i];
        fprintf(f, "[source s%d]\nto = e%d\nrate = %g\n[link s%d-e%d]\ndelay = %g\n", i, i, rate[i],
                i, i, 0.006 + 0.001 * (i % 4));
        fprintf(f, "[element e%d]\nrole = proxy\nserver = p%c\nnext_hop = c\n", i,
                i % 3 ? 'b' : 'a');
    }
    fputs(CORE UAS, f);
    assert_int_equal(fclose(f), 0);
    struct osn_net_scenario *w = load(path, sets, 4, err, sizeof err, &rc);
    unlink(path);
    if (rc)
        fprintf(stderr, "%s\n", err);
    assert_int_equal(rc, 0);
    assert_int_equal(w->cfg.topology, OSN_NET_FANIN);
    assert_int_equal(w->cfg.edges, E);
    assert_int_equal(w->cfg.nlinks, E);
    assert_int_equal(w->cfg.src.nshares, E);
    assert_int_equal(w->cfg.edges_own, E);

    /* The same network given by hand over the built-in fanin. */
    write_text("[net]\ntopology = fanin\nedges = 130\n[source]\nhold = 1\n", path, sizeof path);
    struct osn_net_scenario *b = load(path, sets, 4, err, sizeof err, &rc);
    unlink(path);
    assert_int_equal(rc, 0);
    struct osn_net_cfg defaults;
    osn_net_cfg_default(&defaults);
    struct osn_net_server_cfg sv[2], own[E];
    struct osn_net_link_own link[E];
    for (int k = 0; k < 2; k++) {
        sv[k] = defaults.core;
        sv[k].cost[OSN_NET_K_INVITE] = inv[k];
        sv[k].cost[OSN_NET_K_RESP] = sv[k].cost[OSN_NET_K_ACK] = sv[k].cost[OSN_NET_K_BYE] =
                sv[k].cost[OSN_NET_K_CANCEL] = inv[k] / 4;
    }
    for (int i = 0; i < E; i++) {
        own[i] = sv[i % 3 ? 1 : 0];
        link[i] = (struct osn_net_link_own){.from = (uint16_t)i,
                                            .to = (uint16_t)(E + i),
                                            .link = {.delay = 0.006 + 0.001 * (i % 4)}};
    }
    struct osn_net_cfg c = b->cfg; /* borrows b's arrays (none) and ours */
    c.src.rate = total;
    c.src.nshares = E;
    c.src.share = rate;
    c.edges_own = E;
    c.edge_own = own;
    c.edge = own[0]; /* `edge` is the first proxy's, as a written topology's */
    c.nlinks = E;
    c.link = link;
    char msg[256];
    assert_int_equal(osn_net_check(&c, NULL, msg, sizeof msg), 0);
    struct osn_net_result rb, rw;
    run(&c, &rb);
    run(&w->cfg, &rw);
    assert_same(&rb, &rw);
    assert_string_equal(rw.elem_name[E - 1], "s129");
    assert_string_equal(rw.elem_name[2 * E - 1], "e129");

    /* Each class of first proxies busy its calls x its own per-call cost. */
    double busy[2] = {0}, want[2] = {0};
    for (int i = 0; i < E; i++) {
        int k = i % 3 ? 1 : 0;
        busy[k] += rw.elem[E + i][OSN_NET_E_UTIL].value;
        want[k] += rw.elem[i][OSN_NET_E_SRC_OFFERED].value * per_call(&sv[k], 4);
    }
    for (int k = 0; k < 2; k++) {
        if (!(fabs(busy[k] / want[k] - 1) < 0.03))
            fprintf(stderr, "class %d: busy %g, want %g\n", k, busy[k], want[k]);
        assert_true(fabs(busy[k] / want[k] - 1) < 0.03);
    }
    assert_true(rw.est[OSN_NET_GOODPUT].value > 0.98 * rw.est[OSN_NET_OFFERED].value);
    osn_net_result_release(&rb);
    osn_net_result_release(&rw);
    unload(b);
    unload(w);
}

/*
 * Loading is about linear in the file: a written fan-in of 16,384 edges (net.edges' bound,
 * 81,924 keys, scripts/fanin_written.sh's file) loads in less than 8 s of CPU. It took 36.6 s
 * when each name was found by a scan of every section (docs/scale.md); 0.42 s since, about 2 s
 * under AddressSanitizer.
 */
static void test_fanin_16384_loads(void **state)
{
    (void)state;
    enum { E = OSN_NET_MAX_EDGES };
    const char *sets[] = {"net.time=0.001", "net.warmup=0", "net.replications=1"};
    char path[64], err[512] = "";
    int rc;

    write_fanin(path, E, 0.005);
    clock_t t0 = clock();
    struct osn_net_scenario *w = load(path, sets, 3, err, sizeof err, &rc);
    double cpu = (double)(clock() - t0) / CLOCKS_PER_SEC;
    unlink(path);
    if (rc)
        fprintf(stderr, "%s\n", err);
    assert_int_equal(rc, 0);
    fprintf(stderr, "16,384 edges written: loaded in %.2f s of CPU\n", cpu);
    assert_true(cpu < 8);
    assert_int_equal(w->ini.nkeys, 5 * E + 4 + 3);
    assert_int_equal(w->cfg.edges, E);
    assert_int_equal(w->cfg.named, 2 * E + 2);
    assert_string_equal(w->cfg.elem_names[2 * E - 1], "e16383");
    unload(w);
}

/* The element order's one decoder (osn_net_elem_role, osn_net_elem_index) against the order
 * written out by hand for each shape: a fanout of 3 edges and 2 cores, a tandem of 3 mids, a
 * collapse; indices outside the network are -1. */
static void test_elem_roles(void **state)
{
    (void)state;
    enum {
        S = OSN_NET_ROLE_SOURCE,
        D = OSN_NET_ROLE_EDGE,
        M = OSN_NET_ROLE_MID,
        C = OSN_NET_ROLE_CORE,
        U = OSN_NET_ROLE_UAS
    };
    static const struct {
        enum osn_net_topology topology;
        int edges, cores, mids, n;
        int role[12], k[12];
    } shapes[] = {
            {OSN_NET_FANOUT, 3, 2, 1, 9, {S, S, S, D, D, D, C, C, U}, {0, 1, 2, 0, 1, 2, 0, 1, 0}},
            {OSN_NET_TANDEM, 1, 1, 3, 7, {S, D, M, M, M, C, U}, {0, 0, 0, 1, 2, 0, 0}},
            {OSN_NET_COLLAPSE, 1, 1, 1, 4, {S, D, C, U}, {0, 0, 0, 0}},
    };
    for (size_t t = 0; t < sizeof shapes / sizeof shapes[0]; t++) {
        struct osn_net_cfg c;
        osn_net_cfg_default(&c);
        c.topology = shapes[t].topology;
        c.edges = shapes[t].edges, c.cores = shapes[t].cores, c.mids = shapes[t].mids;
        for (int i = 0; i < shapes[t].n; i++) {
            int k = -1;
            assert_int_equal(osn_net_elem_role(&c, i, &k), shapes[t].role[i]);
            assert_int_equal(k, shapes[t].k[i]);
            assert_int_equal(osn_net_elem_index(&c, shapes[t].role[i], k), i);
        }
        assert_int_equal(osn_net_elem_role(&c, shapes[t].n, NULL), -1);
        assert_int_equal(osn_net_elem_role(&c, -1, NULL), -1);
        assert_int_equal(osn_net_elem_index(&c, OSN_NET_ROLE_CORE, shapes[t].cores), -1);
        assert_int_equal(osn_net_role_count(&c, OSN_NET_ROLE_MID),
                         c.topology == OSN_NET_TANDEM ? c.mids : 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_errors),
            cmocka_unit_test(test_fanin_written_is_fanin),
            cmocka_unit_test(test_ims_chain_utilisation),
            cmocka_unit_test(test_chain_setup_delay_per_hop),
            cmocka_unit_test(test_tandem_written_is_tandem),
            cmocka_unit_test(test_link_own_delay),
            cmocka_unit_test(test_link_own_heap),
            cmocka_unit_test(test_source_rates),
            cmocka_unit_test(test_check_mids),
            cmocka_unit_test(test_edge_costs),
            cmocka_unit_test(test_fanin_1000_written),
            cmocka_unit_test(test_too_many_sources),
            cmocka_unit_test(test_fanin_past_bounds),
            cmocka_unit_test(test_fanin_16384_loads),
            cmocka_unit_test(test_elem_roles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

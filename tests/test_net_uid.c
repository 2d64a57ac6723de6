/*
 * A source's calls are its own (docs/scale.md, "One large run over several cores", slice 2): a
 * call's uid, which its hold, retry, patience and ring draws hash, is numbered by its source
 * alone, so a source offers the same calls whatever the other sources offer.
 *
 * Two runs of a three-edge fan-in differ only in source 0's rate (shares 2:1:1 of 120 calls/s,
 * then 6:1:1 of 240: sources 1 and 2 offer 30 calls/s in both, exactly, as 1/4 and 1/8 are
 * exact). The test runs the replication's loop itself, on the simulator's internal interface
 * (src/sim/net_int.h), and watches source 1's calls from outside the code that numbers them:
 * each first INVITE it sends (its uid, the instant it starts), the 2xx that connects it and the
 * end of its hold time. In both runs source 1 must start the same calls, the same uids at the
 * same instants, and every call connected in both must hold as long, though it connects at
 * another instant (source 0's traffic delays it at the core). With the calls numbered in the
 * order they start network-wide, source 1's uids and holds change with source 0's rate.
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

#include "net_int.h"
#include "osn/des.h"
#include "osn/net.h"

#define MAXCALLS 4096
#define WATCHED  1 /* the source whose calls are compared */

/* Source WATCHED's calls, in the order they started. */
struct calls {
    int n;
    uint64_t uid[MAXCALLS];
    double t0[MAXCALLS];      /* its first INVITE (s) */
    double connect[MAXCALLS]; /* the 2xx that connected it reached the source; NAN: never */
    double hold[MAXCALLS];    /* the end of its hold time less connect; NAN: not seen */
};

static int find(const struct calls *k, uint64_t uid)
{
    for (int i = k->n - 1; i >= 0; i--)
        if (k->uid[i] == uid)
            return i;
    return -1;
}

/* One replication of `cfg`, seed 7, with source WATCHED's calls written into *k. */
static void run_watched(const struct osn_net_cfg *cfg, struct calls *k)
{
    struct net *s = calloc(1, sizeof *s);
    double *tot = calloc((size_t)osn_net_reps_ntot(cfg), sizeof *tot);
    struct osn_rng rng;
    char msg[256] = "";
    assert_non_null(s);
    assert_non_null(tot);
    osn_rng_seed(&rng, 7);
    int err = osn__net_setup(s, cfg, &rng, tot, msg, sizeof msg);
    if (err)
        fprintf(stderr, "setup: %s\n", msg);
    assert_int_equal(err, 0);
    k->n = 0;
    struct osn_des_ev *ev;
    while (!s->err && (ev = osn_des_pop(&s->q)) && s->q.now <= s->t_end) {
        const struct call *c = NULL;
        bool connected = false;
        if (ev->type == EV_LINK) {
            const struct nmsg *nm = OSN_CONTAINER_OF(ev, struct nmsg, ev);
            c = nm->call;
            if (c->src == WATCHED && nm->hop == 0 && nm->m.status == 0 &&
                nm->m.method == OSN_SIP_INVITE && c->uid < ((uint64_t)1 << 48) &&
                find(k, c->uid) < 0) { /* a first attempt's INVITE, first seen */
                assert_true(k->n < MAXCALLS);
                k->uid[k->n] = c->uid;
                k->t0[k->n] = c->uac.t0;
                k->connect[k->n] = k->hold[k->n] = NAN;
                k->n++;
            }
            /* a 2xx of an INVITE reaching the source of a call not yet connected: whether it
             * connects it is read after the step (a connected call holds a reference) */
            connected = c->src == WATCHED && nm->to == WATCHED && nm->m.status >= 200 &&
                        nm->m.status < 300 && nm->m.method == OSN_SIP_INVITE && !c->uac.connected;
        } else if (ev->type == EV_HOLD) {
            c = OSN_CONTAINER_OF(ev, struct call, hold);
            int i = c->src == WATCHED ? find(k, c->uid) : -1;
            if (i >= 0 && !isnan(k->connect[i]))
                k->hold[i] = s->q.now - k->connect[i];
        }
        osn__net_step(s, ev);
        if (connected && c->uac.connected) { /* this response connected it */
            int i = find(k, c->uid);
            if (i >= 0)
                k->connect[i] = s->q.now;
        }
    }
    assert_int_equal(s->err, 0);
    osn__net_teardown(s);
    free(s);
    free(tot);
}

static void fanin3(struct osn_net_cfg *c, double rate, double *share)
{
    osn_net_cfg_default(c);
    c->topology = OSN_NET_FANIN;
    c->edges = 3;
    c->time = 20;
    c->warmup = 0;
    c->replications = 1;
    c->src.rate = rate;
    c->src.hold = 5;
    c->src.nshares = 3;
    c->src.share = share;
}

static void test_source_calls_ignore_other_sources(void **state)
{
    (void)state;
    static struct calls a, b;
    double share_a[3] = {2, 1, 1}, share_b[3] = {6, 1, 1};
    struct osn_net_cfg ca, cb;
    fanin3(&ca, 120, share_a);
    fanin3(&cb, 240, share_b);
    run_watched(&ca, &a);
    run_watched(&cb, &b);
    /* about 30 calls/s for 20 s (Poisson: 600 +- 25) */
    assert_true(a.n > 450 && a.n < 750);
    assert_int_equal(a.n, b.n);
    int held = 0, moved = 0;
    for (int i = 0; i < a.n; i++) {
        assert_true(a.uid[i] == b.uid[i]);
        assert_true(a.t0[i] == b.t0[i]);
        if (isnan(a.hold[i]) || isnan(b.hold[i]))
            continue;
        /* end - connect in each run: the same hold, to the rounding of two subtractions */
        assert_true(fabs(a.hold[i] - b.hold[i]) <= 1e-12 * a.hold[i]);
        held++;
        moved += a.connect[i] != b.connect[i];
    }
    printf("source %d: %d calls, %d held in both runs, %d of them connected at other instants\n",
           WATCHED, a.n, held, moved);
    /* most calls hold within the 20 s (5 s mean), and source 0 moved their connects */
    assert_true(held > a.n / 2);
    assert_true(moved > held / 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_source_calls_ignore_other_sources),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

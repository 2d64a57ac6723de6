/*
 * Benchmark of the SIP transaction layer alone (no network, no event engine): full INVITE
 * exchanges between a client layer and a server layer, driven straight through the state
 * machines. Each exchange is INVITE -> 100 (sent by the server transaction at once) -> 180 ->
 * 200 -> ACK for the 2xx (stray at the server transaction layer: the TU's), then Timers M and L
 * end both transactions; that is 2 transactions and 10 events. The exchanges run in waves of
 * LIVE at a time, so the two tables hold 1e5 live transactions each, as in the simulator. It
 * prints the median of several runs; it measures, it never fails on time.
 *
 *     bench_sip [EXCHANGES] [LIVE]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "osn/sip.h"

static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Hands every message the out struct sends to the other layer; counts the deliveries. */
static long deliver(struct osn_sip_layer *to, const struct osn_sip_out *o,
                    struct osn_sip_txn *fresh, double now, struct osn_sip_out *o2)
{
    struct osn_sip_txn *tp;
    long n = 0;
    for (int i = 0; i < o->nsend; i++) {
        if (osn_sip_layer_recv(to, o->send[i].msg, fresh, &tp, now, o2) < 0)
            return -1000000000L;
        n++;
    }
    return n;
}

/* One wave of `live` exchanges; returns the events handled or < 0 on a failure. */
static long wave(struct osn_sip_layer *cl, struct osn_sip_layer *sv, struct osn_sip_txn *ct,
                 struct osn_sip_txn *st, long live, uint64_t base)
{
    struct osn_sip_out o, o2, o3;
    long ev = 0;
    double now = 0;

    for (long i = 0; i < live; i++) { /* INVITE out; 100 back */
        struct osn_sip_msg inv = {.method = OSN_SIP_INVITE,
                                  .cseq = 1,
                                  .retry_after = -1,
                                  .call_id = base + (uint64_t)i,
                                  .branch = base + (uint64_t)i,
                                  .sent_by = 1,
                                  .from_tag = 7};
        if (osn_sip_ctxn_start(cl, &ct[i], &inv, now, &o) != 0)
            return -1;
        ev += 1 + deliver(sv, &o, &st[i], now, &o2);
        ev += deliver(cl, &o2, NULL, now, &o3);
    }
    now = 0.01;
    for (long i = 0; i < live; i++) { /* 180, then 200 */
        struct osn_sip_msg r = {.status = 180, .to_tag = 9, .retry_after = -1};
        if (osn_sip_stxn_respond(sv, &st[i], &r, now, &o) != 0)
            return -1;
        ev += 1 + deliver(cl, &o, NULL, now, &o2);
        r.status = 200;
        if (osn_sip_stxn_respond(sv, &st[i], &r, now, &o) != 0)
            return -1;
        ev += 1 + deliver(cl, &o, NULL, now, &o2);
        /* The UAC core's ACK for the 2xx: a new branch, no server transaction matches. */
        struct osn_sip_msg ack = ct[i].req;
        ack.method = OSN_SIP_ACK;
        ack.branch += 1ull << 40;
        struct osn_sip_txn *tp;
        if (osn_sip_layer_recv(sv, &ack, NULL, &tp, now, &o) != 2)
            return -1;
        ev++;
    }
    for (long i = 0; i < live; i++) { /* Timers M and L */
        if (osn_sip_txn_timer(cl, &ct[i], OSN_SIP_TIMER_M, ct[i].at[1], &o) != 0 || !o.terminated)
            return -1;
        if (osn_sip_txn_timer(sv, &st[i], OSN_SIP_TIMER_L, st[i].at[1], &o) != 0 || !o.terminated)
            return -1;
        ev += 2;
    }
    return ev;
}

int main(int argc, char **argv)
{
    long total = argc > 1 ? atol(argv[1]) : 1000000, live = argc > 2 ? atol(argv[2]) : 100000;
    struct osn_sip_layer cl, sv;
    struct osn_sip_cfg c;
    double t[5];
    int reps = 5;
    long events = 0;

    if (total <= 0 || live <= 0 || live > total) {
        fprintf(stderr, "usage: bench_sip [EXCHANGES > 0] [LIVE <= EXCHANGES]\n");
        return 2;
    }
    struct osn_sip_txn *ct = calloc((size_t)live, sizeof *ct);
    struct osn_sip_txn *st = calloc((size_t)live, sizeof *st);
    osn_sip_cfg_default(&c);
    c.trying_delay = 0;
    if (!ct || !st || osn_sip_layer_init(&cl, &c, (size_t)live) ||
        osn_sip_layer_init(&sv, &c, (size_t)live)) {
        fprintf(stderr, "bench_sip: out of memory\n");
        return 1;
    }
    for (int r = 0; r < reps; r++) {
        double t0 = wall();
        events = 0;
        for (long done = 0; done < total; done += live) {
            long ev = wave(&cl, &sv, ct, st, live, (uint64_t)(r * total + done));
            if (ev < 0) {
                fprintf(stderr, "bench_sip: an exchange failed\n");
                return 1;
            }
            events += ev;
        }
        t[r] = wall() - t0;
    }
    qsort(t, (size_t)reps, sizeof t[0], cmp);
    long n = (total / live) * live;
    printf("bench_sip exchanges=%ld live=%ld txn_bytes=%zu median_s=%.4f min_s=%.4f "
           "exchanges_per_s=%.3g transactions_per_s=%.3g events_per_s=%.3g absorbed=%llu\n",
           n, live, sizeof(struct osn_sip_txn), t[reps / 2], t[0], (double)n / t[reps / 2],
           2.0 * (double)n / t[reps / 2], (double)events / t[reps / 2],
           (unsigned long long)sv.stats.req_absorbed);
    osn_sip_layer_release(&cl);
    osn_sip_layer_release(&sv);
    free(ct);
    free(st);
    return 0;
}

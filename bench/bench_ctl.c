/*
 * Micro-benchmark of the controllers' client halves: decisions per second of the RFC 7339 loss
 * client (80/20 algorithm, one draw per request) and of the RFC 7415 rate client (GCRA), each
 * on a stream of new INVITEs 1 ms apart with feedback every 100 requests, plus the loss server
 * half (arrival + departure + feedback per message). Prints one key=value line per measure;
 * never fails on time. Usage: bench_ctl [decisions, default 2e7].
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "osn/ctl.h"
#include "osn/err.h"

static double wall(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Runs n client decisions on kind; returns seconds; *sent counts SEND verdicts. */
static double run_client(const char *kind, long n, long *sent)
{
    struct osn_ctl_cfg cfg;
    struct osn_ctl *c = NULL;
    struct osn_ctl_feedback fb = {0};
    double t0, t1;
    long s = 0;

    osn_ctl_cfg_default(&cfg);
    cfg.seed = 42;
    if (osn_ctl_new(&c, kind, &cfg) != 0) {
        fprintf(stderr, "bench_ctl: cannot create %s\n", kind);
        exit(1);
    }
    fb.algo = kind[0] == 'l' ? OSN_CTL_ALGO_LOSS : OSN_CTL_ALGO_RATE;
    fb.oc = kind[0] == 'l' ? 40 : 600; /* loss: shed 50% of INVITEs; rate: 600 of 1000/s */
    fb.validity = 0.5;
    t0 = wall();
    for (long i = 0; i < n; i++) {
        double now = 1e-3 * (double)i;

        if (i % 100 == 0) {
            fb.seq++;
            osn_ctl_client_on_feedback(c, now, &fb);
        }
        s += osn_ctl_client_admit(c, now, OSN_CTL_MSG_INVITE) == OSN_CTL_SEND;
    }
    t1 = wall();
    osn_ctl_free(c);
    *sent = s;
    return t1 - t0;
}

/* n messages through the loss server: arrival, departure and feedback for each. */
static double run_server(long n, long *admitted)
{
    struct osn_ctl_cfg cfg;
    struct osn_ctl *c = NULL;
    struct osn_ctl_feedback fb;
    double t0, t1;
    long a = 0;
    size_t q = 0;

    osn_ctl_cfg_default(&cfg);
    if (osn_ctl_new(&c, "loss", &cfg) != 0)
        exit(1);
    t0 = wall();
    for (long i = 0; i < n; i++) {
        double now = 1e-3 * (double)i;
        struct osn_ctl_event ev = {.kind = (i % 3) ? OSN_CTL_MSG_RESPONSE : OSN_CTL_MSG_INVITE,
                                   .queue_len = q,
                                   .oc_capable = true};
        struct osn_ctl_verdict v = osn_ctl_server_on_arrival(c, now, &ev);

        a += v.action == OSN_CTL_ADMIT;
        q = (size_t)(i % 97); /* a saw-tooth queue through the thresholds */
        ev.queue_len = q;
        osn_ctl_server_on_departure(c, now + 5e-4, &ev);
        osn_ctl_server_feedback(c, now + 5e-4, &fb);
    }
    t1 = wall();
    osn_ctl_free(c);
    *admitted = a;
    return t1 - t0;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? (long)atof(argv[1]) : 20000000L;
    long sent;
    double t;

    if (n < 1)
        n = 1;
    t = run_client("loss", n, &sent);
    printf("bench_ctl loss_client decisions=%ld sent=%ld wall_s=%.3f decisions_per_s=%.3g\n", n,
           sent, t, (double)n / t);
    t = run_client("rate", n, &sent);
    printf("bench_ctl rate_client decisions=%ld sent=%ld wall_s=%.3f decisions_per_s=%.3g\n", n,
           sent, t, (double)n / t);
    t = run_server(n / 4, &sent);
    printf("bench_ctl loss_server messages=%ld admitted=%ld wall_s=%.3f messages_per_s=%.3g\n",
           n / 4, sent, t, (double)(n / 4) / t);
    return 0;
}

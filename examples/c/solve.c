/*
 * Calling the exact solver from C: the two-loop M|M|1 model <L,H>|<H,R> of the README's tour
 * (lambda = 1.2, lambda' = 0.6, mu = 1, L = 10, H = 15, R = 20), built against the installed
 * library:
 *
 *     cc solve.c $(pkg-config --cflags --libs osn) -o solve && ./solve
 *
 * or with the Makefile beside this file (`make`). Command-line arguments override the rate,
 * then L, H and R: `./solve 1.5 5 10 20`. It prints one "key value" line per measure, each
 * to 17 significant digits (the digits of `osn solve --json`); a value outside the double
 * range (T_ret at extreme load) is printed in full, as osn_xd_format() writes it.
 */
#include <stdio.h>
#include <stdlib.h>

#include <osn/err.h>
#include <osn/model.h>
#include <osn/version.h>
#include <osn/xd.h>

static void print(const char *key, struct osn_xd x)
{
    char buf[64];
    printf("%s %s\n", key, osn_xd_format(x, 17, buf, sizeof buf));
}

int main(int argc, char **argv)
{
    struct osn_model m = {
            .kind = OSN_KIND_TWO_LOOP,
            .policy = OSN_POLICY_I,
            .L = 10,
            .H = 15,
            .R = 20,
            .flows = 1,
            .rate = 1.2,
            .overload_rate = 0.6,
            .mu = 1,
            .process = OSN_ARR_POISSON,
            .service = {.kind = OSN_LAW_EXP},
    };
    struct osn_measures ms;
    char why[256];
    const char *bad_key;
    int rc;

    if (argc > 1)
        m.rate = atof(argv[1]), m.overload_rate = m.rate / 2;
    if (argc > 4)
        m.L = atol(argv[2]), m.H = atol(argv[3]), m.R = atol(argv[4]);

    /* Fill L1..H2 from L, H, R, then check before solving: a bad model is named, not solved. */
    osn_model_resolve(&m);
    if ((rc = osn_model_check(&m, &bad_key, why, sizeof why)) != 0) {
        fprintf(stderr, "solve: %s: %s\n", bad_key ? bad_key : "model", why);
        return 2;
    }
    if ((rc = osn_solve(&m, OSN_METHOD_AUTO, &ms, NULL, NULL)) != 0) {
        fprintf(stderr, "solve: %s\n", osn_strerror(rc));
        return 2;
    }
    printf("osn_version %s\n", osn_version());
    print("P0", ms.P[0]);
    print("P1", ms.P[1]);
    print("P2", ms.P[2]);
    print("N_mean", ms.N_mean);
    print("throughput", ms.throughput);
    print("T_ret", ms.T_ret);
    print("T_ret_sd", ms.T_ret_sd);
    print("T_cyc", ms.T_cyc);
    print("theta", ms.theta);
    return 0;
}

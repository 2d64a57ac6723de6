/*
 * The network simulator's results, bit for bit (tests/data/net_golden.txt).
 *
 * Refactoring the simulator (moving the proxy and UAS into src/elem/, renaming, splitting files)
 * must not change a single result bit: the golden file holds every estimate, half-width and count
 * of short runs of the examples under every control, printed as hexadecimal floats, recorded from
 * the code before such a change. A change that is meant to alter the numbers (a new random
 * stream layout, a model fix) rewrites the file on purpose, in its own commit (the last: one
 * stream per purpose, common random numbers, 2026-12-02):
 *
 *   build/test_net_golden --write tests/data/net_golden.txt examples
 *
 * Usage (CTest): test_net_golden GOLDEN_FILE EXAMPLES_DIR
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "osn/net.h"
#include "osn/net_scenario.h"

struct golden_case {
    const char *example; /* file in examples/ */
    const char *sets[8]; /* --set overrides, NULL-terminated */
};

/* Short windows keep the whole table to seconds, also under ASan; every control on every
 * topology, plus the SIPp client mode, the pre-RFC 6026 machines and lossy links. */
#define SHORT "net.time=8", "net.warmup=4", "net.replications=2"
static const struct golden_case cases[] = {
        {"collapse.ini", {SHORT, "control.kind=none"}},
        {"collapse.ini", {SHORT, "control.kind=local"}},
        {"collapse.ini", {SHORT, "control.kind=loss"}},
        {"collapse.ini", {SHORT, "control.kind=rate"}},
        {"collapse.ini", {SHORT, "control.kind=prsm"}},
        {"collapse.ini", {SHORT, "control.kind=pi"}},
        {"collapse.ini", {SHORT, "control.kind=loss", "sip.client_mode=sipp"}},
        {"collapse.ini", {SHORT, "control.kind=rate", "sip.rfc6026=no"}},
        {"collapse.ini", {SHORT, "control.kind=loss", "link trunk.loss=0.05"}},
        {"tandem.ini", {SHORT, "control.kind=none"}},
        {"tandem.ini", {SHORT, "control.kind=local"}},
        {"tandem.ini", {SHORT, "control.kind=loss"}},
        {"tandem.ini", {SHORT, "control.kind=rate"}},
        {"tandem.ini", {SHORT, "control.kind=prsm"}},
        {"tandem.ini", {SHORT, "control.kind=pi"}},
        {"fanin.ini", {SHORT, "control.kind=none"}},
        {"fanin.ini", {SHORT, "control.kind=local"}},
        {"fanin.ini", {SHORT, "control.kind=loss"}},
        {"fanin.ini", {SHORT, "control.kind=rate"}},
        {"fanin.ini", {SHORT, "control.kind=prsm"}},
        {"fanin.ini", {SHORT, "control.kind=pi"}},
        {"burst.ini", {"net.time=4", "net.warmup=4", "net.replications=1", "control.kind=none"}},
        {"burst.ini", {"net.time=4", "net.warmup=4", "net.replications=1", "control.kind=prsm"}},
        {"burst.ini", {"net.time=4", "net.warmup=4", "net.replications=1", "control.kind=loss"}},
};

static void print_est(FILE *f, const char *key, const struct osn_net_est *e)
{
    fprintf(f, " %s=%a,%a,%a", key, e->value, e->hw, e->n);
}

/* One line per case: the case, then every number of the result. */
static int run_case(FILE *f, const char *dir, const struct golden_case *c)
{
    struct osn_net_scenario sc = {0};
    struct osn_net_result *res = calloc(1, sizeof *res);
    char path[4096], err[512];
    int nsets = 0;

    if (!res)
        return 1;
    while (nsets < 8 && c->sets[nsets])
        nsets++;
    snprintf(path, sizeof path, "%s/%s", dir, c->example);
    if (osn_net_scenario_load(&sc, path, c->sets, nsets, err, sizeof err) != 0 ||
        (sc.cfg.threads = 1, osn_net_run(&sc.cfg, res, err, sizeof err)) != 0) {
        fprintf(stderr, "test_net_golden: %s: %s\n", c->example, err);
        osn_net_scenario_release(&sc);
        free(res);
        return 1;
    }
    fprintf(f, "%s", c->example);
    for (int i = 0; i < nsets; i++)
        fprintf(f, " --set %s", c->sets[i]);
    fprintf(f, " | messages=%" PRIu64 " events=%" PRIu64, res->messages, res->events);
    /* The measures up to msg_rate, those the file was recorded with; the papers' measures
     * after it are new numbers, checked in test_net, and leave every old one unchanged. */
    for (int i = 0; i <= OSN_NET_MSG_RATE; i++)
        print_est(f, osn_net_measure_key(i), &res->est[i]);
    /* Likewise the element measures up to capacity; the CANCEL traffic after it is new. */
    for (int e = 0; e < res->nelem; e++)
        for (int i = 0; i <= OSN_NET_E_CAPACITY; i++) {
            char key[64];
            snprintf(key, sizeof key, "%s.%s", res->elem_name[e], osn_net_elem_measure_key(i));
            print_est(f, key, &res->elem[e][i]);
        }
    fputc('\n', f);
    osn_net_scenario_release(&sc);
    osn_net_result_release(res);
    free(res);
    return 0;
}

/* Compares two files line by line; reports the first differing line of each case. */
static int compare(const char *want_path, const char *got_path)
{
    FILE *a = fopen(want_path, "r"), *b = fopen(got_path, "r");
    static char la[1 << 16], lb[1 << 16];
    int bad = 0, line = 0;

    if (!a || !b) {
        fprintf(stderr, "test_net_golden: cannot read %s\n", a ? got_path : want_path);
        if (a)
            fclose(a);
        if (b)
            fclose(b);
        return 1;
    }
    for (;;) {
        char *ra = fgets(la, sizeof la, a), *rb = fgets(lb, sizeof lb, b);
        line++;
        if (!ra && !rb)
            break;
        if (!ra || !rb || strcmp(la, lb) != 0) {
            bad++;
            fprintf(stderr, "line %d differs:\n  want: %.300s\n  got:  %.300s\n", line,
                    ra ? la : "(end of file)\n", rb ? lb : "(end of file)\n");
            if (!ra || !rb)
                break;
        }
    }
    fclose(a);
    fclose(b);
    return bad;
}

int main(int argc, char **argv)
{
    const char *dir, *golden;
    bool write = argc == 4 && strcmp(argv[1], "--write") == 0;
    char tmp[] = "/tmp/osn_net_golden_XXXXXX";
    FILE *f;
    int rc = 0;

    if (!write && argc != 3) {
        fprintf(stderr, "usage: test_net_golden [--write] GOLDEN_FILE EXAMPLES_DIR\n");
        return 2;
    }
    golden = argv[argc - 2];
    dir = argv[argc - 1];
    if (write) {
        f = fopen(golden, "w");
    } else {
        int fd = mkstemp(tmp);
        f = fd < 0 ? NULL : fdopen(fd, "w");
    }
    if (!f) {
        perror("test_net_golden");
        return 2;
    }
    for (size_t i = 0; i < sizeof cases / sizeof cases[0] && !rc; i++)
        rc = run_case(f, dir, &cases[i]);
    if (fclose(f) != 0)
        rc = 1;
    if (!rc && !write) {
        rc = compare(golden, tmp) != 0;
        printf("%s: %zu cases %s\n", golden, sizeof cases / sizeof cases[0],
               rc ? "DIFFER (see above)" : "identical bit for bit");
    }
    if (!write)
        unlink(tmp);
    return rc;
}

/*
 * Benchmark of the SIP message parser: parse + identities (osn_sip_wire_parse then
 * osn_sip_wire_to_txn) of SIPp's INVITE (tests/data/sipp/sipp_uac_invite.sip, 510 bytes), in
 * messages per second on one core, beside libosip2's osip_message_parse on the same bytes in
 * the same run (init, parse, free: what a libosip2 user pays per datagram). Prints both and the
 * ratio. A benchmark, not a test: it never fails on time.
 *
 *   bench_sip_parse [FILE [SECONDS]]     default: the SIPp INVITE, 1 s per side, best of 3
 */
#include <osipparser2/osip_parser.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "osn/sip_wire.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static struct osn_sip_wire M;
static volatile uint64_t sink;

/* Messages per second of ours over about `secs` seconds. */
static double run_ours(const char *buf, size_t n, double secs)
{
    struct osn_sip_msg num;
    uint64_t count = 0;
    double t0 = now(), t;
    do {
        for (int i = 0; i < 10000; i++) {
            if (osn_sip_wire_parse(&M, buf, n) != OSN_SIP_WIRE_ACCEPT ||
                osn_sip_wire_to_txn(&M, &num) != 0)
                abort();
            sink += num.branch;
        }
        count += 10000;
        t = now() - t0;
    } while (t < secs);
    return (double)count / t;
}

static double run_osip(const char *buf, size_t n, double secs)
{
    uint64_t count = 0;
    double t0 = now(), t;
    do {
        for (int i = 0; i < 1000; i++) {
            osip_message_t *sip;
            osip_message_init(&sip);
            if (osip_message_parse(sip, buf, n) != OSIP_SUCCESS)
                abort();
            sink += (uint64_t)osip_list_size(&sip->vias);
            osip_message_free(sip);
        }
        count += 1000;
        t = now() - t0;
    } while (t < secs);
    return (double)count / t;
}

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : OSN_SOURCE_DIR "/tests/data/sipp/sipp_uac_invite.sip";
    double secs = argc > 2 ? atof(argv[2]) : 1.0;
    static char buf[OSN_SIP_WIRE_MAX_LEN + 1];
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return 1;
    }
    size_t n = fread(buf, 1, OSN_SIP_WIRE_MAX_LEN, f);
    fclose(f);
    osn_sip_wire_key_init();
    parser_init();
    double ours = 0, theirs = 0;
    for (int round = 0; round < 3; round++) {
        double a = run_ours(buf, n, secs), b = run_osip(buf, n, secs);
        ours = a > ours ? a : ours;
        theirs = b > theirs ? b : theirs;
    }
    printf("SIP parse + identities of %s (%zu bytes), one core, best of 3 x %.1f s\n", path, n,
           secs);
    printf("osn_sip_wire_parse + osn_sip_wire_to_txn  %12.0f msgs/s  %7.1f ns/msg\n", ours,
           1e9 / ours);
    printf("libosip2 osip_message_parse           %12.0f msgs/s  %7.1f ns/msg\n", theirs,
           1e9 / theirs);
    printf("ratio osn / libosip2                  %12.1f x\n", ours / theirs);
    return 0;
}

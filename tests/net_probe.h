/*
 * Test code, not in the library: one element of the network simulator driven by hand, for the
 * differential test of the element's drivers (tests/test_elem_drivers.c), on the simulator's
 * internal interface (src/sim/net_int.h). The node's side is in that test itself: its driver's
 * sources compiled in, with udp_send_to as the seam.
 *
 * The probe is a whole network of the simulator (collapse: source, edge, core, UAS, built by the
 * replication's own setup) in which only one element acts: the test puts messages on its links
 * at virtual times of its choosing, virtual time runs with the simulator's own event loop, and
 * what the element sends on a link is handed to the test instead of the next element. So the
 * element's server, transaction layer and TU are the simulator's, unchanged, and the links have
 * no delay: a message is reported at the instant it is sent. The simulator's messages are
 * structs, not bytes: what goes out is a struct osn_sip_msg, and a call is a number.
 */
#ifndef OSN_NET_PROBE_H
#define OSN_NET_PROBE_H

#include <stdbool.h>
#include <stdint.h>

#include "osn/ctl.h"
#include "osn/elem.h"
#include "osn/net.h"
#include "osn/sip.h"

/* Calls a probe tells apart, numbered 0 to OSN__PROBE_CALLS - 1. */
#define OSN__PROBE_CALLS 8

/* The element probed: the edge proxy (the source upstream, the core downstream), the core
 * proxy (the edge upstream, the UAS downstream; the controller's server half is its), the
 * UAS (the core upstream), or the source's UAC (the edge downstream; calls start by
 * osn__net_probe_call, and a call's number is its origin's, through its retries). */
enum osn__probe_elem { OSN__PROBE_EDGE, OSN__PROBE_CORE, OSN__PROBE_UAS, OSN__PROBE_UAC };

/* What the probed element sent at `t` (s): `down` toward the next hop (requests) or up; m is
 * the simulator's message (borrowed for the call), `call` the call's number, `hop` the core it
 * goes to (a fanout edge's request: 0, 1, ...; -1 otherwise). */
typedef void osn__probe_send_fn(void *arg, double t, bool down, const struct osn_sip_msg *m,
                                int call, int hop);

struct osn__probe_cfg {
    enum osn__probe_elem elem;
    enum osn_ctl_kind ctl_kind; /* the edge's client half and the core's server half */
    struct osn_ctl_cfg ctl;
    /* [control] at (0: core); edge or both give the source (UAC) a client half of ctl_kind */
    enum osn_net_ctl_at ctl_at;
    const double *cost; /* the element's CPU seconds by enum osn_elem_kind; NULL: all 0 */
    long buffer;        /* its server's buffer (messages) */
    struct osn_sip_cfg sip;
    int ring; /* the UAS's ring delay law (enum osn_uas_ring_law), mean ring_mean s */
    double ring_mean;
    osn__probe_send_fn *send;
    void *arg;
    /* EDGE: 2..4 cores (a fanout of one edge, weights 1) whose edge chooses among them and
     * fails over (src/elem/hops.c), a core down for down_time s after a timeout; 0 or 1: one */
    int cores;
    double down_time;
    /* The proxies do not Record-Route (every [server] record_route = no): off the dialogs'
     * path, they let the ACK of a 2xx and the BYE pass by (false: the simulator's default) */
    bool no_record_route;
    /* UAC: the source's caller (source.patience det, retrials with a det delay, hold), and the
     * run's hold key (so that a call holds as long as in another driver) */
    double patience; /* s, 0: none */
    double retry_prob, retry_delay;
    int max_retries;
    bool honour_retry_after;
    double hold;
    uint64_t hold_key;
    double callee_hangs_up; /* UAC: the fraction of calls the callee ends (no hold armed) */
};

struct osn__net_probe;

/* A probe of cfg's element at time 0 (cfg is copied). Returns 0 or a negative OSN_E* code. */
int osn__net_probe_new(struct osn__net_probe **pp, const struct osn__probe_cfg *cfg);

/* Releases the probe; accepts NULL, returns NULL. */
struct osn__net_probe *osn__net_probe_free(struct osn__net_probe *p);

/* Runs virtual time to `t` (s): every event due at or before t happens, in the simulator's
 * order. Returns 0 or the run's error. */
int osn__net_probe_run_to(struct osn__net_probe *p, double t);

/* Request m (its method, branch, identities: the caller's) of call `call` arrives from upstream
 * now. */
int osn__net_probe_request(struct osn__net_probe *p, int call, const struct osn_sip_msg *m);

/* The next hop's response `status` to the request of `method` (INVITE, BYE or CANCEL) the
 * element forwarded last for `call` arrives now: that request with the status, a To tag for a
 * status above 100, Retry-After `retry_after` s (-1 none) and the oc parameters `oc` (NULL:
 * none). Returns 1 when the element forwarded no such request for the call (nothing arrives). */
int osn__net_probe_response(struct osn__net_probe *p, int call, int method, int status,
                            const struct osn_sip_oc *oc, int retry_after);

/* The callee's BYE of `call` (source.callee_hangs_up) arrives now from downstream: the request
 * the simulator's UAS sends up the dialog's path (src/sim/net_tu.c), From the callee's tag. At
 * the UAC it reaches the source's call `call` (a call number it never started: a call of its
 * own, made here, that the source's UAC machine has not set up). */
int osn__net_probe_callee_bye(struct osn__net_probe *p, int call);

/* The upstream hop's response `status` to the callee's BYE the element sent up last for `call`
 * arrives now. Returns 1 when the element sent no such request (nothing arrives). */
int osn__net_probe_up_response(struct osn__net_probe *p, int call, int status);

/* EDGE of a fanout: the element's state of its cores (counts, down marks). */
const struct osn_elem_hops *osn__net_probe_hops(const struct osn__net_probe *p);

/* UAC: a new call starts now (numbered 0, 1, ... in order). */
int osn__net_probe_call(struct osn__net_probe *p);

/* UAC: the next hop answers `status` (Retry-After `retry_after` s, -1 none; RFC 7339 feedback
 * `oc`, NULL none) to the request of `method` (INVITE, BYE, CANCEL) its call `call` sent last.
 * Returns 1 when it sent none. */
int osn__net_probe_uac_response(struct osn__net_probe *p, int call, int method, int status,
                                int retry_after, const struct osn_sip_oc *oc);

/* UAC: the attempts its client half shed (the run's shed_local). */
uint64_t osn__net_probe_shed_local(const struct osn__net_probe *p);

/* UAC: what the sources' UAC machine had the driver do, by enum osn_uac_do, and the calls'
 * outcomes by enum osn_uac_outcome. */
void osn__net_probe_uac(const struct osn__net_probe *p, uint64_t did[OSN_UAC_NDO],
                        uint64_t outcome[OSN_UAC_NOUTCOMES]);

/* UAC: the calls the callee ended (its BYE answered 200: the run's byes_in). */
uint64_t osn__net_probe_byes_in(const struct osn__net_probe *p);

/* What the element's TU counted so far, by enum osn_elem_count. */
const uint64_t *osn__net_probe_counts(const struct osn__net_probe *p);

/* Transactions of the element still live (0 once all have ended). */
long osn__net_probe_live(const struct osn__net_probe *p);

#endif

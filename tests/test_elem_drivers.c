/*
 * Differential test of the SIP element's drivers (issue 29): the same scripted events, run
 * through the real node's driver (src/node: SIP text in, datagrams out, its timer heap; no
 * socket), through the network simulator's driver (src/sim: one element of a simulated network,
 * messages as structs, its event set; net_probe.h) and through a reference driver written here
 * on the element API and the transaction layer alone, must give the same messages on the wire,
 * at the same times, in the same order, and the same counts.
 *
 * The reference stays as a third column for two reasons: it is the only second opinion on the
 * scripts the simulator's messages cannot express (sim_cannot: Max-Forwards, sizes,
 * loops, source addresses), and it runs either way the one fact the two drivers tell the element
 * differently (`record`: whether a request met before, whose transaction has ended, is known),
 * so that a difference between the simulator and the node is shown to be that and nothing else.
 *
 * A script is one table row: an element (proxy or UAS) and a string of events, each
 * `KIND[CALL]@TIME`:
 *   I  an INVITE from upstream (the same branch each time: a copy after the first)
 *   M  an INVITE with Max-Forwards 0
 *   B  a BYE from upstream
 *   C  a CANCEL from upstream (the INVITE's branch and CSeq number)
 *   L  the INVITE the element forwarded for call 0, fed back to it from upstream (a loop);
 *      the reference books it as call CALL
 *   X  an INVITE of 65,480 bytes: it fits in a UDP datagram, its forward does not
 *   b  the callee's BYE, from downstream, with the Route the callee's route set leaves it
 *      (Record-Route in order, the core's own value taken by the core) and the caller's
 *      Contact as Request-URI; `200u` is the caller's answer to what the element sent up
 *   A  the ACK of a 2xx from upstream (a branch of its own); it and B are the caller's
 *      requests in the dialog: to the node, they carry the route set the caller learnt from
 *      the 2xx the element relayed (its Record-Route reversed as Route, its Contact as
 *      Request-URI: RFC 3261 12.1.2, 12.2.1.1), as a real caller's do
 *   Z  the ACK of a 2xx with Max-Forwards 0
 *   K  the ACK of a non-2xx final response (the INVITE's branch)
 *   100, 180, 200, 486, ...  a response of the next hop to the call's INVITE (the last one the
 *      element forwarded); `200o` carries RFC 7339 feedback in its top Via: oc=100 (loss: shed
 *      every new request); `200c` answers the CANCEL the element passed on instead, `200b`
 *      the BYE; `503r5` carries Retry-After: 5
 *   T  nothing: time runs to TIME (the timers due fire)
 * The call number is optional (0). Adding a case is adding a row to `scripts`: it runs through
 * the node and, unless sim_cannot() says why not, the simulator. A row marked
 * `core` runs the element as the core: its CPU has costs (core_cost) and its controller's server
 * half watches the queue and sheds new requests with 503; the reference then feeds the events
 * through the same osn_elem_server as the node's recv.c, with the node's virtual-CPU timing. A
 * row with `hops` 2 runs a proxy with two next hops (the node's next_hop = A, B; the
 * simulator's fanout edge): the wire says which one a request went to (d0:, d1:), and the
 * per-server counts (offered, sent, timeouts, down marks, failovers, ...) must agree too.
 *
 * What no script here can show: the simulator's record of the BYEs a proxy took is kept by
 * direction (the caller's, the callee's), and the two could only meet on one hop of a whole
 * network (each element takes the caller's BYE on its upstream hop and the callee's on its
 * downstream one, and a probe has one element act): tests/test_net.c's test_byes_cross does.
 *
 * The node's driver is compiled into this test from its sources, except the socket (udp.c),
 * the loop (run.c) and the metrics endpoint: udp_send_to() below is the seam, and records what
 * the node would send.
 */
#include <setjmp.h> /* cmocka needs these before its header */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net_probe.h"
#include "node_int.h"
#include "osn/elem.h"
#include "osn/rng.h"

#define NCALL 4
#define TRACE 4096

/* The per-server counts of an element with several next hops (struct osn_elem_hop's). */
enum { H_OFFERED, H_SENT, H_INVITES, H_SHED, H_TIMEOUTS, H_503, H_DOWNS, H_FAILOVERS, H_N };

/* What the element sent, as "0.500 d:INVITE" (when, toward the next hop; "d1:" toward the
 * second of several) or "0.020 u:180" (upstream), one a line, and its counts, per server too. */
struct result {
    char wire[TRACE];
    uint64_t count[OSN_ELEM_NCOUNTS];
    uint64_t hop[2][H_N];
};

static void trace(struct result *r, double now, bool down, int hop, int method, int status)
{
    size_t k = strlen(r->wire);
    char dir[8];
    snprintf(dir, sizeof dir, down && hop >= 0 ? "d%d" : down ? "d" : "u", hop);
    if (status)
        snprintf(r->wire + k, TRACE - k, "%7.3f %s:%d\n", now, dir, status);
    else
        snprintf(r->wire + k, TRACE - k, "%7.3f %s:%s\n", now, dir, osn_sip_method_name(method));
}

/* The per-server counts of hops h (NULL: none) into r. */
static void hop_counts(struct result *r, const struct osn_elem_hops *h)
{
    for (int i = 0; h && i < h->n && i < 2; i++) {
        const struct osn_elem_hop *x = &h->h[i];
        const uint64_t v[H_N] = {x->offered,  x->sent,    x->invites, x->shed,
                                 x->timeouts, x->got_503, x->downs,   x->failovers};
        memcpy(r->hop[i], v, sizeof v);
    }
}

/* ---- scripts ---- */

struct script {
    const char *name;
    int role; /* enum osn_elem_role */
    const char *events;
    const char *ctl; /* a proxy's client half toward the next hop (control.kind); NULL: none */
    bool core; /* the core instead: `ctl` is its server half, and its CPU has costs (core_cost) */
    const char *expect; /* a line both drivers' wire must hold (a behaviour's answer), or NULL */
    double rate; /* the per-source budget (node.per_source_rate), 0 off; all events share one */
    double ring; /* UAS: a deterministic ring delay (s) between its 180 and its 200, 0 none */
    const char *absent; /* text neither driver's wire may hold (a behaviour's silence), or NULL */
    int hops; /* a proxy's next hops: 2 (weights 1, down_time 30 s, no client halves); 0: one */
    /* No proxy Record-Routes (node.record_route and every [server] record_route = no): the
     * dialog's route set is empty, the ACK of a 2xx carries no Route. false: all do, the
     * default of both worlds, and the caller's in-dialog requests carry the route set it
     * learnt from the 2xx (the node's: Record-Route, reversed; RFC 3261 12.1.2) */
    bool rr_off;
};

#define DOWN_TIME 30.0 /* s: a fan-out script's server down after a timeout */

/* The core's CPU seconds by message kind, and its controller's thresholds: small enough that a
 * few INVITEs put it in overload. A kind of cost 0 is handled at once, past the controller. */
static const double core_cost[OSN_ELEM_NKINDS] = {[OSN_ELEM_K_INVITE] = 1.0,
                                                  [OSN_ELEM_K_RETX] = 0.01,
                                                  [OSN_ELEM_K_BYE] = 0.1,
                                                  [OSN_ELEM_K_REJECT] = 0.05};

static void core_ctl_cfg(struct osn_ctl_cfg *cc)
{
    osn_ctl_cfg_default(cc);
    cc->det.l1 = 1;
    cc->det.h1 = 2;
    cc->det.l2 = 3;
    cc->det.h2 = 4;
}

static const struct script scripts[] = {
        {"invite, 1xx, 2xx, ACK", OSN_ELEM_PROXY, "I@0 100@0.01 180@0.02 200@0.03 A@0.05 T@40"},
        {"copies of the INVITE absorbed", OSN_ELEM_PROXY,
         "I@0 I@0.3 180@0.4 I@0.6 200@0.7 I@0.8 A@0.9 T@40"},
        {"2xx copies relayed", OSN_ELEM_PROXY, "I@0 200@0.1 200@0.6 A@0.7 200@1.6 T@40"},
        {"copy after the transaction ended", OSN_ELEM_PROXY, "I@0 200@0.1 A@0.2 T@40 I@41 T@140"},
        {"Max-Forwards 0: 483", OSN_ELEM_PROXY, "M@0 K@0.1 T@40"},
        {"ACK with Max-Forwards 0", OSN_ELEM_PROXY, "I@0 200@0.1 Z@0.2 T@40"},
        {"next hop dead: 408", OSN_ELEM_PROXY, "I@0 T@80"},
        {"next hop answers 486", OSN_ELEM_PROXY, "I@0 100@0.05 486@0.1 K@0.2 486@0.3 T@40"},
        {"next hop silent after 100", OSN_ELEM_PROXY, "I@0 100@0.05 T@80"},
        {"two calls interleaved", OSN_ELEM_PROXY,
         "I0@0 I1@0.01 200[1]@0.02 200@0.03 A1@0.04 A@0.05 T@40"},
        {"UAS answers, ACK stops the 2xx", OSN_ELEM_UAS, "I@0 T@1.6 A@2 T@40"},
        /* RFC 3261 13.3.1.4: 64*T1 without the ACK, the UAS ends the session with a BYE (up to
         * the caller; unanswered here, so Timer E resends it until Timer F) */
        {"UAS 2xx never ACKed: its BYE at 64*T1", OSN_ELEM_UAS, "I@0 T@70", NULL, false,
         " 32.000 u:BYE"},
        /* ... and the caller's 200 to that BYE ends it */
        {"UAS 2xx never ACKed: its BYE answered", OSN_ELEM_UAS, "I@0 T@32.2 200u@32.3 T@70", NULL,
         false, " 32.000 u:BYE"},
        /* the caller's BYE came first: the call is over, no BYE of the UAS's */
        {"UAS 2xx never ACKed, the caller's BYE first: no BYE of its own", OSN_ELEM_UAS,
         "I@0 B@5 T@70", NULL, false, "  5.000 u:200"},
        {"UAS copies of the INVITE", OSN_ELEM_UAS, "I@0 I@0.2 A@0.3 I@0.4 T@40"},
        {"UAS BYE", OSN_ELEM_UAS, "I@0 A@0.1 B@1 B@1.5 T@40"},
        {"UAS BYE for no call: 481", OSN_ELEM_UAS, "B@0 B@0.5 T@40", NULL, false, "  0.000 u:481"},
        {"UAS CANCEL: 481 for no call, 200 for its own", OSN_ELEM_UAS,
         "C@0 I1@0.1 C1@0.2 A1@0.3 T@40", NULL, false, "  0.000 u:481"},
        {"UAS BYE after the call's BYE: 481", OSN_ELEM_UAS, "I@0 A@0.1 B@1 T@40 B@41 T@80", NULL,
         false, " 41.000 u:481"},
        {"forward too large for UDP: 513", OSN_ELEM_PROXY, "X@0 K@0.1 T@40", NULL, false,
         "  0.000 u:513"},
        {"CANCEL before the 200: 200, passed on, the 487 relayed", OSN_ELEM_PROXY,
         "I@0 100@0.01 180@0.02 C@0.1 200c@0.11 487@0.12 K@0.13 T@40", NULL, false,
         "  0.100 d:CANCEL"},
        {"CANCEL unanswered downstream: its transaction times out quietly", OSN_ELEM_PROXY,
         "I@0 180@0.02 C@0.1 487@0.2 K@0.3 T@40", NULL, false, "  0.100 d:CANCEL"},
        {"CANCEL after the 200: the 200 wins, 200 to the CANCEL, nothing passed on", OSN_ELEM_PROXY,
         "I@0 100@0.01 180@0.02 200@0.05 C@0.1 A@0.15 T@40", NULL, false, "  0.100 u:200"},
        {"CANCEL before any provisional, then a 180: kept, passed on at the 180 (RFC 3261 9.1)",
         OSN_ELEM_PROXY, "I@0 C@0.01 180@0.02 200c@0.03 487@0.04 K@0.05 T@40", NULL, false,
         "  0.020 d:CANCEL"},
        {"CANCEL before any provisional, the 200 crosses it: passed on at the 180, 200 relayed",
         OSN_ELEM_PROXY, "I@0 C@0.01 180@0.02 200@0.05 A@0.1 T@40", NULL, false,
         "  0.020 d:CANCEL"},
        {"CANCEL before any provisional, then a 486: never passed on", OSN_ELEM_PROXY,
         "I@0 C@0.01 486@0.02 K@0.03 180@0.04 T@40", NULL, false, "  0.020 u:486", 0, 0,
         "d:CANCEL"},
        {"CANCEL before any provisional, then the 200: never passed on", OSN_ELEM_PROXY,
         "I@0 C@0.01 200@0.02 A@0.05 T@40", NULL, false, "  0.020 u:200", 0, 0, "d:CANCEL"},
        {"UAS rings 2 s: 180 at once, 200 after the ring", OSN_ELEM_UAS, "I@0 I@1 T@2.5 A@2.6 T@40",
         NULL, false, "  2.000 u:200", 0, 2},
        {"UAS CANCEL while it rings: 200 to the CANCEL, 487 to the INVITE", OSN_ELEM_UAS,
         "I@0 C@0.5 K@0.6 T@40", NULL, false, "  0.500 u:487", 0, 2, "  2.000 u:200"},
        {"UAS CANCEL after the ring's 200: 200 to the CANCEL, no 487", OSN_ELEM_UAS,
         "I@0 T@2.1 C@2.2 A@2.3 T@40", NULL, false, "  2.200 u:200", 0, 2, "u:487"},
        {"CANCEL for no INVITE: 481", OSN_ELEM_PROXY, "C@0 C@0.2 T@40", NULL, false,
         "  0.000 u:481"},
        {"per-source budget: one stateless 503, then nothing", OSN_ELEM_UAS,
         "I0@0 I1@0.01 I2@0.02 I3@0.03 A0@0.1 A1@0.1 T@40", NULL, false, "  0.020 u:503", 2},
        {"request looped back: 482", OSN_ELEM_PROXY, "I0@0 L1@0.01 T@80", NULL, false,
         "  0.010 u:482"},
        {"client half sheds: 503", OSN_ELEM_PROXY, "I0@0 200o[0]@0.1 A0@0.2 I1@0.3 K1@0.4 T@40",
         "loss"},
        {"server half sheds: 503 from the core's queue", OSN_ELEM_PROXY,
         "I0@0 I1@0.1 I2@0.2 I3@0.3 I3@0.35 200[0]@1.5 A0@1.6 K3@2 T@100", "local", true},
        {"core queue: copies costed as copies", OSN_ELEM_PROXY,
         "I0@0 I0@0.5 I0@1.5 200[0]@2.5 A0@2.6 T@80", "local", true},
        /* Several next hops (issue 33): server 0 never answers. Its Timer B (32 s) marks it
         * down for 30 s and the INVITE goes to server 1 instead of a 408 upstream; while it is
         * down every new INVITE goes to server 1, and the ACKs with them. */
        {"fan-out with one server down: Timer B there, the INVITE fails over", OSN_ELEM_PROXY,
         "I0@0 T@33 180[0]@33.05 200[0]@33.1 A0@33.2 I1@34 200[1]@34.1 A1@34.2 T@100", NULL, false,
         " 32.000 d1:INVITE", 0, 0, "u:408", 2},
        /* Server 0 answers 503 with Retry-After 5 (RFC 3261 21.5.4): ACKed there, the INVITE
         * goes to server 1 and server 0 is left alone until 5.1 s, then offered again (call 3).
         * The calls' ACKs follow the core that answered (its Record-Route), calls 2 and 3's
         * while both cores are up. */
        {"fan-out, 503 with Retry-After from one of two servers: fails over, left alone 5 s",
         OSN_ELEM_PROXY,
         "I0@0 503r5@0.1 180@0.2 200@0.3 A0@0.4 I1@1 200[1]@1.1 A1@1.2 I2@6 200[2]@6.1 A2@6.2 "
         "I3@7 200[3]@7.1 A3@7.2 T@60",
         NULL, false, "  0.100 d1:INVITE", 0, 0, "u:503", 2},
        /* A Route set through two proxies (RFC 3261 16.6 step 4, 12.1, 16.12): edge and core
         * Record-Route the INVITE, so the caller's ACK and BYE carry Route: <edge;lr>,
         * <core;lr> and its Contact as Request-URI. The edge removes its own value (16.4) and
         * sends them to the core the next value names; the core finds its own the last and
         * sends them to the callee's Contact (the Request-URI). */
        {"a Route set through two proxies, at the edge: the caller's ACK and BYE go to the core "
         "by Route",
         OSN_ELEM_PROXY, "I@0 100@0.01 180@0.02 200@0.03 A@0.05 B@1 200b@1.01 T@40", NULL, false,
         "  1.000 d:BYE", 0, 0, "u:BYE"},
        /* The callee's BYE reaches the edge from the core with Route: <edge;lr> (the core took
         * its own value): the edge removes its own and, none left, sends it to the Request-URI,
         * the caller's Contact, upstream; by next_hop it would go back down. The caller's 200
         * goes down by Via. */
        {"a Route set through two proxies, at the edge: the callee's BYE goes to the caller's "
         "Contact, not to next_hop",
         OSN_ELEM_PROXY, "I@0 100@0.01 180@0.02 200@0.03 A@0.05 b@1 200u@1.01 T@40", NULL, false,
         "  1.000 u:BYE", 0, 0, "d:BYE"},
        /* The same under overload (issue 33): the core's 200 said oc=100 (loss), so the edge's
         * client half toward the core sheds every new request for 10 s. The callee's BYE goes
         * upstream, to the caller's Contact, a server that half knows nothing of (RFC 7339 5.10:
         * its state is the core's): it is forwarded, never answered 503. The caller's BYE goes
         * down to the core by Route, and is shed (RFC 7339 7.2: oc=100 takes both categories). */
        {"callee's BYE under a shedding client half toward the core: forwarded up, no 503",
         OSN_ELEM_PROXY, "I@0 100@0.01 180@0.02 200o@0.03 A@0.05 b@1 200u@1.01 T@40", "loss", false,
         "  1.000 u:BYE", 0, 0, "d:503"},
        /* At a fan-out edge the callee's BYE comes from the core that Record-Routed and goes up
         * to the caller: no server of the two is offered it or counted as sent it. */
        {"fan-out: the callee's BYE goes up, no server of the two counts it", OSN_ELEM_PROXY,
         "I@0 200@0.1 A@0.2 b@1 200u@1.01 T@40", NULL, false, "  1.000 u:BYE", 0, 0, "d1:BYE", 2},
        /* The callee's BYE at the core (issue 33: both drivers carry it out): it comes from the
         * UAS, pays the core's BYE cost (0.1 s) like the caller's and goes up to the edge; the
         * edge's 200 comes back down through the core to the UAS. */
        {"the callee's BYE through the core: its BYE cost, then up to the edge", OSN_ELEM_PROXY,
         "I@0 100@1.01 180@1.02 200@1.03 A@1.05 b@2 200u@2.2 T@40", "local", true, "  2.100 u:BYE",
         0, 0, "d:BYE"},
        /* A BYE crossing the caller's (RFC 3261 15.1.2: each end answers the other's 200): at the
         * edge the caller's goes down and the callee's up, each its own transaction, and each
         * 200 goes back the way its BYE came. */
        {"BYEs crossing at the edge: the caller's down, the callee's up, both answered",
         OSN_ELEM_PROXY,
         "I@0 100@0.01 180@0.02 200@0.03 A@0.05 B@1 b@1.005 200b@1.01 200u@1.02 T@40", NULL, false,
         "  1.005 u:BYE"},
        /* The same at the core: the caller's BYE is served first (0.1 s), the callee's queued
         * behind it (another 0.1 s). */
        {"BYEs crossing at the core: served in turn, each on its way", OSN_ELEM_PROXY,
         "I@0 100@1.01 180@1.02 200@1.03 A@1.05 B@2 b@2.01 200b@2.3 200u@2.3 T@40", "local", true,
         "  2.200 u:BYE"},
        {"caller's BYE under a shedding client half toward the core: 503", OSN_ELEM_PROXY,
         "I@0 100@0.01 180@0.02 200o@0.03 A@0.05 B@1 T@40", "loss", false, "  1.000 u:503", 0, 0,
         "d:BYE"},
        {"a Route set through two proxies, at the core: the caller's ACK and BYE go to the "
         "callee's Contact",
         OSN_ELEM_PROXY, "I@0 100@1.01 180@1.02 200@1.03 A@1.05 B@2 200b@2.2 T@40", "local", true,
         "  2.100 d:BYE", 0, 0, "u:BYE"},
        /* The ACK of a 2xx at a fan-out edge with both cores up (RFC 3261 16.12, RFC 3263 4.3):
         * the cores Record-Route, so each ACK goes to the core that answered its INVITE, by
         * round-robin 0, 1, 0, 1, whatever its Call-ID would choose: with wire_key()'s key,
         * call 0's Call-ID chooses core 1 (the next script), and its ACK must go to core 0. */
        {"fan-out, both cores up, Record-Route: each ACK to the core that Record-Routed",
         OSN_ELEM_PROXY,
         "I0@0 200[0]@0.1 A0@0.2 I1@1 200[1]@1.1 A1@1.2 I2@2 200[2]@2.1 A2@2.2 I3@3 200[3]@3.1 "
         "A3@3.2 T@40",
         NULL, false, "  0.200 d0:ACK", 0, 0, NULL, 2},
        /* The same with no proxy Record-Routing: the ACK has no Route, nothing ties it to its
         * INVITE's core (RFC 3263 4.3) and the edge forwards it as a new request, to a core
         * chosen by weight from its Call-ID (osn_elem_hops_ack): call 0's ACK to core 1 though
         * its INVITE went to core 0. */
        {"fan-out, both cores up, no Record-Route: each ACK to a core chosen from its Call-ID",
         OSN_ELEM_PROXY,
         "I0@0 200[0]@0.1 A0@0.2 I1@1 200[1]@1.1 A1@1.2 I2@2 200[2]@2.1 A2@2.2 I3@3 200[3]@3.1 "
         "A3@3.2 T@40",
         NULL, false, "  0.200 d1:ACK", 0, 0, NULL, 2, .rr_off = true},
};

struct event {
    char kind; /* I M B C L X A Z K T, or R for a response */
    int call, status;
    int retry_after; /* a response's Retry-After (s, `rN`), -1 none */
    bool oc;         /* a response with oc=100, loss */
    bool to_cancel;  /* a response to the CANCEL the element sent, not to the INVITE */
    bool to_bye;     /* a response to the BYE the element sent */
    bool to_up;      /* a response from upstream, to the request the element sent up */
    double t;
};

/* Parses one event; returns the rest of the string, NULL at the end. */
static const char *next_event(const char *p, struct event *ev)
{
    while (*p == ' ')
        p++;
    if (!*p)
        return NULL;
    *ev = (struct event){.retry_after = -1};
    if (*p >= '0' && *p <= '9') {
        ev->kind = 'R';
        ev->status = (int)strtol(p, (char **)&p, 10);
        if (*p == 'o') {
            ev->oc = true;
            p++;
        }
        if (*p == 'c') {
            ev->to_cancel = true;
            p++;
        }
        if (*p == 'b') {
            ev->to_bye = true;
            p++;
        }
        if (*p == 'u') {
            ev->to_up = true;
            p++;
        }
        if (*p == 'r')
            ev->retry_after = (int)strtol(p + 1, (char **)&p, 10);
        if (*p == '[') {
            ev->call = (int)strtol(p + 1, (char **)&p, 10);
            p++;
        }
    } else {
        ev->kind = *p++;
        if (*p >= '0' && *p <= '9')
            ev->call = (int)strtol(p, (char **)&p, 10);
    }
    assert_true(*p == '@');
    ev->t = strtod(p + 1, (char **)&p);
    return p;
}

/* The sip configuration both drivers run: the node's (Timer B kept after a 1xx; a proxy's 100
 * Trying at once, none from the UAS, which answers at once). */
static void sip_cfg(struct osn_sip_cfg *c, int role)
{
    osn_sip_cfg_default(c);
    c->timer_b_proceeding = true;
    c->trying_delay = role == OSN_ELEM_UAS ? -1 : 0;
}

/* The key of the SipHash the node's wire layer hashes Call-IDs with: fixed, so that a choice
 * made from a call's Call-ID (a fan-out's ACK without a Route) is the same in every run, and
 * the reference and the simulator can be given the number the node computes. */
static void wire_key(void)
{
    static const uint8_t key[16] = {7, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    osn_sip_wire_key_set(key);
}

/* The Call-ID of call `call` as the node's transaction layer numbers it (its hash, never 0):
 * the node's requests say "Call-ID: cN@test". */
static uint64_t call_key(int call)
{
    char id[16];
    int k = snprintf(id, sizeof id, "c%d@test", call);
    uint64_t h = osn_sip_wire_hash(id, (size_t)k);
    return h ? h : 1;
}

/* ---- the reference driver: the element API on the transaction layer, numbers only ---- */

struct rtx {
    struct osn_sip_txn t;
    double at[2]; /* armed deadlines by slot, INFINITY when none */
    bool live;
    double t0;
    int hop; /* a client transaction's next hop of several, -1 with one; OSN_ELEM_HOP_NONE for
                the callee's BYE going upstream; the callee's BYE's server transaction: the
                server it came from, as the node's trace names it */
    bool up; /* its requests go upstream, its responses down (the callee's request, 'b') */
};

struct ref {
    struct osn_sip_layer sip;
    struct osn_sip_cfg cfg;
    struct osn_elem e;
    struct osn_elem_hops hops; /* the script's next hops when it has several (e.hops) */
    struct osn_elem_hop hop_room[OSN_ELEM_MAX_HOPS]; /* hops.h */
    /* server [call][0 INVITE, 1 BYE, 2 the callee's BYE]; client [call][0 INVITE, 1 BYE or
     * CANCEL, 2 INVITE, 3 the callee's BYE]: a failover starts the INVITE's new client
     * transaction in the other INVITE slot (inv[call]) while the one that failed ends its own
     * way */
    struct rtx s[NCALL][3], c[NCALL][4];
    int inv[NCALL];
    struct osn_uas_2xx uas[NCALL];
    double t2xx[NCALL];
    double tring[NCALL];      /* UAS: the ring timer's deadline, INFINITY none */
    double ring;              /* UAS: the script's ring delay */
    bool cancel_later[NCALL]; /* proxy: a CANCEL kept for the call's INVITE branch */
    int mf[NCALL][3];         /* the Max-Forwards of the request that started s[call][k] */
    bool known[NCALL];        /* UAS: the call answered 2xx and not yet ended by a BYE's 2xx */
    bool loop[NCALL];         /* proxy: the call's INVITE is one we forwarded, back (event L) */
    /* The one driver difference in what the element is told: the simulator's record of the
     * requests its TU took for a call outlives their transactions (net_tu.c), the node keeps
     * none (a request after its transaction ended is new to it). `record` runs the former. */
    bool record, handled[NCALL][3];
    bool big[NCALL]; /* proxy: the call's INVITE does not fit in a datagram once forwarded */
    bool rr_off;     /* the script's: no proxy Record-Routes */
    double rate;     /* the per-source budget, 0 off, and the one source's bucket */
    struct osn_elem_budget budget;
    /* the core's CPU (as the node's recv.c): its server, queued events, new requests waiting */
    struct osn_elem_server server;
    struct osn_ctl *srv;
    const double *cost;
    double cpu_t, t_svc; /* nominal end of the last service; the completion due, or INFINITY */
    struct qev {
        struct osn_elem_item item;
        struct event ev;
        bool pending;
    } q[32];
    int nq, waiting[NCALL][2]; /* new requests queued without a transaction, by call and kind */
    double now;
    struct result *r;
};

/* The slot of a request of `method` in s[call][] and c[call][]: the INVITE's, or the
 * non-INVITE's. */
static int slot_of(int method)
{
    return method == OSN_SIP_BYE || method == OSN_SIP_CANCEL;
}

static struct osn_sip_msg ref_req(int call, int method, uint64_t branch)
{
    return (struct osn_sip_msg){.method = (uint8_t)method,
                                .cseq = method == OSN_SIP_BYE ? 2 : 1,
                                .retry_after = -1,
                                .call_id = (uint64_t)call + 1,
                                .branch = branch,
                                .sent_by = 7,
                                .from_tag = 11};
}

static void ref_apply(struct ref *f, struct rtx *x, int call, const struct osn_sip_out *o);

/* Where the callee's BYE goes from here (event b): its Route holds our value alone (the core
 * took its own), so osn_proxy_route sends it to the Request-URI, the caller's Contact,
 * upstream. */
static void callee_route(const struct ref *f, struct osn_proxy_route_out *ro)
{
    struct osn_proxy_route_in in = {.method = OSN_SIP_BYE,
                                    .nroute = 1,
                                    .top_is_us = true,
                                    .in_dialog = true,
                                    .record_route = !f->rr_off};
    osn_proxy_route(&in, ro);
}

static void ref_act(struct ref *f, struct rtx *x, int call, const struct osn_elem_actions *a,
                    const struct osn_sip_msg *resp)
{
    for (int i = 0; i < a->n; i++) {
        const struct osn_elem_action *y = &a->a[i];
        struct osn_sip_out o;
        switch (y->kind) {
        case OSN_ELEM_A_RESPOND:
        case OSN_ELEM_A_RESEND_2XX:
        case OSN_ELEM_A_RELAY: {
            struct osn_sip_msg m = osn_elem_response(&x->t.req, y->status, y->retry_after);
            if (resp)
                m.to_tag = resp->to_tag;
            if (osn_sip_stxn_respond(&f->sip, &x->t, &m, f->now, &o) == 0)
                ref_apply(f, x, call, &o);
            /* As the node's: the calls the UAS knows, from the INVITE's 2xx to the BYE's. */
            if (f->e.role == OSN_ELEM_UAS && y->kind == OSN_ELEM_A_RESPOND && y->status >= 200 &&
                y->status < 300 && x->t.req.method != OSN_SIP_CANCEL)
                f->known[call] = x->t.req.method == OSN_SIP_INVITE;
            break;
        }
        case OSN_ELEM_A_FORWARD: {
            int k = x->t.req.method == OSN_SIP_BYE;
            if (x == &f->s[call][2]) {
                struct osn_proxy_route_out ro;
                callee_route(f, &ro);
                struct rtx *c = &f->c[call][3];
                struct osn_sip_msg m;
                osn_proxy_forward_request(&x->t.req, 1003 + (uint64_t)call * 10, &m);
                *c = (struct rtx){.at = {INFINITY, INFINITY},
                                  .live = true,
                                  .t0 = f->now,
                                  .hop = y->hop,
                                  .up = ro.target == OSN_PROXY_TO_URI};
                if (osn_sip_ctxn_start(&f->sip, &c->t, &m, f->now, &o) == 0)
                    ref_apply(f, c, call, &o);
                break;
            }
            if (f->big[call]) { /* as the node's forward(): the element's answer, uncounted */
                struct osn_elem_actions b;
                osn_elem_on_forward_failed(true, &b);
                ref_act(f, x, call, &b, NULL);
                continue;
            }
            if (!k && f->c[call][f->inv[call]].live) /* a failover: the other INVITE slot */
                f->inv[call] = 2 - f->inv[call];
            struct rtx *c = &f->c[call][k ? 1 : f->inv[call]];
            struct osn_sip_msg m;
            osn_proxy_forward_request(
                    &x->t.req, 1000 + (uint64_t)call * 10 + (uint64_t)(k ? 1 : f->inv[call]), &m);
            *c = (struct rtx){.at = {INFINITY, INFINITY},
                              .live = true,
                              .t0 = f->now,
                              .hop = f->e.hops ? y->hop : -1};
            if (osn_sip_ctxn_start(&f->sip, &c->t, &m, f->now, &o) == 0)
                ref_apply(f, c, call, &o);
            break;
        }
        case OSN_ELEM_A_BYE_UNACKED: { /* the UAS's BYE, up to the caller (13.3.1.4) */
            struct rtx *c = &f->c[call][3];
            struct osn_sip_msg m = {.method = OSN_SIP_BYE,
                                    .cseq = 1,
                                    .retry_after = -1,
                                    .call_id = call_key(call),
                                    .branch = 2003 + (uint64_t)call * 10};
            *c = (struct rtx){
                    .at = {INFINITY, INFINITY}, .live = true, .t0 = f->now, .hop = -1, .up = true};
            if (osn_sip_ctxn_start(&f->sip, &c->t, &m, f->now, &o) == 0)
                ref_apply(f, c, call, &o);
            break;
        }
        case OSN_ELEM_A_DROP:
            osn_sip_txn_abort(&f->sip, &x->t);
            x->live = false;
            break;
        case OSN_ELEM_A_FORWARD_ACK: {
            /* With several next hops, the element's choice: the INVITE's core is in the
             * dialog's route set when it Record-Routed (every proxy does, unless rr_off). */
            int hop = -1;
            if (f->e.hops)
                hop = osn_elem_hops_ack(f->e.hops, f->now,
                                        f->rr_off ? -1 : f->c[call][f->inv[call]].hop,
                                        call_key(call));
            trace(f->r, f->now, true, hop, OSN_SIP_ACK, 0);
            break;
        }
        case OSN_ELEM_A_ACKED:
            f->uas[call].acked = true;
            break;
        case OSN_ELEM_A_ARM_2XX:
            if (x->live)
                f->t2xx[call] = a->at;
            break;
        case OSN_ELEM_A_ARM_RING:
            if (x->live)
                f->tring[call] = a->at;
            break;
        case OSN_ELEM_A_CANCEL_LATER:
            f->cancel_later[call] = true;
            break;
        case OSN_ELEM_A_RESPOND_INVITE: { /* the INVITE the CANCEL x cancels, call's slot 0 */
            struct rtx *inv = &f->s[call][0];
            struct osn_sip_msg m = osn_elem_response(&inv->t.req, y->status, y->retry_after);
            if (osn_sip_stxn_respond(&f->sip, &inv->t, &m, f->now, &o) == 0)
                ref_apply(f, inv, call, &o);
            break;
        }
        case OSN_ELEM_A_CANCEL_BRANCH: { /* RFC 3261 9.1: the forwarded INVITE, method CANCEL */
            struct rtx *c = &f->c[call][1], *inv = &f->c[call][f->inv[call]];
            struct osn_sip_msg m = inv->t.req;
            m.method = OSN_SIP_CANCEL;
            m.oc = (struct osn_sip_oc){0};
            *c = (struct rtx){
                    .at = {INFINITY, INFINITY}, .live = true, .t0 = f->now, .hop = inv->hop};
            if (osn_sip_ctxn_start(&f->sip, &c->t, &m, f->now, &o) == 0)
                ref_apply(f, c, call, &o);
            break;
        }
        case OSN_ELEM_A_COUNT:
            break;
        }
        f->r->count[y->count]++;
    }
}

static void ref_tu(struct ref *f, struct rtx *x, int call, const struct osn_sip_out *o)
{
    struct osn_elem_actions a;
    if (x->t.role == OSN_SIP_CLIENT && f->e.role == OSN_ELEM_UAS) {
        /* The UAS's own BYE (a 2xx never acknowledged): its answer or Timer F ends the call, as
         * the node's hangup_event. */
        if (o->tu != OSN_SIP_TU_RESPONSE || o->msg->status >= 200)
            f->known[call] = false;
        return;
    }
    if (x->t.role == OSN_SIP_CLIENT) {
        /* A CANCEL the element sent has no server transaction upstream: it ends here. */
        struct rtx *up = x->t.req.method == OSN_SIP_CANCEL ? NULL
                         : x == &f->c[call][3]             ? &f->s[call][2]
                                               : &f->s[call][x->t.req.method == OSN_SIP_BYE];
        bool resp = o->tu == OSN_SIP_TU_RESPONSE;
        /* As the node's: a request its route sent (the callee's BYE) never fails over. */
        (x == &f->c[call][3] ? osn_elem_on_client_event_routed : osn_elem_on_client_event_hop)(
                &f->e, x->hop, f->now, x->t0, o->tu, resp ? o->msg->status : 0,
                resp ? o->msg->retry_after : -1, x->t.req.method,
                up && up->live ? up->t.state : OSN_SIP_NOSTATE, &a);
        ref_act(f, up, call, &a, resp ? o->msg : NULL);
        if (x->t.req.method == OSN_SIP_INVITE && f->cancel_later[call]) {
            f->cancel_later[call] = osn_elem_on_cancel_later(o->tu, resp ? o->msg->status : 0, &a);
            ref_act(f, up, call, &a, NULL);
        }
    } else if (o->tu == OSN_SIP_TU_REQUEST && x->t.req.method == OSN_SIP_CANCEL) {
        /* RFC 3261 9.2: the INVITE it cancels has its branch (the call's slot 0, when live). */
        struct rtx *inv = &f->s[call][0], *br = &f->c[call][f->inv[call]];
        bool match = inv->live && inv->t.req.branch == x->t.req.branch;
        osn_elem_on_cancel_hop(&f->e, br->hop, f->now, match ? inv->t.state : OSN_SIP_NOSTATE,
                               match && br->live ? br->t.state : OSN_SIP_NOSTATE, &a);
        ref_act(f, x, call, &a, NULL);
    } else if (o->tu == OSN_SIP_TU_REQUEST) {
        int k = (int)(x - f->s[call]); /* its server slot */
        bool *handled = &f->handled[call][k];
        if (f->e.role == OSN_ELEM_UAS) { /* as osn_elem_on_request, with the ring delay */
            struct osn_uas_request q = {.method = x->t.req.method, .known = f->known[call]};
            q.ring = q.method == OSN_SIP_INVITE ? f->ring : 0;
            osn_elem_on_uas_request(&f->e, f->now, &q, f->record && *handled, &f->uas[call], &a);
        } else if (k == 2) {
            /* The callee's BYE goes to the caller's Contact: none of our next hops. */
            struct osn_proxy_route_out ro;
            callee_route(f, &ro);
            assert_int_equal(ro.target, OSN_PROXY_TO_URI);
            osn_elem_on_request_hop(&f->e, OSN_ELEM_HOP_NONE, f->now, x->t.req.method,
                                    f->mf[call][k], f->record && *handled, f->loop[call], &a);
        } else {
            osn_elem_on_request(&f->e, f->now, x->t.req.method, f->mf[call][k],
                                f->record && *handled, f->known[call], f->loop[call], &f->uas[call],
                                &a);
        }
        *handled = true;
        ref_act(f, x, call, &a, NULL);
    } else if (o->tu == OSN_SIP_TU_ACK) {
        osn_elem_on_ack(&f->e, -1, &a);
        ref_act(f, x, call, &a, NULL);
    }
}

static void ref_apply(struct ref *f, struct rtx *x, int call, const struct osn_sip_out *o)
{
    for (int i = 0; i < o->ntimer; i++)
        x->at[o->timer[i].slot] = o->timer[i].set ? o->timer[i].at : INFINITY;
    for (int i = 0; i < o->nsend; i++)
        trace(f->r, f->now, (x->t.role == OSN_SIP_CLIENT) != x->up, x->hop, o->send[i].msg->method,
              o->send[i].msg->status);
    if (o->tu != OSN_SIP_TU_NONE)
        ref_tu(f, x, call, o);
    if (o->terminated)
        x->live = false;
}

static void ref_service_done(struct ref *f);

/* Fires what is due by `until`, earliest first (ties: servers before clients, as armed). */
static void ref_run_to(struct ref *f, double until)
{
    for (;;) {
        /* Due means at or before `until`, as the node's heap has it; the earliest first. */
        double best = nextafter(until, INFINITY);
        struct rtx *bx = NULL;
        int bslot = -1, bcall = -1;
        for (int c = 0; c < NCALL; c++) {
            if (f->t2xx[c] < best) {
                best = f->t2xx[c];
                bx = NULL;
                bslot = 2;
                bcall = c;
            }
            if (f->tring[c] < best) {
                best = f->tring[c];
                bx = NULL;
                bslot = 3;
                bcall = c;
            }
            for (int k = 0; k < 7; k++) {
                struct rtx *x = k < 3 ? &f->s[c][k] : &f->c[c][k - 3];
                for (int sl = 0; x->live && sl < 2; sl++)
                    if (x->at[sl] < best) {
                        best = x->at[sl];
                        bx = x;
                        bslot = sl;
                        bcall = c;
                    }
            }
        }
        if (f->t_svc < best) {
            f->now = f->t_svc;
            ref_service_done(f);
            continue;
        }
        if (bslot < 0)
            break;
        f->now = best;
        struct osn_sip_out o;
        if (bslot == 3) { /* the ring is over: the element answers the INVITE, or not */
            struct rtx *x = &f->s[bcall][0];
            struct osn_elem_actions a;
            f->tring[bcall] = INFINITY;
            osn_elem_on_ring_timer(&f->e, f->now, x->live ? x->t.state : 0, &f->uas[bcall], &a);
            ref_act(f, x, bcall, &a, NULL);
            continue;
        }
        if (bslot == 2) {
            struct rtx *x = &f->s[bcall][0];
            struct osn_elem_actions a;
            f->t2xx[bcall] = INFINITY;
            osn_elem_on_2xx_timer(&f->e, f->now, &f->uas[bcall],
                                  x->live && x->t.state == OSN_SIP_ACCEPTED, f->known[bcall], &a);
            ref_act(f, x, bcall, &a, NULL);
            continue;
        }
        bx->at[bslot] = INFINITY;
        if (osn_sip_txn_timer(&f->sip, &bx->t, bx->t.tid[bslot], f->now, &o) == 0)
            ref_apply(f, bx, bcall, &o);
    }
    f->now = until;
}

static void ref_process(struct ref *f, const struct event *e, bool shed)
{
    struct event ev = *e;
    struct result *r = f->r;
    int call = ev.call;
    struct osn_sip_out o;
    {
        if (ev.kind == 'R') { /* from the next hop, to the INVITE's (or CANCEL's) client txn */
            struct rtx *x = ev.to_up ? &f->c[call][3]
                                     : &f->c[call][ev.to_cancel || ev.to_bye ? 1 : f->inv[call]];
            struct osn_sip_msg m = x->t.req;
            m.status = (uint16_t)ev.status;
            m.to_tag = ev.status > 100 ? 99 : 0;
            m.retry_after = ev.retry_after;
            if (ev.oc)
                m.oc = (struct osn_sip_oc){.flags = OSN_SIP_OC_PRESENT | OSN_SIP_OC_VALUE |
                                                    OSN_SIP_OC_ALGO | OSN_SIP_OC_VALIDITY |
                                                    OSN_SIP_OC_SEQ,
                                           .algo = OSN_SIP_ALGO_LOSS,
                                           .value = 100,
                                           .validity_ms = 10000,
                                           .seq_int = 1};
            if (x->hop == OSN_ELEM_HOP_NONE) /* from upstream: no next hop's feedback */
                ;
            else if (f->e.hops)
                osn_elem_hops_on_feedback(f->e.hops, x->hop, f->now, &m.oc);
            else
                osn_proxy_on_feedback(f->e.cli, f->now, &m.oc);
            if (x->live && osn_sip_txn_matches(&x->t, &m) &&
                osn_sip_txn_recv(&f->sip, &x->t, &m, f->now, &o) == 0)
                ref_apply(f, x, call, &o);
            else
                r->count[OSN_ELEM_C_STRAY]++;
            return;
        }
        bool ack = ev.kind == 'A' || ev.kind == 'Z' || ev.kind == 'K';
        int method = ack                                ? OSN_SIP_ACK
                     : ev.kind == 'B' || ev.kind == 'b' ? OSN_SIP_BYE
                     : ev.kind == 'C'                   ? OSN_SIP_CANCEL
                                                        : OSN_SIP_INVITE;
        uint64_t branch = ev.kind == 'A' || ev.kind == 'Z' ? 500 + (uint64_t)call
                          : ev.kind == 'b'                 ? 900 + (uint64_t)call
                          : ev.kind == 'B'                 ? 300 + (uint64_t)call
                          : ev.kind == 'L'                 ? 700 + (uint64_t)call
                                                           : 100 + (uint64_t)call;
        struct osn_sip_msg m = ref_req(call, method, branch);
        int mf = ev.kind == 'M' || ev.kind == 'Z' ? 0 : ev.kind == 'L' ? 69 : 70;
        struct rtx *x = &f->s[call][ev.kind == 'b' ? 2 : slot_of(method)];
        if (x->live && osn_sip_txn_matches(&x->t, &m)) {
            if (osn_sip_txn_recv(&f->sip, &x->t, &m, f->now, &o) == 0)
                ref_apply(f, x, call, &o);
        } else if (ack) {
            struct osn_elem_actions a;
            osn_elem_on_ack(&f->e, mf, &a);
            ref_act(f, NULL, call, &a, NULL);
        } else {
            /* the callee's request came from downstream: its responses go back down */
            *x = (struct rtx){.at = {INFINITY, INFINITY},
                              .live = true,
                              .t0 = f->now,
                              .hop = ev.kind == 'b' && f->e.hops ? f->c[call][f->inv[call]].hop
                                                                 : -1,
                              .up = ev.kind == 'b'};
            f->mf[call][x - f->s[call]] = mf;
            f->loop[call] = ev.kind == 'L';
            f->big[call] = ev.kind == 'X';
            if (osn_sip_stxn_start(&f->sip, &x->t, &m, f->now, &o) == 0) {
                struct osn_elem_actions a;
                osn_elem_stxn_started(shed, 0, &o, &a);
                ref_apply(f, x, call, &o);
                if (a.n && x->live)
                    ref_act(f, x, call, &a, NULL);
            }
        }
    }
}

/* The kind of event e for the core's server now: as recv.c's request_kind (a request matching
 * its server transaction is a copy); `arrival` adds a copy whose original waits queued. */
static int ref_kind(struct ref *f, const struct event *e, bool arrival)
{
    if (e->kind == 'R')
        return OSN_ELEM_K_RESP;
    if (e->kind == 'A' || e->kind == 'Z' || e->kind == 'K')
        return OSN_ELEM_K_ACK;
    if (e->kind == 'b') { /* the callee's BYE: a BYE to the server, in a slot of its own */
        struct rtx *y = &f->s[e->call][2];
        struct osn_sip_msg m = ref_req(e->call, OSN_SIP_BYE, 900 + (uint64_t)e->call);
        return y->live && osn_sip_txn_matches(&y->t, &m) ? OSN_ELEM_K_RETX : OSN_ELEM_K_BYE;
    }
    int k = e->kind == 'B';
    struct rtx *x = &f->s[e->call][k];
    struct osn_sip_msg m = ref_req(e->call, k ? OSN_SIP_BYE : OSN_SIP_INVITE,
                                   k ? 300 + (uint64_t)e->call : 100 + (uint64_t)e->call);
    if ((x->live && osn_sip_txn_matches(&x->t, &m)) || (arrival && f->waiting[e->call][k]))
        return OSN_ELEM_K_RETX;
    return k ? OSN_ELEM_K_BYE : OSN_ELEM_K_INVITE;
}

static void ref_start_service(struct ref *f)
{
    struct osn_elem_item *it;
    int fifo;
    while ((it = osn_elem_server_next(&f->server, f->now, &fifo))) {
        struct qev *q = OSN_CONTAINER_OF(it, struct qev, item);
        if (!it->reject)
            it->kind = (uint8_t)ref_kind(f, &q->ev, false);
        double start = f->cpu_t > it->t_arr ? f->cpu_t : it->t_arr;
        f->cpu_t = start + f->cost[it->kind];
        osn_elem_server_begin(&f->server, it);
        f->t_svc = f->cpu_t;
    }
}

static void ref_service_done(struct ref *f)
{
    struct osn_elem_item *it = osn_elem_server_depart(&f->server, f->now);
    struct qev *q = OSN_CONTAINER_OF(it, struct qev, item);
    f->t_svc = INFINITY;
    ref_process(f, &q->ev, it->reject);
    if (q->pending)
        f->waiting[q->ev.call][q->ev.kind == 'B']--;
    ref_start_service(f);
}

/* An event reaches the element: at once, or through the core's server (recv.c's flow). */
static void ref_arrive(struct ref *f, const struct event *e)
{
    /* As the node's recv.c, before its server: the source's budget, for requests but ACKs. */
    bool request = e->kind != 'R' && e->kind != 'A' && e->kind != 'Z' && e->kind != 'K';
    if (f->rate > 0 && request) {
        switch (osn_elem_budget_take(&f->budget, f->now, f->rate)) {
        case OSN_ELEM_BUDGET_PASS:
            break;
        case OSN_ELEM_BUDGET_503: /* stateless: once, nothing resends it */
            trace(f->r, f->now, false, -1, 0, 503);
            return;
        case OSN_ELEM_BUDGET_DROP:
            return;
        }
    }
    if (!f->cost) {
        ref_process(f, e, false);
        return;
    }
    int kind = ref_kind(f, e, true);
    bool again = false;
    if (e->kind == 'R') {
        struct rtx *x = &f->c[e->call][f->inv[e->call]];
        again = x->live && x->t.has_resp && x->t.resp.status == e->status;
    }
    enum osn_ctl_msg ck =
            osn_elem_ctl_msg(kind,
                             e->kind == 'B'                                       ? OSN_SIP_BYE
                             : e->kind == 'R' || e->kind == 'I' || e->kind == 'M' ? OSN_SIP_INVITE
                                                                                  : OSN_SIP_ACK,
                             again);
    bool shed_able = e->kind == 'I' || e->kind == 'M' || e->kind == 'B';
    if (f->cost[kind] <= 0) {
        ref_process(f, e, false);
        return;
    }
    assert_true(f->nq < 32);
    struct qev *q = &f->q[f->nq++];
    struct osn_elem_item *evicted;
    *q = (struct qev){.ev = *e};
    switch (osn_elem_server_arrive(&f->server, f->now, &q->item, kind, ck, shed_able, false,
                                   &evicted)) {
    case OSN_ELEM_HANDLE_NOW:
        ref_process(f, e, q->item.reject);
        return;
    case OSN_ELEM_DROPPED:
        return;
    case OSN_ELEM_QUEUED:
        assert_null(evicted);
        if (kind == OSN_ELEM_K_INVITE || kind == OSN_ELEM_K_BYE) {
            q->pending = true;
            f->waiting[e->call][e->kind == 'B']++;
        }
        if (!f->server.cur)
            ref_start_service(f);
        return;
    }
}

static void ref_run(const struct script *sc, bool record, struct result *r)
{
    struct ref *f = calloc(1, sizeof *f);
    struct event ev;
    assert_non_null(f);
    f->r = r;
    f->record = record;
    f->rr_off = sc->rr_off;
    sip_cfg(&f->cfg, sc->role);
    assert_int_equal(osn_sip_layer_init_unindexed(&f->sip, &f->cfg), 0);
    f->e = (struct osn_elem){.role = sc->role, .cli = NULL, .sip = &f->cfg};
    if (sc->hops > 1) {
        f->hops = (struct osn_elem_hops){.n = sc->hops, .down_time = DOWN_TIME, .h = f->hop_room};
        for (int i = 0; i < sc->hops; i++)
            f->hops.h[i].weight = 1;
        f->e.hops = &f->hops;
    }
    f->rate = sc->rate;
    if (sc->ctl && !sc->core) {
        struct osn_ctl_cfg cc;
        osn_ctl_cfg_default(&cc);
        assert_int_equal(osn_ctl_new(&f->e.cli, sc->ctl, &cc), 0);
    }
    if (sc->core) {
        struct osn_ctl_cfg cc;
        core_ctl_cfg(&cc);
        assert_int_equal(osn_ctl_new(&f->srv, sc->ctl, &cc), 0);
        f->cost = core_cost;
    }
    osn_elem_server_init(&f->server, core_cost, 10000, f->srv, 0);
    f->t_svc = INFINITY;
    for (int c = 0; c < NCALL; c++)
        f->t2xx[c] = f->tring[c] = INFINITY;
    f->ring = sc->ring;
    for (const char *p = sc->events; (p = next_event(p, &ev));) {
        ref_run_to(f, ev.t);
        if (ev.kind != 'T')
            ref_arrive(f, &ev);
    }
    hop_counts(r, f->e.hops);
    osn_sip_layer_release(&f->sip);
    osn_ctl_free(f->e.cli);
    osn_ctl_free(f->srv);
    free(f);
}

/* ---- the node's driver, without its socket ---- */

static struct result *g_res;
static char g_fwd[NCALL][2][2048]; /* the last request the node sent down, by call and kind */
static int g_fwd_hop[NCALL][2];    /* and the next hop it went to (0 with one) */
/* What the caller learnt of its dialog from the last 2xx to its INVITE the node sent up: its
 * route set, the Record-Route values reversed, as one Route header line ("" none), and the
 * remote target, the Contact's URI (RFC 3261 12.1.2) */
static char g_route[NCALL][512], g_target[NCALL][128];
/* The callee's route set as it reaches this element (Record-Route in order; at an edge without
 * the core's value, which the core took), as a Route line, and the request the node sent up
 * last by call (the callee's BYE on its way to the caller) */
static char g_croute[NCALL][512], g_up[NCALL][2048];
static const struct script *g_sc;   /* the script the node runs */
static char g_ufwd[NCALL][3][2048]; /* the generator's: INVITE, BYE, CANCEL by call */

/* The seam: what the node would send, recorded (and the requests kept to answer them); down
 * when it goes to a next hop, `hop` which of several (-1 with one). */
static void record(struct node *n, bool down, int hop, const char *p, size_t len)
{
    static struct osn_sip_wire pm;
    struct osn_sip_msg m;
    assert_int_equal(osn_sip_wire_parse(&pm, p, len), OSN_SIP_WIRE_ACCEPT);
    assert_int_equal(osn_sip_wire_to_txn(&pm, &m), 0);
    trace(g_res, n->now, down, hop, m.method, m.status);
    if (!down && m.status >= 200 && m.status < 300 && m.method == OSN_SIP_INVITE && !n->gen) {
        /* The caller's route set and remote target, as it takes them from the 2xx. */
        int call = pm.call_id.p[1] - '0';
        assert_true(call >= 0 && call < NCALL);
        size_t k = 0;
        g_route[call][0] = 0;
        for (int i = pm.nrecord_route - 1; i >= 0; i--)
            k += (size_t)snprintf(g_route[call] + k, sizeof g_route[call] - k, "%s%.*s",
                                  k ? ", " : "Route: ", (int)pm.record_route[i].value.n,
                                  pm.record_route[i].value.p);
        if (k)
            snprintf(g_route[call] + k, sizeof g_route[call] - k, "\r\n");
        if (pm.ncontact > 0)
            snprintf(g_target[call], sizeof g_target[call], "%.*s", (int)pm.contact[0].uri.n,
                     pm.contact[0].uri.p);
        k = 0;
        g_croute[call][0] = 0;
        for (int i = g_sc->core ? 0 : 1; i < pm.nrecord_route; i++)
            k += (size_t)snprintf(g_croute[call] + k, sizeof g_croute[call] - k, "%s%.*s",
                                  k ? ", " : "Route: ", (int)pm.record_route[i].value.n,
                                  pm.record_route[i].value.p);
        if (k)
            snprintf(g_croute[call] + k, sizeof g_croute[call] - k, "\r\n");
    }
    if (!down && m.status == 0 && !n->gen) {
        int call = pm.call_id.p[1] - '0';
        assert_true(call >= 0 && call < NCALL && len < sizeof g_up[0]);
        memcpy(g_up[call], p, len);
        g_up[call][len] = 0;
    }
    if (down && m.status == 0 && m.method != OSN_SIP_ACK && n->gen) {
        /* the generator's Call-ID "SLOT.ATTEMPT.SALT@HOST": the call is its slot */
        int call = pm.call_id.p[0] - '0', k = m.method == OSN_SIP_INVITE ? 0
                                              : m.method == OSN_SIP_BYE  ? 1
                                                                         : 2;
        assert_true(call >= 0 && call < NCALL && len < sizeof g_ufwd[0][0]);
        memcpy(g_ufwd[call][k], p, len);
        g_ufwd[call][k][len] = 0;
    } else if (down && m.status == 0 && m.method != OSN_SIP_ACK) {
        int call = pm.call_id.p[1] - '0';
        int k = m.method == OSN_SIP_BYE || m.method == OSN_SIP_CANCEL;
        assert_true(len < sizeof g_fwd[0][0]);
        memcpy(g_fwd[call][k], p, len);
        g_fwd[call][k][len] = 0;
        g_fwd_hop[call][k] = hop < 0 ? 0 : hop;
    }
    n->st.datagrams_out++;
}

void udp_send_to(struct node *n, const union node_addr *to, const char *p, size_t len)
{
    int hop = hops_index(n, to);
    record(n, hop != NTX_NO_HOP, n->nhops > 1 ? hop : -1, p, len);
}

/* Where the node's datagrams come from (the caller, upstream: 127.0.0.1:5070), and its next
 * hops (127.0.0.1:5080, :5081): real addresses, which a Route or Contact URI can name. */
static union node_addr upstream;
static struct next_hop g_hop[2];

static union node_addr loopback(int port)
{
    union node_addr a = {.v4 = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)}};
    a.v4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return a;
}

static void node_feed(struct node *n, const char *text)
{
    node_datagram(n, text, strlen(text), &upstream);
}

/* As node_fire_due (state.c), but each deadline fires at its own time, so that the times on the
 * wire are the deadlines' and the two drivers can be compared to the microsecond; what a
 * deadline does is the node's own dispatch (node_fire). */
static void node_run_to(struct node *n, double until)
{
    const struct tm_entry *top;
    while ((top = timers_top(&n->timers)) && top->at <= until) {
        struct tm_entry e = *top;
        timers_pop(&n->timers);
        n->now = e.at;
        node_fire(n, &e);
    }
    n->now = until;
}

/* The response of the next hop with `status` to the call's INVITE the node forwarded last (or,
 * `other`, its BYE or CANCEL): its Vias, From, Call-ID and CSeq, a To tag beyond 100,
 * Retry-After when retry_after >= 0. One to the INVITE that may make a dialog (101..299, RFC
 * 3261 12.1.1) carries the Record-Route values of the INVITE, the core's above them at an edge
 * (the core Record-Routes too, unless rr_off: 16.6 step 4), and the callee's Contact: beyond
 * the core at an edge (:5090, none of the edge's next hops), the next hop itself at a core. */
static void node_response(struct node *n, int call, int status, bool oc, bool other,
                          int retry_after)
{
    char out[4096], line[1024];
    const char *p = g_fwd[call][other];
    size_t k = (size_t)snprintf(out, sizeof out, "SIP/2.0 %d Reason\r\n", status);
    if (!*p) {
        n->st.stray++; /* nothing was forwarded: the reference counts it so too */
        return;
    }
    bool dialog = !other && status > 100 && status < 300;
    if (dialog && !g_sc->core && !g_sc->rr_off)
        k += (size_t)snprintf(out + k, sizeof out - k, "Record-Route: <sip:127.0.0.1:%d;lr>\r\n",
                              5080 + g_fwd_hop[call][0]);
    if (dialog)
        k += (size_t)snprintf(out + k, sizeof out - k, "Contact: <sip:b@127.0.0.1:%d>\r\n",
                              g_sc->core ? 5080 : 5090);
    p = strstr(p, "\r\n") + 2;
    bool top = true;
    for (const char *e; (e = strstr(p, "\r\n")) && e != p; p = e + 2) {
        snprintf(line, sizeof line, "%.*s", (int)(e - p), p);
        if (oc && top && !strncmp(line, "Via:", 4)) {
            top = false;
            k += (size_t)snprintf(out + k, sizeof out - k,
                                  "%s;oc=100;oc-algo=\"loss\";oc-validity=10000;oc-seq=1.0\r\n",
                                  line);
            continue;
        }
        if (!strncmp(line, "Max-Forwards", 12) || !strncmp(line, "Content-Length", 14))
            continue;
        k += (size_t)snprintf(out + k, sizeof out - k, "%s%s\r\n", line,
                              !strncmp(line, "To:", 3) && status > 100 ? ";tag=ds" : "");
    }
    if (retry_after >= 0)
        k += (size_t)snprintf(out + k, sizeof out - k, "Retry-After: %d\r\n", retry_after);
    snprintf(out + k, sizeof out - k, "Content-Length: 0\r\n\r\n");
    node_feed(n, out);
}

/* The caller's answer `status` to the request the node sent up last for the call (the callee's
 * BYE): its Vias, From, To (tagged already), Call-ID and CSeq, from the caller's address. */
static void node_up_response(struct node *n, int call, int status)
{
    char out[4096], line[1024];
    const char *p = g_up[call];
    if (!*p) {
        n->st.stray++; /* nothing was sent up: the reference counts it so too */
        return;
    }
    size_t k = (size_t)snprintf(out, sizeof out, "SIP/2.0 %d Reason\r\n", status);
    p = strstr(p, "\r\n") + 2;
    for (const char *e; (e = strstr(p, "\r\n")) && e != p; p = e + 2) {
        snprintf(line, sizeof line, "%.*s", (int)(e - p), p);
        if (strncmp(line, "Max-Forwards", 12) && strncmp(line, "Content-Length", 14))
            k += (size_t)snprintf(out + k, sizeof out - k, "%s\r\n", line);
    }
    snprintf(out + k, sizeof out - k, "Content-Length: 0\r\n\r\n");
    node_feed(n, out);
}

/* The callee's BYE (event b), from the next hop: the callee's route set as it reaches us, the
 * caller's Contact as Request-URI, the dialog's tags the other way round (RFC 3261 12.2.1.1). */
static void node_callee_bye(struct node *n, int call)
{
    char text[2048];
    snprintf(text, sizeof text,
             "BYE sip:a@127.0.0.1:5070 SIP/2.0\r\n"
             "Via: SIP/2.0/UDP 127.0.0.1:5080;branch=z9hG4bKcbye%d\r\n"
             "%s"
             "Max-Forwards: 70\r\n"
             "From: <sip:b@127.0.0.1>;tag=ds\r\n"
             "To: <sip:a@127.0.0.1>;tag=fa\r\n"
             "Call-ID: c%d@test\r\n"
             "CSeq: 1 BYE\r\n"
             "Content-Length: 0\r\n\r\n",
             call, g_croute[call], call);
    node_datagram(n, text, strlen(text), &g_hop[0].addr);
}

static void node_request(struct node *n, const struct event *ev)
{
    static char text[66000];
    bool ack2xx = ev->kind == 'A' || ev->kind == 'Z';
    if (ev->kind == 'L') { /* what went down for call 0 comes back up */
        if (*g_fwd[0][0])
            node_feed(n, g_fwd[0][0]);
        return;
    }
    const char *method = ev->kind == 'B'                                         ? "BYE"
                         : ev->kind == 'C'                                       ? "CANCEL"
                         : ev->kind == 'A' || ev->kind == 'Z' || ev->kind == 'K' ? "ACK"
                                                                                 : "INVITE";
    const char *branch = ack2xx ? "ack" : ev->kind == 'B' ? "bye" : "inv";
    int mf = ev->kind == 'M' || ev->kind == 'Z' ? 0 : 70;
    bool tagged = ev->kind != 'I' && ev->kind != 'M' && ev->kind != 'C' && ev->kind != 'X';
    /* The caller's requests in the dialog follow what it learnt from the 2xx (12.2.1.1). */
    bool dialog = ack2xx || ev->kind == 'B';
    const char *target = dialog && *g_target[ev->call] ? g_target[ev->call] : "sip:b@127.0.0.1";
    snprintf(text, sizeof text,
             "%s %s SIP/2.0\r\n"
             "Via: SIP/2.0/UDP 127.0.0.1:5070;branch=z9hG4bK%s%d\r\n"
             "%s"
             "Max-Forwards: %d\r\n"
             "From: <sip:a@127.0.0.1>;tag=fa\r\n"
             "To: <sip:b@127.0.0.1>%s\r\n"
             "Call-ID: c%d@test\r\n"
             "CSeq: %d %s\r\n"
             "Content-Length: %d\r\n\r\n",
             method, target, branch, ev->call, dialog ? g_route[ev->call] : "", mf,
             tagged ? ";tag=ds" : "", ev->call, ev->kind == 'B' ? 2 : 1,
             ev->kind == 'K' ? "ACK" : method, ev->kind == 'X' ? 65200 : 0);
    if (ev->kind == 'X') { /* 65,480 bytes: one datagram, but not with our Via on top */
        size_t k = strlen(text), body = 65480 - k;
        assert_true(k < 400);
        snprintf(strstr(text, "Content-Length: "), 64, "Content-Length: %zu\r\n\r\n", body);
        k = strlen(text);
        memset(text + k, 'x', 65480 - k);
        text[65480] = 0;
    }
    node_feed(n, text);
}

static void node_run(const struct script *sc, struct result *r)
{
    struct osn_node_cfg cfg;
    struct node *n = calloc(1, sizeof *n);
    struct event ev;
    assert_non_null(n);
    g_res = r;
    g_sc = sc;
    memset(g_fwd, 0, sizeof g_fwd);
    memset(g_route, 0, sizeof g_route);
    memset(g_target, 0, sizeof g_target);
    memset(g_croute, 0, sizeof g_croute);
    memset(g_up, 0, sizeof g_up);
    cfg = (struct osn_node_cfg){
            .max_transactions = 100000, .buffer = 10000, .ctl_kind = OSN_CTL_KIND_NONE};
    cfg.element = sc->role == OSN_ELEM_UAS ? OSN_NODE_UAS : OSN_NODE_EDGE;
    cfg.record_route = !sc->rr_off; /* as the simulator's proxies */
    cfg.per_source_rate = sc->rate;
    cfg.ring = sc->ring > 0 ? OSN_UAS_RING_DET : OSN_UAS_RING_NONE;
    cfg.ring_mean = sc->ring;
    n->cfg = &cfg;
    upstream = loopback(5070);
    for (int i = 0; i < 2; i++)
        g_hop[i] = (struct next_hop){.addr = loopback(5080 + i), .fd = -1};
    n->hops = g_hop;
    n->listen = loopback(5060); /* so that it knows its own Route value (RFC 3261 16.4) */
    n->nhops = sc->hops > 1 ? (size_t)sc->hops : 1;
    if (sc->hops > 1) { /* as config.c sets up next_hop = A, B */
        n->fan = (struct osn_elem_hops){.n = sc->hops, .down_time = DOWN_TIME, .h = n->fan_hop};
        for (int i = 0; i < sc->hops; i++)
            n->fan.h[i].weight = 1;
    }
    snprintf(n->host, sizeof n->host, "127.0.0.1");
    n->port = 5060;
    sip_cfg(&cfg.sip, sc->role);
    assert_int_equal(osn_sip_layer_init(&n->sip, &cfg.sip, 64), 0);
    wire_key();
    osn_ctl_cfg_default(&cfg.ctl);
    if (sc->ctl && !sc->core) {
        assert_int_equal(osn_ctl_kind_parse(sc->ctl, &cfg.ctl_kind), 0);
        assert_int_equal(osn_ctl_new(&n->cli, sc->ctl, &cfg.ctl), 0);
    }
    if (sc->core) {
        cfg.element = OSN_NODE_CORE;
        memcpy(cfg.cost, core_cost, sizeof cfg.cost);
        core_ctl_cfg(&cfg.ctl);
        assert_int_equal(osn_ctl_new(&n->srv, sc->ctl, &cfg.ctl), 0);
    }
    osn_elem_server_init(&n->server, cfg.cost, cfg.buffer, n->srv, 0);
    for (const char *p = sc->events; (p = next_event(p, &ev));) {
        node_run_to(n, ev.t);
        if (ev.kind == 'R' && ev.to_up)
            node_up_response(n, ev.call, ev.status);
        else if (ev.kind == 'R')
            node_response(n, ev.call, ev.status, ev.oc, ev.to_cancel || ev.to_bye, ev.retry_after);
        else if (ev.kind == 'b')
            node_callee_bye(n, ev.call);
        else if (ev.kind != 'T')
            node_request(n, &ev);
    }
    hop_counts(r, n->nhops > 1 ? &n->fan : NULL);
    /* A request the node sent upstream went to none of its next hops: its Via offers no oc
     * (RFC 7339 5.10: no client half of ours is for that server, none would read the answer). */
    for (int c = 0; c < NCALL; c++)
        assert_null(strstr(g_up[c], ";oc"));
    const struct osn_node_stats *st = &n->st;
    r->count[OSN_ELEM_C_FORWARDED] = st->calls_forwarded;
    r->count[OSN_ELEM_C_CALL_OK] = st->calls_ok;
    r->count[OSN_ELEM_C_BYE_OK] = st->bye_ok;
    r->count[OSN_ELEM_C_503] = st->rejected_503;
    r->count[OSN_ELEM_C_408] = st->timeouts_408;
    r->count[OSN_ELEM_C_483] = st->too_many_hops;
    r->count[OSN_ELEM_C_ACK_FWD] = st->acks_forwarded;
    r->count[OSN_ELEM_C_STRAY] = st->stray;
    r->count[OSN_ELEM_C_481] = st->no_dialog_481;
    r->count[OSN_ELEM_C_482] = st->loops_482;
    r->count[OSN_ELEM_C_513] = st->too_large_513;
    r->count[OSN_ELEM_C_CANCEL_FWD] = st->cancel_forwarded;
    r->count[OSN_ELEM_C_487] = st->cancelled_487;
    r->count[OSN_ELEM_C_BYE_UNACKED] = st->bye_unacked;
    /* every transaction ended with the script's last wait, kept ones too */
    assert_int_equal(n->live + n->kept.n, 0);
    node_release(n);
    free(n);
}

/* ---- the simulator's driver: one element of a simulated network (src/sim/net_probe.h) ---- */

static void sim_sent(void *arg, double t, bool down, const struct osn_sip_msg *m, int call, int hop)
{
    (void)call;
    trace(arg, t, down, hop, m->method, m->status);
}

/*
 * Why the simulator's driver cannot be given a script, or NULL. Its messages are structs that
 * carry what its network needs and no more (net_tu.c says so at its head): no Max-Forwards, no
 * sizes, no Vias to loop through, no source addresses, and its UACs send a BYE only
 * in a call the UAS answered. A script with such an event runs through the node and the
 * reference only.
 */
static const char *sim_cannot(const struct script *sc)
{
    static const struct {
        char kind;
        const char *why;
    } none[] = {
            {'M', "its messages carry no Max-Forwards"},
            {'Z', "its messages carry no Max-Forwards"},
            {'X', "its messages have no size"},
            {'L', "its messages have no Vias to loop"},
    };
    bool invited[NCALL] = {false};
    struct event ev;
    if (sc->rate > 0)
        return "its messages have no source address (per-source budget)";
    for (const char *p = sc->events; (p = next_event(p, &ev));) {
        for (size_t i = 0; i < sizeof none / sizeof none[0]; i++)
            if (ev.kind == none[i].kind)
                return none[i].why;
        if (ev.kind == 'I')
            invited[ev.call] = true;
        if (ev.kind == 'B' && !invited[ev.call])
            return "its UACs send a BYE only in a call the UAS answered";
    }
    return NULL;
}

static void sim_run(const struct script *sc, struct result *r)
{
    struct osn__probe_cfg pc = {.elem = sc->role == OSN_ELEM_UAS ? OSN__PROBE_UAS
                                        : sc->core               ? OSN__PROBE_CORE
                                                                 : OSN__PROBE_EDGE,
                                .ctl_kind = OSN_CTL_KIND_NONE,
                                .cost = sc->core ? core_cost : NULL,
                                .buffer = 10000,
                                .ring = sc->ring > 0 ? OSN_UAS_RING_DET : OSN_UAS_RING_NONE,
                                .ring_mean = sc->ring,
                                .send = sim_sent,
                                .arg = r,
                                .cores = sc->hops,
                                .down_time = DOWN_TIME,
                                .no_record_route = sc->rr_off};
    struct osn__net_probe *p;
    struct event ev;
    sip_cfg(&pc.sip, sc->role);
    osn_ctl_cfg_default(&pc.ctl);
    if (sc->core)
        core_ctl_cfg(&pc.ctl);
    if (sc->ctl)
        assert_int_equal(osn_ctl_kind_parse(sc->ctl, &pc.ctl_kind), 0);
    assert_int_equal(osn__net_probe_new(&p, &pc), 0);
    for (const char *q = sc->events; (q = next_event(q, &ev));) {
        assert_int_equal(osn__net_probe_run_to(p, ev.t), 0);
        if (ev.kind == 'R' && ev.to_up) {
            int e = osn__net_probe_up_response(p, ev.call, ev.status);
            assert_true(e >= 0);
            r->count[OSN_ELEM_C_STRAY] += e == 1;
        } else if (ev.kind == 'b') {
            assert_int_equal(osn__net_probe_callee_bye(p, ev.call), 0);
        } else if (ev.kind == 'R') {
            struct osn_sip_oc oc = {.flags = OSN_SIP_OC_PRESENT | OSN_SIP_OC_VALUE |
                                             OSN_SIP_OC_ALGO | OSN_SIP_OC_VALIDITY | OSN_SIP_OC_SEQ,
                                    .algo = OSN_SIP_ALGO_LOSS,
                                    .value = 100,
                                    .validity_ms = 10000,
                                    .seq_int = 1};
            int method = ev.to_cancel ? OSN_SIP_CANCEL : ev.to_bye ? OSN_SIP_BYE : OSN_SIP_INVITE;
            int e = osn__net_probe_response(p, ev.call, method, ev.status, ev.oc ? &oc : NULL,
                                            ev.retry_after);
            assert_true(e >= 0);
            r->count[OSN_ELEM_C_STRAY] += e == 1; /* nothing forwarded: as the node's column */
        } else if (ev.kind != 'T') {
            bool ack = ev.kind == 'A' || ev.kind == 'K';
            int method = ack              ? OSN_SIP_ACK
                         : ev.kind == 'B' ? OSN_SIP_BYE
                         : ev.kind == 'C' ? OSN_SIP_CANCEL
                                          : OSN_SIP_INVITE;
            /* Branches of the kinds the simulator's have (their two low bits, net_int.h's enum
             * bkind): the ACK of a 2xx B_ACK (net_server.c's in_dialog), so that a proxy off the
             * dialog's path lets it pass; the caller's BYE B_BYE and the INVITE B_INVITE, never
             * B_UBYE, the callee's BYE going up. The Call-ID the node's, so that a choice made
             * from it is the same. */
            uint64_t branch = ev.kind == 'A'   ? 502 + 4 * (uint64_t)ev.call
                              : ev.kind == 'B' ? 301 + 4 * (uint64_t)ev.call
                                               : 100 + 4 * (uint64_t)ev.call;
            struct osn_sip_msg m = ref_req(ev.call, method, branch);
            m.call_id = call_key(ev.call);
            assert_int_equal(osn__net_probe_request(p, ev.call, &m), 0);
        }
    }
    const uint64_t *count = osn__net_probe_counts(p);
    for (int c = 0; c < OSN_ELEM_NCOUNTS; c++)
        r->count[c] += count[c];
    hop_counts(r, osn__net_probe_hops(p));
    assert_int_equal(osn__net_probe_live(p), 0); /* every transaction ended, as the node's */
    osn__net_probe_free(p);
}

/* Whether two columns sent the same messages at the same times and counted the same. */
static bool same_result(const struct result *a, const struct result *b)
{
    return !strcmp(a->wire, b->wire) && !memcmp(a->count, b->count, sizeof a->count) &&
           !memcmp(a->hop, b->hop, sizeof a->hop);
}

static void show(const char *what, const char *name, const char *la, const struct result *a,
                 const char *lb, const struct result *b)
{
    printf("%s script '%s'\n-- %s:\n%s-- %s:\n%s", what, name, la, a->wire, lb, b->wire);
    for (int c = 1; c < OSN_ELEM_NCOUNTS; c++)
        if (a->count[c] || b->count[c])
            printf("   count %d: %s %llu, %s %llu\n", c, la, (unsigned long long)a->count[c], lb,
                   (unsigned long long)b->count[c]);
    static const char *const hn[H_N] = {"offered",  "sent", "invites", "shed",
                                        "timeouts", "503s", "downs",   "failovers"};
    for (int i = 0; i < 2; i++)
        for (int c = 0; c < H_N; c++)
            if (a->hop[i][c] || b->hop[i][c])
                printf("   server %d %s: %s %llu, %s %llu\n", i, hn[c], la,
                       (unsigned long long)a->hop[i][c], lb, (unsigned long long)b->hop[i][c]);
}

/*
 * Every script runs through the node's driver and the reference (as the node is told things:
 * no record); every script the simulator's messages can express runs through the simulator's
 * driver too, which must match the reference as the simulator is told things (its record), and
 * the node's column wherever the record changes nothing. So a script added here exercises both
 * drivers, and a difference between them is either the record or a failure.
 */
static void test_scripts(void **state)
{
    int failed = 0, both = 0;
    (void)state;
    wire_key(); /* the node's Call-ID numbers, for the reference too */
    for (size_t i = 0; i < sizeof scripts / sizeof scripts[0]; i++) {
        const struct script *sc = &scripts[i];
        static struct result ref, node, ref_rec, sim;
        memset(&ref, 0, sizeof ref);
        memset(&node, 0, sizeof node);
        ref_run(sc, false, &ref);
        node_run(sc, &node);
        ref.count[OSN_ELEM_C_NONE] = node.count[OSN_ELEM_C_NONE] = 0;
        ref.count[OSN_ELEM_C_LATE] = 0; /* the node has no such counter (it never knows) */
        bool ok = same_result(&ref, &node) && (!sc->expect || strstr(node.wire, sc->expect)) &&
                  (!sc->absent || !strstr(node.wire, sc->absent));
        if (!ok || getenv("OSN_TEST_VERBOSE"))
            show(ok ? "ok" : "DIFFERS", sc->name, "element API", &ref, "node", &node);
        failed += !ok;
        const char *why = sim_cannot(sc);
        if (why) {
            if (getenv("OSN_TEST_VERBOSE"))
                printf("script '%s': not in the simulator: %s\n", sc->name, why);
            continue;
        }
        memset(&ref_rec, 0, sizeof ref_rec);
        memset(&sim, 0, sizeof sim);
        ref_run(sc, true, &ref_rec);
        sim_run(sc, &sim);
        ref_rec.count[OSN_ELEM_C_NONE] = sim.count[OSN_ELEM_C_NONE] = 0;
        if (sc->rr_off) {
            /* The one count the worlds keep apart by design: the simulator's proxy off the
             * dialog's path lets its in-dialog messages pass as a router would, never taking
             * them in (net_server.c, pass_by), so it counts no ACK forwarded; the node, to
             * which such a caller sends them all the same (its outbound proxy), does. Where
             * the ACK goes is the element's decision in both, and on the wire. */
            ref_rec.count[OSN_ELEM_C_ACK_FWD] = sim.count[OSN_ELEM_C_ACK_FWD] = 0;
            node.count[OSN_ELEM_C_ACK_FWD] = ref.count[OSN_ELEM_C_ACK_FWD] = 0;
        }
        bool record_only = !same_result(&ref_rec, &ref); /* LATE counted: the record's */
        /* expect and absent hold for the simulator too, where the record changes nothing */
        ok = same_result(&ref_rec, &sim) &&
             (record_only ||
              (same_result(&sim, &node) && (!sc->expect || strstr(sim.wire, sc->expect)) &&
               (!sc->absent || !strstr(sim.wire, sc->absent))));
        if (!ok || getenv("OSN_TEST_VERBOSE"))
            show(ok ? "ok" : "DIFFERS", sc->name, "element API, with the record", &ref_rec,
                 "simulator", &sim);
        if (!ok && !record_only)
            show("DIFFERS", sc->name, "simulator", &sim, "node", &node);
        failed += !ok;
        both++;
    }
    assert_int_equal(failed, 0);
    assert_true(both >= 12); /* the floor of scripts through both drivers */
    assert_true(both >= 20); /* with the six CANCEL scripts since issue 33 (14 before) */
    assert_true(both >= 26); /* with the kept CANCEL and the UAS's ring delay (cancel2) */
    assert_true(both >= 28); /* with the two fan-out scripts (fail33) */
    assert_true(both >= 32); /* with the Route set at edge and core, the fan-out's ACKs (route33) */
    assert_true(both >= 33); /* with the caller's BYE under a shedding client half (bye33) */
    /* with the callee's BYE, which the simulator now carries out: the three scripts at the
     * edge, through the core, and crossing the caller's at the edge and at the core (simbye33) */
    assert_true(both >= 41);
}

/* ---- the UAC's call machine through both drivers (src/elem/uac_call.c) ---- */

/*
 * A UAC script: the caller's settings and a string of events, each `KIND[CALL]@TIME`:
 *   N    a new call (numbered 0, 1, ... in order)
 *   T    nothing: time runs to TIME (the timers due fire)
 *   STATUS[FLAGS][CALL]  the next hop answers the call's last INVITE with STATUS; FLAGS `b`:
 *        its BYE instead, `c`: its CANCEL instead, `rN`: with Retry-After N (s), `o`: with
 *        RFC 7339 feedback oc=100, loss, in its top Via (the caller's client half, if any, sheds
 *        every new call for its validity, 10 s)
 *   b    the callee's BYE (source.callee_hangs_up), from the next hop: the dialog's tags the
 *        other way round, the caller's Call-ID (for a call never started, one of the caller's
 *        form that names no call of its); the caller's answer goes back down (d:200, d:481)
 * The simulator's driver is its probe of the source (net_probe.h: its UAC, with the source's
 * patience, retry and hold settings); the node's is its load generator (gen.c) fed SIP text
 * with its timer heap. Both must send the same messages at the same times, and have done the
 * same things (the machine's actions carried out, by enum osn_uac_do) with the same outcomes.
 * `expect` lines are what RFC 3261 says must be on the wire (a behaviour's answer), `absent`
 * what must not.
 */
struct uac_script {
    const char *name;
    const char *events;
    double patience;   /* s, det; 0 none */
    double retry_prob; /* retrials with a det delay of retry_delay s */
    double retry_delay;
    int max_retries;
    bool honour; /* source.honour_retry_after */
    const char *expect[3];
    const char *absent;
    int outcome; /* the one call's outcome (enum osn_uac_outcome) */
    /* The fraction of calls the callee ends (source.callee_hangs_up): such a call arms no hold
     * and waits for the callee's BYE (event b) */
    double callee;
    int byes_in; /* the calls the callee ended, its BYE answered 200 (both drivers' byes_in) */
    /* The caller has a client half of loss toward its next hop ([control] at = edge: issue 30),
     * and sheds this many attempts itself (both drivers' shed_local) */
    bool client;
    int shed;
};

#define UAC_HOLD 1.0 /* s, mean */
#define UAC_SEED 7

static const struct uac_script uac_scripts[] = {
        {"call with hold and BYE: ACK at the 2xx (13.2.2.4), BYE after the hold (15.1.1)",
         "N@0 100@0.01 180@0.02 200@0.03 200b@5 T@40",
         0,
         0,
         0,
         0,
         false,
         {"  0.030 d:ACK"},
         "d:CANCEL",
         OSN_UAC_GOOD},
        {"patience runs out after the 180: CANCEL at once, its 487 ACKed (9.1, 17.1.1.3)",
         "N@0 180@0.1 T@1.5 200c@1.6 487@1.7 T@40",
         1,
         0,
         0,
         0,
         false,
         {"  1.000 d:CANCEL", "  1.700 d:ACK"},
         "d:BYE",
         OSN_UAC_ABANDONED},
        {"patience runs out before any 1xx: the CANCEL waits for the 180 (9.1)",
         "N@0 T@1.9 180@2 200c@2.1 487@2.2 T@40",
         1,
         0,
         0,
         0,
         false,
         {"  2.000 d:CANCEL"},
         "  1.000 d:CANCEL",
         OSN_UAC_ABANDONED},
        {"a 2xx crosses the CANCEL: ACKed, hung up at once (15)",
         "N@0 180@0.1 T@1.02 200@1.05 200c@1.1 200b@1.2 T@40",
         1,
         0,
         0,
         0,
         false,
         {"  1.000 d:CANCEL", "  1.050 d:ACK", "  1.050 d:BYE"},
         NULL,
         OSN_UAC_ABANDONED},
        {"503 with Retry-After 4: retried after 4 s, not the 1 s drawn (21.5.4)",
         "N@0 503r4@0.1 T@4 100@4.2 180@4.3 200@4.4 200b@9 T@50",
         0,
         1,
         1,
         2,
         true,
         {"  0.100 d:ACK", "  4.100 d:INVITE", "  4.400 d:ACK"},
         "  1.100 d:INVITE",
         OSN_UAC_GOOD},
        {"Timer B, then a retry after 1 s (17.1.1.2)",
         "N@0 T@33.5 200@33.6 200b@40 T@80",
         0,
         1,
         1,
         2,
         false,
         {" 33.000 d:INVITE"},
         NULL,
         OSN_UAC_GOOD},
        {"max_retries 1 reached: the second 503 is the call's",
         "N@0 503@0.1 T@1.15 503@1.2 T@40",
         0,
         1,
         1,
         1,
         false,
         {"  1.100 d:INVITE", "  1.200 d:ACK"},
         "  2.200 d:INVITE",
         OSN_UAC_REJECTED},
        {"Retry-After not honoured: retried after the 1 s drawn",
         "N@0 503r4@0.1 T@1.15 503@1.2 T@40",
         0,
         1,
         1,
         1,
         false,
         {"  1.100 d:INVITE"},
         "  4.100 d:INVITE",
         OSN_UAC_REJECTED},
        /* The callee's BYE at the caller (issue 33, osn_uac_call_on_bye_request): RFC 3261
         * 15.1.2, the caller answers 200 and the call is over, the callee's (byes_in); it sends
         * no BYE of its own. The callee ends every call here: the caller arms no hold. */
        {"the callee hangs up a call that is up: 200, counted in byes_in, no BYE of the caller's",
         "N@0 100@0.01 180@0.02 200@0.03 b@2 T@40",
         0,
         0,
         0,
         0,
         false,
         {"  0.030 d:ACK", "  2.000 d:200"},
         "d:BYE",
         OSN_UAC_GOOD,
         1,
         1},
        /* The callee's BYE crosses the caller's own (its hold of 1.595 s over: 15.1.2, each end
         * answers the other's): 200 all the same, not counted, and the answer to the caller's
         * BYE ends the call. */
        {"the callee's BYE crosses the caller's: 200, not counted in byes_in",
         "N@0 100@0.01 180@0.02 200@0.03 b@1.8 200b@1.9 T@40",
         0,
         0,
         0,
         0,
         false,
         {"  1.625 d:BYE", "  1.800 d:200"},
         "d:481",
         OSN_UAC_GOOD,
         0,
         0},
        /* A BYE whose Call-ID names no call of the caller's (12.2.2): 481, and the caller's own
         * call (0) goes on to its hold's BYE. */
        {"a callee's BYE for no call: 481, the caller's call unmoved",
         "N@0 100@0.01 180@0.02 200@0.03 b1@0.2 200b@1.7 T@40",
         0,
         0,
         0,
         0,
         false,
         {"  0.200 d:481", "  1.625 d:BYE"},
         "d:200",
         OSN_UAC_GOOD,
         0,
         0},
        /* The caller as overload-control client (issue 30, RFC 7339 5.3, osn_uac_call_admit):
         * the 2xx of call 0 says oc=100 (loss), so call 1 at 1 s is shed before its INVITE
         * leaves, failed as rejected (as if a 503 had come) and counted as shed; call 0 goes
         * on to its hold's BYE, which the client half does not hold back. */
        {"oc=100 in a response: the next new call is shed by the caller, counted, no INVITE",
         "N@0 100@0.01 180@0.02 200o@0.03 N@1 200b@1.7 T@40",
         0,
         0,
         0,
         0,
         false,
         {"  0.000 d:INVITE", "  1.625 d:BYE"},
         "  1.000 d:INVITE",
         OSN_UAC_REJECTED,
         0,
         0,
         true,
         1},
        /* The same without oc: call 1's INVITE leaves at 1 s (left unanswered, Timer B ends
         * it; the script's responses answer call 0's requests). */
        {"no oc in the responses: the caller's client half admits the next call",
         "N@0 100@0.01 180@0.02 200@0.03 N@1 200b@1.7 T@40",
         0,
         0,
         0,
         0,
         false,
         {"  1.000 d:INVITE", "  1.625 d:BYE"},
         NULL,
         OSN_UAC_GOOD,
         0,
         0,
         true,
         0},
};

struct uac_event {
    char kind; /* N, T, or R for a response */
    int call, status, retry_after, method;
    bool oc; /* the response carries oc=100, loss */
    double t;
};

static const char *uac_next_event(const char *p, struct uac_event *ev)
{
    while (*p == ' ')
        p++;
    if (!*p)
        return NULL;
    *ev = (struct uac_event){.retry_after = -1, .method = OSN_SIP_INVITE};
    if (*p >= '0' && *p <= '9') {
        ev->kind = 'R';
        ev->status = (int)strtol(p, (char **)&p, 10);
        for (;;) {
            if (*p == 'b')
                ev->method = OSN_SIP_BYE, p++;
            else if (*p == 'c')
                ev->method = OSN_SIP_CANCEL, p++;
            else if (*p == 'r')
                ev->retry_after = (int)strtol(p + 1, (char **)&p, 10);
            else if (*p == 'o')
                ev->oc = true, p++;
            else
                break;
        }
    } else {
        ev->kind = *p++;
    }
    if (*p >= '0' && *p <= '9')
        ev->call = (int)strtol(p, (char **)&p, 10);
    assert_true(*p == '@');
    ev->t = strtod(p + 1, (char **)&p);
    return p;
}

struct uac_result {
    struct result r;
    uint64_t did[OSN_UAC_NDO], outcome[OSN_UAC_NOUTCOMES];
    uint64_t byes_in; /* the calls the callee ended (the node's and the simulator's byes_in) */
    uint64_t shed;    /* the attempts the caller's client half shed (both drivers' shed_local) */
};

/* The generator's hold key for seed UAC_SEED, as gen_setup derives it (the third draw of the
 * seed's master stream): the simulator's probe is given it, so a call holds as long in both. */
static uint64_t uac_hold_key(void)
{
    struct osn_rng master;
    osn_rng_stream(&master, UAC_SEED, 0);
    for (int i = 0; i < 2; i++)
        (void)osn_rng_next(&master);
    return osn_rng_next(&master);
}

/* The next hop's answer to the generator's request `req` (SIP text): its headers as a UAS
 * copies them (RFC 3261 8.2.6.2), a To tag beyond 100, a Contact, and Retry-After. */
static void uac_node_response(struct node *n, const char *req, int status, int retry_after, bool oc)
{
    char out[4096], line[1024];
    const char *p = strstr(req, "\r\n") + 2;
    size_t k = (size_t)snprintf(out, sizeof out, "SIP/2.0 %d Reason\r\n", status);
    for (const char *e; (e = strstr(p, "\r\n")) && e != p; p = e + 2) {
        snprintf(line, sizeof line, "%.*s", (int)(e - p), p);
        if (oc && !strncmp(line, "Via:", 4)) { /* the caller's offer answered: the feedback */
            char *offer = strstr(line, ";oc");
            if (offer)
                *offer = '\0';
            k += (size_t)snprintf(out + k, sizeof out - k,
                                  "%s;oc=100;oc-algo=\"loss\";oc-validity=10000;oc-seq=1.0\r\n",
                                  line);
            continue;
        }
        if (!strncmp(line, "Max-Forwards", 12) || !strncmp(line, "Content-", 8) ||
            !strncmp(line, "Contact", 7))
            continue;
        k += (size_t)snprintf(out + k, sizeof out - k, "%s%s\r\n", line,
                              !strncmp(line, "To:", 3) && status > 100 ? ";tag=ds" : "");
    }
    if (status > 100 && status < 300)
        k += (size_t)snprintf(out + k, sizeof out - k, "Contact: <sip:b@127.0.0.1:5080>\r\n");
    if (retry_after >= 0)
        k += (size_t)snprintf(out + k, sizeof out - k, "Retry-After: %d\r\n", retry_after);
    snprintf(out + k, sizeof out - k, "Content-Length: 0\r\n\r\n");
    node_datagram(n, out, strlen(out), &n->hops[0].addr);
}

/* The callee's BYE of the generator's call `call` from the next hop (RFC 3261 12.2.1.1): the
 * caller's Contact as Request-URI, From the callee's tag, To the caller's From, the call's
 * Call-ID. For a call never started, call 0's Call-ID with the slot `call` (the caller's form,
 * which names no call of its), or one of no form at all when none started. */
static void uac_node_callee_bye(struct node *n, int call)
{
    char text[2048], from[256] = "<sip:osn@127.0.0.1:5060>;tag=0", cid[256] = "none@test";
    const char *inv = *g_ufwd[call][0] ? g_ufwd[call][0] : g_ufwd[0][0];
    const char *f = strstr(inv, "\r\nFrom: "), *c = strstr(inv, "\r\nCall-ID: ");
    if (*inv && f && c) {
        f += 8;
        c += 11;
        snprintf(from, sizeof from, "%.*s", (int)(strstr(f, "\r\n") - f), f);
        snprintf(cid, sizeof cid, "%.*s", (int)(strstr(c, "\r\n") - c), c);
        if (!*g_ufwd[call][0])
            cid[0] = (char)('0' + call);
    }
    snprintf(text, sizeof text,
             "BYE sip:osn@127.0.0.1:5060 SIP/2.0\r\n"
             "Via: SIP/2.0/UDP 127.0.0.1:5080;branch=z9hG4bKcbye%d\r\n"
             "Max-Forwards: 70\r\n"
             "From: <sip:service@127.0.0.1:5080>;tag=ds\r\n"
             "To: %s\r\n"
             "Call-ID: %s\r\n"
             "CSeq: 1 BYE\r\n"
             "Content-Length: 0\r\n\r\n",
             call, from, cid);
    node_datagram(n, text, strlen(text), &n->hops[0].addr);
}

static void uac_node_run(const struct uac_script *sc, struct uac_result *u)
{
    struct osn_node_cfg cfg;
    struct node *n = calloc(1, sizeof *n);
    struct uac_event ev;
    char msg[256];
    assert_non_null(n);
    g_res = &u->r;
    memset(g_ufwd, 0, sizeof g_ufwd);
    cfg = (struct osn_node_cfg){.max_transactions = 100000,
                                .buffer = 10000,
                                .ctl_kind = OSN_CTL_KIND_NONE,
                                .element = OSN_NODE_UAC,
                                .duration = 1e6};
    cfg.src = (struct osn_node_source){.process = OSN_NODE_POISSON, /* rate 0: no arrivals */
                                       .hold = UAC_HOLD,
                                       .retry_prob = sc->retry_prob,
                                       .retry_delay = sc->retry_delay,
                                       .retry_delay_law = OSN_NODE_RETRY_DET,
                                       .honour_retry_after = sc->honour,
                                       .max_retries = sc->max_retries,
                                       .callee_hangs_up = sc->callee,
                                       .seed = UAC_SEED};
    if (sc->patience > 0)
        cfg.src.patience = (struct osn_uac_patience){OSN_UAC_PATIENCE_DET, sc->patience, 0};
    if (sc->client) { /* as config.c wires a generator of control.at = edge */
        cfg.ctl_kind = OSN_CTL_KIND_LOSS;
        cfg.ctl_at = OSN_NODE_CTL_AT_EDGE;
    }
    n->cfg = &cfg;
    static struct next_hop hop = {.addr.v4 = {.sin_family = AF_INET, .sin_port = 5080},
                                  .fd = -1,
                                  .text = "127.0.0.1:5080"};
    n->hops = &hop;
    n->nhops = 1;
    snprintf(n->host, sizeof n->host, "127.0.0.1");
    n->port = 5060;
    n->branch_salt = 0x5eed;
    /* The generator takes the clock for its lag: a start far ahead keeps it behind the
     * script's time, which alone moves n->now here. */
    n->t_start = 1e15;
    sip_cfg(&cfg.sip, OSN_ELEM_UAS);
    assert_int_equal(osn_sip_layer_init(&n->sip, &cfg.sip, 64), 0);
    assert_int_equal(osn_sip_wire_key_init(), 0);
    osn_ctl_cfg_default(&cfg.ctl);
    if (sc->client)
        assert_int_equal(osn_ctl_new_kind(&n->cli, cfg.ctl_kind, &cfg.ctl), 0);
    osn_elem_server_init(&n->server, cfg.cost, cfg.buffer, NULL, 0);
    assert_int_equal(gen_setup(n, msg, sizeof msg), 0);
    for (const char *p = sc->events; (p = uac_next_event(p, &ev));) {
        node_run_to(n, ev.t);
        if (ev.kind == 'N') {
            gen_call(n);
        } else if (ev.kind == 'b') {
            uac_node_callee_bye(n, ev.call);
        } else if (ev.kind == 'R') {
            int k = ev.method == OSN_SIP_INVITE ? 0 : ev.method == OSN_SIP_BYE ? 1 : 2;
            if (*g_ufwd[ev.call][k])
                uac_node_response(n, g_ufwd[ev.call][k], ev.status, ev.retry_after, ev.oc);
        }
    }
    memcpy(u->did, gen_did(n), sizeof u->did);
    assert_true(gen_done(n));     /* every call ended with the script */
    assert_int_equal(n->live, 0); /* and every transaction */
    node_release(n);
    memcpy(u->outcome, n->st.uac.outcome, sizeof u->outcome);
    u->byes_in = n->st.uac.byes_in;
    u->shed = n->st.uac.shed_local;
    free(n);
}

static void uac_sim_run(const struct uac_script *sc, struct uac_result *u)
{
    struct osn__probe_cfg pc = {.elem = OSN__PROBE_UAC,
                                .ctl_kind = OSN_CTL_KIND_NONE,
                                .buffer = 10000,
                                .send = sim_sent,
                                .arg = &u->r,
                                .patience = sc->patience,
                                .retry_prob = sc->retry_prob,
                                .retry_delay = sc->retry_delay,
                                .max_retries = sc->max_retries,
                                .honour_retry_after = sc->honour,
                                .hold = UAC_HOLD,
                                .hold_key = uac_hold_key(),
                                .callee_hangs_up = sc->callee};
    if (sc->client) {
        pc.ctl_kind = OSN_CTL_KIND_LOSS;
        pc.ctl_at = OSN_NET_CTL_AT_EDGE;
    }
    struct osn__net_probe *p;
    struct uac_event ev;
    /* oc=100, loss, valid 10 s, as the node's text says it */
    const struct osn_sip_oc oc100 = {.flags = OSN_SIP_OC_PRESENT | OSN_SIP_OC_VALUE |
                                              OSN_SIP_OC_ALGO | OSN_SIP_OC_VALIDITY |
                                              OSN_SIP_OC_SEQ,
                                     .value = 100,
                                     .algo = OSN_SIP_ALGO_LOSS,
                                     .validity_ms = 10000,
                                     .seq_int = 1};
    sip_cfg(&pc.sip, OSN_ELEM_UAS);
    osn_ctl_cfg_default(&pc.ctl);
    assert_int_equal(osn__net_probe_new(&p, &pc), 0);
    for (const char *q = sc->events; (q = uac_next_event(q, &ev));) {
        assert_int_equal(osn__net_probe_run_to(p, ev.t), 0);
        if (ev.kind == 'N')
            assert_int_equal(osn__net_probe_call(p), 0);
        else if (ev.kind == 'b')
            assert_int_equal(osn__net_probe_callee_bye(p, ev.call), 0);
        else if (ev.kind == 'R')
            assert_true(osn__net_probe_uac_response(p, ev.call, ev.method, ev.status,
                                                    ev.retry_after, ev.oc ? &oc100 : NULL) >= 0);
    }
    osn__net_probe_uac(p, u->did, u->outcome);
    u->byes_in = osn__net_probe_byes_in(p);
    u->shed = osn__net_probe_shed_local(p);
    osn__net_probe_free(p);
}

static void uac_show(const char *what, const char *name, const struct uac_result *a,
                     const struct uac_result *b)
{
    printf("%s UAC script '%s'\n-- simulator:\n%s-- node:\n%s", what, name, a->r.wire, b->r.wire);
    for (int d = 0; d < OSN_UAC_NDO; d++)
        if (a->did[d] || b->did[d])
            printf("   did %d: simulator %llu, node %llu\n", d, (unsigned long long)a->did[d],
                   (unsigned long long)b->did[d]);
    for (int o = 0; o < OSN_UAC_NOUTCOMES; o++)
        if (a->outcome[o] || b->outcome[o])
            printf("   outcome %d: simulator %llu, node %llu\n", o,
                   (unsigned long long)a->outcome[o], (unsigned long long)b->outcome[o]);
    if (a->byes_in || b->byes_in)
        printf("   byes_in: simulator %llu, node %llu\n", (unsigned long long)a->byes_in,
               (unsigned long long)b->byes_in);
    if (a->shed || b->shed)
        printf("   shed_local: simulator %llu, node %llu\n", (unsigned long long)a->shed,
               (unsigned long long)b->shed);
}

static void test_uac_scripts(void **state)
{
    int failed = 0;
    (void)state;
    for (size_t i = 0; i < sizeof uac_scripts / sizeof uac_scripts[0]; i++) {
        const struct uac_script *sc = &uac_scripts[i];
        static struct uac_result sim, node;
        memset(&sim, 0, sizeof sim);
        memset(&node, 0, sizeof node);
        uac_sim_run(sc, &sim);
        uac_node_run(sc, &node);
        bool ok = !strcmp(sim.r.wire, node.r.wire) && !memcmp(sim.did, node.did, sizeof sim.did) &&
                  !memcmp(sim.outcome, node.outcome, sizeof sim.outcome);
        for (int k = 0; k < 3 && sc->expect[k]; k++)
            ok = ok && strstr(node.r.wire, sc->expect[k]);
        ok = ok && (!sc->absent || !strstr(node.r.wire, sc->absent));
        ok = ok && node.outcome[sc->outcome] == 1; /* the script's one call, so ended */
        ok = ok && sim.byes_in == (uint64_t)sc->byes_in && node.byes_in == (uint64_t)sc->byes_in;
        ok = ok && sim.shed == (uint64_t)sc->shed && node.shed == (uint64_t)sc->shed;
        if (!ok || getenv("OSN_TEST_VERBOSE"))
            uac_show(ok ? "ok" : "DIFFERS", sc->name, &sim, &node);
        failed += !ok;
    }
    assert_int_equal(failed, 0);
    /* the floor of UAC scripts through both drivers: the eight of the caller's own machine, and
     * the callee's BYE at the caller, up, crossing the caller's BYE, for no call (drv33) */
    assert_true(sizeof uac_scripts / sizeof uac_scripts[0] >= 11);
    /* and the caller as overload-control client, shedding and admitting (srcctl30) */
    assert_true(sizeof uac_scripts / sizeof uac_scripts[0] >= 13);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
            cmocka_unit_test(test_scripts),
            cmocka_unit_test(test_uac_scripts),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * SIP element behaviour, clock-free: what a stateful proxy, a UAS and a UAC decide, shared by the
 * network simulator (src/sim/net_*.c) and the real node.
 *
 * The transaction layer (osn/sip.h) says what happened to a transaction; the controllers
 * (osn/ctl.h) say whether to admit; this module says what an element does about it: forward a
 * request or shed it with a 503, relay a response upstream or answer 408 on a timeout, answer a
 * call as the UAS and resend its 2xx until the ACK, count a call good or failed at the UAC, and
 * which messages an element's CPU serves, queues or drops. Like the layers below it, it never
 * reads a clock, sets a timer or sends: each function takes `now` and the facts of one event and
 * returns its decision (an enum, a message to send, a deadline), and the driver carries it out
 * with its own objects (the simulator's pools and event set, or the node's socket and timers).
 * Keeping the decisions here and the mechanics in the drivers is what lets one proxy run both
 * simulated and for real.
 *
 * Where to look: what the element's TU does about an event, as a list of actions both drivers
 * carry out, is osn_elem_on_request(), osn_elem_on_ack(), osn_elem_on_client_event() and
 * osn_elem_stxn_started() (element.c, with the decision table in its head); underneath, a proxy
 * decides to forward, shed or reject a call in osn_proxy_on_request();
 * an element's server (its CPU queue) admits, queues or drops a message in
 * osn_elem_server_arrive(); the UAS's 2xx retransmission timer is osn_uas_2xx_*().
 */
#ifndef OSN_ELEM_H
#define OSN_ELEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "osn/ctl.h"
#include "osn/sip.h"

/* ---- message kinds (processing costs and counters) ---- */

/* What a message is to the element that handles it; its processing cost depends on it. */
enum osn_elem_kind {
    OSN_ELEM_K_INVITE, /* new INVITE */
    OSN_ELEM_K_RETX,   /* retransmitted request absorbed by a server transaction */
    OSN_ELEM_K_RESP,   /* any response */
    OSN_ELEM_K_ACK,
    OSN_ELEM_K_BYE,
    OSN_ELEM_K_REJECT, /* a new INVITE answered with 503 by the controller */
    OSN_ELEM_K_CANCEL, /* a new CANCEL (RFC 3261 9: a transaction of its own) */
    OSN_ELEM_NKINDS
};

/* Whether message m may be a copy of a request: a request other than an ACK (RFC 3261 17.2.3:
 * those are what a server transaction absorbs). Only for those does a driver ask its record. */
static inline bool osn_elem_may_be_copy(const struct osn_sip_msg *m)
{
    return m->status == 0 && m->method != OSN_SIP_ACK;
}

/* The kind of message m for the element's server: a response, an ACK, a copy of a request
 * (`copy`: it matches one of the element's server transactions, or on arrival its original was
 * kept here before, by the driver's record), else a new INVITE, a new CANCEL, or another new
 * request, costed as a BYE. The driver answers `copy` only where osn_elem_may_be_copy() (matching
 * is its own). */
static inline int osn_elem_kind(const struct osn_sip_msg *m, bool copy)
{
    if (m->status)
        return OSN_ELEM_K_RESP;
    if (m->method == OSN_SIP_ACK)
        return OSN_ELEM_K_ACK;
    if (copy)
        return OSN_ELEM_K_RETX;
    return m->method == OSN_SIP_INVITE   ? OSN_ELEM_K_INVITE
           : m->method == OSN_SIP_CANCEL ? OSN_ELEM_K_CANCEL
                                         : OSN_ELEM_K_BYE;
}

/* The controller's message class of a message of `kind` (a request of `method`); `response_again`
 * marks a response the element has received before (the downstream resent it). */
enum osn_ctl_msg osn_elem_ctl_msg(int kind, int method, bool response_again);

/* ---- RFC 7339 oc parameters <-> controller feedback (oc.c) ---- */

/* The controller's feedback as the top-Via parameters of a response (RFC 7339 5.2). PI's ratio
 * travels as oc = ratio * 1e6 with oc-algo bit 0x80, an OSN extension. */
void osn_elem_fb_to_oc(const struct osn_ctl_feedback *fb, struct osn_sip_oc *oc);

/* The feedback in a response's oc parameters; false when there is none (RFC 7339 5.2: no oc
 * value, or no algorithm, says nothing). */
bool osn_elem_oc_to_fb(const struct osn_sip_oc *oc, struct osn_ctl_feedback *fb);

/* The offer a client half puts in the top Via of every request it sends (RFC 7339 4.2: "oc",
 * and the algorithms it supports, loss among them). */
void osn_elem_oc_offer(struct osn_sip_oc *oc);

/* ---- the element's server: its CPU queue and the controller's server half (server.c) ---- */

/* A message waiting in a server. The driver embeds it in its own message object and recovers
 * that with OSN_CONTAINER_OF; the server links it and reads and writes only these fields. */
struct osn_elem_item {
    struct osn_elem_item *next;
    double t_arr;         /* arrival at the server (s) */
    uint8_t kind;         /* enum osn_elem_kind: at arrival, fixed again by the driver at service */
    uint8_t ckind;        /* enum osn_ctl_msg at arrival */
    bool reject;          /* the controller shed it: to be answered 503, at the rejection cost */
    uint16_t retry_after; /* the shed one's Retry-After (s) as the controller gave it, 0 none */
};

/*
 * One CPU with a buffer of `buffer` messages (queued and in service), one FIFO or two (PRSM:
 * originals first, copies second), a processing cost per message kind, and optionally the
 * controller's server half, which watches this queue. Time-averaged figures are integrated
 * from `t_obs` on (the simulator's observation window; 0 for a node).
 */
struct osn_elem_server {
    const double *cost;  /* CPU seconds by enum osn_elem_kind (borrowed) */
    long buffer;         /* messages in the server at most */
    struct osn_ctl *ctl; /* the server half, NULL for none (borrowed) */
    double t_obs;
    struct osn_elem_item *qh[2], *qt[2], *cur; /* the two FIFOs and the message in service */
    long n;                                    /* messages in the server */
    size_t nq[2];                              /* queued, by FIFO */
    double t_last, t_mode;                     /* last change of n, of the mode */
    int mode;                                  /* the controller's mode (enum osn_ctl_mode) */
    /* from t_obs on: busy seconds, messages x seconds, messages lost at the full buffer, and
     * seconds in each controller mode */
    double busy, area, dropped, mode_time[3];
    double onsets; /* from t_obs on: changes from mode 0 into overload (mode 1 or 2) */
};

/* What the server did with an arriving message. */
enum osn_elem_admit {
    OSN_ELEM_HANDLE_NOW, /* its kind costs nothing: handle it at once, unqueued */
    OSN_ELEM_QUEUED,     /* queued: start service if the CPU is idle */
    OSN_ELEM_DROPPED,    /* lost at the full buffer: the driver frees it */
};

void osn_elem_server_init(struct osn_elem_server *s, const double *cost, long buffer,
                          struct osn_ctl *ctl, double t_obs);

/*
 * A message of `kind` (controller class `ck`) arrives at `now`. `shed_able` says it is a new
 * request the controller may answer with 503 (not an ACK, not a copy); `oc_capable` that its top
 * Via offered oc. Sets it->kind, it->ckind, it->reject (and it->t_arr when queued). Under two
 * FIFOs, a message for the first that finds the buffer full pushes out the oldest copy waiting
 * in the second: *evicted gets it (the driver frees it), else NULL.
 */
enum osn_elem_admit osn_elem_server_arrive(struct osn_elem_server *s, double now,
                                           struct osn_elem_item *it, int kind, enum osn_ctl_msg ck,
                                           bool shed_able, bool oc_capable,
                                           struct osn_elem_item **evicted);

/* Whether osn_elem_server_next has a message to give: the CPU is idle and one waits. Inline, so
 * that a driver asks it before the call (in the network simulator two service completions in
 * three find nothing waiting). */
static inline bool osn_elem_server_ready(const struct osn_elem_server *s)
{
    return !s->cur && s->nq[0] + s->nq[1] != 0;
}

/* The next message to serve, unlinked from its FIFO (the controller picks the FIFO); *fifo gets
 * 0 or 1. NULL when the CPU is busy or nothing waits (!osn_elem_server_ready). */
struct osn_elem_item *osn_elem_server_next(struct osn_elem_server *s, double now, int *fifo);

/* Whether a copy taken from the second FIFO is discarded rather than served (PRSM's stale
 * copies): t_first is when its transaction began, answered whether it has a response. When true
 * the message has left the server and the driver frees it. */
bool osn_elem_server_discard(struct osn_elem_server *s, double now, struct osn_elem_item *it,
                             double t_first, bool answered);

/* Service of `it` begins (the driver draws its cost and schedules the completion). */
static inline void osn_elem_server_begin(struct osn_elem_server *s, struct osn_elem_item *it)
{
    s->cur = it;
}

/* The message in service completes; returns it, for the driver to handle. */
struct osn_elem_item *osn_elem_server_depart(struct osn_elem_server *s, double now);

/* Integrates busy time and queue area up to now (also at the end of a run). */
void osn_elem_server_integrate(struct osn_elem_server *s, double now);

/* Closes the mode-time account at the end of a run (`now` = the window's end). */
void osn_elem_server_close(struct osn_elem_server *s, double now);

/* ---- stateful proxy (proxy.c) ---- */

enum osn_proxy_verdict {
    OSN_PROXY_FORWARD,   /* forward the request on the next hop */
    OSN_PROXY_SHED_503,  /* the client half sheds it: answer 503 upstream (RFC 7339 5.3) */
    OSN_PROXY_LATE_COPY, /* a copy of a request already forwarded, after its transaction ended:
                            drop it and its new transaction */
};

/*
 * A new request reached the proxy's TU (its server transaction's TU_REQUEST). `forwarded` says
 * the proxy already forwarded this request of the call (RFC 3261 16.6: a stateful proxy forwards
 * each request once); `cli` is the client half toward the next hop (NULL: none).
 */
enum osn_proxy_verdict osn_proxy_on_request(struct osn_ctl *cli, double now, int method,
                                            bool forwarded);

/* The request a proxy forwards (RFC 3261 16.6): `in` with the new top-Via branch and no oc
 * parameters of the previous hop (the client half adds its own offer when it starts the client
 * transaction). */
void osn_proxy_forward_request(const struct osn_sip_msg *in, uint64_t branch,
                               struct osn_sip_msg *out);

/*
 * Where a proxy sends a request it forwards, and what it does to its Route and Record-Route
 * (RFC 3261 16.4, 16.6 steps 4, 6 and 7, 16.12). The driver gives the facts it read; the proxy
 * decides; the driver resolves the address it is told to use (a Route's URI, the Request-URI's
 * or its configured next hop) and prints the request as told.
 */
enum osn_proxy_target {
    OSN_PROXY_TO_NEXT_HOP, /* no Route at all: the configured next hop (the node's next_hop) */
    OSN_PROXY_TO_ROUTE,    /* the first Route value that stays (16.6 step 7) */
    OSN_PROXY_TO_URI,      /* the Request-URI: our Route value was the last one (16.12) */
};

/* The facts of a request a proxy forwards. */
struct osn_proxy_route_in {
    int method;        /* enum osn_sip_method */
    int nroute;        /* its Route values */
    bool top_is_us;    /* the first Route value's URI names this proxy (16.4) */
    bool second_is_us; /* and the second's too (RFC 5658 5: our double Record-Route) */
    bool in_dialog;    /* it has a To tag (12.2): its path is the dialog's route set */
    bool record_route; /* the proxy's setting: stay on the path of the dialogs it sees made */
};

struct osn_proxy_route_out {
    uint8_t target;    /* enum osn_proxy_target */
    uint8_t pop;       /* how many of the first Route values to remove, ours (16.4): 0, 1, 2 */
    bool record_route; /* insert Record-Route: <sip:ADDR;lr> above the others (16.6 step 4) */
};

/*
 * 16.4: a first Route value naming this proxy is removed, and the second one too when it names
 * this proxy as well (RFC 5658 5: the two values of a double Record-Route, below, are one hop);
 * 16.6 step 7: then the request goes to
 * the first Route value left, or with none left to its Request-URI (the remote target of the
 * dialog, 16.12's last hop); a request that came with no Route goes to the next hop, as a proxy
 * without routing would send it. A first Route value that is not ours stays and is the
 * destination (a route set preloaded by the sender). Record-Route goes into a dialog-creating
 * request only, an INVITE without a To tag, when the setting is on (16.6 step 4, 12.1.1): an
 * in-dialog request's Record-Route would change nothing, as the route set is fixed when the
 * dialog is made (12.2).
 */
void osn_proxy_route(const struct osn_proxy_route_in *in, struct osn_proxy_route_out *out);

/*
 * RFC 5658 4 (double Record-Routing): the Record-Route values a proxy inserts when it records a
 * dialog (osn_proxy_route_out.record_route) whose request came in over one transport and goes
 * out over another. A URI can name one transport only, and each end of the dialog sends its
 * in-dialog requests to the proxy by the URI it reads first: the callee the top value, the
 * caller the bottom one (12.1.1, 12.1.2). So with the legs apart, two values: tcp[0] the
 * outgoing leg's (the callee's side), tcp[1] the incoming one's; with both legs alike, one,
 * saying ;transport=tcp only when both are TCP (a URI without transport means UDP to a numeric
 * address, RFC 3263 4.1). Returns the number of values, 1 or 2; tcp[i] whether value i says
 * ;transport=tcp.
 */
int osn_proxy_record_routes(bool in_tcp, bool out_tcp, bool tcp[2]);

/* What the proxy does with an event of its client transaction (toward the next hop). */
enum osn_proxy_relay {
    OSN_PROXY_NOTHING,
    OSN_PROXY_RELAY, /* send the response upstream on the server transaction (status as given) */
    OSN_PROXY_408,   /* the next hop timed out: answer 408 upstream (RFC 3261 16.8) */
    /* the transport to the next hop failed: as a 503 from it (16.9), the only response, so 500
     * upstream (16.7 step 6: a 503 is not passed on, it would say this proxy is down) */
    OSN_PROXY_500,
};

/*
 * Client transaction event `tu` (enum osn_sip_tu_event) with response `status` (0 for none),
 * the request having been sent at `t_sent`. `upstream_state` is the state of the server
 * transaction the request was forwarded for (OSN_SIP_NOSTATE when there is none any more). A
 * 100 Trying feeds the client half's delay estimate (PI).
 */
enum osn_proxy_relay osn_proxy_on_client_event(struct osn_ctl *cli, double now, double t_sent,
                                               int tu, int status, int upstream_state);

/* A response from the next hop reached a proxy with a client half: its oc feedback. */
void osn_proxy_on_feedback(struct osn_ctl *cli, double now, const struct osn_sip_oc *oc);

/* Whether a retransmitted request may go out now (pi's retransmission cap: INVITE copies, and
 * BYE/CANCEL copies when its cfg says cap_noninvite; every other controller sends them). */
bool osn_proxy_retrans_allowed(struct osn_ctl *cli, double now, const struct osn_sip_msg *m);

/* ---- UAS (uas.c) ---- */

/* What the UAS adds to a response of its own (struct osn_elem_action's `with`, struct
 * osn_uas_reply's): the driver writes them. */
#define OSN_ELEM_W_CONTACT                                             \
    0x01 /* Contact: our own address (RFC 3261 12.1.1: a response that \
            creates a dialog, 101..299 to an INVITE; 8.1.1.8) */
#define OSN_ELEM_W_SDP                                                  \
    0x02 /* a session description: the RFC 3264 answer to the request's \
            offer, or an offer of ours when it had none (RFC 3261       \
            13.3.1.4: the 2xx MUST carry one or the other) */
#define OSN_ELEM_W_ALLOW                                             \
    0x04 /* Allow: the methods of OSN_UAS_ALLOW (RFC 3261 20.5: in a \
            405, and in the answer to OPTIONS, 11.2) */
#define OSN_ELEM_W_CAPS                                                \
    0x08 /* Accept: application/sdp and Supported: none (RFC 3261 11.2 \
            for OPTIONS; Accept also in a 415, 21.4.13) */

/* The methods the UAS handles (bits 1 << enum osn_sip_method): the others get 405. */
#define OSN_UAS_ALLOW                                                                      \
    (1u << OSN_SIP_INVITE | 1u << OSN_SIP_ACK | 1u << OSN_SIP_BYE | 1u << OSN_SIP_CANCEL | \
     1u << OSN_SIP_OPTIONS)

/* What the UAS's body of a request is to it (the driver reads the bytes: osn_sdp_offer_check
 * gives the same values, OSN_SDP_*). */
enum osn_uas_offer {
    OSN_UAS_NO_OFFER,  /* no body */
    OSN_UAS_OFFER,     /* an SDP offer */
    OSN_UAS_MALFORMED, /* SDP that does not parse: 488 (RFC 3261 21.4.26) */
    OSN_UAS_NOT_SDP,   /* a body of a type it does not take: 415 (RFC 3261 21.4.13) */
};

/* The facts of a new request at the UAS. */
struct osn_uas_request {
    int method;     /* enum osn_sip_method */
    bool known;     /* its Call-ID is a call the UAS answered 2xx and had no BYE for (or, for a
                       CANCEL, an INVITE transaction of its own) */
    bool in_dialog; /* it has a To tag: a request within a dialog (RFC 3261 12.2) */
    int offer;      /* enum osn_uas_offer of its body */
    double ring;    /* a new INVITE: the ring delay (s) the driver drew for it
                       (osn_uas_ring_delay); 0 answers 180 and 200 at once */
};

struct osn_uas_reply {
    uint16_t status;
    uint8_t with; /* OSN_ELEM_W_* */
};

/* What the UAS answers, in order (fills r[], returns how many, at most 2):
 *   in a dialog (To tag) it does not know, or a BYE/CANCEL of no call   481 (12.2.2, 15.1.2, 9.2)
 *   a method not in OSN_UAS_ALLOW                                       405 + Allow (8.2.1)
 *   INVITE with malformed SDP / a body not SDP                          488 / 415 + Accept
 *   INVITE, new                                  180 + Contact, 200 + Contact + SDP
 *   INVITE in a dialog it knows (re-INVITE)      200 + Contact + SDP
 *   OPTIONS                                      200 + Allow, Accept, Supported (11.2)
 *   BYE, CANCEL of a known call                  200 */
int osn_uas_answer(const struct osn_uas_request *q, struct osn_uas_reply r[2]);

/*
 * The UAS's ring delay: the time between its 180 and its 200 to a new INVITE, as a called user
 * lets the phone ring before answering. While it rings the INVITE is pending, so a CANCEL then
 * gets 200 and the INVITE 487 (RFC 3261 9.2); with no ring delay the 200 goes with the 180 and a
 * CANCEL finds the call answered. The law is the scenario's ([server uas] ring_delay), the draw
 * the driver's: u is a uniform draw in (0, 1] from its own stream, unused by none and det.
 */
enum osn_uas_ring_law { OSN_UAS_RING_NONE, OSN_UAS_RING_DET, OSN_UAS_RING_EXP };

/* The ring delay (s) of law `law` with mean `mean` s for the uniform draw u: 0 for none, mean
 * for det, -mean ln u for exp. */
double osn_uas_ring_delay(int law, double mean, double u);

/* A response of the TU for request `req` (RFC 3261 8.2.6: the layer copies Via, From, Call-ID
 * and CSeq; the TU adds the status, Retry-After (-1: none) and its To tag). */
struct osn_sip_msg osn_elem_response(const struct osn_sip_msg *req, int status, int retry_after);

/* The UAS core's 2xx retransmission (RFC 3261 13.3.1.4): from T1, doubling up to T2, until the
 * ACK comes or 64*T1 has passed since the first 2xx; the last deadline is 64*T1 itself, when a
 * 2xx still not acknowledged ends its session (osn_uas_2xx_unacked). */
struct osn_uas_2xx {
    double t200; /* the first 2xx (s) */
    double ival; /* the current interval (s) */
    bool acked;
    bool over; /* the retransmission has ended (a timer that fires later decides nothing) */
};

/* The first 2xx went out at `now`. Returns true and the first deadline in *at when
 * retransmissions are due (RFC 6026 machines, no ACK yet); false when none are. */
bool osn_uas_2xx_start(struct osn_uas_2xx *u, double now, const struct osn_sip_cfg *cfg,
                       double *at);

/* The timer fired. Returns true when the 2xx goes out again (the server transaction still
 * being there, `have_txn`), with the next deadline in *at (64*T1 after the first 2xx at the
 * latest); false when retransmission is over (u->over from then on). */
bool osn_uas_2xx_fire(struct osn_uas_2xx *u, double now, const struct osn_sip_cfg *cfg,
                      bool have_txn, double *at);

/* Whether the 2xx's retransmission ended at `now` because 64*T1 passed without its ACK: RFC 3261
 * 13.3.1.4, the dialog is confirmed but the session SHOULD be ended with a BYE (a caller whose
 * ACKs were all lost, or that gave the call up before the 2xx came, would otherwise leave the
 * callee in a call nobody ends). */
bool osn_uas_2xx_unacked(const struct osn_uas_2xx *u, double now, const struct osn_sip_cfg *cfg);

/* Whether the 2xx's retransmission started and neither its ACK nor its end has come. */
static inline bool osn_uas_2xx_pending(const struct osn_uas_2xx *u)
{
    return u->ival > 0 && !u->acked && !u->over;
}

/*
 * The callee's hang-up (issue 33: calls ended from either side). A fraction `fraction` of the
 * answered calls (the scenario's source.callee_hangs_up) is ended by the callee: at the end of
 * its hold time the UAS sends the BYE (RFC 3261 15.1.1: either UA may), in the dialog its 2xx
 * made (12.1.1: to the caller's Contact, by the Record-Route values in order as its route set),
 * and the caller answers 200 (15.1.2).
 *
 * Who hangs up is a function of the call's key alone (on the wire osn_uas_call_key of the
 * Call-ID's text): the caller (osn_uac_call_keyed) and the callee ask the same question of the
 * same key and agree without a word on the wire, so a caller of ours never races the callee with
 * a BYE of its own; and runs that differ only in control end the same calls from the same side
 * (common random numbers, as far as their Call-IDs are the same: the simulator's are).
 */
bool osn_uas_callee_hangs_up(double fraction, uint64_t key);

/* The key of a call for osn_uas_callee_hangs_up: FNV-1a (64 bits) of its Call-ID's text, the
 * same in every process. Not the Call-ID hash of struct osn_sip_msg: that one is keyed at random
 * per process (against hash flooding, src/sip/ident.c), so a caller and a callee in two
 * processes would each draw their own answer and both hang up half the calls (found in issue
 * 33's test: the callee ended 0.29-0.38 of the calls at a fraction of 0.5). A sender who picks
 * Call-IDs can steer the answer; it decides only who sends a call's BYE. */
uint64_t osn_uas_call_key(const char *call_id, size_t n);

/* The hold time (s) of a call the callee hangs up, for the uniform draw u in (0, 1] of the
 * driver's own stream: the law of source.hold, exponential with mean `mean`. */
double osn_uas_hold(double mean, double u);

enum osn_uas_hangup {
    OSN_UAS_HANGUP_NONE, /* the call is over already (the caller's BYE came first): nothing */
    OSN_UAS_HANGUP_WAIT, /* no ACK yet: wait until *at (T1 later), then ask again */
    OSN_UAS_HANGUP_BYE,  /* send the BYE now */
};

/*
 * The callee's hang-up timer of a call fired at `now` (its hold after the 2xx sent at `t2xx`):
 * `known` whether the call is still up at the UAS (no BYE of the caller's yet), `acked` whether
 * its 2xx had its ACK. RFC 3261 15: the callee MUST NOT send a BYE on a confirmed dialog before
 * the ACK of its 2xx or the end of its server transaction (64*T1 after the 2xx): until then it
 * waits (*at).
 */
enum osn_uas_hangup osn_uas_hangup_fire(bool known, bool acked, double t2xx, double now,
                                        const struct osn_sip_cfg *cfg, double *at);

/* ---- the element's transaction user: decisions as action lists (element.c) ---- */

/*
 * What the element's TU decides about one event, for the driver to carry out in order. Every
 * action acts on the transaction(s) of that event: a server-TU event's server transaction, or for
 * a client event the server transaction upstream of it (its peer). Nothing is done yet when an
 * osn_elem_* function returns; the driver does it with its own objects (the simulator's pools,
 * event set and links; the node's bytes, socket and timer heap) and counts `count` (enum
 * osn_elem_count, 0 for none) when it carries the action out.
 */
enum osn_elem_act {
    OSN_ELEM_A_COUNT,          /* only count */
    OSN_ELEM_A_FORWARD,        /* start a client transaction toward the next hop for the server
                                  transaction's request (RFC 3261 16.6: a branch of the driver's,
                                  Max-Forwards - 1, the client half's oc offer) */
    OSN_ELEM_A_RESPOND,        /* the server transaction answers `status` (Retry-After
                                  `retry_after`, -1 none) with a To tag of ours */
    OSN_ELEM_A_RELAY,          /* the server transaction sends the next hop's response upstream:
                                  `status`, `retry_after` and the response's own To tag */
    OSN_ELEM_A_DROP,           /* abort and free the server transaction (a late copy) */
    OSN_ELEM_A_FORWARD_ACK,    /* forward the ACK of a 2xx statelessly (RFC 3261 16.11, RFC 6026
                                  7.1), with a branch that is a function of the call or of its own */
    OSN_ELEM_A_ACKED,          /* UAS: the 2xx got its ACK, its retransmission stops */
    OSN_ELEM_A_ARM_2XX,        /* UAS: arm the 2xx retransmission timer at the list's `at` (s) if
                                  the server transaction is still live */
    OSN_ELEM_A_RESEND_2XX,     /* UAS: the 2xx again (RFC 6026 7.1: in Accepted it passes the server
                                  transaction, which no longer resends it itself) */
    OSN_ELEM_A_CANCEL_BRANCH,  /* proxy, CANCEL: start a CANCEL client transaction for the INVITE
                                  the proxy forwarded for the cancelled one (RFC 3261 9.1: its
                                  Request-URI, Call-ID, From, To, CSeq number and top Via; method
                                  CANCEL); its responses end at this proxy */
    OSN_ELEM_A_RESPOND_INVITE, /* UAS, CANCEL: the cancelled INVITE's server transaction answers
                                  `status` (487) with a To tag of ours */
    OSN_ELEM_A_ARM_RING,       /* UAS: the INVITE rings; arm its ring timer at the list's `at` (s)
                                  (osn_elem_on_ring_timer then decides its 200) */
    OSN_ELEM_A_CANCEL_LATER,   /* proxy, CANCEL: the branch has had no provisional response, so
                                  no CANCEL may go yet (RFC 3261 9.1): mark the INVITE's client
                                  transaction; its next event goes to osn_elem_on_cancel_later */
    OSN_ELEM_A_BYE_UNACKED,    /* UAS: the 2xx had no ACK in 64*T1 (RFC 3261 13.3.1.4): send the
                                  callee's BYE in the dialog the 2xx made, as a callee who hangs
                                  up does (osn_uas_hangup_fire's BYE) */
};

/* What the element counts (the node's stats; the simulator keeps the ones it reports). */
enum osn_elem_count {
    OSN_ELEM_C_NONE,
    OSN_ELEM_C_FORWARDED,  /* an INVITE passed on: forwarded, or answered by the UAS */
    OSN_ELEM_C_CALL_OK,    /* an INVITE's first 2xx sent upstream (relayed, or the UAS's own) */
    OSN_ELEM_C_BYE_OK,     /* likewise for a non-INVITE request */
    OSN_ELEM_C_503,        /* a request shed with 503 (client or server half) */
    OSN_ELEM_C_408,        /* the next hop timed out: 408 upstream */
    OSN_ELEM_C_483,        /* Max-Forwards 0: 483 (RFC 3261 16.3 step 3) */
    OSN_ELEM_C_LATE,       /* a copy after its transaction ended, dropped */
    OSN_ELEM_C_ACK_FWD,    /* an ACK of a 2xx forwarded */
    OSN_ELEM_C_STRAY,      /* dropped without an answer (an ACK with Max-Forwards 0) */
    OSN_ELEM_C_481,        /* UAS: a BYE or CANCEL for no call of its own (RFC 3261 15.1.2, 9.2) */
    OSN_ELEM_C_482,        /* proxy: a request looped back to it (RFC 3261 16.3 step 4) */
    OSN_ELEM_C_513,        /* proxy: the forwarded request too large to send (RFC 3261 18.1.1) */
    OSN_ELEM_C_CANCEL_FWD, /* proxy: a CANCEL sent to the branch of a pending INVITE */
    OSN_ELEM_C_487,        /* UAS: an INVITE answered 487 Request Terminated after a CANCEL */
    OSN_ELEM_C_500, /* proxy: the next hop's transport failed (RFC 3261 16.9): 500 upstream */
    OSN_ELEM_C_BYE_UNACKED, /* UAS: a BYE for a 2xx never acknowledged (RFC 3261 13.3.1.4) */
    OSN_ELEM_NCOUNTS
};

struct osn_elem_action {
    uint8_t kind;        /* enum osn_elem_act */
    uint8_t count;       /* enum osn_elem_count */
    uint16_t status;     /* RESPOND, RELAY */
    int32_t retry_after; /* RESPOND, RELAY: s, -1 none */
    uint8_t with;        /* RESPOND at a UAS: what the response carries (OSN_ELEM_W_*) */
    uint8_t hop;         /* FORWARD: the next hop, an index of e->hops (0 when it has none),
                            OSN_ELEM_HOP_NONE for a request routed to none of them */
};

#define OSN_ELEM_MAX_ACTIONS 4

struct osn_elem_actions {
    int n;
    double at; /* ARM_2XX's or ARM_RING's deadline (s): one a list at most */
    struct osn_elem_action a[OSN_ELEM_MAX_ACTIONS];
};

enum osn_elem_role { OSN_ELEM_PROXY, OSN_ELEM_UAS };

/* ---- several next hops, each with its own client half (hops.c) ---- */

/*
 * RFC 7339 5.10 (and RFC 7415 3.5.1 for rate): a client keeps the overload state of each server
 * it sends to. A proxy with several next hops keeps one client half per server (its own
 * validity, sequence and reduction, or rate), fed by that server's responses only, and chooses
 * a server for each new request:
 *   - offer: smooth weighted round-robin (the nginx algorithm) among the servers that are up:
 *     deterministic, so the shares are exact over every sum(weights) requests and the choice
 *     draws nothing from a random stream (a simulated run keeps its common random numbers);
 *   - the offered server's client half decides (osn_ctl_client_admit); when it throttles the
 *     request, the others that are up are asked in turn (highest round-robin credit first), the
 *     round-robin state untouched, so each server is offered its weight's share and keeps the
 *     part its feedback allows: its share follows its feedback, not its weight;
 *   - 503 upstream only when every server that is up throttles it. When none is up, all are
 *     taken as up: a down mark steers requests to the others, it never refuses one by itself
 *     (so one next hop behaves exactly as without marks).
 * Failover: a timeout of the client transaction (Timer B or F, or a transport error: the 408 a
 * proxy answers, RFC 3261 16.8) marks that server down for `down_time` s; a 503 with Retry-After
 * marks it down for the stated time (RFC 3261 21.5.4). The request that failed so goes to
 * another server that is up and admits it, instead of its 408 or 503 going upstream (RFC 3261
 * 16.7 step 5: a proxy may recurse; RFC 3263 4.3: try the next server). Both drivers do this,
 * decided here: the node's edge and the simulator's fanout edge (whose failed attempt's
 * transactions end on their own, as the node's do).
 */
#define OSN_ELEM_MAX_HOPS 8
/* Servers a struct osn_elem_hops may hold: osn_elem_hops_choose marks those it has asked in 64
 * bits. The node keeps OSN_ELEM_MAX_HOPS (next hops it is given by hand); the simulator's
 * fan-out edge has one per core (net.cores). */
#define OSN_ELEM_HOPS_MAX 64

/*
 * The `hop` of a request whose route names none of the proxy's next hops: an in-dialog request
 * going upstream (the callee's BYE, to the caller's Contact or to a Route value of a proxy
 * before this one, RFC 3261 16.12), or to any other address a Route names. A client half holds
 * the overload state of one downstream server (RFC 7339 5.10): such a request goes to none, so
 * no client half is asked about it (it is never shed with 503 for a server it does not reach),
 * nor fed by its responses. Above every index of a struct osn_elem_hops (OSN_ELEM_HOPS_MAX), so
 * it fits where a driver keeps a hop in a byte.
 */
#define OSN_ELEM_HOP_NONE 255

struct osn_elem_hop {
    struct osn_ctl *cli; /* its client half, NULL for none (borrowed) */
    int weight;          /* >= 1; 0: listed, not a next hop (never offered or chosen) */
    int credit;          /* smooth weighted round-robin of INVITEs */
    int credit_other;    /* and of the other requests, apart */
    double down_until;   /* s: not chosen before this */
    /* counts: requests offered to it by weight, requests sent to it (INVITEs among them),
     * requests its client half throttled, timeouts, 503s received from it, times marked down,
     * requests sent to it again after another server failed them (failover) */
    uint64_t offered, sent, invites, shed, timeouts, got_503, downs, failovers;
};

struct osn_elem_hops {
    int n;            /* 1..OSN_ELEM_HOPS_MAX */
    double down_time; /* s a server is down after a timeout */
    /* n servers (borrowed: the driver's, sized for its next hops; the node's hold
     * OSN_ELEM_MAX_HOPS, the simulator allocates one per core) */
    struct osn_elem_hop *h;
};

/* Whether server i may be chosen at `now`. */
static inline bool osn_elem_hop_up(const struct osn_elem_hops *h, int i, double now)
{
    return now >= h->h[i].down_until;
}

/* The server for a new request of `method` (its client half asked as above): its index, or -1
 * when the request is shed with 503 (*retry_after: 0, reserved for a Retry-After of the
 * choice's own). `except` is a server not to use (-1 none: the one that just failed it; -1 is
 * then also returned when there is no other). Counts offered, sent, invites and shed. */
int osn_elem_hops_choose(struct osn_elem_hops *h, double now, int method, int except,
                         unsigned *retry_after);

/* A server for a message sent statelessly (the ACK of a 2xx): by weight over the servers that
 * are up (all when none is), as a function of `key` (the call's), so copies go the same way. */
int osn_elem_hops_stateless(const struct osn_elem_hops *h, double now, uint64_t key);

/*
 * The server the ACK of a 2xx goes to, for a proxy with several next hops (a fan-out edge). The
 * ACK of a 2xx is a request of the dialog (RFC 3261 13.2.2.4, 17.1.1.3: a transaction of its
 * own), routed like every in-dialog request by the dialog's route set (12.2.1.1, 16.12):
 *   - `named` >= 0: the route set names server `named` after this proxy (the core that
 *     Record-Routed the INVITE, 16.6 step 4): it MUST go there, whatever the weights say;
 *   - `named` < 0: no server of e->hops is in the route set (none Record-Routed). Then nothing
 *     ties the ACK to the INVITE's server (RFC 3263 4.3: the ACK of a 2xx "constitutes a
 *     different transaction", with no requirement to reach the server that got the INVITE; if
 *     that server did not record-route, it does not get the ACK) and the proxy forwards it as a
 *     new request would be, to a server chosen by weight among those up, statelessly (RFC 3261
 *     16.11: every copy of the ACK the same way, so a function of the call's `key`, its Call-ID):
 *     osn_elem_hops_stateless. No client half is asked: an ACK is never answered, so it could
 *     not be shed with a 503.
 * Both drivers ask this: the node for an ACK that reached it with no Route (its forward_ack;
 * an ACK whose Route names a server goes where the Route says, osn_proxy_route), the simulator
 * for every ACK its fan-out edge forwards or lets pass (named: the call's core, when the cores
 * Record-Route).
 */
int osn_elem_hops_ack(const struct osn_elem_hops *h, double now, int named, uint64_t key);

/* The oc parameters of a response from server i (its top Via) to its own client half. */
void osn_elem_hops_on_feedback(struct osn_elem_hops *h, int i, double now,
                               const struct osn_sip_oc *oc);

/* What a client transaction toward server i reported (enum osn_sip_tu_event, status and
 * Retry-After as osn_elem_on_client_event): marks the server down on a timeout or a 503 with
 * Retry-After. Returns true when it did. */
bool osn_elem_hops_on_event(struct osn_elem_hops *h, int i, double now, int tu, int status,
                            int retry_after);

/* One element as its TU sees it (borrowed pointers, the driver's). */
struct osn_elem {
    int role;                      /* enum osn_elem_role */
    struct osn_elem_hops *hops;    /* proxy: several next hops (NULL: one, whose client half is
                                      cli); the decisions then go through it */
    struct osn_ctl *cli;           /* proxy: the client half toward the next hop, NULL none */
    const struct osn_sip_cfg *sip; /* the transaction layer's timers (UAS 2xx) */
    unsigned retry_after;          /* proxy: Retry-After (s) of the 503s its client half
                                      sheds, 0 none (RFC 3261 21.5.4: when to try again) */
    bool record_route;             /* proxy: Record-Route the dialogs it forwards, to stay on
                                      their path (RFC 3261 16.6 step 4; osn_proxy_route) */
};

/* Whether element e sees the requests inside a dialog (the ACK of a 2xx, BYE, re-INVITE) and
 * their responses: a UA always; a proxy only when it Record-Routed the dialog's INVITE (RFC 3261
 * 16.6 step 4, 12.1: the UAs' route sets hold exactly the proxies that did, and they send past
 * the others). For a driver that carries messages along a fixed path (the simulator): such a
 * message passes a proxy off the dialog's path as it passes a router, without its CPU. */
static inline bool osn_elem_on_dialog_path(const struct osn_elem *e)
{
    return e->role != OSN_ELEM_PROXY || e->record_route;
}

/*
 * A new request reached the TU (its server transaction's TU_REQUEST): `method`, its
 * Max-Forwards (-1 absent: never checked), and `handled`, whether this element handled this
 * request of the call before (forwarded or answered it): the driver's record, which outlives
 * the transaction. `known` (UAS, BYE and CANCEL only): the request is for a call the UAS knows,
 * a dialog or an INVITE transaction of its own; else it answers 481 (RFC 3261 15.1.2, 9.2).
 * `loop` (proxy): the request carries a Via of this proxy whose branch is the one it would
 * compute for it now, a true loop rather than a spiral: 482 (RFC 3261 16.3 step 4, RFC 5393).
 * `u` is the UAS's 2xx state of the call (proxy: unused, may be NULL).
 */
void osn_elem_on_request(const struct osn_elem *e, double now, int method, int max_forwards,
                         bool handled, bool known, bool loop, struct osn_uas_2xx *u,
                         struct osn_elem_actions *a);

/* The same for a UAS told more of the request (osn_uas_answer's table): `handled` as above;
 * the responses carry their OSN_ELEM_W_* in `with`. osn_elem_on_request at a UAS is this with
 * in_dialog false and no offer. */
void osn_elem_on_uas_request(const struct osn_elem *e, double now, const struct osn_uas_request *q,
                             bool handled, struct osn_uas_2xx *u, struct osn_elem_actions *a);

/* A FORWARD could not be carried out: `too_large`, the forwarded request does not fit the
 * transport (RFC 3261 18.1.1: over UDP's limit, and no congestion-controlled transport to use),
 * gives RESPOND 513 Message Too Large; any other failure RESPOND 500. */
void osn_elem_on_forward_failed(bool too_large, struct osn_elem_actions *a);

/* A RELAY of a response with `status` could not be carried out (no Via left below ours: RFC
 * 3261 16.7 step 3 says the response was meant for this element; or it does not fit): counted
 * as stray and, for a final response, RESPOND 502 Bad Gateway, so that the server transaction
 * ends instead of waiting in Proceeding for good; a provisional one is only dropped. */
void osn_elem_on_relay_failed(int status, struct osn_elem_actions *a);

/*
 * A new CANCEL reached the TU (its own server transaction's TU_REQUEST; RFC 3261 9.2: it is
 * matched to the INVITE it cancels by that INVITE's top Via, method aside). `invite_state` is the
 * state of the INVITE server transaction it cancels (OSN_SIP_NOSTATE: none, then 481);
 * `branch_state` (proxy) that of the client transaction the proxy forwarded that INVITE on
 * (OSN_SIP_NOSTATE: none). The CANCEL is answered 200 hop by hop; while the INVITE is pending
 * (Trying or Proceeding), a UAS answers it 487 (RESPOND_INVITE) and a proxy passes the CANCEL on
 * (CANCEL_BRANCH) when its branch has a provisional response and no final one (RFC 3261 16.10;
 * after a final one it is too late). A branch with no provisional response yet (Calling) may
 * not be cancelled yet (9.1): the proxy keeps the CANCEL for it (CANCEL_LATER) and passes it on
 * at the branch's first provisional response (osn_elem_on_cancel_later). The forwarded CANCEL
 * is a request of the client half's second category (RFC 7339 7.2), as a BYE, decided when the
 * CANCEL comes: shed, the CANCEL is answered 503 instead of 200 and neither passed on nor kept.
 */
void osn_elem_on_cancel(const struct osn_elem *e, double now, int invite_state, int branch_state,
                        struct osn_elem_actions *a);

/* The UAS's ring timer of an INVITE fired (ARM_RING); `invite_state` is the state of its server
 * transaction (OSN_SIP_NOSTATE: gone). While the INVITE is still pending (Proceeding: no CANCEL
 * got it its 487), the called user answers: RESPOND 200 with Contact and SDP, counted as a good
 * call, and ARM_2XX as for a 200 sent at once; else nothing (cancelled: too late to answer). */
void osn_elem_on_ring_timer(const struct osn_elem *e, double now, int invite_state,
                            struct osn_uas_2xx *u, struct osn_elem_actions *a);

/*
 * Proxy: an event `tu` (with response `status`, 0 none) of an INVITE client transaction that a
 * CANCEL was kept for (CANCEL_LATER: it came before the branch had a provisional response). The
 * first provisional response makes the CANCEL allowed (RFC 3261 9.1): CANCEL_BRANCH now, counted
 * as a CANCEL passed on. A final response first (the 2xx, or a failure, relayed upstream as
 * usual) or the end of the branch (a timeout) makes it pointless: nothing. Carried out after the
 * actions of osn_elem_on_client_event for the same event. Returns whether the mark stays (no
 * response yet); false once the kept CANCEL is settled either way.
 */
bool osn_elem_on_cancel_later(int tu, int status, struct osn_elem_actions *a);

/* The UAS's 2xx timer fired, or its server transaction ended (a driver whose timer needs the
 * transaction asks then too: the last deadline and Timer L are both 64*T1 after the 2xx);
 * `have_txn` says the server transaction is still there, in Accepted. RESEND_2XX and ARM_2XX
 * while the ACK has not come and 64*T1 has not passed since the first 2xx (uas.c); at 64*T1
 * without the ACK, BYE_UNACKED when `dialog_up` (the call still up at the UAS: no BYE of the
 * caller's has come, and none of the callee's is due, source.callee_hangs_up); else nothing, the
 * timer is over. Asked again once over, nothing. */
void osn_elem_on_2xx_timer(const struct osn_elem *e, double now, struct osn_uas_2xx *u,
                           bool have_txn, bool dialog_up, struct osn_elem_actions *a);

/* The ACK of a 2xx reached the TU (TU_ACK, or an ACK that matched no transaction). */
void osn_elem_on_ack(const struct osn_elem *e, int max_forwards, struct osn_elem_actions *a);

/*
 * A proxy's client transaction reports `tu` (enum osn_sip_tu_event) with response `status`
 * (0 none) and its Retry-After, for a request of `method` sent at `t_sent`. `upstream_state` is
 * the state of the server transaction it was forwarded for (OSN_SIP_NOSTATE: none any more).
 */
void osn_elem_on_client_event(const struct osn_elem *e, double now, double t_sent, int tu,
                              int status, int retry_after, int method, int upstream_state,
                              struct osn_elem_actions *a);

/* The same for a client transaction toward server `hop` of e->hops (e->hops NULL: as above):
 * the event feeds that server's state (osn_elem_hops_on_event) and its client half; when it
 * marked the server down and the upstream transaction still waits, the request (not a CANCEL)
 * goes to another server that is up and admits it: FORWARD (its `hop`, counted as a failover)
 * instead of the 408 or the 503. */
void osn_elem_on_client_event_hop(const struct osn_elem *e, int hop, double now, double t_sent,
                                  int tu, int status, int retry_after, int method,
                                  int upstream_state, struct osn_elem_actions *a);

/* osn_elem_on_cancel for an INVITE forwarded to server `hop` of e->hops: that server's client
 * half decides on the CANCEL (e->hops NULL: as osn_elem_on_cancel; OSN_ELEM_HOP_NONE, an INVITE
 * routed to none of the next hops: no client half decides). */
void osn_elem_on_cancel_hop(const struct osn_elem *e, int hop, double now, int invite_state,
                            int branch_state, struct osn_elem_actions *a);

/* The same for a client transaction whose server was not chosen but fixed by the request's
 * route (osn_elem_on_request_hop with hop >= 0): the event feeds that server's state and client
 * half, but the request never goes to another server (the dialog's route set names this one:
 * RFC 3261 16.12). OSN_ELEM_HOP_NONE (or with e->hops any `hop` >= e->hops->n): none of the
 * next hops, so no client half is fed (a 100 Trying from upstream is no delay of a server's). */
void osn_elem_on_client_event_routed(const struct osn_elem *e, int hop, double now, double t_sent,
                                     int tu, int status, int retry_after, int method,
                                     int upstream_state, struct osn_elem_actions *a);

/*
 * osn_elem_on_request at a proxy for a request whose server the driver read from its route:
 *   hop < 0              no Route (or none left that is not ours): a new request to the next
 *                        hop, as osn_elem_on_request (several: chosen by osn_elem_hops_choose);
 *   0 <= hop             a request inside a dialog that follows the dialog's path (RFC 3261
 *                        16.12: its route set, not a new choice) to server `hop` of e->hops,
 *                        put to that server's client half alone and counted as sent to it
 *                        (e->hops NULL: the one next hop, whatever `hop`, put to e->cli);
 *   OSN_ELEM_HOP_NONE    (or with e->hops any hop >= e->hops->n) to none of the next hops:
 *                        upstream toward the caller, or elsewhere. No client half is asked, so
 *                        it is never shed with 503 by the overload state of a server it does
 *                        not go to; forwarded after the checks of 16.3 (483, 482).
 */
void osn_elem_on_request_hop(const struct osn_elem *e, int hop, double now, int method,
                             int max_forwards, bool handled, bool loop, struct osn_elem_actions *a);

/*
 * The server transaction of a new request started with output *o. When the controller's server
 * half shed the request (`shed`), the TU never sees it and no 100 Trying goes out: *o is
 * stripped of its TU event and sends, and the actions answer 503 (RFC 7339 5.3) with the
 * controller's Retry-After (`retry_after` s, 0 none: struct osn_elem_item). The driver applies
 * *o, then carries out the actions if the transaction is still live.
 */
void osn_elem_stxn_started(bool shed, unsigned retry_after, struct osn_sip_out *o,
                           struct osn_elem_actions *a);

/* ---- per-source budget (element.c) ---- */

/* One source's token bucket: `rate` requests per second, a burst of max(rate, 1) (about one
 * second's worth). Zero-initialised it is full. */
struct osn_elem_budget {
    double tokens, t; /* tokens spent below the burst, as of t (s): 0 is a full bucket */
    bool told;        /* the source had its 503 since it last had a token */
    bool used;
};

enum osn_elem_budget_verdict {
    OSN_ELEM_BUDGET_PASS, /* within the budget: the request goes on */
    OSN_ELEM_BUDGET_503,  /* over it, first time: one stateless 503, no transaction */
    OSN_ELEM_BUDGET_DROP, /* over it again: nothing */
};

/* A request (not an ACK: copies count too) from the source of bucket b arrives at `now`. Never a
 * stateful answer for a source over its budget: it gets one stateless 503 (Retry-After 1) per time
 * its bucket runs dry, and nothing else, so what it sets off is bounded by its budget. */
enum osn_elem_budget_verdict osn_elem_budget_take(struct osn_elem_budget *b, double now,
                                                  double rate);

/* ---- UAC bookkeeping (uac.c) ---- */

/* How a call ended at the UAC. */
enum osn_uac_outcome {
    OSN_UAC_PENDING,
    OSN_UAC_GOOD,     /* its 2xx came before Timer B (64*T1 after the first INVITE) */
    OSN_UAC_TIMEOUT,  /* Timer B, a 408, or a 2xx too late */
    OSN_UAC_REJECTED, /* a 503 */
    OSN_UAC_OTHER,    /* any other final failure */
    /* The caller gave up before a final answer (osn_uac_on_patience): whatever ended the
     * attempt after that (the 487 to its CANCEL, another final response, Timer B, a 2xx that
     * crossed the CANCEL) ends a call the caller had left. Never retried. */
    OSN_UAC_ABANDONED,
    OSN_UAC_NOUTCOMES
};

struct osn_uac_call {
    double t0; /* the first INVITE (s) */
    uint8_t outcome;
    bool got180, connected;
    bool got100;     /* a 100 Trying reached the UAC (the PRSM papers' response delay) */
    uint8_t retries; /* attempts of this call before this one (osn_uac_retry) */
    bool got1xx;     /* any provisional response: a CANCEL may be sent (RFC 3261 9.1) */
    /* the caller's patience ran out (osn_uac_on_patience); bits, so that the struct stays 16
     * bytes (the simulator's calls fill a pool block: net_int.h) */
    bool gave_up : 1;
    /* the callee hangs up this attempt's call, not the caller (osn_uac_call_keyed) */
    bool callee_ends : 1;
    /* its CANCEL was sent when gave_up and got1xx are both true (the step that made the second
     * true said `cancel`) */
    uint8_t state; /* enum osn_uac_state (uac_call.c) */
};

/* What the UAC does after an event of its INVITE client transaction. */
struct osn_uac_step {
    bool setup;         /* the first 180: a setup-delay sample of setup_delay seconds */
    bool ack;           /* a 2xx: send the ACK (osn_uac_ack) */
    bool connected;     /* the call is set up: start its hold time */
    uint8_t outcome;    /* the call's outcome decided now, OSN_UAC_PENDING when not */
    double setup_delay; /* s */
    bool trying;        /* the first 100 Trying: a response-delay sample of trying_delay s */
    double trying_delay;
    bool cancel; /* send the CANCEL of the INVITE now (RFC 3261 9.1) */
    bool hangup; /* connected after the caller gave up: send the BYE now, no hold (RFC 3261 15) */
};

/* INVITE client transaction event `tu` with response `status` (0 for none); `timer_b` is 64*T1. */
void osn_uac_on_invite_event(struct osn_uac_call *c, double now, double timer_b, int tu, int status,
                             struct osn_uac_step *st);

/* Its provisional responses (100-199), the most frequent events: what osn_uac_on_invite_event
 * decides for one, as struct osn_uac_acts bits (CANCEL, TRYING, SETUP; TRYING's or SETUP's
 * sample in *delay, s), with no step to fill. */
uint32_t osn_uac_on_1xx(struct osn_uac_call *c, double now, int status, double *delay);

/* Its 2xx responses, as osn_uac_on_invite_event decides them, as bits: ACK always (RFC 3261
 * 13.2.2.4); for the one that sets the call up also DIALOG, ARM when the caller had given up (hang
 * up at once, RFC 3261 15), and OUTCOME with the outcome decided in *outcome (left alone
 * otherwise). */
uint32_t osn_uac_on_2xx(struct osn_uac_call *c, double now, double timer_b, uint8_t *outcome);

/* Its other events (a final response >= 300, Timer B, a transport error), as
 * osn_uac_on_invite_event decides them: the call's outcome decided now, OSN_UAC_PENDING when none
 * (decided before, or an event that decides nothing). */
uint8_t osn_uac_on_end(struct osn_uac_call *c, int tu, int status);

/*
 * Callers who give up. The caller's patience (a draw of the source's patience law, the driver's)
 * ran out at a time when the call may still have no final answer. Sets st (cleared first): when
 * a provisional response has come, st->cancel (send the CANCEL now); when none has, RFC 3261 9.1
 * forbids the CANCEL, so the caller waits and the first provisional response's step says
 * `cancel` instead, or Timer B ends the attempt silently. A call already answered (final or 2xx)
 * is left as it is. From then on, osn_uac_on_invite_event decides OSN_UAC_ABANDONED for the
 * attempt's end, and a 2xx that crossed the CANCEL is ACKed and hung up at once (st->hangup).
 */
void osn_uac_on_patience(struct osn_uac_call *c, struct osn_uac_step *st);

/*
 * The caller's patience law (source.patience), one draw in both worlds: the simulator's sources
 * and the node's load generator wait the same law from the same kind of stream. Attempt
 * `retries` of call `origin` draws from a stream seeded by key ^ (origin * 128 + retries), key
 * being the run's patience purpose (one draw of its master stream): runs that differ only in
 * control give up on the same attempts at the same ages (common random numbers). Exponential:
 * inversion, -mean log U; lognormal: exp(mu + sigma Z), Z a polar-method normal, sigma^2 =
 * log(1 + cv^2), mu = log(mean) - sigma^2 / 2; det: the mean itself; none: INFINITY.
 */
enum osn_uac_patience_law {
    OSN_UAC_PATIENCE_NONE,
    OSN_UAC_PATIENCE_EXP,
    OSN_UAC_PATIENCE_DET,
    OSN_UAC_PATIENCE_LOGNORMAL,
};
struct osn_uac_patience {
    int law;         /* enum osn_uac_patience_law */
    double mean, cv; /* s; cv for lognormal only */
};
double osn_uac_patience_draw(const struct osn_uac_patience *p, uint64_t key, uint64_t origin,
                             unsigned retries);

/*
 * Retrials. A caller whose attempt failed with a 503 or timed out (Timer B, a 408) tries the call
 * again with probability `prob`, as a new INVITE (new Call-ID, new transaction), at most
 * `max_retries` times per call. It waits a draw of its retry delay law or, when it honours
 * Retry-After (RFC 3261 20.33, 21.5.4: the server says when to try again), at least the
 * 503's Retry-After. Retrials are what turns a short overload into a long one: the callers
 * refused come back.
 */
struct osn_uac_retry_cfg {
    double prob;             /* probability of retrying a failed attempt; 0: never */
    int max_retries;         /* retries of one call at most */
    bool honour_retry_after; /* wait max(delay draw, Retry-After) after a 503 that has one */
};

/*
 * The call's attempt ended with `outcome` (osn_uac_on_invite_event decided it), its final
 * response carrying `retry_after` seconds (-1: none, or no response: Timer B). `u` is a uniform
 * draw in [0, 1) and `delay` a draw of the retry delay law (s), the driver's random numbers.
 * Returns true when the caller tries again, *wait seconds from now (the retry's attempt count
 * is c->retries + 1); false when the outcome is the call's. A call that connected (a 2xx,
 * even one too late) or failed otherwise (not 503, not a timeout) is never retried.
 */
bool osn_uac_retry(const struct osn_uac_retry_cfg *cfg, const struct osn_uac_call *c, int outcome,
                   int retry_after, double u, double delay, double *wait);

/*
 * The caller population's profile (a piecewise-constant call rate, steps and one burst), read the
 * same way by the simulator's sources and the node's load generator: the rate in force at t and,
 * in *next_change, the next instant it may change (INFINITY: never). A driver draws its
 * exponential clock at that rate and restarts it at *next_change (exact: memoryless).
 */
struct osn_uac_profile {
    double rate; /* calls/s before the first step */
    int nsteps;  /* rate step_rate[i] from step_t[i] on */
    const double *step_t, *step_rate;
    double burst_t, burst_len, burst_factor; /* rate x factor in [burst_t, burst_t + burst_len) */
};
double osn_uac_profile_rate(const struct osn_uac_profile *p, double t, double *next_change);

/* The UAC's delay histograms (setup and response delay), one layout in both worlds so that their
 * percentiles read alike: 1 ms bins up to 2 s, 0.1 s bins up to 64 s, one bin beyond. */
#define OSN_UAC_DELAY_FINE 2000
#define OSN_UAC_DELAY_BINS (OSN_UAC_DELAY_FINE + 620 + 1)
int osn_uac_delay_bin(double d);         /* the bin of a delay of d seconds */
double osn_uac_delay_bin_value(int bin); /* what a quantile falling in `bin` reports (s) */
/* The q-quantile of histogram h (s): the value of the first bin where the count so far reaches
 * q of the total; NAN for an empty one. */
double osn_uac_delay_quantile(const double h[OSN_UAC_DELAY_BINS], double q);

/* The ACK of a 2xx (RFC 3261 13.2.2.4): the INVITE's identities, its own branch, the 2xx's To
 * tag, no oc parameters. */
void osn_uac_ack(const struct osn_sip_msg *invite, uint64_t branch, uint64_t to_tag,
                 struct osn_sip_msg *ack);

/* ---- the UAC's call as a state machine (uac_call.c) ---- */

/*
 * A call of the UAC, from its first INVITE to its end, in both worlds (the simulator's sources,
 * the node's load generator): given (now, event) each osn_uac_call_* function returns what the
 * driver does, as bits of struct osn_uac_acts carried out in bit order, and nothing is done
 * yet. A call has one timer: the caller's patience while INVITING, the hold while UP, the wait
 * before the next attempt while RETRY. The state diagram is in uac_call.c's head.
 */
enum osn_uac_state {
    OSN_UAC_S_INVITING, /* the attempt's INVITE is out, no final answer yet */
    OSN_UAC_S_UP,       /* set up: the hold runs */
    OSN_UAC_S_BYE,      /* the BYE is out: its answer (or Timer F) ends the call */
    OSN_UAC_S_RETRY,    /* the attempt failed: the caller waits, then tries again */
    OSN_UAC_S_DONE,     /* over: the call's account is closed */
};

/* What the driver does, in this order (bit 1u << value in struct osn_uac_acts's `bits`). */
enum osn_uac_do {
    OSN_UAC_DO_INVITE,  /* send the attempt's INVITE on a new client transaction */
    OSN_UAC_DO_STOP,    /* the attempt has its answer: put away the caller's patience (only
                           when cfg->patience) */
    OSN_UAC_DO_CANCEL,  /* send the CANCEL of the INVITE (RFC 3261 9.1) */
    OSN_UAC_DO_TRYING,  /* the first 100 Trying: a response-delay sample of `delay` s */
    OSN_UAC_DO_SETUP,   /* the first 180: a setup-delay sample of `delay` s */
    OSN_UAC_DO_ACK,     /* ACK this 2xx (RFC 3261 13.2.2.4: every copy) */
    OSN_UAC_DO_DIALOG,  /* the call is set up by this 2xx: keep what its BYE needs */
    OSN_UAC_DO_DRAW,    /* the attempt failed and may be retried: draw (u, delay) of the
                           scenario's laws and call osn_uac_call_retry, which replaces this bit */
    OSN_UAC_DO_RETRY,   /* the caller tries again: count the failed attempt as retried */
    OSN_UAC_DO_SHED,    /* the UAC's client half shed the attempt (osn_uac_call_admit): count it
                           as shed locally; its outcome is a 503's (REJECTED), no INVITE left */
    OSN_UAC_DO_OUTCOME, /* count `outcome` as the call's (once per call) */
    OSN_UAC_DO_ARM,     /* arm the call's timer at `at` (s) */
    OSN_UAC_DO_HOLD,    /* arm it after a hold the driver draws (osn_uac_hold_draw) */
    OSN_UAC_DO_BYE,     /* send the call's BYE now (RFC 3261 15.1.1) */
    OSN_UAC_DO_BYE_OK,  /* the BYE was answered 2xx: count it */
    OSN_UAC_DO_HUNG_UP, /* the callee hung up (its BYE answered 200): put away the call's timer
                           (a hold armed, if any) and count the call completed by the callee */
    OSN_UAC_DO_ATTEMPT, /* the wait is over: start attempt retries + 1 (osn_uac_call_start) */
    OSN_UAC_DO_END,     /* the call is over: its slot may go */
    OSN_UAC_NDO
};

#define OSN_UAC_BIT(d) (1u << (d))

struct osn_uac_acts {
    uint32_t bits;    /* OSN_UAC_BIT(enum osn_uac_do) */
    uint8_t outcome;  /* OUTCOME, DRAW: enum osn_uac_outcome */
    int retry_after;  /* DRAW: the final response's Retry-After (s), -1 none */
    double at, delay; /* ARM's deadline; TRYING's or SETUP's sample (s) */
};

/* What the UAC's scenario says, for the machine. */
struct osn_uac_cfg {
    double timer_b; /* 64*T1 (s): a 2xx later than this after the INVITE is a timeout */
    struct osn_uac_retry_cfg retry;
    double retry_until; /* s: a retry due later is not made (the node's drain); INFINITY */
    bool hang_up;       /* the traffic is over: a call set up now hangs up at once */
    /* The callers have a patience law (not none): an attempt may arm its timer at its start, so
     * its answer puts it away (STOP). Without one no attempt arms it, and STOP is never said. */
    bool patience;
    /* The fraction of answered calls the callee hangs up (source.callee_hangs_up): those arm no
     * hold and wait for the callee's BYE (osn_uac_call_on_bye_request). */
    double callee_hangs_up;
};

/* Attempt `retries` of a call starts at `now`; its caller waits `patience` s (INFINITY: for
 * ever). Resets c. Acts: INVITE, and ARM the patience. */
void osn_uac_call_start(struct osn_uac_call *c, double now, unsigned retries, double patience,
                        struct osn_uac_acts *a);

/*
 * RFC 7339 5.3, RFC 7415 4.3: the UAC's client half `cli` (NULL: none, nothing changes) toward
 * its next hop admits the attempt osn_uac_call_start began at `now` or sheds it. Call it right
 * after osn_uac_call_start with its acts. Shed, the attempt ends as if the next hop had answered
 * 503 without Retry-After: *a's bits become SHED with OUTCOME and END (REJECTED), or SHED with
 * DRAW when the scenario may retry it; nothing is sent and no timer armed. Returns whether it
 * was shed.
 */
bool osn_uac_call_admit(struct osn_uac_call *c, const struct osn_uac_cfg *cfg, struct osn_ctl *cli,
                        double now, struct osn_uac_acts *a);

/* The attempt osn_uac_call_start began is shed before its INVITE leaves, as osn_uac_call_admit
 * sheds it: for a caller with several next hops, whose choice asked each server's client half
 * and found none that admits it (osn_elem_hops_choose returned -1). */
void osn_uac_call_shed(struct osn_uac_call *c, const struct osn_uac_cfg *cfg,
                       struct osn_uac_acts *a);

/* An event `tu` of the attempt's INVITE client transaction, response `status` (0 none) with
 * Retry-After `retry_after` (-1 none). */
void osn_uac_call_on_invite(struct osn_uac_call *c, const struct osn_uac_cfg *cfg, double now,
                            int tu, int status, int retry_after, struct osn_uac_acts *a);

/* The same for a provisional response (status 100-199), the most frequent event: its acts'
 * bits (CANCEL, TRYING, SETUP; 0 past INVITING), the sample's delay in *delay (s). A driver may
 * call it for a 1xx instead of osn_uac_call_on_invite, which calls it. */
uint32_t osn_uac_call_on_1xx(struct osn_uac_call *c, double now, int status, double *delay);

/* The same for a 2xx (status 200-299): its acts' bits (ACK; for the 2xx that sets the call up
 * also DIALOG, STOP, OUTCOME and HOLD, or ARM at now), *a's outcome and at as they say. A driver
 * may call it for a 2xx instead of osn_uac_call_on_invite, which calls it. */
uint32_t osn_uac_call_on_2xx(struct osn_uac_call *c, const struct osn_uac_cfg *cfg, double now,
                             struct osn_uac_acts *a);

/* The same for the attempt's other events: a final response >= 300 (`status`, Retry-After
 * `retry_after`, -1 none), Timer B or a transport error (status 0). Its acts' bits (STOP, and
 * OUTCOME and END, or DRAW), *a's outcome and retry_after as they say. A driver may call it for
 * these instead of osn_uac_call_on_invite, which calls it. */
uint32_t osn_uac_call_on_end(struct osn_uac_call *c, const struct osn_uac_cfg *cfg, int tu,
                             int status, int retry_after, struct osn_uac_acts *a);

/* After DRAW: the driver's uniform draw u in [0, 1) and retry delay draw `delay` (s) decide
 * whether the caller tries again (RETRY, ARM) or the outcome is the call's (OUTCOME, END). */
void osn_uac_call_retry(struct osn_uac_call *c, const struct osn_uac_cfg *cfg, double now, double u,
                        double delay, struct osn_uac_acts *a);

/* The attempt's call key is `key` (osn_uas_call_key of its Call-ID on the wire): whether its
 * callee will hang up, decided as the UAS decides it (osn_uas_callee_hangs_up). Call it after
 * osn_uac_call_start, before the 2xx: a call the callee hangs up arms no hold. */
void osn_uac_call_keyed(struct osn_uac_call *c, const struct osn_uac_cfg *cfg, uint64_t key);

/*
 * A BYE of the callee reached the caller (c NULL: a Call-ID of no call of ours). Returns the
 * status the caller answers it with (RFC 3261 15.1.2: 200 in a dialog it has, 481 in none,
 * 12.2.2) and the acts: for a call that is up, HUNG_UP (its timer put away, counted) and END;
 * a BYE that crossed the caller's own (both hung up at once) is answered 200 and the caller's
 * BYE's answer ends the call (no acts).
 */
int osn_uac_call_on_bye_request(struct osn_uac_call *c, struct osn_uac_acts *a);

/* The call's timer fired: patience (CANCEL when RFC 3261 9.1 allows it), hold (BYE), retry
 * wait (ATTEMPT). */
void osn_uac_call_on_timer(struct osn_uac_call *c, struct osn_uac_acts *a);

/* An event of the call's BYE client transaction: its final answer or timeout ends the call. */
void osn_uac_call_on_bye(struct osn_uac_call *c, int tu, int status, struct osn_uac_acts *a);

/* The traffic is over (the node's end of run): a call that is up hangs up now (BYE); a call
 * whose retry is due at `due`, later than cfg->retry_until, ends with the attempt that failed
 * (OUTCOME, END). */
void osn_uac_call_on_traffic_end(struct osn_uac_call *c, const struct osn_uac_cfg *cfg, double due,
                                 struct osn_uac_acts *a);

/* A call's hold time (s): mean x a unit exponential that is a function of the run's hold key and
 * the call's number alone (splitmix64 of key ^ origin, a bijection), so that a call holds as
 * long whatever happened before it, in both worlds (common random numbers). */
double osn_uac_hold_draw(double mean, uint64_t key, uint64_t origin);

#endif

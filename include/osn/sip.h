/*
 * The RFC 3261 transaction layer, clock-free: the four transaction state machines of §17 with
 * the RFC 6026 amendments, their timers, and the transaction table that matches messages to
 * transactions (§17.1.3, §17.2.3). UDP only.
 *
 * A transaction never calls a clock, a timer or a socket. Each entry point takes `now` (seconds)
 * and one event — a message from the transport, a response from the TU, a timer firing, a
 * transport error — and fills a caller-provided struct osn_sip_out with the actions: messages
 * to send (each marked original or retransmission), timers to set or cancel (absolute
 * deadlines), and at most one notification for the TU. The discrete-event simulator drives it in
 * virtual time, a real node with a monotonic clock and a socket; nothing is allocated per event.
 *
 * Timers. A transaction has at most two timers armed at once, one per slot: slot 0 holds the
 * retransmission timer (A, E, G, or the 200 ms "100 Trying" timer of §17.2.1), slot 1 the
 * lifetime timer (B, D, F, H, I, J, K, L, M). A "set" action on a slot replaces whatever that
 * slot held, so a driver can embed two timer events per transaction, or one event at
 * out->deadline. The transaction remembers what is armed: a firing of a timer that is no longer
 * armed (a cancel the driver did not carry out) is ignored and counted, never acted on.
 *
 * Messages are numeric (struct osn_sip_msg): the simulator fills them directly. A text parser
 * and printer (zero-copy, STYLE convention 11) that fill the same struct are the next step for
 * the real node.
 *
 * Ownership. Transactions are caller-owned memory (embed a struct osn_sip_txn in a call or leg
 * object and recover it with container_of, or keep a pool); the layer borrows it from the start
 * call until the event whose out->terminated is true (or osn_sip_txn_abort()), and keeps it in
 * its table meanwhile. The layer owns only the table's slot array, which doubles (amortised)
 * when the live transactions would fill more than half of it.
 */
#ifndef OSN_SIP_H
#define OSN_SIP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- messages ---- */

enum osn_sip_method {
    OSN_SIP_NOMETHOD = 0,
    OSN_SIP_INVITE,
    OSN_SIP_ACK,
    OSN_SIP_BYE,
    OSN_SIP_CANCEL,
    OSN_SIP_OPTIONS,
    OSN_SIP_REGISTER,
    OSN_SIP_OTHER, /* any other non-INVITE method */
    OSN_SIP_NMETHODS
};

/* RFC 7339 Via parameters, as numbers. flags says which are present. */
#define OSN_SIP_OC_PRESENT  0x01 /* "oc" (valueless in a request: "I support overload control") */
#define OSN_SIP_OC_VALUE    0x02 /* "oc=N": loss percentage (loss) or request rate (rate) */
#define OSN_SIP_OC_VALIDITY 0x04 /* "oc-validity=ms" */
#define OSN_SIP_OC_SEQ      0x08 /* "oc-seq=int.frac" */
#define OSN_SIP_OC_ALGO     0x10 /* "oc-algo=..." */

/* oc-algo as a bit set: a request offers several (loss MUST be among them, RFC 7339 4.2), a
 * response names exactly one. Preference order is not kept: loss, then rate. */
#define OSN_SIP_ALGO_LOSS 0x01
#define OSN_SIP_ALGO_RATE 0x02 /* RFC 7415 */

struct osn_sip_oc {
    uint8_t flags;        /* OSN_SIP_OC_* */
    uint8_t algo;         /* OSN_SIP_ALGO_* bits */
    uint32_t value;       /* oc=N */
    uint32_t validity_ms; /* oc-validity (RFC 7339 4.3: 500 ms when absent) */
    uint32_t seq_frac;    /* oc-seq fraction normalised to 5 digits: "1.78" -> 78000 */
    uint64_t seq_int;     /* oc-seq integer part */
};

/* A SIP message with its identities as integers: the facts the transaction layer needs, with no
 * bytes (the simulator's messages are these alone; the node fills one from a struct osn_sip_wire,
 * the message as it is on the wire, osn/sip_wire.h). status == 0 makes it a request of `method`;
 * 100..699 a response, whose `method` is its CSeq method. */
struct osn_sip_msg {
    uint8_t method;      /* enum osn_sip_method */
    uint16_t status;     /* 0: request; else the status code */
    uint32_t cseq;       /* CSeq number */
    int32_t retry_after; /* Retry-After in seconds (RFC 3261 20.33), -1 when absent */
    uint64_t call_id;
    uint64_t branch;           /* top Via branch ("z9hG4bK" + this number) */
    uint64_t sent_by;          /* top Via sent-by (host:port) as a number */
    uint64_t from_tag, to_tag; /* 0: no tag */
    struct osn_sip_oc oc;      /* top Via overload-control parameters */
};

/* ---- configuration ---- */

struct osn_sip_cfg {
    double t1, t2, t4; /* RFC 3261 Table 4 (s): 0.5, 4, 5 */
    double timer_d;    /* INVITE client Completed wait (s), > 32 on UDP: 32 */
    /* INVITE server: delay before the layer sends 100 Trying itself when the TU has sent no
     * response (RFC 3261 17.2.1, "200 ms"): 0.2. 0 sends it at once; < 0 never (the TU does). */
    double trying_delay;
    /* Retransmissions a client transaction sends at most before it times out at the next
     * Timer A/E firing; -1: no limit (RFC: until Timer B/F). SIPp: 5 (INVITE), 9 (others). */
    int invite_max_retrans, non_invite_max_retrans;
    bool rfc6026;            /* Accepted states with Timers L, M (true); false: 2xx terminates */
    bool timer_b_proceeding; /* keep Timer B after a 1xx (libre does; RFC 3261 17.1.1.2 does not) */
    /* Whether the TU should honour Retry-After in a 503. The layer never acts on it: it only
     * reports out->retry_after. true by default, false in SIPp mode. */
    bool honor_retry_after;
};

/* RFC 3261 defaults: T1 = 0.5 s, T2 = 4 s, T4 = 5 s, D = 32 s, 100 Trying after 200 ms, no
 * retransmission limit, RFC 6026 on, Timer B stops on a 1xx, Retry-After honoured. */
void osn_sip_cfg_default(struct osn_sip_cfg *cfg);

/* The defaults, then a SIPp-like client (docs/protocols.md 1.9): at most 5 INVITE and 9 non-INVITE
 * retransmissions, Retry-After ignored. */
void osn_sip_cfg_sipp(struct osn_sip_cfg *cfg);

/* ---- actions ---- */

enum osn_sip_timer_id {
    OSN_SIP_TIMER_NONE = 0,
    OSN_SIP_TIMER_A,      /* INVITE request retransmit, slot 0 */
    OSN_SIP_TIMER_B,      /* INVITE client timeout */
    OSN_SIP_TIMER_D,      /* INVITE client Completed */
    OSN_SIP_TIMER_E,      /* non-INVITE request retransmit, slot 0 */
    OSN_SIP_TIMER_F,      /* non-INVITE client timeout */
    OSN_SIP_TIMER_G,      /* INVITE final response retransmit, slot 0 */
    OSN_SIP_TIMER_H,      /* INVITE server wait for ACK */
    OSN_SIP_TIMER_I,      /* INVITE server Confirmed */
    OSN_SIP_TIMER_J,      /* non-INVITE server Completed */
    OSN_SIP_TIMER_K,      /* non-INVITE client Completed */
    OSN_SIP_TIMER_L,      /* INVITE server Accepted (RFC 6026) */
    OSN_SIP_TIMER_M,      /* INVITE client Accepted (RFC 6026) */
    OSN_SIP_TIMER_TRYING, /* INVITE server: send 100 Trying (17.2.1), slot 0 */
    OSN_SIP_NTIMERS
};

/* The slot (0: retransmission, 1: lifetime) a timer lives in. */
static inline int osn_sip_timer_slot(int id)
{
    return id == OSN_SIP_TIMER_A || id == OSN_SIP_TIMER_E || id == OSN_SIP_TIMER_G ||
                           id == OSN_SIP_TIMER_TRYING
                   ? 0
                   : 1;
}

enum osn_sip_tu_event {
    OSN_SIP_TU_NONE = 0,
    OSN_SIP_TU_REQUEST,         /* server: a new request for the TU (out->msg) */
    OSN_SIP_TU_RESPONSE,        /* client: a response for the TU (out->msg, out->retry_after) */
    OSN_SIP_TU_ACK,             /* INVITE server, Accepted: an ACK for the TU (RFC 6026 7.1) */
    OSN_SIP_TU_TIMEOUT,         /* B, F, H, or SIPp retransmissions exhausted: act as on 408 */
    OSN_SIP_TU_TRANSPORT_ERROR, /* act as on 503 (RFC 3261 8.1.3.1) */
    OSN_SIP_TU_STRAY,           /* osn_sip_layer_recv: no transaction matched (out->msg) */
};

struct osn_sip_send {
    /* A request (status 0, ACK included) or a response, borrowed, not copied: the transaction's
     * request or kept response, or out->built. Valid until the next call on the transaction
     * with this output. */
    const struct osn_sip_msg *msg;
    bool retrans; /* a retransmission of a message sent before */
};

struct osn_sip_timer {
    uint8_t id;   /* enum osn_sip_timer_id */
    uint8_t slot; /* osn_sip_timer_slot(id) */
    bool set;     /* true: arm at `at`, replacing the slot's timer; false: cancel it */
    double at;    /* absolute deadline (s) */
};

/* What one event produced. Every entry point resets it first. */
struct osn_sip_out {
    int nsend;
    struct osn_sip_send send[2];
    /* A message the layer made for this output that the transaction does not keep: an ACK
     * (17.1.1.3), or a retransmitted 2xx of the TU in Accepted (RFC 6026 7.1) */
    struct osn_sip_msg built;
    int ntimer;
    struct osn_sip_timer timer[4];
    int tu;                        /* enum osn_sip_tu_event */
    const struct osn_sip_msg *msg; /* the message the TU event is about (borrowed input) */
    int32_t retry_after;           /* Retry-After of a TU_RESPONSE, -1 when absent */
    int timer_id;                  /* the timer behind a TU_TIMEOUT */
    bool terminated; /* the transaction ended: out of the table, caller may reuse it */
    double deadline; /* the transaction's earliest armed timer, INFINITY when none */
};

/* ---- transactions ---- */

enum osn_sip_state {
    OSN_SIP_NOSTATE = 0,
    OSN_SIP_CALLING,    /* INVITE client */
    OSN_SIP_TRYING,     /* non-INVITE client and server */
    OSN_SIP_PROCEEDING, /* all four */
    OSN_SIP_COMPLETED,  /* all four */
    OSN_SIP_CONFIRMED,  /* INVITE server */
    OSN_SIP_ACCEPTED,   /* INVITE client and server (RFC 6026) */
    OSN_SIP_TERMINATED
};

enum osn_sip_role { OSN_SIP_CLIENT = 0, OSN_SIP_SERVER = 1 };

/* What a response adds to the request it answers: its Via, From, Call-ID and CSeq are the
 * request's (RFC 3261 8.2.6.2), so a transaction keeps only this of a response. */
struct osn_sip_resp {
    uint16_t status;
    int32_t retry_after; /* -1 when absent */
    uint64_t to_tag;
};

/* A transaction. Caller-owned memory; the fields are the layer's (read them, don't write). */
struct osn_sip_txn {
    struct osn_sip_msg req; /* the request that created it */
    double at[2];           /* deadlines of the armed timers, by slot */
    double ival;            /* current retransmission interval of A, E or G (s) */
    uint32_t nretrans;      /* retransmissions this transaction sent (requests or responses) */
    uint32_t absorbed;      /* retransmitted requests (server) / responses (client) absorbed */
    uint32_t hash;          /* of the table key, kept so that the table never rehashes it */
    uint8_t role;           /* enum osn_sip_role */
    uint8_t state;          /* enum osn_sip_state */
    uint8_t tid[2];         /* armed timer ids by slot, OSN_SIP_TIMER_NONE when empty */
    bool has_resp;          /* resp is valid */
    bool in_table;          /* in a table (osn_sip_table_add until osn_sip_table_remove) */
    /* Over a reliable transport (TCP; osn_sip_ctxn_start_over): no request or final response
     * is resent and the waits for copies (Timers D, I, J, K) are zero. */
    bool reliable;
    /* The owner's (the network simulator keeps its element and hop here): the layer never reads
     * or writes these bytes, not even when it starts the transaction. 16 bits each, in what
     * was padding before resp: an element id of a network of thousands. */
    uint16_t user[2];
    /* Server: the last response sent; client: the final (its To tag goes in the ACK). Valid
     * only with has_resp; last, so that starting a transaction clears everything before it and
     * not these bytes. A server sends it again as the request's identities with these fields
     * and no overload-control parameters: RFC 7339 has a server give its current state in
     * every response it sends, which the sender adds at that moment (the network simulator's
     * links do), not the state of the first sending. */
    struct osn_sip_resp resp;
};

/* ---- transaction table (§17.1.3, §17.2.3) ---- */

/* Open-addressing hash table (linear probing, at most half full) of 16-byte slots, each a
 * transaction's hash and a pointer to it; the transactions hold no links. Keys: a client
 * transaction by (top-Via branch, CSeq method); a server transaction by (branch, sent-by,
 * method), where an ACK looks up the INVITE. */
struct osn_sip_slot; /* src/sip/table.c */
struct osn_sip_table {
    struct osn_sip_slot *slot; /* a power of two of them */
    size_t mask;               /* number of slots - 1; n <= (mask + 1) / 2 */
    size_t n;                  /* transactions in the table */
};

/* Initialises an empty table that holds `hint` transactions without growing. 0 or OSN_ENOMEM. */
int osn_sip_table_init(struct osn_sip_table *tb, size_t hint);

/* Frees the slot array; transactions still in it are forgotten (they are the caller's). */
void osn_sip_table_release(struct osn_sip_table *tb);

/* Adds `t` (borrowed until removed) under the key of t->role and t->req. O(1) amortised.
 * Returns 0, OSN_EINVAL when it is in a table already or its key is taken, or OSN_ENOMEM when
 * the slot array could not grow (t is then not added). */
int osn_sip_table_add(struct osn_sip_table *tb, struct osn_sip_txn *t);

/* Removes `t` from the table it is in; no-op when in none. O(1) expected. Only the slot array
 * is written: no other transaction is touched. */
void osn_sip_table_remove(struct osn_sip_table *tb, struct osn_sip_txn *t);

/* The transaction of `role` that message `m` matches, or NULL. O(1). A response matches a
 * client transaction (RFC 3261 17.1.3), a request a server transaction (17.2.3). */
struct osn_sip_txn *osn_sip_table_find(const struct osn_sip_table *tb, int role,
                                       const struct osn_sip_msg *m);

/* Whether message `m` matches transaction `t` by the keys the table uses: a response matches a
 * client transaction (RFC 3261 17.1.3), a request a server transaction (17.2.3; ACK matches
 * INVITE). */
bool osn_sip_txn_matches(const struct osn_sip_txn *t, const struct osn_sip_msg *m);

/* ---- the layer ---- */

struct osn_sip_stats {
    uint64_t client_started, server_started, terminated;
    uint64_t timeouts;      /* TU_TIMEOUT notifications */
    uint64_t req_sent;      /* original requests sent (client; ACKs included) */
    uint64_t req_retrans;   /* request retransmissions sent (A, E, re-sent ACKs) */
    uint64_t resp_sent;     /* original responses sent (server; automatic 100s included) */
    uint64_t resp_retrans;  /* response retransmissions sent (G, answers to absorbed requests) */
    uint64_t req_absorbed;  /* retransmitted requests (ACKs included) absorbed by servers */
    uint64_t resp_absorbed; /* retransmitted responses absorbed by clients */
    uint64_t trying_auto;   /* 100 Trying sent by the layer (17.2.1) */
    uint64_t stale_timers;  /* firings of timers no longer armed, ignored */
    uint64_t stray;         /* messages osn_sip_layer_recv matched to no transaction */
};

struct osn_sip_layer {
    struct osn_sip_cfg cfg;
    struct osn_sip_table table; /* empty and unused in an unindexed layer */
    struct osn_sip_stats stats;
    bool indexed;
};

/* Initialises a layer with a copy of *cfg (NULL: the defaults), sized for about `hint` live
 * transactions. Returns 0, OSN_EINVAL (T1, T2, T4 or D not positive and finite, T2 < T1) or
 * OSN_ENOMEM. */
int osn_sip_layer_init(struct osn_sip_layer *l, const struct osn_sip_cfg *cfg, size_t hint);

/* Initialises a layer that keeps no table, for a caller that knows which transaction a message
 * is for without looking it up (the network simulator finds it from the call and the hop). It
 * checks the candidate with osn_sip_txn_matches and passes the message on with
 * osn_sip_txn_recv. Starting a transaction then refuses no key, and osn_sip_layer_match and
 * osn_sip_layer_recv match nothing. Returns 0 or OSN_EINVAL, as osn_sip_layer_init. */
int osn_sip_layer_init_unindexed(struct osn_sip_layer *l, const struct osn_sip_cfg *cfg);

/* Frees the layer's table. Live transactions are forgotten (they are the caller's). */
void osn_sip_layer_release(struct osn_sip_layer *l);

/* The transaction `m` matches (a response: client; a request: server), or NULL. */
struct osn_sip_txn *osn_sip_layer_match(const struct osn_sip_layer *l, const struct osn_sip_msg *m);

/* The INVITE server transaction a CANCEL request cancels (RFC 3261 9.2), or NULL. */
struct osn_sip_txn *osn_sip_layer_match_cancelled(const struct osn_sip_layer *l,
                                                  const struct osn_sip_msg *cancel);

/* Starts a client transaction on `t` (borrowed; zeroed memory or a transaction that has
 * terminated or been aborted) for request `req` (copied; not an ACK): sends
 * it, arms A/E and B/F (RFC 3261 17.1.1.2, 17.1.2.2) and adds it to the table. Returns 0,
 * OSN_EINVAL (bad arguments, branch already in use) or OSN_ENOMEM. */
int osn_sip_ctxn_start(struct osn_sip_layer *l, struct osn_sip_txn *t,
                       const struct osn_sip_msg *req, double now, struct osn_sip_out *out);

/* As osn_sip_ctxn_start, over a reliable transport (TCP) when `reliable`: RFC 3261 17.1.1.2 and
 * 17.1.2.2 arm no Timer A or E (the transport delivers or fails, it never loses), and Timers D and
 * K are zero: the transaction ends as it reaches Completed (the ACK of a non-2xx sent first).
 * Timers B, F and M are as on UDP. osn_sip_ctxn_start is this with `reliable` false. */
int osn_sip_ctxn_start_over(struct osn_sip_layer *l, struct osn_sip_txn *t,
                            const struct osn_sip_msg *req, bool reliable, double now,
                            struct osn_sip_out *out);

/* Starts a server transaction on `t` (borrowed, as for osn_sip_ctxn_start) for a request from the
 * transport `req` (copied; not an ACK) that matched none: passes it to the TU (TU_REQUEST) and, for
 * an INVITE, sends or schedules 100 Trying. Returns 0, OSN_EINVAL or OSN_ENOMEM. */
int osn_sip_stxn_start(struct osn_sip_layer *l, struct osn_sip_txn *t,
                       const struct osn_sip_msg *req, double now, struct osn_sip_out *out);

/* As osn_sip_stxn_start, for a request that came over a reliable transport (TCP) when
 * `reliable`: RFC 3261 17.2.1 arms no Timer G (the final response is sent once) and Timer I is
 * zero (the ACK ends the transaction); 17.2.2: Timer J is zero (the final response ends it).
 * Timers H and L, and the 100 Trying, are as on UDP. */
int osn_sip_stxn_start_over(struct osn_sip_layer *l, struct osn_sip_txn *t,
                            const struct osn_sip_msg *req, bool reliable, double now,
                            struct osn_sip_out *out);

/* Gives `t` a message from the transport that matched it (a response for a client, a request
 * for a server transaction). `m` is borrowed: out->msg may point to it. Returns 0 or OSN_EINVAL
 * (bad arguments, terminated transaction, a message of the wrong kind). A message that has no
 * meaning in the current state is absorbed or ignored: 0, with the actions it calls for. */
int osn_sip_txn_recv(struct osn_sip_layer *l, struct osn_sip_txn *t, const struct osn_sip_msg *m,
                     double now, struct osn_sip_out *out);

/* Passes the TU's response `resp` (copied; status 100..699) to the server transaction `t`, which
 * sends it and changes state (RFC 3261 17.2.1, 17.2.2). The TU gives the status, To tag,
 * Retry-After and oc parameters; the method, CSeq, Call-ID, From and Via come from the request
 * (8.2.6.2). A response the state no longer accepts (a second final) is discarded: 0, no
 * actions. The response goes out as given; when the transaction sends it again it has no oc
 * parameters (struct osn_sip_txn, resp). */
int osn_sip_stxn_respond(struct osn_sip_layer *l, struct osn_sip_txn *t,
                         const struct osn_sip_msg *resp, double now, struct osn_sip_out *out);

/* Timer `id` of `t` fired at `now`. A timer that is not armed is ignored (0, no actions,
 * stats.stale_timers). Returns 0 or OSN_EINVAL (now before the deadline, bad arguments). */
int osn_sip_txn_timer(struct osn_sip_layer *l, struct osn_sip_txn *t, int id, double now,
                      struct osn_sip_out *out);

/* The transport failed to send for `t` (RFC 3261 17.1.1.2, 17.1.4, 17.2.4): TU_TRANSPORT_ERROR
 * and termination, where the state allows. */
int osn_sip_txn_transport_error(struct osn_sip_layer *l, struct osn_sip_txn *t, double now,
                                struct osn_sip_out *out);

/* Drops `t` at once, without actions (teardown); the caller cancels its own timer events. */
void osn_sip_txn_abort(struct osn_sip_layer *l, struct osn_sip_txn *t);

/* Convenience for a transport: matches `m` and hands it to its transaction (returns 0, *tp is
 * the transaction); else, for a request other than ACK and a non-NULL `fresh`, starts a server
 * transaction on `fresh` (returns 1, *tp = fresh); else reports TU_STRAY (returns 2, *tp = NULL):
 * a response with no client transaction, or an ACK for a 2xx. Negative: an OSN_E* error. */
int osn_sip_layer_recv(struct osn_sip_layer *l, const struct osn_sip_msg *m,
                       struct osn_sip_txn *fresh, struct osn_sip_txn **tp, double now,
                       struct osn_sip_out *out);

/* ---- names for traces ---- */

const char *osn_sip_statename(int state); /* "Calling", ..., "?" */
const char *osn_sip_timer_name(int id);   /* "A", ..., "100" */
const char *osn_sip_method_name(int method);
const char *osn_sip_tu_name(int tu_event);

/* Orders two oc-seq values (RFC 7339 4.4): < 0, 0, > 0. */
static inline int osn_sip_oc_seq_cmp(const struct osn_sip_oc *a, const struct osn_sip_oc *b)
{
    if (a->seq_int != b->seq_int)
        return a->seq_int < b->seq_int ? -1 : 1;
    return (a->seq_frac > b->seq_frac) - (a->seq_frac < b->seq_frac);
}

#endif

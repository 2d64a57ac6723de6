/*
 * Private interface of the SIP network simulator: the objects of one replication (calls,
 * transaction wrappers, messages, elements), the totals it produces and the functions its files
 * share. The files, one job each:
 *   net.c         the public API of osn/net.h: defaults, checks, measures, the replications
 *   net_run.c     one replication: setup, the event loop, teardown
 *   net_pool.c    calls, transactions and messages from pools
 *   net_txn.c     carrying out the transaction layer's outputs (timers, sends) and responses
 *   net_tu.c      the elements' transaction users, deciding through osn/elem.h
 *   net_server.c  messages reaching an element, its CPU (osn_elem_server)
 *   net_source.c  call sources
 *   net_trace.c   the --trace rows of replication 0
 * The drivers' differential test drives one element by hand through this interface
 * (tests/net_probe.c: the probe is the test's, as the node's seam is).
 * What an element does with a message (forward, shed, reject, answer) is decided in src/elem/.
 */
#ifndef OSN_NET_INT_H
#define OSN_NET_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "osn/container_of.h"
#include "osn/ctl.h"
#include "osn/des.h"
#include "osn/elem.h"
#include "osn/mem.h"
#include "osn/net.h"
#include "osn/rng.h"
#include "osn/sip.h"

/* Setup- and response-delay histograms: the UAC's layout (osn_uac_delay_bin). */
#define OSN__NET_HB OSN_UAC_DELAY_BINS

/* Network totals over the observation window. */
enum osn__net_tot {
    OSN__NT_TIME,
    OSN__NT_STARTED,
    OSN__NT_GOOD,
    OSN__NT_FAIL_TIMEOUT,
    OSN__NT_FAIL_REJECTED,
    OSN__NT_FAIL_OTHER,
    OSN__NT_SETUP_N,
    OSN__NT_SETUP_SUM,
    OSN__NT_CORE_NEW,  /* new requests (INVITE, BYE) the core processed */
    OSN__NT_CORE_RETX, /* retransmitted requests the core absorbed */
    OSN__NT_ADMIT,
    OSN__NT_ADMIT_FAIL,
    OSN__NT_MODE0, /* core time in mode 0, 1, 2 */
    OSN__NT_MODE1,
    OSN__NT_MODE2,
    OSN__NT_MSGS,     /* messages processed by all servers */
    OSN__NT_TRYING_N, /* first 100 Trying at the UAC: samples, sum of delays */
    OSN__NT_TRYING_SUM,
    OSN__NT_NO_TRYING, /* calls whose outcome came without any 100 Trying at the UAC */
    OSN__NT_ONSETS,    /* core: entries from mode 0 into overload (mode 1 or 2) */
    /* Retrials (net_source.c): retries started; calls ended (their outcome decided, retried
     * no more) and their attempts; good calls by the retries before the good attempt (k = 0, 1,
     * 2, 3 or more). */
    OSN__NT_RETRIES,
    OSN__NT_ENDED,
    OSN__NT_ENDED_ATTEMPTS,
    OSN__NT_GOOD_K0,
    OSN__NT_GOOD_K3 = OSN__NT_GOOD_K0 + 3,
    /* Callers who give up (source.patience): calls abandoned, CANCELs the UACs sent. */
    OSN__NT_ABANDONED,
    OSN__NT_CANCELS,
    /* How answered calls ended (issue 33, source.callee_hangs_up): the caller's BYE answered
     * 2xx, the callee's BYE answered 200 by the caller (the node's generator's byes_ok and
     * byes_in). */
    OSN__NT_BYES_OK,
    OSN__NT_BYES_IN,
    /* Attempts the sources' own client halves shed ([control] at = edge or both; RFC 7339 5.3),
     * each also failed as rejected: the node's generator's shed_local. */
    OSN__NT_SHED_LOCAL,
    OSN__NT_HIST,                                     /* OSN__NET_HB setup-delay bins follow */
    OSN__NT_TRYING_HIST = OSN__NT_HIST + OSN__NET_HB, /* then as many 100 Trying bins */
    OSN__NT_ELEM = OSN__NT_TRYING_HIST + OSN__NET_HB, /* then per element blocks */
};

/* Per-element totals, a block of OSN__NE_N per element. */
enum osn__net_etot {
    OSN__NE_PROC, /* + kind */
    OSN__NE_DROPPED = OSN__NE_PROC + OSN_NET_NKINDS,
    OSN__NE_BUSY,
    OSN__NE_AREA,
    OSN__NE_NEWINV,     /* INVITE requests arriving (originals and copies) */
    OSN__NE_CANCEL_FWD, /* CANCELs passed on (OSN_ELEM_A_CANCEL_BRANCH) */
    OSN__NE_487,        /* INVITEs answered 487 (OSN_ELEM_A_RESPOND_INVITE) */
    /* a source's: its calls started (first attempts), its attempts the core admitted, its good
     * calls (the call's `src` names the source) */
    OSN__NE_SRC_STARTED,
    OSN__NE_SRC_ADMIT,
    OSN__NE_SRC_GOOD,
    OSN__NE_SRC_SETUP_N, /* a source's: its calls' setup delays, count and sum (s) */
    OSN__NE_SRC_SETUP_SUM,
    OSN__NE_N
};

/* The totals of a network of nelem elements: the network's, then a block per element. */
static inline int osn__net_ntot(int nelem)
{
    return OSN__NT_ELEM + OSN__NE_N * nelem;
}

/* A replication's totals, ntot of them (osn__net_rep_size): a record of its own size, so the
 * replications sit in one array of records and travel between processes as bytes (osn/split.h). */
struct osn__net_rep {
    uint64_t events, messages;
    double tot[];
};

static inline size_t osn__net_rep_size(int ntot)
{
    return sizeof(struct osn__net_rep) + (size_t)ntot * sizeof(double);
}

/* Hops of a call's path at most: a path of MAXHOP + 1 elements, the source, up to MAXHOP - 1
 * proxies and the UAS. Eight fit the per-hop bit masks of struct call (a byte each), the hop in
 * a branch (branch(): hop * 4 + kind < 32) and an IMS call's proxies (P-CSCF, S-CSCF, AS,
 * I-CSCF, S-CSCF, P-CSCF). The call's transaction slots are sized for its network's path, not
 * for MAXHOP (struct call, `slot`). */
#define MAXHOP 8

enum ev_type {
    EV_ARRIVAL = 1,
    EV_TXN0,
    EV_TXN1,
    EV_LINK,
    EV_SERVICE,
    EV_HOLD,
    EV_TRACE,
    EV_2XX,
    EV_RETRY,    /* a failed attempt's caller tries again (the call's `hold` event, reused) */
    EV_PATIENCE, /* an attempt's caller runs out of patience (the `hold` event, not yet needed) */
    EV_RING,     /* the UAS's ring delay is over (the `rtx` event, before any 2xx needs it) */
    EV_HANGUP    /* the callee's hold is over (struct cancels' `hangup`, source.callee_hangs_up) */
};
enum role { R_SRC, R_PROXY, R_UAS };
/* A branch's kind, its two low bits (branch()): B_UBYE is the callee's BYE, which goes upstream
 * (source.callee_hangs_up): its requests travel toward the source, its responses toward the
 * UAS, the other way round from every other message (toward_uas). */
enum bkind { B_INVITE, B_BYE, B_ACK, B_UBYE };

/* A message on a link or in a server. */
struct nmsg {
    struct osn_des_ev ev;
    struct osn_sip_msg m;
    union {
        struct osn_elem_item item; /* in use: its place in a server (osn/elem.h) */
        struct nmsg *next_free;    /* in the pool: the free list */
    };
    struct call *call;
    uint16_t to;
    uint8_t hop;
};

struct ntxn {
    struct osn_sip_txn t; /* t.user[0]: the element (txn_elem), t.user[1]: the hop (txn_hop) */
    struct osn_des_ev ev[2];
    union {
        struct call *call; /* in use */
        struct ntxn *next; /* in the pool: the free list */
    };
    double t0;
};
/* Three whole cache lines, as the pool blocks are aligned (OSN_MEM_BLOCK): a transaction met
 * again after its 32 s timers is read from memory, line by line. */
#define NTXN_BYTES 192
_Static_assert(sizeof(void *) != 8 || sizeof(struct ntxn) == NTXN_BYTES,
               "struct ntxn: keep it three cache lines");
_Static_assert(OSN_NET_MAX_ELEMS <= UINT16_MAX && MAXHOP <= UINT16_MAX,
               "t.user, nmsg.to and call.src hold an element in 16 bits");
/* A call's uid is its source's count of calls (1, 2, ...) plus the source shifted by UID_SHIFT
 * (net_source.c, start_attempt): numbered by its source alone, a call (its hold time, its retry,
 * patience and ring draws, all keyed by its uid or its origin) is the same whatever the other
 * sources offer, and a partitioned run (docs/scale.md) numbers it as the sequential run does.
 * The source goes in the high bits, not in the low ones as the plan had it (count x 16,384 +
 * source), so that source 0 numbers its calls 1, 2, ... as before and as the node's load
 * generator does (src/node/gen.c): a network of one source keeps its numbers, and the element
 * drivers' differential test its agreement. Every shape has OSN_NET_MAX_EDGES = 2^14 sources at
 * most (net.edges' bound, a tree's, a written topology's), so a first attempt's uid stays below
 * 2^48 (RETRY_UID) while its source starts fewer than 2^34 calls. */
#define UID_SHIFT 34
_Static_assert(OSN_NET_MAX_EDGES <= 1 << (48 - UID_SHIFT), "a source's uids stay below 2^48");

/* The sender of the events that belong to no element (the trace's rows): OSN_DES_KEY's 16 bits
 * hold every element below it. */
#define NET_SENDER UINT16_MAX
_Static_assert(OSN_NET_MAX_ELEMS < NET_SENDER, "an element's key is below the network's");

/* A call's CANCEL transactions by hop, server (at path[h+1]) and client (at path[h]): RFC 3261 9
 * makes a CANCEL a transaction of its own, matched apart from the INVITE it cancels by its
 * method. Few calls have one, so a call holds a pointer to this block, made on its first CANCEL
 * (net_pool.c), rather than two more slots per hop. A fanout call that failed over keeps here too
 * the INVITE transactions of the attempt that failed, from the edge's on (gone_*): they end on
 * their own timers, and the messages of their branch (an ACK of the 503, a 503 resent) still
 * find them, while the call's slots hold the new attempt's (net_tu.c, failover). */
struct cancels {
    struct ntxn *stx[MAXHOP], *ctx[MAXHOP];
    struct ntxn *gone_stx[MAXHOP], *gone_ctx[MAXHOP];
    /* The callee's BYE (source.callee_hangs_up), few calls again: its transactions by hop,
     * server (at path[h], upstream end of the hop) and client (at path[h+1]); the UAS's timer
     * of the hold's end (EV_HANGUP, holding a call reference while armed), when the 2xx went
     * (osn_uas_hangup_fire waits for its ACK or its end), the call this block is of. */
    struct ntxn *ubye_stx[MAXHOP], *ubye_ctx[MAXHOP];
    struct osn_des_ev hangup;
    double t2xx;
    bool hangup_armed; /* once a call: its 2xx's copies arm nothing */
    struct call *call;
    struct cancels *next_free; /* in the pool: the free list */
};

struct call {
    /* The UAC's timer: its patience while the attempt waits for an answer (EV_PATIENCE), then
     * the hold time (EV_HOLD) or the wait before a retry (EV_RETRY). */
    struct osn_des_ev hold;
    /* UAS core: the end of the ring delay (EV_RING), then the next 2xx retransmission
     * (EV_2XX, osn_uas_2xx) */
    struct osn_des_ev rtx;
    struct osn_uas_2xx uas;
    struct osn_uac_call uac;
    uint64_t uid;
    /* The uid of the call's first attempt: a retry is a new INVITE with a uid of its own (a new
     * Call-ID), but the same call, whose hold time and retry draws depend on this one. */
    uint64_t origin;
    uint32_t refs, next_free, idx;
    uint16_t src;
    /* The elements of the call's path: path[0] the source, path[nhop] the UAS; hop h is the
     * link from path[h] to path[h + 1]. Written when the call starts (the source, its proxy,
     * the rest of the network's path), and at a fan-out where the edge chooses (path[2]). */
    uint16_t path[MAXHOP + 1];
    uint8_t nhop;
    uint8_t fwd;  /* bit h: the INVITE arriving on hop h was taken by the TU */
    uint8_t bfwd; /* same for BYE */
    /* bit h: an INVITE (BYE) reached hop h's server and was kept (queued or handled), so a later
     * copy is known to be a retransmission on arrival, before its original is processed */
    uint8_t inv_in, bye_in;
    /* by hop: the responses the core kept (rsp_bit), so that it knows a copy on arrival */
    uint8_t rsp_in[MAXHOP];
    bool admitted;
    uint8_t cancel_in; /* as inv_in, for CANCEL */
    /* as bye_in and bfwd, for the callee's BYE (source.callee_hangs_up), which is kept and taken
     * at the upstream end of its hop */
    uint8_t ubye_in, ubfwd;
    /* bit h: a proxy keeps a CANCEL for the INVITE client transaction on hop h, which had no
     * provisional response when the CANCEL came (osn_elem_on_cancel_later) */
    uint8_t cancel_later;
    uint8_t core;       /* fanout: the core its INVITE went to (path[2] is that core) */
    uint8_t failovers;  /* fanout: times its INVITE went to another core (branch_core) */
    struct cancels *cx; /* NULL until the call's first CANCEL */
    /* The live transactions of the call by hop and request kind (0: INVITE, 1: BYE), server
     * (at path[h+1]) and client (at path[h]), four a hop: STX(c, h, k), CTX(c, h, k). This is
     * how the simulator matches a message: its layers keep no table
     * (osn_sip_layer_init_unindexed), and a candidate found here is checked with
     * osn_sip_txn_matches, so the answer is the table's. A call has the slots of its network's
     * path (net.call_size), not MAXHOP's: a 3-hop call (collapse, fanin, fanout) is 256 bytes,
     * 8,192 to a pool block as before the path was stored, where MAXHOP's slots would make every
     * call 416 bytes. A hop's four slots are 32 bytes aligned: one cache line holds them. */
    struct ntxn *slot[] __attribute__((aligned(32)));
};

_Static_assert(sizeof(void *) != 8 || offsetof(struct call, slot) + 3 * 4 * sizeof(void *) <= 256,
               "a call of a 3-hop path in 256 bytes: 8,192 to a pool block, as before");

/* Hop h's server and client transaction slots of call c for request kind k (req_slot). */
#define STX(c, h, k) ((c)->slot[4 * (h) + (k)])
#define CTX(c, h, k) ((c)->slot[4 * (h) + 2 + (k)])

/* The bytes of a call whose network's paths have nhop hops at most, whole cache lines, so that
 * every call in a pool block starts a line. */
static inline size_t call_bytes(int nhop)
{
    size_t n = offsetof(struct call, slot) + (size_t)nhop * 4 * sizeof(struct ntxn *);
    return (n + 63) & ~(size_t)63;
}

/* The counts of the current trace interval (net_trace.c), over the whole run, warm-up too. */
struct osn__net_trace {
    double outcome[OSN_UAC_NOUTCOMES]; /* calls ended, by enum osn_uac_outcome */
    double sent_503;                   /* new requests an element's overload control answered 503 */
    double retrans;                    /* retransmitted messages sent, every element and kind */
    double core_new, core_retx;        /* the core's new requests and absorbed retransmissions */
    double *setup;                     /* the setup delays (s) of the interval */
    size_t nsetup, setup_cap;
    long rows; /* rows written */
};

/* A network element: a source (UAC), a proxy or the UAS. */
struct element {
    int role;
    struct osn_sip_layer sip;
    const struct osn_net_server_cfg *sc;
    struct osn_ctl *srv; /* core: the server half */
    struct osn_ctl *cli; /* upstream of the core: the client half for the core */
    /* fanout edge: its cores, a client half each (owned), the element's choice among them; the
     * call's core is the index (c->core). NULL elsewhere. */
    struct osn_elem_hops *hops;
    struct osn_elem tu;            /* proxy, UAS: what the element's TU knows of it */
    struct osn_elem_server server; /* its CPU, buffer and queues */
    /* No controller, and new and retransmitted requests of every method both queued or both
     * free: a request's kind on arrival is its method's (net_server.c, arrival_kind). */
    bool kind_by_method;
    /* A proxy off the dialogs' path (osn_elem_on_dialog_path false): in-dialog messages pass it
     * by. Kept as one flag, as every message reaching an element asks. */
    bool off_path;
    /* is_core() of this element, and whether it offers oc to its next hop (it has a client half
     * toward every next hop: elem_cli() non-NULL for every call), asked per message and per
     * client transaction: flags, rather than the index arithmetic and the fanout's lookup. */
    bool core, offer_oc;
    /* A scripted outage ([server X] outage_start, outage_end): a flag, as every arrival asks. */
    bool outage;
    /* off_path || outage: the one flag an arrival tests for both (net_server.c, diverted). */
    bool divert;
    /* A scripted slowdown ([server X] slowdown_*): a flag, as every service start asks. */
    bool slow;
    /* The tie-breaking key of the next event this element schedules, OSN_DES_KEY(its id, the
     * events it scheduled before): events of one instant fire by sender and the sender's own
     * order, not by the order the network happened to schedule them in (next_key). */
    uint64_t key;
    struct osn_des_ev svc, arr;
    /* source */
    struct osn_des_arr darr;
    /* The calls and the retries it started: a call's uid counts its source's own calls
     * (UID_SHIFT), so that a source's calls, and the hold, retry, patience and
     * ring draws keyed by their uids, are the same whatever the other sources offer. */
    uint64_t calls, retries;
    double rate_share;
    double *tot; /* this element's totals block */
    /* What the element's TU counted (enum osn_elem_count), over the whole run: the node's
     * counters; the replication reports none of them, the element probe (tests/net_probe.c) reads
     * them. */
    uint64_t count[OSN_ELEM_NCOUNTS];
    /* Common random numbers: a source's arrival instants and an element's service times each
     * come from a stream of their own, so runs that differ only in control, thresholds or
     * buffer offer the same calls (net_run.c, split_streams). */
    struct osn_rng arr_rng, svc_rng;
};

/* A link of its own (cfg->link): its delay's FIFO class (-1: no class left, the event heap),
 * delay (s) and loss. */
struct net_link {
    int cls;
    double delay, loss;
};

/* link_loss[h] of a hop whose links differ: > 0, so that the loss test takes it, and > 1, which
 * no loss is. */
#define LINK_OWN 2.0

struct net {
    const struct osn_net_cfg *cfg;
    struct osn_des q;
    /* The replication's other streams, one per purpose: link losses by hop, the controllers'
     * seeds, and the key of the hold times (a call's hold is a hash of the key and its uid, so
     * a call holds as long whatever happened to the calls before it). */
    struct osn_rng loss_rng[MAXHOP], ctl_rng;
    uint64_t hold_key;
    /* The key of the retry draws: attempt k of call `origin` draws from a stream seeded by the
     * key, the origin and k, so a call's retries are the same whatever befell other calls. */
    uint64_t retry_key;
    /* The key of the patience draws: attempt k of call `origin` waits a draw from a stream
     * seeded by the key, the origin and k, as for the retries. */
    uint64_t patience_key;
    /* The key of the UAS's ring delays ([server uas] ring_delay exp): attempt uid's from a
     * stream seeded by the key and the uid. Derived from patience_key, so that it takes no
     * output of the replication's stream and every other stream stays what it was. */
    uint64_t ring_key;
    struct osn_uac_cfg uac;        /* the sources' UAC machine (src/elem/uac_call.c) */
    uint64_t uac_did[OSN_UAC_NDO]; /* what the sources' UACs did, by enum osn_uac_do */
    bool uac_count;        /* uac_did is counted: only the element probe reads it (tests/) */
    struct element *elems; /* nelem, allocated for the scenario (osn__net_setup) */
    int nelem, E, core, uas, nhop;
    int ncores; /* cores from `core` on (fanout; 1 otherwise) */
    /* UASs from `uas` on (a tree's several, each core's own: core_uas[k] core k's; 1 otherwise,
     * the last element) */
    int nuas;
    uint16_t core_uas[OSN_NET_MAX_CORES];
    /* The elements with a server half ([control] at), srv_lo .. srv_hi - 1: the cores, the
     * edges, or both (contiguous: edges E .. 2E - 1 sit right before the core but in a tandem,
     * where `both` is refused). Their responses carry feedback (net_txn.c, transmit). */
    int srv_lo, srv_hi;
    /* The path of the network's calls as source 0's (a fan-out's path[2] is its first core,
     * which the edge's choice overwrites), copied into each call as it starts (net_pool.c). */
    uint16_t path0[MAXHOP + 1];
    /* A tree (OSN_NET_TREE): each source's whole path to the UAS and its hops, which the
     * source copies into its call as it starts (net_source.c); NULL for the other shapes. */
    struct tree_path {
        uint16_t path[MAXHOP + 1];
        uint8_t nhop;
    } * src_path;
    /* The calls' pool: call_size bytes a call (call_bytes of the longest path),
     * calls_per_block of them to a block; a call's index is its block << CALL_SLOT_BITS and its
     * place in the block. */
    size_t call_size;
    uint32_t calls_per_block;
    /* The links by hop: the FIFO class of the hop's delay and its loss. A hop whose links differ
     * (a written topology's links of their own, cfg->link) has link_loss[h] = LINK_OWN, which
     * the send's loss test (> 0) already branches on: a message crossing it finds its link in
     * lk (link_own()), so that a network without such links pays nothing per message. */
    int link_class[MAXHOP];
    double link_loss[MAXHOP];
    /* The links of every element to its next hops when a hop has LINK_OWN, else NULL: the link
     * from element f to element t is lk[lk_off[f] + t] (a fanout edge's links to its cores,
     * which are consecutive elements, follow one another; every other element has one). */
    struct net_link *lk;
    int *lk_off;
    double fixd[OSN_DES_MAX_FIFOS];
    int nfix;
    int8_t fix_hint[OSN_SIP_NTIMERS]; /* by SIP timer id: the class it used last, -1 none */
    double t_obs, t_end, tb;          /* window start, end, 64 T1 */
    /* pools */
    struct call **callc;
    size_t ncallc;
    uint32_t call_free, call_fresh; /* free list head (UINT32_MAX: empty), next unused index */
    struct ntxn **txnc, *txn_free;
    char *txn_fresh, *txn_end; /* the newest block's unused part */
    size_t ntxnc;
    struct nmsg **msgc, *msg_free;
    char *msg_fresh, *msg_end;
    size_t nmsgc;
    struct cancels **cxc, *cx_free;
    char *cx_fresh, *cx_end;
    size_t ncxc;
    struct osn_sip_out out; /* scratch */
    double *tot;
    uint64_t messages;
    FILE *trace;
    struct osn_des_ev trace_ev;
    uint64_t trace_key; /* the trace row's next key: OSN_DES_KEY(NET_SENDER, rows scheduled) */
    double tr_start;    /* calls started in the trace interval */
    struct osn__net_trace tr;
    int err;
};

/* ---- inline helpers ---- */

/* A call's index in the pool (the free list links indices): its block above CALL_SLOT_BITS, its
 * place in the block below, so that the index splits by a shift whatever a call's size. */
#define CALL_SLOT_BITS 16
_Static_assert(OSN_MEM_BLOCK / sizeof(struct call) <= (1u << CALL_SLOT_BITS),
               "a block's calls numbered in CALL_SLOT_BITS");

static inline int txn_elem(const struct ntxn *w)
{
    return w->t.user[0];
}

static inline int txn_hop(const struct ntxn *w)
{
    return w->t.user[1];
}

static inline struct call *call_at(struct net *s, uint32_t i)
{
    char *b = (char *)s->callc[i >> CALL_SLOT_BITS];
    return (struct call *)(b + (i & ((1u << CALL_SLOT_BITS) - 1)) * s->call_size);
}

static inline bool obs(const struct net *s)
{
    return s->q.now >= s->t_obs;
}

/*
 * Fanout: an INVITE the edge forwards carries in its branch, above the bits branch() uses
 * (uids < 2^49, so branch() < 2^54), the core it went to (plus one, 6 bits: what bounds
 * OSN_NET_MAX_CORES at 63) and the call's failovers before it (4 bits, modulo 16); a
 * core passes them on to the UAS. Every message of that branch (the INVITE's copies, the ACK of
 * a non-2xx, the CANCEL, their responses at the core and at the UAS) then goes to and comes from
 * that core, even after the call failed over to another (c->core). Other topologies never set
 * them, so their branches are what they were.
 */
#define CORE_SHIFT       54
#define CORE_MASK        63u
#define BRANCH_CORE_BITS (~(uint64_t)0 << CORE_SHIFT)
_Static_assert(OSN_NET_MAX_CORES <= CORE_MASK && OSN_NET_MAX_CORES <= OSN_ELEM_HOPS_MAX &&
                       OSN_NET_MAX_CORES <= UINT8_MAX,
               "a core + 1 in the branch's 6 bits, a hop of the edge's choice, call.core");

static inline uint64_t core_bits(int core, unsigned failovers)
{
    return ((uint64_t)(core + 1) | (uint64_t)(failovers & 15u) << 6) << CORE_SHIFT;
}

/* The core of branch b in call c: its own, or for a branch without one (an in-dialog request,
 * whose path is the dialog's) the call's. */
static inline int branch_core(const struct call *c, uint64_t b)
{
    unsigned k = (unsigned)(b >> CORE_SHIFT) & CORE_MASK;
    return k ? (int)k - 1 : c->core;
}

/* Element path[h] of call c for a message of branch b: the call's, but for a branch that names
 * its core (the element before the UAS: a fanout's hop 2, a tree's proxy that chose among cores),
 * which may be a core the call left (failover). */
static inline int path(const struct net *s, const struct call *c, int h, uint64_t b)
{
    unsigned k = (unsigned)(b >> CORE_SHIFT) & CORE_MASK;
    if (__builtin_expect(k != 0, 0) && h >= c->nhop - 1) /* the branch's core, and its UAS */
        return h == c->nhop - 1 ? s->core + (int)k - 1
               : s->nuas > 1    ? s->core_uas[k - 1]
                                : c->path[h];
    return c->path[h];
}

/* The link hop h of call c crosses for a message of branch b, on a hop of LINK_OWN (s->lk): from
 * path[h] to path[h + 1], whichever way the message goes. */
static inline const struct net_link *link_own(const struct net *s, const struct call *c, int h,
                                              uint64_t b)
{
    int from = path(s, c, h, b), to = path(s, c, h + 1, b);
    return &s->lk[s->lk_off[from] + to];
}

/* Whether element id is a core (the server half's place). */
static inline bool is_core(const struct net *s, int id)
{
    return id >= s->core && id < s->core + s->ncores;
}

/* Whether element id has a server half of [control] kind (at a core, at an edge or both, as
 * [control] at says): its responses upstream carry its feedback. */
static inline bool has_srv(const struct net *s, int id)
{
    return id >= s->srv_lo && id < s->srv_hi;
}

/* The client half of element el toward call c's next hop for branch b: a fanout edge's for the
 * branch's core. */
static inline struct osn_ctl *elem_cli(const struct element *el, const struct call *c, uint64_t b)
{
    return el->hops ? el->hops->h[branch_core(c, b)].cli : el->cli;
}

/* The index slot of a request kind: 1 for BYE, 0 for INVITE (and ACK, which RFC 3261 17.2.3
 * matches to the INVITE). A CANCEL's transactions are in the call's struct cancels instead. */
/* Whether the UAS still knows call c: the caller's BYE has not reached its TU (the UAS's hop
 * has not passed it on). */
static inline bool uas_knows(const struct call *c)
{
    return !((c->bfwd >> (c->nhop - 1)) & 1u);
}

static inline int req_slot(int method)
{
    return method == OSN_SIP_BYE;
}

/* Whether m (a request or a response) is of the callee's BYE, which goes upstream. */
static inline bool up_bye(const struct osn_sip_msg *m)
{
    return (m->branch & 3) == B_UBYE;
}

/* Whether m travels toward the UAS: a request, or a response to the callee's BYE. */
static inline bool toward_uas(const struct osn_sip_msg *m)
{
    return (m->status == 0) != up_bye(m);
}

/* The place of call c's transaction for a request of `method` on hop h, server or client: NULL
 * for a CANCEL of a call that has had none (osn__net_cancels makes its block). The callee's
 * BYE's are in that block too (ubye_stx, ubye_ctx), asked for apart. */
static inline struct ntxn **txn_slot(struct call *c, int h, int method, bool server)
{
    if (method == OSN_SIP_CANCEL)
        return c->cx ? (server ? &c->cx->stx[h] : &c->cx->ctx[h]) : NULL;
    return server ? &STX(c, h, req_slot(method)) : &CTX(c, h, req_slot(method));
}

/* The server transaction of call c on hop h that the TU took the request of (RFC 3261 16: the
 * one the proxy forwarded for, or the UAS answers from); NULL when there is none (yet, or any
 * more, or the core answered 503 without the TU). */
static inline struct ntxn *forwarded(const struct call *c, int h, bool inv)
{
    return ((inv ? c->fwd : c->bfwd) >> h) & 1u ? STX(c, h, inv ? 0 : 1) : NULL;
}

static inline uint64_t branch(const struct call *c, int hop, int kind)
{
    return c->uid * 32 + (uint64_t)hop * 4 + (uint64_t)kind;
}

/* ---- shared between the files of the network simulator ---- */

/* net_pool.c: objects from pools, nothing allocated per event once they have grown. */
/* A zeroed call from the pool (its idx, nhop and source 0's path set), NULL when out of
 * memory. */
struct call *osn__net_call_new(struct net *s);
void osn__net_call_unref(struct net *s, struct call *c);
/* A transaction wrapper of call c at element `el` on hop `hop`; takes a call reference. */
struct ntxn *osn__net_txn_new(struct net *s, struct call *c, int el, int hop);
/* Returns w to the pool, cancels its timers, drops the call's pointer and reference. */
void osn__net_txn_free(struct net *s, struct ntxn *w);
/* A message from the pool (not yet on a link), NULL when out of memory. */
struct nmsg *osn__net_msg_new(struct net *s);
void osn__net_msg_free(struct net *s, struct nmsg *m);
/* Call c's block of CANCEL transactions, made on first use; NULL when out of memory. */
struct cancels *osn__net_cancels(struct net *s, struct call *c);
/* The message a server item is embedded in. */
static inline struct nmsg *item_msg(struct osn_elem_item *it)
{
    return OSN_CONTAINER_OF(it, struct nmsg, item);
}

/* net_txn.c: carrying out what the transaction layer and the element code decided. */
/* The key of the next event element `id` schedules (struct element's key). */
static inline uint64_t next_key(struct net *s, int id)
{
    return s->elems[id].key++;
}
/* Element `from` schedules ev at absolute time `at`, on a FIFO class when one has its duration;
 * hint (may be NULL) is the class that matched last for this kind of timer. A failure sets
 * s->err. */
void osn__net_sched(struct net *s, int from, struct osn_des_ev *ev, double at, int8_t *hint);
/* Element `from` schedules ev at `at` on the heap; a failure sets s->err (the run then stops,
 * reported). */
void osn__net_at(struct net *s, int from, struct osn_des_ev *ev, double at);
/* The FIFO timer class of duration d (made on first use), -1 when there is no room. */
int osn__net_fix_class(struct net *s, double d);
/* Puts a copy of m on hop `hop` of call c (requests down, responses up), link loss drawn. */
void osn__net_transmit(struct net *s, int from, struct call *c, int hop,
                       const struct osn_sip_msg *m);
/* The link hop `hop` of call c has for a message of branch b: its delay's FIFO class (-1: the
 * heap), its delay (s; read when the class is -1) and its loss; the hop's own unless it is
 * LINK_OWN. */
void osn__net_link_at(struct net *s, int hop, const struct call *c, uint64_t b, int *cls,
                      double *delay, double *loss);
/* Element `from` puts ev on a link of class cls, or on the heap `delay` from now when cls is
 * -1. */
void osn__net_on_link(struct net *s, int from, struct osn_des_ev *ev, int cls, double delay);
/* Carries out one transaction output: timers, sends, the TU event, the end. */
void osn__net_apply(struct net *s, struct ntxn *w, const struct osn_sip_out *o);
/* The server transaction w answers `status` (Retry-After seconds, -1 for none). */
void osn__net_respond(struct net *s, struct ntxn *w, int status, int retry_after);
/* The element's decision on an ACK that reached element id for call c on hop `hop` (a TU_ACK,
 * or an ACK of a 2xx that matched no transaction), carried out. */
void osn__net_on_ack(struct net *s, int id, struct call *c, int hop, const struct osn_sip_msg *m);
/* A fan-out edge el (el->hops) sends call c's ACK of a 2xx, of Call-ID `key`, on (forwarded by
 * its TU, or passed by off the dialog's path): the core the element chooses (osn_elem_hops_ack)
 * as bits of the ACK's branch (branch_core), 0 when it is the call's core. */
uint64_t osn__net_ack_core_bits(const struct net *s, const struct element *el, const struct call *c,
                                uint64_t key);
/* Server transaction w of a new request started with output *o (the layer's, changed here):
 * applies it as the element says, shed (answered 503 by the server half) or not. */
void osn__net_stxn_started(struct net *s, struct ntxn *w, const struct osn_elem_item *it,
                           struct osn_sip_out *o);
/* Starts a client transaction for req (branch set by the caller) on hop `hop` from `el`. */
void osn__net_start_client(struct net *s, int el, struct call *c, int hop, struct osn_sip_msg *req);
/* The same for the callee's BYE going up (branch kind B_UBYE): its client transaction on hop
 * `hop` at element `el` (path[hop + 1]), no oc offered (it goes to no server of a client
 * half, RFC 7339 5.10). */
void osn__net_start_up_bye(struct net *s, int el, struct call *c, int hop, struct osn_sip_msg *req);
/* Element `el` sends the CANCEL of call c's INVITE client transaction on hop `hop` (RFC 3261
 * 9.1: the INVITE's Request-URI, Call-ID, From, To, CSeq number and top Via, method CANCEL), as a
 * client transaction of its own; nothing when that INVITE transaction is gone. */
void osn__net_send_cancel(struct net *s, int el, struct call *c, int hop);

/* net_tu.c: the transaction users of the elements (the decisions are osn/elem.h's). */
void osn__net_on_tu(struct net *s, struct ntxn *w, const struct osn_sip_out *o);
/* The UAS's 2xx retransmission timer of call c fired. */
void osn__net_2xx_timer(struct net *s, struct call *c);
/* The UAS's ring timer of call c fired: the called user answers, unless a CANCEL came first. */
void osn__net_ring_timer(struct net *s, struct call *c);
/* The UAS's hang-up timer of call c fired (the end of the callee's hold): osn_uas_hangup_fire
 * says wait for the ACK, send the BYE upstream, or nothing (the caller's BYE came first). */
void osn__net_hangup_timer(struct net *s, struct call *c);
/* The UAC's account of an outcome decided now. */
void osn__net_outcome(struct net *s, struct call *c, int outcome);

/* net_server.c: messages reaching an element, its CPU. */
void osn__net_arrive(struct net *s, struct element *el, struct nmsg *nm);
void osn__net_depart(struct net *s, struct element *el);

/* net_source.c: call sources. */
/* The next call arrival of source el after time t. */
double osn__net_next_arrival(struct net *s, struct element *el, double t);
void osn__net_new_call(struct net *s, int src);
/* The UAC's machine said DRAW (osn_uac_call_on_invite): the retry draws of attempt c, and the
 * machine's decision with them, in *a. Not inline: with the draw inlined, the UAC's event
 * handler (net_tu.c) grew past what GCC inlines into the transaction layer's output handler,
 * ~5 instructions a message on fanin.ini. */
void osn__net_retry_draw(struct net *s, struct call *c, struct osn_uac_acts *a);
/* Carries out what the UAC's machine decided for call c (src/elem/uac_call.c); `invite` and
 * `resp` are the INVITE and the response of an INVITE event (NULL otherwise). */
void osn__net_uac_act(struct net *s, struct call *c, const struct osn_uac_acts *a,
                      const struct osn_sip_msg *invite, const struct osn_sip_msg *resp);
/* A provisional response to the INVITE of attempt c: osn_uac_call_on_1xx decides, with no
 * action list for the common ones (a sample alone). */
void osn__net_uac_1xx(struct net *s, struct call *c, int status);
/* A 2xx `resp` to `invite`, the INVITE of attempt c: osn_uac_call_on_2xx decides. */
void osn__net_uac_2xx(struct net *s, struct call *c, const struct osn_sip_msg *invite,
                      const struct osn_sip_msg *resp);
/* The other events of attempt c's INVITE transaction (a final response >= 300 with its
 * Retry-After, Timer B, a transport error): osn_uac_call_on_end decides. */
void osn__net_uac_end(struct net *s, struct call *c, int tu, int status, int retry_after);
/* Call c's UAC timer fired (c->hold: EV_PATIENCE, EV_HOLD or EV_RETRY). */
void osn__net_uac_timer(struct net *s, struct call *c);
/* The attempt of call c has its answer (an outcome, or a 2xx): its caller's patience, if still
 * armed, is put away, so that c->hold is free for the hold time or the retry. */
void osn__net_patience_stop_armed(struct net *s, struct call *c);
static inline void osn__net_patience_stop(struct net *s, struct call *c)
{
    if (c->hold.type == EV_PATIENCE)
        osn__net_patience_stop_armed(s, c);
}

/* net_trace.c: the --trace rows of replication 0. */
void osn__net_trace_header(struct net *s);
/* Writes the interval's row, resets its counts and schedules the next row. */
void osn__net_trace_row(struct net *s);
/* A setup delay sample d (s) for the interval's percentiles. */
void osn__net_trace_setup(struct net *s, double d);
/* A message of `kind` processed at el (the core's are counted). */
void osn__net_trace_processed(struct net *s, const struct element *el, int kind);
void osn__net_trace_release(struct net *s);

/* The hop of the link from element `from` to element `to` of configuration cfg's network (0
 * from a source, 1 from an edge, ..., the last into the UAS), -1 when the network has no such
 * link; *next0 and *nnext (may be NULL) receive from's first next hop and how many it has
 * (a fanout edge: the cores). A tree's links are on hops that differ by call: 0 for each. */
int osn__net_link_hop(const struct osn_net_cfg *cfg, int from, int to, int *next0, int *nnext);
/* Whether cfg's network runs as a tree: OSN_NET_TREE, or the tree OSN_NET_MESH generated. */
static inline bool tree_like(const struct osn_net_cfg *c)
{
    return c->topology == OSN_NET_TREE || c->topology == OSN_NET_MESH;
}

/* A tree's (OSN_NET_TREE) element i's next hop (the core's: the UAS), -1 for none. */
int osn__net_up(const struct osn_net_cfg *cfg, int i);
/* A tree's proxy i's weight of element `to` among its next hops (cfg->core_w): > 0 when `to` is
 * a core it may choose, 0 otherwise (and for every element of a tree without core_w). */
int osn__net_core_w(const struct osn_net_cfg *cfg, int i, int to);
/* The number of elements of a configuration. */
int osn__net_nelem(const struct osn_net_cfg *cfg);
/* The element layout of a configuration: count, and into names and capacity (osn__net_nelem
 * entries each) each one's name and capacity. */
int osn__net_elems(const struct osn_net_cfg *cfg, char names[][OSN_NET_NAME_LEN], double *capacity);

/* net_run.c: one replication's parts, shared with the element probe (tests/net_probe.c). */
/* Sets up the elements and event set of cfg in the zeroed *s, streams split from rng, totals
 * into tot (osn__net_ntot(osn__net_nelem(cfg)) doubles); a message in msg on failure. */
int osn__net_setup(struct net *s, const struct osn_net_cfg *cfg, struct osn_rng *rng, double *tot,
                   char *msg, size_t msgsize);
/* Releases what osn__net_setup made (also after it failed). */
void osn__net_teardown(struct net *s);
/* Carries out one event popped from s->q. */
void osn__net_step(struct net *s, struct osn_des_ev *ev);

/* Runs one replication on stream `rng` (its purposes' streams are split from it); fills *rep
 * (osn__net_rep_size(osn__net_ntot(osn__net_nelem(cfg))) bytes).
 * *now_t (may be NULL) receives the simulated time every 2^16 events, for progress reports. */
int osn__net_rep_run(const struct osn_net_cfg *cfg, struct osn_rng *rng, struct osn__net_rep *rep,
                     FILE *trace, _Atomic double *now_t, char *msg, size_t msgsize);

#endif

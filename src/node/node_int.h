/*
 * Private interface of the real node. The files, one job each:
 *   run.c      the event loop (ppoll on the UDP socket, the metrics endpoint's descriptor
 *              and the timer deadline), stats rows, the summary
 *   workers.c  several loops (node.workers): their threads, sockets, snapshots and sums
 *   config.c   defaults, checks and the set-up of a node from its configuration
 *   state.c    the element's state without sockets: firing due deadlines, the release (the
 *              loop, the tests and the stateful fuzzer share them)
 *   addr.c     UDP addresses, IPv4 or IPv6: reading "HOST:PORT", writing them for SIP and people
 *   hops.c     several next hops: reading next_hop's list and its weights, their counts
 *   udp.c      the UDP sockets: the listening one, a connected one per next hop, sends, ICMP errors
 *   link.c     the scenario's link delays: a delay line before the UDP sends, on the timers
 *   tcp.c      the TCP transport: the listening socket, accepted connections and one per next hop,
 *              buffers with caps, idle and stuck peers, a broken next hop's transport errors
 *   tcp_frame.c where a SIP message ends in a byte stream (Content-Length, RFC 3261 18.3)
 *   timers.c   a min-heap of deadlines with lazy cancellation
 *   txn.c      node transactions: a pool, the table with exact key checks, carrying out the
 *              transaction layer's outputs (sending stored bytes, arming timers)
 *   kept.c     the kept table: transactions in their final wait, compact (key, deadline, what
 *              they may still send coded against the message that makes them send it)
 *   recv.c     a datagram in: parse, classify, the element's server (virtual CPU)
 *   tu.c       the element's transaction user: the decisions of osn/elem.h, printed as SIP
 *   map.c      a hash map of 64-bit keys, which the next two use
 *   pending.c  new requests waiting in the server, so that a copy is known on arrival
 *   dialogs.c  the UAS's INVITE transactions by Call-ID (the ACK of a 2xx has a branch of its own)
 *   uas_reply.c what a uas's responses carry besides copied headers (Contact, Allow, SDP)
 *   metrics.c  the counter registry and the Prometheus text endpoint (HTTP by libmicrohttpd)
 *   gen.c      the load generator (element uac): calls, their INVITE, ACK and BYE, the UAC's
 *              decisions (osn_uac_*), the schedule and its lag, the drain
 *   gen_print.c the generator's requests as SIP text (INVITE with its SDP offer, ACK, BYE)
 *   gen_draws.c its random draws (arrivals, hold, retry delay) and delay histograms
 */
#ifndef OSN_NODE_INT_H
#define OSN_NODE_INT_H

#include <netinet/in.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>

#include "osn/container_of.h"
#include "osn/ctl.h"
#include "osn/elem.h"
#include "osn/node.h"
#include "osn/rng.h"
#include "osn/sip.h"
#include "osn/sip_wire.h"

/* The monotonic clock (s): a node's time, n->now, is this less n->t_start. */
static inline double node_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- addresses (addr.c) ---- */

/* An IPv4 or IPv6 UDP address; sa.sa_family says which. */
union node_addr {
    struct sockaddr sa;
    struct sockaddr_in v4;
    struct sockaddr_in6 v6;
};

static inline socklen_t addr_len(const union node_addr *a)
{
    return a->sa.sa_family == AF_INET6 ? sizeof a->v6 : sizeof a->v4;
}

/* Reads "A.B.C.D:PORT" or "[IPv6]:PORT" (port 0 allowed: the kernel's choice) into *a. 0, or
 * OSN_EINVAL with what is wrong in why. */
int addr_parse(const char *text, union node_addr *a, char *why, size_t whysize);
/* As addr_parse, with an optional ";transport=udp" or ";transport=tcp" after the port (RFC 3261
 * 19.1.1's transport parameter, any case): *tcp says which (udp when absent). */
int addr_parse_tp(const char *text, union node_addr *a, bool *tcp, char *why, size_t whysize);
uint16_t addr_port(const union node_addr *a);
void addr_set_port(union node_addr *a, uint16_t port);
/* The host as a sent-by or SIP URI writes it: "127.0.0.1", or "[::1]" (IPv6reference). */
void addr_host(const union node_addr *a, char *out, size_t size);
/* "HOST:PORT", the host as addr_host writes it. */
void addr_text(const union node_addr *a, char *out, size_t size);
/* IPv4 dotted-decimal text p[0..n) (no NUL needed) into *out, network order: exactly what
 * inet_pton(AF_INET) accepts (four decimal parts of 0..255, no leading zero, nothing else), for a
 * tenth of its instructions: it runs on every forward and response (route.c, addr_via_received). */
bool addr_ipv4(const char *p, size_t n, struct in_addr *out);
/* Same family, address and port. */
bool addr_eq(const union node_addr *a, const union node_addr *b);
/* What our server transport adds to top Via v of a request that came from `from`: the returned
 * span, ";received=ADDR" in buf when the sent-by is not that address or v has a valueless rport
 * (RFC 3261 18.2.1, RFC 3581 4), else empty; *rport the source port for a valueless rport, else
 * 0. A received parameter already there is left alone. */
#define ADDR_RECEIVED_MAX 64
struct osn_span addr_via_received(const union node_addr *from, const struct osn_sip_via *v,
                                  char buf[ADDR_RECEIVED_MAX], uint16_t *rport);

/* ---- timers (timers.c) ---- */

/* TM_ARRIVAL: the generator's next call (obj NULL); TM_CALL: a generator call's hold or retry
 * wait (obj the call, gen its timer generation). */
/* TM_KEPT: the head of one of the kept table's expiry lists is due (obj NULL, gen the list). */
/* TM_LINK: the head of a delay line is due (obj NULL, gen the direction, LINK_DOWN or LINK_UP). */
/* TM_HANGUP: the uas's hang-up of a call the callee ends (hangup.c; obj the hang-up). */
enum tm_kind {
    TM_TXN0,
    TM_TXN1,
    TM_2XX,
    TM_SERVICE,
    TM_ARRIVAL,
    TM_CALL,
    TM_KEPT,
    TM_LINK,
    TM_HANGUP
};

struct tm_entry {
    double at;
    uint64_t seq; /* insertion order: simultaneous deadlines fire in order */
    void *obj;    /* the transaction, or NULL for the service */
    uint32_t gen; /* the object's generation for this kind when armed: stale when they differ */
    uint8_t kind; /* enum tm_kind */
};

struct timers {
    struct tm_entry *h;
    size_t n, cap;
    uint64_t seq;
};

int timers_push(struct timers *t, double at, enum tm_kind kind, void *obj, uint32_t gen);
/* The earliest entry (not removed), NULL when none. */
static inline const struct tm_entry *timers_top(const struct timers *t)
{
    return t->n ? &t->h[0] : NULL;
}
void timers_pop(struct timers *t);
void timers_release(struct timers *t);

/* ---- node transactions (txn.c) ---- */

#define NTX_KEYBUF 160
/* a client transaction routed elsewhere than a next hop (a Route, the caller's Contact): the
 * element's own word for it, so that no client half decides on it or is fed by it */
#define NTX_NO_HOP OSN_ELEM_HOP_NONE

struct ntx {
    struct osn_sip_txn t;
    uint32_t gen[3];  /* generation per timer (slot 0, slot 1, 2xx): cancel = increment */
    bool armed[3];    /* an entry for the current generation is in the heap */
    bool live;        /* between start and end */
    struct ntx *peer; /* proxy: server <-> client transaction of one forwarded request */
    uint8_t hop;      /* client: the next hop (index of n->hops) it went to; NTX_NO_HOP none */
    bool routed;      /* client: its destination was its Route's, not the element's choice */
    struct ntx *next_free;
    struct ntx *next_all;        /* every object the pool made, for the teardown */
    struct osn_sip_wire_key key; /* spans into req, or into keybuf once req is let go */
    /* Server: the request received; client: the request sent. Its bytes and their parse in one
     * block (osn_sip_wire_pack), so that answering or forwarding it parses nothing. */
    struct osn_sip_wire *req;
    size_t req_size;
    char *resp; /* server: the last response sent (printed here: bytes, never parsed) */
    size_t resp_len;
    struct osn_sip_wire *final; /* client: the final response received, packed as req */
    size_t final_size;
    /* server: where the request came from (responses go there); client: where the request
     * goes (route_plan: the next hop, or a Route's or the Request-URI's address) */
    union node_addr from;
    double t0;              /* start (s) */
    struct osn_uas_2xx uas; /* UAS INVITE: the 2xx retransmission */
    bool ringing;           /* UAS INVITE: its TM_2XX timer is the ring delay's end (ARM_RING) */
    bool cancel_later;      /* proxy INVITE client: a CANCEL kept until its first provisional
                               response (osn_elem_on_cancel_later) */
    bool in_dialogs;        /* UAS INVITE: in the Call-ID map */
    /* The key's text once the request is let go (ntx_trim): branch, host and Call-ID of an
     * RFC 3261 request fit; a longer key (RFC 2543's fallback fields) keeps the request. */
    char keybuf[NTX_KEYBUF];
    /* The move to the kept table (kept.c): a final wait's lifetime timer is not armed but
     * remembered here (kept_timer its id, 0 none) until the outermost ntx_apply moves x; life
     * tells this use of the object from a later one; a proxy's INVITE client finds its server
     * transaction, already kept, by kept_up (KEPT_NONE: none) of that life. */
    double kept_end;
    uint32_t life;
    uint32_t kept_up, kept_up_life;
    uint8_t kept_timer;
};

/* ---- the kept table (kept.c) ---- */

#define KEPT_NONE    UINT32_MAX
#define KEPT_LISTS   6 /* one expiry list per lifetime timer: I, J, K, L, M, D */
#define KEPT_PENDING 16

/* A transaction in its final wait, compact: see kept.c's head for what each state keeps. */
struct kept {
    uint64_t branch, sent_by; /* the layer's numbers of its key (sent_by 0 for a client) */
    uint64_t fp;              /* keyed hash of its key's text: the exact check */
    double end;               /* its lifetime timer's deadline (s) */
    double t0;                /* the transaction's start (s) */
    union node_addr to;       /* server: where its responses go; client: where it sent */
    uint32_t next;            /* its expiry list, or the free list */
    uint32_t hnext;           /* the next record of its hash bucket: index + 1, 0 none */
    uint32_t life;            /* this use of the record */
    uint32_t up, up_life;     /* INVITE client in Accepted: the server record upstream */
    uint16_t status;          /* final status sent (server) or received (client, non-2xx) */
    uint8_t state, method, hop;
    /* Bits, so that hnext fits the 104 bytes: role an enum osn_sip_role, list < KEPT_LISTS;
     * tcp: over TCP, what it sends goes by the transport of its transaction. */
    uint8_t role : 1, list : 3, routed : 1, tcp : 1;
    uint8_t *blob; /* what it may still send, coded (kept.c), NULL none */
};

struct kept_table {
    struct kept *rec;
    uint32_t cap, hwm, n;  /* records allocated, ever used, in use */
    uint32_t free;         /* free list head, KEPT_NONE */
    uint32_t *bucket;      /* each chain's first record: index + 1, 0 empty (kept.c) */
    uint32_t nb, lo, bcap; /* buckets in use, the power of two lo <= nb < 2 lo, reserved */
    uint32_t head[KEPT_LISTS], tail[KEPT_LISTS];
    size_t blob_bytes;
};

/* The free lists of packed parses (txn.c): classes of 256 bytes up to 4 KiB, at most 64 blocks
 * each (1 MiB at most in all). */
#define NODE_BLOCK_STEP    256u
#define NODE_BLOCK_CLASSES 16
#define NODE_BLOCK_KEEP    64

/* ---- a message received (recv.c) ---- */

/* A datagram parsed once, on arrival (node_datagram), and everything the node learns of it
 * there: every function that works on it takes it as a parameter. pm is the parse, its spans in
 * the datagram's bytes; m the transaction layer's numbers of it. While the message waits in the
 * server, pm is a packed copy (osn_sip_wire_pack) that `kept` owns; a transaction that keeps the
 * message (ntx_set_req, ntx_set_final) takes that block instead of copying it, and sets kept to
 * NULL (pm then lives as long as the transaction). */
struct rmsg {
    const struct osn_sip_wire *pm;
    struct osn_sip_msg m;
    union node_addr from;
    struct osn_sip_wire *kept;
    size_t kept_size;
    bool tcp; /* it came over TCP, from the connection whose peer is `from` (tcp.c) */
};

/* ---- the element's server: queued messages (recv.c) ---- */

struct qmsg {
    struct osn_elem_item item;
    uint64_t pending; /* its key in the node's pending set, 0 when not in it */
    struct rmsg rx;   /* its parse kept (rx.kept), freed with it unless a transaction took it */
};

/* ---- a hash map of 64-bit keys (map.c) ---- */

/* From a 64-bit key to a 64-bit value, several entries per key allowed: open addressing, linear
 * probing, at most half full, deletion by backward shift (no tombstones). The keys are keyed
 * hashes already (SipHash), so an entry's home slot is its key's low bits. Key 0 marks an empty
 * slot and is stored as 1. The pending set, the UAS's dialogs and the calls it knows. */
struct map {
    struct map_slot {
        uint64_t key, val;
    } * slot;
    size_t mask, n;
};

/* The next entry of `key` after entry `after` (NULL: its first); NULL when there is none. */
struct map_slot *map_find(const struct map *m, uint64_t key, const struct map_slot *after);
/* Adds an entry (others of the same key may be there). 0 or OSN_ENOMEM. */
int map_add(struct map *m, uint64_t key, uint64_t val);
/* Moves m into `cap` slots (a power of two, over twice the entries kept), keeping the entries
 * keep(ctx, entry) says to keep (keep NULL: all). 0, or OSN_ENOMEM with m as it was. */
int map_rebuild(struct map *m, size_t cap, bool (*keep)(void *ctx, const struct map_slot *e),
                void *ctx);
/* Removes entry e (map_find's). */
void map_del(struct map *m, struct map_slot *e);
void map_release(struct map *m);

/* ---- the uas's hang-ups (hangup.c) ---- */

struct hangup;
struct hangups {
    struct map by_call;        /* Call-ID hash -> struct hangup *, the calls waiting */
    struct hangup *free, *all; /* the pool: its free list, every object it made */
    size_t bytes;              /* of the live ones and their BYEs: charged as transactions are */
};

/* ---- new requests waiting in the server (pending.c) ---- */

/* A multiset of keys (their counts the values), never 0. */
uint64_t pending_key(const struct osn_sip_msg *m);
bool pending_has(const struct map *p, uint64_t key);
int pending_add(struct map *p, uint64_t key);
void pending_del(struct map *p, uint64_t key);

/* ---- datagrams to send (udp.c) ---- */

/* What one turn of the loop sends, copied (the bytes behind them may be freed before the turn
 * ends) and handed to the kernel at the end of the turn, one sendmmsg(2) per run of datagrams
 * that leave by the same socket: hop[i] is the next hop whose connected socket sends datagram
 * i, NULL for the listening socket (to[i] then says where). */
#define OUTQ_MAX   64
#define OUTQ_BYTES ((size_t)256 << 10)

struct outq {
    int n;
    size_t used;
    union node_addr to[OUTQ_MAX];
    struct next_hop *hop[OUTQ_MAX];
    int fd[OUTQ_MAX]; /* the socket it leaves by (hop's, the listening one or sock) */
    size_t off[OUTQ_MAX], len[OUTQ_MAX];
    char *bytes; /* OUTQ_BYTES */
};

/* ---- the link delays (link.c) ---- */

/* A datagram held on its link until `due` (s, the node's clock). */
struct link_dgram {
    struct link_dgram *next;
    double due;
    union node_addr to;
    size_t len;
    char bytes[];
};

/* The delay lines: to a next hop; to anyone else; then two for each next hop with a link of
 * its own (next_hop_delays): what goes to it (LINK_OWN + 2 k) and what comes from it (+ 1). */
enum { LINK_DOWN, LINK_UP, LINK_OWN, LINK_LINES = LINK_OWN + 2 * OSN_ELEM_MAX_HOPS };

/* A line's delay is fixed, so the order datagrams enter it is the order they leave it: a FIFO,
 * whose head alone has an entry in the timer heap. */
struct link {
    struct {
        struct link_dgram *head, *tail;
        bool armed; /* a TM_LINK entry for the head is in the heap */
    } line[LINK_LINES];
    size_t held;     /* bytes the lines hold (datagrams and their records): link_buffer at most */
    bool on;         /* some delay or loss is set */
    bool own;        /* some next hop has a link of its own: arrivals are looked at (link_arrive) */
    bool leaving;    /* link_due is sending: udp_send_to sends at once */
    uint32_t due_in; /* the arrival lines whose head fell due, to hand in (link_hand_in) */
    struct osn_rng rng; /* the losses' draws */
};
/* The first stream of the scenario's seed the link losses draw from (worker w takes this + w):
 * above the generator's (0) and the ring delays' (1 + w). Packed right above them, since
 * stream i costs i jumps at every start (osn_rng_stream: about 3,900 instructions a jump; at
 * 65,536 and 131,072 the node spent 757 M instructions, 99% of an idle run, before its first
 * datagram). */
#define LINK_STREAM (1 + OSN_NODE_MAX_WORKERS)
/* The first stream of the uas's hold draws (hangup.c; worker w takes this + w). */
#define HOLD_STREAM (LINK_STREAM + OSN_NODE_MAX_WORKERS)

/* ---- next hops (udp.c) ---- */

/* A next hop and the UDP socket connected to it. Connected, the kernel looks the route up once
 * (not at every send: ~2% of the node's CPU, issue 34) and tells this socket, and only it, of
 * the ICMP errors its datagrams draw, so a next hop that refuses is known as such. The socket
 * shares the listening address and port (udp_connect says how): our datagrams leave from the
 * sent-by our Via names, and the next hop's datagrams arrive on this socket, which the loop
 * reads like the listening one. */
struct next_hop {
    union node_addr addr;
    int fd;             /* -1 when not open (the stateful fuzzer, the driver tests) */
    char text[64];      /* "HOST:PORT", for stderr and the ready line */
    double said;        /* when its unreachability was last said on stderr (s) */
    bool tcp;           /* ";transport=tcp": requests go over a TCP connection (tcp.c), not fd */
    double delay, loss; /* its link of its own, both ways (next_hop_delays, link.c); 0: none */
};

/* ---- the node ---- */

/* The calls a UAS knows (dialogs.c): the Call-ID hash of each INVITE it answered 2xx, until
 * the BYE's 2xx, for a BYE or CANCEL to find (else 481). Bounded: one is forgotten CALLS_AGE s
 * after its 2xx, and at CALLS_MAX the oldest are (calls_forgotten; a BYE after that gets 481). */
#define CALLS_MAX ((size_t)1 << 20)
#define CALLS_AGE 3600.0

/* The per-source budget (node_datagram): token buckets by source, direct-mapped (a source that
 * takes another's slot gives that one a full bucket next time: it fails open). A source is an
 * IPv4 address, or an IPv6 /64: one host is commonly given a whole /64 (RFC 7934), so a budget
 * per IPv6 address would be a budget per whim of the sender. */
#define BUDGET_SLOTS ((size_t)1 << 16)

struct budget_slot {
    uint64_t addr; /* IPv4: the address; IPv6: the /64 prefix, its top bit set */
    struct osn_elem_budget b;
};

/* The largest UDP payload over IPv4 (65535 - 8 - 20): a forward longer than that cannot go. Over
 * IPv6 the header is 40 bytes, so 65,487 without jumbograms; the kernel refuses the 20 bytes
 * between (EMSGSIZE, counted in send_errors) rather than the node answering them 513. */
#define NODE_UDP_MAX 65507

struct workers;

struct node {
    const struct osn_node_cfg *cfg;
    /* The socket of our Via's sent-by: with one worker the listening socket (requests from
     * upstream, our responses, requests sent elsewhere than a next hop); a proxy's worker of
     * several: its own port, from which its requests leave and to which their responses come
     * (workers.c says why). */
    int sock;
    /* A proxy's worker of several: its listening socket (SO_REUSEPORT on listen's port), for
     * requests from upstream and our responses to them; -1 otherwise (sock is it). */
    int lsock;
    union node_addr listen; /* as bound (the port the kernel chose for port 0) */
    union node_addr via;    /* sock's address: our Via's sent-by (listen with one worker) */
    uint16_t via_port;      /* its port when not listen's (a proxy's worker of several), else 0 */
    const uint16_t *ports;  /* several workers: every proxy worker's via_port (loop checks) */
    int nports;
    /* Several workers: this one's index (0: the main thread's, which serves the metrics and
     * writes the rows), the threads' shared state; w NULL with one worker. */
    int worker;
    struct workers *w;
    double published;      /* when this worker's snapshot was last published (s) */
    struct next_hop *hops; /* proxies: the next hops, NULL for a uas */
    size_t nhops;
    /* Several next hops: the element's choice among them (src/elem/hops.c), a client half each
     * (fan.h[i].cli, owned). With one next hop it is unused and n->cli is that hop's. fan.h
     * is fan_hop, the room for every next hop a node may have. */
    struct osn_elem_hops fan;
    struct osn_elem_hop fan_hop[OSN_ELEM_MAX_HOPS];
    char host[64]; /* our sent-by host as text, "[...]" for IPv6 (RFC 3261 IPv6reference) */
    uint16_t port;
    struct osn_sip_layer sip;
    struct osn_ctl *srv, *cli;
    struct osn_elem_server server;
    struct timers timers;
    struct map dialogs;         /* uas: its INVITEs by Call-ID hash (dialogs.c) */
    struct map calls;           /* uas: the calls it knows, the time of their 2xx (dialogs.c) */
    struct budget_slot *budget; /* BUDGET_SLOTS, NULL when per_source_rate is 0 */
    struct map pending;
    uint32_t service_gen;
    double t_start; /* the monotonic clock at start (s) */
    double now;     /* seconds since t_start */
    /* How long (s) the loop may sleep past its earliest deadline, so that the deadlines of a
     * short span are carried out in one turn: 0, but the load generator's (gen_wake_slack). */
    double wake_slack;
    struct ntx *free_ntx, *all_ntx;
    /* Packed parses let go, for the next message kept (txn.c's blocks): a list per size class
     * of NODE_BLOCK_STEP bytes, each block's first word the next */
    void *block_free[NODE_BLOCK_CLASSES];
    uint16_t block_nfree[NODE_BLOCK_CLASSES];
    size_t live, allocated;
    struct kept_table kept;
    /* ntx_apply's nesting, and the transactions it will move to the kept table when the
     * outermost returns (a nested apply must not free what an outer one still uses) */
    int apply_depth, npending_keep;
    struct ntx *pending_keep[KEPT_PENDING];
    uint32_t pending_life[KEPT_PENDING];
    size_t held; /* bytes of messages the live transactions keep */
    uint64_t branch_seq, branch_salt;
    struct osn_rng ring_rng; /* uas: the ring delays' draws (cfg->ring exp) */
    struct osn_rng hold_rng; /* uas: the holds of the calls the callee ends (hangup.c) */
    struct hangups hangups;  /* uas: those calls, by Call-ID hash (hangup.c) */
    double cpu_t;            /* the virtual CPU: nominal end of the last service (s) */
    struct outq outq;
    struct link link;
    char obuf[OSN_SIP_WIRE_MAX_LEN + 1];
    struct osn_node_stats st;
    struct gen *gen; /* element uac: the load generator (gen.c), else NULL */
    struct tcp *tcp; /* the TCP transport (tcp.c), NULL when neither listen nor a next hop is */
    /* Several workers: the node's TCP connections by kind (tcp.c: [0] accepted, [1] opened to
     * others than a next hop), shared by the workers (workers.c owns them); NULL with one. */
    atomic_size_t *tcp_places;
    int err;
};

/* Bytes of messages the live transactions may keep when no max_memory bounds them (a C caller's
 * cfg with max_memory 0; the scenario key's least is 1 MiB): with max_transactions, what bounds
 * the node's memory against large datagrams (a 64 KB INVITE per transaction would otherwise let
 * 100,000 transactions hold gigabytes). Beyond it a new request is refused as at the cap. */
#define NODE_HELD_MAX ((size_t)512 << 20)

/* A proxy, or the load generator (which sends to a next hop too and takes only responses: its
 * requests never reach the proxy's paths, see node_datagram and tu_event). */
static inline bool is_proxy(const struct node *n)
{
    return n->cfg->element != OSN_NODE_UAS;
}

/* A uas whose callee ends some calls (source.callee_hangs_up): it sends BYEs, and takes their
 * responses. */
static inline bool callee_hangs_up(const struct node *n)
{
    return n->cfg->element == OSN_NODE_UAS && n->cfg->src.callee_hangs_up > 0;
}

/* A uas that may send BYEs and so takes their responses: those of the calls its callee ends, and
 * with RFC 6026's 2xx timer those of a 2xx never acknowledged (RFC 3261 13.3.1.4, hangup.c). */
static inline bool uas_sends_bye(const struct node *n)
{
    return n->cfg->element == OSN_NODE_UAS &&
           (n->cfg->src.callee_hangs_up > 0 || n->cfg->sip.rfc6026);
}

static inline bool is_uac(const struct node *n)
{
    return n->cfg->element == OSN_NODE_UAC;
}

/* What this node's parse of a message decodes (enum osn_sip_wire_role): a proxy (edge, core,
 * mid) only the fields it uses, RFC 3261 16.3 step 1; a uas and the load generator everything
 * (they read Contact, Record-Route, From and To for the BYE, hangup.c and gen_print.c). */
static inline int parse_role(const struct node *n)
{
    return is_proxy(n) && !is_uac(n) ? OSN_SIP_WIRE_ROLE_PROXY : OSN_SIP_WIRE_ROLE_FULL;
}

/* kept.c */
/* Whether x, whose layer just armed lifetime timer `timer_id`, should wait it out in the kept
 * table. */
bool kept_wants(const struct node *n, const struct ntx *x, int timer_id);
/* Moves x (live, in its final wait, its lifetime timer `timer_id` due at `end` and not armed)
 * into the kept table and frees it; false (x untouched) when it cannot be kept. */
bool kept_take(struct node *n, struct ntx *x, int timer_id, double end);
/* The kept record of `role` that message pm (numbers m) belongs to, KEPT_NONE when none. */
uint32_t kept_find(struct node *n, int role, const struct osn_sip_wire *pm,
                   const struct osn_sip_msg *m);
/* The same by numbers and key text (a CANCEL's INVITE). */
uint32_t kept_find_key(struct node *n, int role, uint64_t branch, uint64_t sent_by, int method,
                       const struct osn_sip_wire_key *k);
/* Message r, which matched kept record i, handled as its state says (RFC 3261 17, RFC 6026). */
void kept_recv(struct node *n, uint32_t i, const struct rmsg *r);
/* Ends the records of expiry list `list` that are due. */
void kept_expire(struct node *n, int list);
/* Bytes the kept table holds (records ever used, slots, coded messages). */
size_t kept_bytes(const struct node *n);
void kept_release(struct node *n);

/* What a new transaction is charged against max_memory: the bytes live transactions hold
 * (their objects and messages) and the kept table's. */
static inline size_t node_charged(const struct node *n)
{
    return n->held + n->live * sizeof(struct ntx) + kept_bytes(n) + n->hangups.bytes;
}

/* Whether a new transaction holding a message of `bytes` fits the caps: max_transactions live
 * ones, and the bytes charged (node_charged) within max_memory, or with no max_memory the held
 * messages within NODE_HELD_MAX. Not both: a fixed cap under max_memory refused calls at
 * 512 MiB held whatever max_memory said (about 34,000 calls/s to a uas, 2026-12-07). */
static inline bool node_room(const struct osn_node_cfg *cfg, size_t live, size_t held,
                             size_t charged, size_t bytes)
{
    if (live >= osn_node_max_transactions(cfg))
        return false;
    if (cfg->max_memory)
        return charged + bytes + sizeof(struct ntx) <= cfg->max_memory;
    return held + bytes <= NODE_HELD_MAX;
}

/* txn.c */
struct ntx *ntx_new(struct node *n);
void ntx_free(struct node *n, struct ntx *x);
/* A block for a packed parse of `size` bytes (osn_sip_wire_packed_size), to be kept by a
 * transaction (ntx_set_req, ntx_set_final) or freed with free(); NULL without memory. Its room is
 * at least `size` rounded up to NODE_BLOCK_STEP, so that a transaction may hand it to the next
 * message of its class when it lets go. */
void *ntx_block(struct node *n, size_t size);
/* Frees the blocks the free lists keep (node release). */
void ntx_blocks_release(struct node *n);
/* Keeps message r and its parse as x's request (its key pointing into them): takes r->kept
 * when r has one, else packs a copy. 0, OSN_EINVAL (no key) or OSN_ENOMEM. */
int ntx_set_req(struct node *n, struct ntx *x, struct rmsg *r);
/* Keeps response r and its parse as client transaction x's final response, as ntx_set_req. 0
 * or OSN_ENOMEM. */
int ntx_set_final(struct node *n, struct ntx *x, struct rmsg *r);
/* Keeps a copy of the bytes as server transaction x's last response. 0 or OSN_ENOMEM. */
int ntx_set_resp(struct node *n, struct ntx *x, const char *p, size_t len);
/* The live transaction of `role` that parsed message pm (numbers in m) belongs to, or NULL:
 * the table's answer, confirmed on the key text. */
struct ntx *ntx_find(struct node *n, int role, const struct osn_sip_wire *pm,
                     const struct osn_sip_msg *m);
/* Carries out one output of the transaction layer for x; `in` is the message received that
 * caused it (NULL for a timer, a start or a response of ours). Every caller keeps its output in a
 * variable of its own: the TU, run from here, may step other transactions (a timeout of the
 * client transaction answers 408 on the server one), and an output shared between them would
 * lose the first one's "terminated" (the leak of a client transaction per 408, issue 28). */
void ntx_apply(struct node *n, struct ntx *x, const struct osn_sip_out *o, const struct rmsg *in);
/* Moves live x to the kept table when the outermost ntx_apply (or unhold) returns, if its
 * final wait's lifetime timer is armed and kept_wants it now (a uas's INVITE in Accepted once
 * acked); else nothing changes. */
void ntx_keep(struct node *n, struct ntx *x);
/* Around the handling of one message or timer: the transactions that reach their final wait
 * meanwhile move to the kept table when the outermost unhold returns, not while code that
 * holds them may still run. */
void ntx_hold(struct node *n);
void ntx_unhold(struct node *n);
/* A timer of x fired. */
void ntx_timer(struct node *n, struct ntx *x, int slot);
/* Arms x's UAS 2xx timer. */
void ntx_arm_2xx(struct node *n, struct ntx *x, double at);

/* route.c: loose routing (the decision is osn_proxy_route's). */
/* The address and port of a sip: URI whose host is an IPv4 address or an IPv6reference ("[::1]")
 * (no port: 5060); OSN_EINVAL when it has none. */
int route_uri_addr(struct osn_span uri, union node_addr *to);
/* The proxy's routing decision for request req, and where it sends it (*to: next hop `hop` when
 * it goes to the configured next hop; *tcp: over TCP, as that next hop is configured or as the
 * URI's ";transport=tcp" says); OSN_EINVAL when the URI it must go to has no address the node
 * can use. */
int route_plan(const struct node *n, const struct osn_sip_wire *req, int hop,
               struct osn_proxy_route_out *r, union node_addr *to, bool *tcp);
/* Our Record-Route URI, "sip:HOST:PORT;lr", with ";transport=tcp" before ";lr" when tcp, into
 * out; its length or OSN_ETOOBIG. */
int route_record_uri(const struct node *n, bool tcp, char *out, size_t cap);

/* udp.c */
/* A non-blocking UDP socket bound to sa, ICMP errors queued on it. The fd, or -1 (errno). */
int udp_open(const union node_addr *sa);
/* The address socket fd is bound to (getsockname: the port the kernel chose for port 0), into
 * *sa and as "HOST:PORT" text. 0 or -1 (errno). */
int udp_bound(int fd, union node_addr *sa, char *text, size_t textsize);
/* Opens h's socket: bound to n's Via address and port (n->sock, bound already), connected
 * to h->addr. 0 or -1 (errno). */
int udp_connect(struct node *n, struct next_hop *h);
/* A worker's listening socket: bound to sa with SO_REUSEPORT (the workers share the port; the
 * kernel spreads the peers over them by a hash of the 4-tuple). The fd, or -1 (errno). */
int udp_open_shared(const union node_addr *sa);
/* Reads the ICMP errors queued on a worker's listening socket (n->lsock), as udp_errors. */
void udp_errors_listen(struct node *n);
/* Reads the ICMP errors queued on the listening socket (h NULL) or on next hop h's socket:
 * each counted (peer_unreachable or next_hop_unreachable, and send_errors: the datagram did not
 * arrive), a next hop's said on stderr at most once a second. */
void udp_errors(struct node *n, struct next_hop *h);
/* Queues a datagram to `to`; it leaves at the next udp_flush (sooner when the queue is full), by
 * the connected socket of the next hop whose address `to` is, else by the listening socket (a
 * response upstream, a request routed by a Route or the Request-URI elsewhere). The one send of
 * the node: the stateful fuzzer and the driver tests replace it (their seam). */
void udp_send_to(struct node *n, const union node_addr *to, const char *p, size_t len);
/* Sends what is queued, in order; what the kernel refuses is counted in send_errors. */
void udp_flush(struct node *n);

/* link.c */
/* Whether datagram p[0..len) to `to` is n's to hold on its link (a delay is set for its
 * direction): then it is held, or lost and counted in link_dropped when the line is full, and
 * udp_send_to sends nothing now. false: it goes now. */
bool link_hold(struct node *n, const union node_addr *to, const char *p, size_t len);
/* Whether datagram p[0..len) that came from `from` is n's to hold: it came from a next hop with
 * a link of its own (next_hop_delays, next_hop_losses); then it is held, to be handled when due
 * (node_datagram), or lost and counted. */
bool link_arrive(struct node *n, const union node_addr *from, const char *p, size_t len);
/* A TM_LINK deadline of line `dir`: its due datagrams go out, by udp_send_to; an arrival
 * line's are handed in by link_hand_in, once every timer due now has fired. */
void link_due(struct node *n, int dir);
/* Hands in the datagrams of the arrival lines that fell due (node_datagram), the earliest due
 * first; whether it handed any in. */
bool link_hand_in(struct node *n);
void link_release(struct node *n);

/* tcp.c: the TCP transport. The loop polls tcp_fd (an epoll set of every TCP socket), runs
 * tcp_run when it is readable or tcp_deadline has come, and calls tcp_flush before each wait. */
struct tcp;
/* Sets n->tcp up: the epoll set, and a listening socket on n->listen (its port the UDP socket's)
 * when listen. 0, or an error said in msg. */
int tcp_open(struct node *n, bool listen, char *msg, size_t msgsize);
void tcp_close(struct node *n);
int tcp_fd(const struct node *n);
/* When tcp_run must run even if nothing is readable (idle connections to close), INFINITY. */
double tcp_deadline(const struct node *n);
/* Accepts, connects, reads and frames what is ready, without blocking; closes idle and failed
 * connections (a next hop's: its pending requests take the transport-error path). */
void tcp_run(struct node *n);
/* Writes what this turn queued; closes what failed, as tcp_run. Never inside the element's
 * work: a next hop's transport errors start and end transactions. */
void tcp_flush(struct node *n);
/* Queues a message for the TCP connection whose peer is `to` (an accepted one: a response goes
 * back on the connection of its request, RFC 3261 18.2.2), or to next hop `to` over TCP, opened
 * when none is. Counted in tcp_send_errors when there is none or it failed. */
void tcp_send_to(struct node *n, const union node_addr *to, const char *p, size_t len);
/* Whether `to` is a next hop reached over TCP. */
bool tcp_is_hop(const struct node *n, const union node_addr *to);
/* Whether the node accepts TCP connections (listen says ;transport=tcp): a Record-Route URI of
 * ours may say ;transport=tcp only then. */
bool tcp_listening(const struct node *n);

/* Sends a message over the transport it belongs to: tcp (a transaction over TCP, or an answer to
 * a message that came so), else UDP. */
static inline void node_send(struct node *n, const union node_addr *to, bool tcp, const char *p,
                             size_t len)
{
    if (tcp)
        tcp_send_to(n, to, p, len);
    else
        udp_send_to(n, to, p, len);
}

/* tcp_frame.c: RFC 3261 18.3, a message on a stream ends Content-Length bytes after the blank
 * line that ends its header; CRLFs before it are skipped (7.5), and a double CRLF is RFC 5626's
 * keep-alive ping (3.5.1), answered by one CRLF. */
enum tcp_frame_verdict {
    TCP_FRAME_MORE,       /* the message is not all there yet */
    TCP_FRAME_MSG,        /* a message: len bytes (its header head bytes) */
    TCP_FRAME_CRLF,       /* skip bytes of CRLF before a message */
    TCP_FRAME_PING,       /* skip: a double CRLF, to be answered with CRLF */
    TCP_FRAME_NO_LENGTH,  /* a whole header (head bytes) without Content-Length */
    TCP_FRAME_BAD_LENGTH, /* a Content-Length that is no number, or two that differ */
    TCP_FRAME_TOO_LONG,   /* longer than max: no end of header in max bytes, or header+body */
};
struct tcp_frame {
    size_t skip, len, head;
};
/* What begins p[0..n) when at most max bytes make a message. */
int tcp_frame(const char *p, size_t n, size_t max, struct tcp_frame *f);

/* hops.c: several next hops (the choice is the element's, src/elem/hops.c) */
/* The next hops of cfg->next_hop into addr[] (OSN_ELEM_MAX_HOPS), whether each is over TCP into
 * tcp[], their weights into weight[], their links' delays and losses (next_hop_delays,
 * next_hop_losses; 0 when not given) into delay[] and loss[], *count of them. 0, or OSN_EINVAL with
 * the key at fault in *key and why in msg. */
int hops_parse(const struct osn_node_cfg *cfg, union node_addr *addr, bool *tcp, int *weight,
               double *delay, double *loss, int *count, const char **key, char *msg,
               size_t msgsize);
/* The index of the next hop whose address is a, NTX_NO_HOP when none is. */
int hops_index(const struct node *n, const union node_addr *a);
/* The client half toward next hop `hop` (NULL: none, or not a next hop). */
static inline struct osn_ctl *hops_cli(const struct node *n, int hop)
{
    if (n->nhops <= 1)
        return hop == 0 ? n->cli : NULL;
    return hop < n->fan.n ? n->fan.h[hop].cli : NULL;
}
/* The next hops' counts into n->st (several only). */
void hops_stats(struct node *n);

/* config.c: checks cfg (borrowed for the node's life) and sets n up: binds the socket, the
 * transaction layer, the controllers, the element's server. 0, or an error said in msg. */
int node_setup(struct node *n, const struct osn_node_cfg *cfg, char *msg, size_t msgsize);

/* state.c */
/* Fires deadline e, popped from n->timers, at n->now: what its kind says (a transaction timer,
 * the UAS's 2xx or ring timer, the virtual CPU's service completion, the generator's arrival
 * or call timer, the kept table's expiry), or nothing when its object has moved on since it
 * was armed (a stale generation). The one dispatch of the node's timers: its loop and the tests
 * that drive the node with a clock of their own both fire through it. */
void node_fire(struct node *n, const struct tm_entry *e);
/* Fires every deadline due by n->now, in order (node_fire each). */
void node_fire_due(struct node *n);
/* Frees the element's state: transactions, timers, queued messages, controllers, the layer. */
void node_release(struct node *n);

/* recv.c */
/* A SIP message in: a datagram, or (tcp) one framed from a TCP connection with peer `from`. */
void node_message(struct node *n, const char *buf, size_t len, const union node_addr *from,
                  bool tcp);
static inline void node_datagram(struct node *n, const char *buf, size_t len,
                                 const union node_addr *from)
{
    node_message(n, buf, len, from, false);
}
void node_service_done(struct node *n);
/* Frees a queued message (and its parse, unless a transaction took it); forgets it as a pending
 * new request. */
void qmsg_free(struct node *n, struct qmsg *q);

/* The port our Via's sent-by names. */
static inline uint16_t node_via_port(const struct node *n)
{
    return n->via_port ? n->via_port : n->port;
}

static inline struct osn_elem node_elem(const struct node *n)
{
    return (struct osn_elem){.role = is_proxy(n) ? OSN_ELEM_PROXY : OSN_ELEM_UAS,
                             .hops = n->nhops > 1 ? (struct osn_elem_hops *)&n->fan : NULL,
                             .cli = n->cli,
                             .sip = &n->cfg->sip,
                             .retry_after = n->cfg->ctl.none.retry_after,
                             .record_route = n->cfg->record_route};
}

/* tu.c */
/* The transaction layer's TU event in o for x; `in` as for ntx_apply (the response a relay
 * sends on, the ACK that passes the TU). */
void tu_event(struct node *n, struct ntx *x, const struct osn_sip_out *o, const struct rmsg *in);
/* A new request r without a transaction, served now (its transaction may take r->kept). */
void tu_new_request(struct node *n, struct rmsg *r, const struct osn_elem_item *shed);
/* The server transaction x answers `status` (Retry-After s, -1 none), carrying what the
 * element's OSN_ELEM_W_* bits `with` ask (a uas's; 0 for none). */
void tu_respond(struct node *n, struct ntx *x, int status, int retry_after, int with);
/* Answers request req, which came from `from` (over TCP: tcp), statelessly with `status`
 * (Retry-After s, -1 none) and what our transport adds to its top Via (addr_via_received):
 * printed into n->obuf and sent; false when it does not print. */
bool tu_reply(struct node *n, const struct osn_sip_wire *req, const union node_addr *from, bool tcp,
              int status, int retry_after);
/* An ACK r that matched no transaction (the ACK of a 2xx). */
void tu_stray_ack(struct node *n, const struct rmsg *r);
void tu_2xx_timer(struct node *n, struct ntx *x);
/* The uas's INVITE x goes while its 2xx timer is pending (Timer L, which the timer's last
 * deadline meets at 64*T1, may come first): the element decides as at that deadline. */
void tu_2xx_end(struct node *n, struct ntx *x);
/* A 2xx r again at a proxy's kept INVITE client (hop, routed, t0 its record's): the element's
 * decision, a relay to `up` (the kept server transaction upstream's address, NULL when gone;
 * up_tcp: its request came over TCP) in state up_state. */
void tu_kept_2xx(struct node *n, int hop, bool routed, double t0, const union node_addr *up,
                 bool up_tcp, int up_state, const struct rmsg *r);

/* uas_reply.c: what a uas's responses carry (Contact, Allow, SDP), in bytes */
#define UAS_CONTACT_MAX 96
#define UAS_SDP_MAX     8192
/* The facts of request req (Call-ID hash call_id) for osn_elem_on_uas_request. */
struct osn_uas_request uas_request_of(const struct node *n, const struct osn_sip_wire *req,
                                      uint64_t call_id);
/* Fills what OSN_ELEM_W_* bits `with` ask into r, its text in contact[] and sdp[]. 0 or the
 * SDP printer's error. */
int uas_reply_fill(const struct node *n, const struct osn_sip_wire *req, int with,
                   struct osn_sip_reply *r, char contact[UAS_CONTACT_MAX], char sdp[UAS_SDP_MAX]);

/* What the metrics endpoint and the stats rows show of a node: its counters and gauges, read
 * by the thread that runs it (node_view), or summed over the workers (workers_view). */
struct node_view {
    uint64_t count[OSN_NODE_NCOUNTERS];
    long queue;
    int mode;               /* the highest of the workers' */
    size_t live;            /* transactions */
    size_t kept;            /* of them kept in their final wait (kept.c), not in live */
    enum osn_ctl_kind kind; /* the client half's (loss and rate have a level) */
    double level;           /* loss: percent shed (the workers' mean); rate: calls/s (their sum) */
    int nhops;              /* several next hops: their counts summed, up when up in any worker */
    struct osn_elem_hop hop[OSN_ELEM_MAX_HOPS];
    bool up[OSN_ELEM_MAX_HOPS];
    /* several next hops: each one's client half level (kind says which), merged as level */
    double hop_level[OSN_ELEM_MAX_HOPS];
};
void node_view(struct node *n, struct node_view *v);

/* workers.c */
/* The worker count cfg asks for (0: the CPUs online), 1..OSN_NODE_MAX_WORKERS. */
int workers_count(const struct osn_node_cfg *cfg);
/* Runs cfg->workers loops (more than one) as osn_node_run does one. */
int workers_run(const struct osn_node_cfg *cfg, int count, struct osn_node_stats *st, char *msg,
                size_t msgsize);
/* Publishes n's view for the others to sum (each loop turn; at most every few ms). */
void workers_publish(struct node *n, bool now);
/* The view of the whole node: n's own (read now) and the other workers' last published. */
void workers_view(struct node *n, struct node_view *v);
/* The descriptor every worker polls: readable once the node must stop. -1 with one worker. */
int workers_wake_fd(const struct node *n);
/* Whether some worker has ended (an error, a signal): every worker then stops. */
bool workers_stopping(const struct node *n);
void workers_stop(struct node *n);
/* The listening port worker 0 bound (the others bind it too). */
uint16_t workers_port(const struct node *n);

/* run.c: pieces of a node's run that workers.c shares */
struct metrics;
/* Sets n up (node_setup) and opens its metrics endpoint when cfg->metrics asks (*met). */
int node_start(struct node *n, const struct osn_node_cfg *cfg, struct metrics **met, char *msg,
               size_t msgsize);
/* The handshake line (cfg->ready). */
void node_ready_line(const struct node *n, FILE *f);
/* The event loop until the end (duration, signal, error; another worker's end); n->err. */
int node_loop(struct node *n, struct metrics *met);
/* The error's message, as osn_node_run gives it. */
void node_err_msg(const struct node *n, int err, char *msg, size_t msgsize);
/* The end of a run: last sends, the server's books closed, its counts into *st, sockets closed
 * and the element's state freed. */
void node_end(struct node *n, struct osn_node_stats *st);

/* metrics.c: the HTTP endpoint on libmicrohttpd, driven by the node's loop */
struct metrics;
/* Listens on sa; NULL with the reason in msg. */
struct metrics *metrics_open(struct node *n, const union node_addr *sa, char *msg, size_t msgsize);
/* The one descriptor to poll for reading (MHD's epoll set). */
int metrics_fd(const struct metrics *m);
/* The listening socket (for getsockname: the port bound when port 0 was asked for); -1 if
 * unknown. Not to be polled or closed: MHD owns it. */
int metrics_listen_fd(const struct metrics *m);
/* Seconds within which metrics_run must be called even if nothing is readable (INFINITY:
 * no bound). */
double metrics_wait(struct metrics *m);
/* Accepts, reads, answers, times out: whatever is ready, without blocking. */
void metrics_run(struct metrics *m);
void metrics_close(struct metrics *m);

/* dialogs.c */
int dialogs_put(struct map *d, struct ntx *x);
/* The INVITE of Call-ID call_id (its text) and CSeq number cseq, NULL when none. */
struct ntx *dialogs_get(const struct map *d, uint64_t call_id, struct osn_span text, uint32_t cseq);
void dialogs_del(struct map *d, struct ntx *x);

/* Remembers call `key` answered 2xx at `now`; the calls it forgets to make room (CALLS_AGE,
 * CALLS_MAX) are added to *forgotten. 0, or OSN_ENOMEM. */
int calls_put(struct map *c, uint64_t key, double now, uint64_t *forgotten);
bool calls_has(const struct map *c, uint64_t key);
void calls_del(struct map *c, uint64_t key);

/* hangup.c: the uas's BYEs, of the calls the callee ends (source.callee_hangs_up) and of the 2xx
 * never acknowledged (RFC 3261 13.3.1.4) */
/* The uas sends the 2xx of new INVITE x (its parse kept), its To tag `tag`: the call's BYE is
 * printed now; when the callee ends this call, its timer is armed at the end of a hold, else it
 * waits for the ACK (a watch, hangup_unacked). */
void hangup_start(struct node *n, const struct ntx *x, const char *tag);
/* The ACK of the 2xx of call `call_id` came: its BYE may go (RFC 3261 15), its watch goes. */
void hangup_acked(struct node *n, uint64_t call_id);
/* Whether a BYE of the callee's is due for call `call_id` (its hang-up timer sends it). */
bool hangup_due(const struct node *n, uint64_t call_id);
/* The 2xx timer of call `call_id` is over: its watch goes, its BYE sent first when `bye` (the
 * element's BYE_UNACKED). True when that BYE went. */
bool hangup_unacked(struct node *n, uint64_t call_id, bool bye);
/* The TM_HANGUP timer of hang-up obj, armed with generation gen, fired. */
void hangup_timer(struct node *n, void *obj, uint32_t gen);
/* An event of the uas's BYE client transaction x: its answer (or Timer F) ends the call. */
void hangup_event(struct node *n, struct ntx *x, const struct osn_sip_out *o);
void hangup_release(struct node *n);

/* gen.c: the load generator (element uac) */
struct gen;
/* Sets up n->gen from cfg->src. 0, or an error said in msg. */
int gen_setup(struct node *n, char *msg, size_t msgsize);
/* Schedules the first call (once n->t_start is set). */
void gen_start(struct node *n);
/* A TM_ARRIVAL deadline: the scheduled call starts. */
void gen_arrival(struct node *n);
/* A call starts now (what an arrival does, without the schedule: the differential test's). */
void gen_call(struct node *n);
/* What the UAC's machine had the generator do so far, by enum osn_uac_do; NULL without one. */
const uint64_t *gen_did(const struct node *n);
/* A TM_CALL deadline of call `call` armed with generation `gen`. */
void gen_call_timer(struct node *n, void *call, uint32_t gen);
/* An event of one of the generator's client transactions (tu_event passes them all here). */
void gen_client_event(struct node *n, struct ntx *x, const struct osn_sip_out *o,
                      const struct rmsg *in);
/* Whether no call of the generator holds its transaction x (a call waiting on its INVITE holds
 * it, c->invite): only then may x move to the kept table. */
bool gen_lets_go(const struct node *n, const struct ntx *x);
/* A 2xx copy r reaching a kept INVITE client of the generator (Accepted, RFC 6026 7.2) to next
 * hop `hop` started at t0: to the call's machine as the live transaction passes it (its ACK
 * again, RFC 3261 13.2.2.4). */
void gen_kept_2xx(struct node *n, int hop, double t0, const struct rmsg *r);
/* The traffic's end: no call starts any more, calls that are up hang up now, retries due
 * later than 64*T1 from now end their calls with the attempt that failed. */
void gen_drain(struct node *n);
/* Whether the drain is over: no call without its end. */
bool gen_done(const struct node *n);
/* The per-interval CSV (header, one row) and the progress line. */
void gen_stats_header(FILE *f);
void gen_stats_row(struct node *n, FILE *f);
void gen_console_row(struct node *n, FILE *f);
/* Copies the measures into n->st.uac and frees the generator. */
void gen_finish(struct node *n);

/* gen_print.c: the generator's requests, printed into out[0..cap); the length or an error. */
struct gen_ids {
    uint32_t slot, gen; /* the call's slot and attempt: its Call-ID */
    uint64_t salt;
    const char *host; /* our sent-by host and port */
    uint16_t port;
    const char *peer; /* the next hop, "HOST:PORT" (the Request-URI's host) */
    uint64_t branch;
    bool tcp; /* the next hop is over TCP: our Via says so (RFC 3261 18.1.1) */
    bool oc;  /* our Via offers overload control (RFC 7339 5.1): a client half is for the hop */
};
int gen_print_invite(char *out, size_t cap, const struct gen_ids *id);
/* The ACK of 2xx `resp` (RFC 3261 13.2.2.4): its dialog's identities, the route set of its
 * Record-Route reversed (12.1.2), the remote target its Contact. */
int gen_print_ack(char *out, size_t cap, const struct gen_ids *id, const struct osn_sip_wire *resp);
/* The BYE of the dialog of 2xx `resp` (RFC 3261 15.1.1), CSeq 2. */
int gen_print_bye(char *out, size_t cap, const struct gen_ids *id, const struct osn_sip_wire *resp);
/* The slot and attempt of a Call-ID the generator printed with `salt`; false for another's. */
bool gen_call_id_parse(struct osn_span call_id, uint64_t salt, uint32_t *slot, uint32_t *gen);

/* gen_draws.c */
struct gen_arrivals {
    struct osn_rng rng;
    double t; /* the last arrival (s) */
    int phase;
};
double gen_exp1(struct osn_rng *r);
/* The next call arrival of source sc after a->t (INFINITY: none). */
double gen_next_arrival(const struct osn_node_source *sc, struct gen_arrivals *a);
/* The highest rate (calls/s) source sc offers at any time: Poisson's rate, MMPP-2's faster
 * phase, a profile's highest step times its burst factor (when above 1). */
double gen_peak_rate(const struct osn_node_source *sc);
/* The loop's wake slack (s) for a source of peak rate `peak` (gen.c says why and how much). */
double gen_wake_slack(double peak);
/* A draw of the retry delay law (s). */
double gen_retry_delay(const struct osn_node_source *sc, struct osn_rng *r);
void gen_hist_add(uint32_t hist[OSN_NODE_HB], double d);

#endif

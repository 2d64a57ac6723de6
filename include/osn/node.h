/*
 * The real node: one element of a scenario (a stateful proxy or a UAS) on a UDP socket (and TCP,
 * RFC 3261 18, when listen or a next hop says ";transport=tcp"), on a monotonic clock, running
 * the same transaction machines (osn/sip.h), element behaviour (osn/elem.h) and controllers
 * (osn/ctl.h) as the network simulator.
 *
 * Each datagram read is parsed (osn/sip_wire.h; a malformed request that can be answered gets 400,
 * anything else malformed is dropped and counted), classified against the node's transactions
 * (new INVITE, copy, response, ACK, BYE) and given to the element's server: a virtual CPU that
 * spends each message's cost (the scenario's cost_* keys) on the messages ahead of it, behind a
 * buffer of `buffer` messages, watched by the controller's server half. A message is handled
 * when its cost has been spent, without sleeping the event loop; costs 0 handle it at once. So
 * one scenario file describes the same element for `osn sim` and for a deployment on loopback.
 *
 * Safety: the proxy forwards only to its configured next hop (never an open relay); responses go
 * back to the address the request came from (as with rport, RFC 3581); Max-Forwards is
 * decremented and 483 returned at 0; live transactions are capped (max_transactions: beyond it a
 * new INVITE gets 503); the memory held per queued message is its datagram.
 */
#ifndef OSN_NODE_H
#define OSN_NODE_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "osn/ctl.h"
#include "osn/elem.h"
#include "osn/sip.h"

/* uac: the load generator (the scenario's [source] traffic, the caller's side of each call). */
enum osn_node_element { OSN_NODE_EDGE, OSN_NODE_CORE, OSN_NODE_UAS, OSN_NODE_UAC };

/* "edge", "core", "uas", "uac" (the scenario's word, the JSON's and the metrics' label); "?"
 * else. */
const char *osn_node_element_name(int element);

/* The load generator's traffic (element uac): the network scenario's [source] keys, as `osn sim`
 * reads them (osn/net.h struct osn_net_source_cfg, copied by the scenario loader: the node does
 * not include the simulator). */
enum osn_node_process { OSN_NODE_POISSON, OSN_NODE_MMPP, OSN_NODE_PROFILE };
enum osn_node_retry_law {
    OSN_NODE_RETRY_EXP,
    OSN_NODE_RETRY_DET,
    OSN_NODE_RETRY_UNIFORM,
    OSN_NODE_RETRY_LOGNORMAL
};
#define OSN_NODE_MAX_STEPS 32

struct osn_node_source {
    int process;           /* enum osn_node_process */
    double rate;           /* Poisson: calls/s; profile: before its first step */
    double mmpp_rate[2];   /* MMPP-2: calls/s in phase 0 and 1 */
    double mmpp_switch[2]; /* MMPP-2: rate of leaving phase 0 and 1 (1/s) */
    int nsteps;            /* profile: rate step_rate[i] from step_t[i] on */
    double step_t[OSN_NODE_MAX_STEPS], step_rate[OSN_NODE_MAX_STEPS];
    double burst_t, burst_len, burst_factor;        /* profile: rate x factor in [t, t + len) */
    double hold;                                    /* mean hold time (s), exponential */
    double retry_prob, retry_delay, retry_delay_cv; /* retrials, osn_uac_retry */
    int retry_delay_law;                            /* enum osn_node_retry_law */
    bool honour_retry_after;
    int max_retries;
    struct osn_uac_patience patience; /* callers who give up (osn_uac_patience_draw) */
    double callee_hangs_up; /* the fraction of answered calls the callee ends (uas; uac waits) */
    uint64_t seed; /* the scenario's seed: the same seed, the same schedule of calls (uac), the
                      same ring delays (uas) */
};

/* Delay histograms of the generator: the UAC's layout (osn_uac_delay_bin), the network
 * simulator's, so that the percentiles are read the same way. */
#define OSN_NODE_HB OSN_UAC_DELAY_BINS

/* The generator's counts of the events that came in a window [t0, t1] of its clock (a call
 * started, an attempt after a call's first, a call's outcome, a CANCEL sent, an attempt its
 * client half shed), as the simulator
 * counts what comes after its warm-up: the rates of the summary when t1 > t0 (node.warmup > 0:
 * [warmup, duration]). */
struct osn_node_uac_window {
    double t0, t1; /* s since the start; t1 <= t0: no window (the rates cover the whole run) */
    uint64_t started, retries, outcome[OSN_UAC_NOUTCOMES], good_after[4], ended_attempts;
    uint64_t cancels, no_trying, shed_local;
};

/* What the generator measured (element uac), counts over the whole run and its drain (the
 * window's apart, in win). */
struct osn_node_uac_stats {
    uint64_t started;                    /* calls: first attempts sent */
    uint64_t retries;                    /* attempts after a call's first */
    uint64_t outcome[OSN_UAC_NOUTCOMES]; /* calls ended, by enum osn_uac_outcome */
    uint64_t good_after[4];      /* good calls whose good attempt came after 0, 1, 2, >= 3 */
    uint64_t ended_attempts;     /* attempts of the calls that ended */
    uint64_t unfinished;         /* calls still without an outcome when the drain ended */
    uint64_t acks_2xx;           /* ACKs of a 2xx sent (each 2xx copy gets one) */
    uint64_t byes_sent, byes_ok; /* BYEs started; of which answered 2xx */
    uint64_t byes_in;            /* the callee's BYEs answered 200: calls the callee ended */
    uint64_t shed_local; /* attempts the generator's own client half shed (control.at edge or
                            both, RFC 7339 5.3): never sent, each failed as rejected */
    uint64_t cancels;    /* CANCELs sent by callers who gave up (RFC 3261 9.1) */
    uint64_t failovers;  /* INVITEs sent again to another next hop after a timeout or a 503 with
                            Retry-After from the one they went to (several next hops) */
    uint64_t no_trying;  /* calls ended without a 100 Trying */
    uint64_t late_sends; /* INVITEs sent more than 1 ms after their scheduled time */
    double lag_max;      /* the largest delay of an INVITE after its schedule (s) */
    double wake_slack;   /* how long the loop may sleep past a due call (s; src/node/gen.c) */
    double duration;     /* the traffic's length (s): no call starts after it */
    uint64_t setup_n, trying_n;
    double setup_sum, trying_sum;
    uint32_t setup_hist[OSN_NODE_HB];  /* INVITE -> first 180 */
    uint32_t trying_hist[OSN_NODE_HB]; /* INVITE -> first 100 */
    struct osn_node_uac_window win;
};

/* The q-quantile (0..1) of a histogram of osn_node_uac_stats (bin midpoints), NAN when empty. */
double osn_node_hist_quantile(const uint32_t hist[OSN_NODE_HB], double q);

struct osn_node_cfg {
    int element;                /* enum osn_node_element */
    char listen[64];            /* "A.B.C.D:PORT" or "[IPv6]:PORT"; port 0: ephemeral, see ready;
                                   ";transport=tcp" after it: TCP too, on the same port */
    char next_hop[512];         /* "HOST:PORT" as listen (port not 0, same family), proxies; a
                                   proxy may list up to OSN_ELEM_MAX_HOPS, comma-separated, each
                                   with ";transport=tcp" to reach it over TCP */
    char next_hop_weights[128]; /* "2, 1": a whole number 1..1000 per next hop; "": all 1 */
    double down_time;           /* s a next hop that timed out is not chosen (several) */
    double duration;            /* s; 0: until SIGINT/SIGTERM */
    double stats_interval;      /* s between stats rows */
    size_t max_transactions;    /* live transactions at most; 0: max_memory / OSN_NODE_TXN_BYTES */
    size_t max_memory;          /* bytes the transactions may hold, live and kept (1 GiB); 0
                                   (programs only: the key starts at 1 MiB): no bound */
    char metrics[64];           /* "HOST:PORT" of the Prometheus endpoint (port 0 as listen), "" */
    double per_source_rate;     /* requests/s (not ACKs) per source (IPv4, IPv6 /64), burst ~1 s */
    bool record_route;          /* proxies: Record-Route dialog-creating INVITEs (default yes) */
    int mid;       /* an edge as a chain's mid proxy K (1..OSN_NET_MAX_MIDS): that mid's costs and
                      buffer from the scenario (osn testbed sets it); 0: the edge's own */
    char name[32]; /* an [element NAME] or [source NAME] of a topology written in the scenario:
                      the node plays it (its element, mid, costs; a source's share of the rate) */
    /* Event loops (threads), each with its own listening socket on `listen` (SO_REUSEPORT) and,
     * for a proxy, its own port toward the next hops; 1..OSN_NODE_MAX_WORKERS, or 0: the CPUs
     * online (at most OSN_NODE_MAX_WORKERS). Default 1. src/node/workers.c says how. */
    long workers;
    /* uac: s not measured; > 0: the delay samples (setup, response) count only for a 180 or a
     * 100 that comes in [warmup, duration], the simulator's window; 0: every one */
    double warmup;
    long tcp_max_connections; /* TCP connections accepted and open at most (next hops apart) */
    double tcp_idle_timeout;  /* s without a byte read or written before a connection closes */
    size_t tcp_buffer;        /* bytes queued for one TCP peer at most (>= 65,535) */
    /* The scenario's link delays, carried out by the node (the simulator's [link] delay,
     * one-way, s; 0: none): every datagram it sends to a next hop leaves link_delay_down s
     * later, every other (a response upstream, a request elsewhere) link_delay_up s later, held
     * in a delay line on the node's timers (src/node/link.c) of at most link_buffer bytes per
     * loop; one that does not fit is lost and counted (link_dropped). UDP only. */
    double link_delay_down, link_delay_up;
    size_t link_buffer;
    /* The scenario's link losses, carried out by the node (the simulator's [link] loss, a
     * probability in [0, 1); 0: none): each datagram it sends on the link downstream (to a next
     * hop) or upstream is lost with that probability, before any delay, and counted (link_lost).
     * The draws are the node's own stream of the scenario's seed. UDP only. */
    double link_loss_down, link_loss_up;
    /* Links of their own to the next hops (a written topology's [link A-B] that differ): one
     * one-way delay (s) and one loss (a probability in [0, 1)) per next hop, in order,
     * comma-separated ("": none). The node carries the link both ways: what it sends to next hop
     * k and what it receives from it (by source address) are each held delay k and lost with
     * loss k, so the next hop holds nothing for it. Not beside link_delay_down or
     * link_loss_down, which act on every next hop's sends. UDP only. */
    char next_hop_delays[256], next_hop_losses[256];
    /* osn testbed under MPI: "NAME:RANK, ..." places element NAME (uas, core, core2, mid,
     * edge, edge0, uac, uac0, ...) on rank RANK; the others go round-robin. Not read by the
     * node itself. */
    char rank[256];
    /* uas: the ring delay between its 180 and its 200 (enum osn_uas_ring_law, mean ring_mean s;
     * the scenario's [server uas] ring_delay), drawn from a stream of src.seed */
    int ring;
    double ring_mean;
    /* the element's server, as the simulator's [server NAME] */
    double cost[OSN_ELEM_NKINDS];
    long buffer;
    enum osn_ctl_kind ctl_kind;
    struct osn_ctl_cfg ctl;
    /* [control] at: where the server halves are (the scenario's enum osn_net_ctl_at, in the
     * same order). edge, both: an edge has the server half toward its upstream (the
     * generator), the generator a client half per next hop (RFC 7339 5.3 at the caller);
     * edge: the core none */
    enum osn_node_ctl_at {
        OSN_NODE_CTL_AT_CORE,
        OSN_NODE_CTL_AT_EDGE,
        OSN_NODE_CTL_AT_BOTH
    } ctl_at;
    struct osn_sip_cfg sip;
    FILE *stats; /* borrowed; NULL: no per-interval CSV */
    /* borrowed; NULL: no progress. Each stats interval a line "osn node ELEMENT: ..." with the
     * counts, rewritten in place on a terminal, or appended (console_lines) when the stream is
     * a file or a pipe, so that several nodes' progress can be told apart. */
    FILE *console;
    bool console_lines;
    /* borrowed; NULL: none. Gets one line, flushed, once the sockets are bound (the handshake of
     * a script that starts the node on port 0):
     *   osn node ELEMENT listening on HOST:PORT (udp)[, metrics HOST:PORT][, next hop HOST:PORT]
     * with the ports actually bound. */
    FILE *ready;
    /* The load generator (element uac): its traffic; where it sends is next_hop. */
    struct osn_node_source src;
    /* borrowed; NULL: none. uac: one line per INVITE sent, "attempt,call,t_sched,t_sent" (s
     * since the start; attempt 0 is a call's first), for checks of the arrival process. */
    FILE *trace;
    /* Set from a signal handler to stop the node (read between loop iterations); may be NULL. */
    volatile sig_atomic_t *stop;
};

#define OSN_NODE_MAX_WORKERS 64

/* Defaults: uas, listen 127.0.0.1:5060, no next hop, duration 0, stats every 1 s, max_memory
 * 1 GiB and max_transactions derived from it, no metrics, costs 0 (real speed), buffer 10,000,
 * control none, RFC 3261 timers, one worker; TCP: 1,024 connections, 60 s idle timeout, 256 KiB
 * queued per peer; no link delays, a delay line of 64 MiB. */
void osn_node_cfg_default(struct osn_node_cfg *cfg);

/* What max_memory charges a live transaction when max_transactions is derived from it: its
 * object and the request and response it holds (about 1.1 KB measured, issue 34), rounded up. */
#define OSN_NODE_TXN_BYTES 2048

/* The live transactions cfg allows: max_transactions when set, else max_memory divided by
 * OSN_NODE_TXN_BYTES (1 GiB: 524,288). */
static inline size_t osn_node_max_transactions(const struct osn_node_cfg *cfg)
{
    return cfg->max_transactions ? cfg->max_transactions : cfg->max_memory / OSN_NODE_TXN_BYTES;
}

/* Checks what the key tables cannot state of a configuration the loader has checked: the
 * addresses and the relations between keys (a key's own range is its table's alone); *bad_key
 * (may be NULL) gets the scenario key at fault. */
int osn_node_check(const struct osn_node_cfg *cfg, const char **bad_key, char *msg, size_t msgsize);

/* The counters of a run (absolute counts). */
#define OSN_NODE_COUNTERS(X)                                                                       \
    X(datagrams_in, "datagrams read")                                                              \
    X(datagrams_out, "datagrams sent")                                                             \
    X(invites_in, "INVITE requests arriving, originals and copies")                                \
    X(calls_in, "new INVITEs: server transactions started (not those refused at the cap)")         \
    X(calls_forwarded, "INVITEs forwarded (proxy) or answered (uas)")                              \
    X(calls_ok, "first 2xx of an INVITE sent upstream")                                            \
    X(rejected_503, "503 sent upstream by overload control")                                       \
    X(refused_at_cap, "requests refused with 503 at max_transactions or max_memory, copies too")   \
    X(timeouts_408, "408 sent upstream on a next-hop timeout")                                     \
    X(transport_500, "500 sent upstream: the transport to the next hop failed (RFC 3261 16.9)")    \
    X(too_many_hops, "483 sent (Max-Forwards 0)")                                                  \
    X(dropped, "messages lost at the full buffer")                                                 \
    X(retrans_absorbed, "retransmitted requests absorbed by server transactions")                  \
    X(retrans_sent, "retransmissions sent (requests and responses)")                               \
    X(bye_in, "new BYE requests")                                                                  \
    X(bye_ok, "2xx to BYE sent upstream")                                                          \
    X(bye_sent, "BYEs the uas sent: calls its callee ended (source.callee_hangs_up)")              \
    X(bye_sent_ok, "2xx received to the BYEs the uas sent (bye_sent and bye_unacked)")             \
    X(bye_unacked, "BYEs the uas sent for a 2xx never acknowledged (RFC 3261 13.3.1.4)")           \
    X(cancel_in, "new CANCEL requests")                                                            \
    X(cancel_forwarded, "CANCELs sent to the branch of a pending INVITE (proxy)")                  \
    X(cancelled_487, "INVITEs answered 487 after a CANCEL (uas)")                                  \
    X(acks_forwarded, "ACKs of a 2xx forwarded (proxy)")                                           \
    X(bad_answered, "malformed requests answered (400, 505)")                                      \
    X(bad_dropped, "malformed datagrams dropped")                                                  \
    X(stray, "messages matching no transaction, dropped")                                          \
    X(send_errors, "datagrams the socket refused, or the next hop refused (ICMP)")                 \
    X(no_dialog_481,                                                                               \
      "481 sent (a CANCEL for no INVITE; uas: a request in no dialog, a BYE of no call)")          \
    X(calls_forgotten,                                                                             \
      "calls the uas forgot before their BYE: an hour after their 2xx, or the oldest at 2^20")     \
    X(loops_482, "482 sent (a request looped back: our Via, our branch)")                          \
    X(too_large_513, "513 sent (the forwarded request too large for UDP)")                         \
    X(over_budget, "requests over their source's per_source_rate: one stateless 503 or nothing")   \
    X(next_hop_unreachable, "ICMP errors for datagrams to the next hop (e.g. port unreachable)")   \
    X(peer_unreachable, "ICMP errors for datagrams to anyone else (a caller gone)")                \
    X(tcp_msgs_in, "SIP messages read over TCP")                                                   \
    X(tcp_msgs_out, "SIP messages sent over TCP")                                                  \
    X(tcp_accepted, "TCP connections accepted")                                                    \
    X(tcp_connects, "TCP connections the node opened (next hop, Route, a response's Via)")         \
    X(tcp_connect_failed,                                                                          \
      "TCP connections the node opened that failed or broke: requests waiting on them got 500")    \
    X(tcp_closed_by_peer,                                                                          \
      "TCP connections the peer closed in order (end of stream): not failures")                    \
    X(tcp_fallback,                                                                                \
      "TCP responses sent to their Via's address: the request's connection was gone (18.2.2)")     \
    X(tcp_refused, "TCP connections closed at once: tcp_max_connections were open")                \
    X(tcp_closed_idle, "TCP connections closed after tcp_idle_timeout without progress")           \
    X(tcp_closed_overflow,                                                                         \
      "TCP connections closed: a message over 65,535 bytes, or output beyond tcp_buffer")          \
    X(tcp_bad_framing, "TCP messages without a valid Content-Length: 400 (requests), then closed") \
    X(tcp_paused, "times reading a TCP peer stopped: our output to it over half of tcp_buffer")    \
    X(tcp_send_errors, "messages not sent over TCP: no connection to the peer, or it failed")      \
    X(transactions_peak, "live transactions at most")                                              \
    X(kept_peak, "transactions kept in their final wait (compact) at most")                        \
    X(kept_bytes_peak, "bytes of the kept transactions' table at most")                            \
    X(kept_unsent, "copies a kept transaction could not answer: not the request first answered")   \
    X(link_dropped, "datagrams lost at the full delay line (link_buffer, link_delay_*)")           \
    X(link_lost, "datagrams lost on the link by its loss probability (link_loss_*)")

#define OSN_NODE_ONE(name, meaning) +1
enum { OSN_NODE_NCOUNTERS = 0 OSN_NODE_COUNTERS(OSN_NODE_ONE) };
#undef OSN_NODE_ONE

struct osn_node_stats {
#define OSN_NODE_FIELD(name, meaning) uint64_t name;
    OSN_NODE_COUNTERS(OSN_NODE_FIELD)
#undef OSN_NODE_FIELD
    uint64_t rss_peak_kb;
    double elapsed_s;
    double mode_time[3]; /* seconds in controller modes 0, 1, 2 */
    double busy_s;       /* virtual CPU busy seconds */
    char listen[64];     /* the address bound, "HOST:PORT" (the port chosen when listen said 0) */
    char metrics[64];    /* the metrics address bound, "" for none */
    struct osn_node_uac_stats uac; /* element uac */
    /* A proxy with several next hops: each one's counts (osn/elem.h struct osn_elem_hop); 0
     * with one next hop, whose counts are the node's own. */
    int nhops;
    struct osn_node_hop_stats {
        char server[64]; /* "HOST:PORT" */
        int weight;
        uint64_t offered, sent, invites, shed, timeouts, got_503, downs, failovers;
        bool down; /* marked down at the end of the run */
    } hops[OSN_ELEM_MAX_HOPS];
    /* Several workers (cfg->workers > 1): each one's counters, in the order of
     * OSN_NODE_COUNTERS; the counters above are their sums (transactions_peak: the sum of the
     * workers' peaks, an upper bound of the node's). 0 with one worker. */
    int nworkers;
    uint64_t worker[OSN_NODE_MAX_WORKERS][OSN_NODE_NCOUNTERS];
};

/* Runs the node until cfg->duration passes or *cfg->stop is set; fills *st (st->listen and
 * st->metrics are set once bound, even when the run fails later). Returns 0, or
 * OSN_EINVAL / OSN_EIO / OSN_ENOMEM with a message. */
int osn_node_run(const struct osn_node_cfg *cfg, struct osn_node_stats *st, char *msg,
                 size_t msgsize);

/* The counters' names and meanings, in order (for reports). */
int osn_node_counter_count(void);
const char *osn_node_counter_name(int i);
const char *osn_node_counter_meaning(int i);
uint64_t osn_node_counter_value(const struct osn_node_stats *st, int i);

#endif

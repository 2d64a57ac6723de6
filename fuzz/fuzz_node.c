/*
 * libFuzzer target of the node as a whole (issue 28): sequences of datagrams and clock steps
 * into the node's own driver (src/node: parse, classify, the virtual CPU, transactions, the
 * element's TU), with no socket. udp_send_to() below is the seam: it records what the node would
 * send, and checks where it goes.
 *
 * Input: byte 0 chooses the element (UAS, edge without control, edge with loss or rate toward
 * its next hop, core with a server half and costs, so that messages queue); then records, each
 * an op byte, a 16-bit length (little-endian) and that many bytes:
 *   op % 4 == 0, 1   a datagram from source (op / 4) % 4: three upstream peers, or the next hop
 *   op % 4 == 2      the clock moves on by (first two bytes) milliseconds; due deadlines fire
 *   op % 4 == 3      the next hop answers the k-th request the node forwarded (k = byte 0) with
 *                    status 100 + (byte 1 * 256 + byte 2) % 600: its Via, From, To, Call-ID and
 *                    CSeq lines copied, as a real next hop would (the fuzzer cannot guess
 *                    branches); a line whose name is spelled otherwise ("via:", "v:") is left
 *                    out, as a faulty next hop might
 * A record cut short ends the input.
 *
 * Invariants, each an abort (a finding):
 *   - every datagram goes to the next hop (a request) or to one of the sources (a response);
 *   - a request the node sends parses as well-formed SIP;
 *   - after the last record the clock runs 300 s on (every RFC 3261 timer, 64*T1 at most, and
 *     the UAS's 2xx run out) and then no transaction is live and nothing waits in the CPU queue:
 *     every way a transaction can end ends it (the node once leaked one per 408);
 *   - memory: ASan and LeakSanitizer (scripts/fuzz.sh builds with both) after node_release.
 */
#define _GNU_SOURCE /* memmem */
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "node_int.h"

#define NSRC   4 /* three upstream peers and the next hop */
#define NFWD   8 /* forwarded requests remembered for op 3 */
#define MAXFWD 2048

static union node_addr src[NSRC];
static struct next_hop hop;           /* src[NSRC - 1] */
static struct osn_sip_wire check_msg; /* large: not on the stack */
static char fwd[NFWD][MAXFWD];
static size_t nfwd;

static bool same_addr(const union node_addr *a, const union node_addr *b)
{
    return a->v4.sin_addr.s_addr == b->v4.sin_addr.s_addr && a->v4.sin_port == b->v4.sin_port;
}

/* What the node sends to `to` (hop: `to` is the next hop). */
static void sent(struct node *n, const union node_addr *to, bool hop, const char *p, size_t len)
{
    bool response = len >= 8 && memcmp(p, "SIP/2.0 ", 8) == 0;
    bool known = false;
    for (int i = 0; i < NSRC; i++)
        known |= same_addr(to, &src[i]);
    if (!response) {
        /* (in its own role: a proxy forwards faults in what it does not read, RFC 3261 16.3) */
        if (osn_sip_wire_parse_as(&check_msg, p, len, parse_role(n)) != OSN_SIP_WIRE_ACCEPT)
            abort(); /* the node printed a request it would itself refuse */
        /* A request goes to the next hop, or where it says (loose routing, RFC 3261 16.12:
         * its first Route value once the node's own is removed, else its Request-URI). */
        union node_addr named;
        struct osn_span where = check_msg.nroute > 0 ? check_msg.route[0].uri : check_msg.uri;
        if (!hop && (route_uri_addr(where, &named) != 0 || !same_addr(to, &named)))
            abort();
        known |= !hop;
        if (len < MAXFWD) {
            memcpy(fwd[nfwd % NFWD], p, len);
            fwd[nfwd % NFWD][len] = '\0';
            nfwd++;
        }
    }
    if (!known)
        abort(); /* a response (or a request to the next hop) addressed to nobody known */
    n->st.datagrams_out++;
}

void udp_send_to(struct node *n, const union node_addr *to, const char *p, size_t len)
{
    sent(n, to, n->nhops > 0 && same_addr(to, &hop.addr), p, len);
}

/* The next hop's answer to forwarded request `k` with `status`, into out; its length. */
static size_t answer(const char *req, int status, char *out, size_t cap)
{
    size_t k = (size_t)snprintf(out, cap, "SIP/2.0 %d Fuzz\r\n", status);
    const char *p = strstr(req, "\r\n");
    if (!p)
        return 0;
    for (p += 2; k < cap; p = strstr(p, "\r\n") + 2) {
        const char *e = strstr(p, "\r\n");
        if (!e || e == p)
            break;
        int n = (int)(e - p);
        bool keep = !strncmp(p, "Via:", 4) || !strncmp(p, "From:", 5) ||
                    !strncmp(p, "Call-ID:", 8) || !strncmp(p, "CSeq:", 5);
        if (keep)
            k += (size_t)snprintf(out + k, cap - k, "%.*s\r\n", n, p);
        else if (!strncmp(p, "To:", 3))
            k += (size_t)snprintf(out + k, cap - k, "%.*s%s\r\n", n, p,
                                  status > 100 && !memmem(p, (size_t)n, "tag=", 4) ? ";tag=fz"
                                                                                   : "");
    }
    if (k < cap)
        k += (size_t)snprintf(out + k, cap - k, "Content-Length: 0\r\n\r\n");
    return k < cap ? k : 0;
}

static void setup(struct node *n, struct osn_node_cfg *cfg, uint8_t choice)
{
    static const char *const kinds[] = {"none", "loss", "rate"};
    /* osn_node_cfg_default's values (it lives in run.c, with the sockets) */
    *cfg = (struct osn_node_cfg){
            .max_transactions = 2000, .buffer = 10000, .ctl_kind = OSN_CTL_KIND_NONE};
    osn_ctl_cfg_default(&cfg->ctl);
    osn_sip_cfg_default(&cfg->sip);
    n->cfg = cfg;
    n->sock = -1;
    snprintf(n->host, sizeof n->host, "127.0.0.1");
    n->port = 5060;
    n->listen = (union node_addr){.v4 = {.sin_family = AF_INET, .sin_port = htons(5060)}};
    for (int i = 0; i < NSRC; i++)
        src[i] = (union node_addr){.v4 = {.sin_family = AF_INET,
                                          .sin_port = htons((uint16_t)(5070 + i)),
                                          .sin_addr.s_addr = htonl(0x7f000001)}};
    hop = (struct next_hop){.addr = src[NSRC - 1], .fd = -1};
    n->hops = &hop;
    n->nhops = 1;
    switch (choice % 4) {
    case 0:
        cfg->element = OSN_NODE_UAS;
        break;
    case 1:
    case 2:
        cfg->element = OSN_NODE_EDGE;
        osn_ctl_kind_parse(kinds[(choice / 4) % 3], &cfg->ctl_kind);
        break;
    case 3: /* a core whose CPU is slow enough for messages to queue, and a server half */
        cfg->element = OSN_NODE_CORE;
        osn_ctl_kind_parse(kinds[(choice / 4) % 3], &cfg->ctl_kind);
        for (int k = 0; k < OSN_ELEM_NKINDS; k++)
            cfg->cost[k] = 0.002;
        cfg->buffer = 50;
        break;
    }
    struct osn_sip_cfg sc = cfg->sip;
    sc.timer_b_proceeding = true;
    sc.trying_delay = cfg->element == OSN_NODE_UAS ? -1 : 0;
    if (osn_sip_layer_init(&n->sip, &sc, 64) != 0 || osn_sip_wire_key_init() != 0)
        abort();
    if (cfg->element == OSN_NODE_CORE && osn_ctl_new_kind(&n->srv, cfg->ctl_kind, &cfg->ctl) != 0)
        abort();
    if (cfg->element == OSN_NODE_EDGE && cfg->ctl_kind != OSN_CTL_KIND_NONE &&
        osn_ctl_new_kind(&n->cli, cfg->ctl_kind, &cfg->ctl) != 0)
        abort();
    osn_elem_server_init(&n->server, cfg->cost, cfg->buffer, n->srv, 0);
}

/* The clock moves to `until`; every deadline due on the way fires (the loop's way: at n->now). */
static void run_to(struct node *n, double until)
{
    const struct tm_entry *top;
    while (!n->err && (top = timers_top(&n->timers)) && top->at <= until) {
        n->now = top->at > n->now ? top->at : n->now;
        node_fire_due(n);
    }
    n->now = until > n->now ? until : n->now;
    node_fire_due(n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct node node;
    static struct osn_node_cfg cfg;
    static char buf[OSN_SIP_WIRE_MAX_LEN + 1];
    struct node *n = &node;
    if (size < 1)
        return 0;
    memset(n, 0, sizeof *n);
    nfwd = 0;
    setup(n, &cfg, data[0]);
    size_t i = 1;
    while (i + 3 <= size && !n->err) {
        uint8_t op = data[i];
        size_t len = (size_t)data[i + 1] | (size_t)data[i + 2] << 8;
        i += 3;
        if (len > size - i)
            break;
        const uint8_t *p = data + i;
        i += len;
        switch (op % 4) {
        case 0:
        case 1:
            if (len <= OSN_SIP_WIRE_MAX_LEN) {
                memcpy(buf, p, len); /* the loop's buffers: the node may keep pointers briefly */
                node_datagram(n, buf, len, &src[(op / 4) % NSRC]);
            }
            break;
        case 2:
            run_to(n, n->now + (len >= 2 ? (p[0] | p[1] << 8) : 1) * 1e-3);
            break;
        case 3:
            if (len >= 3 && nfwd > 0) {
                const char *req = fwd[(nfwd - 1 - p[0] % (nfwd < NFWD ? nfwd : NFWD)) % NFWD];
                size_t k = answer(req, 100 + (p[1] << 8 | p[2]) % 600, buf, sizeof buf);
                if (k > 0)
                    node_datagram(n, buf, k, &hop.addr);
            }
            break;
        }
    }
    if (!n->err) {
        run_to(n, n->now + 300);
        if (n->live != 0 || n->kept.n != 0 || n->server.n != 0) {
            fprintf(stderr, "fuzz_node: %zu live transactions, %u kept, %ld queued after 300 s\n",
                    n->live, (unsigned)n->kept.n, n->server.n);
            for (struct ntx *x = n->all_ntx; x; x = x->next_all)
                if (x->live)
                    fprintf(stderr, "  %s %s transaction in state %d since %.3f s, %d timers\n",
                            x->t.role == OSN_SIP_SERVER ? "server" : "client",
                            osn_sip_method_name(x->t.req.method), x->t.state, x->t0,
                            x->armed[0] + x->armed[1] + x->armed[2]);
            abort();
        }
    }
    node_release(n);
    return 0;
}

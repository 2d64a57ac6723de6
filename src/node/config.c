/*
 * The node's configuration: defaults, the checks that name the key at fault, and the set-up of
 * a node from it (address, socket, transaction layer, controllers, the element's server).
 */
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "node_int.h"
#include "osn/err.h"

const char *osn_node_element_name(int element)
{
    static const char *const names[] = {[OSN_NODE_EDGE] = "edge",
                                        [OSN_NODE_CORE] = "core",
                                        [OSN_NODE_UAS] = "uas",
                                        [OSN_NODE_UAC] = "uac"};
    return element >= 0 && element < (int)(sizeof names / sizeof names[0]) ? names[element] : "?";
}

void osn_node_cfg_default(struct osn_node_cfg *cfg)
{
    *cfg = (struct osn_node_cfg){0};
    cfg->element = OSN_NODE_UAS;
    snprintf(cfg->listen, sizeof cfg->listen, "127.0.0.1:5060");
    cfg->stats_interval = 1;
    cfg->max_transactions = 0; /* derived from max_memory */
    cfg->max_memory = (size_t)1 << 30;
    cfg->record_route = true;
    cfg->down_time = 30;
    cfg->buffer = 10000;
    cfg->workers = 1;
    cfg->ctl_kind = OSN_CTL_KIND_NONE;
    cfg->tcp_max_connections = 1024;
    cfg->tcp_idle_timeout = 60;
    cfg->tcp_buffer = (size_t)256 << 10;
    cfg->link_buffer = (size_t)64 << 20;
    osn_ctl_cfg_default(&cfg->ctl);
    osn_sip_cfg_default(&cfg->sip);
}

/* What the key table cannot say: addresses that parse, and the relations between keys. Each
 * key's own range (a duration >= 0, tcp_buffer >= one message, ...) is stated once, in its
 * table (src/io/node_scenario.c, net_scenario.c), and the generic loader checks it first. */
int osn_node_check(const struct osn_node_cfg *cfg, const char **bad_key, char *msg, size_t msgsize)
{
    union node_addr la, sa, hop[OSN_ELEM_MAX_HOPS];
    int weight[OSN_ELEM_MAX_HOPS], nhops = 0, other = -1, tcp_hop = -1, own_tcp = -1;
    double delay[OSN_ELEM_MAX_HOPS], loss[OSN_ELEM_MAX_HOPS];
    char why[128], hmsg[160];
    const char *key = NULL, *hkey = NULL;
    bool proxy = cfg->element != OSN_NODE_UAS, listen_tcp, hop_tcp[OSN_ELEM_MAX_HOPS];
    bool listen_bad = addr_parse_tp(cfg->listen, &la, &listen_tcp, why, sizeof why) != 0;
    bool hops_bad = proxy && hops_parse(cfg, hop, hop_tcp, weight, delay, loss, &nhops, &hkey, hmsg,
                                        sizeof hmsg) != 0;
    for (int i = 0; !hops_bad && i < nhops && tcp_hop < 0; i++)
        if (hop_tcp[i])
            tcp_hop = i;
    for (int i = 0; !hops_bad && i < nhops && own_tcp < 0; i++)
        if (hop_tcp[i] && (delay[i] > 0 || loss[i] > 0))
            own_tcp = i;
    bool own_links = cfg->next_hop_delays[0] || cfg->next_hop_losses[0];
    for (int i = 0; !listen_bad && !hops_bad && i < nhops && other < 0; i++)
        if (hop[i].sa.sa_family != la.sa.sa_family)
            other = i;
    if (listen_bad) {
        key = "node.listen";
        snprintf(msg, msgsize, "'%s' is not HOST:PORT[;transport=udp|tcp] (%s)", cfg->listen, why);
    } else if (hops_bad) {
        key = hkey;
        snprintf(msg, msgsize, "%s: %s",
                 cfg->element == OSN_NODE_UAC ? "the load generator (uac)" : "a proxy", hmsg);
    } else if (cfg->element == OSN_NODE_UAC && listen_tcp) {
        /* It takes no requests: its next hop's responses come on the connection it opened. */
        key = "node.listen";
        snprintf(msg, msgsize,
                 "the load generator (uac) takes no connections: a next hop may say "
                 ";transport=tcp, not listen");
    } else if (other >= 0) {
        /* Our Via names the listening address, where the next hop sends its responses (RFC 3261
         * 18.2.2): a next hop of the other family could not reach it. */
        char text[64];
        addr_text(&hop[other], text, sizeof text);
        key = "node.next_hop";
        snprintf(msg, msgsize,
                 "'%s' is %s but node.listen '%s' is %s: the next hop answers to the listening "
                 "address (our Via), so both must be of one family",
                 text, hop[other].sa.sa_family == AF_INET6 ? "IPv6" : "IPv4", cfg->listen,
                 la.sa.sa_family == AF_INET6 ? "IPv6" : "IPv4");
    } else if (cfg->metrics[0] && addr_parse(cfg->metrics, &sa, why, sizeof why) != 0) {
        key = "node.metrics";
        snprintf(msg, msgsize, "'%s' is not HOST:PORT (%s)", cfg->metrics, why);
    } else if (cfg->element == OSN_NODE_UAC && cfg->workers != 1) {
        key = "node.workers";
        snprintf(msg, msgsize, "the load generator (uac) runs one loop: workers = 1");
    } else if (cfg->element == OSN_NODE_UAC && !(cfg->duration > 0)) {
        key = "node.duration";
        snprintf(msg, msgsize, "the load generator (uac) needs a run length > 0 s");
    } else if (cfg->element == OSN_NODE_UAC && cfg->warmup > 0 && !(cfg->warmup < cfg->duration)) {
        key = "node.warmup";
        snprintf(msg, msgsize,
                 "the load generator (uac) needs it less than its node.duration (%g s)",
                 cfg->duration);
    } else if (!(cfg->link_loss_down < 1) || !(cfg->link_loss_up < 1)) {
        /* The one range a key table cannot state yet: a double's upper bound (OSN_KEY_DOUBLE
         * has a lower one only); >= 0 is the table's. */
        key = !(cfg->link_loss_down < 1) ? "node.link_loss_down" : "node.link_loss_up";
        snprintf(msg, msgsize, "must be a probability in [0, 1)");
    } else if ((cfg->link_delay_down > 0 || cfg->link_delay_up > 0 || cfg->link_loss_down > 0 ||
                cfg->link_loss_up > 0) &&
               (tcp_hop >= 0 || listen_tcp)) {
        /* The link acts on datagrams (udp.c's sends); a TCP stream's bytes are not held. */
        key = cfg->link_delay_down > 0  ? "node.link_delay_down"
              : cfg->link_delay_up > 0  ? "node.link_delay_up"
              : cfg->link_loss_down > 0 ? "node.link_loss_down"
                                        : "node.link_loss_up";
        snprintf(msg, msgsize,
                 "link delays and losses are carried out over UDP only, not ;transport=tcp");
    } else if (own_links && !proxy) {
        key = cfg->next_hop_delays[0] ? "node.next_hop_delays" : "node.next_hop_losses";
        snprintf(msg, msgsize, "a uas has no next hops to have links to");
    } else if (own_links && (cfg->link_delay_down > 0 || cfg->link_loss_down > 0)) {
        /* Two delays for one datagram to a next hop: say which one rules rather than add them. */
        key = cfg->next_hop_delays[0] ? "node.next_hop_delays" : "node.next_hop_losses";
        snprintf(msg, msgsize,
                 "not beside node.link_delay_down or link_loss_down (those act on every next "
                 "hop's sends): give each next hop its link here, 0 where it has none");
    } else if (own_tcp >= 0) {
        key = cfg->next_hop_delays[0] ? "node.next_hop_delays" : "node.next_hop_losses";
        snprintf(msg, msgsize,
                 "next hop %d is ;transport=tcp: link delays and losses are carried out over "
                 "UDP only",
                 own_tcp + 1);
    }
    if (bad_key)
        *bad_key = key;
    return key ? OSN_EINVAL : 0;
}

int node_setup(struct node *n, const struct osn_node_cfg *cfg, char *msg, size_t msgsize)
{
    int err;
    n->cfg = cfg;
    n->link.on = cfg->link_delay_down > 0 || cfg->link_delay_up > 0 || cfg->link_loss_down > 0 ||
                 cfg->link_loss_up > 0;
    if (osn_node_check(cfg, NULL, msg, msgsize) != 0)
        return OSN_EINVAL;
    char why[128];
    n->lsock = -1;
    bool listen_tcp, hop_tcp[OSN_ELEM_MAX_HOPS] = {false}, any_tcp;
    addr_parse_tp(cfg->listen, &n->listen, &listen_tcp, why, sizeof why);
    any_tcp = listen_tcp;
    /* Several workers share the listening port: the first binds what listen says (port 0: the
     * kernel's choice), the others the port it got (workers.c). */
    if (n->w && n->worker > 0)
        addr_set_port(&n->listen, workers_port(n));
    int fd = n->w ? udp_open_shared(&n->listen) : udp_open(&n->listen);
    if (fd < 0) {
        snprintf(msg, msgsize, "node.listen %s: cannot bind: %s", cfg->listen, strerror(errno));
        return OSN_EIO;
    }
    /* The port bound, which port 0 leaves to the kernel: the Via sent-by must carry it. */
    if (udp_bound(fd, &n->listen, n->st.listen, sizeof n->st.listen) != 0) {
        close(fd);
        snprintf(msg, msgsize, "node.listen %s: getsockname: %s", cfg->listen, strerror(errno));
        return OSN_EIO;
    }
    n->sock = fd;
    n->via = n->listen;
    if (n->w && cfg->element != OSN_NODE_UAS) {
        /* A proxy's worker of several: its requests leave from a port of its own, which its Via
         * names, so that their responses come back to it (workers.c). */
        char text[64];
        n->lsock = fd;
        addr_set_port(&n->via, 0);
        n->sock = udp_open(&n->via);
        if (n->sock < 0 || udp_bound(n->sock, &n->via, text, sizeof text) != 0) {
            snprintf(msg, msgsize, "node.workers: cannot bind a worker's own port on %s: %s",
                     n->st.listen, strerror(errno));
            return OSN_EIO;
        }
    }
    n->port = addr_port(&n->listen);
    n->via_port = n->lsock >= 0 ? addr_port(&n->via) : 0;
    addr_host(&n->listen, n->host, sizeof n->host);
    if (cfg->element != OSN_NODE_UAS) {
        /* Each next hop gets its own connected socket (struct next_hop says why). */
        union node_addr addr[OSN_ELEM_MAX_HOPS];
        int weight[OSN_ELEM_MAX_HOPS], count = 0;
        double delay[OSN_ELEM_MAX_HOPS], loss[OSN_ELEM_MAX_HOPS];
        const char *key;
        hops_parse(cfg, addr, hop_tcp, weight, delay, loss, &count, &key, msg,
                   msgsize); /* checked above */
        n->hops = calloc((size_t)count, sizeof *n->hops);
        if (!n->hops)
            return OSN_ENOMEM;
        n->fan = (struct osn_elem_hops){.n = count, .down_time = cfg->down_time, .h = n->fan_hop};
        for (int i = 0; i < count; i++) {
            struct next_hop *h = &n->hops[i];
            h->fd = -1;
            h->said = -INFINITY;
            h->addr = addr[i];
            h->tcp = hop_tcp[i];
            h->delay = delay[i];
            h->loss = loss[i];
            n->link.own |= delay[i] > 0 || loss[i] > 0;
            any_tcp |= h->tcp;
            addr_text(&h->addr, h->text, sizeof h->text);
            n->fan.h[i].weight = weight[i];
            n->nhops++;
            if (!h->tcp && udp_connect(n, h) != 0) {
                snprintf(msg, msgsize, "node.next_hop %s: cannot open a socket to it: %s", h->text,
                         strerror(errno));
                return OSN_EIO;
            }
        }
        n->link.on |= n->link.own;
    }
    /* TCP beside UDP, on the same port: a listening socket when listen says tcp, connections to
     * the next hops that say so. */
    if (any_tcp && (err = tcp_open(n, listen_tcp, msg, msgsize)) != 0)
        return err;
    struct osn_sip_cfg sc = cfg->sip;
    sc.timer_b_proceeding = true;
    sc.trying_delay = cfg->element == OSN_NODE_UAS ? -1 : 0;
    err = osn_sip_layer_init(&n->sip, &sc, 1024);
    if (err) {
        snprintf(msg, msgsize, "the [sip] timers were refused");
        return err;
    }
    /* One hash key for the process: the workers' branches and loop hashes must agree (a loop
     * comes back to any worker), so only the first sets it. */
    if ((!n->w || n->worker == 0) && osn_sip_wire_key_init() != 0) {
        snprintf(msg, msgsize, "cannot read random bytes for the hash key");
        return OSN_EIO;
    }
    n->branch_salt = osn_sip_wire_hash(&n->listen, addr_len(&n->listen)) ^ (uint64_t)getpid();
    /* The branches' unique halves apart per worker: salt ^ seq * odd is one-to-one in seq. */
    n->branch_seq = (uint64_t)n->worker << 48;
    /* the generator's is stream 0; a worker of several takes 1 + its index */
    osn_rng_stream(&n->ring_rng, cfg->src.seed, 1 + (unsigned long)n->worker);
    /* the link's losses: a stream of their own per worker, past any worker's ring stream */
    osn_rng_stream(&n->link.rng, cfg->src.seed, LINK_STREAM + (unsigned long)n->worker);
    osn_rng_stream(&n->hold_rng, cfg->src.seed, HOLD_STREAM + (unsigned long)n->worker);
    /* The server half at the core, the client half at the edge (toward the core): the
     * simulator's wiring of a collapse chain. [control] at = edge moves the server half to the
     * edge and the client halves to the generator; both keeps the core's too (the edge is then
     * its sources' server and the core's client). */
    bool srv = (cfg->element == OSN_NODE_CORE && cfg->ctl_at != OSN_NODE_CTL_AT_EDGE) ||
               (cfg->element == OSN_NODE_EDGE && cfg->ctl_at != OSN_NODE_CTL_AT_CORE);
    bool cli = (cfg->element == OSN_NODE_EDGE && cfg->ctl_at != OSN_NODE_CTL_AT_EDGE) ||
               (cfg->element == OSN_NODE_UAC && cfg->ctl_at != OSN_NODE_CTL_AT_CORE);
    if (srv) {
        err = osn_ctl_new_kind(&n->srv, cfg->ctl_kind, &cfg->ctl);
        if (err) {
            snprintf(msg, msgsize, "control.kind '%s' rejected its configuration",
                     osn_ctl_kind_name(cfg->ctl_kind));
            return err;
        }
    }
    if (cli && cfg->ctl_kind != OSN_CTL_KIND_NONE) {
        /* RFC 7339 5.10: one client half per next hop, each fed by its own server's responses
         * (with one, n->cli as always; with several, fan.h[i].cli and n->cli none). */
        for (size_t i = 0; i < (n->nhops > 1 ? n->nhops : 1); i++) {
            struct osn_ctl_cfg cc = cfg->ctl;
            cc.seed += i; /* each server's loss draws apart */
            err = osn_ctl_new_kind(n->nhops > 1 ? &n->fan.h[i].cli : &n->cli, cfg->ctl_kind, &cc);
            if (err) {
                snprintf(msg, msgsize, "control.kind '%s' rejected its configuration",
                         osn_ctl_kind_name(cfg->ctl_kind));
                return err;
            }
        }
    }
    osn_elem_server_init(&n->server, cfg->cost, cfg->buffer, n->srv, 0);
    return cfg->element == OSN_NODE_UAC ? gen_setup(n, msg, msgsize) : 0;
}

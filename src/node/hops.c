/*
 * A proxy's several next hops, from its configuration: `next_hop = A, B, C` (each HOST:PORT as
 * the listening address writes it, IPv4 or an [IPv6] reference, ";transport=tcp" after it for a
 * next hop over TCP) and `next_hop_weights = 2, 1, 1`
 * (whole numbers 1..1000, as many as next hops; absent: all 1), and links of their own to
 * them, `next_hop_delays = 0.002, 0.007` and `next_hop_losses = 0, 0.01` (link.c carries them
 * out). Which server a request goes to
 * is the element's decision (src/elem/hops.c); this file reads the lists, tells which next hop
 * an address is, and copies the element's per-server counts into the node's stats.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "node_int.h"
#include "osn/err.h"

/* The next item of comma-separated *p into item[] (spaces trimmed); false at the end. An item
 * longer than item[] sets *too_long. */
static bool next_item(const char **p, char *item, size_t size, bool *too_long)
{
    const char *s = *p;
    if (!*s)
        return false;
    const char *comma = strchr(s, ',');
    const char *end = comma ? comma : s + strlen(s);
    *p = comma ? comma + 1 : end;
    while (s < end && isspace((unsigned char)*s))
        s++;
    while (end > s && isspace((unsigned char)end[-1]))
        end--;
    *too_long = (size_t)(end - s) >= size;
    size_t k = *too_long ? size - 1 : (size_t)(end - s);
    memcpy(item, s, k);
    item[k] = '\0';
    return true;
}

/* One number a next hop from list `text` into value[0..n), each in [lo, hi) and, when `whole`,
 * a whole number; `what` says what one is ("a weight (a whole number 1..1000)"). */
static int parse_list(const char *text, double *value, int n, double lo, double hi, bool whole,
                      const char *what, char *msg, size_t msgsize)
{
    char item[64];
    bool too_long;
    int k = 0;
    while (next_item(&text, item, sizeof item, &too_long)) {
        char *end;
        errno = 0;
        double v = strtod(item, &end);
        if (k == n) {
            snprintf(msg, msgsize, "more values than the %d next hop%s: one each", n,
                     n > 1 ? "s" : "");
            return OSN_EINVAL;
        }
        if (too_long || errno || end == item || *end || !(v >= lo && v < hi) ||
            (whole && v != floor(v))) {
            snprintf(msg, msgsize, "'%s' is not %s", item, what);
            return OSN_EINVAL;
        }
        value[k++] = v;
    }
    if (k != n) {
        snprintf(msg, msgsize, "%d value%s for %d next hops: one each", k, k == 1 ? "" : "s", n);
        return OSN_EINVAL;
    }
    return 0;
}

int hops_parse(const struct osn_node_cfg *cfg, union node_addr *addr, bool *tcp, int *weight,
               double *delay, double *loss, int *count, const char **key, char *msg, size_t msgsize)
{
    char item[64], why[128];
    bool too_long;
    int n = 0;
    const char *p = cfg->next_hop;
    *key = "node.next_hop";
    while (next_item(&p, item, sizeof item, &too_long)) {
        if (n == OSN_ELEM_MAX_HOPS) {
            snprintf(msg, msgsize, "at most %d next hops", OSN_ELEM_MAX_HOPS);
            return OSN_EINVAL;
        }
        if (too_long || addr_parse_tp(item, &addr[n], &tcp[n], why, sizeof why) != 0) {
            snprintf(msg, msgsize, "'%s' is not HOST:PORT[;transport=udp|tcp] (%s)", item,
                     too_long ? "too long" : why);
            return OSN_EINVAL;
        }
        if (addr_port(&addr[n]) == 0) {
            snprintf(msg, msgsize, "'%s': port 0 is no next hop", item);
            return OSN_EINVAL;
        }
        for (int i = 0; i < n; i++)
            if (addr_eq(&addr[i], &addr[n])) {
                snprintf(msg, msgsize, "'%s' is listed twice", item);
                return OSN_EINVAL;
            }
        weight[n] = 1;
        delay[n] = loss[n] = 0;
        n++;
    }
    if (n == 0) {
        snprintf(msg, msgsize, "needs HOST:PORT[, HOST:PORT ...], not '%s'", cfg->next_hop);
        return OSN_EINVAL;
    }
    *count = n;
    if (cfg->next_hop_weights[0]) {
        *key = "node.next_hop_weights";
        double w[OSN_ELEM_MAX_HOPS];
        if (parse_list(cfg->next_hop_weights, w, n, 1, 1001, true,
                       "a weight (a whole number 1..1000)", msg, msgsize) != 0)
            return OSN_EINVAL;
        for (int i = 0; i < n; i++)
            weight[i] = (int)w[i];
    }
    if (cfg->next_hop_delays[0]) {
        *key = "node.next_hop_delays";
        if (parse_list(cfg->next_hop_delays, delay, n, 0, INFINITY, false, "a delay (s, >= 0)", msg,
                       msgsize) != 0)
            return OSN_EINVAL;
    }
    if (cfg->next_hop_losses[0]) {
        *key = "node.next_hop_losses";
        if (parse_list(cfg->next_hop_losses, loss, n, 0, 1, false, "a probability in [0, 1)", msg,
                       msgsize) != 0)
            return OSN_EINVAL;
    }
    *key = NULL;
    return 0;
}

int hops_index(const struct node *n, const union node_addr *a)
{
    for (size_t i = 0; i < n->nhops; i++)
        if (addr_eq(&n->hops[i].addr, a))
            return (int)i;
    return NTX_NO_HOP;
}

void hops_stats(struct node *n)
{
    n->st.nhops = n->nhops > 1 ? n->fan.n : 0;
    for (int i = 0; i < n->st.nhops; i++) {
        const struct osn_elem_hop *h = &n->fan.h[i];
        struct osn_node_hop_stats *o = &n->st.hops[i];
        snprintf(o->server, sizeof o->server, "%s", n->hops[i].text);
        o->weight = h->weight;
        o->offered = h->offered;
        o->sent = h->sent;
        o->invites = h->invites;
        o->shed = h->shed;
        o->timeouts = h->timeouts;
        o->got_503 = h->got_503;
        o->downs = h->downs;
        o->failovers = h->failovers;
        o->down = !osn_elem_hop_up(&n->fan, i, n->now);
    }
}

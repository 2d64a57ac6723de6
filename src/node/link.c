/*
 * The scenario's links, carried out by the node: their losses (node.link_loss_down,
 * link_loss_up), each datagram sent on the link lost with its probability before anything else,
 * and their delays (node.link_delay_down, link_delay_up):
 * the simulator delays each message on a link by the link's one-way delay, both ways, so a node
 * that stands for one end of the link holds what it sends for that long. A datagram to a next
 * hop takes the link downstream, any other (a response upstream, a request a Route sends
 * elsewhere) the link upstream; the node at the other end holds what it sends back, so each
 * direction of a link is delayed once.
 *
 * Links of their own (node.next_hop_delays, next_hop_losses: a written topology's [link A-B]
 * that differ from one another) are carried both ways by their upstream end, the node whose
 * next hop is the other end: the downstream node cannot tell its upstream peers apart (their
 * ports are chosen when they start, after it), but a node knows its next hops' addresses, and
 * what a next hop sends it comes from that address (its responses from the port our Via names
 * it, udp.c). So what goes to next hop k is held on a line of its own, and what comes from it
 * (link_arrive, before the parse) on another, then handed in when due (node_datagram): each
 * direction delayed once, by this node. Each such next hop has its two lines, FIFOs as the rest.
 *
 * This is a driver matter, below every decision of the element: udp_send_to asks link_hold
 * first, and a datagram held here goes to udp_send_to again when it is due (link_due, from the
 * node's timers), which then sends it. Each direction is a FIFO: its delay is fixed and the
 * node's clock only moves forward, so datagrams leave in the order they came, and only the head
 * of each line needs an entry in the timer heap (at most one entry a line, whatever the rate).
 *
 * Memory is bounded: the lines hold at most node.link_buffer bytes (records included); a
 * datagram that does not fit is lost and counted in link_dropped, as a full queue of a real link
 * drops it. This is not a substitute for `tc netem` in general: it adds no jitter and no
 * reordering, and a datagram leaves with the turn of the loop that follows its deadline (the loop
 * wakes for it as for any timer), so it may leave later under load, never sooner.
 */
#include <stdlib.h>
#include <string.h>

#include "node_int.h"
#include "osn/err.h"

_Static_assert(LINK_LINES <= 32, "link.due_in is a mask of 32 lines");

static void arm(struct node *n, int line)
{
    struct link_dgram *g = n->link.line[line].head;
    if (!g || n->link.line[line].armed)
        return;
    if (timers_push(&n->timers, g->due, TM_LINK, NULL, (uint32_t)line) != 0) {
        n->err = OSN_ENOMEM;
        return;
    }
    n->link.line[line].armed = true;
}

/* Datagram p[0..len) (to or from `peer`) on line `line` of delay d and loss `loss`: lost, held
 * (true), or neither (false: no delay, it goes or is handled now). */
static bool hold(struct node *n, int line, const union node_addr *peer, const char *p, size_t len,
                 double d, double loss)
{
    if (loss > 0 && osn_rng_u01_open(&n->link.rng) < loss) {
        n->st.link_lost++; /* lost on the way, as the simulator loses a message on a link */
        return true;
    }
    if (!(d > 0))
        return false;
    size_t size = sizeof(struct link_dgram) + len;
    struct link_dgram *g = NULL;
    if (n->link.held + size <= n->cfg->link_buffer)
        g = malloc(size);
    if (!g) { /* the line is full (or memory is): the datagram is lost on the link */
        n->st.link_dropped++;
        return true;
    }
    g->next = NULL;
    g->due = n->now + d;
    g->to = *peer;
    g->len = len;
    memcpy(g->bytes, p, len);
    if (n->link.line[line].tail)
        n->link.line[line].tail->next = g;
    else
        n->link.line[line].head = g;
    n->link.line[line].tail = g;
    n->link.held += size;
    arm(n, line);
    return true;
}

/* Whether next hop k has a link of its own (next_hop_delays, next_hop_losses). */
static bool own(const struct node *n, int k)
{
    return k != NTX_NO_HOP && (n->hops[k].delay > 0 || n->hops[k].loss > 0);
}

bool link_hold(struct node *n, const union node_addr *to, const char *p, size_t len)
{
    int k = hops_index(n, to);
    if (own(n, k))
        return hold(n, LINK_OWN + 2 * k, to, p, len, n->hops[k].delay, n->hops[k].loss);
    if (k != NTX_NO_HOP)
        return hold(n, LINK_DOWN, to, p, len, n->cfg->link_delay_down, n->cfg->link_loss_down);
    return hold(n, LINK_UP, to, p, len, n->cfg->link_delay_up, n->cfg->link_loss_up);
}

bool link_arrive(struct node *n, const union node_addr *from, const char *p, size_t len)
{
    int k = hops_index(n, from);
    return own(n, k) &&
           hold(n, LINK_OWN + 2 * k + 1, from, p, len, n->hops[k].delay, n->hops[k].loss);
}

/* Takes the head of line `line` off it. */
static struct link_dgram *unlink_head(struct node *n, int line)
{
    struct link_dgram *g = n->link.line[line].head;
    n->link.line[line].head = g->next;
    if (!g->next)
        n->link.line[line].tail = NULL;
    n->link.held -= sizeof *g + g->len;
    return g;
}

void link_due(struct node *n, int line)
{
    n->link.line[line].armed = false;
    /* An arrival's line (LINK_OWN + 2 k + 1) waits for link_hand_in: a datagram handed in is
     * read now, as the loop reads one from the socket after every timer due now has fired
     * (run.c), so that a service that ended before now ends first at its own time; handed in
     * here, before a later-due service end in the heap, it would stretch that service to now
     * (node_service_done) and the server's busy time with it. */
    if (line >= LINK_OWN && (line - LINK_OWN) % 2 == 1) {
        n->link.due_in |= 1u << line;
        return;
    }
    n->link.leaving = true;
    struct link_dgram *g;
    while ((g = n->link.line[line].head) && g->due <= n->now && !n->err) {
        g = unlink_head(n, line);
        udp_send_to(n, &g->to, g->bytes, g->len);
        free(g);
    }
    n->link.leaving = false;
    arm(n, line);
}

bool link_hand_in(struct node *n)
{
    uint32_t lines = n->link.due_in;
    bool any = false;
    n->link.due_in = 0;
    while (lines && !n->err) {
        int first = -1; /* the line whose head is due first */
        for (uint32_t l = lines; l; l &= l - 1) {
            int line = __builtin_ctz(l);
            const struct link_dgram *g = n->link.line[line].head;
            if (!g || g->due > n->now)
                lines &= ~(1u << line);
            else if (first < 0 || g->due < n->link.line[first].head->due)
                first = line;
        }
        if (first < 0)
            break;
        struct link_dgram *g = unlink_head(n, first);
        node_datagram(n, g->bytes, g->len, &g->to);
        free(g);
        any = true;
    }
    for (int line = LINK_OWN + 1; line < LINK_LINES; line += 2)
        arm(n, line);
    return any;
}

void link_release(struct node *n)
{
    for (int line = 0; line < LINK_LINES; line++) {
        for (struct link_dgram *g = n->link.line[line].head, *next; g; g = next) {
            next = g->next;
            free(g);
        }
    }
    n->link = (struct link){.on = n->link.on, .own = n->link.own, .rng = n->link.rng};
}

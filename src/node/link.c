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
 * This is a driver matter, below every decision of the element: udp_send_to asks link_hold
 * first, and a datagram held here goes to udp_send_to again when it is due (link_due, from the
 * node's timers), which then sends it. Each direction is a FIFO: its delay is fixed and the
 * node's clock only moves forward, so datagrams leave in the order they came, and only the head
 * of each line needs an entry in the timer heap (at most two entries, whatever the rate).
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

static void arm(struct node *n, int dir)
{
    struct link_dgram *g = n->link.line[dir].head;
    if (!g || n->link.line[dir].armed)
        return;
    if (timers_push(&n->timers, g->due, TM_LINK, NULL, (uint32_t)dir) != 0) {
        n->err = OSN_ENOMEM;
        return;
    }
    n->link.line[dir].armed = true;
}

bool link_hold(struct node *n, const union node_addr *to, const char *p, size_t len)
{
    int dir = hops_index(n, to) != NTX_NO_HOP ? LINK_DOWN : LINK_UP;
    double loss = dir == LINK_DOWN ? n->cfg->link_loss_down : n->cfg->link_loss_up;
    if (loss > 0 && osn_rng_u01_open(&n->link.rng) < loss) {
        n->st.link_lost++; /* lost on the way, as the simulator loses a message on a link */
        return true;
    }
    double d = dir == LINK_DOWN ? n->cfg->link_delay_down : n->cfg->link_delay_up;
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
    g->to = *to;
    g->len = len;
    memcpy(g->bytes, p, len);
    if (n->link.line[dir].tail)
        n->link.line[dir].tail->next = g;
    else
        n->link.line[dir].head = g;
    n->link.line[dir].tail = g;
    n->link.held += size;
    arm(n, dir);
    return true;
}

void link_due(struct node *n, int dir)
{
    n->link.line[dir].armed = false;
    n->link.leaving = true;
    struct link_dgram *g;
    while ((g = n->link.line[dir].head) && g->due <= n->now) {
        n->link.line[dir].head = g->next;
        if (!g->next)
            n->link.line[dir].tail = NULL;
        n->link.held -= sizeof *g + g->len;
        udp_send_to(n, &g->to, g->bytes, g->len);
        free(g);
    }
    n->link.leaving = false;
    arm(n, dir);
}

void link_release(struct node *n)
{
    for (int dir = 0; dir < 2; dir++) {
        for (struct link_dgram *g = n->link.line[dir].head, *next; g; g = next) {
            next = g->next;
            free(g);
        }
    }
    n->link = (struct link){.on = n->link.on, .rng = n->link.rng};
}

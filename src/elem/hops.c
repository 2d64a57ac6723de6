/*
 * Several next hops, each with the overload state of its own server (osn/elem.h, "several next
 * hops"): which server a new request goes to, and what a server's failure does to the choice.
 *
 * The offer is smooth weighted round-robin: each up server gains its weight in credit, the one
 * with the most credit is offered the request and pays the total. Over any sum(weights)
 * consecutive offers each server is offered exactly its weight, interleaved (2, 1, 1 gives
 * A B C A, not A A B C). The offered server's client half then admits or throttles; what it
 * throttles overflows to the others without touching the credits. Paying the credit on the
 * offer, not on the admission, is what makes a throttling server's share follow its feedback:
 * were the credit paid only when a server admits, a server shedding p of its offers would be
 * offered until it had admitted its weight's share, and its reduction would do nothing.
 */
#include "osn/elem.h"

static enum osn_ctl_msg ctl_kind(int method)
{
    return method == OSN_SIP_INVITE ? OSN_CTL_MSG_INVITE : OSN_CTL_MSG_BYE;
}

/* INVITEs and the other requests take turns apart: one round-robin over both would send every
 * INVITE to one server when the two kinds alternate (INVITE, BYE, INVITE, ... with 2, 1). */
static int *credit(struct osn_elem_hop *s, int method)
{
    return method == OSN_SIP_INVITE ? &s->credit : &s->credit_other;
}

/* Whether server i may be offered a request at `now`: one of the proxy's next hops (a weight
 * of 0 marks a server the driver lists but the proxy does not send to: a simulated tree's proxy
 * that chooses among some of its network's cores) and up. */
static bool usable(const struct osn_elem_hops *h, int i, double now)
{
    return h->h[i].weight > 0 && osn_elem_hop_up(h, i, now);
}

static bool admits(struct osn_elem_hop *s, double now, int method)
{
    return !s->cli || osn_ctl_client_admit(s->cli, now, ctl_kind(method)) != OSN_CTL_SHED_503;
}

int osn_elem_hops_choose(struct osn_elem_hops *h, double now, int method, int except,
                         unsigned *retry_after)
{
    int total = 0, best = -1;
    uint64_t tried = 0; /* n <= OSN_ELEM_HOPS_MAX = 64 */
    /* When none is up, all are: a down mark steers requests away from a server while another
     * can take them; it never refuses them by itself (one next hop behaves as without marks). */
    bool any = except >= 0; /* a failover goes to a server that is up, or nowhere */
    for (int i = 0; i < h->n; i++)
        any |= i != except && usable(h, i, now);
    *retry_after = 0;
    for (int i = 0; i < h->n; i++) {
        struct osn_elem_hop *s = &h->h[i];
        if (i == except || s->weight == 0 || (any && !osn_elem_hop_up(h, i, now)))
            continue;
        *credit(s, method) += s->weight;
        total += s->weight;
        if (best < 0 || *credit(s, method) > *credit(&h->h[best], method))
            best = i;
    }
    if (best < 0) /* no other server (failover with one next hop) */
        return -1;
    *credit(&h->h[best], method) -= total;
    h->h[best].offered++;
    /* The offered one first, then the others by credit, highest first (ties: lowest index). */
    for (int next = best; next >= 0;) {
        struct osn_elem_hop *s = &h->h[next];
        if (admits(s, now, method)) {
            s->sent++;
            s->invites += method == OSN_SIP_INVITE;
            return next;
        }
        s->shed++;
        tried |= (uint64_t)1 << next;
        next = -1;
        for (int i = 0; i < h->n; i++)
            if (i != except && !(tried >> i & 1) && h->h[i].weight > 0 &&
                (!any || osn_elem_hop_up(h, i, now)) &&
                (next < 0 || *credit(&h->h[i], method) > *credit(&h->h[next], method)))
                next = i;
    }
    return -1;
}

int osn_elem_hops_stateless(const struct osn_elem_hops *h, double now, uint64_t key)
{
    int total = 0;
    bool any = false;
    for (int i = 0; i < h->n; i++)
        any |= usable(h, i, now);
    for (int i = 0; i < h->n; i++)
        if (!any || osn_elem_hop_up(h, i, now))
            total += h->h[i].weight;
    long r = total > 0 ? (long)(key % (uint64_t)total) : 0;
    for (int i = 0; i < h->n; i++) {
        if (h->h[i].weight == 0 || (any && !osn_elem_hop_up(h, i, now)))
            continue;
        r -= h->h[i].weight;
        if (r < 0)
            return i;
    }
    return 0;
}

int osn_elem_hops_ack(const struct osn_elem_hops *h, double now, int named, uint64_t key)
{
    /* RFC 3261 16.12: the route set names the server, down or not (the dialog is its). */
    if (named >= 0 && named < h->n)
        return named;
    return osn_elem_hops_stateless(h, now, key);
}

void osn_elem_hops_on_feedback(struct osn_elem_hops *h, int i, double now,
                               const struct osn_sip_oc *oc)
{
    if (i >= 0 && i < h->n)
        osn_proxy_on_feedback(h->h[i].cli, now, oc);
}

bool osn_elem_hops_on_event(struct osn_elem_hops *h, int i, double now, int tu, int status,
                            int retry_after)
{
    struct osn_elem_hop *s = &h->h[i];
    double until;
    if (tu == OSN_SIP_TU_TIMEOUT || tu == OSN_SIP_TU_TRANSPORT_ERROR) {
        s->timeouts++;
        until = now + h->down_time;
    } else if (tu == OSN_SIP_TU_RESPONSE && status == 503) {
        s->got_503++;
        if (retry_after <= 0) /* RFC 3261 21.5.4: no Retry-After, no statement of when */
            return false;
        until = now + retry_after;
    } else {
        return false;
    }
    if (until > s->down_until) {
        if (osn_elem_hop_up(h, i, now))
            s->downs++;
        s->down_until = until;
    }
    return true;
}

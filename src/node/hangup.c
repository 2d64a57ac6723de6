/*
 * The uas's hang-up (source.callee_hangs_up, issue 33): the callee ends a fraction of the calls
 * it answers. The decisions are the element's (src/elem/uas.c): which calls (a function of the
 * Call-ID's text, osn_uas_call_key and osn_uas_callee_hangs_up, the caller's question too), when
 * (the hold's end, not before the ACK: osn_uas_hangup_fire). What this file adds is bytes and a
 * timer:
 *   - when the uas sends the 2xx of a new INVITE of such a call, the BYE is printed at once from
 *     the INVITE, which the 2xx's transaction may let go later (ntx_trim): the dialog the UAS
 *     keeps (RFC 3261 12.1.1) is in it, Request-URI the caller's Contact (the remote target),
 *     Route the INVITE's Record-Route values in order (the UAS's route set), From the INVITE's
 *     To with our tag, To the INVITE's From (the caller's tag), the Call-ID, CSeq 1 (the UAS's
 *     local sequence number starts empty: any first value, 12.1.1) and a Via of ours;
 *   - it goes to the first Route value's address (loose routing, 12.2.1.1 and 16.12: our
 *     proxies and Kamailio Record-Route with ;lr), else to the Contact's;
 *   - a timer of the node's heap (TM_HANGUP) fires at the hold's end, the hold drawn from the
 *     uas's own stream (hold_rng) of the law of source.hold. So on the wire the hold does not
 *     reach the uas from the caller: a caller of ours (the generator) asks the same question of
 *     the Call-ID and arms no hold for the calls the callee ends (osn_uac_call_keyed), a
 *     foreign caller (SIPp, baresip) simply waits for the BYE.
 * The same object, without a timer, is the watch of a 2xx not yet acknowledged (RFC 3261
 * 13.3.1.4; with RFC 6026's 2xx timer, which the element runs): every other call the uas answers
 * has its BYE printed at the 2xx too, since the INVITE may be let go before the 2xx timer ends.
 * Its ACK frees it (usually within a round trip, so the watches alive are the calls between
 * their 2xx and their ACK); when the timer ends without the ACK, the element's BYE_UNACKED sends
 * its BYE, else it goes (hangup_unacked). Its bytes are allocated to their length, since every
 * answered call has one for a moment.
 * A hang-up is an object of a pool that stays until the node ends (the heap's lazy entries may
 * point at it: its generation tells a stale one); the calls it waits on are found by Call-ID
 * hash for their ACK. A call the caller hung up first (its BYE answered) is no longer known to
 * the uas when the timer fires: nothing is sent. UDP only: the BYE goes over UDP to the first
 * hop (a route set naming TCP is not followed; counted as a send error).
 */
#include <stdlib.h>
#include <string.h>

#include "../base/text.h"
#include "node_int.h"
#include "osn/err.h"

/* A BYE whose dialog makes it longer cannot be sent: counted as a send error. */
#define HANGUP_BYE_MAX 2048

struct hangup {
    uint64_t call_id; /* its Call-ID hash (struct osn_sip_msg's) */
    double t2xx;      /* when the 2xx went (s) */
    uint32_t gen;     /* the timer's generation: a fired or stale entry differs */
    bool acked;       /* the 2xx had its ACK */
    bool live;
    bool watch;         /* no hold: a 2xx's watch, not a callee's hang-up */
    union node_addr to; /* where the BYE goes: its first Route, or the caller's Contact */
    struct hangup *next_free, *next_all;
    uint16_t len;
    char *bye; /* len bytes */
};

static struct hangup *hangup_new(struct node *n)
{
    struct hangup *h = n->hangups.free;
    if (h) {
        n->hangups.free = h->next_free;
    } else {
        h = calloc(1, sizeof *h);
        if (!h)
            return NULL;
        h->next_all = n->hangups.all;
        n->hangups.all = h;
    }
    h->live = true;
    h->acked = false;
    h->len = 0;
    n->hangups.bytes += sizeof *h;
    return h;
}

static void hangup_free(struct node *n, struct hangup *h)
{
    for (struct map_slot *e = NULL; (e = map_find(&n->hangups.by_call, h->call_id, e));)
        if (e->val == (uint64_t)(uintptr_t)h) {
            map_del(&n->hangups.by_call, e);
            break;
        }
    h->live = false;
    n->hangups.bytes -= sizeof *h + h->len;
    free(h->bye);
    h->bye = NULL;
    h->len = 0;
    h->gen++; /* its heap entry, if any, is stale from now on */
    h->next_free = n->hangups.free;
    n->hangups.free = h;
}

static void put_span(struct osn_text *w, struct osn_span s)
{
    osn_text_put(w, s.p, s.n);
}

/* The callee's BYE of the dialog INVITE inv made, our To tag `tag` (see the head). */
static int print_bye(const struct node *n, const struct osn_sip_wire *inv, const char *tag,
                     uint64_t branch, char *out, size_t cap)
{
    struct osn_text w = osn_text_at(out, cap);
    struct osn_span target = inv->ncontact > 0 ? inv->contact[0].uri : inv->from.uri;
    if (inv->from_hdr < 0 || inv->to_hdr < 0 || !target.n)
        return OSN_EINVAL;
    osn_text_puts(&w, "BYE ");
    put_span(&w, target);
    osn_text_puts(&w, " SIP/2.0\r\nVia: SIP/2.0/UDP ");
    osn_text_puts(&w, n->host);
    osn_text_puts(&w, ":");
    osn_text_dec(&w, node_via_port(n), 1);
    osn_text_puts(&w, ";branch=z9hG4bK");
    osn_text_hex(&w, branch, 16);
    osn_text_puts(&w, "\r\nMax-Forwards: 70\r\n");
    for (int i = 0; i < inv->nrecord_route; i++) { /* 12.1.1: the route set, in order */
        osn_text_puts(&w, "Route: ");
        put_span(&w, inv->record_route[i].value);
        osn_text_puts(&w, "\r\n");
    }
    osn_text_puts(&w, "From: ");
    put_span(&w, inv->to.value);
    osn_text_puts(&w, ";tag=");
    osn_text_puts(&w, tag);
    osn_text_puts(&w, "\r\nTo: ");
    put_span(&w, inv->from.value);
    osn_text_puts(&w, "\r\nCall-ID: ");
    put_span(&w, inv->call_id);
    osn_text_puts(&w, "\r\nCSeq: 1 BYE\r\nContent-Length: 0\r\n\r\n");
    int k = osn_text_len(&w, out);
    return k < 0 ? OSN_ETOOBIG : k;
}

void hangup_start(struct node *n, const struct ntx *x, const char *tag)
{
    const struct osn_sip_wire *inv = x->req;
    const struct osn_node_source *src = &n->cfg->src;
    /* a re-INVITE (To tag) changes nothing: its call was asked when it was set up */
    if (!inv || inv->to.tag.n)
        return;
    bool ends = osn_uas_callee_hangs_up(src->callee_hangs_up,
                                        osn_uas_call_key(inv->call_id.p, inv->call_id.n));
    if (!ends && !n->cfg->sip.rfc6026) /* no 2xx timer: no end of it to watch for */
        return;
    char bye[HANGUP_BYE_MAX];
    uint64_t branch = n->branch_salt ^ (++n->branch_seq * 0x9e3779b97f4a7c15ULL);
    int len = print_bye(n, inv, tag, branch, bye, sizeof bye);
    struct osn_span first = inv->nrecord_route > 0 ? inv->record_route[0].uri
                            : inv->ncontact > 0    ? inv->contact[0].uri
                                                   : inv->from.uri;
    union node_addr to;
    if (len <= 0 || route_uri_addr(first, &to) != 0) {
        /* a dialog we cannot end: the caller's BYE ends it. Counted when a BYE is due: now for
         * a callee's, at the 2xx timer's end for a watch (hangup_unacked), not at every call */
        if (ends)
            n->st.send_errors++;
        return;
    }
    struct hangup *h = hangup_new(n);
    if (!h || !(h->bye = malloc((size_t)len))) {
        if (h)
            hangup_free(n, h);
        n->err = OSN_ENOMEM;
        return;
    }
    memcpy(h->bye, bye, (size_t)len);
    h->len = (uint16_t)len;
    n->hangups.bytes += h->len;
    h->to = to;
    h->call_id = x->t.req.call_id;
    h->t2xx = n->now;
    h->watch = !ends;
    if (map_add(&n->hangups.by_call, h->call_id, (uint64_t)(uintptr_t)h) != 0) {
        n->err = OSN_ENOMEM;
        return;
    }
    if (ends) {
        double hold = osn_uas_hold(src->hold, osn_rng_u01_open(&n->hold_rng));
        if (timers_push(&n->timers, n->now + hold, TM_HANGUP, h, h->gen) != 0)
            n->err = OSN_ENOMEM;
    }
}

/* Call call_id's watch, or NULL. */
static struct hangup *watch_of(const struct node *n, uint64_t call_id)
{
    for (struct map_slot *e = NULL; (e = map_find(&n->hangups.by_call, call_id, e));) {
        struct hangup *h = (struct hangup *)(uintptr_t)e->val;
        if (h->watch)
            return h;
    }
    return NULL;
}

void hangup_acked(struct node *n, uint64_t call_id)
{
    /* one pass marks the call's hang-ups acknowledged and finds its watch, which has nothing
     * left to watch; another pass only if a second watch shares the Call-ID's hash */
    struct hangup *watch;
    do {
        watch = NULL;
        for (struct map_slot *e = NULL; (e = map_find(&n->hangups.by_call, call_id, e));) {
            struct hangup *h = (struct hangup *)(uintptr_t)e->val;
            h->acked = true;
            if (h->watch)
                watch = h;
        }
        if (watch)
            hangup_free(n, watch);
    } while (watch);
}

bool hangup_due(const struct node *n, uint64_t call_id)
{
    for (struct map_slot *e = NULL; (e = map_find(&n->hangups.by_call, call_id, e));)
        if (!((struct hangup *)(uintptr_t)e->val)->watch)
            return true;
    return false;
}

/* Sends h's BYE on a client transaction of its own; false when it could not. */
static bool send_bye(struct node *n, struct hangup *h)
{
    struct osn_sip_wire *pm = malloc(sizeof *pm); /* its room is too large for the stack */
    struct rmsg r = {.pm = pm};
    struct osn_sip_msg m;
    struct osn_sip_out o;
    struct ntx *y = pm ? ntx_new(n) : NULL;
    int err = y ? 0 : OSN_ENOMEM;
    if (!err) {
        memcpy(n->obuf, h->bye, h->len);
        y->from = h->to; /* a client transaction sends where its request goes (txn.c) */
        y->hop = NTX_NO_HOP;
        y->routed = true;
        err = osn_sip_wire_parse(pm, n->obuf, h->len) == OSN_SIP_WIRE_ACCEPT ? 0 : OSN_EINVAL;
    }
    if (!err)
        err = ntx_set_req(n, y, &r);
    if (!err)
        err = osn_sip_wire_to_txn(y->req, &m);
    if (!err)
        err = osn_sip_ctxn_start_over(&n->sip, &y->t, &m, false, n->now, &o);
    free(pm);
    if (err) {
        ntx_free(n, y);
        return false;
    }
    ntx_apply(n, y, &o, NULL);
    return true;
}

void hangup_timer(struct node *n, void *obj, uint32_t gen)
{
    struct hangup *h = obj;
    double at;
    if (!h->live || h->gen != gen)
        return;
    switch (osn_uas_hangup_fire(calls_has(&n->calls, h->call_id), h->acked, h->t2xx, n->now,
                                &n->cfg->sip, &at)) {
    case OSN_UAS_HANGUP_WAIT:
        if (timers_push(&n->timers, at, TM_HANGUP, h, ++h->gen) != 0)
            n->err = OSN_ENOMEM;
        return;
    case OSN_UAS_HANGUP_BYE:
        if (send_bye(n, h)) {
            /* the call stays known until the BYE's answer (hangup_event): a BYE of the
             * caller's that crosses ours still finds it and gets its 200 (15.1.2) */
            n->st.bye_sent++;
        } else {
            n->st.send_errors++;
        }
        break;
    case OSN_UAS_HANGUP_NONE:
        break;
    }
    hangup_free(n, h);
}

bool hangup_unacked(struct node *n, uint64_t call_id, bool bye)
{
    struct hangup *h = watch_of(n, call_id);
    if (!h) {
        if (bye) /* its BYE could not be printed or routed at the 2xx (hangup_start) */
            n->st.send_errors++;
        return false;
    }
    /* the call stays known until the BYE's answer (hangup_event), as a callee's BYE */
    bool sent = bye && send_bye(n, h);
    if (bye && !sent)
        n->st.send_errors++;
    hangup_free(n, h);
    return sent;
}

void hangup_event(struct node *n, struct ntx *x, const struct osn_sip_out *o)
{
    /* the BYE's final answer, or Timer F: the call is over for the uas either way */
    if (o->tu == OSN_SIP_TU_RESPONSE && o->msg->status < 200)
        return;
    if (o->tu == OSN_SIP_TU_RESPONSE && o->msg->status < 300)
        n->st.bye_sent_ok++;
    calls_del(&n->calls, x->t.req.call_id);
}

void hangup_release(struct node *n)
{
    for (struct hangup *h = n->hangups.all, *next; h; h = next) {
        next = h->next_all;
        free(h->bye);
        free(h);
    }
    map_release(&n->hangups.by_call);
    n->hangups = (struct hangups){0};
}

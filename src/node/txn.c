/*
 * The node's transactions: pool, table lookups confirmed on the key text, and the transaction
 * layer's outputs carried out with bytes.
 *
 * The layer (osn/sip.h) works on numbers; the node keeps the bytes behind them and, with a
 * message it received or sent, its parse (one packed block, osn_sip_wire_pack: nothing is parsed
 * twice). A server transaction keeps the request it received (for the responses it prints, RFC
 * 3261 8.2.6, and the forward) and the last response it sent (what Timer G and an absorbed copy
 * send again); a client transaction keeps the request it sent (what Timers A and E send again)
 * and the final response it received (for the ACK of a non-2xx, 17.1.1.3). The table finds a
 * transaction by the keyed hashes; its key text, kept with the request, then decides, so that two
 * branches whose hashes collide are never one transaction.
 *
 * Once a transaction waits out its final state (RFC 6026's Accepted and the Completed and
 * Confirmed states last up to 64*T1 = 32 s) it moves to the kept table (kept.c), a compact
 * record with what that state may still send, and its object goes back to the pool: at 1,000
 * calls/s about 100,000 transactions wait at any time. The move happens when the outermost
 * ntx_apply returns (the TU, run from inside, may still use the object), and the lifetime
 * timer of the final wait is then the table's, never armed here. A transaction the table does
 * not take (a uas's INVITE in Accepted until its ACK, the generator's INVITE a call still
 * waits on, one without memory) stays live and lets go of the bytes its state no longer sends
 * (ntx_trim); a uas's INVITE moves once its ACK has come (ntx_keep), for what is left of Timer L.
 */
#include <stdlib.h>
#include <string.h>

#include "node_int.h"
#include "osn/err.h"

/* Frees a message a transaction keeps (p, *size bytes of held); returns NULL for its slot. */
static void *let_go(struct node *n, void *p, size_t *size)
{
    n->held -= *size;
    *size = 0;
    free(p);
    return NULL;
}

/* Packed parses come from free lists by size class, not straight from malloc: a proxied call
 * keeps six (four requests, two final responses) and lets them go again within the call, and
 * glibc serves blocks of their size (past its thread cache's 1 KiB) from its bins, at about 200
 * instructions for a malloc and 150 for a free (callgrind, bench/node_callgrind.sh). Every block
 * of a packed parse of s bytes has room for s rounded up to NODE_BLOCK_STEP (ntx_block), so that
 * the class of its own size is one it fits. */
static size_t block_class(size_t size)
{
    return (size + NODE_BLOCK_STEP - 1) / NODE_BLOCK_STEP - 1; /* size > 0 */
}

void *ntx_block(struct node *n, size_t size)
{
    size_t c = block_class(size);
    if (c >= NODE_BLOCK_CLASSES)
        return malloc(size);
    void *p = n->block_free[c];
    if (!p)
        return malloc((c + 1) * NODE_BLOCK_STEP);
    memcpy(&n->block_free[c], p, sizeof p);
    n->block_nfree[c]--;
    return p;
}

/* As let_go, for a packed parse (from ntx_block): to its class's free list while it has room. */
static void *let_go_block(struct node *n, void *p, size_t *size)
{
    size_t c = block_class(*size);
    if (!p || c >= NODE_BLOCK_CLASSES || n->block_nfree[c] >= NODE_BLOCK_KEEP)
        return let_go(n, p, size);
    n->held -= *size;
    *size = 0;
    memcpy(p, &n->block_free[c], sizeof p);
    n->block_free[c] = p;
    n->block_nfree[c]++;
    return NULL;
}

void ntx_blocks_release(struct node *n)
{
    for (int c = 0; c < NODE_BLOCK_CLASSES; c++) {
        for (void *p = n->block_free[c], *next; p; p = next) {
            memcpy(&next, p, sizeof next);
            free(p);
        }
        n->block_free[c] = NULL;
        n->block_nfree[c] = 0;
    }
}

struct ntx *ntx_new(struct node *n)
{
    struct ntx *x = n->free_ntx;
    if (x) {
        n->free_ntx = x->next_free;
    } else {
        /* Objects stay allocated while the node runs: stale timer entries may point at them. */
        x = calloc(1, sizeof *x);
        if (!x)
            return NULL;
        x->next_all = n->all_ntx;
        n->all_ntx = x;
        n->allocated++;
    }
    uint32_t gen[3] = {x->gen[0] + 1, x->gen[1] + 1, x->gen[2] + 1}, life = x->life + 1;
    struct ntx *all = x->next_all;
    *x = (struct ntx){0};
    memcpy(x->gen, gen, sizeof gen);
    x->life = life;
    x->kept_up = KEPT_NONE;
    x->next_all = all;
    x->live = true;
    x->t0 = n->now;
    n->live++;
    if (n->live > n->st.transactions_peak)
        n->st.transactions_peak = n->live;
    return x;
}

void ntx_free(struct node *n, struct ntx *x)
{
    if (!x || !x->live)
        return;
    if (x->t.role == OSN_SIP_SERVER && osn_uas_2xx_pending(&x->uas))
        tu_2xx_end(n, x);
    if (x->t.in_table)
        osn_sip_txn_abort(&n->sip, &x->t);
    for (int i = 0; i < 3; i++)
        x->gen[i]++; /* cancels whatever is armed */
    dialogs_del(&n->dialogs, x);
    if (x->peer && x->peer->peer == x)
        x->peer->peer = NULL;
    x->req = let_go_block(n, x->req, &x->req_size);
    x->resp = let_go(n, x->resp, &x->resp_len);
    x->final = let_go_block(n, x->final, &x->final_size);
    x->live = false;
    x->next_free = n->free_ntx;
    n->free_ntx = x;
    n->live--;
}

/* Keeps message r's parse and bytes in *slot (what was there goes), counted in held: r's own
 * packed block, taken (r->kept is then NULL and r->pm lives as long as the transaction), or a
 * new copy. 0 or OSN_ENOMEM. */
static int keep(struct node *n, struct osn_sip_wire **slot, size_t *slot_size, struct rmsg *r)
{
    size_t size = r->kept ? r->kept_size : osn_sip_wire_packed_size(r->pm);
    struct osn_sip_wire *c = r->kept;
    if (!c) {
        void *mem = ntx_block(n, size);
        if (!mem || !(c = osn_sip_wire_pack(mem, r->pm))) {
            free(mem);
            return OSN_ENOMEM;
        }
    }
    r->kept = NULL;
    r->pm = c;
    let_go_block(n, *slot, slot_size); /* held less what the slot had */
    n->held += size;
    *slot = c;
    *slot_size = size;
    return 0;
}

int ntx_set_req(struct node *n, struct ntx *x, struct rmsg *r)
{
    struct osn_sip_wire_key k;
    if (osn_sip_wire_key_of(r->pm, &k) != 0)
        return OSN_EINVAL;
    int err = keep(n, &x->req, &x->req_size, r);
    if (!err)
        osn_sip_wire_key_of(x->req, &x->key); /* its spans in the kept bytes */
    return err;
}

int ntx_set_final(struct node *n, struct ntx *x, struct rmsg *r)
{
    return keep(n, &x->final, &x->final_size, r);
}

int ntx_set_resp(struct node *n, struct ntx *x, const char *p, size_t len)
{
    char *c = realloc(x->resp, len + 1);
    if (!c)
        return OSN_ENOMEM;
    memcpy(c, p, len);
    c[len] = '\0';
    n->held += len - (x->resp ? x->resp_len : 0);
    x->resp = c;
    x->resp_len = len;
    return 0;
}

struct ntx *ntx_find(struct node *n, int role, const struct osn_sip_wire *pm,
                     const struct osn_sip_msg *m)
{
    struct osn_sip_txn *t = osn_sip_table_find(&n->sip.table, role, m);
    struct osn_sip_wire_key k;
    if (!t || osn_sip_wire_key_of(pm, &k) != 0)
        return NULL;
    struct ntx *x = OSN_CONTAINER_OF(t, struct ntx, t);
    return osn_sip_wire_key_eq(&x->key, &k) ? x : NULL;
}

static void arm(struct node *n, struct ntx *x, int which, double at)
{
    x->gen[which]++;
    if (timers_push(&n->timers, at, (enum tm_kind)which, x, x->gen[which]) != 0)
        n->err = OSN_ENOMEM;
}

void ntx_arm_2xx(struct node *n, struct ntx *x, double at)
{
    arm(n, x, TM_2XX, at);
}

/* A server transaction's send: the last response, or a 100 Trying printed from the request. */
static void send_response(struct node *n, struct ntx *x, const struct osn_sip_msg *m)
{
    if (m->status == 100) {
        if (x->req)
            tu_reply(n, x->req, &x->from, x->t.reliable, 100, -1);
        return;
    }
    if (x->resp)
        node_send(n, &x->from, x->t.reliable, x->resp, x->resp_len);
}

/* A client transaction's send: its request, or the ACK of a non-2xx final response (17.1.1.3:
 * to where the request went), to the address the request was routed to (x->from). */
static void send_request(struct node *n, struct ntx *x, const struct osn_sip_msg *m,
                         const struct osn_sip_out *o)
{
    if (m == &o->built && m->method == OSN_SIP_ACK) {
        if (!x->req || !x->final)
            return;
        int len = osn_sip_wire_print_ack(n->obuf, sizeof n->obuf, x->req, x->final);
        if (len > 0)
            node_send(n, &x->from, x->t.reliable, n->obuf, (size_t)len);
        return;
    }
    if (x->req)
        node_send(n, &x->from, x->t.reliable, x->req->buf.p, x->req->buf.n);
}

/* Frees what x's state can no longer send. Accepted: nothing is sent from the request, and
 * only a UAS resends its own 2xx (a proxy relays the next hop's copies). Completed: a server
 * resends its final response; an INVITE client prints the ACK of a non-2xx from its request and
 * that response (17.1.1.3); a non-INVITE client sends nothing. Confirmed: nothing. */
static void ntx_trim(struct node *n, struct ntx *x)
{
    bool server = x->t.role == OSN_SIP_SERVER, inv = x->t.req.method == OSN_SIP_INVITE;
    bool keep_req, keep_resp;
    switch (x->t.state) {
    case OSN_SIP_ACCEPTED:
        keep_req = false;
        keep_resp = server && !is_proxy(n);
        break;
    case OSN_SIP_COMPLETED:
        keep_req = !server && inv;
        keep_resp = server || inv;
        break;
    case OSN_SIP_CONFIRMED:
        keep_req = keep_resp = false;
        break;
    default:
        return;
    }
    if (!keep_req && x->req &&
        osn_sip_wire_key_copy(&x->key, x->keybuf, sizeof x->keybuf, &x->key) < 0)
        keep_req = true; /* a key too long for keybuf stays in the request */
    if (!keep_req)
        x->req = let_go_block(n, x->req, &x->req_size);
    if (!keep_resp) {
        x->resp = let_go(n, x->resp, &x->resp_len);
        x->final = let_go_block(n, x->final, &x->final_size);
    }
}

/* Remembers that x, whose layer set lifetime timer tm, goes to the kept table when the
 * outermost ntx_apply returns; false when it cannot wait for that (the timer is then armed). */
static bool keep_later(struct node *n, struct ntx *x, const struct osn_sip_timer *tm)
{
    if (n->npending_keep >= KEPT_PENDING || !kept_wants(n, x, tm->id))
        return false;
    x->gen[tm->slot]++; /* whatever was armed in the slot is replaced */
    x->kept_end = tm->at;
    x->kept_timer = tm->id;
    n->pending_keep[n->npending_keep] = x;
    n->pending_life[n->npending_keep++] = x->life;
    return true;
}

void ntx_keep(struct node *n, struct ntx *x)
{
    if (!x || !x->live || x->kept_timer)
        return;
    for (int slot = 0; slot < 2; slot++) {
        struct osn_sip_timer tm = {
                .id = x->t.tid[slot], .slot = (uint8_t)slot, .set = true, .at = x->t.at[slot]};
        if (tm.id != OSN_SIP_TIMER_NONE && keep_later(n, x, &tm))
            return;
    }
}

/* Moves the transactions keep_later remembered to the kept table, servers first (an INVITE
 * client then finds its server's record); one the table does not take has its timer armed. */
static void keep_pending(struct node *n)
{
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < n->npending_keep; i++) {
            struct ntx *x = n->pending_keep[i];
            if (!x || (x->t.role == OSN_SIP_SERVER) != (pass == 0))
                continue;
            n->pending_keep[i] = NULL;
            if (!x->live || x->life != n->pending_life[i] || !x->kept_timer)
                continue;
            int id = x->kept_timer;
            x->kept_timer = 0;
            if (!kept_take(n, x, id, x->kept_end)) {
                arm(n, x, osn_sip_timer_slot(id), x->kept_end);
                ntx_trim(n, x);
            }
        }
    }
    n->npending_keep = 0;
}

void ntx_hold(struct node *n)
{
    n->apply_depth++;
}

void ntx_unhold(struct node *n)
{
    if (--n->apply_depth == 0 && n->npending_keep)
        keep_pending(n);
}

void ntx_apply(struct node *n, struct ntx *x, const struct osn_sip_out *o, const struct rmsg *in)
{
    ntx_hold(n);
    for (int i = 0; i < o->ntimer; i++) {
        const struct osn_sip_timer *tm = &o->timer[i];
        if (tm->set && !o->terminated && keep_later(n, x, tm))
            continue;
        if (tm->set)
            arm(n, x, tm->slot, tm->at);
        else
            x->gen[tm->slot]++;
    }
    for (int i = 0; i < o->nsend; i++) {
        const struct osn_sip_send *sd = &o->send[i];
        if (sd->retrans && !osn_proxy_retrans_allowed(hops_cli(n, x->hop), n->now, sd->msg))
            continue; /* pi: this copy is not sent, the transaction goes on */
        if (sd->retrans)
            n->st.retrans_sent++;
        if (x->t.role == OSN_SIP_SERVER)
            send_response(n, x, sd->msg);
        else
            send_request(n, x, sd->msg, o);
    }
    if (o->tu != OSN_SIP_TU_NONE)
        tu_event(n, x, o, in);
    if (o->terminated)
        ntx_free(n, x);
    else if (x->live && !x->kept_timer)
        ntx_trim(n, x);
    ntx_unhold(n);
}

void ntx_timer(struct node *n, struct ntx *x, int slot)
{
    struct osn_sip_out o;
    if (osn_sip_txn_timer(&n->sip, &x->t, x->t.tid[slot], n->now, &o) == 0)
        ntx_apply(n, x, &o, NULL);
}

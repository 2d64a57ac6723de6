/*
 * SIP transaction layer, private interface: the action builders shared by the client machines
 * (ctxn.c), the server machines (stxn.c) and the dispatcher (sip.c).
 *
 * Every state change goes through these helpers, so that the transaction's idea of its armed
 * timers (t->tid, t->at) and the actions the driver sees never disagree.
 */
#ifndef OSN_SIP_INT_H
#define OSN_SIP_INT_H

#include <math.h>

#include "osn/sip.h"

static inline bool osn__sip_is_invite(const struct osn_sip_txn *t)
{
    return t->req.method == OSN_SIP_INVITE;
}

/* What a transaction keeps of response m (struct osn_sip_resp). */
static inline struct osn_sip_resp osn__sip_resp_of(const struct osn_sip_msg *m)
{
    return (struct osn_sip_resp){m->status, m->retry_after, m->to_tag};
}

/* Arms timer `id` at `at`, replacing the slot's previous timer. */
static inline void osn__sip_arm(struct osn_sip_txn *t, struct osn_sip_out *o, int id, double at)
{
    int s = osn_sip_timer_slot(id);
    t->tid[s] = (uint8_t)id;
    t->at[s] = at;
    if (o->ntimer < (int)(sizeof o->timer / sizeof o->timer[0]))
        o->timer[o->ntimer++] = (struct osn_sip_timer){(uint8_t)id, (uint8_t)s, true, at};
}

/* Cancels whatever slot `s` holds (no action when it is empty). */
static inline void osn__sip_disarm(struct osn_sip_txn *t, struct osn_sip_out *o, int s)
{
    if (t->tid[s] == OSN_SIP_TIMER_NONE)
        return;
    if (o->ntimer < (int)(sizeof o->timer / sizeof o->timer[0]))
        o->timer[o->ntimer++] = (struct osn_sip_timer){t->tid[s], (uint8_t)s, false, t->at[s]};
    t->tid[s] = OSN_SIP_TIMER_NONE;
    t->at[s] = INFINITY;
}

/* Queues `m` for the transport (borrowed: see struct osn_sip_send). */
static inline void osn__sip_send(struct osn_sip_out *o, const struct osn_sip_msg *m, bool retrans)
{
    if (o->nsend < (int)(sizeof o->send / sizeof o->send[0]))
        o->send[o->nsend++] = (struct osn_sip_send){m, retrans};
}

static inline void osn__sip_tu(struct osn_sip_out *o, int ev, const struct osn_sip_msg *m)
{
    o->tu = ev;
    o->msg = m;
}

/* Cancels both timers, leaves the table, and reports the end (RFC 3261 17: "destroyed"). */
void osn__sip_terminate(struct osn_sip_layer *l, struct osn_sip_txn *t, struct osn_sip_out *o);

/* Times out: TU_TIMEOUT caused by `id`, then termination. */
void osn__sip_timeout(struct osn_sip_layer *l, struct osn_sip_txn *t, struct osn_sip_out *o,
                      int id);

/* The client machines (ctxn.c). `id` is a timer already disarmed by the dispatcher. */
void osn__sip_ctxn_begin(struct osn_sip_layer *l, struct osn_sip_txn *t, double now,
                         struct osn_sip_out *o);
void osn__sip_ctxn_recv(struct osn_sip_layer *l, struct osn_sip_txn *t, const struct osn_sip_msg *m,
                        double now, struct osn_sip_out *o);
void osn__sip_ctxn_timer(struct osn_sip_layer *l, struct osn_sip_txn *t, int id, double now,
                         struct osn_sip_out *o);
void osn__sip_ctxn_terr(struct osn_sip_layer *l, struct osn_sip_txn *t, struct osn_sip_out *o);

/* The server machines (stxn.c). */
void osn__sip_stxn_begin(struct osn_sip_layer *l, struct osn_sip_txn *t, double now,
                         struct osn_sip_out *o);
void osn__sip_stxn_recv(struct osn_sip_layer *l, struct osn_sip_txn *t, const struct osn_sip_msg *m,
                        double now, struct osn_sip_out *o);
void osn__sip_stxn_respond(struct osn_sip_layer *l, struct osn_sip_txn *t,
                           const struct osn_sip_msg *resp, double now, struct osn_sip_out *o);
void osn__sip_stxn_timer(struct osn_sip_layer *l, struct osn_sip_txn *t, int id, double now,
                         struct osn_sip_out *o);
void osn__sip_stxn_terr(struct osn_sip_layer *l, struct osn_sip_txn *t, struct osn_sip_out *o);

#endif

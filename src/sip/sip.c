/*
 * The SIP transaction layer object of include/osn/sip.h: configuration, the entry points that
 * check their arguments and dispatch an event to the client (ctxn.c) or server (stxn.c)
 * machine, termination, and the names used in traces.
 *
 * Every entry point follows one pattern: check arguments, reset the output, run the machine,
 * record the transaction's next deadline. The machines themselves never fail: a message with
 * no meaning in the current state is absorbed or ignored, as RFC 3261 17 prescribes.
 */
#include <math.h>
#include <stddef.h>

#include "osn/err.h"
#include "sip_int.h"

/* The bytes of struct osn_sip_txn between the request and the kept response, all initialised by
 * txn_start field by field: at[2], ival (24), nretrans, absorbed, hash (12), role, state, tid[2],
 * has_resp, in_table, reliable (7), padding (1), user[2] (4, 16 bits each). The assertion there
 * fails when a field is added without being initialised. */
#define TXN_STATE_BYTES (2 * sizeof(double) + sizeof(double) + 3 * sizeof(uint32_t) + 7 + 1 + 4)

void osn_sip_cfg_default(struct osn_sip_cfg *cfg)
{
    if (!cfg)
        return;
    /* RFC 3261 Table 4: T1 = 500 ms, T2 = 4 s, T4 = 5 s; Timer D > 32 s on UDP. */
    *cfg = (struct osn_sip_cfg){
            .t1 = 0.5,
            .t2 = 4,
            .t4 = 5,
            .timer_d = 32,
            .trying_delay = 0.2, /* RFC 3261 17.2.1: "within 200 ms" */
            .invite_max_retrans = -1,
            .non_invite_max_retrans = -1,
            .rfc6026 = true,
            .timer_b_proceeding = false,
            .honor_retry_after = true,
    };
}

void osn_sip_cfg_sipp(struct osn_sip_cfg *cfg)
{
    if (!cfg)
        return;
    osn_sip_cfg_default(cfg);
    /* SIPp include/sipp.hpp: UDP_MAX_RETRANS_INVITE_TRANSACTION 5,
     * UDP_MAX_RETRANS_NON_INVITE_TRANSACTION 9 (docs/protocols.md 1.9). */
    cfg->invite_max_retrans = 5;
    cfg->non_invite_max_retrans = 9;
    cfg->honor_retry_after = false;
}

static bool pos_finite(double x)
{
    return isfinite(x) && x > 0;
}

static int layer_init(struct osn_sip_layer *l, const struct osn_sip_cfg *cfg, bool indexed,
                      size_t hint)
{
    struct osn_sip_cfg c;

    if (!l)
        return OSN_EINVAL;
    if (cfg)
        c = *cfg;
    else
        osn_sip_cfg_default(&c);
    if (!pos_finite(c.t1) || !pos_finite(c.t2) || !pos_finite(c.t4) || !pos_finite(c.timer_d) ||
        c.t2 < c.t1 || !isfinite(c.trying_delay))
        return OSN_EINVAL;
    *l = (struct osn_sip_layer){.cfg = c, .indexed = indexed};
    return indexed ? osn_sip_table_init(&l->table, hint) : 0;
}

int osn_sip_layer_init(struct osn_sip_layer *l, const struct osn_sip_cfg *cfg, size_t hint)
{
    return layer_init(l, cfg, true, hint);
}

int osn_sip_layer_init_unindexed(struct osn_sip_layer *l, const struct osn_sip_cfg *cfg)
{
    return layer_init(l, cfg, false, 0);
}

void osn_sip_layer_release(struct osn_sip_layer *l)
{
    if (!l)
        return;
    osn_sip_table_release(&l->table);
}

struct osn_sip_txn *osn_sip_layer_match(const struct osn_sip_layer *l, const struct osn_sip_msg *m)
{
    if (!l || !m)
        return NULL;
    return osn_sip_table_find(&l->table, m->status ? OSN_SIP_CLIENT : OSN_SIP_SERVER, m);
}

struct osn_sip_txn *osn_sip_layer_match_cancelled(const struct osn_sip_layer *l,
                                                  const struct osn_sip_msg *cancel)
{
    if (!l || !cancel || cancel->status || cancel->method != OSN_SIP_CANCEL)
        return NULL;
    /* RFC 3261 9.2: the CANCEL's top Via matches the INVITE's; the method is what differs. */
    struct osn_sip_msg m = *cancel;
    m.method = OSN_SIP_INVITE;
    return osn_sip_table_find(&l->table, OSN_SIP_SERVER, &m);
}

static void out_reset(struct osn_sip_out *o)
{
    o->nsend = 0;
    o->ntimer = 0;
    o->tu = OSN_SIP_TU_NONE;
    o->msg = NULL;
    o->retry_after = -1;
    o->timer_id = OSN_SIP_TIMER_NONE;
    o->terminated = false;
    o->deadline = INFINITY;
}

static void out_done(const struct osn_sip_txn *t, struct osn_sip_out *o)
{
    o->deadline = t->at[0] < t->at[1] ? t->at[0] : t->at[1]; /* never NaN */
}

void osn__sip_terminate(struct osn_sip_layer *l, struct osn_sip_txn *t, struct osn_sip_out *o)
{
    osn__sip_disarm(t, o, 0);
    osn__sip_disarm(t, o, 1);
    osn_sip_table_remove(&l->table, t);
    t->state = OSN_SIP_TERMINATED;
    o->terminated = true;
    l->stats.terminated++;
}

void osn__sip_timeout(struct osn_sip_layer *l, struct osn_sip_txn *t, struct osn_sip_out *o, int id)
{
    osn__sip_tu(o, OSN_SIP_TU_TIMEOUT, NULL);
    o->timer_id = id;
    l->stats.timeouts++;
    osn__sip_terminate(l, t, o);
}

static bool is_request(const struct osn_sip_msg *m)
{
    return m->status == 0 && m->method > OSN_SIP_NOMETHOD && m->method < OSN_SIP_NMETHODS;
}

static bool is_response(const struct osn_sip_msg *m)
{
    return m->status >= 100 && m->status <= 699 && m->method > OSN_SIP_NOMETHOD &&
           m->method < OSN_SIP_NMETHODS;
}

static bool is_live(const struct osn_sip_txn *t)
{
    return t->state != OSN_SIP_NOSTATE && t->state != OSN_SIP_TERMINATED;
}

/* Common part of the two start calls: a fresh transaction in the table. Always inline into
 * each: GCC kept it out of line behind both (0.57 calls a message in the network simulator,
 * 12.4 instructions a message on fanin.ini), each start call then being one call, not two. */
static inline __attribute__((always_inline)) int
start(struct osn_sip_layer *l, struct osn_sip_txn *t, const struct osn_sip_msg *req, int role,
      bool reliable, double now, struct osn_sip_out *o)
{
    int err = 0;

    if (!l || !t || !req || !o || !isfinite(now) || !is_request(req) ||
        req->method == OSN_SIP_ACK || t->in_table) {
        err = OSN_EINVAL;
        goto out;
    }
    out_reset(o);
    /* Every field but resp, which is read only after has_resp. Field by field: a memset of this
     * size becomes a `rep stos`, whose start-up cost was a third of this function. */
    _Static_assert(offsetof(struct osn_sip_txn, resp) ==
                           sizeof(struct osn_sip_msg) + TXN_STATE_BYTES,
                   "struct osn_sip_txn changed: initialise any new field here");
    t->req = *req;
    t->at[0] = t->at[1] = INFINITY;
    t->ival = 0;
    t->nretrans = t->absorbed = t->hash = 0;
    t->role = (uint8_t)role;
    t->state = OSN_SIP_NOSTATE;
    t->tid[0] = t->tid[1] = OSN_SIP_TIMER_NONE;
    t->has_resp = t->in_table = false;
    t->reliable = reliable;
    err = l->indexed ? osn_sip_table_add(&l->table, t) : 0;
    if (err)
        goto out;
    if (role == OSN_SIP_CLIENT) {
        l->stats.client_started++;
        osn__sip_ctxn_begin(l, t, now, o);
    } else {
        l->stats.server_started++;
        osn__sip_stxn_begin(l, t, now, o);
    }
    out_done(t, o);
out:
    return err;
}

int osn_sip_ctxn_start(struct osn_sip_layer *l, struct osn_sip_txn *t,
                       const struct osn_sip_msg *req, double now, struct osn_sip_out *out)
{
    return start(l, t, req, OSN_SIP_CLIENT, false, now, out);
}

int osn_sip_ctxn_start_over(struct osn_sip_layer *l, struct osn_sip_txn *t,
                            const struct osn_sip_msg *req, bool reliable, double now,
                            struct osn_sip_out *out)
{
    return start(l, t, req, OSN_SIP_CLIENT, reliable, now, out);
}

int osn_sip_stxn_start(struct osn_sip_layer *l, struct osn_sip_txn *t,
                       const struct osn_sip_msg *req, double now, struct osn_sip_out *out)
{
    return start(l, t, req, OSN_SIP_SERVER, false, now, out);
}

int osn_sip_stxn_start_over(struct osn_sip_layer *l, struct osn_sip_txn *t,
                            const struct osn_sip_msg *req, bool reliable, double now,
                            struct osn_sip_out *out)
{
    return start(l, t, req, OSN_SIP_SERVER, reliable, now, out);
}

int osn_sip_txn_recv(struct osn_sip_layer *l, struct osn_sip_txn *t, const struct osn_sip_msg *m,
                     double now, struct osn_sip_out *out)
{
    if (!l || !t || !m || !out || !isfinite(now) || !is_live(t))
        return OSN_EINVAL;
    if (t->role == OSN_SIP_CLIENT) {
        if (!is_response(m) || m->method != t->req.method)
            return OSN_EINVAL;
        out_reset(out);
        osn__sip_ctxn_recv(l, t, m, now, out);
    } else {
        bool ack_ok = m->method == OSN_SIP_ACK && t->req.method == OSN_SIP_INVITE;
        if (!is_request(m) || (m->method != t->req.method && !ack_ok))
            return OSN_EINVAL;
        out_reset(out);
        osn__sip_stxn_recv(l, t, m, now, out);
    }
    out_done(t, out);
    return 0;
}

/* Always inline, into the drivers too where the build links with LTO (an extern definition
 * still, for the others): the TU's response to every request, 0.39 calls a message in the
 * network simulator (9.8 instructions a message on fanin.ini). */
__attribute__((always_inline)) inline int osn_sip_stxn_respond(struct osn_sip_layer *l,
                                                               struct osn_sip_txn *t,
                                                               const struct osn_sip_msg *resp,
                                                               double now, struct osn_sip_out *out)
{
    if (!l || !t || !resp || !out || !isfinite(now) || !is_live(t) || t->role != OSN_SIP_SERVER ||
        resp->status < 100 || resp->status > 699)
        return OSN_EINVAL;
    out_reset(out);
    osn__sip_stxn_respond(l, t, resp, now, out);
    out_done(t, out);
    return 0;
}

int osn_sip_txn_timer(struct osn_sip_layer *l, struct osn_sip_txn *t, int id, double now,
                      struct osn_sip_out *out)
{
    if (!l || !t || !out || !isfinite(now) || id <= OSN_SIP_TIMER_NONE || id >= OSN_SIP_NTIMERS)
        return OSN_EINVAL;
    int s = osn_sip_timer_slot(id);
    if (!is_live(t) || t->tid[s] != id) {
        out_reset(out);
        l->stats.stale_timers++;
        return 0;
    }
    if (now < t->at[s])
        return OSN_EINVAL;
    out_reset(out);
    t->tid[s] = OSN_SIP_TIMER_NONE; /* it fired: no cancel action for it */
    t->at[s] = INFINITY;
    if (t->role == OSN_SIP_CLIENT)
        osn__sip_ctxn_timer(l, t, id, now, out);
    else
        osn__sip_stxn_timer(l, t, id, now, out);
    out_done(t, out);
    return 0;
}

int osn_sip_txn_transport_error(struct osn_sip_layer *l, struct osn_sip_txn *t, double now,
                                struct osn_sip_out *out)
{
    if (!l || !t || !out || !isfinite(now) || !is_live(t))
        return OSN_EINVAL;
    out_reset(out);
    if (t->role == OSN_SIP_CLIENT)
        osn__sip_ctxn_terr(l, t, out);
    else
        osn__sip_stxn_terr(l, t, out);
    out_done(t, out);
    return 0;
}

void osn_sip_txn_abort(struct osn_sip_layer *l, struct osn_sip_txn *t)
{
    if (!l || !t)
        return;
    osn_sip_table_remove(&l->table, t);
    t->tid[0] = t->tid[1] = OSN_SIP_TIMER_NONE;
    t->at[0] = t->at[1] = INFINITY;
    t->state = OSN_SIP_TERMINATED;
}

int osn_sip_layer_recv(struct osn_sip_layer *l, const struct osn_sip_msg *m,
                       struct osn_sip_txn *fresh, struct osn_sip_txn **tp, double now,
                       struct osn_sip_out *out)
{
    int err;
    struct osn_sip_txn *t;

    if (!l || !m || !tp || !out)
        return OSN_EINVAL;
    *tp = NULL;
    t = osn_sip_layer_match(l, m);
    if (t) {
        err = osn_sip_txn_recv(l, t, m, now, out);
        if (!err)
            *tp = t;
        return err;
    }
    if (fresh && is_request(m) && m->method != OSN_SIP_ACK) {
        err = osn_sip_stxn_start(l, fresh, m, now, out);
        if (!err) {
            *tp = fresh;
            err = 1;
        }
        return err;
    }
    out_reset(out);
    osn__sip_tu(out, OSN_SIP_TU_STRAY, m);
    l->stats.stray++;
    return 2;
}

const char *osn_sip_statename(int state)
{
    static const char *const names[] = {"-",         "Calling",   "Trying",   "Proceeding",
                                        "Completed", "Confirmed", "Accepted", "Terminated"};
    return state >= 0 && state <= OSN_SIP_TERMINATED ? names[state] : "?";
}

const char *osn_sip_timer_name(int id)
{
    static const char *const names[] = {"-", "A", "B", "D", "E", "F", "G",
                                        "H", "I", "J", "K", "L", "M", "100"};
    return id >= 0 && id < OSN_SIP_NTIMERS ? names[id] : "?";
}

const char *osn_sip_method_name(int method)
{
    static const char *const names[] = {"-",      "INVITE",  "ACK",      "BYE",
                                        "CANCEL", "OPTIONS", "REGISTER", "OTHER"};
    return method >= 0 && method < OSN_SIP_NMETHODS ? names[method] : "?";
}

const char *osn_sip_tu_name(int tu_event)
{
    static const char *const names[] = {"none",    "request",         "response", "ack",
                                        "timeout", "transport-error", "stray"};
    return tu_event >= 0 && tu_event <= OSN_SIP_TU_STRAY ? names[tu_event] : "?";
}

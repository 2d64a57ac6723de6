/*
 * The UAS: it answers every call (180 and 200 for an INVITE, 200 for a BYE; the full table is
 * osn_uas_answer's, in osn/elem.h), the 200 to a new INVITE at once or after a ring delay
 * (osn_uas_ring_delay; element.c arms it) and, as the
 * UAS core of RFC 3261 13.3.1.4, resends its 2xx until the ACK comes, from T1 doubling up to
 * T2, for at most 64*T1. With RFC 6026's machines the server transaction no longer does that
 * itself (it stays in Accepted and passes the ACK up), so the core must.
 *
 *   2xx sent ── start: deadline now + T1 ── fire: ACK? stop : (64*T1 passed? stop :
 *               resend 2xx, interval = min(2 x interval, T2), deadline now + interval)
 */
#include <math.h>

#include "osn/elem.h"
#include "osn/rng.h"

int osn_uas_answer(const struct osn_uas_request *q, struct osn_uas_reply r[2])
{
    int m = q->method;
    bool inv = m == OSN_SIP_INVITE;
    /* RFC 3261 12.2.2: a request in a dialog the UAS does not have gets 481; a BYE or CANCEL
     * finds its call by Call-ID whatever its To tag (15.1.2, 9.2). */
    if ((q->in_dialog || m == OSN_SIP_BYE || m == OSN_SIP_CANCEL) && !q->known) {
        r[0] = (struct osn_uas_reply){481, 0};
        return 1;
    }
    if (!(OSN_UAS_ALLOW >> m & 1)) { /* 8.2.1: 405 names what it allows */
        r[0] = (struct osn_uas_reply){405, OSN_ELEM_W_ALLOW};
        return 1;
    }
    if (inv && q->offer == OSN_UAS_MALFORMED) {
        r[0] = (struct osn_uas_reply){488, 0};
        return 1;
    }
    if (inv && q->offer == OSN_UAS_NOT_SDP) { /* 21.4.13: "Accept" says what it takes */
        r[0] = (struct osn_uas_reply){415, OSN_ELEM_W_CAPS};
        return 1;
    }
    if (m == OSN_SIP_OPTIONS) {
        r[0] = (struct osn_uas_reply){200, OSN_ELEM_W_ALLOW | OSN_ELEM_W_CAPS};
        return 1;
    }
    if (!inv) {
        r[0] = (struct osn_uas_reply){200, 0};
        return 1;
    }
    int n = 0;
    if (!q->in_dialog) /* a 180 creates the early dialog, so it has a Contact too (12.1.1) */
        r[n++] = (struct osn_uas_reply){180, OSN_ELEM_W_CONTACT};
    r[n++] = (struct osn_uas_reply){200, OSN_ELEM_W_CONTACT | OSN_ELEM_W_SDP};
    return n;
}

double osn_uas_ring_delay(int law, double mean, double u)
{
    if (law == OSN_UAS_RING_DET)
        return mean; /* exact, drawn nothing */
    if (law == OSN_UAS_RING_EXP)
        return -mean * log(u);
    return 0;
}

struct osn_sip_msg osn_elem_response(const struct osn_sip_msg *req, int status, int retry_after)
{
    /* The To tag: one per call, derived from its Call-ID (the node draws its own). */
    return (struct osn_sip_msg){
            .status = (uint16_t)status, .retry_after = retry_after, .to_tag = req->call_id + 1};
}

bool osn_uas_2xx_start(struct osn_uas_2xx *u, double now, const struct osn_sip_cfg *cfg, double *at)
{
    if (!cfg->rfc6026 || u->acked)
        return false;
    u->t200 = now;
    u->ival = cfg->t1;
    u->over = false;
    *at = now + u->ival;
    return true;
}

bool osn_uas_2xx_fire(struct osn_uas_2xx *u, double now, const struct osn_sip_cfg *cfg,
                      bool have_txn, double *at)
{
    double end = u->t200 + 64 * cfg->t1;
    if (u->over || u->acked || !have_txn || now >= end) {
        u->over = true;
        return false;
    }
    u->ival = 2 * u->ival < cfg->t2 ? 2 * u->ival : cfg->t2;
    /* the last deadline is the end itself, where an unacknowledged 2xx ends its session */
    *at = now + u->ival < end ? now + u->ival : end;
    return true;
}

bool osn_uas_2xx_unacked(const struct osn_uas_2xx *u, double now, const struct osn_sip_cfg *cfg)
{
    return !u->acked && now >= u->t200 + 64 * cfg->t1;
}

/* A salt of this purpose alone, so that who hangs up is independent of what else a driver
 * derives from the same Call-ID hash (its To tag, its map keys). */
#define HANGUP_SALT 0x63616c6c65652121ULL /* "callee!!" */

bool osn_uas_callee_hangs_up(double fraction, uint64_t key)
{
    if (!(fraction > 0))
        return false; /* the default: no draw, nothing changes */
    uint64_t x = key ^ HANGUP_SALT;
    uint64_t h = osn_splitmix64(&x);
    return (double)(h >> 11) * 0x1.0p-53 < fraction; /* a uniform in [0, 1) */
}

uint64_t osn_uas_call_key(const char *call_id, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a's offset basis and prime */
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)call_id[i]) * 0x100000001b3ULL;
    return h;
}

double osn_uas_hold(double mean, double u)
{
    return -mean * log(u);
}

enum osn_uas_hangup osn_uas_hangup_fire(bool known, bool acked, double t2xx, double now,
                                        const struct osn_sip_cfg *cfg, double *at)
{
    if (!known)
        return OSN_UAS_HANGUP_NONE;
    /* RFC 3261 15: not before the ACK, or before the 2xx's server transaction has ended. A
     * hold shorter than the ACK's way asks again every T1 (the 2xx's own first interval), so
     * that the BYE follows the ACK soon, not at 64*T1 (32 s at T1 = 0.5 s). */
    double end = t2xx + 64 * cfg->t1;
    if (!acked && now < end) {
        *at = now + cfg->t1 < end ? now + cfg->t1 : end;
        return OSN_UAS_HANGUP_WAIT;
    }
    return OSN_UAS_HANGUP_BYE;
}

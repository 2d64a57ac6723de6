/*
 * The UAS: it answers every call at once (180 and 200 for an INVITE, 200 for a BYE) and, as the
 * UAS core of RFC 3261 13.3.1.4, resends its 2xx until the ACK comes, from T1 doubling up to
 * T2, for at most 64*T1. With RFC 6026's machines the server transaction no longer does that
 * itself (it stays in Accepted and passes the ACK up), so the core must.
 *
 *   2xx sent ── start: deadline now + T1 ── fire: ACK? stop : (64*T1 passed? stop :
 *               resend 2xx, interval = min(2 x interval, T2), deadline now + interval)
 */
#include "osn/elem.h"

int osn_uas_answers(int method, int status[2])
{
    int n = 0;
    if (method == OSN_SIP_INVITE)
        status[n++] = 180;
    status[n++] = 200;
    return n;
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
    *at = now + u->ival;
    return true;
}

bool osn_uas_2xx_fire(struct osn_uas_2xx *u, double now, const struct osn_sip_cfg *cfg,
                      bool have_txn, double *at)
{
    if (u->acked || !have_txn || now - u->t200 >= 64 * cfg->t1)
        return false;
    u->ival = 2 * u->ival < cfg->t2 ? 2 * u->ival : cfg->t2;
    *at = now + u->ival;
    return true;
}

/*
 * Controller "local": the overloaded server protects itself, with no help from upstream
 * (RFC 6357 5, "local overload control"; docs/protocols.md 10, Q.704-style levels). Its detector's
 * mode decides the fate of new INVITEs; everything else (responses, ACK, in-dialog requests,
 * retransmissions that match a transaction) is admitted, because rejecting them saves nothing:
 * they belong to calls the server has already paid for.
 *
 *   mode      new INVITE                          other messages
 *   NORMAL    ADMIT                               ADMIT
 *   OVERLOAD  503 with probability reject_overload ADMIT
 *   DISCARD   503                                 ADMIT
 *
 * The 503 carries Retry-After local.retry_after (0 = none, the RFC 7339 5.10 advice). RFC 6357 5
 * warns that local control alone cannot prevent collapse, since each 503 still costs the server
 * work: that is what this controller is for, the baseline the cooperative ones must beat.
 */
#include "ctl_int.h"

#include "osn/err.h"

static int local_init(struct osn_ctl *c)
{
    double p = c->cfg.local.reject_overload;

    return p >= 0 && p <= 1 ? 0 : OSN_EINVAL;
}

static struct osn_ctl_verdict local_arrival(struct osn_ctl *c, double now,
                                            const struct osn_ctl_event *ev)
{
    struct osn_ctl_verdict v = {OSN_CTL_ADMIT, 0, OSN_CTL_Q_PRIMARY};
    bool reject = false;

    (void)now;
    if (ev->kind != OSN_CTL_MSG_INVITE)
        return v;
    if (c->det.mode == OSN_CTL_DISCARD)
        reject = true;
    else if (c->det.mode == OSN_CTL_OVERLOAD)
        reject =
                c->cfg.local.reject_overload >= 1 || osn__ctl_u01(c) < c->cfg.local.reject_overload;
    if (reject) {
        v.action = OSN_CTL_REJECT_503;
        v.retry_after = c->cfg.local.retry_after;
    }
    return v;
}

const struct osn__ctl_ops osn__ctl_local_ops = {
        .size = sizeof(struct osn_ctl),
        .uses_det = true,
        .init = local_init,
        .server_on_arrival = local_arrival,
};

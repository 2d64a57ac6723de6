/*
 * Controller "prsm": the priority-based request scheduling mechanism of Yavas, Hokelek and
 * Gunsel (docs/protocols.md section 8). The server keeps two queues: originals (and every message
 * that is not a copy) in the primary queue, retransmitted requests in the secondary one, and
 * serves the primary queue with strict priority. A queued retransmission is removed unserved
 * once it can no longer help: its transaction has already answered (the server transaction
 * would only resend the last response) or the client's Timer B has certainly fired (the first
 * copy reached the server 64*T1 ago, so it was sent even earlier).
 *
 * Responses the server has had before go to the secondary queue too (prsm.responses, the
 * default; our reading: the papers model a server whose queue holds requests only). A stateful
 * proxy with a deep queue needs it: its own client transactions resend the requests it forwarded
 * while their responses wait in its queue, the downstream answers every copy again, and those
 * copies in the primary queue kept it saturated (tests/test_net.c, deep buffer). They are served,
 * not removed, as the first may have been lost upstream. The owner of the queues lets an arrival
 * for the primary queue that finds the buffer full push out the oldest secondary message.
 *
 *   arrival kind                      queue        (503 only if buffer_full and
 *   INVITE_RETX, NONINV_RETX          SECONDARY     prsm.reject_when_full, as none;
 *   RESPONSE_RETX (prsm.responses)    SECONDARY     never for a response)
 *   everything else                   PRIMARY
 *
 *   queue choice   n_primary > 0 -> PRIMARY; else n_secondary > 0 -> SECONDARY; else NONE
 *   retx discard   answered || now >= t_first + 64*T1
 *
 * No feedback, and the client half sends everything: PRSM is a server-local scheduler.
 */
#include "ctl_int.h"

#include "osn/err.h"

static int prsm_init(struct osn_ctl *c)
{
    return c->cfg.prsm.t1 > 0 ? 0 : OSN_EINVAL;
}

static struct osn_ctl_verdict prsm_arrival(struct osn_ctl *c, double now,
                                           const struct osn_ctl_event *ev)
{
    struct osn_ctl_verdict v =
            osn__ctl_full_rule(ev, c->cfg.prsm.reject_when_full, c->cfg.prsm.retry_after);

    (void)now;
    /* docs/protocols.md 8: originals to the primary queue, retransmissions to the secondary. */
    if (osn_ctl_msg_is_retx(ev->kind) ||
        (ev->kind == OSN_CTL_MSG_RESPONSE_RETX && c->cfg.prsm.responses))
        v.queue = OSN_CTL_Q_SECONDARY;
    return v;
}

static enum osn_ctl_queue prsm_choice(struct osn_ctl *c, double now, size_t n_primary,
                                      size_t n_secondary)
{
    (void)c;
    (void)now;
    /* docs/protocols.md 8: serve the secondary queue only when the primary one is empty. */
    if (n_primary > 0)
        return OSN_CTL_Q_PRIMARY;
    return n_secondary > 0 ? OSN_CTL_Q_SECONDARY : OSN_CTL_Q_NONE;
}

static bool prsm_discard(struct osn_ctl *c, double now, double t_first, bool answered)
{
    /* docs/protocols.md 8 removal process; RFC 3261 17.1.1.2: Timer B = 64*T1. */
    return answered || now >= t_first + 64 * c->cfg.prsm.t1;
}

const struct osn__ctl_ops osn__ctl_prsm_ops = {
        .size = sizeof(struct osn_ctl),
        .init = prsm_init,
        .server_on_arrival = prsm_arrival,
        .server_queue_choice = prsm_choice,
        .server_retx_discard = prsm_discard,
};

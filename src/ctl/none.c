/*
 * Controller "none": no overload control. The server admits every message and leaves buffer
 * overflow to its caller (the simulator drops, the node's socket buffer overflows). Told that
 * the buffer is full, it may instead answer a request with 503, with or without Retry-After,
 * which is the on/off scheme of RFC 6357 9.5 and the collapse mechanism of RFC 5390 5.3.
 *
 *   arrival                          decision
 *   request, buffer_full, reject_when_full   REJECT_503 (Retry-After: none.retry_after, 0 = none)
 *   anything else                            ADMIT (primary queue)
 *
 * The client half sends everything and the feedback carries no overload parameters.
 */
#include "ctl_int.h"

static struct osn_ctl_verdict none_arrival(struct osn_ctl *c, double now,
                                           const struct osn_ctl_event *ev)
{
    (void)now;
    /* RFC 3261 21.5.4: 503 may carry Retry-After; without it the client acts as on 500. */
    return osn__ctl_full_rule(ev, c->cfg.none.reject_when_full, c->cfg.none.retry_after);
}

const struct osn__ctl_ops osn__ctl_none_ops = {
        .size = sizeof(struct osn_ctl),
        .server_on_arrival = none_arrival,
};

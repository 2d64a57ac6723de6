/*
 * The UAC's call, one state machine for both worlds: the network simulator's sources
 * (src/sim/net_source.c, net_tu.c) and the node's load generator (src/node/gen.c) each carry
 * out what it returns, with their own messages, timers and random draws. The decisions under it
 * (outcome, retrial, patience) are uac.c's.
 *
 *                start: INVITE, ARM patience
 *                            |
 *                            v
 *   +------------------> INVITING --- patience ran out: CANCEL once a 1xx has come (9.1) --+
 *   |                     |   |  ^                                                         |
 *   |   2xx: ACK, DIALOG, |   |  +-------------------------------------------------------+
 *   |   OUTCOME, HOLD     |   | final >= 300, Timer B, transport error: outcome decided
 *   |   (ARM now when the |   v
 *   |   caller gave up:   |  503 or timeout, retries left, u < prob: DRAW -> RETRY, ARM wait
 *   |   RFC 3261 15)      |  otherwise: OUTCOME, END -> DONE
 *   |                     v             |
 *   |                    UP             v
 *   |                     | timer      RETRY --- timer: ATTEMPT (the driver starts the next)
 *   |                     v             |
 *   |                    BYE            +--> DONE (the attempt; the call goes on in the next)
 *   |                     | 2xx (BYE_OK) or other final or Timer F: END
 *   |                     |   (UP, the callee's BYE: answered 200, HUNG_UP, END -> DONE;
 *   |                     |    a call the callee ends arms no hold: osn_uac_call_keyed)
 *   |                     v
 *   +-- (next attempt)   DONE
 *
 * In every state but INVITING a 2xx (a copy of the one that set the call up) is only ACKed
 * (RFC 3261 13.2.2.4). The caller who gave up is abandoned whatever ends the attempt, and never
 * retried; a 2xx that crossed its CANCEL is ACKed and the call hung up at once (RFC 3261 15),
 * as a hold of 0. The random draws (patience, retry, hold) are the driver's, of the laws here and
 * in uac.c, so that each world keeps its own streams.
 *
 * The caller as an overload-control client (when the scenario gives the source a client half,
 * [control] at = edge or both): RFC 7339 5.1 and 5.3 (loss) and RFC 7415 4 (rate) let the
 * originator of a request throttle it as a proxy's client half does. Before its INVITE leaves, an
 * attempt asks the client half toward its next hop (osn_uac_call_admit); one shed never goes out
 * and ends at once "as if" the next hop had answered 503 (RFC 7339 5.3), counted as shed
 * locally (SHED) and failed as rejected, retried as a 503 would be. The client half learns from
 * the oc, oc-validity, oc-seq and oc-algo of every response's top Via (RFC 7339 5.2), read by
 * osn_proxy_on_feedback, the one reading for every client half, a proxy's or a caller's; the
 * driver offers oc in the Via of each request (RFC 7339 5.1).
 */
#include <math.h>

#include "osn/elem.h"
#include "osn/rng.h"

#define BIT(d) OSN_UAC_BIT(OSN_UAC_DO_##d)

void osn_uac_call_start(struct osn_uac_call *c, double now, unsigned retries, double patience,
                        struct osn_uac_acts *a)
{
    *c = (struct osn_uac_call){.t0 = now, .retries = (uint8_t)retries, .state = OSN_UAC_S_INVITING};
    a->bits = BIT(INVITE);
    if (patience < INFINITY) {
        a->bits |= BIT(ARM);
        a->at = now + patience;
    }
}

/* Whether an attempt that ended with `outcome` may be retried, before the draws: what
 * osn_uac_retry asks of all but the uniform draw. */
static bool may_retry(const struct osn_uac_cfg *cfg, const struct osn_uac_call *c, int outcome)
{
    return cfg->retry.prob > 0 && (outcome == OSN_UAC_REJECTED || outcome == OSN_UAC_TIMEOUT) &&
           !c->connected && c->retries < cfg->retry.max_retries;
}

bool osn_uac_call_admit(struct osn_uac_call *c, const struct osn_uac_cfg *cfg, struct osn_ctl *cli,
                        double now, struct osn_uac_acts *a)
{
    if (!cli || c->state != OSN_UAC_S_INVITING || !(a->bits & BIT(INVITE)) ||
        osn_ctl_client_admit(cli, now, OSN_CTL_MSG_INVITE) != OSN_CTL_SHED_503)
        return false;
    osn_uac_call_shed(c, cfg, a);
    return true;
}

void osn_uac_call_shed(struct osn_uac_call *c, const struct osn_uac_cfg *cfg,
                       struct osn_uac_acts *a)
{
    /* RFC 7339 5.3: rejected locally as if the server had answered 503 (no Retry-After). The
     * attempt has just started: no answer came before, its caller has not given up. */
    c->outcome = OSN_UAC_REJECTED;
    a->outcome = OSN_UAC_REJECTED;
    a->retry_after = -1;
    if (may_retry(cfg, c, OSN_UAC_REJECTED)) {
        a->bits = BIT(SHED) | BIT(DRAW);
    } else {
        c->state = OSN_UAC_S_DONE;
        a->bits = BIT(SHED) | BIT(OUTCOME) | BIT(END);
    }
}

uint32_t osn_uac_call_on_1xx(struct osn_uac_call *c, double now, int status, double *delay)
{
    /* Past INVITING a provisional response asks nothing. */
    return c->state == OSN_UAC_S_INVITING ? osn_uac_on_1xx(c, now, status, delay) : 0;
}

uint32_t osn_uac_call_on_2xx(struct osn_uac_call *c, const struct osn_uac_cfg *cfg, double now,
                             struct osn_uac_acts *a)
{
    /* Past INVITING a 2xx is a copy of the one that set the call up: only ACKed. */
    if (c->state != OSN_UAC_S_INVITING)
        return BIT(ACK);
    uint8_t outcome = OSN_UAC_PENDING;
    uint32_t b = osn_uac_on_2xx(c, now, cfg->timer_b, &outcome);
    if (!(b & BIT(DIALOG)))
        return b;
    /* The call is set up: its outcome is decided with it (good, or a timeout if too late), never
     * retried, and the caller's patience, if armed, is put away. */
    if (cfg->patience)
        b |= BIT(STOP);
    if (b & BIT(OUTCOME))
        a->outcome = outcome;
    c->state = OSN_UAC_S_UP;
    if ((b & BIT(ARM)) || cfg->hang_up) {
        b |= BIT(ARM);
        a->at = now;
    } else if (!c->callee_ends) { /* else the callee's BYE ends it, no hold of ours */
        b |= BIT(HOLD);
    }
    return b;
}

uint32_t osn_uac_call_on_end(struct osn_uac_call *c, const struct osn_uac_cfg *cfg, int tu,
                             int status, int retry_after, struct osn_uac_acts *a)
{
    if (c->state != OSN_UAC_S_INVITING)
        return 0;
    uint8_t outcome = osn_uac_on_end(c, tu, status);
    if (outcome == OSN_UAC_PENDING)
        return 0;
    /* The attempt has its answer: the caller's patience, if armed, is put away. */
    uint32_t b = cfg->patience ? BIT(STOP) : 0;
    a->outcome = outcome;
    a->retry_after = retry_after;
    if (may_retry(cfg, c, outcome))
        return b | BIT(DRAW);
    c->state = OSN_UAC_S_DONE;
    return b | BIT(OUTCOME) | BIT(END);
}

void osn_uac_call_on_invite(struct osn_uac_call *c, const struct osn_uac_cfg *cfg, double now,
                            int tu, int status, int retry_after, struct osn_uac_acts *a)
{
    if (tu == OSN_SIP_TU_RESPONSE && status < 200)
        a->bits = osn_uac_call_on_1xx(c, now, status, &a->delay);
    else if (tu == OSN_SIP_TU_RESPONSE && status < 300)
        a->bits = osn_uac_call_on_2xx(c, cfg, now, a);
    else
        a->bits = osn_uac_call_on_end(c, cfg, tu, status, retry_after, a);
}

void osn_uac_call_retry(struct osn_uac_call *c, const struct osn_uac_cfg *cfg, double now, double u,
                        double delay, struct osn_uac_acts *a)
{
    double wait;
    a->bits &= ~BIT(DRAW);
    if (osn_uac_retry(&cfg->retry, c, a->outcome, a->retry_after, u, delay, &wait) &&
        now + wait <= cfg->retry_until) {
        c->state = OSN_UAC_S_RETRY;
        a->bits |= BIT(RETRY) | BIT(ARM);
        a->at = now + wait;
    } else {
        c->state = OSN_UAC_S_DONE;
        a->bits |= BIT(OUTCOME) | BIT(END);
    }
}

void osn_uac_call_keyed(struct osn_uac_call *c, const struct osn_uac_cfg *cfg, uint64_t key)
{
    c->callee_ends = osn_uas_callee_hangs_up(cfg->callee_hangs_up, key);
}

int osn_uac_call_on_bye_request(struct osn_uac_call *c, struct osn_uac_acts *a)
{
    a->bits = 0;
    /* RFC 3261 15.1.2, 12.2.2: a BYE of a dialog the caller has (its call set up and not yet
     * over) gets 200; one crossing the caller's own BYE too, whose answer then ends the call */
    if (c && c->state == OSN_UAC_S_BYE)
        return 200;
    if (!c || c->state != OSN_UAC_S_UP)
        return 481;
    c->state = OSN_UAC_S_DONE;
    a->bits = BIT(HUNG_UP) | BIT(END);
    return 200;
}

void osn_uac_call_on_timer(struct osn_uac_call *c, struct osn_uac_acts *a)
{
    struct osn_uac_step st;
    a->bits = 0;
    switch (c->state) {
    case OSN_UAC_S_INVITING: /* the caller's patience */
        osn_uac_on_patience(c, &st);
        if (st.cancel)
            a->bits = BIT(CANCEL);
        break;
    case OSN_UAC_S_UP: /* the hold: hang up (RFC 3261 15.1.1) */
        c->state = OSN_UAC_S_BYE;
        a->bits = BIT(BYE);
        break;
    case OSN_UAC_S_RETRY: /* the wait: this attempt is over, the next one starts */
        c->state = OSN_UAC_S_DONE;
        a->bits = BIT(ATTEMPT);
        break;
    default:
        break;
    }
}

void osn_uac_call_on_bye(struct osn_uac_call *c, int tu, int status, struct osn_uac_acts *a)
{
    a->bits = 0;
    if (c->state != OSN_UAC_S_BYE || (tu == OSN_SIP_TU_RESPONSE && status < 200))
        return;
    c->state = OSN_UAC_S_DONE;
    a->bits = BIT(END);
    if (tu == OSN_SIP_TU_RESPONSE && status < 300)
        a->bits |= BIT(BYE_OK);
}

void osn_uac_call_on_traffic_end(struct osn_uac_call *c, const struct osn_uac_cfg *cfg, double due,
                                 struct osn_uac_acts *a)
{
    a->bits = 0;
    if (c->state == OSN_UAC_S_RETRY && due > cfg->retry_until) {
        /* The retry will not come: the failure of the attempt is the call's. */
        c->state = OSN_UAC_S_DONE;
        a->bits = BIT(OUTCOME) | BIT(END);
        a->outcome = c->outcome;
    } else if (c->state == OSN_UAC_S_UP) {
        c->state = OSN_UAC_S_BYE;
        a->bits = BIT(BYE);
    }
}

double osn_uac_hold_draw(double mean, uint64_t key, uint64_t origin)
{
    uint64_t x = key ^ origin;
    uint64_t h = osn_splitmix64(&x);
    return mean * -log((double)((h >> 11) + 1) * 0x1.0p-53);
}

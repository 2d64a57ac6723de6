/*
 * The UAC's bookkeeping of a call: its setup delay (first INVITE to the first 180), its response
 * delay (first INVITE to the first 100 Trying, as the PRSM papers measure it), the ACK of
 * its 2xx, and its outcome, decided once. A call is good when its 2xx arrives within Timer B
 * (64*T1) of the first INVITE: what SIPp counts as a successful call and the papers call
 * goodput; it failed as timed out (Timer B, a 408, or a 2xx too late), rejected (503) or other.
 * And whether a caller whose attempt failed tries again (retrials, osn_uac_retry), or whose
 * patience ran out gives up (osn_uac_on_patience: CANCEL, RFC 3261 9.1).
 */
#include <math.h>

#include "osn/elem.h"
#include "osn/rng.h"

/* The call's outcome, decided once: the outcome decided now, OSN_UAC_PENDING when it had been
 * before. */
static uint8_t decide(struct osn_uac_call *c, int outcome)
{
    if (c->outcome != OSN_UAC_PENDING)
        return OSN_UAC_PENDING;
    /* The caller left before this answer: the call is abandoned, whatever ended it. */
    if (c->gave_up)
        outcome = OSN_UAC_ABANDONED;
    c->outcome = (uint8_t)outcome;
    return c->outcome;
}

uint32_t osn_uac_on_1xx(struct osn_uac_call *c, double now, int status, double *delay)
{
    uint32_t b = 0;
    /* RFC 3261 9.1: the caller that gave up before any provisional response waited for one;
     * this is it (one that gave up after one sent its CANCEL then). */
    if (c->gave_up && !c->got1xx && c->outcome == OSN_UAC_PENDING)
        b = OSN_UAC_BIT(OSN_UAC_DO_CANCEL);
    c->got1xx = true;
    if (status == 100) {
        /* The PRSM papers' response delay: first INVITE -> first 100 Trying. */
        if (!c->got100) {
            c->got100 = true;
            b |= OSN_UAC_BIT(OSN_UAC_DO_TRYING);
            *delay = now - c->t0;
        }
    } else if (status == 180 && !c->got180) {
        c->got180 = true;
        b |= OSN_UAC_BIT(OSN_UAC_DO_SETUP);
        *delay = now - c->t0;
    }
    return b;
}

uint32_t osn_uac_on_2xx(struct osn_uac_call *c, double now, double timer_b, uint8_t *outcome)
{
    uint32_t b = OSN_UAC_BIT(OSN_UAC_DO_ACK); /* RFC 3261 13.2.2.4: every 2xx, copies too */
    if (c->connected)
        return b;
    c->connected = true;
    b |= OSN_UAC_BIT(OSN_UAC_DO_DIALOG);
    /* RFC 3261 15: a 2xx that crossed the CANCEL set up a call nobody wants; the caller ACKs it
     * and hangs up at once. */
    if (c->gave_up)
        b |= OSN_UAC_BIT(OSN_UAC_DO_ARM);
    *outcome = decide(c, now - c->t0 <= timer_b ? OSN_UAC_GOOD : OSN_UAC_TIMEOUT);
    if (*outcome != OSN_UAC_PENDING)
        b |= OSN_UAC_BIT(OSN_UAC_DO_OUTCOME);
    return b;
}

uint8_t osn_uac_on_end(struct osn_uac_call *c, int tu, int status)
{
    if (tu == OSN_SIP_TU_TIMEOUT || tu == OSN_SIP_TU_TRANSPORT_ERROR)
        return decide(c, OSN_UAC_TIMEOUT);
    if (tu != OSN_SIP_TU_RESPONSE || status < 300)
        return OSN_UAC_PENDING;
    return decide(c, status == 503   ? OSN_UAC_REJECTED
                     : status == 408 ? OSN_UAC_TIMEOUT
                                     : OSN_UAC_OTHER);
}

void osn_uac_on_invite_event(struct osn_uac_call *c, double now, double timer_b, int tu, int status,
                             struct osn_uac_step *st)
{
    *st = (struct osn_uac_step){0};
    if (tu == OSN_SIP_TU_RESPONSE && status < 200) {
        double d = 0;
        uint32_t b = osn_uac_on_1xx(c, now, status, &d);
        st->cancel = b & OSN_UAC_BIT(OSN_UAC_DO_CANCEL);
        st->trying = b & OSN_UAC_BIT(OSN_UAC_DO_TRYING);
        st->setup = b & OSN_UAC_BIT(OSN_UAC_DO_SETUP);
        st->trying_delay = st->trying ? d : 0;
        st->setup_delay = st->setup ? d : 0;
    } else if (tu == OSN_SIP_TU_RESPONSE && status < 300) {
        uint8_t outcome = OSN_UAC_PENDING;
        uint32_t b = osn_uac_on_2xx(c, now, timer_b, &outcome);
        st->ack = true;
        st->connected = b & OSN_UAC_BIT(OSN_UAC_DO_DIALOG);
        st->hangup = b & OSN_UAC_BIT(OSN_UAC_DO_ARM);
        st->outcome = outcome;
    } else {
        st->outcome = osn_uac_on_end(c, tu, status);
    }
}

void osn_uac_on_patience(struct osn_uac_call *c, struct osn_uac_step *st)
{
    *st = (struct osn_uac_step){0};
    /* Answered already (a final response, or a 2xx even too late): nothing to give up. */
    if (c->outcome != OSN_UAC_PENDING || c->connected || c->gave_up)
        return;
    c->gave_up = true;
    /* RFC 3261 9.1: a CANCEL only after a provisional response; without one the caller waits
     * for it (osn_uac_on_invite_event) or for Timer B. */
    if (c->got1xx)
        st->cancel = true;
}

double osn_uac_patience_draw(const struct osn_uac_patience *p, uint64_t key, uint64_t origin,
                             unsigned retries)
{
    if (p->law == OSN_UAC_PATIENCE_DET)
        return p->mean; /* exact: no draw */
    if (p->law != OSN_UAC_PATIENCE_EXP && p->law != OSN_UAC_PATIENCE_LOGNORMAL)
        return INFINITY;
    struct osn_rng r;
    osn_rng_seed(&r, key ^ (origin * 128 + retries));
    if (p->law == OSN_UAC_PATIENCE_EXP)
        return -p->mean * log(osn_rng_u01_open(&r));
    double s2 = log1p(p->cv * p->cv);
    return exp(log(p->mean) - s2 / 2 + sqrt(s2) * osn_rng_normal(&r));
}

bool osn_uac_retry(const struct osn_uac_retry_cfg *cfg, const struct osn_uac_call *c, int outcome,
                   int retry_after, double u, double delay, double *wait)
{
    /* A 2xx set the call up, even one after Timer B: trying again would make a second call. */
    bool again = (outcome == OSN_UAC_REJECTED || outcome == OSN_UAC_TIMEOUT) && !c->connected;
    if (!cfg || !again || c->retries >= cfg->max_retries || !(u < cfg->prob))
        return false;
    /* RFC 3261 21.5.4: a client SHOULD NOT send to that server again within the Retry-After
     * of a 503; only a 503 carries one here (a timeout has no response, a 408 none). */
    if (cfg->honour_retry_after && outcome == OSN_UAC_REJECTED && retry_after >= 0 &&
        retry_after > delay)
        delay = retry_after;
    *wait = delay > 0 ? delay : 0;
    return true;
}

void osn_uac_ack(const struct osn_sip_msg *invite, uint64_t branch, uint64_t to_tag,
                 struct osn_sip_msg *ack)
{
    *ack = *invite;
    ack->method = OSN_SIP_ACK;
    ack->branch = branch;
    ack->to_tag = to_tag;
    ack->oc = (struct osn_sip_oc){0};
}

double osn_uac_profile_rate(const struct osn_uac_profile *p, double t, double *next_change)
{
    double r = p->rate, tn = INFINITY;
    for (int i = 0; i < p->nsteps; i++) {
        if (p->step_t[i] <= t)
            r = p->step_rate[i];
        else if (p->step_t[i] < tn)
            tn = p->step_t[i];
    }
    if (p->burst_len > 0) {
        if (t >= p->burst_t && t < p->burst_t + p->burst_len) {
            r *= p->burst_factor;
            if (p->burst_t + p->burst_len < tn)
                tn = p->burst_t + p->burst_len;
        } else if (t < p->burst_t && p->burst_t < tn) {
            tn = p->burst_t;
        }
    }
    *next_change = tn;
    return r;
}

int osn_uac_delay_bin(double d)
{
    int b = d < 2.0   ? (int)(d * 1000)
            : d < 64. ? OSN_UAC_DELAY_FINE + (int)((d - 2.0) * 10)
                      : OSN_UAC_DELAY_BINS - 1;
    if (b < 0)
        b = 0;
    if (b >= OSN_UAC_DELAY_BINS)
        b = OSN_UAC_DELAY_BINS - 1;
    return b;
}

double osn_uac_delay_bin_value(int b)
{
    return b < OSN_UAC_DELAY_FINE       ? (b + 0.5) * 1e-3
           : b < OSN_UAC_DELAY_BINS - 1 ? 2.0 + (b - OSN_UAC_DELAY_FINE + 0.5) * 0.1
                                        : 64.0;
}

double osn_uac_delay_quantile(const double h[OSN_UAC_DELAY_BINS], double q)
{
    double n = 0, acc = 0;
    for (int b = 0; b < OSN_UAC_DELAY_BINS; b++)
        n += h[b];
    if (n <= 0)
        return NAN;
    for (int b = 0; b < OSN_UAC_DELAY_BINS; b++) {
        acc += h[b];
        if (acc >= q * n)
            return osn_uac_delay_bin_value(b);
    }
    return 64.0;
}

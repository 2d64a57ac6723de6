/*
 * RFC 7339 overload-control parameters <-> the controllers' feedback.
 *
 * A server half (osn/ctl.h) states its feedback as numbers (struct osn_ctl_feedback); on the
 * wire it travels in the top Via of every response as oc, oc-validity, oc-seq and oc-algo
 * (RFC 7339 5.2), which the transaction layer carries as struct osn_sip_oc. The client half
 * reads it back from the responses of its next hop. The element code converts both ways here,
 * once for the simulator and the node.
 */
#include "osn/elem.h"

#include <math.h>

/* oc-seq travels as int.frac with five fraction digits. */
#define OC_SEQ_SCALE 100000
/* PI's retransmission ratio (0..1) travels as millionths in oc, with this oc-algo bit. */
#define OC_PI_SCALE 1e6
#define OC_ALGO_PI  0x80
/* oc is at most this (a 32-bit field; RFC 7339 sets no bound for rate). */
#define OC_VALUE_MAX 4e9

void osn_elem_fb_to_oc(const struct osn_ctl_feedback *fb, struct osn_sip_oc *oc)
{
    *oc = (struct osn_sip_oc){0};
    if (fb->algo == OSN_CTL_ALGO_NONE)
        return;
    oc->flags = OSN_SIP_OC_PRESENT | OSN_SIP_OC_VALUE | OSN_SIP_OC_ALGO | OSN_SIP_OC_SEQ;
    oc->algo = fb->algo == OSN_CTL_ALGO_LOSS   ? OSN_SIP_ALGO_LOSS
               : fb->algo == OSN_CTL_ALGO_RATE ? OSN_SIP_ALGO_RATE
                                               : OC_ALGO_PI;
    double v = fb->algo == OSN_CTL_ALGO_PI ? fb->oc * OC_PI_SCALE : fb->oc;
    /* v + 0.5 truncated is lround for 0 < v <= 4e9 (except for the double just below 0.5), and
     * it needs no libm call: this runs for every response the core sends. */
    oc->value = v > 0 ? (uint32_t)((v < OC_VALUE_MAX ? v : OC_VALUE_MAX) + 0.5) : 0;
    if (fb->validity >= 0) {
        oc->flags |= OSN_SIP_OC_VALIDITY;
        oc->validity_ms = (uint32_t)lround(fb->validity * 1000);
    }
    oc->seq_int = fb->seq / OC_SEQ_SCALE;
    oc->seq_frac = (uint32_t)(fb->seq % OC_SEQ_SCALE);
}

bool osn_elem_oc_to_fb(const struct osn_sip_oc *oc, struct osn_ctl_feedback *fb)
{
    if (!(oc->flags & OSN_SIP_OC_ALGO) || !(oc->flags & OSN_SIP_OC_VALUE))
        return false;
    fb->algo = oc->algo & OSN_SIP_ALGO_LOSS   ? OSN_CTL_ALGO_LOSS
               : oc->algo & OSN_SIP_ALGO_RATE ? OSN_CTL_ALGO_RATE
                                              : OSN_CTL_ALGO_PI;
    fb->oc = fb->algo == OSN_CTL_ALGO_PI ? oc->value / OC_PI_SCALE : (double)oc->value;
    fb->validity = oc->flags & OSN_SIP_OC_VALIDITY ? oc->validity_ms / 1000.0 : -1;
    fb->seq = oc->seq_int * OC_SEQ_SCALE + oc->seq_frac;
    return true;
}

void osn_elem_oc_offer(struct osn_sip_oc *oc)
{
    oc->flags = OSN_SIP_OC_PRESENT | OSN_SIP_OC_ALGO;
    oc->algo = OSN_SIP_ALGO_LOSS | OSN_SIP_ALGO_RATE;
}

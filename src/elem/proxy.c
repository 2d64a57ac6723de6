/*
 * The stateful proxy's transaction user (RFC 3261 16), with hop-by-hop overload control.
 *
 * A stateful proxy holds a server transaction toward its upstream neighbour and, for each request
 * it forwards, a client transaction toward its next hop. Its decisions, made here:
 *   - a new request: forward it once (RFC 3261 16.6), unless the client half for the next hop
 *     sheds it, in which case the proxy answers 503 itself (RFC 7339 5.3: a client that
 *     throttles rejects the request "as if" the server had); a copy that comes after the
 *     request's transaction ended is dropped;
 *   - a response from the next hop: 100 Trying ends there (RFC 3261 16.7 step 3; it feeds the
 *     PI controller's delay estimate), any other goes upstream on the server transaction;
 *   - a timeout of the next hop: 408 upstream while the server transaction still waits for a
 *     final response (RFC 3261 16.8);
 *   - the oc feedback in every response of the next hop goes to the client half (RFC 7339 5.2).
 *   - where a forwarded request goes (osn_proxy_route): loose routing by Route (16.4, 16.12),
 *     else the next hop; and whether it Record-Routes a dialog-creating INVITE (16.6 step 4).
 * How the request and the transactions are found, sent and timed is the driver's.
 */
#include "osn/elem.h"

enum osn_proxy_verdict osn_proxy_on_request(struct osn_ctl *cli, double now, int method,
                                            bool forwarded)
{
    if (forwarded)
        return OSN_PROXY_LATE_COPY;
    if (cli) {
        enum osn_ctl_msg k = method == OSN_SIP_INVITE ? OSN_CTL_MSG_INVITE : OSN_CTL_MSG_BYE;
        if (osn_ctl_client_admit(cli, now, k) == OSN_CTL_SHED_503)
            return OSN_PROXY_SHED_503;
    }
    return OSN_PROXY_FORWARD;
}

void osn_proxy_forward_request(const struct osn_sip_msg *in, uint64_t branch,
                               struct osn_sip_msg *out)
{
    *out = *in;
    out->branch = branch;
    out->oc = (struct osn_sip_oc){0};
}

enum osn_proxy_relay osn_proxy_on_client_event(struct osn_ctl *cli, double now, double t_sent,
                                               int tu, int status, int upstream_state)
{
    bool upstream = upstream_state != OSN_SIP_NOSTATE;
    if (tu == OSN_SIP_TU_RESPONSE) {
        if (status == 100) {
            if (cli)
                osn_ctl_client_on_delay(cli, now, now - t_sent);
            return OSN_PROXY_NOTHING;
        }
        return upstream ? OSN_PROXY_RELAY : OSN_PROXY_NOTHING;
    }
    /* RFC 3261 16.8: a timeout is a 408 from the branch; 16.9: a transport error a 503, which
     * (16.7 step 6) the proxy answers upstream as 500 when it is the only response. */
    if (tu == OSN_SIP_TU_TIMEOUT || tu == OSN_SIP_TU_TRANSPORT_ERROR)
        return !upstream || (upstream_state != OSN_SIP_PROCEEDING &&
                             upstream_state != OSN_SIP_TRYING)
                       ? OSN_PROXY_NOTHING
               : tu == OSN_SIP_TU_TIMEOUT ? OSN_PROXY_408
                                          : OSN_PROXY_500;
    return OSN_PROXY_NOTHING;
}

void osn_proxy_on_feedback(struct osn_ctl *cli, double now, const struct osn_sip_oc *oc)
{
    struct osn_ctl_feedback fb;
    if (cli && osn_elem_oc_to_fb(oc, &fb))
        osn_ctl_client_on_feedback(cli, now, &fb);
}

bool osn_proxy_retrans_allowed(struct osn_ctl *cli, double now, const struct osn_sip_msg *m)
{
    enum osn_ctl_msg kind =
            m->method == OSN_SIP_INVITE ? OSN_CTL_MSG_INVITE_RETX : OSN_CTL_MSG_NONINV_RETX;
    /* Only pi holds copies back (INVITE copies, and non-INVITE ones when control.pi_cap_noninvite
     * says so); every other controller sends them (RFC 6357 12). */
    return !cli || m->status != 0 || osn_ctl_client_admit(cli, now, kind) == OSN_CTL_SEND;
}

void osn_proxy_route(const struct osn_proxy_route_in *in, struct osn_proxy_route_out *out)
{
    *out = (struct osn_proxy_route_out){.target = OSN_PROXY_TO_NEXT_HOP};
    out->record_route = in->record_route && in->method == OSN_SIP_INVITE && !in->in_dialog;
    if (in->nroute <= 0)
        return;
    /* RFC 5658 5: a proxy that double Record-Routes removes both of its values. */
    out->pop = !in->top_is_us ? 0 : in->second_is_us && in->nroute > 1 ? 2 : 1;
    out->target = out->pop && in->nroute == out->pop ? OSN_PROXY_TO_URI : OSN_PROXY_TO_ROUTE;
}

int osn_proxy_record_routes(bool in_tcp, bool out_tcp, bool tcp[2])
{
    tcp[0] = out_tcp;
    tcp[1] = in_tcp;
    return in_tcp == out_tcp ? 1 : 2;
}

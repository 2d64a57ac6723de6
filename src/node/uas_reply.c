/*
 * What a uas's responses carry besides the copied headers, in bytes: the element decides which
 * (osn_uas_answer's OSN_ELEM_W_* bits, src/elem/uas.c), this writes them. Contact is our listen
 * address (the one in our Via); the session description is the RFC 3264 answer of src/sip/sdp.c
 * (first codec of each stream, every stream inactive: the node sends and receives no media), at
 * port 9 (discard), which nothing is meant to reach.
 */
#include <stdio.h>
#include <string.h>

#include "node_int.h"

#define MEDIA_PORT 9

static struct osn_sdp_local local_media(const struct node *n, const struct osn_sip_wire *req)
{
    /* SDP writes an IPv6 address bare, "IN IP6 ::1" (RFC 4566 5.7), not as SIP's "[::1]". */
    bool v6 = n->host[0] == '[';
    size_t len = strlen(n->host);
    return (struct osn_sdp_local){.addr = {n->host + v6, len - 2 * v6},
                                  .ip6 = v6,
                                  .port = MEDIA_PORT,
                                  .session_id =
                                          osn_sip_wire_hash(req->call_id.p, req->call_id.n) >> 1};
}

struct osn_uas_request uas_request_of(const struct node *n, const struct osn_sip_wire *req,
                                      uint64_t call_id)
{
    struct osn_uas_request q = {.method = req->method,
                                .in_dialog = req->to.tag.p != NULL,
                                .known = calls_has(&n->calls, call_id)};
    char sdp[UAS_SDP_MAX];
    struct osn_sdp_local l = local_media(n, req);
    q.offer = osn_sdp_offer_check(req->content_type, req->body);
    /* An offer whose answer would not fit is one we cannot answer: 488 like a malformed one. */
    if (q.offer == OSN_UAS_OFFER && osn_sdp_print_answer(sdp, sizeof sdp, req->body, &l) < 0)
        q.offer = OSN_UAS_MALFORMED;
    return q;
}

int uas_reply_fill(const struct node *n, const struct osn_sip_wire *req, int with,
                   struct osn_sip_reply *r, char contact[UAS_CONTACT_MAX], char sdp[UAS_SDP_MAX])
{
    if (with & OSN_ELEM_W_CONTACT) {
        int k = snprintf(contact, UAS_CONTACT_MAX, "sip:%s:%u", n->host, (unsigned)n->port);
        r->contact = (struct osn_span){contact, (size_t)k};
    }
    if (with & OSN_ELEM_W_ALLOW)
        r->allow = OSN_UAS_ALLOW;
    if (with & OSN_ELEM_W_CAPS) {
        r->accept = (struct osn_span){"application/sdp", 15};
        r->supported = (struct osn_span){"", 0}; /* present and empty: no extension */
    }
    if (with & OSN_ELEM_W_SDP) {
        struct osn_sdp_local l = local_media(n, req);
        int k = osn_sdp_print_answer(sdp, UAS_SDP_MAX, req->body, &l);
        if (k < 0)
            return k;
        r->body = (struct osn_span){sdp, (size_t)k};
        r->body_type = (struct osn_span){"application/sdp", 15};
    }
    return 0;
}

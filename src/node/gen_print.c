/*
 * The load generator's requests as SIP text: the INVITE that starts an attempt (with an SDP
 * offer, as SIPp's built-in uac sends), the ACK of its 2xx and the BYE that ends the call.
 *
 * A call's identities are numbers: its Call-ID is "SLOT.ATTEMPT.SALT@HOST" in hex, so that an
 * event of a client transaction finds its call from the Call-ID the transaction keeps (its key
 * text) without a table; the salt (the node's, random per run) tells our Call-IDs from any
 * other's. The ACK and the BYE are in the dialog the 2xx set up (RFC 3261 12.1.2): the From of
 * the INVITE, the To with the 2xx's tag, the Request-URI the 2xx's Contact (the remote target),
 * and a Route set from its Record-Route in reverse order; they are printed from the 2xx's parse,
 * so the generator keeps no copy of the dialog's headers.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "node_int.h"
#include "osn/err.h"

/* A media description without media: an offer RFC 4566 accepts (osn's uas checks it) and
 * SIPp's uas answers; port 6000 is never opened. */
#define SDP_OFFER                \
    "v=0\r\n"                    \
    "o=osn 1 1 IN IP4 %s\r\n"    \
    "s=-\r\n"                    \
    "c=IN IP4 %s\r\n"            \
    "t=0 0\r\n"                  \
    "m=audio 6000 RTP/AVP 0\r\n" \
    "a=rtpmap:0 PCMU/8000\r\n"

struct pbuf {
    char *p;
    size_t cap, n;
    bool full;
};

static void put(struct pbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = b->full ? -1 : vsnprintf(b->p + b->n, b->cap - b->n, fmt, ap);
    va_end(ap);
    if (k < 0 || (size_t)k >= b->cap - b->n)
        b->full = true;
    else
        b->n += (size_t)k;
}

static int done(const struct pbuf *b)
{
    return b->full ? OSN_ETOOBIG : (int)b->n;
}

static uint64_t from_tag(const struct gen_ids *id)
{
    return (id->salt ^ ((uint64_t)id->slot << 32 | id->gen)) * 0x9e3779b97f4a7c15ULL;
}

static void via(struct pbuf *b, const struct gen_ids *id)
{
    put(b, "Via: SIP/2.0/%s %s:%u;branch=z9hG4bK%016" PRIx64 "\r\nMax-Forwards: 70\r\n",
        id->tcp ? "TCP" : "UDP", id->host, (unsigned)id->port, id->branch);
}

int gen_print_invite(char *out, size_t cap, const struct gen_ids *id)
{
    char sdp[512];
    struct pbuf b = {out, cap, 0, false};
    int sn = snprintf(sdp, sizeof sdp, SDP_OFFER, id->host, id->host);
    if (sn < 0 || (size_t)sn >= sizeof sdp)
        return OSN_ETOOBIG;
    put(&b, "INVITE sip:service@%s SIP/2.0\r\n", id->peer);
    via(&b, id);
    put(&b, "From: <sip:osn@%s:%u>;tag=%016" PRIx64 "\r\n", id->host, (unsigned)id->port,
        from_tag(id));
    put(&b, "To: <sip:service@%s>\r\n", id->peer);
    put(&b, "Call-ID: %" PRIx32 ".%" PRIx32 ".%016" PRIx64 "@%s\r\n", id->slot, id->gen, id->salt,
        id->host);
    put(&b, "CSeq: 1 INVITE\r\nContact: <sip:osn@%s:%u>\r\n", id->host, (unsigned)id->port);
    put(&b, "Content-Type: application/sdp\r\nContent-Length: %d\r\n\r\n%s", sn, sdp);
    return done(&b);
}

/* An in-dialog request of the 2xx resp's dialog with CSeq `cseq` (RFC 3261 12.2.1.1). */
static int in_dialog(char *out, size_t cap, const struct gen_ids *id,
                     const struct osn_sip_wire *resp, const char *method, uint32_t cseq)
{
    struct pbuf b = {out, cap, 0, false};
    struct osn_span target = resp->ncontact > 0 ? resp->contact[0].uri : resp->to.uri;
    if (resp->from_hdr < 0 || resp->to_hdr < 0 || !target.n)
        return OSN_EINVAL;
    put(&b, "%s %.*s SIP/2.0\r\n", method, (int)target.n, target.p);
    via(&b, id);
    for (int i = resp->nrecord_route - 1; i >= 0; i--) /* 12.1.2: the route set, reversed */
        put(&b, "Route: %.*s\r\n", (int)resp->record_route[i].value.n,
            resp->record_route[i].value.p);
    put(&b, "From: %.*s\r\nTo: %.*s\r\nCall-ID: %.*s\r\nCSeq: %" PRIu32 " %s\r\n",
        (int)resp->from.value.n, resp->from.value.p, (int)resp->to.value.n, resp->to.value.p,
        (int)resp->call_id.n, resp->call_id.p, cseq, method);
    put(&b, "Content-Length: 0\r\n\r\n");
    return done(&b);
}

int gen_print_ack(char *out, size_t cap, const struct gen_ids *id, const struct osn_sip_wire *resp)
{
    /* 13.2.2.4: the ACK's CSeq number is the INVITE's. */
    return in_dialog(out, cap, id, resp, "ACK", resp->cseq);
}

int gen_print_bye(char *out, size_t cap, const struct gen_ids *id, const struct osn_sip_wire *resp)
{
    return in_dialog(out, cap, id, resp, "BYE", resp->cseq + 1);
}

/* The hex number at s[*i..), up to `stop`; false when there is none or it overflows. */
static bool hex_field(struct osn_span s, size_t *i, char stop, uint64_t *v)
{
    size_t start = *i;
    *v = 0;
    for (; *i < s.n && s.p[*i] != stop; (*i)++) {
        char c = s.p[*i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0 || *i - start >= 16)
            return false;
        *v = *v << 4 | (uint64_t)d;
    }
    if (*i == start || *i >= s.n)
        return false;
    (*i)++; /* the stop character */
    return true;
}

bool gen_call_id_parse(struct osn_span call_id, uint64_t salt, uint32_t *slot, uint32_t *gen)
{
    size_t i = 0;
    uint64_t a, g, s;
    if (!hex_field(call_id, &i, '.', &a) || !hex_field(call_id, &i, '.', &g) ||
        !hex_field(call_id, &i, '@', &s) || s != salt || a > UINT32_MAX || g > UINT32_MAX)
        return false;
    *slot = (uint32_t)a;
    *gen = (uint32_t)g;
    return true;
}

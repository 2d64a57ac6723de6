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
#include <string.h>

#include "../base/text.h"
#include "node_int.h"
#include "osn/err.h"

/* A media description without media: an offer RFC 4566 accepts (osn's uas checks it) and
 * SIPp's uas answers; port 6000 is never opened. Its two lines with the host are spliced. */
#define SDP_O    "v=0\r\no=osn 1 1 IN IP4 "
#define SDP_C    "\r\ns=-\r\nc=IN IP4 "
#define SDP_TAIL "\r\nt=0 0\r\nm=audio 6000 RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\n"

/* Printed with the tree's bounded writer (src/base/text.h), not printf: the generator prints
 * three requests a call, and formatting them with printf cost about a tenth of its instructions
 * (callgrind, bench/gen_callgrind.sh). */
#define PUTL(b, lit) OSN_TEXT_LIT(b, lit)

static void putsp(struct osn_text *b, struct osn_span s)
{
    osn_text_put(b, s.p, s.n);
}

/* The request's length, or OSN_ETOOBIG when it did not fit. */
static int done(const struct osn_text *b, const char *out)
{
    int n = osn_text_len(b, out);
    return n < 0 ? OSN_ETOOBIG : n;
}

static uint64_t from_tag(const struct gen_ids *id)
{
    return (id->salt ^ ((uint64_t)id->slot << 32 | id->gen)) * 0x9e3779b97f4a7c15ULL;
}

static void via(struct osn_text *b, const struct gen_ids *id)
{
    PUTL(b, "Via: SIP/2.0/");
    osn_text_puts(b, id->tcp ? "TCP " : "UDP ");
    osn_text_puts(b, id->host);
    PUTL(b, ":");
    osn_text_dec(b, id->port, 0);
    PUTL(b, ";branch=z9hG4bK");
    osn_text_hex(b, id->branch, 16);
    if (id->oc) /* RFC 7339 5.1, as a proxy's client half offers it (osn_elem_oc_offer) */
        PUTL(b, ";oc;oc-algo=\"loss,rate\"");
    PUTL(b, "\r\nMax-Forwards: 70\r\n");
}

/* host:port of our Contact and From. */
static void us(struct osn_text *b, const struct gen_ids *id)
{
    osn_text_puts(b, id->host);
    PUTL(b, ":");
    osn_text_dec(b, id->port, 0);
}

int gen_print_invite(char *out, size_t cap, const struct gen_ids *id)
{
    struct osn_text b = osn_text_at(out, cap);
    size_t host_n = strlen(id->host);
    size_t sdp_n = sizeof SDP_O - 1 + host_n + sizeof SDP_C - 1 + host_n + sizeof SDP_TAIL - 1;
    PUTL(&b, "INVITE sip:service@");
    osn_text_puts(&b, id->peer);
    PUTL(&b, " SIP/2.0\r\n");
    via(&b, id);
    PUTL(&b, "From: <sip:osn@");
    us(&b, id);
    PUTL(&b, ">;tag=");
    osn_text_hex(&b, from_tag(id), 16);
    PUTL(&b, "\r\nTo: <sip:service@");
    osn_text_puts(&b, id->peer);
    PUTL(&b, ">\r\nCall-ID: ");
    osn_text_hex(&b, id->slot, 0);
    PUTL(&b, ".");
    osn_text_hex(&b, id->gen, 0);
    PUTL(&b, ".");
    osn_text_hex(&b, id->salt, 16);
    PUTL(&b, "@");
    osn_text_puts(&b, id->host);
    PUTL(&b, "\r\nCSeq: 1 INVITE\r\nContact: <sip:osn@");
    us(&b, id);
    PUTL(&b, ">\r\nContent-Type: application/sdp\r\nContent-Length: ");
    osn_text_dec(&b, sdp_n, 0);
    PUTL(&b, "\r\n\r\n" SDP_O);
    osn_text_put(&b, id->host, host_n);
    PUTL(&b, SDP_C);
    osn_text_put(&b, id->host, host_n);
    PUTL(&b, SDP_TAIL);
    return done(&b, out);
}

/* An in-dialog request of the 2xx resp's dialog with CSeq `cseq` (RFC 3261 12.2.1.1). */
static int in_dialog(char *out, size_t cap, const struct gen_ids *id,
                     const struct osn_sip_wire *resp, const char *method, uint32_t cseq)
{
    struct osn_text b = osn_text_at(out, cap);
    struct osn_span target = resp->ncontact > 0 ? resp->contact[0].uri : resp->to.uri;
    if (resp->from_hdr < 0 || resp->to_hdr < 0 || !target.n)
        return OSN_EINVAL;
    osn_text_puts(&b, method);
    PUTL(&b, " ");
    putsp(&b, target);
    PUTL(&b, " SIP/2.0\r\n");
    via(&b, id);
    for (int i = resp->nrecord_route - 1; i >= 0; i--) { /* 12.1.2: the route set, reversed */
        PUTL(&b, "Route: ");
        putsp(&b, resp->record_route[i].value);
        PUTL(&b, "\r\n");
    }
    PUTL(&b, "From: ");
    putsp(&b, resp->from.value);
    PUTL(&b, "\r\nTo: ");
    putsp(&b, resp->to.value);
    PUTL(&b, "\r\nCall-ID: ");
    putsp(&b, resp->call_id);
    PUTL(&b, "\r\nCSeq: ");
    osn_text_dec(&b, cseq, 0);
    PUTL(&b, " ");
    osn_text_puts(&b, method);
    PUTL(&b, "\r\nContent-Length: 0\r\n\r\n");
    return done(&b, out);
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

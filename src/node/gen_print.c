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

#include "node_int.h"
#include "osn/err.h"

/* A media description without media: an offer RFC 4566 accepts (osn's uas checks it) and
 * SIPp's uas answers; port 6000 is never opened. Its two lines with the host are spliced. */
#define SDP_O    "v=0\r\no=osn 1 1 IN IP4 "
#define SDP_C    "\r\ns=-\r\nc=IN IP4 "
#define SDP_TAIL "\r\nt=0 0\r\nm=audio 6000 RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\n"

/* A bounded writer of strings and numbers without vfprintf: the generator prints three
 * requests a call, and formatting them with printf cost about a tenth of its instructions
 * (callgrind, bench/gen_callgrind.sh). Running out of room sets `full`; done() then says so. */
struct pbuf {
    char *p;
    size_t cap, n;
    bool full;
};

static void put(struct pbuf *b, const char *s, size_t k)
{
    if (b->full || b->cap - b->n < k) {
        b->full = true;
        return;
    }
    memcpy(b->p + b->n, s, k);
    b->n += k;
}

#define PUTL(b, lit) put((b), (lit), sizeof(lit) - 1)

static void puts_(struct pbuf *b, const char *s)
{
    put(b, s, strlen(s));
}

static void putsp(struct pbuf *b, struct osn_span s)
{
    put(b, s.p, s.n);
}

/* x in lower-case hex: `width` digits with leading zeros, or as few as it needs when 0. */
static void puthex(struct pbuf *b, uint64_t x, int width)
{
    char d[16];
    int i = 16;
    do {
        d[--i] = "0123456789abcdef"[x & 15];
        x >>= 4;
    } while ((x || 16 - i < width) && i > 0);
    put(b, d + i, (size_t)(16 - i));
}

static void putu(struct pbuf *b, uint64_t x)
{
    char d[20];
    int i = 20;
    do {
        d[--i] = (char)('0' + x % 10);
        x /= 10;
    } while (x);
    put(b, d + i, (size_t)(20 - i));
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
    PUTL(b, "Via: SIP/2.0/");
    puts_(b, id->tcp ? "TCP " : "UDP ");
    puts_(b, id->host);
    PUTL(b, ":");
    putu(b, id->port);
    PUTL(b, ";branch=z9hG4bK");
    puthex(b, id->branch, 16);
    if (id->oc) /* RFC 7339 5.1, as a proxy's client half offers it (osn_elem_oc_offer) */
        PUTL(b, ";oc;oc-algo=\"loss,rate\"");
    PUTL(b, "\r\nMax-Forwards: 70\r\n");
}

/* host:port of our Contact and From. */
static void us(struct pbuf *b, const struct gen_ids *id)
{
    puts_(b, id->host);
    PUTL(b, ":");
    putu(b, id->port);
}

int gen_print_invite(char *out, size_t cap, const struct gen_ids *id)
{
    struct pbuf b = {out, cap, 0, false};
    size_t host_n = strlen(id->host);
    size_t sdp_n = sizeof SDP_O - 1 + host_n + sizeof SDP_C - 1 + host_n + sizeof SDP_TAIL - 1;
    PUTL(&b, "INVITE sip:service@");
    puts_(&b, id->peer);
    PUTL(&b, " SIP/2.0\r\n");
    via(&b, id);
    PUTL(&b, "From: <sip:osn@");
    us(&b, id);
    PUTL(&b, ">;tag=");
    puthex(&b, from_tag(id), 16);
    PUTL(&b, "\r\nTo: <sip:service@");
    puts_(&b, id->peer);
    PUTL(&b, ">\r\nCall-ID: ");
    puthex(&b, id->slot, 0);
    PUTL(&b, ".");
    puthex(&b, id->gen, 0);
    PUTL(&b, ".");
    puthex(&b, id->salt, 16);
    PUTL(&b, "@");
    puts_(&b, id->host);
    PUTL(&b, "\r\nCSeq: 1 INVITE\r\nContact: <sip:osn@");
    us(&b, id);
    PUTL(&b, ">\r\nContent-Type: application/sdp\r\nContent-Length: ");
    putu(&b, sdp_n);
    PUTL(&b, "\r\n\r\n" SDP_O);
    put(&b, id->host, host_n);
    PUTL(&b, SDP_C);
    put(&b, id->host, host_n);
    PUTL(&b, SDP_TAIL);
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
    puts_(&b, method);
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
    putu(&b, cseq);
    PUTL(&b, " ");
    puts_(&b, method);
    PUTL(&b, "\r\nContent-Length: 0\r\n\r\n");
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

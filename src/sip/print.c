/*
 * The SIP message printer: what a stateful proxy (RFC 3261 16.6, 16.7) and a UAS (8.2.6)
 * send, built from a parsed message plus the few things that change. Lines that do not change
 * are copied byte for byte from the received datagram (folds, case and compact names included),
 * which is both faster than re-serialising and safer: a value this parser reads leniently is
 * passed on as it came, never rewritten from a half-understood model.
 *
 * Every write goes through a bounded writer; running out of room sets a flag and the printer
 * returns OSN_ETOOBIG, so a caller buffer of any size is safe.
 */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "osn/err.h"
#include "sip_wire_int.h"
#include "writer.h"

/* The header section's end and the body, as received (Content-Length is unchanged). */
static void tail(struct osn_text *w, const struct osn_sip_wire *m)
{
    puts_(w, "\r\n");
    putsp(w, m->body);
}

/* The text of header i's value from `from` (a position inside it) to its end, as a new line
 * "Name: ...": what remains of a list header once its first value is removed. */
static void rest_of(struct osn_text *w, const struct osn_sip_wire *m, int i, const char *from)
{
    const struct osn_sip_hdr *h = &m->hdr[i];
    puts_(w, osn_sip_hdr_name(h->id));
    puts_(w, ": ");
    put(w, from, (size_t)(h->value.p + h->value.n - from));
    puts_(w, "\r\n");
}

/* RFC 7339 parameters (oc, oc-validity, oc-seq, oc-algo) as flags say. */
static void put_oc(struct osn_text *w, const struct osn_sip_oc *oc)
{
    if (oc->flags & OSN_SIP_OC_PRESENT) {
        puts_(w, ";oc");
        if (oc->flags & OSN_SIP_OC_VALUE) {
            puts_(w, "=");
            putu(w, oc->value);
        }
    }
    if (oc->flags & OSN_SIP_OC_VALIDITY) {
        puts_(w, ";oc-validity=");
        putu(w, oc->validity_ms);
    }
    if (oc->flags & OSN_SIP_OC_SEQ) {
        puts_(w, ";oc-seq=");
        putu(w, oc->seq_int);
        puts_(w, ".");
        putu_w(w, oc->seq_frac % 100000, 5);
    }
    if (oc->flags & OSN_SIP_OC_ALGO) {
        puts_(w, ";oc-algo=\"");
        bool first = true;
        if (oc->algo & OSN_SIP_ALGO_LOSS) {
            puts_(w, "loss");
            first = false;
        }
        if (oc->algo & OSN_SIP_ALGO_RATE)
            puts_(w, first ? "rate" : ",rate");
        puts_(w, "\"");
    }
}

/* Text [p, end) of Via v, with "=rport" after a valueless rport parameter in it (RFC 3581 4;
 * rport 0: none). */
static void put_via_text(struct osn_text *w, const struct osn_sip_via *v, const char *p,
                         const char *end, uint16_t rport)
{
    const char *at = v->rport_value.p;
    if (rport && v->rport && at && !v->rport_value.n && at > p && at <= end) {
        put(w, p, (size_t)(at - p));
        puts_(w, "=");
        putu(w, rport);
        p = at;
    }
    put(w, p, (size_t)(end - p));
}

/* Whether header line i holds one of the first `pop` Route values of m. */
static bool route_line(const struct osn_sip_wire *m, int i, int pop)
{
    for (int k = 0; k < pop; k++)
        if (m->route[k].hdr == i)
            return true;
    return false;
}

/* With ln, notes that header line `src` of the request (-1: new text) starts here. */
static void mark(struct osn__sip_lines *ln, const struct osn_text *w, const char *out, int src)
{
    if (!ln || ln->over)
        return;
    if (ln->n >= OSN_SIP_WIRE_MAX_HDRS) { /* the first line too many: a parse stops here */
        ln->at[ln->n] = (uint32_t)(w->p - out);
        ln->over = true;
        return;
    }
    ln->at[ln->n] = (uint32_t)(w->p - out);
    ln->src[ln->n++] = (int16_t)src;
}

/* osn_sip_wire_print_forward; with ln, where each header line came from. */
static int print_forward(char *out, size_t cap, const struct osn_sip_wire *req,
                         const struct osn_sip_fwd *f, struct osn__sip_lines *ln)
{
    if (!out || !req || !f || !req->is_request || req->err.verdict != OSN_SIP_WIRE_ACCEPT ||
        req->max_forwards == 0 || !f->host.n || !f->branch.n || !f->transport.n)
        return OSN_EINVAL;
    struct osn_text w = osn_text_at(out, cap);
    putsp(&w, req->start_line);
    puts_(&w, "\r\n");
    mark(ln, &w, out, OSN__SIP_LINE_VIA);
    puts_(&w, "Via: SIP/2.0/");
    putsp(&w, f->transport);
    puts_(&w, " ");
    putsp(&w, f->host);
    if (f->port) {
        puts_(&w, ":");
        putu(&w, f->port);
    }
    puts_(&w, ";branch=");
    putsp(&w, f->branch);
    put_oc(&w, &f->oc);
    puts_(&w, "\r\n");
    if (req->max_forwards < 0) {
        mark(ln, &w, out, OSN__SIP_LINE_MAXFWD);
        puts_(&w, "Max-Forwards: 70\r\n"); /* RFC 3261 16.6 step 3 */
    }
    int pop = f->pop_route < req->nroute ? f->pop_route : req->nroute;
    /* 16.6 step 4: ours goes above the values already there (the order of a field's values
     * is kept, 7.3.1), so the UAS's route set lists the proxies nearest it first: just before
     * the first Record-Route line, or after the last header when there is none. The other
     * lines keep their places (the Vias stay together). */
    int rr_at =
            f->record_route.n ? (req->nrecord_route ? req->record_route[0].hdr : req->nhdr) : -1;
    for (int i = 0; i <= req->nhdr; i++) {
        if (i == rr_at) {
            mark(ln, &w, out, OSN__SIP_LINE_RR);
            puts_(&w, "Record-Route: <");
            putsp(&w, f->record_route);
            puts_(&w, ">\r\n");
            if (f->record_route2.n) { /* RFC 5658 4: the incoming leg's, below */
                mark(ln, &w, out, OSN__SIP_LINE_RR2);
                puts_(&w, "Record-Route: <");
                putsp(&w, f->record_route2);
                puts_(&w, ">\r\n");
            }
        }
        if (i == req->nhdr)
            break;
        const struct osn_sip_hdr *h = &req->hdr[i];
        if (h->id == OSN_SIP_HDR_MAX_FORWARDS) {
            mark(ln, &w, out, OSN__SIP_LINE_MAXFWD);
            puts_(&w, "Max-Forwards: ");
            putu(&w, (uint64_t)(req->max_forwards - 1));
            puts_(&w, "\r\n");
        } else if ((f->via_received.n || f->via_rport) && req->nvia > 0 && req->via[0].hdr == i) {
            /* RFC 3261 16.6 step 8: the received top Via goes on with what our transport
             * added to it (18.2.1 received, RFC 3581 rport). */
            const struct osn_sip_via *v = &req->via[0];
            mark(ln, &w, out, -1);
            puts_(&w, "Via: ");
            put_via_text(&w, v, v->value.p, v->value.p + v->value.n, f->via_rport);
            putsp(&w, f->via_received);
            puts_(&w, "\r\n");
            if (req->nvia > 1 && req->via[1].hdr == i) {
                mark(ln, &w, out, -1);
                rest_of(&w, req, i, req->via[1].value.p);
            }
        } else if (pop && route_line(req, i, pop)) {
            /* 16.4: the top Route values name us (RFC 5658 5: both of a double Record-Route);
             * the rest of a line that held one stays. */
            if (pop < req->nroute && req->route[pop].hdr == i) {
                mark(ln, &w, out, -1);
                rest_of(&w, req, i, req->route[pop].value.p);
            }
        } else {
            mark(ln, &w, out, i);
            putsp(&w, h->line);
        }
    }
    if (ln && !ln->over)
        ln->at[ln->n] = (uint32_t)(w.p - out);
    tail(&w, req);
    return done(&w, out);
}

int osn_sip_wire_print_forward(char *out, size_t cap, const struct osn_sip_wire *req,
                               const struct osn_sip_fwd *f)
{
    return print_forward(out, cap, req, f, NULL);
}

#ifndef NDEBUG
/* Debug builds (the sanitizer stage of make check, the fuzzers) compare every derived parse with
 * a parse of the printed bytes in the same role (a proxy's parse leaves fields absent that a full
 * one fills): the derivation stands in for a parse, so it must equal one, on every message a
 * test or a fuzzer makes. */
static void check_derived(const struct osn_sip_wire *fm, const char *out, size_t len)
{
    struct osn_sip_wire *p = malloc(sizeof *p);
    assert(p);
    int verdict = osn_sip_wire_parse_as(p, out, len, fm->role);
    assert(verdict == fm->err.verdict);
    assert(verdict != OSN_SIP_WIRE_ACCEPT || osn_sip_wire_same(fm, p));
    free(p);
}
#endif

int osn_sip_wire_print_forward_parsed(char *out, size_t cap, const struct osn_sip_wire *req,
                                      const struct osn_sip_fwd *f, struct osn_sip_wire *fm)
{
    struct osn__sip_lines ln;
    ln.n = 0;
    ln.over = false;
    ln.fwd = f;
    int len = fm ? print_forward(out, cap, req, f, &ln) : OSN_EINVAL;
    if (len > 0) {
        osn__sip_wire_derive(fm, out, (size_t)len, req, &ln);
#ifndef NDEBUG
        check_derived(fm, out, (size_t)len);
#endif
    }
    return len;
}

/* Via value k without its oc parameters, then `received` (";received=ADDR", or empty) and the
 * new oc ones, as a line of its own; a valueless rport gets the value rport (0: none). */
static void put_via_oc(struct osn_text *w, const struct osn_sip_wire *m, int k,
                       const struct osn_sip_oc *oc, struct osn_span received, uint16_t rport)
{
    const struct osn_sip_via *v = &m->via[k];
    const char *cur = v->value.p, *vend = v->value.p + v->value.n;
    puts_(w, "Via: ");
    for (;;) {
        const char *next = NULL;
        size_t len = 0;
        for (int j = 0; j < 4; j++) {
            const char *s = m->buf.p + v->oc_at[j];
            if (v->oc_len[j] && s >= cur && (!next || s < next)) {
                next = s;
                len = v->oc_len[j];
            }
        }
        if (!next)
            break;
        put_via_text(w, v, cur, next, rport);
        cur = next + len;
    }
    put_via_text(w, v, cur, vend, rport);
    putsp(w, received);
    put_oc(w, oc);
    puts_(w, "\r\n");
}

/* 16.7 step 3: resp without its top Via value (ours). With oc, the Via that comes on top gets
 * those parameters instead of its own (RFC 7339 5.2: the server half's feedback); without, it
 * and everything else stay as they came. */
static int print_response_fwd(char *out, size_t cap, const struct osn_sip_wire *resp,
                              const struct osn_sip_oc *oc)
{
    if (!out || !resp || resp->is_request || resp->err.verdict != OSN_SIP_WIRE_ACCEPT ||
        resp->nvia < 2)
        return OSN_EINVAL;
    struct osn_text w = osn_text_at(out, cap);
    putsp(&w, resp->start_line);
    puts_(&w, "\r\n");
    for (int i = 0; i < resp->nhdr; i++) {
        const struct osn_sip_hdr *h = &resp->hdr[i];
        bool top = resp->via[0].hdr == i, second = resp->via[1].hdr == i;
        if (oc && second) {
            put_via_oc(&w, resp, 1, oc, (struct osn_span){0}, 0); /* the rest of its line stays */
            if (resp->nvia > 2 && resp->via[2].hdr == i)
                rest_of(&w, resp, i, resp->via[2].value.p);
        } else if (top && second) {
            rest_of(&w, resp, i, resp->via[1].value.p);
        } else if (!top) {
            putsp(&w, h->line);
        }
    }
    tail(&w, resp);
    return done(&w, out);
}

int osn_sip_wire_print_response_fwd(char *out, size_t cap, const struct osn_sip_wire *resp)
{
    return print_response_fwd(out, cap, resp, NULL);
}

int osn_sip_wire_print_response_fwd_oc(char *out, size_t cap, const struct osn_sip_wire *resp,
                                       const struct osn_sip_oc *oc)
{
    return oc ? print_response_fwd(out, cap, resp, oc) : OSN_EINVAL;
}

/* "Via: SIP/2.0/TRANSPORT host[:port][;branch=...]" from a top Via whose line holds a syntax
 * error after its sent-by: enough to route the answer, and nothing of the broken part. */
static void top_via_parsed(struct osn_text *w, const struct osn_sip_via *v)
{
    puts_(w, "Via: SIP/2.0/");
    putsp(w, v->transport.n ? v->transport : (struct osn_span){"UDP", 3});
    puts_(w, " ");
    putsp(w, v->host);
    if (v->port) {
        puts_(w, ":");
        putu(w, v->port);
    }
    if (v->branch.n) {
        puts_(w, ";branch=");
        putsp(w, v->branch);
    }
    puts_(w, "\r\n");
}

/* The lines a UA adds to its response (Contact, Allow, Accept, Supported), as r asks. */
static void ua_headers(struct osn_text *w, const struct osn_sip_reply *r)
{
    static const char *const names[OSN_SIP_NMETHODS] = {
            [OSN_SIP_INVITE] = "INVITE",   [OSN_SIP_ACK] = "ACK",
            [OSN_SIP_BYE] = "BYE",         [OSN_SIP_CANCEL] = "CANCEL",
            [OSN_SIP_OPTIONS] = "OPTIONS", [OSN_SIP_REGISTER] = "REGISTER"};
    if (r->contact.n) {
        puts_(w, "Contact: <");
        putsp(w, r->contact);
        puts_(w, ">\r\n");
    }
    if (r->allow) {
        const char *sep = "Allow: ";
        for (int k = 0; k < OSN_SIP_NMETHODS; k++)
            if ((r->allow >> k & 1) && names[k]) {
                puts_(w, sep);
                puts_(w, names[k]);
                sep = ", ";
            }
        puts_(w, "\r\n");
    }
    if (r->accept.p) {
        puts_(w, "Accept: ");
        putsp(w, r->accept);
        puts_(w, "\r\n");
    }
    if (r->supported.p) {
        puts_(w, r->supported.n ? "Supported: " : "Supported:"); /* empty: none (20.37) */
        putsp(w, r->supported);
        puts_(w, "\r\n");
    }
}

int osn_sip_wire_print_reply(char *out, size_t cap, const struct osn_sip_wire *req,
                             const struct osn_sip_reply *r)
{
    if (!out || !req || !r || !req->is_request || r->status < 100 || r->status > 699 ||
        req->nvia == 0 || req->method == OSN_SIP_ACK)
        return OSN_EINVAL;
    bool ok = req->err.verdict == OSN_SIP_WIRE_ACCEPT;
    /* A malformed request is answered only when its verdict says so; its top Via may not have
     * parsed to the end, so no oc parameters go in. */
    if (!ok && (req->err.verdict != OSN_SIP_WIRE_ANSWER || r->oc.flags))
        return OSN_EINVAL;
    /* Of a malformed request, From, To, Call-ID and CSeq are copied only from lines that end
     * before its first error (they parsed), and a Via line only when the error is not in it
     * (the Vias route the answer back, and one that could answer has a top Via that parsed):
     * what the sender broke, or crafted, is not sent back. */
    const char *err_at = ok ? NULL : req->buf.p + req->err.offset;
    struct osn_text w = osn_text_at(out, cap);
    const char *reason = r->reason ? r->reason : osn_sip_reason_phrase(r->status);
    puts_(&w, "SIP/2.0 ");
    putu(&w, r->status);
    puts_(&w, " ");
    puts_(&w, reason);
    if (!ok && !r->reason && req->err.reason != OSN_SIP_WIRE_OK) {
        /* RFC 3261 21.4.1: the phrase names the problem ("Bad Request (CSeq malformed)"). */
        puts_(&w, " (");
        puts_(&w, osn_sip_wire_reason_name(req->err.reason));
        puts_(&w, ")");
    }
    puts_(&w, "\r\n");
    for (int i = 0; i < req->nhdr; i++) {
        const struct osn_sip_hdr *h = &req->hdr[i];
        bool has_err = err_at && h->line.p <= err_at && err_at < h->line.p + h->line.n;
        if (has_err && h->id == OSN_SIP_HDR_VIA && req->via[0].hdr == i) {
            top_via_parsed(&w, &req->via[0]); /* the error is in the Via line: its parsed part */
            continue;
        }
        if (has_err || (err_at && h->id != OSN_SIP_HDR_VIA && h->line.p + h->line.n > err_at))
            continue;
        switch (h->id) {
        case OSN_SIP_HDR_VIA:
            if ((r->oc.flags || r->via_received.n || r->via_rport) && req->via[0].hdr == i) {
                put_via_oc(&w, req, 0, &r->oc, r->via_received, r->via_rport);
                if (req->nvia > 1 && req->via[1].hdr == i)
                    rest_of(&w, req, i, req->via[1].value.p);
            } else
                putsp(&w, h->line);
            break;
        case OSN_SIP_HDR_TO:
            /* 8.2.6.2: a UAS adds a tag to To when there is none (not on 100). */
            if (ok && i == req->to_hdr && !req->to.tag.p && r->status > 100 && r->to_tag.n) {
                put(&w, h->line.p, (size_t)(h->value.p + h->value.n - h->line.p));
                puts_(&w, ";tag=");
                putsp(&w, r->to_tag);
                puts_(&w, "\r\n");
            } else
                putsp(&w, h->line);
            break;
        case OSN_SIP_HDR_FROM:
        case OSN_SIP_HDR_CALL_ID:
        case OSN_SIP_HDR_CSEQ:
            putsp(&w, h->line);
            break;
        case OSN_SIP_HDR_TIMESTAMP:
            if (r->status == 100)
                putsp(&w, h->line); /* 8.2.6.1 */
            break;
        case OSN_SIP_HDR_RECORD_ROUTE:
            if (r->status > 100 && r->status < 300)
                putsp(&w, h->line); /* 12.1.1 */
            break;
        default:
            break;
        }
    }
    ua_headers(&w, r);
    if (r->retry_after >= 0) {
        puts_(&w, "Retry-After: ");
        putu(&w, (uint64_t)(r->retry_after > UINT32_MAX ? UINT32_MAX : r->retry_after));
        puts_(&w, "\r\n");
    }
    if (r->body.n) {
        puts_(&w, "Content-Type: ");
        putsp(&w, r->body_type);
        puts_(&w, "\r\n");
    }
    puts_(&w, "Content-Length: ");
    putu(&w, r->body.n);
    puts_(&w, "\r\n\r\n");
    putsp(&w, r->body);
    return done(&w, out);
}

/* A request that goes hop by hop with an INVITE's own transaction key: its Request-URI, top
 * Via, Route, From and Call-ID, the To line given, and the INVITE's CSeq number with `method`
 * (RFC 3261 17.1.1.3 for the ACK of a non-2xx, 9.1 for a CANCEL). */
static int print_hop_request(char *out, size_t cap, const char *method,
                             const struct osn_sip_wire *req, struct osn_span to_line)
{
    struct osn_text w = osn_text_at(out, cap);
    puts_(&w, method);
    puts_(&w, " ");
    putsp(&w, req->uri);
    puts_(&w, " SIP/2.0\r\nVia: ");
    putsp(&w, req->via[0].value);
    puts_(&w, "\r\n");
    for (int i = 0; i < req->nhdr; i++) {
        const struct osn_sip_hdr *h = &req->hdr[i];
        if (h->id == OSN_SIP_HDR_ROUTE || i == req->from_hdr || i == req->call_id_hdr)
            putsp(&w, h->line);
    }
    putsp(&w, to_line);
    puts_(&w, "CSeq: ");
    putu(&w, req->cseq);
    puts_(&w, " ");
    puts_(&w, method);
    puts_(&w, "\r\nMax-Forwards: ");
    putu(&w, req->max_forwards >= 0 ? (uint64_t)req->max_forwards : 70);
    puts_(&w, "\r\nContent-Length: 0\r\n\r\n");
    return done(&w, out);
}

static bool accepted_invite(const struct osn_sip_wire *req)
{
    return req->is_request && req->method == OSN_SIP_INVITE &&
           req->err.verdict == OSN_SIP_WIRE_ACCEPT;
}

int osn_sip_wire_print_ack(char *out, size_t cap, const struct osn_sip_wire *req,
                           const struct osn_sip_wire *resp)
{
    /* The To of the response: it carries the tag of the UAS that refused (17.1.1.3). */
    if (!out || !req || !resp || !accepted_invite(req) || resp->is_request || resp->status < 300 ||
        resp->err.verdict != OSN_SIP_WIRE_ACCEPT)
        return OSN_EINVAL;
    return print_hop_request(out, cap, "ACK", req, resp->hdr[resp->to_hdr].line);
}

int osn_sip_wire_print_cancel(char *out, size_t cap, const struct osn_sip_wire *req)
{
    /* The request's own To, tag included (9.1). */
    if (!out || !req || !accepted_invite(req))
        return OSN_EINVAL;
    return print_hop_request(out, cap, "CANCEL", req, req->hdr[req->to_hdr].line);
}

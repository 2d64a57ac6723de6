/*
 * SIP messages on the wire: a zero-copy parser of one datagram into a message view, the keyed
 * identities that connect a parsed message to the numeric transaction layer of osn/sip.h, and a
 * printer that builds what a stateful proxy and a UAS send from a parsed message plus changes.
 *
 * Zero copy. Every text field is a struct osn_span into the caller's buffer, which must outlive
 * the view and must not change while the view is in use. Nothing is allocated: the view holds
 * fixed arrays (OSN_SIP_WIRE_MAX_*); a message that needs more is malformed (reason
 * OSN_SIP_WIRE_ECAP), never a crash or a silent truncation. A struct osn_sip_wire is large (about
 * 31 KB), so a server parses into one per worker and keeps what it must keep as a packed copy
 * of a few hundred bytes (osn_sip_wire_pack); parsing writes only the counts and the fields it
 * fills, so reusing one costs nothing.
 *
 * Grammar. RFC 3261 7 and 25: header names are case-insensitive and the compact forms of 7.3.3
 * and RFC 3841/3265/3515/3903 (v i f t m l c k s e o u r, plus a b j d x y n) map to the same
 * ids; line folding (CRLF followed by SP or HTAB, 7.3.1) is whitespace inside a value; unknown
 * headers are kept verbatim, in order. A line may end in CRLF or, leniently, a bare LF; a bare
 * CR anywhere in the head is malformed. The body is Content-Length octets; extra octets after it
 * in the datagram are ignored (RFC 3261 18.3, RFC 4475 3.1.1.8); without Content-Length the body
 * is the rest of the datagram (18.3, message-oriented transports).
 *
 * Verdict. A malformed message gets an enum reason and the byte offset of the first error. A
 * request whose start line named a method and whose top Via gave a sent-by can be answered (400,
 * or 505 for an unknown SIP version): RFC 3261 18.2.2 needs only the top Via to route the answer,
 * and the answer copies whatever From, To, Call-ID and CSeq lines there are (RFC 4475 3.3.1 asks
 * for a 400 even when From, To and Call-ID are missing). Everything else (a malformed response,
 * a malformed ACK, which gets no response in RFC 3261 17, a request without a usable Via,
 * garbage) is dropped silently.
 *
 * Identities. The transaction layer (osn/sip.h) keys transactions by 64-bit numbers. Here they
 * are SipHash-1-3 values of the text under a per-process random key (getrandom), so that nobody
 * outside can aim many branches at one table bucket. A 64-bit hash can still collide, so a node
 * keeps the text of each transaction's key (osn_sip_wire_key_of, osn_sip_wire_key_copy) and, when
 * the table returns a transaction, confirms it with osn_sip_wire_key_eq: a hash match with unequal
 * text is a different transaction. The simulator, which fills the numbers directly, is unchanged.
 */
#ifndef OSN_SIP_WIRE_H
#define OSN_SIP_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "osn/sip.h"

/* A view of n bytes at p (not NUL-terminated). p is NULL and n 0 for "absent". */
struct osn_span {
    const char *p;
    size_t n;
};

/* ---- limits: exceeding one is a malformed message (OSN_SIP_WIRE_ECAP) ---- */

#define OSN_SIP_WIRE_MAX_LEN     65535 /* one UDP datagram */
#define OSN_SIP_WIRE_MAX_HDRS    160   /* header lines; RFC 4475 longreq has 45 */
#define OSN_SIP_WIRE_MAX_VIAS    64    /* Via values; longreq has 34 */
#define OSN_SIP_WIRE_MAX_ROUTES  32    /* Route values, and separately Record-Route values */
#define OSN_SIP_WIRE_MAX_CONTACT 16    /* Contact values */
#define OSN_SIP_WIRE_MAX_OPTIONS 16    /* option tags in Require, and in Proxy-Require */

/* ---- header ids ---- */

enum osn_sip_hdr_id {
    OSN_SIP_HDR_OTHER = 0, /* unknown: kept verbatim */
    OSN_SIP_HDR_ACCEPT,
    OSN_SIP_HDR_ACCEPT_CONTACT, /* a, RFC 3841 */
    OSN_SIP_HDR_ALLOW,
    OSN_SIP_HDR_ALLOW_EVENTS, /* u, RFC 6665 */
    OSN_SIP_HDR_AUTHORIZATION,
    OSN_SIP_HDR_CALL_ID,          /* i */
    OSN_SIP_HDR_CONTACT,          /* m */
    OSN_SIP_HDR_CONTENT_ENCODING, /* e */
    OSN_SIP_HDR_CONTENT_LENGTH,   /* l */
    OSN_SIP_HDR_CONTENT_TYPE,     /* c */
    OSN_SIP_HDR_CSEQ,
    OSN_SIP_HDR_DATE,
    OSN_SIP_HDR_EVENT, /* o */
    OSN_SIP_HDR_EXPIRES,
    OSN_SIP_HDR_FROM,          /* f */
    OSN_SIP_HDR_IDENTITY,      /* y */
    OSN_SIP_HDR_IDENTITY_INFO, /* n */
    OSN_SIP_HDR_MAX_FORWARDS,
    OSN_SIP_HDR_PROXY_AUTHORIZATION,
    OSN_SIP_HDR_PROXY_REQUIRE,
    OSN_SIP_HDR_RECORD_ROUTE,
    OSN_SIP_HDR_REFER_TO,            /* r */
    OSN_SIP_HDR_REFERRED_BY,         /* b */
    OSN_SIP_HDR_REJECT_CONTACT,      /* j */
    OSN_SIP_HDR_REQUEST_DISPOSITION, /* d */
    OSN_SIP_HDR_REQUIRE,
    OSN_SIP_HDR_RETRY_AFTER,
    OSN_SIP_HDR_ROUTE,
    OSN_SIP_HDR_SESSION_EXPIRES, /* x */
    OSN_SIP_HDR_SUBJECT,         /* s */
    OSN_SIP_HDR_SUPPORTED,       /* k */
    OSN_SIP_HDR_TIMESTAMP,
    OSN_SIP_HDR_TO,  /* t */
    OSN_SIP_HDR_VIA, /* v */
    OSN_SIP_HDR_WWW_AUTHENTICATE,
    OSN_SIP_NHDRS
};

/* The id of a header name (case-insensitive, compact forms included), OTHER when unknown. */
int osn_sip_hdr_id(const char *name, size_t n);

/* The canonical long name of an id ("Call-ID"), "" for OTHER or out of range. */
const char *osn_sip_hdr_name(int id);

/* ---- the message view ---- */

/* One header line. `line` runs from the first byte of the name to the end of the line's CRLF
 * (folds included), so that a printer can copy it unchanged; `value` is the field value without
 * the leading and trailing LWS (it may contain folds, CRLF + WSP, which are LWS). */
struct osn_sip_hdr {
    struct osn_span name, value, line;
    uint8_t id; /* enum osn_sip_hdr_id */
};

/* A generic parameter's value is a span; a valueless one ("lr", "rport") has p set and n 0,
 * an absent one p NULL. */

/* One Via value (RFC 3261 20.42, RFC 3581, RFC 7339 9). */
struct osn_sip_via {
    struct osn_span value;     /* the whole via-parm, trimmed */
    struct osn_span protocol;  /* "SIP" */
    struct osn_span version;   /* "2.0" */
    struct osn_span transport; /* "UDP", "TCP", ... */
    struct osn_span host;      /* sent-by host; an IPv6 reference keeps its brackets */
    uint16_t port;             /* sent-by port, 0 when absent */
    int16_t ttl;               /* -1 when absent */
    uint16_t hdr;              /* index in hdr[] of the line it came from */
    bool rport;                /* rport present (its value, if any, in rport_value) */
    struct osn_span branch, received, rport_value, maddr;
    struct osn_span params;  /* from the first ';' to the end of the value, or absent */
    struct osn_span oc_algo; /* the quoted oc-algo list without its quotes */
    struct osn_sip_oc oc;    /* RFC 7339 parameters as numbers */
    /* Offsets in the buffer of the ";name[=value]" text of oc, oc-validity, oc-seq, oc-algo
     * (in that order; length 0 when absent), so that a printer can leave them out. */
    uint16_t oc_at[4], oc_len[4];
};

/* A name-addr or addr-spec with its parameters: From, To, Contact, Route, Record-Route. */
struct osn_sip_addr {
    struct osn_span value;   /* the whole value, trimmed */
    struct osn_span display; /* as written, quotes included; absent when none */
    struct osn_span uri;     /* without the angle brackets */
    struct osn_span params;  /* from the first ';' after the URI, or absent */
    struct osn_span tag;     /* the tag parameter's value (From, To), absent when none */
    bool angle;              /* the URI was in <> */
    bool lr;                 /* an lr URI parameter (Route, Record-Route: loose routing) */
    uint16_t hdr;            /* index in hdr[] of the line it came from */
};

/* Retry-After (RFC 3261 20.33): delta-seconds [comment] *(; retry-param). */
struct osn_sip_retry_after {
    bool present;
    uint32_t seconds;
    int64_t duration;        /* the duration parameter, -1 when absent */
    struct osn_span comment; /* inside the parentheses, absent when none */
};

enum osn_sip_wire_reason {
    OSN_SIP_WIRE_OK = 0,
    OSN_SIP_WIRE_ETOOLONG,    /* more than OSN_SIP_WIRE_MAX_LEN bytes, or empty */
    OSN_SIP_WIRE_ESTARTLINE,  /* request or status line does not follow the grammar */
    OSN_SIP_WIRE_EVERSION,    /* SIP version other than 2.0 (answer: 505) */
    OSN_SIP_WIRE_EURI,        /* Request-URI malformed (e.g. LWS in it, or in <>) */
    OSN_SIP_WIRE_ESTATUS,     /* status code not 100..699 */
    OSN_SIP_WIRE_EHDRNAME,    /* a header line without a token name and a colon */
    OSN_SIP_WIRE_ECHAR,       /* a control character (bare CR, NUL) outside a quoted string */
    OSN_SIP_WIRE_ENOEND,      /* no empty line ending the header section */
    OSN_SIP_WIRE_ECAP,        /* more headers or values than the OSN_SIP_WIRE_MAX_* limits */
    OSN_SIP_WIRE_EVIA,        /* a Via value does not parse */
    OSN_SIP_WIRE_EADDR,       /* From, To, Contact, Route or Record-Route does not parse */
    OSN_SIP_WIRE_ECALLID,     /* Call-ID empty or with whitespace */
    OSN_SIP_WIRE_ECSEQ,       /* CSeq number not a 32-bit unsigned, or no method */
    OSN_SIP_WIRE_ECSEQMETHOD, /* CSeq method differs from the request method (RFC 3261 8.1.1.5) */
    OSN_SIP_WIRE_EMAXFWD,     /* Max-Forwards not in 0..255 */
    OSN_SIP_WIRE_ECLEN,       /* Content-Length not a number */
    OSN_SIP_WIRE_ETRUNCATED,  /* fewer body octets than Content-Length (RFC 3261 18.3) */
    OSN_SIP_WIRE_ERETRYAFTER, /* Retry-After malformed or above 2^32 - 1 */
    OSN_SIP_WIRE_EOPTION,     /* Require or Proxy-Require without a valid option tag */
    OSN_SIP_WIRE_EDUP,        /* a second From, To, Call-ID, CSeq, Max-Forwards, ... */
    OSN_SIP_WIRE_EMISSING,    /* a mandatory header is missing (RFC 3261 8.1.1) */
    OSN_SIP_WIRE_NREASONS
};

/* What to do with a message. */
enum osn_sip_wire_verdict {
    OSN_SIP_WIRE_ACCEPT = 0, /* well-formed */
    OSN_SIP_WIRE_ANSWER,     /* malformed request that can be answered (status in err.answer) */
    OSN_SIP_WIRE_DROP,       /* malformed, and nothing can be sent back: drop silently */
};

struct osn_sip_wire_err {
    uint8_t reason;  /* enum osn_sip_wire_reason of the first error */
    uint8_t verdict; /* enum osn_sip_wire_verdict */
    uint16_t answer; /* 400 or 505 with ANSWER, else 0 */
    uint32_t offset; /* byte offset of the first error in the datagram */
};

/* A message as it is on the wire: its bytes (borrowed) and their parse. Its numeric facts for the
 * transaction layer, struct osn_sip_msg of osn/sip.h, come from osn_sip_wire_to_txn(). */
struct osn_sip_wire {
    struct osn_span buf; /* the whole datagram */
    struct osn_span msg; /* the message: start line to the end of the body (no extra octets) */
    /* start line */
    bool is_request;
    uint8_t method;  /* enum osn_sip_method of a request (or of the CSeq of a response) */
    uint16_t status; /* response status, 0 for a request */
    bool rfc2543;    /* the top Via branch does not start with "z9hG4bK" (RFC 3261 8.1.1.7) */
    uint8_t role;    /* enum osn_sip_wire_role: what was decoded (osn_sip_wire_parse_as) */
    struct osn_span method_name, uri, version, reason_phrase;
    struct osn_span start_line; /* without its CRLF */
    struct osn_span head;       /* from the first header line to the end of the empty line */
    struct osn_span body;
    /* pre-parsed headers; index -1 means absent */
    int call_id_hdr, from_hdr, to_hdr, cseq_hdr, max_forwards_hdr, content_length_hdr;
    int content_type_hdr, retry_after_hdr;
    struct osn_span call_id, content_type;
    struct osn_sip_addr from, to;
    uint32_t cseq;
    uint8_t cseq_method; /* enum osn_sip_method */
    struct osn_span cseq_method_name;
    int16_t max_forwards;   /* 0..255, -1 when absent */
    int32_t content_length; /* -1 when absent */
    struct osn_sip_retry_after retry_after;
    int nhdr, nvia, nroute, nrecord_route, ncontact, nrequire, nproxy_require;
    bool contact_star; /* Contact: * (REGISTER, RFC 3261 10.2.2) */
    struct osn_sip_wire_err err;
    /* The lists, nhdr, nvia, ... entries each. After osn_sip_wire_parse they point into `room`
     * below; in a copy made by osn_sip_wire_pack, into the copy's own block. */
    struct osn_sip_hdr *hdr;
    struct osn_sip_via *via;
    struct osn_sip_addr *route, *record_route, *contact;
    struct osn_span *require, *proxy_require;
    /* The parser's room for the lists (most of the struct's size). A packed copy has none: it
     * ends before this member, so a packed copy is never parsed into nor copied by value. */
    struct osn_sip_wire_room {
        struct osn_sip_hdr hdr[OSN_SIP_WIRE_MAX_HDRS];
        struct osn_sip_via via[OSN_SIP_WIRE_MAX_VIAS];
        struct osn_sip_addr route[OSN_SIP_WIRE_MAX_ROUTES];
        struct osn_sip_addr record_route[OSN_SIP_WIRE_MAX_ROUTES];
        struct osn_sip_addr contact[OSN_SIP_WIRE_MAX_CONTACT];
        struct osn_span require[OSN_SIP_WIRE_MAX_OPTIONS];
        struct osn_span proxy_require[OSN_SIP_WIRE_MAX_OPTIONS];
    } room;
};

/* Parses the datagram buf[0..len) into *m (caller memory, borrowed; its previous contents are
 * ignored). buf is borrowed for as long as *m is used. Returns the verdict: OSN_SIP_WIRE_ACCEPT
 * (0), OSN_SIP_WIRE_ANSWER or OSN_SIP_WIRE_DROP, with m->err telling why and where; or OSN_EINVAL
 * when m or buf is NULL. After ANSWER or DROP only the fields before the error are reliable.
 * Never reads outside buf[0..len), never allocates, never recurses: O(len). */
int osn_sip_wire_parse(struct osn_sip_wire *m, const char *buf, size_t len);

/* What a parse decodes. Every header line is found, checked for control characters and
 * recorded in hdr[] with its id whatever the role; a role only says which values go through
 * their decoders (and so which can make a message malformed). */
enum osn_sip_wire_role {
    /* Every header of the view decoded: a UAS, a UAC and its load generator, tests. */
    OSN_SIP_WIRE_ROLE_FULL = 0,
    /* What a proxy uses, and nothing else (RFC 3261 16.3 step 1: "Any other components,
     * well-formed or not, SHOULD be ignored and remain unchanged when the message is
     * forwarded"): Via, Call-ID, CSeq, Max-Forwards, Content-Length, Route, Proxy-Require
     * (16.3 step 5), a request's Record-Route (16.6 step 4 puts ours above it), a response's
     * Retry-After (a 503 from a next hop, 21.5.4), and of From and To only the tag (from.tag,
     * to.tag and hdr are filled; value, display, uri and params stay absent, though a From or To
     * whose tag cannot be found, such as an unclosed quote or '<' without '>', is still
     * malformed). Contact, Content-Type, Require, a request's Retry-After and a response's
     * Record-Route are recorded as lines only: ncontact, nrequire and nrecord_route of a response
     * are 0, content_type and retry_after absent, and a second Content-Type or Retry-After is no
     * error. A proxy copies those lines byte for byte (osn_sip_wire_print_forward,
     * osn_sip_wire_print_response_fwd), so a fault in one of them is forwarded, not answered
     * 400. */
    OSN_SIP_WIRE_ROLE_PROXY = 1,
};

/* osn_sip_wire_parse, decoding what `role` (enum osn_sip_wire_role) uses; m->role records it. A
 * message a FULL parse accepts a PROXY parse accepts too, with the same values in every field a
 * PROXY parse fills. OSN_EINVAL also for an unknown role. */
int osn_sip_wire_parse_as(struct osn_sip_wire *m, const char *buf, size_t len, int role);

/* ---- keeping a parse (pack.c) ---- */

/* The bytes osn_sip_wire_pack needs for message m: its fields, the list entries it fills (not the
 * parser's room) and a copy of its datagram. A few hundred bytes plus about 60 per header line
 * for a typical request, against sizeof(struct osn_sip_wire), about 31 KB. */
size_t osn_sip_wire_packed_size(const struct osn_sip_wire *m);

/* Copies accepted message m and its datagram into mem (osn_sip_wire_packed_size(m) bytes,
 * aligned as malloc aligns; borrowed) as one block, so that a server can keep a parse for as
 * long as it keeps the bytes (a transaction, a queued message) without parsing them again. The
 * copy's spans point into its own copy of the datagram (NUL-terminated, at copy->buf.p), so m
 * and its buffer may go at once. Returns the copy (mem), or NULL when m or mem is NULL or m was
 * not accepted. The block is freed as a whole; the copy is read-only (never parse into it). */
struct osn_sip_wire *osn_sip_wire_pack(void *mem, const struct osn_sip_wire *m);

/* Whether accepted parses a and b of the same bytes hold the same fields and list entries (each
 * packed at one address, the header list's padding zeroed first, then compared byte for byte).
 * Their roles are fields too: a proxy's parse (OSN_SIP_WIRE_ROLE_PROXY) is the same only as
 * another proxy's parse, with the same fields decoded and the same left absent.
 * For the debug checks of a parse derived without the parser (osn_sip_wire_print_forward_parsed,
 * the generator's kept INVITE parse): it allocates, and is no hot-path function. */
bool osn_sip_wire_same(const struct osn_sip_wire *a, const struct osn_sip_wire *b);

/* A static English name for a reason ("Via malformed"), "?" when out of range. */
const char *osn_sip_wire_reason_name(int reason);

/* Method id of a method name (case-sensitive, RFC 3261 7.1), OSN_SIP_OTHER when unknown. */
int osn_sip_method_of(const char *name, size_t n);

/* Whether the spans hold the same bytes / the same bytes ignoring ASCII case. */
bool osn_span_eq(struct osn_span a, struct osn_span b);
bool osn_span_caseeq(struct osn_span a, struct osn_span b);

/* ---- identities (ident.c) ---- */

/* Sets the per-process SipHash key from getrandom(2). Call once at start-up, before threads;
 * the first identity computed calls it otherwise. Returns 0 or OSN_EIO. */
int osn_sip_wire_key_init(void);

/* Sets the key (16 bytes, copied): tests and reproducible runs. Not thread-safe. */
void osn_sip_wire_key_set(const uint8_t key[16]);

/* SipHash-1-3 of n bytes under the process key. */
uint64_t osn_sip_wire_hash(const void *p, size_t n);

/* The branch a proxy of this toolkit gives a request it forwards: "z9hG4bK", 16 lower-case hex
 * digits of a number unique among the node's client transactions, 16 more (its loop hash). The
 * branch number of a response, or of a request printed with osn_sip_wire_to_txn_fwd, with a
 * branch of this form is those first 16 digits' value (0 read as 1), not a hash: such a number
 * is ours, never chosen by a sender, which is what the keyed hash guards against (ident.c). */
#define OSN_SIP_WIRE_OWN_BRANCH_LEN (7 + 16 + 16)

/* Fills the numeric message of the transaction layer from an accepted parse: method, status,
 * CSeq, Retry-After (seconds, clamped to INT32_MAX), and the keyed hashes of the top Via branch,
 * sent-by (lower-cased host and port), Call-ID and the From and To tags (0 when no tag; a tag
 * never hashes to 0), plus the top Via's oc parameters; a response's branch of our form
 * (OSN_SIP_WIRE_OWN_BRANCH_LEN) is read, not hashed. A response's Call-ID and From tag are
 * 0: they are its request's, which its transaction holds. RFC 2543 requests and responses (no
 * "z9hG4bK" branch, m->rfc2543) get as branch the hash of RFC 3261 17.2.3's fallback fields
 * minus the To tag: Request-URI (requests only), From tag, Call-ID, CSeq number and the top Via
 * value; so a retransmission, the ACK of a non-2xx and a CANCEL find the INVITE's transaction
 * (the method is in the table key), and two different RFC 2543 requests never share a key
 * unless those fields agree. Returns 0, or OSN_EINVAL when m was not accepted. */
int osn_sip_wire_to_txn(const struct osn_sip_wire *m, struct osn_sip_msg *out);
/* The same for a request m we print from one whose numbers are `orig` (osn_sip_wire_to_txn of
 * it): a forward, or a CANCEL of a forwarded INVITE, keeps the Call-ID and the From and To tags,
 * so their hashes are orig's; only the new top Via's sent-by is hashed, and its branch, unless
 * it has our form (OSN_SIP_WIRE_OWN_BRANCH_LEN: then its number is read from it). An RFC 2543 m
 * (not a forward of ours) is hashed in full. Returns 0, or OSN_EINVAL as osn_sip_wire_to_txn. */
int osn_sip_wire_to_txn_fwd(const struct osn_sip_wire *m, const struct osn_sip_msg *orig,
                            struct osn_sip_msg *out);

/* The text behind a transaction's numeric key, for the exact check after a hash match. For an
 * RFC 3261 message: branch, sent-by host and port, and the CSeq method (matching 17.1.3 and
 * 17.2.3; ACK counts as INVITE); Call-ID is kept too, for merged-request detection. For RFC
 * 2543 the fallback fields of osn_sip_wire_to_txn. Spans borrow the message's buffer. */
struct osn_sip_wire_key {
    bool rfc2543;
    uint8_t method; /* CSeq method; ACK stored as INVITE */
    uint16_t port;
    uint32_t cseq; /* RFC 2543 only */
    struct osn_span branch, host, call_id;
    struct osn_span uri, from_tag, via; /* RFC 2543 only */
};

/* The key of an accepted message. Returns 0 or OSN_EINVAL. */
int osn_sip_wire_key_of(const struct osn_sip_wire *m, struct osn_sip_wire_key *k);

/* Copies `src`'s text into buf[0..cap) and points *dst at the copy, so that a transaction can
 * keep its key after the datagram is gone. Returns the bytes used, or OSN_ETOOBIG when cap is too
 * small (dst untouched). */
int osn_sip_wire_key_copy(struct osn_sip_wire_key *dst, char *buf, size_t cap,
                          const struct osn_sip_wire_key *src);

/* Whether two keys are the same transaction's: branch byte for byte (RFC 3261 17.2.3 "equal"),
 * host ignoring case, port and method equal; Call-ID is not compared (it is not part of the
 * RFC 3261 match). RFC 2543 keys compare their fallback fields. A node calls it after
 * osn_sip_table_find returned a transaction whose numbers matched: false means a hash
 * collision, i.e. no match. */
bool osn_sip_wire_key_eq(const struct osn_sip_wire_key *a, const struct osn_sip_wire_key *b);

/* The keyed hash of what osn_sip_wire_key_eq compares (the host lower-cased, as it is compared
 * without case), into *fp: two keys that are equal have the same hash, so a record that keeps
 * only the hash of its key still makes the exact check (up to SipHash's 2^-64). false when the
 * key's text is over 1 KB (no hash: the caller keeps the text). */
bool osn_sip_wire_key_hash(const struct osn_sip_wire_key *k, uint64_t *fp);

/* ---- a message coded against another (delta.c) ---- */

/* Codes msg[0..len) against ref[0..rlen), the message that will make it be sent again (a
 * response against its request, an ACK against the response it acknowledges): a new block
 * (malloc; free() it), *size its bytes; NULL without memory or for a message the code cannot
 * hold (either text over 65,535 bytes). */
uint8_t *osn_sip_wire_delta(const char *msg, size_t len, const char *ref, size_t rlen,
                            size_t *size);
/* The bytes of a block osn_sip_wire_delta made. */
size_t osn_sip_wire_delta_size(const uint8_t *blob);
/* Prints blob against ref[0..rlen) into out (OSN_SIP_WIRE_MAX_LEN + 1 bytes): the length, or -1
 * when ref is not what it was coded against (a copy out of range, or a result that is not the
 * message first coded, by its length and keyed hash). */
int osn_sip_wire_undelta(char *out, const uint8_t *blob, const char *ref, size_t rlen);

/* ---- SDP offer/answer for a UAS without media (sdp.c) ---- */

/* What a request's body is to a UAS (RFC 3264 offer/answer over RFC 3261 13). */
enum osn_sdp_offer {
    OSN_SDP_NO_OFFER,  /* no body */
    OSN_SDP_OFFER,     /* an application/sdp body that follows RFC 4566 */
    OSN_SDP_MALFORMED, /* application/sdp that does not: 488 (RFC 3261 21.4.26) */
    OSN_SDP_NOT_SDP,   /* a body of another type: 415 (RFC 3261 21.4.13) */
};

/* The enum osn_sdp_offer of a body with this Content-Type value (absent: not SDP). */
int osn_sdp_offer_check(struct osn_span content_type, struct osn_span body);

/* Where our (never used) media would be. */
struct osn_sdp_local {
    struct osn_span addr; /* our address, for o= and c= (no brackets) */
    bool ip6;             /* IP6 rather than IP4 */
    uint16_t port;        /* the port of each accepted stream */
    uint64_t session_id;  /* o= sess-id and sess-version */
};

/* The RFC 3264 answer to `offer` into out[0..cap): per offered m= line the first format (and its
 * rtpmap/fmtp lines), streams offered with port 0 kept rejected, every other one inactive, the
 * offer's t=. With no offer (empty span), an offer of ours: one inactive PCMU audio stream.
 * Returns the length, OSN_EINVAL (an offer osn_sdp_offer_check calls malformed) or
 * OSN_ETOOBIG. */
int osn_sdp_print_answer(char *out, size_t cap, struct osn_span offer,
                         const struct osn_sdp_local *l);

/* ---- printer (print.c) ---- */

/* Every printer writes into out[0..cap), returns the length written, or OSN_EINVAL (bad
 * arguments, a message of the wrong kind) or OSN_ETOOBIG (cap too small; out holds garbage).
 * Lines it does not change are copied byte for byte from the parsed message, folds included;
 * the output ends in CRLF CRLF + body, with a Content-Length that matches what it wrote. */

/* What a stateful proxy changes when it forwards a request (RFC 3261 16.6). */
struct osn_sip_fwd {
    struct osn_span transport; /* of our Via, e.g. "UDP" */
    struct osn_span host;      /* our sent-by host */
    uint16_t port;             /* our sent-by port, 0: none */
    struct osn_span branch;    /* our branch, "z9hG4bK..." (the caller makes it unique) */
    /* RFC 7339 parameters of our Via: flags OSN_SIP_OC_PRESENT gives a valueless "oc",
     * OSN_SIP_OC_ALGO an oc-algo list from `algo` bits ("loss" first). */
    struct osn_sip_oc oc;
    /* Loose routing (16.4, 16.6 step 4): how many of the top Route values to remove, because
     * they name us: 1, or 2 where we double Record-Routed the dialog (RFC 5658 4); 0: none. */
    uint8_t pop_route;
    /* What our server transport adds to the received top Via (now the second): via_received
     * appended (";received=ADDR", RFC 3261 18.2.1; empty: none), and a valueless rport given
     * the value via_rport (RFC 3581 4; 0: none). */
    struct osn_span via_received;
    uint16_t via_rport;
    /* 16.6 step 4: a URI of ours ("sip:HOST:PORT;lr") to insert as Record-Route: <uri> above
     * the request's own Record-Route values; absent: none. record_route2, when present too, is
     * inserted just below it: RFC 5658's double Record-Route, where the two legs differ in
     * transport (record_route the outgoing leg's, record_route2 the incoming one's). */
    struct osn_span record_route, record_route2;
};

/* The request `req` forwarded: our Via on top, our Record-Route when asked (above the
 * request's own, else after its last header; one line per value), Max-Forwards - 1 (70 when
 * absent, 16.6 step 3; OSN_EINVAL when it is 0: the caller answers 483), the top Route values
 * removed when asked (at most as many as it has), everything else copied. */
int osn_sip_wire_print_forward(char *out, size_t cap, const struct osn_sip_wire *req,
                               const struct osn_sip_fwd *f);

/* The same, and into *fm (caller memory) the parse of what it printed, the view of out that
 * osn_sip_wire_parse_as(fm, out, length, req->role) would give, without parsing it again: the
 * lines copied from req keep req's parse, moved to where the copy lies; only the lines the
 * printer wrote (our Via, the top Via with what our transport added, Max-Forwards, Record-Route,
 * what remains of a line a value was taken from) go through the header decoders. So a proxy keeps
 * its client transaction's request without a second parse of its own output. Returns what
 * osn_sip_wire_print_forward returns; when that is a length, fm->err.verdict is the parse's
 * (ACCEPT unless the copy has more lines than OSN_SIP_WIRE_MAX_HDRS allows, ECAP). */
int osn_sip_wire_print_forward_parsed(char *out, size_t cap, const struct osn_sip_wire *req,
                                      const struct osn_sip_fwd *f, struct osn_sip_wire *fm);

/* The response `resp` forwarded upstream (16.7 step 3): its top Via value removed. */
int osn_sip_wire_print_response_fwd(char *out, size_t cap, const struct osn_sip_wire *resp);

/* The same, with the oc parameters of the Via that becomes the top one replaced by `oc` (flags
 * 0: removed): a server half's feedback in a response it relays upstream (RFC 7339 5.2). */
int osn_sip_wire_print_response_fwd_oc(char *out, size_t cap, const struct osn_sip_wire *resp,
                                       const struct osn_sip_oc *oc);

/* A response a UAS or proxy generates to `req` (RFC 3261 8.2.6). */
struct osn_sip_reply {
    uint16_t status;        /* 100..699 */
    const char *reason;     /* NUL-terminated, NULL: the RFC 3261 21 phrase */
    struct osn_span to_tag; /* added to To when it has none and status > 100 (8.2.6.2) */
    int64_t retry_after;    /* seconds, < 0: no Retry-After (20.33) */
    /* RFC 7339 parameters for the top Via (server side: oc=value, oc-validity, oc-seq,
     * oc-algo); the request's own oc parameters there are dropped. flags 0: none, and the
     * top Via is copied as it came. */
    struct osn_sip_oc oc;
    /* Added to the top Via as struct osn_sip_fwd's via_received and via_rport. */
    struct osn_span via_received;
    uint16_t via_rport;
    /* What a UA adds (absent spans and 0: nothing): Contact: <contact> (12.1.1), Allow: the
     * methods of the bits (1 << enum osn_sip_method) (20.5), Accept and Supported with these
     * values, possibly empty (11.2: "none supported"), and a body of type body_type. */
    struct osn_span contact;
    uint32_t allow;
    struct osn_span accept, supported;
    struct osn_span body, body_type;
};

/* Vias, From, To (+ tag), Call-ID, CSeq and, for 100, Timestamp copied from `req` (8.2.6.1-2);
 * Record-Route too for 101..299 (12.1.1); then Contact, Allow, Accept, Supported, Retry-After,
 * and Content-Type with the body (or Content-Length: 0) as r asks. */
int osn_sip_wire_print_reply(char *out, size_t cap, const struct osn_sip_wire *req,
                             const struct osn_sip_reply *r);

/* The ACK for a non-2xx final `resp` to INVITE `req` (RFC 3261 17.1.1.3): the request's
 * Request-URI, top Via, Route, From, Call-ID, CSeq number and Max-Forwards, the response's To. */
int osn_sip_wire_print_ack(char *out, size_t cap, const struct osn_sip_wire *req,
                           const struct osn_sip_wire *resp);

/* The CANCEL of INVITE `req` (RFC 3261 9.1): the request's Request-URI, top Via (only), Route,
 * From, To, Call-ID, CSeq number and Max-Forwards, with the method CANCEL. */
int osn_sip_wire_print_cancel(char *out, size_t cap, const struct osn_sip_wire *req);

/* The RFC 3261 21 reason phrase of a status ("Service Unavailable"), "" when unknown. */
const char *osn_sip_reason_phrase(int status);

#endif

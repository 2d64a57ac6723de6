/*
 * From a parsed message to the numeric struct osn_sip_msg of the transaction layer: keyed
 * SipHash-1-3 identities (Aumasson and Bernstein, 2012) under a per-process random key, and
 * the text keys that make exact matching exact again after a hash match.
 *
 * Why keyed: the transaction table (table.c) places a transaction by a hash of these numbers.
 * With an unkeyed function anyone who can send UDP to the node could compute many branches that
 * land in one bucket and turn every lookup into a scan (hash flooding, as in the 2011 attacks on
 * web servers). With a 128-bit secret key the attacker cannot predict the numbers. The
 * variant is SipHash-1-3 (one round a block, three to finish), the one Rust's and Python's hash
 * tables chose for this same defence, rather than the MAC's 2-4: a proxy hashes about thirty
 * identities a call, and the four rounds saved each time were 4 % of its instructions.
 *
 * Why text keys too: distinct strings can still share a 64-bit hash (by chance about one pair in
 * 2^64 per comparison; never on purpose without the key), and RFC 3261 17.2.3 wants two
 * different branches to be two transactions. So a node stores the key text of its transactions
 * and confirms every numeric match with osn_sip_wire_key_eq. The simulator, which has no text,
 * does not need this and keeps its numbers and its speed.
 */
#include <string.h>
#include <sys/random.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "osn/err.h"
#include "sip_wire_int.h"

static uint64_t k0, k1;
static bool keyed;

int osn_sip_wire_key_init(void)
{
    uint8_t key[16];
    size_t got = 0;
    while (got < sizeof key) {
        ssize_t r = getrandom(key + got, sizeof key - got, 0);
        if (r <= 0)
            return OSN_EIO;
        got += (size_t)r;
    }
    osn_sip_wire_key_set(key);
    return 0;
}

static uint64_t le64(const uint8_t *p)
{
    uint64_t x;
    memcpy(&x, p, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    x = __builtin_bswap64(x);
#endif
    return x;
}

void osn_sip_wire_key_set(const uint8_t key[16])
{
    k0 = le64(key);
    k1 = le64(key + 8);
    keyed = true;
}

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND           \
    do {                   \
        v0 += v1;          \
        v1 = ROTL(v1, 13); \
        v1 ^= v0;          \
        v0 = ROTL(v0, 32); \
        v2 += v3;          \
        v3 = ROTL(v3, 16); \
        v3 ^= v2;          \
        v0 += v3;          \
        v3 = ROTL(v3, 21); \
        v3 ^= v0;          \
        v2 += v1;          \
        v1 = ROTL(v1, 17); \
        v1 ^= v2;          \
        v2 = ROTL(v2, 32); \
    } while (0)

/* SipHash-1-3 with 64-bit output, as the reference implementation run with cROUNDS 1 and
 * dROUNDS 3 (its vectors in tests/test_sip_parse.c). `tweak` separates the fields of a
 * multi-field key. */
static uint64_t siphash(const void *data, size_t n, uint64_t tweak)
{
    if (!keyed)
        osn_sip_wire_key_init(); /* falls back to the zero key if getrandom fails */
    /* An absent span (a Via without a branch) is {NULL, 0}: NULL + 0 is undefined in C, so it
     * reads as the empty string (found by fuzz_node under UBSan). */
    const uint8_t *p = data ? data : (const void *)"";
    uint64_t v0 = 0x736f6d6570736575u ^ k0, v1 = 0x646f72616e646f6du ^ k1 ^ tweak;
    uint64_t v2 = 0x6c7967656e657261u ^ k0, v3 = 0x7465646279746573u ^ k1;
    const uint8_t *end = p + (n & ~(size_t)7);
    for (; p < end; p += 8) {
        uint64_t m = le64(p);
        v3 ^= m;
        SIPROUND;
        v0 ^= m;
    }
    uint64_t b = (uint64_t)n << 56;
    switch (n & 7) {
    case 7:
        b |= (uint64_t)p[6] << 48; /* fall through */
    case 6:
        b |= (uint64_t)p[5] << 40; /* fall through */
    case 5:
        b |= (uint64_t)p[4] << 32; /* fall through */
    case 4:
        b |= (uint64_t)p[3] << 24; /* fall through */
    case 3:
        b |= (uint64_t)p[2] << 16; /* fall through */
    case 2:
        b |= (uint64_t)p[1] << 8; /* fall through */
    case 1:
        b |= (uint64_t)p[0];
        break;
    default:
        break;
    }
    v3 ^= b;
    SIPROUND;
    v0 ^= b;
    v2 ^= 0xff;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    return v0 ^ v1 ^ v2 ^ v3;
}

uint64_t osn_sip_wire_hash(const void *p, size_t n)
{
    return siphash(p, n, 0);
}

/* A hash that is never 0 (0 means "no tag" in struct osn_sip_msg). */
static uint64_t nz(uint64_t h)
{
    return h ? h : 1;
}

/* Hashes of several fields chained: each field's hash feeds the next one's tweak, so that
 * ("ab", "c") and ("a", "bc") differ. */
static uint64_t chain(uint64_t h, struct osn_span s)
{
    return siphash(s.p ? s.p : "", s.n, h + 0x9e3779b97f4a7c15u);
}

/* sent-by: host lower-cased (RFC 3261 19.1.4: hosts compare case-insensitively), then port. */
static uint64_t sent_by_hash(const struct osn_sip_via *v)
{
    char buf[280];
    size_t n = v->host.n < 256 ? v->host.n : 256;
    for (size_t i = 0; i < n; i++)
        buf[i] = lower(v->host.p[i]);
    buf[n++] = ':';
    buf[n++] = (char)(v->port >> 8);
    buf[n++] = (char)(v->port & 0xff);
    /* Longer hosts: the tail goes in through the tweak, so no byte is ignored. */
    uint64_t tail =
            v->host.n > 256 ? chain(0, (struct osn_span){v->host.p + 256, v->host.n - 256}) : 0;
    return siphash(buf, n, tail);
}

/* sent_by_hash, remembered for the last two sent-bys of this thread: a proxy's own sent-by is
 * the top Via of every request it forwards and of every response it receives, and a caller's
 * is on each of its requests, so most sent-bys a node hashes are one of two constants. Keyed by
 * the exact bytes and port, so a hit is the hash a fresh call would give; thread-local because
 * each worker thread of a node parses on its own; an entry holds the key it was made under, so
 * that osn_sip_wire_key_set (tests, a new process key) never meets a stale hash. */
#define SENT_BY_MEMO_HOST 48 /* an IPv6reference "[...]" is at most 47 bytes */
static _Thread_local struct {
    uint64_t hash, k0, k1;
    uint16_t port;
    uint8_t n; /* 0: empty */
    char host[SENT_BY_MEMO_HOST];
} sent_by_memo[2];
static _Thread_local unsigned sent_by_next;

static uint64_t sent_by(const struct osn_sip_via *v)
{
    size_t n = v->host.n;
    if (n == 0 || n > SENT_BY_MEMO_HOST)
        return sent_by_hash(v);
    for (int i = 0; i < 2; i++)
        if (sent_by_memo[i].n == n && sent_by_memo[i].port == v->port && sent_by_memo[i].k0 == k0 &&
            sent_by_memo[i].k1 == k1 && !memcmp(sent_by_memo[i].host, v->host.p, n))
            return sent_by_memo[i].hash;
    unsigned i = sent_by_next++ & 1; /* the older of the two goes */
    uint64_t h = sent_by_hash(v);
    sent_by_memo[i].hash = h;
    sent_by_memo[i].k0 = k0; /* after the hash: it may have made the key */
    sent_by_memo[i].k1 = k1;
    sent_by_memo[i].port = v->port;
    sent_by_memo[i].n = (uint8_t)n;
    memcpy(sent_by_memo[i].host, v->host.p, n);
    return h;
}

int osn_sip_wire_key_of(const struct osn_sip_wire *m, struct osn_sip_wire_key *k)
{
    if (!m || !k || m->err.verdict != OSN_SIP_WIRE_ACCEPT || m->nvia == 0)
        return OSN_EINVAL;
    memset(k, 0, sizeof *k);
    const struct osn_sip_via *v = &m->via[0];
    k->rfc2543 = m->rfc2543;
    k->method = m->cseq_method == OSN_SIP_ACK ? OSN_SIP_INVITE : m->cseq_method;
    k->port = v->port;
    k->host = v->host;
    k->branch = v->branch;
    k->call_id = m->call_id;
    if (m->rfc2543) {
        k->cseq = m->cseq;
        k->uri = m->is_request ? m->uri : (struct osn_span){NULL, 0};
        k->from_tag = m->from.tag;
        k->via = v->value;
    }
    return 0;
}

/* The numbers of m that are not hashes: method, status, CSeq, Retry-After; the rest 0. */
static void numbers(const struct osn_sip_wire *m, struct osn_sip_msg *out)
{
    memset(out, 0, sizeof *out);
    out->method = m->is_request ? m->method : m->cseq_method;
    out->status = m->status;
    out->cseq = m->cseq;
    out->retry_after = !m->retry_after.present              ? -1
                       : m->retry_after.seconds > INT32_MAX ? INT32_MAX
                                                            : (int32_t)m->retry_after.seconds;
}

/* The number of branch b when it has the form a proxy of this toolkit gives what it forwards
 * (OSN_SIP_WIRE_OWN_BRANCH_LEN, osn/sip_wire.h): its first 16 hex digits, read, not hashed, since
 * they are a number the node made unique among its client transactions (a salt and a counter).
 * The keyed hash is not needed there: every number such a branch puts into the table is one of
 * ours, so nobody outside can crowd a bucket; a forged branch of that form is one lookup, as any
 * response is, and finds nothing, or a transaction whose stored branch text differs (the node's
 * osn_sip_wire_key_eq). Two SipHashes of 39 bytes a proxied call's forwards, three its responses.
 * Reads b.p[0..23) only after checking b.n; false when b is not of that form. */
static bool own_branch(struct osn_span b, uint64_t *v)
{
    if (b.n != OSN_SIP_WIRE_OWN_BRANCH_LEN || memcmp(b.p, "z9hG4bK", 7) != 0)
        return false;
    const char *h = b.p + 7;
#if defined(__SSE2__)
    /* The sixteen digits at once (a byte loop was half the cost of the SipHash it replaces):
     * each byte checked to be 0-9 or a-f and made its value, then pairs of bytes made one byte
     * (first digit high), eight bytes read most significant first. */
    __m128i c = _mm_loadu_si128((const __m128i *)(const void *)h);
    __m128i dig = _mm_and_si128(_mm_cmpgt_epi8(c, _mm_set1_epi8('0' - 1)),
                                _mm_cmplt_epi8(c, _mm_set1_epi8('9' + 1)));
    __m128i af = _mm_and_si128(_mm_cmpgt_epi8(c, _mm_set1_epi8('a' - 1)),
                               _mm_cmplt_epi8(c, _mm_set1_epi8('f' + 1)));
    if (_mm_movemask_epi8(_mm_or_si128(dig, af)) != 0xffff)
        return false;
    __m128i val = _mm_sub_epi8(_mm_sub_epi8(c, _mm_set1_epi8('0')),
                               _mm_and_si128(af, _mm_set1_epi8('a' - '0' - 10)));
    __m128i pair = _mm_and_si128(_mm_or_si128(_mm_slli_epi16(val, 4), _mm_srli_epi16(val, 8)),
                                 _mm_set1_epi16(0xff));
    uint64_t x;
    _mm_storel_epi64((__m128i *)(void *)&x, _mm_packus_epi16(pair, pair));
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    *v = x;
#else
    *v = __builtin_bswap64(x);
#endif
#else
    uint64_t x = 0;
    for (size_t i = 0; i < 16; i++) {
        unsigned c = (unsigned char)h[i], d = c - '0';
        if (d > 9) {
            d = c - 'a';
            if (d > 5)
                return false;
            d += 10;
        }
        x = x << 4 | d;
    }
    *v = x;
#endif
    return true;
}

/* The branch number of a message whose top Via branch is v's (not RFC 2543): read from a branch
 * of ours (own_branch) where `ours` says the branch can only be one a node wrote (a response, or
 * a request we print), else the keyed hash. A request from outside is always hashed: its branch
 * is what the sender chose, and a server transaction is inserted by it. */
static uint64_t branch_number(const struct osn_sip_via *v, bool ours)
{
    uint64_t x;
    if (ours && own_branch(v->branch, &x))
        return nz(x);
    return nz(osn_sip_wire_hash(v->branch.p, v->branch.n));
}

int osn_sip_wire_to_txn(const struct osn_sip_wire *m, struct osn_sip_msg *out)
{
    if (!m || !out || m->err.verdict != OSN_SIP_WIRE_ACCEPT || m->nvia == 0)
        return OSN_EINVAL;
    const struct osn_sip_via *v = &m->via[0];
    numbers(m, out);
    /* A response's Call-ID and From tag are its request's, and what reads a response's numbers
     * (the client transaction it matches by branch, sent-by and method; the element relaying
     * it) never looks at them: they stay 0 rather than cost two SipHashes a response. */
    if (m->is_request)
        out->call_id = nz(osn_sip_wire_hash(m->call_id.p, m->call_id.n));
    out->sent_by = nz(sent_by(v));
    if (!m->rfc2543) {
        out->branch = branch_number(v, !m->is_request);
    } else {
        /* RFC 3261 17.2.3 fallback, minus the To tag (see osn/sip_wire.h). A response carries no
         * Request-URI; it matches a client transaction, whose request we sent with a branch
         * of our own, so an RFC 2543 response only ever meets a stray lookup. */
        uint64_t h = 0x2543;
        if (m->is_request)
            h = chain(h, m->uri);
        h = chain(h, m->from.tag);
        h = chain(h, m->call_id);
        char cs[4] = {(char)(m->cseq >> 24), (char)(m->cseq >> 16), (char)(m->cseq >> 8),
                      (char)m->cseq};
        h = chain(h, (struct osn_span){cs, 4});
        h = chain(h, v->value);
        out->branch = nz(h);
    }
    out->from_tag = m->is_request && m->from.tag.p && m->from.tag.n
                            ? nz(osn_sip_wire_hash(m->from.tag.p, m->from.tag.n))
                            : 0;
    out->to_tag = m->to.tag.p && m->to.tag.n ? nz(osn_sip_wire_hash(m->to.tag.p, m->to.tag.n)) : 0;
    out->oc = v->oc;
    return 0;
}

int osn_sip_wire_to_txn_fwd(const struct osn_sip_wire *m, const struct osn_sip_msg *orig,
                            struct osn_sip_msg *out)
{
    if (!m || !orig || !out || m->err.verdict != OSN_SIP_WIRE_ACCEPT || m->nvia == 0)
        return OSN_EINVAL;
    if (m->rfc2543)
        return osn_sip_wire_to_txn(m, out);
    const struct osn_sip_via *v = &m->via[0];
    numbers(m, out);
    out->call_id = orig->call_id;
    out->sent_by = nz(sent_by(v));
    out->branch = branch_number(v, true);
    out->from_tag = orig->from_tag;
    out->to_tag = orig->to_tag;
    out->oc = v->oc;
    return 0;
}

static int put(char **w, char *end, struct osn_span *s)
{
    if (!s->p)
        return 0;
    if ((size_t)(end - *w) < s->n)
        return -1;
    if (s->n)
        memcpy(*w, s->p, s->n);
    s->p = *w;
    *w += s->n;
    return 0;
}

int osn_sip_wire_key_copy(struct osn_sip_wire_key *dst, char *buf, size_t cap,
                          const struct osn_sip_wire_key *src)
{
    if (!dst || !src || (!buf && cap))
        return OSN_EINVAL;
    struct osn_sip_wire_key k = *src;
    char *w = buf, *end = buf + cap;
    if (put(&w, end, &k.branch) || put(&w, end, &k.host) || put(&w, end, &k.call_id) ||
        put(&w, end, &k.uri) || put(&w, end, &k.from_tag) || put(&w, end, &k.via))
        return OSN_ETOOBIG;
    *dst = k;
    return (int)(w - buf);
}

bool osn_sip_wire_key_eq(const struct osn_sip_wire_key *a, const struct osn_sip_wire_key *b)
{
    if (a->rfc2543 != b->rfc2543 || a->method != b->method || a->port != b->port ||
        !osn_span_caseeq(a->host, b->host))
        return false;
    if (!a->rfc2543)
        return osn_span_eq(a->branch, b->branch);
    return a->cseq == b->cseq && osn_span_eq(a->uri, b->uri) &&
           osn_span_eq(a->from_tag, b->from_tag) && osn_span_eq(a->call_id, b->call_id) &&
           osn_span_eq(a->via, b->via);
}

bool osn_sip_wire_key_hash(const struct osn_sip_wire_key *k, uint64_t *fp)
{
    char b[1024];
    size_t n = 0;
    struct osn_span part[5] = {k->branch, k->host};
    int nparts = 2;
    if (k->rfc2543) {
        part[0] = k->uri;
        part[2] = k->from_tag;
        part[3] = k->call_id;
        part[4] = k->via;
        nparts = 5;
    }
    b[n++] = (char)k->rfc2543;
    b[n++] = (char)k->method;
    memcpy(b + n, &k->port, sizeof k->port);
    n += sizeof k->port;
    uint32_t cseq = k->rfc2543 ? k->cseq : 0;
    memcpy(b + n, &cseq, sizeof cseq);
    n += sizeof cseq;
    for (int i = 0; i < nparts; i++) {
        if (n + part[i].n + 1 > sizeof b)
            return false;
        /* Only the host (part 1) is folded; the rest is copied whole, not a byte at a time
         * through the fold's test (four keys a proxied call, each a branch of 40 bytes). */
        if (i == 1)
            for (size_t j = 0; j < part[i].n; j++)
                b[n + j] = lower(part[i].p[j]);
        else if (part[i].n)
            memcpy(b + n, part[i].p, part[i].n);
        n += part[i].n;
        b[n++] = '\0'; /* a NUL is never inside a parsed field: no two keys join alike */
    }
    *fp = osn_sip_wire_hash(b, n);
    return true;
}

/*
 * The slot loop of the fluid model (docs/protocols.md section 7.2, "exact per-cohort bookkeeping").
 *
 * A hop is one client -> server pair: hop 0 is U -> S (single) or UAC -> P1 (tandem), hop 1 is
 * P1 -> P2. Each hop keeps a ring of live cohorts. A cohort records, per copy c, the mass sent
 * and the fraction of the unanswered mass it went to (1 unless a control cap withheld some),
 * the mass z none of whose copies has reached the server yet, and its "first survivor" entries
 * (t, mass): the slot t at which the 100 Trying for that mass reaches the client. On hop 0 the
 * client (a UAC) acts on a response in the slot it arrives; on hop 1 the client is P1, which
 * only sees P2's response after it waited W_P1(t) in P1's own queue. Because a FIFO's
 * completion slot t + W(t) never decreases, "P1 has processed the responses of slots <= ptr"
 * is one pointer per hop, and a cohort's answered mass is a prefix of its entries.
 *
 * Order inside slot n (it makes the single-server run exact, and it only needs "a response is
 * never processed in the slot its request was sent" on the P1 -> P2 hop):
 *   1. every server's wait W(n) from its backlog q(n);
 *   2. P1's retransmissions toward P2 (they cost P1 work in this slot);
 *   3. hop 0: serve then send when its uplink delay d_u > 0, else send then serve
 *      (with d_u = 0 the copies sent in slot n arrive in slot n);
 *   4. P1 -> P2 originals (P1 forwards first copies in the slot it serves them), serve P2;
 *   5. Timer B, answer statistics, the control update.
 */
#include "osn/fluid.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fluid_int.h"
#include "osn/ctl.h"
#include "osn/err.h"

#define NCOPY (OSN_FLUID_MAX_RETX + 1)
#define TINY  1e-9 /* mass below which a first-survivor entry does not count for peak_delay */

struct entry {
    long t;      /* slot the response reaches the client (and, on hop 1, joins P1's queue) */
    double mass; /* first-surviving copies answered by it */
};

struct cohort {
    long m;       /* birth slot; -1 when the ring cell is free */
    double a;     /* transactions originated */
    double alive; /* hop 1: part of a whose UAC transaction was answered in time; hop 0: a */
    double z;     /* mass none of whose copies has reached the server */
    double ans;   /* answered mass: the entries [0, nans) */
    int nans, nent;
    bool done; /* Timer B has fired */
    double sent[NCOPY];
    double frac[NCOPY];
    struct entry ent[NCOPY];
};

struct hop {
    int h;
    long du, dd; /* link delays, slots */
    long ringlen;
    struct cohort *ring;
    double *born, *born_alive;     /* new cohorts per slot (hop 1: forwarded by P1) */
    double *resp_mass, *resp_dsum; /* responses reaching the client at slot t; mass x delay */
    double *work;                  /* extra work arriving at this server per slot (P1) */
    long *w;                       /* W of this hop's server per slot, whole slots */
    long ptr;                      /* the client has processed responses of slots <= ptr */
    long seen;                     /* answer statistics done up to this response slot */
    double q;                      /* backlog at the start of the current slot (PRSM: primary) */
    double qs;                     /* PRSM: secondary backlog (copies of kept transactions) */
    bool prsm;                     /* this hop's server schedules by PRSM */
    long f;                        /* FIFO completion slot of the last wait (slowdown) */
    double cslot;                  /* nominal capacity per slot */
    bool slows;
    bool controlled;
    struct osn_ctl_pi_law pi; /* the one PI law, src/ctl/pi_law.c */
    long tc;                  /* control interval, slots */
    double m_num, m_den;      /* measurement accumulated over the current interval */
    struct osn_fluid_hop_series *s;
};

struct run {
    const struct osn_fluid_cfg *cfg;
    struct osn_fluid_result *res;
    int hops, J;
    bool tandem;
    long N;
    struct hop hop[OSN_FLUID_MAX_HOPS];
    double e2e_failed;
};

static struct cohort *cohort_at(struct hop *hp, long m)
{
    struct cohort *c;

    if (m < 0)
        return NULL;
    c = &hp->ring[m % hp->ringlen];
    return c->m == m ? c : NULL;
}

/* Mass of cohort c still without a 100 Trying once the client processed responses <= ptr. */
static double unanswered(struct cohort *c, long ptr)
{
    double u;

    while (c->nans < c->nent && c->ent[c->nans].t <= ptr)
        c->ans += c->ent[c->nans++].mass;
    u = c->a - c->ans;
    return u > 0 ? u : 0;
}

/* Slot in which the client acts on a response that reached it at slot t. */
static long client_slot(const struct run *r, const struct hop *hp, long t)
{
    return hp->h == 1 ? t + r->hop[0].w[t] : t;
}

/* W(n): whole slots the server needs to clear the backlog q(n) found by arriving mass. */
static long wait_slots(const struct run *r, struct hop *hp, long n)
{
    double cn;

    if (!hp->slows)
        return (long)floor(hp->q / hp->cslot + OSN__FLUID_EPS);
    cn = osn__fluid_capacity_cum(r->cfg, hp->h, n);
    if (hp->f < n)
        hp->f = n;
    while (osn__fluid_capacity_cum(r->cfg, hp->h, hp->f + 1) - cn <=
           hp->q + OSN__FLUID_EPS * hp->cslot)
        hp->f++;
    return hp->f - n;
}

static void emit_retx(struct run *r, struct hop *hp, long n)
{
    double u[NCOPY] = {0}, due = 0, f = 1;
    struct cohort *c[NCOPY] = {0};
    const long *k = r->res->k;

    for (int j = 1; j <= r->J; j++) {
        c[j] = cohort_at(hp, n - k[j]);
        if (c[j] && !c[j]->done) {
            u[j] = unanswered(c[j], hp->ptr);
            due += u[j];
        }
    }
    if (hp->controlled) {
        double cap = hp->pi.out * r->cfg->slot;
        if (due > cap)
            f = cap / due;
    }
    for (int j = 1; j <= r->J; j++) {
        if (!c[j] || c[j]->done)
            continue;
        c[j]->sent[j] = f * u[j];
        c[j]->frac[j] = f;
        hp->s->retx[j][n] += f * u[j];
        hp->s->col[OSN_FLUID_RETX][n] += f * u[j];
    }
    hp->s->col[OSN_FLUID_WITHHELD][n] += (1 - f) * due;
}

static void emit_orig(struct run *r, struct hop *hp, long n)
{
    struct cohort *c = &hp->ring[n % hp->ringlen];

    memset(c, 0, sizeof *c);
    c->m = n;
    c->a = hp->born[n];
    c->alive = hp->h == 1 ? hp->born_alive[n] : c->a;
    c->z = c->a;
    c->sent[0] = c->a;
    c->frac[0] = 1;
    hp->s->col[OSN_FLUID_ORIG][n] = c->a;
    (void)r;
}

/* First survivors of cohort c answered at slot t: record them for the client. */
static void add_entry(struct run *r, struct hop *hp, struct cohort *c, long t, double mass)
{
    if (c->nent < NCOPY)
        c->ent[c->nent++] = (struct entry){t, mass};
    if (t < r->N) {
        hp->resp_mass[t] += mass;
        hp->resp_dsum[t] += mass * (double)(t - c->m) * r->cfg->slot;
        if (hp->h == 0 && mass > TINY && (double)(t - c->m) * r->cfg->slot > r->res->sum.peak_delay)
            r->res->sum.peak_delay = (double)(t - c->m) * r->cfg->slot;
    }
}

/* The part of copy c of cohort co whose earlier copies all failed to reach the server. */
static double first_reaching(const struct cohort *co, int c)
{
    double zs = co->frac[c] * co->z;
    return zs < co->sent[c] ? zs : co->sent[c];
}

/*
 * PRSM's two queues over slot n (fluid.h): the primary arrivals A_p are the copies of
 * transactions the server has not kept, the secondary ones the rest. Returns the primary loss
 * ratio; writes the served work and the loss, and moves the secondary queue.
 */
static double prsm_queues(struct run *r, struct hop *hp, long n, double cap, double *served,
                          double *loss)
{
    double ap = 0, as = 0, x, rest, buf = r->cfg->server[hp->h].buffer, room, sec;
    struct osn_fluid_hop_series *s = hp->s;

    for (int c = 0; c <= r->J; c++) {
        struct cohort *co = cohort_at(hp, n - hp->du - r->res->k[c]);
        if (co && co->sent[c] > 0) {
            double zs = first_reaching(co, c);
            ap += zs;
            as += co->sent[c] - zs;
        }
    }
    x = hp->q + ap;
    *served = x < cap ? x : cap;
    rest = x - *served;
    *loss = rest > buf ? rest - buf : 0;
    if (*loss > ap)
        *loss = ap;
    hp->q = rest - *loss;
    sec = hp->qs + as;
    if (hp->q <= 0) {
        /* The primary queue emptied: every copy it held was answered, so each copy waiting
         * second is removed when its turn comes, at no cost (the simulator's discard). */
        s->col[OSN_FLUID_REMOVED][n] = sec;
        hp->qs = 0;
    } else {
        room = buf - hp->q;
        hp->qs = sec < room ? sec : room;
        *loss += sec - hp->qs; /* pushed out by primary arrivals, or no room on arrival */
    }
    s->col[OSN_FLUID_QUEUE2][n] = hp->qs;
    return ap > 0 ? (rest - hp->q) / ap : 0;
}

static void serve(struct run *r, struct hop *hp, long n)
{
    const struct osn_fluid_server *srv = &r->cfg->server[hp->h];
    struct osn_fluid_hop_series *s = hp->s;
    double req = 0, extra = 0, x, cap, served, rest, loss = 0, pi = 0;
    long W = hp->w[n];

    for (int c = 0; c <= r->J; c++) {
        struct cohort *co = cohort_at(hp, n - hp->du - r->res->k[c]);
        if (co)
            req += co->sent[c];
    }
    if (hp->work)
        extra += hp->work[n];
    if (r->tandem && hp->h == 0)
        extra += srv->retx_cost * r->hop[1].s->col[OSN_FLUID_RETX][n];
    x = hp->q + req + extra;
    cap = hp->slows ? osn__fluid_capacity_cum(r->cfg, hp->h, n + 1) -
                              osn__fluid_capacity_cum(r->cfg, hp->h, n)
                    : hp->cslot;
    served = x < cap ? x : cap;
    rest = x - served;
    /* Only requests are dropped: P1's responses and its own retransmission work are not. */
    if (hp->prsm) {
        pi = prsm_queues(r, hp, n, cap, &served, &loss);
    } else if (rest > srv->buffer) {
        loss = rest - srv->buffer;
        if (loss > req)
            loss = req;
        pi = req > 0 ? loss / req : 0;
    }
    for (int c = 0; c <= r->J; c++) {
        struct cohort *co = cohort_at(hp, n - hp->du - r->res->k[c]);
        double sent, zs, fs;
        long t;
        if (!co || !(co->sent[c] > 0))
            continue;
        sent = co->sent[c];
        zs = first_reaching(co, c);
        if (c == 0)
            s->col[OSN_FLUID_ORIG_IN][n] += sent;
        else
            s->col[OSN_FLUID_REDUNDANT][n] += sent - zs;
        fs = zs * (1 - pi);
        co->z -= fs;
        t = n + W + hp->dd;
        if (hp->h == 1 && t < n + 1)
            t = n + 1;
        if (fs > 0)
            add_entry(r, hp, co, t, fs);
        if (r->tandem && hp->h == 0 && fs > 0 && n + W < r->N) {
            /* P1 forwards the first copy when it serves it; the UAC side lives if on time. */
            r->hop[1].born[n + W] += fs;
            if (t - co->m <= r->res->kb)
                r->hop[1].born_alive[n + W] += fs;
        }
        if (r->tandem && hp->h == 1) {
            /* Every copy P2 serves is answered (RFC 3261 17.2.1); P1 processes each answer. */
            long rt = n + W + hp->dd > n + 1 ? n + W + hp->dd : n + 1;
            if (rt < r->N)
                r->hop[0].work[rt] += srv->response_cost * sent * (1 - pi);
        }
    }
    s->col[OSN_FLUID_ARRIVED][n] = req + extra;
    s->col[OSN_FLUID_SERVED][n] = served;
    s->col[OSN_FLUID_LOST][n] = loss;
    if (!hp->prsm)
        hp->q = rest - loss;
    s->col[OSN_FLUID_QUEUE][n] = hp->q + hp->qs;
}

/* Answers of cohort c processed by the client by ptr count as completions at their slot. */
static void complete(struct run *r, struct hop *hp, struct cohort *c, long ptr)
{
    bool last = hp->h == r->hops - 1;
    double share = hp->h == 1 ? (c->a > 0 ? c->alive / c->a : 0) : 1;

    (void)unanswered(c, ptr);
    for (int i = 0; i < c->nans; i++) {
        long ts = client_slot(r, hp, c->ent[i].t);
        if (ts >= r->N)
            continue;
        hp->s->col[OSN_FLUID_COMPLETED][ts] += c->ent[i].mass;
        if (last)
            r->res->goodput[ts] += c->ent[i].mass * share;
    }
}

static void timer_b(struct run *r, struct hop *hp, long n)
{
    struct cohort *c = cohort_at(hp, n - r->res->kb);
    double fail;

    if (!c || c->done)
        return;
    fail = unanswered(c, hp->ptr);
    c->done = true;
    hp->s->col[OSN_FLUID_FAILED][n] = fail;
    if (hp->h == 0)
        r->e2e_failed += fail;
    else if (c->a > 0)
        r->e2e_failed += fail * c->alive / c->a;
    complete(r, hp, c, hp->ptr);
}

/* Answer statistics of slot n, then the controller's measurement and update. */
static void account(struct run *r, struct hop *hp, long n)
{
    struct osn_fluid_hop_series *s = hp->s;

    for (long t = hp->seen + 1; t <= hp->ptr; t++) {
        s->col[OSN_FLUID_ANSWERED][n] += hp->resp_mass[t];
        s->col[OSN_FLUID_DELAY_SUM][n] +=
                hp->resp_dsum[t] + hp->resp_mass[t] * (double)(n - t) * r->cfg->slot;
    }
    if (hp->ptr > hp->seen)
        hp->seen = hp->ptr;
    if (!hp->controlled) {
        s->col[OSN_FLUID_ALLOW][n] = NAN;
        return;
    }
    s->col[OSN_FLUID_ALLOW][n] = hp->pi.out;
    if (r->cfg->control.kind == OSN_FLUID_CTL_RRRC) {
        hp->m_num += s->col[OSN_FLUID_REDUNDANT][n];
        hp->m_den += s->col[OSN_FLUID_ORIG_IN][n];
    } else {
        hp->m_num += s->col[OSN_FLUID_DELAY_SUM][n];
        hp->m_den += s->col[OSN_FLUID_ANSWERED][n];
    }
    if ((n + 1) % hp->tc == 0) {
        osn_ctl_pi_law_update(&hp->pi, hp->m_den > 0 ? hp->m_num / hp->m_den : NAN);
        hp->m_num = hp->m_den = 0;
    }
}

static void step(struct run *r, long n)
{
    struct hop *h0 = &r->hop[0], *h1 = &r->hop[1];

    for (int h = 0; h < r->hops; h++) {
        struct hop *hp = &r->hop[h];
        hp->w[n] = wait_slots(r, hp, n);
        hp->s->col[OSN_FLUID_QDELAY][n] = (double)hp->w[n] * r->cfg->slot;
    }
    h0->ptr = n;
    if (r->tandem) {
        while (h1->ptr + 1 <= n && h1->ptr + 1 + h0->w[h1->ptr + 1] <= n)
            h1->ptr++;
        emit_retx(r, h1, n);
    }
    if (h0->du > 0)
        serve(r, h0, n);
    emit_retx(r, h0, n);
    emit_orig(r, h0, n);
    if (h0->du == 0)
        serve(r, h0, n);
    if (r->tandem) {
        emit_orig(r, h1, n);
        serve(r, h1, n);
    }
    for (int h = 0; h < r->hops; h++) {
        timer_b(r, &r->hop[h], n);
        account(r, &r->hop[h], n);
    }
}

/*
 * How the run ends (enum osn_fluid_state), judged on the last Timer B period of the horizon
 * (64 T1, or the whole run if shorter): Timer B expiries there mean failing; otherwise a
 * backlog that rose by more than one slot of service over it is growing, and one that did not
 * is standing.
 */
static enum osn_fluid_state end_state(const struct run *r)
{
    long from = r->N - 1 - r->res->kb;
    double failed = 0;
    bool grows = false;

    if (r->res->sum.recovered)
        return OSN_FLUID_RECOVERED;
    if (from < 0)
        from = 0;
    for (int h = 0; h < r->hops; h++) {
        const double *q = r->res->hop[h].col[OSN_FLUID_QUEUE];
        for (long n = from; n < r->N; n++)
            failed += r->res->hop[h].col[OSN_FLUID_FAILED][n];
        if (q[r->N - 1] - q[from] > r->hop[h].cslot * (1 + OSN__FLUID_EPS))
            grows = true;
    }
    if (failed > 1e-9 * (r->res->sum.offered + 1))
        return OSN_FLUID_FAILING;
    return grows ? OSN_FLUID_GROWING : OSN_FLUID_STANDING;
}

static void summarize(struct run *r)
{
    struct osn_fluid_result *res = r->res;
    struct osn_fluid_summary *sum = &res->sum;

    /* Cohorts still live at the horizon: what was answered within it completed on time. */
    for (int h = 0; h < r->hops; h++) {
        struct hop *hp = &r->hop[h];
        for (long i = 0; i < hp->ringlen; i++)
            if (hp->ring[i].m >= 0 && !hp->ring[i].done)
                complete(r, hp, &hp->ring[i], hp->ptr);
    }
    sum->recovered = true;
    for (long n = 0; n < r->N; n++) {
        sum->offered += res->offered[n];
        sum->completed += res->goodput[n];
    }
    for (int h = 0; h < r->hops; h++) {
        struct osn_fluid_hop_series *s = &res->hop[h];
        for (long n = 0; n < r->N; n++) {
            double q = s->col[OSN_FLUID_QUEUE][n];
            if (q > sum->peak_queue[h])
                sum->peak_queue[h] = q;
            sum->retransmissions += s->col[OSN_FLUID_RETX][n];
            sum->redundant += s->col[OSN_FLUID_REDUNDANT][n];
            sum->lost += s->col[OSN_FLUID_LOST][n];
        }
        sum->final_queue[h] = s->col[OSN_FLUID_QUEUE][r->N - 1];
        if (sum->final_queue[h] > r->hop[h].cslot * (1 + OSN__FLUID_EPS))
            sum->recovered = false;
    }
    {
        const struct osn_fluid_hop_series *s0 = &res->hop[0];
        double ans = 0, dsum = 0;
        for (long n = 0; n < r->N; n++) {
            ans += s0->col[OSN_FLUID_ANSWERED][n];
            dsum += s0->col[OSN_FLUID_DELAY_SUM][n];
            sum->removed += s0->col[OSN_FLUID_REMOVED][n];
        }
        sum->mean_delay = ans > 0 ? dsum / ans : NAN;
    }
    sum->state = end_state(r);
    sum->failed = r->e2e_failed;
    sum->pending = sum->offered - sum->completed - sum->failed;
    if (fabs(sum->pending) < 1e-9 * (sum->offered + 1))
        sum->pending = 0;
    sum->goodput = sum->completed / ((double)r->N * r->cfg->slot);
}

static double *dalloc(long n)
{
    return calloc((size_t)n, sizeof(double));
}

double osn_fluid_memory(const struct osn_fluid_cfg *cfg, double *ring_bytes)
{
    /* setup(): per hop NCOLS + retx + 5 columns of N doubles or longs, and a ring of
     * max(Timer B, last copy + uplink delay) + 1 cohorts; two columns for the result. */
    double N = ceil(cfg->horizon / cfg->slot), total = 2 * 8 * N, ring = 0;
    int hops = cfg->topology == OSN_FLUID_TANDEM ? 2 : 1;
    double kb = 64 * cfg->t1 / cfg->slot, klast = kb; /* the last copy is sent before B */

    for (int h = 0; h < hops; h++) {
        double len = fmax(kb, klast + cfg->server[h].delay_up / cfg->slot) + 1;
        total += 8 * N * (OSN_FLUID_NCOLS + cfg->retx + 5);
        ring += len * (double)sizeof(struct cohort);
    }
    if (ring_bytes)
        *ring_bytes = ring;
    return total + ring;
}

/* Allocates the result columns and the hop state. Returns 0 or OSN_ENOMEM. */
static int setup(struct run *r)
{
    const struct osn_fluid_cfg *cfg = r->cfg;
    struct osn_fluid_result *res = r->res;
    long N = r->N;

    res->goodput = dalloc(N);
    res->offered = dalloc(N);
    if (!res->goodput || !res->offered)
        return OSN_ENOMEM;
    for (int h = 0; h < r->hops; h++) {
        struct hop *hp = &r->hop[h];
        const struct osn_fluid_server *srv = &cfg->server[h];
        hp->h = h;
        hp->s = &res->hop[h];
        for (int c = 0; c < OSN_FLUID_NCOLS; c++)
            if (!(hp->s->col[c] = dalloc(N)))
                return OSN_ENOMEM;
        for (int j = 1; j <= r->J; j++)
            if (!(hp->s->retx[j] = dalloc(N)))
                return OSN_ENOMEM;
        hp->du = lround(srv->delay_up / cfg->slot);
        hp->dd = lround(srv->delay_down / cfg->slot);
        hp->ringlen = (res->kb > res->k[r->J] + hp->du ? res->kb : res->k[r->J] + hp->du) + 1;
        hp->ring = calloc((size_t)hp->ringlen, sizeof *hp->ring);
        hp->born = h == 0 ? res->offered : dalloc(N);
        hp->born_alive = h == 1 ? dalloc(N) : NULL;
        hp->resp_mass = dalloc(N);
        hp->resp_dsum = dalloc(N);
        hp->work = r->tandem && h == 0 ? dalloc(N) : NULL;
        hp->w = calloc((size_t)N, sizeof(long));
        if (!hp->ring || !hp->born || (h == 1 && !hp->born_alive) || !hp->resp_mass ||
            !hp->resp_dsum || (r->tandem && h == 0 && !hp->work) || !hp->w)
            return OSN_ENOMEM;
        for (long i = 0; i < hp->ringlen; i++)
            hp->ring[i].m = -1;
        hp->ptr = hp->seen = -1;
        hp->cslot = srv->rate * cfg->slot;
        hp->slows = osn__fluid_slows(cfg, h);
        hp->prsm = cfg->control.kind == OSN_FLUID_CTL_PRSM;
        hp->controlled = cfg->control.kind != OSN_FLUID_CTL_NONE && !hp->prsm && h == r->hops - 1;
        if (hp->controlled) {
            osn_ctl_pi_law_init(&hp->pi,
                                &(struct osn_ctl_pi_law_cfg){.target = cfg->control.target,
                                                             .kp = cfg->control.kp,
                                                             .ki = cfg->control.ki,
                                                             .interval = cfg->control.interval,
                                                             .lo = 0,
                                                             .hi = cfg->control.max_rate});
            hp->tc = lround(cfg->control.interval / cfg->slot);
            if (hp->tc < 1)
                hp->tc = 1;
        }
    }
    if (cfg->profile.shape == OSN_FLUID_MMPP)
        osn__fluid_mmpp_offered(cfg, res->offered, N);
    else
        for (long n = 0; n < N; n++)
            res->offered[n] = osn__fluid_offered(cfg, n);
    return 0;
}

static void teardown(struct run *r)
{
    for (int h = 0; h < OSN_FLUID_MAX_HOPS; h++) {
        struct hop *hp = &r->hop[h];
        free(hp->ring);
        if (h == 1)
            free(hp->born);
        free(hp->born_alive);
        free(hp->resp_mass);
        free(hp->resp_dsum);
        free(hp->work);
        free(hp->w);
    }
}

int osn_fluid_run(struct osn_fluid_result **resp, const struct osn_fluid_cfg *cfg, char *err,
                  size_t errsize)
{
    struct run r = {0};
    int rc;

    if (!resp)
        return OSN_EINVAL;
    rc = osn_fluid_cfg_check(cfg, err, errsize);
    if (rc)
        return rc;
    r.cfg = cfg;
    r.tandem = cfg->topology == OSN_FLUID_TANDEM;
    r.hops = r.tandem ? 2 : 1;
    r.J = cfg->retx;
    r.N = lround(cfg->horizon / cfg->slot);
    if (r.N < 1)
        r.N = 1;
    r.res = calloc(1, sizeof *r.res);
    if (!r.res)
        return OSN_ENOMEM;
    r.res->cfg = *cfg;
    r.res->hops = r.hops;
    r.res->nslots = r.N;
    /* RFC 3261 17.1.1.2: copy j leaves at (2^j - 1) T1; Timer B = 64 T1. */
    for (int j = 0; j <= OSN_FLUID_MAX_RETX; j++)
        r.res->k[j] = lround((double)((1L << j) - 1) * cfg->t1 / cfg->slot);
    r.res->kb = lround(64 * cfg->t1 / cfg->slot);
    rc = setup(&r);
    if (rc)
        goto out;
    for (long n = 0; n < r.N; n++)
        step(&r, n);
    summarize(&r);
    *resp = r.res;
    r.res = NULL;
out:
    teardown(&r);
    osn_fluid_result_free(r.res);
    if (rc == OSN_ENOMEM && err && errsize)
        snprintf(err, errsize, "out of memory for %ld slots", r.N);
    return rc;
}

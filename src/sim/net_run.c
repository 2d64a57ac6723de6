/*
 * One replication of the network simulator: the elements and the event set set up, the event
 * loop, and the teardown. The events are few: a call arrival at a source, a transaction timer
 * (two slots), a message arriving over a link, a service completion, the end of a call's hold,
 * a caller's retry or end of patience, the UAS's 2xx retransmission, and a trace sample.
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net_int.h"
#include "osn/des.h"
#include "osn/des_tuning.h"
#include "osn/err.h"
#include "osn/mem.h"

/* ---- setup ---- */

/* The links of every element to its next hops, for the hops where links of their own
 * (cfg->link) differ from the hop's: those hops become LINK_OWN and their messages find their
 * link in s->lk. A delay with no FIFO class left goes to the heap (class -1). link_class[id]
 * marks the classes the links use. */
static int setup_links(struct net *s, bool *link_class)
{
    const struct osn_net_cfg *cfg = s->cfg;
    int n = 0, next0, nnext;
    bool own[MAXHOP] = {false};

    s->lk_off = calloc((size_t)s->nelem, sizeof *s->lk_off);
    if (!s->lk_off)
        return OSN_ENOMEM;
    for (int f = 0; f < s->uas; f++) {
        (void)osn__net_link_hop(cfg, f, -1, &next0, &nnext);
        s->lk_off[f] = n - next0;
        n += nnext;
    }
    s->lk = calloc((size_t)n, sizeof *s->lk);
    if (!s->lk)
        return OSN_ENOMEM;
    for (int f = 0; f < s->uas; f++) {
        (void)osn__net_link_hop(cfg, f, -1, &next0, &nnext);
        int h = osn__net_link_hop(cfg, f, next0, NULL, NULL);
        for (int t = next0; t < next0 + nnext; t++)
            s->lk[s->lk_off[f] + t] = (struct net_link){.cls = s->link_class[h],
                                                        .delay = s->fixd[s->link_class[h]],
                                                        .loss = s->link_loss[h]};
    }
    for (int i = 0; i < cfg->nlinks; i++) {
        const struct osn_net_link_own *o = &cfg->link[i];
        int h = osn__net_link_hop(cfg, o->from, o->to, NULL, NULL);
        struct net_link *l = &s->lk[s->lk_off[o->from] + o->to];
        l->delay = o->link.delay;
        l->loss = o->link.loss;
        l->cls = osn__net_fix_class(s, l->delay);
        if (l->cls >= 0)
            link_class[l->cls] = true;
        own[h] |= l->cls != s->link_class[h] || l->loss != s->link_loss[h];
    }
    for (int h = 0; h < s->nhop; h++)
        if (own[h])
            s->link_loss[h] = LINK_OWN;
    return 0;
}

/* Whether a tree's link from f to t differs from hop h's class and loss. */
static bool tree_link_differs(const struct net *s, int f, int t, int h)
{
    const struct net_link *l = &s->lk[s->lk_off[f] + t];
    return l->cls != s->link_class[h] || l->loss != s->link_loss[h];
}

/* A tree's links: one from each element to its next hop (lk[f], lk_off[f] = f - its next hop;
 * a proxy into the cores of a tree with core_w, one to each core), each with its place's delay
 * and loss (from a source: access; into the UAS: uas_link; else trunk) or its own (cfg->link).
 * A hop index is a different link for calls of different sources (a source nearer the core
 * reaches the UAS in fewer hops) or choices: a hop where any call's link differs from the hop's
 * (link_class, link_loss) becomes LINK_OWN. */

static int setup_tree_links(struct net *s, bool *link_class)
{
    const struct osn_net_cfg *cfg = s->cfg;
    bool own[MAXHOP] = {false};
    int n = s->nelem;

    /* A proxy that chooses among the cores has a link to each: ncores more, lk_off[f] + core k
     * the one to core k (those it does not send to unused). */
    for (int f = s->E; cfg->core_w && f < s->core; f++)
        n += osn__net_core_w(cfg, f, osn__net_up(cfg, f)) > 0 ? s->ncores : 0;
    s->lk_off = calloc((size_t)s->nelem, sizeof *s->lk_off);
    s->lk = calloc((size_t)n, sizeof *s->lk);
    if (!s->lk_off || !s->lk)
        return OSN_ENOMEM;
    n = s->nelem;
    for (int f = 0; f < s->uas; f++) {
        int t = osn__net_up(cfg, f);
        const struct osn_net_link_cfg *l = f < s->E      ? &cfg->access
                                           : t >= s->uas ? &cfg->uas_link
                                                         : &cfg->trunk;
        struct net_link one = {
                .cls = osn__net_fix_class(s, l->delay), .delay = l->delay, .loss = l->loss};
        s->lk_off[f] = f - t;
        s->lk[f] = one;
        if (osn__net_core_w(cfg, f, t) > 0) { /* its links to the cores, from lk[n] on */
            s->lk_off[f] = n - s->core;
            for (int k = 0; k < s->ncores; k++)
                s->lk[n++] = one;
        }
    }
    for (int i = 0; i < cfg->nlinks; i++) { /* osn_net_check: `to` is `from`'s next hop */
        struct net_link *l = &s->lk[s->lk_off[cfg->link[i].from] + cfg->link[i].to];
        l->delay = cfg->link[i].link.delay;
        l->loss = cfg->link[i].link.loss;
        l->cls = osn__net_fix_class(s, l->delay);
    }
    for (int f = 0; f < n; f++)
        if ((f < s->uas || f >= s->nelem) && s->lk[f].cls >= 0)
            link_class[s->lk[f].cls] = true;
    for (int i = 0; i < s->E; i++)
        for (int h = 0; h < s->src_path[i].nhop; h++) {
            int f = s->src_path[i].path[h], t = s->src_path[i].path[h + 1];
            own[h] |= tree_link_differs(s, f, t, h);
            /* a proxy that chooses: its links to each of its cores, and theirs to the UAS */
            for (int k = 0; osn__net_core_w(cfg, f, t) > 0 && k < s->ncores; k++)
                if (osn__net_core_w(cfg, f, s->core + k) > 0) {
                    own[h] |= tree_link_differs(s, f, s->core + k, h);
                    own[h + 1] |= tree_link_differs(s, s->core + k, s->core_uas[k], h + 1);
                }
        }
    for (int h = 0; h < s->nhop; h++)
        if (own[h])
            s->link_loss[h] = LINK_OWN;
    return 0;
}

/* A tree's paths: each source's, up its next hops to the UAS (osn_net_check bounded them to
 * MAXHOP hops); s->nhop the longest. */
static int setup_tree_paths(struct net *s)
{
    s->src_path = calloc((size_t)s->E, sizeof *s->src_path);
    if (!s->src_path)
        return OSN_ENOMEM;
    s->nhop = 0;
    for (int i = 0; i < s->E; i++) {
        struct tree_path *p = &s->src_path[i];
        int h = 0;
        p->path[0] = (uint16_t)i;
        for (int at = i; at < s->uas && h < MAXHOP;)
            p->path[++h] = (uint16_t)(at = osn__net_up(s->cfg, at));
        p->nhop = (uint8_t)h;
        s->nhop = h > s->nhop ? h : s->nhop;
    }
    memcpy(s->path0, s->src_path[0].path, sizeof s->path0);
    return 0;
}

/* The FIFO timer classes: the SIP timers' fixed durations, then the links'. */
static int setup_timer_classes(struct net *s, char *msg, size_t msgsize)
{
    const struct osn_net_cfg *cfg = s->cfg;
    double t1 = cfg->sip.t1;
    double fixed[] = {t1,      2 * t1,  4 * t1,      8 * t1,      16 * t1,
                      32 * t1, 64 * t1, cfg->sip.t2, cfg->sip.t4, cfg->sip.timer_d};
    bool sip_class[OSN_DES_MAX_FIFOS] = {false}, link_class[OSN_DES_MAX_FIFOS] = {false};
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
        int id = osn__net_fix_class(s, fixed[i]);
        if (id >= 0)
            sip_class[id] = true;
    }
    /* Timers of 64*T1 (B, F, J, L, M) are the most numerous pending ones, up to about four per
     * hop of every call for 32 s: room for them up front spares their ring its doublings. Only
     * a hint: a ring that needs more still grows, and one that cannot be made yet will. */
    double want = cfg->src.rate * 64 * t1 * 4 * s->nhop;
    if (want > 0 && want < 1e8)
        (void)osn_des_timer_reserve(&s->q, osn__net_fix_class(s, 64 * t1), (size_t)want);
    for (int h = 0; h < s->nhop; h++) {
        const struct osn_net_link_cfg *l = h == 0             ? &cfg->access
                                           : h == s->nhop - 1 ? &cfg->uas_link
                                                              : &cfg->trunk;
        s->link_class[h] = osn__net_fix_class(s, l->delay);
        s->link_loss[h] = l->loss;
        if (s->link_class[h] < 0) {
            snprintf(msg, msgsize, "too many distinct timer durations");
            return OSN_EINVAL;
        }
        link_class[s->link_class[h]] = true;
    }
    int err = s->src_path   ? setup_tree_links(s, link_class)
              : cfg->nlinks ? setup_links(s, link_class)
                            : 0;
    if (err)
        return err;
    /* What each FIFO prefetches ahead of its head: for a SIP timer its whole transaction, as
     * the handler reads the request (line 0), the state (1) and the events and the call
     * pointer (2). A link's message was sent a few milliseconds before (still in cache):
     * nothing, unless its class is a SIP timer's too. */
    int before = (int)offsetof(struct ntxn, ev);
    int after = (int)(sizeof(struct ntxn) - offsetof(struct ntxn, ev[1]));
    for (int id = 0; id < s->nfix; id++)
        if (sip_class[id] || link_class[id])
            (void)osn_des_timer_prefetch(&s->q, id, sip_class[id] ? before : 0,
                                         sip_class[id] ? after : 0);
    return 0;
}

/* A source's arrival process and its first arrival. */
static int setup_source(struct net *s, struct element *el, char *msg, size_t msgsize)
{
    const struct osn_net_cfg *cfg = s->cfg;
    struct osn_arrivals a = {.flows = 1};
    el->rate_share = osn_net_source_share(cfg, (int)(el - s->elems), s->E);
    a.process = cfg->src.process == OSN_NET_MMPP ? OSN_ARR_MMPP : OSN_ARR_POISSON;
    a.rate = cfg->src.rate * el->rate_share;
    if (cfg->src.process == OSN_NET_MMPP) {
        a.mmpp.K = 2;
        a.mmpp.rate[0] = cfg->src.mmpp_rate[0] * el->rate_share;
        a.mmpp.rate[1] = cfg->src.mmpp_rate[1] * el->rate_share;
        a.mmpp.gen[0][1] = cfg->src.mmpp_switch[0];
        a.mmpp.gen[1][0] = cfg->src.mmpp_switch[1];
    }
    if (cfg->src.process != OSN_NET_PROFILE && cfg->src.process != OSN_NET_BULK &&
        osn_des_arr_setup(&el->darr, &a, msg, msgsize) != 0)
        return OSN_EINVAL;
    double t = osn__net_next_arrival(s, el, 0);
    if (isfinite(t))
        osn__net_at(s, (int)(el - s->elems), &el->arr, t);
    return 0;
}

/* Element i: its role, transaction layer, controller halves (the server half at the core, the
 * edges or both, [control] at; the client half at each server half's upstream neighbours: the
 * edges for a core, the sources for an edge), server and, for a source, arrivals. */
static int setup_element(struct net *s, int i, const struct osn_sip_cfg layer_cfg[3], char *msg,
                         size_t msgsize)
{
    const struct osn_net_cfg *cfg = s->cfg;
    struct element *el = &s->elems[i];
    int err;

    el->tot = s->tot + OSN__NT_ELEM + OSN__NE_N * i;
    el->key = OSN_DES_KEY(i, 0);
    el->role = i < s->E ? R_SRC : i >= s->uas ? R_UAS : R_PROXY;
    el->sc = i >= s->uas     ? &cfg->uas
             : i == s->core  ? &cfg->core
             : is_core(s, i) ? &cfg->more_cores[i - s->core - 1]
             : cfg->topology == OSN_NET_TANDEM && cfg->mid_own && i >= 2 && i < s->core
                     ? &cfg->mid[i - 2] /* a tandem's mids, from element 2 on */
             : cfg->edges_own && i >= s->E ? &cfg->edge_own[i - s->E] /* an edge of its own */
                                           : &cfg->edge;
    osn_des_ev_init(&el->svc, EV_SERVICE);
    osn_des_ev_init(&el->arr, EV_ARRIVAL);
    err = osn_sip_layer_init_unindexed(&el->sip, &layer_cfg[el->role]);
    if (err)
        return err;
    struct osn_ctl_cfg cc = cfg->ctl;
    cc.seed = osn_rng_next(&s->ctl_rng);
    if (has_srv(s, i)) {
        /* An edge that is a client as well (at = both) seeds its server half apart. */
        struct osn_ctl_cfg cs = cc;
        if (!is_core(s, i))
            cs.seed ^= 0x9e3779b97f4a7c15u;
        err = osn_ctl_new_kind(&el->srv, cfg->ctl_kind, &cs);
        if (err) {
            snprintf(msg, msgsize, "controller '%s' rejected its configuration",
                     osn_ctl_kind_name(cfg->ctl_kind));
            return err;
        }
    }
    /* The core's upstream neighbour (a fanout's edge chooses among the cores whatever the
     * control), and whether it is the core's client (the core has a server half); a source
     * whose edge has a server half: its UAC is the client (RFC 7339 5.3). */
    bool gate = s->src_path ? i >= s->E && i < s->core && is_core(s, osn__net_up(cfg, i))
                            : (s->nhop >= 4 && i == s->core - 1) ||
                                      (s->nhop == 3 && i >= s->E && i < 2 * s->E);
    bool core_cli = gate && cfg->ctl_at != OSN_NET_CTL_AT_EDGE;
    bool src_cli = cfg->ctl_at != OSN_NET_CTL_AT_CORE && i < s->E;
    /* A tree's proxy with several cores among its next hops chooses as a fanout's edge does
     * (the cores it does not send to have weight 0: never offered, never asked). */
    int choices = 0;
    for (int k = 0; gate && cfg->core_w && k < s->ncores; k++)
        choices += osn__net_core_w(cfg, i, s->core + k) > 0;
    if (gate && (cfg->topology == OSN_NET_FANOUT || choices > 1)) {
        /* RFC 7339 5.10: a client half per core, fed by that core's responses (hops.c). An
         * INVITE a core fails (a timeout, a 503 with Retry-After) goes to another, as at the
         * node (net_tu.c, failover). */
        /* The choice and its servers in one allocation, the servers right after it. */
        el->hops = calloc(1, sizeof *el->hops + (size_t)s->ncores * sizeof *el->hops->h);
        if (!el->hops)
            return OSN_ENOMEM;
        *el->hops = (struct osn_elem_hops){.n = s->ncores,
                                           .down_time = cfg->down_time,
                                           .h = (struct osn_elem_hop *)(el->hops + 1)};
        for (int k = 0; k < s->ncores; k++) {
            el->hops->h[k].weight =
                    choices ? osn__net_core_w(cfg, i, s->core + k) : cfg->core_weight[k];
            struct osn_ctl_cfg ck = cfg->ctl;
            ck.seed = osn_rng_next(&s->ctl_rng);
            if (core_cli && cfg->ctl_kind != OSN_CTL_KIND_NONE &&
                (err = osn_ctl_new_kind(&el->hops->h[k].cli, cfg->ctl_kind, &ck)) != 0)
                return err;
        }
    } else if ((core_cli || src_cli) && cfg->ctl_kind != OSN_CTL_KIND_NONE) {
        err = osn_ctl_new_kind(&el->cli, cfg->ctl_kind, &cc);
        if (err)
            return err;
    }
    osn_elem_server_init(&el->server, el->sc->cost, el->sc->buffer, el->srv, s->t_obs);
    const double *cost = el->sc->cost;
    el->kind_by_method = !el->srv && (cost[OSN_ELEM_K_RETX] > 0) == (cost[OSN_ELEM_K_INVITE] > 0) &&
                         (cost[OSN_ELEM_K_RETX] > 0) == (cost[OSN_ELEM_K_BYE] > 0) &&
                         (cost[OSN_ELEM_K_RETX] > 0) == (cost[OSN_ELEM_K_CANCEL] > 0);
    el->tu = (struct osn_elem){.role = el->role == R_UAS ? OSN_ELEM_UAS : OSN_ELEM_PROXY,
                               .hops = el->hops,
                               .cli = el->cli,
                               .sip = &cfg->sip,
                               .retry_after = cfg->ctl.none.retry_after,
                               .record_route = el->sc->record_route};
    el->off_path = el->role == R_PROXY && !osn_elem_on_dialog_path(&el->tu);
    el->core = is_core(s, i);
    el->outage = el->role != R_SRC && el->sc->outage_end > el->sc->outage_start;
    el->divert = el->off_path || el->outage;
    el->slow = el->role != R_SRC && el->sc->slowdown_end > el->sc->slowdown_start;
    el->offer_oc = el->cli || (el->hops && el->hops->h[0].cli);
    return el->role == R_SRC ? setup_source(s, el, msg, msgsize) : 0;
}

/* Splits the replication's stream into one stream per purpose, each seeded from the next output
 * of `rng` in a fixed order (the hold key, the links, the controllers, then each element's
 * arrivals and service). What a run draws for one purpose then never shifts what another gets:
 * points that differ only in control, thresholds or buffer see the same arrival instants and
 * hold times in replication i (common random numbers), and a paired comparison of them
 * (--compare) has the narrow intervals that this buys. */
/* The elements whose streams come before the retry key: those of a network of 64 edges, the
 * most there were when the keys after them were added. A smaller network draws (and drops) as
 * many, the elements past them draw theirs last: every network that ran before the limit went
 * sees the same numbers. */
#define EARLY_ELEMS (2 * 64 + 3)

/* The hops whose loss streams come first: MAXHOP was 4 when the keys after them were added. The
 * streams of hops past them come last, so that a path of 4 hops at most draws what it drew. */
#define EARLY_HOPS 4

static void split_streams(struct net *s, struct osn_rng *rng)
{
    s->hold_key = osn_rng_next(rng);
    for (int h = 0; h < EARLY_HOPS; h++)
        osn_rng_seed(&s->loss_rng[h], osn_rng_next(rng));
    osn_rng_seed(&s->ctl_rng, osn_rng_next(rng));
    for (int i = 0; i < EARLY_ELEMS; i++) {
        uint64_t arr = osn_rng_next(rng), svc = osn_rng_next(rng);
        if (i < s->nelem) {
            osn_rng_seed(&s->elems[i].arr_rng, arr);
            osn_rng_seed(&s->elems[i].svc_rng, svc);
        }
    }
    /* New purposes come last, so that the streams above stay what they were. */
    s->retry_key = osn_rng_next(rng);
    s->patience_key = osn_rng_next(rng);
    uint64_t x = s->patience_key ^ 0x52494e47u; /* "RING" */
    s->ring_key = osn_splitmix64(&x);
    for (int i = EARLY_ELEMS; i < s->nelem; i++) {
        osn_rng_seed(&s->elems[i].arr_rng, osn_rng_next(rng));
        osn_rng_seed(&s->elems[i].svc_rng, osn_rng_next(rng));
    }
    for (int h = EARLY_HOPS; h < MAXHOP; h++)
        osn_rng_seed(&s->loss_rng[h], osn_rng_next(rng));
}

int osn__net_setup(struct net *s, const struct osn_net_cfg *cfg, struct osn_rng *rng, double *tot,
                   char *msg, size_t msgsize)
{
    int err, nelem = osn__net_nelem(cfg);

    s->cfg = cfg;
    s->elems = calloc((size_t)nelem, sizeof *s->elems);
    if (!s->elems)
        return OSN_ENOMEM;
    s->nelem = nelem;
    split_streams(s, rng);
    s->tot = tot;
    s->call_free = UINT32_MAX;
    bool fan = cfg->topology == OSN_NET_FANOUT;
    s->E = osn_net_role_count(cfg, OSN_NET_ROLE_SOURCE);
    s->ncores = osn_net_role_count(cfg, OSN_NET_ROLE_CORE); /* a fanout's or a tree's several */
    s->nuas = osn_net_role_count(cfg, OSN_NET_ROLE_UAS);
    s->uas = s->nelem - s->nuas;
    s->core = s->uas - s->ncores;
    for (int k = 0; k < s->ncores; k++)
        s->core_uas[k] = (uint16_t)(s->nuas > 1 ? osn__net_up(cfg, s->core + k) : s->uas);
    s->nhop = cfg->topology == OSN_NET_TANDEM ? 3 + cfg->mids : 3;
    s->srv_lo = cfg->ctl_at == OSN_NET_CTL_AT_CORE ? s->core : s->E;
    s->srv_hi = cfg->ctl_at == OSN_NET_CTL_AT_EDGE ? 2 * s->E : s->core + s->ncores;
    /* Source 0's path: it, its proxy, the proxies after it (a tandem's mid) up to the core (a
     * fan-out's first: the edge's choice overwrites it), the UAS. */
    s->path0[0] = 0;
    s->path0[1] = (uint16_t)s->E;
    for (int h = 2; h <= s->nhop; h++)
        s->path0[h] = (uint16_t)(s->core - (s->nhop - 1 - h));
    if (fan)
        s->path0[3] = (uint16_t)s->uas;
    if (tree_like(cfg) && (err = setup_tree_paths(s)) != 0)
        return err;
    s->call_size = call_bytes(s->nhop);
    s->calls_per_block = (uint32_t)(OSN_MEM_BLOCK / s->call_size);
    s->call_fresh = s->calls_per_block; /* no block yet: the first call makes one */
    s->t_obs = cfg->warmup;
    s->t_end = cfg->warmup + cfg->time;
    s->tb = 64 * cfg->sip.t1;
    s->uac = (struct osn_uac_cfg){.timer_b = s->tb,
                                  .retry = {.prob = cfg->src.retry_prob,
                                            .max_retries = cfg->src.max_retries,
                                            .honour_retry_after = cfg->src.honour_retry_after},
                                  .retry_until = INFINITY,
                                  .patience = cfg->src.patience != OSN_NET_PATIENCE_NONE,
                                  .callee_hangs_up = cfg->src.callee_hangs_up};
    err = osn_des_init(&s->q, 1024);
    if (err)
        return err;
    /* Call holds (seconds) in a heap of their own: the service completions sift through ~20. */
    osn_des_set_horizon(&s->q, cfg->sip.t1);
    memset(s->fix_hint, -1, sizeof s->fix_hint);
    err = setup_timer_classes(s, msg, msgsize);
    if (err)
        return err;
    /* The layers' configurations by role (enum role): the UAC's in SIPp's mode, the proxies'
     * 100 Trying at once, the UAS's never (it answers at once). */
    struct osn_sip_cfg layer[3] = {cfg->sip, cfg->sip, cfg->sip};
    if (cfg->sipp) {
        layer[R_SRC].invite_max_retrans = 5;
        layer[R_SRC].non_invite_max_retrans = 9;
        layer[R_SRC].honor_retry_after = false;
    }
    for (int r = 0; r < 3; r++)
        layer[r].timer_b_proceeding = true;
    layer[R_PROXY].trying_delay = 0;
    layer[R_UAS].trying_delay = -1;
    for (int i = 0; i < s->nelem; i++) {
        err = setup_element(s, i, layer, msg, msgsize);
        if (err)
            return err;
    }
    s->trace = cfg->trace_interval > 0 ? cfg->trace : NULL;
    if (s->trace) {
        osn_des_ev_init(&s->trace_ev, EV_TRACE);
        s->trace_key = OSN_DES_KEY(NET_SENDER, 0);
        if (osn_des_at_key(&s->q, &s->trace_ev, cfg->trace_interval, s->trace_key++) != 0)
            s->err = OSN_ENOMEM;
        osn__net_trace_header(s);
    }
    return s->err;
}

void osn__net_teardown(struct net *s)
{
    for (int i = 0; i < s->nelem; i++) {
        osn_sip_layer_release(&s->elems[i].sip);
        osn_ctl_free(s->elems[i].srv);
        osn_ctl_free(s->elems[i].cli);
        for (int k = 0; s->elems[i].hops && k < s->elems[i].hops->n; k++)
            osn_ctl_free(s->elems[i].hops->h[k].cli);
        free(s->elems[i].hops);
    }
    free(s->elems);
    s->elems = NULL;
    free(s->lk);
    free(s->lk_off);
    free(s->src_path);
    s->src_path = NULL;
    s->lk = NULL;
    s->lk_off = NULL;
    s->nelem = 0;
    for (size_t i = 0; i < s->ncallc; i++)
        osn_mem_block_free(s->callc[i], OSN_MEM_BLOCK);
    for (size_t i = 0; i < s->ntxnc; i++)
        osn_mem_block_free(s->txnc[i], OSN_MEM_BLOCK);
    for (size_t i = 0; i < s->nmsgc; i++)
        osn_mem_block_free(s->msgc[i], OSN_MEM_BLOCK);
    for (size_t i = 0; i < s->ncxc; i++)
        osn_mem_block_free(s->cxc[i], OSN_MEM_BLOCK);
    free(s->callc);
    free(s->txnc);
    free(s->msgc);
    free(s->cxc);
    osn_des_release(&s->q);
    osn__net_trace_release(s);
}

/* ---- the event loop ---- */

/* The transaction wrapper an event of timer slot 0 or 1 is embedded in. */
static inline struct ntxn *txn_of_timer(const struct osn_des_ev *ev)
{
    int slot = ev->type == EV_TXN1;
    return OSN_CONTAINER_OF(ev - slot, struct ntxn, ev);
}

/* A transaction timer this many firings behind the head of its FIFO has its call prefetched.
 * The FIFO's own prefetch (src/des/evset.c, 8 behind) has brought the transaction in by then,
 * and a transaction that ends there is freed, which reads its call (the pointer to it, the
 * reference count), last met when the timer was set, 32 s ago. */
#define CALL_AHEAD 4

/* always_inline: GCC deletes the prefetches of a static helper it keeps out of line, as it
 * takes the helper for side-effect free. */
static inline __attribute__((always_inline)) void prefetch_call_ahead(const struct net *s)
{
    int f = osn_des_popped_fifo(&s->q);
    const struct osn_des_ev *a = f >= 0 ? osn_des_fifo_peek(&s->q, f, CALL_AHEAD) : NULL;
    if (!a || (a->type != EV_TXN0 && a->type != EV_TXN1))
        return;
    const struct ntxn *w = txn_of_timer(a);
    const struct call *c = w->call;
    int h = txn_hop(w);
    __builtin_prefetch(&STX(c, h, 0), 1, 2);
    __builtin_prefetch(&c->refs, 1, 2);
}

/* Always inline: the replication's loop is the hot path, and osn__net_step is a second caller. */
static inline __attribute__((always_inline)) void step(struct net *s, struct osn_des_ev *ev)
{
    switch (ev->type) {
    case EV_LINK: {
        struct nmsg *nm = OSN_CONTAINER_OF(ev, struct nmsg, ev);
        osn__net_arrive(s, &s->elems[nm->to], nm);
        break;
    }
    case EV_TXN0:
    case EV_TXN1: {
        struct ntxn *w = txn_of_timer(ev);
        int slot = ev->type == EV_TXN1;
        prefetch_call_ahead(s);
        if (osn_sip_txn_timer(&s->elems[txn_elem(w)].sip, &w->t, w->t.tid[slot], s->q.now,
                              &s->out) == 0)
            osn__net_apply(s, w, &s->out);
        break;
    }
    case EV_SERVICE:
        osn__net_depart(s, OSN_CONTAINER_OF(ev, struct element, svc));
        break;
    case EV_ARRIVAL: {
        struct element *el = OSN_CONTAINER_OF(ev, struct element, arr);
        osn__net_new_call(s, (int)(el - s->elems));
        /* a batch of bulk arrivals: its other calls at the same instant, in uid order */
        for (long k = 1; s->cfg->src.process == OSN_NET_BULK && k < s->cfg->src.bulk_size; k++)
            osn__net_new_call(s, (int)(el - s->elems));
        double t = osn__net_next_arrival(s, el, s->q.now);
        if (isfinite(t))
            osn__net_at(s, (int)(el - s->elems), &el->arr, t);
        break;
    }
    case EV_HOLD:
    case EV_RETRY:
    case EV_PATIENCE:
        osn__net_uac_timer(s, OSN_CONTAINER_OF(ev, struct call, hold));
        break;
    case EV_2XX:
        osn__net_2xx_timer(s, OSN_CONTAINER_OF(ev, struct call, rtx));
        break;
    case EV_RING:
        osn__net_ring_timer(s, OSN_CONTAINER_OF(ev, struct call, rtx));
        break;
    case EV_HANGUP:
        osn__net_hangup_timer(s, OSN_CONTAINER_OF(ev, struct cancels, hangup)->call);
        break;
    case EV_TRACE:
        osn__net_trace_row(s);
        break;
    }
}

void osn__net_step(struct net *s, struct osn_des_ev *ev)
{
    step(s, ev);
}

/* The totals that the elements' servers kept, into the replication's block. */
static void collect(struct net *s)
{
    for (int i = 0; i < s->nelem; i++) {
        struct element *el = &s->elems[i];
        osn_elem_server_close(&el->server, s->t_end);
        el->tot[OSN__NE_AREA] = el->server.area;
        el->tot[OSN__NE_BUSY] = el->server.busy;
        el->tot[OSN__NE_DROPPED] = el->server.dropped;
        if (el->srv && i == s->core) { /* a fanout's first core */
            for (int m = 0; m < 3; m++)
                s->tot[OSN__NT_MODE0 + m] = el->server.mode_time[m];
            s->tot[OSN__NT_ONSETS] = el->server.onsets;
        }
    }
}

int osn__net_rep_run(const struct osn_net_cfg *cfg, struct osn_rng *rng, struct osn__net_rep *rep,
                     FILE *trace, _Atomic double *now_t, char *msg, size_t msgsize)
{
    struct net *s = calloc(1, sizeof *s);
    int err;

    if (!s)
        return OSN_ENOMEM;
    memset(rep, 0, osn__net_rep_size(osn_net_reps_ntot(cfg)));
    struct osn_net_cfg c = *cfg;
    c.trace = trace;
    err = osn__net_setup(s, &c, rng, rep->tot, msg, msgsize);
    if (err)
        goto out;
    uint64_t events = 0;
    /* A sentinel event at the end saves a peek (a scan of every FIFO head) per event. */
    struct osn_des_ev end;
    osn_des_ev_init(&end, 0);
    err = osn_des_at(&s->q, &end, nextafter(s->t_end, INFINITY)); /* after events at t_end */
    for (struct osn_des_ev *ev; !err && !s->err && (ev = osn_des_pop(&s->q)) && ev != &end;) {
        step(s, ev);
        if ((++events & 0xffff) == 0 && now_t)
            atomic_store_explicit(now_t, s->q.now, memory_order_relaxed);
    }
    if (err)
        goto out;
    s->q.now = s->t_end;
    collect(s);
    rep->tot[OSN__NT_TIME] = cfg->time;
    rep->events = events;
    rep->messages = s->messages;
    err = s->err;
    if (err == OSN_ENOMEM)
        snprintf(msg, msgsize, "out of memory while simulating (at t = %.6g s)", s->q.now);
out:
    osn__net_teardown(s);
    free(s);
    return err;
}

/*
 * The SIP network (include/osn/net.h), second half: the servers (CPU queue, buffer, costs, the
 * controller's server half), the call sources, the trace, and one replication's setup, event
 * loop and teardown. The objects and the transaction glue are in net.c.
 *
 * A message reaching a proxy or the UAS first has its kind classified by matching it against
 * the element's transactions. A kind of zero cost is handled at once and never meets the queue
 * or the controller (that is what makes a one-server network the M|M|1 model of `osn solve`).
 * Otherwise the core's controller decides (admit, or answer 503 at the rejection cost), then
 * the buffer: a message finding `buffer` messages in the server is lost. The cost is fixed when
 * service starts, after matching again, so a queued copy of an INVITE costs the retransmission
 * price once its original has been processed; completion runs the transaction layer.
 */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "net_int.h"
#include "osn/des.h"
#include "osn/err.h"
#include "osn/mem.h"

/* ---- servers ---- */

/*
 * The transaction nm is for at its element, or NULL: a request's server transaction on its hop,
 * a response's client transaction. The call's index gives the one candidate, and the RFC 3261
 * keys decide (an ACK for a 2xx has a branch of its own and so matches none).
 */
static struct ntxn *match(const struct nmsg *nm)
{
    const struct call *c = nm->call;
    int k = req_slot(nm->m.method);
    struct ntxn *w = nm->m.status ? c->ctx[nm->hop][k] : c->stx[nm->hop][k];
    return w && osn_sip_txn_matches(&w->t, &nm->m) ? w : NULL;
}

/* The message kind a server sees for nm now (matching against its transactions). */
static int classify(const struct nmsg *nm)
{
    const struct osn_sip_msg *m = &nm->m;
    if (m->status)
        return OSN_NET_K_RESP;
    if (m->method == OSN_SIP_ACK)
        return OSN_NET_K_ACK;
    if (match(nm))
        return OSN_NET_K_RETX;
    return m->method == OSN_SIP_INVITE ? OSN_NET_K_INVITE : OSN_NET_K_BYE;
}

/* The bit of nm's request kind and hop in its call's record of requests kept at a server. */
static uint8_t *kept_bits(const struct nmsg *nm)
{
    struct call *c = nm->call;
    return nm->m.method == OSN_SIP_INVITE ? &c->inv_in : &c->bye_in;
}

/*
 * The kind on arrival: as classify(), and also a retransmission when the original was kept here
 * and still waits in the queue (no transaction yet). A server recognises a copy on receipt by
 * its branch (PRSM, protocols.md 8, and every controller that counts copies need that); only
 * service start decides the cost, by matching again.
 */
static int classify_arrival(const struct nmsg *nm)
{
    int kind = classify(nm);
    if ((kind == OSN_NET_K_INVITE || kind == OSN_NET_K_BYE) && (*kept_bits(nm) & (1u << nm->hop)))
        kind = OSN_NET_K_RETX;
    return kind;
}

/* The bit of response nm in its call's rsp_in[hop]: by request kind and status (100, other
 * provisional, 2xx, final failure). */
static uint8_t rsp_bit(const struct osn_sip_msg *m)
{
    int cls = m->status == 100 ? 0 : m->status < 200 ? 1 : m->status < 300 ? 2 : 3;
    return (uint8_t)(1u << (cls + (m->method == OSN_SIP_INVITE ? 0 : 4)));
}

/* Whether server nd has kept response nm before (so nm is the downstream's copy). */
static bool response_again(const struct node *nd, const struct nmsg *nm)
{
    return nd->srv && nm->m.status && (nm->call->rsp_in[nm->hop] & rsp_bit(&nm->m));
}

/* Records that request nm was kept at its server nd (queued or handled at once); at a server
 * with a controller, responses too. */
static void mark_kept(const struct node *nd, const struct nmsg *nm)
{
    if (nm->m.status == 0 && nm->m.method != OSN_SIP_ACK)
        *kept_bits(nm) |= (uint8_t)(1u << nm->hop);
    else if (nd->srv && nm->m.status)
        nm->call->rsp_in[nm->hop] |= rsp_bit(&nm->m);
}

/* Handles message nm at its element: the transaction layer, then the TU. Frees nm. */
static void process(struct net *s, struct node *nd, struct nmsg *nm)
{
    struct osn_sip_out *o = &s->out;
    int kind = nm->kind;

    s->messages++;
    if (obs(s)) {
        nd->tot[OSN__NE_PROC + kind] += 1;
        if (nd->role != R_SRC)
            s->tot[OSN__NT_MSGS] += 1;
        if (&s->nodes[s->core] == nd) {
            if (kind == OSN_NET_K_INVITE || kind == OSN_NET_K_BYE || kind == OSN_NET_K_REJECT)
                s->tot[OSN__NT_CORE_NEW] += 1;
            else if (kind == OSN_NET_K_RETX)
                s->tot[OSN__NT_CORE_RETX] += 1;
        }
    }
    if (nd->cli && nm->m.status) { /* responses reach it from the core only */
        struct osn_ctl_feedback fb;
        if (osn__net_oc_to_fb(&nm->m.oc, &fb))
            osn_ctl_client_on_feedback(nd->cli, s->q.now, &fb);
    }
    struct ntxn *w = match(nm);
    if (w) {
        if (osn_sip_txn_recv(&nd->sip, &w->t, &nm->m, s->q.now, o) == 0)
            osn__net_apply(s, w, o);
    } else if (nm->m.status == 0 && nm->m.method != OSN_SIP_ACK) {
        w = osn__net_txn_new(s, nm->call, nm->to, nm->hop);
        if (!w) {
            s->err = OSN_ENOMEM;
            goto out;
        }
        if (osn_sip_stxn_start(&nd->sip, &w->t, &nm->m, s->q.now, o) != 0) {
            osn__net_txn_free(s, w);
            s->err = OSN_EINVAL;
            goto out;
        }
        nm->call->stx[nm->hop][req_slot(nm->m.method)] = w;
        if (nm->reject) {
            /* The TU_REQUEST is answered with 503 here, not passed to the element's TU. */
            struct osn_sip_out o2 = *o;
            o2.tu = OSN_SIP_TU_NONE;
            o2.nsend = 0; /* no 100 Trying before the 503 */
            osn__net_apply(s, w, &o2);
            if (!o2.terminated)
                osn__net_respond(s, w, 503, -1);
        } else {
            osn__net_apply(s, w, o);
        }
    } else if (nm->m.method == OSN_SIP_ACK && nd->role == R_UAS) {
        nm->call->acked = true; /* the ACK of the 2xx: no transaction (17.1.1.3) */
    } else if (nm->m.method == OSN_SIP_ACK && nm->m.status == 0 && nd->role == R_PROXY) {
        struct call *c = nm->call;
        struct osn_sip_msg ack = nm->m;
        ack.branch = branch(c, nm->hop + 1, B_ACK);
        osn__net_transmit(s, nm->to, nm->call, nm->hop + 1, &ack);
    }
out:
    osn__net_msg_free(s, nm);
}

static void start_service(struct net *s, struct node *nd);

static void depart(struct net *s, struct node *nd)
{
    struct nmsg *nm = nd->cur;
    osn__net_integrate(s, nd);
    nd->n--;
    nd->cur = NULL;
    if (nd->srv) {
        struct osn_ctl_event ev = {
                .kind = nm->ckind, .queue_len = (size_t)nd->n, .wait = s->q.now - nm->t_arr};
        osn_ctl_server_on_departure(nd->srv, s->q.now, &ev);
        osn__net_mode_update(s, nd);
    }
    process(s, nd, nm);
    start_service(s, nd);
}

static void start_service(struct net *s, struct node *nd)
{
    while (!nd->cur && nd->nq[0] + nd->nq[1] > 0) {
        int qi = 0;
        if (nd->srv)
            qi = osn_ctl_server_queue_choice(nd->srv, s->q.now, nd->nq[0], nd->nq[1]) ==
                                 OSN_CTL_Q_SECONDARY
                         ? 1
                         : 0;
        if (!nd->qh[qi])
            qi = !qi;
        struct nmsg *nm = nd->qh[qi];
        nd->qh[qi] = nm->next;
        if (!nd->qh[qi])
            nd->qt[qi] = NULL;
        nd->nq[qi]--;
        if (qi == 1 && nm->ckind != OSN_CTL_MSG_RESPONSE_RETX) {
            struct ntxn *w = match(nm);
            if (osn_ctl_server_retx_discard(nd->srv, s->q.now, w ? w->t0 : nm->t_arr,
                                            w && w->t.has_resp)) {
                osn__net_integrate(s, nd);
                nd->n--;
                osn__net_msg_free(s, nm);
                continue;
            }
        }
        if (!nm->reject)
            nm->kind = (uint8_t)classify(nm);
        double c = nd->sc->cost[nm->kind];
        if (nd->sc->exp_cost)
            c *= osn_des_exp1(s->rng);
        nd->cur = nm;
        osn_des_at(&s->q, &nd->svc, s->q.now + c);
    }
}

/* A message reaches element nd. */
static void arrive(struct net *s, struct node *nd, struct nmsg *nm)
{
    if (nd->role == R_SRC) {
        nm->kind = OSN_NET_K_RESP;
        process(s, nd, nm);
        return;
    }
    /* Skip matching where the answer changes nothing here (no controller, and new and
     * retransmitted requests both queued or both free): it reads the call and a transaction. */
    int kind;
    if (!nd->srv && nm->m.status == 0 && nm->m.method != OSN_SIP_ACK &&
        (nd->sc->cost[OSN_NET_K_RETX] > 0) == (nd->sc->cost[OSN_NET_K_INVITE] > 0) &&
        (nd->sc->cost[OSN_NET_K_RETX] > 0) == (nd->sc->cost[OSN_NET_K_BYE] > 0))
        kind = nm->m.method == OSN_SIP_INVITE ? OSN_NET_K_INVITE : OSN_NET_K_BYE;
    else
        kind = classify_arrival(nm);
    static const uint8_t ck[] = {OSN_CTL_MSG_INVITE, OSN_CTL_MSG_INVITE_RETX, OSN_CTL_MSG_RESPONSE,
                                 OSN_CTL_MSG_ACK, OSN_CTL_MSG_BYE};
    enum osn_ctl_msg ckind = ck[kind];
    if (kind == OSN_NET_K_RETX && nm->m.method != OSN_SIP_INVITE)
        ckind = OSN_CTL_MSG_NONINV_RETX;
    else if (kind == OSN_NET_K_RESP && response_again(nd, nm))
        ckind = OSN_CTL_MSG_RESPONSE_RETX;
    if (nm->m.status == 0 && nm->m.method == OSN_SIP_INVITE && obs(s))
        nd->tot[OSN__NE_NEWINV] += 1;
    if (nd->sc->cost[kind] <= 0) { /* free work never meets the queue nor the controller */
        nm->kind = (uint8_t)kind;
        mark_kept(nd, nm);
        process(s, nd, nm);
        return;
    }
    bool full = nd->n >= nd->sc->buffer;
    struct osn_ctl_verdict v = {OSN_CTL_ADMIT, 0, OSN_CTL_Q_PRIMARY};
    if (nd->srv) {
        struct osn_ctl_event ev = {.kind = ckind,
                                   .queue_len = (size_t)nd->n,
                                   .oc_capable = (nm->m.oc.flags & OSN_SIP_OC_PRESENT) != 0,
                                   .buffer_full = full};
        v = osn_ctl_server_on_arrival(nd->srv, s->q.now, &ev);
        osn__net_mode_update(s, nd);
    }
    nm->ckind = (uint8_t)ckind;
    nm->kind = (uint8_t)kind;
    if (v.action == OSN_CTL_REJECT_503 && nm->m.status == 0 && nm->m.method != OSN_SIP_ACK &&
        kind != OSN_NET_K_RETX) {
        nm->reject = true;
        nm->kind = OSN_NET_K_REJECT;
        full = nd->n >= 2 * nd->sc->buffer; /* the cheap path has its own room */
    }
    if (nd->sc->cost[nm->kind] <= 0) {
        mark_kept(nd, nm);
        process(s, nd, nm);
        return;
    }
    /* Two queues share the buffer: a message for the primary one that finds it full pushes out
     * the oldest copy waiting in the secondary one (the copy most likely useless by now), so
     * that copies, served last, cannot crowd out what is served first. */
    if (full && v.queue == OSN_CTL_Q_PRIMARY && nd->qh[1]) {
        struct nmsg *old = nd->qh[1];
        nd->qh[1] = old->next;
        if (!nd->qh[1])
            nd->qt[1] = NULL;
        nd->nq[1]--;
        osn__net_integrate(s, nd);
        nd->n--;
        if (obs(s))
            nd->tot[OSN__NE_DROPPED] += 1;
        osn__net_msg_free(s, old);
        full = false;
    }
    if (full) {
        if (obs(s))
            nd->tot[OSN__NE_DROPPED] += 1;
        osn__net_msg_free(s, nm);
        return;
    }
    mark_kept(nd, nm);
    osn__net_integrate(s, nd);
    nd->n++;
    nm->t_arr = s->q.now;
    int qi = v.queue == OSN_CTL_Q_SECONDARY ? 1 : 0;
    if (nd->qt[qi])
        nd->qt[qi]->next = nm;
    else
        nd->qh[qi] = nm;
    nd->qt[qi] = nm;
    nm->next = NULL;
    nd->nq[qi]++;
    if (!nd->cur)
        start_service(s, nd);
}

/* ---- sources ---- */

/* The next call arrival of source nd after time t (profile: piecewise-constant rate, exact by
 * restarting the exponential clock at each rate change; memoryless). */
static double next_arrival(struct net *s, struct node *nd, double t)
{
    const struct osn_net_source_cfg *sc = &s->cfg->src;
    if (sc->process != OSN_NET_PROFILE) {
        int flow;
        return osn_des_arr_next(&nd->darr, s->rng, &flow);
    }
    for (;;) {
        /* rate in force at t and the next instant it may change */
        double r = sc->rate, tn = INFINITY;
        for (int i = 0; i < sc->nsteps; i++) {
            if (sc->step_t[i] <= t)
                r = sc->step_rate[i];
            else if (sc->step_t[i] < tn)
                tn = sc->step_t[i];
        }
        if (sc->burst_len > 0) {
            if (t >= sc->burst_t && t < sc->burst_t + sc->burst_len) {
                r *= sc->burst_factor;
                if (sc->burst_t + sc->burst_len < tn)
                    tn = sc->burst_t + sc->burst_len;
            } else if (t < sc->burst_t && sc->burst_t < tn) {
                tn = sc->burst_t;
            }
        }
        r *= nd->rate_share;
        double x = r > 0 ? t + osn_des_exp1(s->rng) / r : INFINITY;
        if (x < tn)
            return x;
        if (!isfinite(tn))
            return INFINITY;
        t = tn;
    }
}

static void new_call(struct net *s, int src)
{
    struct call *c = osn__net_call_new(s);
    if (!c) {
        s->err = OSN_ENOMEM;
        return;
    }
    c->uid = ++s->next_uid;
    c->src = (uint16_t)src;
    c->t0 = s->q.now;
    c->refs = 1; /* held while the INVITE is being started */
    s->tr_start += 1;
    if (obs(s))
        s->tot[OSN__NT_STARTED] += 1;
    struct osn_sip_msg req = {.method = OSN_SIP_INVITE,
                              .cseq = 1,
                              .retry_after = -1,
                              .call_id = c->uid,
                              .from_tag = c->uid};
    req.branch = branch(c, 0, B_INVITE);
    osn__net_start_client(s, src, c, 0, &req);
    osn__net_call_unref(s, c);
}

static void hold_over(struct net *s, struct call *c)
{
    struct osn_sip_msg req = {.method = OSN_SIP_BYE,
                              .cseq = 2,
                              .retry_after = -1,
                              .call_id = c->uid,
                              .from_tag = c->uid,
                              .to_tag = c->uid + 1};
    req.branch = branch(c, 0, B_BYE);
    osn__net_start_client(s, c->src, c, 0, &req);
    osn__net_call_unref(s, c); /* the reference the hold timer had */
}

/* ---- trace ---- */

static void trace_row(struct net *s)
{
    struct node *core = &s->nodes[s->core];
    const struct node *gate = &s->nodes[s->core - 1];
    double iv = s->cfg->trace_interval;
    fprintf(s->trace, "%.6g,%ld,%d,%.6g,%.6g,%.6g\n", s->q.now, core->n, core->mode,
            s->tr_start / iv, s->tr_good / iv,
            gate->cli ? osn_ctl_client_level(gate->cli, s->q.now) : 0.0);
    s->tr_start = s->tr_good = 0;
}

/* ---- setup and the run ---- */

static int setup(struct net *s, const struct osn_net_cfg *cfg, struct osn_rng *rng, double *tot,
                 char *msg, size_t msgsize)
{
    char names[OSN_NET_MAX_ELEMS][16];
    double cap[OSN_NET_MAX_ELEMS];
    int err;

    s->cfg = cfg;
    s->rng = rng;
    s->tot = tot;
    s->call_free = UINT32_MAX;
    s->nelem = osn__net_elems(cfg, names, cap);
    s->E = cfg->topology == OSN_NET_FANIN ? cfg->edges : 1;
    s->uas = s->nelem - 1;
    s->core = s->nelem - 2;
    s->nhop = cfg->topology == OSN_NET_TANDEM ? 4 : 3;
    for (int h = 2; h <= s->nhop; h++)
        s->tail[h] = s->core - (s->nhop - 1 - h);
    s->t_obs = cfg->warmup;
    s->t_end = cfg->warmup + cfg->time;
    s->tb = 64 * cfg->sip.t1;
    err = osn_des_init(&s->q, 1024);
    if (err)
        return err;
    /* Call holds (seconds) in a heap of their own: the service completions sift through ~20. */
    osn_des_set_horizon(&s->q, cfg->sip.t1);
    memset(s->fix_hint, -1, sizeof s->fix_hint);
    /* fixed durations: the SIP timers, then the links */
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
    /* What each FIFO prefetches ahead of its head: for a SIP timer its whole transaction, as
     * the handler reads the request (line 0), the state (1) and the events and the call
     * pointer (2). A link's message was sent a few milliseconds before (still in cache):
     * nothing, unless its class is a SIP timer's too. */
    for (int id = 0; id < s->nfix; id++)
        if (sip_class[id] || link_class[id])
            (void)osn_des_timer_prefetch(
                    &s->q, id, sip_class[id] ? (int)offsetof(struct ntxn, ev) : 0,
                    sip_class[id] ? (int)(sizeof(struct ntxn) - offsetof(struct ntxn, ev[1])) : 0);
    struct osn_sip_cfg uac = cfg->sip, prx = cfg->sip, uas = cfg->sip;
    if (cfg->sipp) {
        uac.invite_max_retrans = 5;
        uac.non_invite_max_retrans = 9;
        uac.honor_retry_after = false;
    }
    uac.timer_b_proceeding = prx.timer_b_proceeding = uas.timer_b_proceeding = true;
    prx.trying_delay = 0;
    uas.trying_delay = -1;
    for (int i = 0; i < s->nelem; i++) {
        struct node *nd = &s->nodes[i];
        nd->tot = tot + OSN__NT_ELEM + OSN__NE_N * i;
        nd->role = i < s->E ? R_SRC : i == s->uas ? R_UAS : R_PROXY;
        nd->sc = i == s->uas ? &cfg->uas : i == s->core ? &cfg->core : &cfg->edge;
        osn_des_ev_init(&nd->svc, EV_SERVICE);
        osn_des_ev_init(&nd->arr, EV_ARRIVAL);
        err = osn_sip_layer_init_unindexed(&nd->sip, nd->role == R_SRC   ? &uac
                                                     : nd->role == R_UAS ? &uas
                                                                         : &prx);
        if (err)
            return err;
        struct osn_ctl_cfg cc = cfg->ctl;
        cc.seed = osn_rng_next(rng);
        if (i == s->core) {
            err = osn_ctl_new(&nd->srv, cfg->ctl_kind, &cc);
            if (err) {
                snprintf(msg, msgsize, "controller '%s' rejected its configuration", cfg->ctl_kind);
                return err;
            }
        }
        bool gate =
                (s->nhop == 4 && i == s->core - 1) || (s->nhop == 3 && i >= s->E && i < 2 * s->E);
        if (gate && strcmp(cfg->ctl_kind, "none") != 0) {
            err = osn_ctl_new(&nd->cli, cfg->ctl_kind, &cc);
            if (err)
                return err;
        }
        if (nd->role == R_SRC) {
            struct osn_model m = {0};
            nd->rate_share = 1.0 / s->E;
            m.flows = 1;
            m.process = cfg->src.process == OSN_NET_MMPP ? OSN_ARR_MMPP : OSN_ARR_POISSON;
            m.rate = m.overload_rate = cfg->src.rate * nd->rate_share;
            if (cfg->src.process == OSN_NET_MMPP) {
                m.mmpp.K = 2;
                m.mmpp.rate[0] = cfg->src.mmpp_rate[0] * nd->rate_share;
                m.mmpp.rate[1] = cfg->src.mmpp_rate[1] * nd->rate_share;
                m.mmpp.gen[0][1] = cfg->src.mmpp_switch[0];
                m.mmpp.gen[1][0] = cfg->src.mmpp_switch[1];
            }
            if (cfg->src.process != OSN_NET_PROFILE &&
                osn_des_arr_init(&nd->darr, &m, msg, msgsize) != 0)
                return OSN_EINVAL;
            double t = next_arrival(s, nd, 0);
            if (isfinite(t))
                osn_des_at(&s->q, &nd->arr, t);
        }
    }
    s->trace = cfg->trace_interval > 0 ? cfg->trace : NULL;
    if (s->trace) {
        osn_des_ev_init(&s->trace_ev, EV_TRACE);
        osn_des_at(&s->q, &s->trace_ev, cfg->trace_interval);
        fprintf(s->trace, "t,core_queue,core_mode,offered,goodput,control_level\n");
    }
    return 0;
}

static void teardown(struct net *s)
{
    for (int i = 0; i < s->nelem; i++) {
        osn_sip_layer_release(&s->nodes[i].sip);
        osn_ctl_free(s->nodes[i].srv);
        osn_ctl_free(s->nodes[i].cli);
    }
    for (size_t i = 0; i < s->ncallc; i++)
        osn_mem_block_free(s->callc[i], OSN_MEM_BLOCK);
    for (size_t i = 0; i < s->ntxnc; i++)
        osn_mem_block_free(s->txnc[i], OSN_MEM_BLOCK);
    for (size_t i = 0; i < s->nmsgc; i++)
        osn_mem_block_free(s->msgc[i], OSN_MEM_BLOCK);
    free(s->callc);
    free(s->txnc);
    free(s->msgc);
    osn_des_release(&s->q);
}

/* A transaction timer this many firings behind the head of its FIFO has its call prefetched.
 * The FIFO's own prefetch (src/des/heap.c, 8 behind) has brought the transaction in by then,
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
    const struct ntxn *w =
            (const struct ntxn *)((const char *)a - offsetof(struct ntxn, ev) -
                                  (size_t)(a->type == EV_TXN1) * sizeof(struct osn_des_ev));
    const struct call *c = w->call;
    int h = txn_hop(w);
    __builtin_prefetch(&c->stx[h][0], 1, 2);
    __builtin_prefetch(&c->ctx[h][0], 1, 2);
    __builtin_prefetch(&c->refs, 1, 2);
}

static void step(struct net *s, struct osn_des_ev *ev)
{
    switch (ev->type) {
    case EV_LINK: {
        struct nmsg *nm = (struct nmsg *)((char *)ev - offsetof(struct nmsg, ev));
        arrive(s, &s->nodes[nm->to], nm);
        break;
    }
    case EV_TXN0:
    case EV_TXN1: {
        int slot = ev->type == EV_TXN1;
        struct ntxn *w = (struct ntxn *)((char *)ev - offsetof(struct ntxn, ev) -
                                         (size_t)slot * sizeof(struct osn_des_ev));
        struct osn_sip_out *o = &s->out;
        prefetch_call_ahead(s);
        if (osn_sip_txn_timer(&s->nodes[txn_node(w)].sip, &w->t, w->t.tid[slot], s->q.now, o) == 0)
            osn__net_apply(s, w, o);
        break;
    }
    case EV_SERVICE: {
        struct node *nd = (struct node *)((char *)ev - offsetof(struct node, svc));
        depart(s, nd);
        break;
    }
    case EV_ARRIVAL: {
        struct node *nd = (struct node *)((char *)ev - offsetof(struct node, arr));
        int src = (int)(nd - s->nodes);
        new_call(s, src);
        double t = next_arrival(s, nd, s->q.now);
        if (isfinite(t))
            osn_des_at(&s->q, &nd->arr, t);
        break;
    }
    case EV_HOLD: {
        struct call *c = (struct call *)((char *)ev - offsetof(struct call, hold));
        hold_over(s, c);
        break;
    }
    case EV_2XX:
        osn__net_2xx_timer(s, (struct call *)((char *)ev - offsetof(struct call, rtx)));
        break;
    case EV_TRACE:
        trace_row(s);
        osn_des_at(&s->q, &s->trace_ev, s->q.now + s->cfg->trace_interval);
        break;
    }
}

int osn__net_rep_run(const struct osn_net_cfg *cfg, struct osn_rng *rng, struct osn__net_rep *rep,
                     FILE *trace, _Atomic double *now_t, char *msg, size_t msgsize)
{
    struct net *s = calloc(1, sizeof *s);
    int err;

    if (!s)
        return OSN_ENOMEM;
    memset(rep, 0, sizeof *rep);
    struct osn_net_cfg c = *cfg;
    c.trace = trace;
    err = setup(s, &c, rng, rep->tot, msg, msgsize);
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
    for (int i = 0; i < s->nelem; i++) {
        osn__net_integrate(s, &s->nodes[i]);
        if (s->nodes[i].srv) {
            struct node *nd = &s->nodes[i];
            double from = nd->t_mode > s->t_obs ? nd->t_mode : s->t_obs;
            s->tot[OSN__NT_MODE0 + nd->mode] += s->t_end - from;
        }
    }
    rep->tot[OSN__NT_TIME] = cfg->time;
    rep->events = events;
    rep->messages = s->messages;
    err = s->err;
out:
    teardown(s);
    free(s);
    return err;
}

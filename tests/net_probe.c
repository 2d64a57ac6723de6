/*
 * The element probe (net_probe.h): one element of a simulated network, fed by hand. The network
 * is the replication's own (osn__net_setup) with no call sources and links without delay or
 * loss; messages the test sends reach the element as they would off a link
 * (osn__net_arrive), events run through the replication's step (osn__net_step), and a message
 * the element puts on a link is taken off it as it arrives, reported, and freed, so that no other
 * element ever acts.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "net_int.h"
#include "net_probe.h"
#include "osn/des.h"
#include "osn/err.h"

struct osn__net_probe {
    struct osn__probe_cfg pc;
    struct osn_net_cfg cfg;
    struct net s;
    double *tot;
    int id, in_hop, out_hop;             /* the element, the hop it hears requests on, the next */
    struct call *call[OSN__PROBE_CALLS]; /* held by the probe from the first message on */
    /* the requests it forwarded, by fwd_slot: INVITE, BYE, CANCEL; then the callee's BYE it
     * sent up (UP_SLOT) */
    struct osn_sip_msg fwd[OSN__PROBE_CALLS][4];
    bool have_fwd[OSN__PROBE_CALLS][4];
};

int osn__net_probe_new(struct osn__net_probe **pp, const struct osn__probe_cfg *pc)
{
    struct osn__net_probe *p = calloc(1, sizeof *p);
    char msg[256];
    int err = OSN_ENOMEM;

    if (pc->cores > 1 && (pc->elem != OSN__PROBE_EDGE || pc->cores > OSN_NET_MAX_CORES)) {
        err = OSN_EINVAL; /* a fanout's probe is its edge's */
        goto out;
    }
    /* the probe's network: source, edge, its cores (a fanout's) or one, UAS */
    int nelem = 3 + (pc->cores > 1 ? pc->cores : 1);
    if (!p || !(p->tot = calloc((size_t)osn__net_ntot(nelem), sizeof *p->tot)))
        goto out;
    p->pc = *pc;
    struct osn_net_cfg *c = &p->cfg;
    osn_net_cfg_default(c);
    bool fan = pc->cores > 1;
    c->topology = fan ? OSN_NET_FANOUT : OSN_NET_COLLAPSE;
    c->edges = 1;
    if (fan) {
        c->cores = pc->cores;
        c->down_time = pc->down_time;
    }
    c->warmup = 0;
    c->src = (struct osn_net_source_cfg){.process = OSN_NET_PROFILE}; /* rate 0: no calls */
    c->access = c->trunk = c->uas_link = (struct osn_net_link_cfg){0};
    c->ctl_kind = pc->ctl_kind;
    c->ctl = pc->ctl;
    c->ctl_at = pc->ctl_at;
    c->sip = pc->sip;
    struct osn_net_server_cfg *sv[] = {&c->edge, &c->core, &c->uas};
    for (int i = 0; i < 3; i++)
        *sv[i] = (struct osn_net_server_cfg){.buffer = pc->buffer,
                                             .record_route = !pc->no_record_route};
    for (int i = 0; i < OSN_NET_MAX_CORES - 1; i++)
        c->more_cores[i] = c->core;
    if (pc->cost && pc->elem != OSN__PROBE_UAC)
        memcpy(sv[pc->elem]->cost, pc->cost, sizeof sv[pc->elem]->cost);
    if (pc->elem == OSN__PROBE_UAC) {
        struct osn_net_source_cfg *sc = &c->src;
        sc->patience = pc->patience > 0 ? OSN_NET_PATIENCE_DET : OSN_NET_PATIENCE_NONE;
        sc->patience_mean = pc->patience;
        sc->retry_prob = pc->retry_prob;
        sc->retry_delay = pc->retry_delay;
        sc->retry_delay_law = OSN_NET_RETRY_DET;
        sc->max_retries = pc->max_retries;
        sc->honour_retry_after = pc->honour_retry_after;
        sc->hold = pc->hold;
        sc->callee_hangs_up = pc->callee_hangs_up;
    }
    c->uas.ring = pc->ring;
    c->uas.ring_mean = pc->ring_mean;
    struct osn_rng rng;
    osn_rng_seed(&rng, 1);
    err = osn__net_setup(&p->s, c, &rng, p->tot, msg, sizeof msg);
    if (err)
        goto out;
    /* collapse: source 0, edge 1, core 2, UAS 3; hop h joins elements h and h + 1 (a fanout:
     * cores 2, 3, ..., then the UAS; the edge is 1 all the same) */
    p->id = pc->elem == OSN__PROBE_UAC ? 0 : 1 + (int)pc->elem;
    p->in_hop = p->id - 1;
    p->out_hop = p->id;
    if (pc->elem == OSN__PROBE_UAC)
        p->s.hold_key = pc->hold_key;
    p->s.uac_count = true;
out:
    if (err)
        p = osn__net_probe_free(p);
    else
        *pp = p;
    return err;
}

struct osn__net_probe *osn__net_probe_free(struct osn__net_probe *p)
{
    if (!p)
        return NULL;
    if (p->tot) { /* a set-up network: its objects go with its pools */
        osn__net_teardown(&p->s);
        free(p->tot);
    }
    free(p);
    return NULL;
}

/* The call numbered i, made and held on first use; NULL when out of memory. */
static struct call *probe_call(struct osn__net_probe *p, int i)
{
    if (!p->call[i] && (p->call[i] = osn__net_call_new(&p->s))) {
        p->call[i]->uid = (uint64_t)i + 1;
        p->call[i]->refs = 1;
    }
    return p->call[i];
}

#define UP_SLOT 3

static int fwd_slot(int method)
{
    return method == OSN_SIP_CANCEL ? 2 : req_slot(method);
}

/* A message the element sent, off its link: reported, and a forwarded request kept to answer. */
static void sent(struct osn__net_probe *p, struct nmsg *nm)
{
    /* the source's calls are numbered by origin (a retry has a uid of its own), the probe's by
     * uid (origin 0) */
    int i = (int)(nm->call->origin ? nm->call->origin : nm->call->uid) - 1;
    if (p->pc.elem == OSN__PROBE_UAC && p->call[i] != nm->call) {
        /* the call's newest attempt: the one the test's responses go to, held from now on */
        if (p->call[i])
            osn__net_call_unref(&p->s, p->call[i]);
        p->call[i] = nm->call;
        nm->call->refs++;
        memset(p->have_fwd[i], 0, sizeof p->have_fwd[i]);
    }
    bool down = toward_uas(&nm->m);
    if (nm->m.status == 0 && nm->m.method != OSN_SIP_ACK) {
        int k = up_bye(&nm->m) ? UP_SLOT : fwd_slot(nm->m.method);
        p->fwd[i][k] = nm->m;
        p->have_fwd[i][k] = true;
    }
    int hop = down && p->s.elems[p->id].hops ? nm->to - p->s.core : -1;
    p->pc.send(p->pc.arg, p->s.q.now, down, &nm->m, i, hop);
    osn__net_msg_free(&p->s, nm);
}

int osn__net_probe_run_to(struct osn__net_probe *p, double t)
{
    struct net *s = &p->s;
    struct osn_des_ev end, *ev;
    osn_des_ev_init(&end, 0);
    if (osn_des_at(&s->q, &end, nextafter(t, INFINITY)) != 0) /* after the events at t */
        return OSN_ENOMEM;
    while (!s->err && (ev = osn_des_pop(&s->q)) && ev != &end) {
        struct nmsg *nm = ev->type == EV_LINK ? OSN_CONTAINER_OF(ev, struct nmsg, ev) : NULL;
        if (nm && nm->to != p->id)
            sent(p, nm);
        else
            osn__net_step(s, ev);
    }
    osn_des_cancel(&s->q, &end);
    s->q.now = t;
    return s->err;
}

/* Puts m, of call i, on `hop` so that it reaches the element now. */
static int arrive(struct osn__net_probe *p, int i, int hop, const struct osn_sip_msg *m)
{
    struct net *s = &p->s;
    struct call *c = i >= 0 && i < OSN__PROBE_CALLS ? probe_call(p, i) : NULL;
    struct nmsg *nm = c ? osn__net_msg_new(s) : NULL;
    if (!nm)
        return c ? OSN_ENOMEM : OSN_EINVAL;
    nm->m = *m;
    nm->call = c;
    nm->hop = (uint8_t)hop;
    nm->to = (uint16_t)p->id;
    c->refs++;
    osn__net_arrive(s, &s->elems[p->id], nm);
    return s->err;
}

int osn__net_probe_request(struct osn__net_probe *p, int call, const struct osn_sip_msg *m)
{
    return arrive(p, call, p->in_hop, m);
}

int osn__net_probe_response(struct osn__net_probe *p, int call, int method, int status,
                            const struct osn_sip_oc *oc, int retry_after)
{
    int k = fwd_slot(method);
    if (call < 0 || call >= OSN__PROBE_CALLS)
        return OSN_EINVAL;
    if (!p->have_fwd[call][k])
        return 1;
    struct osn_sip_msg m = p->fwd[call][k];
    m.status = (uint16_t)status;
    m.to_tag = status > 100 ? 99 : 0;
    m.retry_after = retry_after;
    m.oc = oc ? *oc : (struct osn_sip_oc){0};
    return arrive(p, call, p->out_hop, &m);
}

int osn__net_probe_callee_bye(struct osn__net_probe *p, int call)
{
    struct call *c = call >= 0 && call < OSN__PROBE_CALLS ? probe_call(p, call) : NULL;
    if (!c)
        return OSN_EINVAL;
    struct osn_sip_msg m = {.method = OSN_SIP_BYE,
                            .cseq = 1,
                            .retry_after = -1,
                            .call_id = c->uid,
                            .from_tag = c->uid + 1,
                            .to_tag = c->uid,
                            .branch = branch(c, p->out_hop, B_UBYE)};
    return arrive(p, call, p->out_hop, &m);
}

int osn__net_probe_up_response(struct osn__net_probe *p, int call, int status)
{
    if (call < 0 || call >= OSN__PROBE_CALLS)
        return OSN_EINVAL;
    if (!p->have_fwd[call][UP_SLOT])
        return 1;
    struct osn_sip_msg m = p->fwd[call][UP_SLOT];
    m.status = (uint16_t)status;
    m.retry_after = -1;
    m.oc = (struct osn_sip_oc){0};
    return arrive(p, call, p->in_hop, &m);
}

const struct osn_elem_hops *osn__net_probe_hops(const struct osn__net_probe *p)
{
    return p->s.elems[p->id].hops;
}

int osn__net_probe_call(struct osn__net_probe *p)
{
    osn__net_new_call(&p->s, 0);
    return p->s.err;
}

int osn__net_probe_uac_response(struct osn__net_probe *p, int call, int method, int status,
                                int retry_after, const struct osn_sip_oc *oc)
{
    int k = fwd_slot(method);
    if (call < 0 || call >= OSN__PROBE_CALLS)
        return OSN_EINVAL;
    if (!p->have_fwd[call][k])
        return 1;
    struct osn_sip_msg m = p->fwd[call][k];
    m.status = (uint16_t)status;
    m.to_tag = status > 100 ? 99 : 0;
    m.retry_after = retry_after;
    m.oc = oc ? *oc : (struct osn_sip_oc){0};
    return arrive(p, call, p->out_hop, &m);
}

uint64_t osn__net_probe_shed_local(const struct osn__net_probe *p)
{
    return (uint64_t)p->tot[OSN__NT_SHED_LOCAL];
}

void osn__net_probe_uac(const struct osn__net_probe *p, uint64_t did[OSN_UAC_NDO],
                        uint64_t outcome[OSN_UAC_NOUTCOMES])
{
    for (int d = 0; d < OSN_UAC_NDO; d++)
        did[d] = p->s.uac_did[d];
    for (int o = 0; o < OSN_UAC_NOUTCOMES; o++)
        outcome[o] = (uint64_t)p->s.tr.outcome[o];
}

uint64_t osn__net_probe_byes_in(const struct osn__net_probe *p)
{
    return (uint64_t)p->tot[OSN__NT_BYES_IN];
}

const uint64_t *osn__net_probe_counts(const struct osn__net_probe *p)
{
    return p->s.elems[p->id].count;
}

long osn__net_probe_live(const struct osn__net_probe *p)
{
    long n = 0;
    for (int i = 0; i < OSN__PROBE_CALLS; i++)
        for (int h = 0; p->call[i] && h < p->call[i]->nhop; h++)
            for (int k = 0; k < 3; k++) {
                const struct cancels *x = p->call[i]->cx;
                struct ntxn *sw = k < 2 ? STX(p->call[i], h, k) : x ? x->stx[h] : NULL;
                struct ntxn *cw = k < 2 ? CTX(p->call[i], h, k) : x ? x->ctx[h] : NULL;
                n += (sw != NULL) + (cw != NULL);
                if (k == 0 && x) /* an attempt that failed over; the callee's BYE */
                    n += (x->gone_stx[h] != NULL) + (x->gone_ctx[h] != NULL) +
                         (x->ubye_stx[h] != NULL) + (x->ubye_ctx[h] != NULL);
            }
    return n;
}

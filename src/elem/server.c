/*
 * An element's server: one CPU, its buffer and queues, and the controller's server half that
 * watches them. The simulator runs it in virtual time; the node runs the same server on a
 * virtual CPU that spends each message's cost before the next.
 *
 * A message arriving at a server has its kind (new INVITE, copy, response, ACK, BYE) and its
 * controller class from the driver, which matched it against the element's transactions. A kind
 * of zero cost is handled at once and never meets the queue or the controller (that is what
 * makes a one-server network the M|M|1 model of `osn solve`). Otherwise the controller decides
 * (admit, or answer 503 at the rejection cost; RFC 7339 5.3, RFC 6357), then the buffer: a
 * message finding `buffer` messages in the server is lost, as a full UDP receive buffer loses
 * it. Under PRSM two FIFOs share the buffer: originals first, copies second (docs/protocols.md's
 * priority scheduling).
 *
 *   arrive ──cost 0──────────────────────────────> HANDLE_NOW
 *      │ controller: admit / reject (503, own room of 2 x buffer)
 *      ├─ full, first FIFO, a copy waits second ──> push that copy out, then queue
 *      ├─ full ──────────────────────────────────> DROPPED
 *      └─ room ──────────────────────────────────> QUEUED ── next ── begin ── depart
 */
#include "osn/elem.h"

void osn_elem_server_init(struct osn_elem_server *s, const double *cost, long buffer,
                          struct osn_ctl *ctl, double t_obs)
{
    *s = (struct osn_elem_server){.cost = cost, .buffer = buffer, .ctl = ctl, .t_obs = t_obs};
}

enum osn_ctl_msg osn_elem_ctl_msg(int kind, int method, bool response_again)
{
    static const uint8_t by_kind[] = {
            OSN_CTL_MSG_INVITE, OSN_CTL_MSG_INVITE_RETX, OSN_CTL_MSG_RESPONSE, OSN_CTL_MSG_ACK,
            OSN_CTL_MSG_BYE,    OSN_CTL_MSG_INVITE,      OSN_CTL_MSG_BYE};
    if (kind == OSN_ELEM_K_RETX && method != OSN_SIP_INVITE)
        return OSN_CTL_MSG_NONINV_RETX;
    if (kind == OSN_ELEM_K_RESP && response_again)
        return OSN_CTL_MSG_RESPONSE_RETX;
    return (enum osn_ctl_msg)by_kind[kind];
}

void osn_elem_server_integrate(struct osn_elem_server *s, double now)
{
    double from = s->t_last > s->t_obs ? s->t_last : s->t_obs;
    if (now > from) {
        s->area += (double)s->n * (now - from);
        if (s->n > 0)
            s->busy += now - from;
    }
    s->t_last = now;
}

/* Accounts the time in the controller's mode when the mode changed. */
static void mode_update(struct osn_elem_server *s, double now)
{
    int m = (int)osn_ctl_server_mode(s->ctl);
    if (m == s->mode)
        return;
    double from = s->t_mode > s->t_obs ? s->t_mode : s->t_obs;
    if (now > from)
        s->mode_time[s->mode] += now - from;
    if (s->mode == 0 && now >= s->t_obs)
        s->onsets += 1;
    s->t_mode = now;
    s->mode = m;
}

void osn_elem_server_close(struct osn_elem_server *s, double now)
{
    osn_elem_server_integrate(s, now);
    if (s->ctl) {
        double from = s->t_mode > s->t_obs ? s->t_mode : s->t_obs;
        s->mode_time[s->mode] += now - from;
    }
}

static struct osn_elem_item *unlink_head(struct osn_elem_server *s, int q)
{
    struct osn_elem_item *it = s->qh[q];
    s->qh[q] = it->next;
    if (!s->qh[q])
        s->qt[q] = NULL;
    s->nq[q]--;
    return it;
}

/* Always inline, into the drivers too where the build links with LTO (an extern definition
 * still, for the others): the simulator calls it for most messages, and the call with its eight
 * arguments cost 17.4 instructions a message on fanin.ini. */
__attribute__((always_inline)) inline enum osn_elem_admit
osn_elem_server_arrive(struct osn_elem_server *s, double now, struct osn_elem_item *it, int kind,
                       enum osn_ctl_msg ck, bool shed_able, bool oc_capable,
                       struct osn_elem_item **evicted)
{
    *evicted = NULL;
    if (s->cost[kind] <= 0) { /* free work never meets the queue nor the controller */
        it->kind = (uint8_t)kind;
        return OSN_ELEM_HANDLE_NOW;
    }
    bool full = s->n >= s->buffer;
    struct osn_ctl_verdict v = {OSN_CTL_ADMIT, 0, OSN_CTL_Q_PRIMARY};
    if (s->ctl) {
        struct osn_ctl_event ev = {.kind = ck,
                                   .queue_len = (size_t)s->n,
                                   .oc_capable = oc_capable,
                                   .buffer_full = full};
        v = osn_ctl_server_on_arrival(s->ctl, now, &ev);
        mode_update(s, now);
    }
    it->ckind = (uint8_t)ck;
    it->kind = (uint8_t)kind;
    it->retry_after = 0;
    if (v.action == OSN_CTL_REJECT_503 && shed_able && kind != OSN_ELEM_K_RETX) {
        it->reject = true;
        it->retry_after = (uint16_t)(v.retry_after < UINT16_MAX ? v.retry_after : UINT16_MAX);
        it->kind = OSN_ELEM_K_REJECT;
        full = s->n >= 2 * s->buffer; /* the cheap path has its own room */
    }
    if (s->cost[it->kind] <= 0)
        return OSN_ELEM_HANDLE_NOW;
    /* A message for the first FIFO that finds the buffer full pushes out the oldest copy
     * waiting in the second (the copy most likely useless by now), so that copies, served
     * last, cannot crowd out what is served first. */
    if (full && v.queue == OSN_CTL_Q_PRIMARY && s->qh[1]) {
        *evicted = unlink_head(s, 1);
        osn_elem_server_integrate(s, now);
        s->n--;
        if (now >= s->t_obs)
            s->dropped += 1;
        full = false;
    }
    if (full) {
        if (now >= s->t_obs)
            s->dropped += 1;
        return OSN_ELEM_DROPPED;
    }
    osn_elem_server_integrate(s, now);
    s->n++;
    it->t_arr = now;
    int q = v.queue == OSN_CTL_Q_SECONDARY ? 1 : 0;
    if (s->qt[q])
        s->qt[q]->next = it;
    else
        s->qh[q] = it;
    s->qt[q] = it;
    it->next = NULL;
    s->nq[q]++;
    return OSN_ELEM_QUEUED;
}

struct osn_elem_item *osn_elem_server_next(struct osn_elem_server *s, double now, int *fifo)
{
    if (!osn_elem_server_ready(s))
        return NULL;
    int q = 0;
    if (s->ctl &&
        osn_ctl_server_queue_choice(s->ctl, now, s->nq[0], s->nq[1]) == OSN_CTL_Q_SECONDARY)
        q = 1;
    if (!s->qh[q])
        q = !q;
    *fifo = q;
    return unlink_head(s, q);
}

bool osn_elem_server_discard(struct osn_elem_server *s, double now, struct osn_elem_item *it,
                             double t_first, bool answered)
{
    (void)it;
    if (!osn_ctl_server_retx_discard(s->ctl, now, t_first, answered))
        return false;
    osn_elem_server_integrate(s, now);
    s->n--;
    return true;
}

/* Always inline, as osn_elem_server_arrive: the call cost 7.7 instructions a message. */
__attribute__((always_inline)) inline struct osn_elem_item *
osn_elem_server_depart(struct osn_elem_server *s, double now)
{
    struct osn_elem_item *it = s->cur;
    osn_elem_server_integrate(s, now);
    s->n--;
    s->cur = NULL;
    if (s->ctl) {
        struct osn_ctl_event ev = {
                .kind = it->ckind, .queue_len = (size_t)s->n, .wait = now - it->t_arr};
        osn_ctl_server_on_departure(s->ctl, now, &ev);
        mode_update(s, now);
    }
    return it;
}

/*
 * The node's element state without its sockets: firing the deadlines that are due, and letting
 * everything go at the end. The event loop (run.c) calls these, and so do the tests and the
 * stateful fuzzer, which drive the node with datagrams and a clock of their own (udp_send_to is
 * their seam), so that what they exercise is the node's own code, not a copy of it.
 */
#include <stdlib.h>

#include "node_int.h"

void node_fire(struct node *n, const struct tm_entry *e)
{
    struct ntx *x = e->obj;
    ntx_hold(n);
    switch (e->kind) {
    case TM_TXN0:
    case TM_TXN1:
        if (x->live && x->gen[e->kind] == e->gen)
            ntx_timer(n, x, e->kind);
        break;
    case TM_2XX:
        if (x->live && x->gen[TM_2XX] == e->gen)
            tu_2xx_timer(n, x);
        break;
    case TM_SERVICE:
        if (e->gen == n->service_gen && n->server.cur)
            node_service_done(n);
        break;
    case TM_ARRIVAL:
        gen_arrival(n);
        break;
    case TM_CALL:
        gen_call_timer(n, e->obj, e->gen);
        break;
    case TM_KEPT:
        kept_expire(n, (int)e->gen);
        break;
    case TM_LINK:
        link_due(n, (int)e->gen);
        break;
    case TM_HANGUP:
        hangup_timer(n, e->obj, e->gen);
        break;
    }
    ntx_unhold(n);
}

void node_fire_due(struct node *n)
{
    const struct tm_entry *top;
    do {
        while (!n->err && (top = timers_top(&n->timers)) && top->at <= n->now) {
            struct tm_entry e = *top;
            timers_pop(&n->timers);
            node_fire(n, &e);
        }
    } while (!n->err && n->link.due_in && link_hand_in(n));
}

void node_release(struct node *n)
{
    gen_finish(n);
    hangup_release(n);
    osn_sip_layer_release(&n->sip);
    osn_ctl_free(n->srv);
    osn_ctl_free(n->cli);
    for (int i = 0; i < n->fan.n; i++)
        n->fan.h[i].cli = osn_ctl_free(n->fan.h[i].cli);
    n->srv = n->cli = NULL;
    timers_release(&n->timers);
    map_release(&n->dialogs);
    map_release(&n->calls);
    kept_release(n);
    link_release(n);
    free(n->budget);
    n->budget = NULL;
    map_release(&n->pending);
    for (struct ntx *x = n->all_ntx, *next; x; x = next) {
        next = x->next_all;
        free(x->req);
        free(x->resp);
        free(x->final);
        free(x);
    }
    n->all_ntx = n->free_ntx = NULL;
    ntx_blocks_release(n);
    for (struct osn_elem_item *it; (it = osn_elem_server_next(&n->server, n->now, &(int){0}));)
        qmsg_free(n, OSN_CONTAINER_OF(it, struct qmsg, item));
    if (n->server.cur)
        qmsg_free(n, OSN_CONTAINER_OF(n->server.cur, struct qmsg, item));
    n->server.cur = NULL;
}

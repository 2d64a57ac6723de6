/*
 * The network simulator's trace (--trace): one CSV row per interval of replication 0, what a
 * SIPp user reads from its statistics file. Each row covers (t_s - interval, t_s], warm-up
 * included, and gives the interval's rates (calls started, good, failed by reason, 503s an
 * element's overload control sent, retransmissions sent), the setup delays of the calls whose
 * 180 came in it (their mean, and exact order statistics of them), and the state at t_s of
 * every element (queue, the core's mode, the client half's level). Units are in the column names
 * (t_s, offered_per_s, *_msgs), so that the header says what the numbers are; a row's counts are
 * its own, so a window's totals are sums of rows times the interval.
 *
 * The counters are bumped where the totals are (net_source.c, net_tu.c, net_server.c,
 * net_txn.c), but over the whole run, and reset at each row.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "net_int.h"
#include "osn/err.h"

/* Whether element i is queued at all (a UAC has no server in the model: it costs nothing). */
static bool has_queue(const struct net *s, int i)
{
    return s->elems[i].role != R_SRC;
}

void osn__net_trace_header(struct net *s)
{
    char(*names)[OSN_NET_NAME_LEN] = calloc((size_t)s->nelem, sizeof *names);
    double *cap = calloc((size_t)s->nelem, sizeof *cap);
    const char *lv = osn_ctl_kind_level(s->cfg->ctl_kind);
    FILE *f = s->trace;

    if (!names || !cap) {
        s->err = OSN_ENOMEM;
        goto out;
    }
    osn__net_elems(s->cfg, names, cap);
    fputs("replication,t_s,offered_per_s,goodput_per_s,failed_timeout_per_s,"
          "failed_rejected_per_s,failed_other_per_s,sent_503_per_s,retrans_sent_per_s,"
          "core_new_per_s,core_retrans_per_s,setup_n,setup_mean_s,setup_p50_s,setup_p95_s,"
          "setup_p99_s",
          f);
    for (int i = 0; i < s->nelem; i++)
        if (has_queue(s, i))
            fprintf(f, ",%s_queue_msgs", names[i]);
    fprintf(f, ",%s_mode", names[s->core]);
    for (int i = 0; i < s->nelem; i++)
        if (s->elems[i].cli && lv)
            fprintf(f, ",%s_%s", names[i], lv);
    fputc('\n', f);
out:
    free(names);
    free(cap);
}

void osn__net_trace_setup(struct net *s, double d)
{
    struct osn__net_trace *t = &s->tr;
    if (t->nsetup == t->setup_cap) {
        size_t cap = t->setup_cap ? 2 * t->setup_cap : 256;
        double *p = realloc(t->setup, cap * sizeof *p);
        if (!p) {
            s->err = OSN_ENOMEM;
            return;
        }
        t->setup = p;
        t->setup_cap = cap;
    }
    t->setup[t->nsetup++] = d;
}

void osn__net_trace_processed(struct net *s, const struct element *el, int kind)
{
    if (el != &s->elems[s->core])
        return;
    if (kind == OSN_ELEM_K_INVITE || kind == OSN_ELEM_K_BYE || kind == OSN_ELEM_K_REJECT)
        s->tr.core_new += 1;
    else if (kind == OSN_ELEM_K_RETX)
        s->tr.core_retx += 1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The q-quantile of the sorted n samples x, nearest rank: the least x[i] with at least q n
 * samples at or below it. */
static double nearest_rank(const double *x, size_t n, double q)
{
    size_t r = (size_t)ceil(q * (double)n);
    return x[r > 0 ? r - 1 : 0];
}

/* A cell with %.9g, or empty (pandas: NaN) for a value that does not exist. */
static void cell(FILE *f, double v)
{
    fputc(',', f);
    if (isfinite(v) || isinf(v))
        fprintf(f, "%.9g", v);
}

void osn__net_trace_row(struct net *s)
{
    struct osn__net_trace *t = &s->tr;
    double iv = s->cfg->trace_interval, now = s->q.now;
    FILE *f = s->trace;

    fprintf(f, "0,%.9g", now);
    cell(f, s->tr_start / iv);
    /* The trace's outcome columns stop before OSN_UAC_ABANDONED: the simulator's callers do not
     * give up yet (no source.patience), so the column would always be 0. */
    for (int o = OSN_UAC_GOOD; o < OSN_UAC_ABANDONED; o++)
        cell(f, t->outcome[o] / iv);
    cell(f, t->sent_503 / iv);
    cell(f, t->retrans / iv);
    cell(f, t->core_new / iv);
    cell(f, t->core_retx / iv);
    fprintf(f, ",%zu", t->nsetup);
    double sum = 0;
    for (size_t i = 0; i < t->nsetup; i++)
        sum += t->setup[i];
    cell(f, t->nsetup ? sum / (double)t->nsetup : NAN);
    if (t->nsetup) /* an interval without a 180 may have no array yet: qsort wants one */
        qsort(t->setup, t->nsetup, sizeof *t->setup, cmp_double);
    static const double q[] = {0.50, 0.95, 0.99};
    for (int i = 0; i < 3; i++)
        cell(f, t->nsetup ? nearest_rank(t->setup, t->nsetup, q[i]) : NAN);
    for (int i = 0; i < s->nelem; i++)
        if (has_queue(s, i))
            fprintf(f, ",%ld", s->elems[i].server.n);
    fprintf(f, ",%d", s->elems[s->core].server.mode);
    if (osn_ctl_kind_level(s->cfg->ctl_kind))
        for (int i = 0; i < s->nelem; i++)
            if (s->elems[i].cli)
                cell(f, osn_ctl_client_level(s->elems[i].cli, now));
    fputc('\n', f);
    s->tr_start = 0;
    memset(t->outcome, 0, sizeof t->outcome);
    t->sent_503 = t->retrans = t->core_new = t->core_retx = 0;
    t->nsetup = 0;
    /* The next row at (k + 1) interval, not now + interval: the sum would drift, and a last row
     * due at the end of the run could fall just after it. */
    t->rows++;
    if (osn_des_at_key(&s->q, &s->trace_ev, (double)(t->rows + 1) * iv, s->trace_key++) != 0)
        s->err = OSN_ENOMEM;
}

void osn__net_trace_release(struct net *s)
{
    free(s->tr.setup);
    s->tr.setup = NULL;
}

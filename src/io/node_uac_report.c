/*
 * The load generator's measures in the `osn node` summary (element uac): the keys of `osn sim`
 * where they mean the same thing at the UAC (offered, goodput, failed by reason, setup and
 * response delay percentiles, retries, attempts per call, good calls by attempt), as rates over
 * the window after node.warmup (the events that came in [warmup, duration], as the simulator
 * counts after its warm-up) or, without a warm-up, over the traffic's length (node.duration);
 * and the counts behind them, over the whole run, so that a testbed can put the generator's
 * figures beside the simulator's and account for every call.
 */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "io_int.h"
#include "osn/node.h"

static json_t *num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static double per_s(uint64_t n, double t)
{
    return t > 0 ? (double)n / t : 0;
}

/* Failed calls: as osn sim counts them, abandoned ones apart (the caller left first). */
static uint64_t failed(const uint64_t *outcome)
{
    uint64_t k = 0;
    for (int i = 0; i < OSN_UAC_NOUTCOMES; i++)
        if (i != OSN_UAC_GOOD && i != OSN_UAC_PENDING && i != OSN_UAC_ABANDONED)
            k += outcome[i];
    return k;
}

static uint64_t ended(const uint64_t *outcome)
{
    return outcome[OSN_UAC_GOOD] + failed(outcome) + outcome[OSN_UAC_ABANDONED];
}

/* The counts the rates are made of, and the time they are over: the window's, or without one
 * the whole run's over the traffic's length. */
static double rate_counts(const struct osn_node_uac_stats *u, struct osn_node_uac_window *w)
{
    if (u->win.t1 > u->win.t0) {
        *w = u->win;
        return u->win.t1 - u->win.t0;
    }
    *w = (struct osn_node_uac_window){.started = u->started,
                                      .retries = u->retries,
                                      .ended_attempts = u->ended_attempts,
                                      .cancels = u->cancels,
                                      .no_trying = u->no_trying,
                                      .shed_local = u->shed_local};
    memcpy(w->outcome, u->outcome, sizeof w->outcome);
    memcpy(w->good_after, u->good_after, sizeof w->good_after);
    return u->duration;
}

void osn__node_uac_json(json_t *o, const struct osn_node_uac_stats *u)
{
    struct osn_node_uac_window w;
    double t = rate_counts(u, &w);
    const uint64_t *out = w.outcome;
    json_object_set_new(o, "offered", json_real(per_s(w.started, t)));
    json_object_set_new(o, "goodput", json_real(per_s(out[OSN_UAC_GOOD], t)));
    json_object_set_new(o, "failed", json_real(per_s(failed(out), t)));
    json_object_set_new(o, "failed_timeout", json_real(per_s(out[OSN_UAC_TIMEOUT], t)));
    json_object_set_new(o, "failed_rejected", json_real(per_s(out[OSN_UAC_REJECTED], t)));
    json_object_set_new(o, "failed_other", json_real(per_s(out[OSN_UAC_OTHER], t)));
    json_object_set_new(o, "abandoned", json_real(per_s(out[OSN_UAC_ABANDONED], t)));
    /* The attempts the client half shed (control.at edge or both), in failed_rejected too: the
     * simulator's shed_local, per second of the window. */
    json_object_set_new(o, "shed_local", json_real(per_s(w.shed_local, t)));
    json_object_set_new(o, "cancels", json_real(per_s(w.cancels, t)));
    json_object_set_new(o, "setup_delay_mean",
                        num(u->setup_n ? u->setup_sum / (double)u->setup_n : NAN));
    json_object_set_new(o, "setup_delay_p50", num(osn_node_hist_quantile(u->setup_hist, 0.50)));
    json_object_set_new(o, "setup_delay_p95", num(osn_node_hist_quantile(u->setup_hist, 0.95)));
    json_object_set_new(o, "setup_delay_p99", num(osn_node_hist_quantile(u->setup_hist, 0.99)));
    json_object_set_new(o, "resp_delay_mean",
                        num(u->trying_n ? u->trying_sum / (double)u->trying_n : NAN));
    json_object_set_new(o, "resp_delay_p50", num(osn_node_hist_quantile(u->trying_hist, 0.50)));
    json_object_set_new(o, "resp_delay_p95", num(osn_node_hist_quantile(u->trying_hist, 0.95)));
    json_object_set_new(o, "resp_delay_p99", num(osn_node_hist_quantile(u->trying_hist, 0.99)));
    json_object_set_new(o, "no_trying", json_real(per_s(w.no_trying, t)));
    json_object_set_new(o, "retries", json_real(per_s(w.retries, t)));
    json_object_set_new(o, "attempts_per_call",
                        num(ended(out) ? (double)w.ended_attempts / (double)ended(out) : NAN));
    for (int k = 0; k < 4; k++) {
        char key[16];
        snprintf(key, sizeof key, "good_after_%d", k);
        json_object_set_new(o, key, json_real(per_s(w.good_after[k], t)));
    }
    /* The time the rates are over, [window_start, window_end] s of the generator's clock. */
    json_object_set_new(o, "window_start", json_real(u->win.t1 > u->win.t0 ? u->win.t0 : 0));
    json_object_set_new(o, "window_end", json_real(u->win.t1 > u->win.t0 ? u->win.t1 : t));
    /* The schedule: how late the latest INVITE left (s), how many left more than 1 ms late. */
    json_object_set_new(o, "lag_max", json_real(u->lag_max));
    json_object_set_new(o, "late_sends", json_integer((json_int_t)u->late_sends));
    /* How late the loop may wake, by design, for a call that is due (s): part of every lag. */
    json_object_set_new(o, "wake_slack", json_real(u->wake_slack));
    /* The counts: the whole run's, drain included (every call started has its outcome). */
    /* One row a key: a json_pack format string had to grow a pair with every key, and a merge
     * that added a key without its pair silently dropped the last one (setup_samples). */
    const struct {
        const char *key;
        uint64_t n;
    } counts[] = {
            {"calls_started", u->started},
            {"retries", u->retries},
            {"good", u->outcome[OSN_UAC_GOOD]},
            {"failed_timeout", u->outcome[OSN_UAC_TIMEOUT]},
            {"failed_rejected", u->outcome[OSN_UAC_REJECTED]},
            {"failed_other", u->outcome[OSN_UAC_OTHER]},
            {"abandoned", u->outcome[OSN_UAC_ABANDONED]},
            {"cancels", u->cancels},
            {"unfinished", u->unfinished},
            {"acks_2xx", u->acks_2xx},
            {"byes_sent", u->byes_sent},
            {"byes_ok", u->byes_ok},
            {"byes_in", u->byes_in},
            {"shed_local", u->shed_local},
            {"setup_samples", u->setup_n},
            {"failovers", u->failovers},
    };
    json_t *c = json_object();
    json_object_set_new(c, "duration", json_real(u->duration));
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++)
        json_object_set_new(c, counts[k].key, json_integer((json_int_t)counts[k].n));
    json_object_set_new(o, "uac", c);
}

void osn__node_uac_table(FILE *f, const struct osn_node_uac_stats *u)
{
    double t = u->duration;
    fprintf(f, "load generator, %.1f s of traffic:\n", t);
    fprintf(f, "  %-18s %12llu  calls started (first attempts), %.1f/s\n", "calls_started",
            (unsigned long long)u->started, per_s(u->started, t));
    fprintf(f, "  %-18s %12llu  answered 2xx before Timer B (goodput %.1f/s)\n", "good",
            (unsigned long long)u->outcome[OSN_UAC_GOOD], per_s(u->outcome[OSN_UAC_GOOD], t));
    if (u->win.t1 > u->win.t0)
        fprintf(f, "  %-18s %12.1f  calls/s offered, %.1f good, in the window [%g, %g] s\n",
                "window", per_s(u->win.started, u->win.t1 - u->win.t0),
                per_s(u->win.outcome[OSN_UAC_GOOD], u->win.t1 - u->win.t0), u->win.t0, u->win.t1);
    fprintf(f, "  %-18s %12llu  failed: Timer B, a 408, or a 2xx too late\n", "failed_timeout",
            (unsigned long long)u->outcome[OSN_UAC_TIMEOUT]);
    fprintf(f, "  %-18s %12llu  failed: 503\n", "failed_rejected",
            (unsigned long long)u->outcome[OSN_UAC_REJECTED]);
    fprintf(f, "  %-18s %12llu  failed: another final response\n", "failed_other",
            (unsigned long long)u->outcome[OSN_UAC_OTHER]);
    fprintf(f, "  %-18s %12llu  the caller gave up first (%llu CANCELs sent)\n", "abandoned",
            (unsigned long long)u->outcome[OSN_UAC_ABANDONED], (unsigned long long)u->cancels);
    fprintf(f, "  %-18s %12llu  calls without an end when the node stopped\n", "unfinished",
            (unsigned long long)u->unfinished);
    fprintf(f, "  %-18s %12llu  attempts after a call's first\n", "retries",
            (unsigned long long)u->retries);
    fprintf(f, "  %-18s %12llu  BYEs sent; %llu answered 2xx\n", "byes_sent",
            (unsigned long long)u->byes_sent, (unsigned long long)u->byes_ok);
    fprintf(f, "  %-18s %12llu  calls the callee ended: its BYE answered 200\n", "byes_in",
            (unsigned long long)u->byes_in);
    if (u->shed_local)
        fprintf(f,
                "  %-18s %12llu  attempts our client half shed, never sent (in failed_rejected)\n",
                "shed_local", (unsigned long long)u->shed_local);
    fprintf(f, "  %-18s %12.4f  s, INVITE -> 180: p50 %.4f, p95 %.4f, p99 %.4f\n",
            "setup_delay_mean", u->setup_n ? u->setup_sum / (double)u->setup_n : NAN,
            osn_node_hist_quantile(u->setup_hist, 0.50),
            osn_node_hist_quantile(u->setup_hist, 0.95),
            osn_node_hist_quantile(u->setup_hist, 0.99));
    fprintf(f,
            "  %-18s %12.4f  s, the latest INVITE after its schedule; %llu over 1 ms (wake "
            "slack %.4f s)\n",
            "lag_max", u->lag_max, (unsigned long long)u->late_sends, u->wake_slack);
}

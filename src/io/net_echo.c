/*
 * The network scenario as it ran, for the result files (src/io/net_report.c): where it came
 * from, every key that was set with its value as written, and every key of the schema with the
 * value the simulator used, defaults included, so that a result file says what produced it
 * without the scenario file beside it.
 */
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>

#include "io_int.h"
#include "osn/net_scenario.h"

static json_t *num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *server_json(const struct osn_net_server_cfg *sv)
{
    static const char *const kinds[OSN_NET_NKINDS] = {
            "cost_invite", "cost_retrans", "cost_response", "cost_ack", "cost_bye", "cost_reject"};
    json_t *o = json_object();

    for (int k = 0; k < OSN_NET_NKINDS; k++)
        json_object_set_new(o, kinds[k], num(sv->cost[k]));
    json_object_set_new(o, "cost_law", json_string(sv->exp_cost ? "exp" : "det"));
    json_object_set_new(o, "buffer", json_integer(sv->buffer));
    return o;
}

static json_t *link_json(const struct osn_net_link_cfg *l)
{
    return json_pack("{soso}", "delay", num(l->delay), "loss", num(l->loss));
}

static json_t *source_json(const struct osn_net_source_cfg *s)
{
    static const char *const proc[] = {"poisson", "mmpp", "profile"};
    json_t *o = json_object(), *steps = json_array();

    json_object_set_new(o, "process", json_string(proc[s->process]));
    json_object_set_new(o, "rate", num(s->rate));
    json_object_set_new(o, "hold", num(s->hold));
    if (s->process == OSN_NET_MMPP) {
        json_object_set_new(o, "mmpp_rates",
                            json_pack("[oo]", num(s->mmpp_rate[0]), num(s->mmpp_rate[1])));
        json_object_set_new(o, "mmpp_switch",
                            json_pack("[oo]", num(s->mmpp_switch[0]), num(s->mmpp_switch[1])));
    }
    if (s->process == OSN_NET_PROFILE) {
        for (int i = 0; i < s->nsteps; i++)
            json_array_append_new(steps,
                                  json_pack("[oo]", num(s->step_t[i]), num(s->step_rate[i])));
        json_object_set_new(o, "burst_start", num(s->burst_t));
        json_object_set_new(o, "burst_length", num(s->burst_len));
        json_object_set_new(o, "burst_factor", num(s->burst_factor));
    }
    json_object_set_new(o, "steps", steps);
    return o;
}

json_t *osn__ctl_json(enum osn_ctl_kind kind, const struct osn_ctl_cfg *ct)
{
    static const char *const dets[] = {"hysteretic", "occupancy", "delay"};
    json_t *o = json_object();

    json_object_set_new(o, "kind", json_string(osn_ctl_kind_name(kind)));
    json_object_set_new(o, "detector", json_string(dets[ct->det.kind]));
    json_object_set_new(o, "l1", num(ct->det.l1));
    json_object_set_new(o, "h1", num(ct->det.h1));
    json_object_set_new(o, "l2", num(ct->det.l2));
    json_object_set_new(o, "h2", num(ct->det.h2));
    json_object_set_new(o, "policy", json_string(ct->det.policy == OSN_CTL_POLICY_II ? "II" : "I"));
    json_object_set_new(o, "window", num(ct->det.interval));
    json_object_set_new(o, "alpha", num(ct->det.alpha));
    json_object_set_new(o, "retry_after", json_integer(ct->none.retry_after));
    json_object_set_new(o, "reject_when_full", json_boolean(ct->none.reject_when_full));
    json_object_set_new(o, "prsm_responses", json_boolean(ct->prsm.responses));
    json_object_set_new(o, "reject_overload", num(ct->local.reject_overload));
    json_object_set_new(o, "target", num(ct->loss.target));
    json_object_set_new(o, "validity", num(ct->loss.validity));
    json_object_set_new(o, "interval", num(ct->loss.interval));
    json_object_set_new(o, "max_loss", num(ct->loss.max_loss));
    json_object_set_new(o, "cat1", num(ct->loss.cat1));
    json_object_set_new(o, "tau_factor", num(ct->rate.tau_factor));
    json_object_set_new(o, "min_rate", num(ct->rate.min_rate));
    json_object_set_new(o, "release", num(ct->rate.release));
    json_object_set_new(o, "pi_measure",
                        json_string(ct->pi.measure == OSN_CTL_PI_RTD ? "rtd" : "rrrc"));
    json_object_set_new(o, "pi_target", num(ct->pi.target));
    json_object_set_new(o, "kp", num(ct->pi.kp));
    json_object_set_new(o, "ki", num(ct->pi.ki));
    json_object_set_new(o, "pi_interval", num(ct->pi.interval));
    return o;
}

json_t *osn__sip_json(const struct osn_sip_cfg *sip, bool sipp)
{
    return json_pack("{sosososossso}", "t1", num(sip->t1), "t2", num(sip->t2), "t4", num(sip->t4),
                     "timer_d", num(sip->timer_d), "client_mode", sipp ? "sipp" : "rfc", "rfc6026",
                     json_boolean(sip->rfc6026));
}

json_t *osn__net_scenario_json(const struct osn_net_scenario *s)
{
    static const char *const topo[] = {"collapse", "tandem", "fanin"};
    const struct osn_net_cfg *c = &s->cfg;
    json_t *keys = json_object(), *r = json_object();

    for (int i = 0; i < s->ini.nkeys; i++)
        json_object_set_new(keys, s->ini.keys[i].key, json_string(s->ini.keys[i].value));
    /* --seed and --replications may set these after the file was read: always the run's
     * values, so that the keys say what ran, whichever way it was set. */
    char v[32];
    snprintf(v, sizeof v, "%d", c->replications);
    json_object_set_new(keys, "net.replications", json_string(v));
    snprintf(v, sizeof v, "%" PRIu64, c->seed);
    json_object_set_new(keys, "net.seed", json_string(v));
    json_t *net = json_object();
    json_object_set_new(net, "topology", json_string(topo[c->topology]));
    json_object_set_new(net, "edges", json_integer(c->edges));
    json_object_set_new(net, "time", num(c->time));
    json_object_set_new(net, "warmup", num(c->warmup));
    json_object_set_new(net, "replications", json_integer(c->replications));
    json_object_set_new(net, "seed", json_integer((json_int_t)c->seed));
    json_object_set_new(net, "level", num(c->level));
    json_object_set_new(net, "trace_interval", num(c->trace_interval));
    json_object_set_new(r, "net", net);
    json_object_set_new(r, "source", source_json(&c->src));
    json_object_set_new(r, "server edge", server_json(&c->edge));
    json_object_set_new(r, "server core", server_json(&c->core));
    json_object_set_new(r, "server uas", server_json(&c->uas));
    json_object_set_new(r, "link access", link_json(&c->access));
    json_object_set_new(r, "link trunk", link_json(&c->trunk));
    json_object_set_new(r, "link uas", link_json(&c->uas_link));
    json_object_set_new(r, "control", osn__ctl_json(c->ctl_kind, &c->ctl));
    json_object_set_new(r, "sip", osn__sip_json(&c->sip, c->sipp));
    return json_pack("{sososo}", "source", s->ini.path[0] ? json_string(s->ini.path) : json_null(),
                     "keys", keys, "resolved", r);
}

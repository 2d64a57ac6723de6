/*
 * The queue simulator's scenario as it ran, for its JSON (src/io/sim_report.c), as
 * src/io/net_echo.c does for the network: every key that applies to the model's shape (kind,
 * arrival process, flows, service law) with the value the simulator used, defaults included,
 * section by section, so that a result file says what produced it without the scenario file.
 * Keys that do not apply to the shape are left out (setting one is an error), and a list is an
 * array: an MMPP's phase rates, its switch rates row by row as written, its accepted fraction in
 * overload per phase.
 */
#include <jansson.h>
#include <math.h>

#include "io_int.h"
#include "osn/sim_scenario.h"

static json_t *num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *nums(const double *v, int n)
{
    json_t *a = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(a, num(v[i]));
    return a;
}

/* A key's value as written (a file name), null when not set. */
static json_t *as_set(const struct osn_ini *ini, const char *key)
{
    const struct osn_key_origin *o = osn_ini_get(ini, key);
    return o ? json_string(o->value) : json_null();
}

static json_t *thresholds_json(const struct osn_model *m)
{
    switch (m->kind) {
    case OSN_KIND_TWO_LOOP:
        return json_pack("{sIsIsI}", "L", (json_int_t)m->L, "H", (json_int_t)m->H, "R",
                         (json_int_t)m->R);
    case OSN_KIND_SINGLE_LOOP:
        return json_pack("{sIsIsI}", "L", (json_int_t)m->L, "H", (json_int_t)m->H, "B",
                         (json_int_t)m->R);
    case OSN_KIND_BI_LEVEL:
        break;
    }
    return json_pack("{sIsIsIsIsI}", "L1", (json_int_t)m->L1, "H1", (json_int_t)m->H1, "L2",
                     (json_int_t)m->L2, "H2", (json_int_t)m->H2, "R", (json_int_t)m->R);
}

static json_t *arrivals_json(const struct osn_scenario *sc)
{
    static const char *const proc[] = {"poisson", "mmpp", "trace"};
    const struct osn_model *m = &sc->model;
    json_t *o = json_object();

    json_object_set_new(o, "process", json_string(proc[m->process]));
    json_object_set_new(o, "flows", json_integer(m->flows));
    if (m->process == OSN_ARR_MMPP) {
        const struct osn_mmpp *p = &m->mmpp;
        double sw[OSN_MMPP_MAX * OSN_MMPP_MAX], orates[OSN_MMPP_MAX];
        int n = 0;
        for (int i = 0; i < p->K; i++) {
            for (int j = 0; j < p->K; j++)
                if (i != j)
                    sw[n++] = p->gen[i][j];
            orates[i] = p->accept[1][i] * p->rate[i];
        }
        json_object_set_new(o, "phase_rates", nums(p->rate, p->K));
        json_object_set_new(o, "phase_switch", nums(sw, n));
        json_object_set_new(o, "overload_accept", nums(p->accept[1], p->K));
        json_object_set_new(o, "overload_rates", nums(orates, p->K));
        return o;
    }
    if (m->flows == 2) {
        json_object_set_new(o, "rate1", num(m->rate1));
        json_object_set_new(o, "rate2", num(m->rate2));
        return o;
    }
    if (m->process == OSN_ARR_TRACE) {
        json_object_set_new(o, "file", as_set(&sc->ini, "arrivals.file"));
        json_object_set_new(o, "arrivals_in_file", json_integer((json_int_t)m->ntrace));
    } else {
        json_object_set_new(o, "rate", num(m->rate));
        json_object_set_new(o, "overload_rate", num(m->overload_rate));
    }
    json_object_set_new(o, "overload_accept", num(m->rate > 0 ? m->overload_rate / m->rate : NAN));
    return o;
}

static json_t *service_json(const struct osn_scenario *sc)
{
    static const char *const laws[] = {"exp",     "det",       "erlang",   "hyperexp",
                                       "uniform", "lognormal", "empirical"};
    const struct osn_law *l = &sc->model.service;
    json_t *o = json_object();

    json_object_set_new(o, "law", json_string(laws[l->kind]));
    json_object_set_new(o, "rate", num(l->rate > 0 ? l->rate : sc->model.mu)); /* 1 / mean */
    switch (l->kind) {
    case OSN_LAW_ERLANG:
        json_object_set_new(o, "k", json_integer(l->k));
        break;
    case OSN_LAW_HYPEREXP:
        json_object_set_new(o, "probs", nums(l->probs, l->nbranch));
        json_object_set_new(o, "rates", nums(l->rates, l->nbranch));
        break;
    case OSN_LAW_UNIFORM:
        json_object_set_new(o, "cv", num(l->cv));
        break;
    case OSN_LAW_LOGNORMAL:
        json_object_set_new(o, "cv", num(l->cv));
        json_object_set_new(o, "sigma", num(sqrt(log1p(l->cv * l->cv))));
        break;
    case OSN_LAW_EMPIRICAL:
        json_object_set_new(o, "file", as_set(&sc->ini, "service.file"));
        json_object_set_new(o, "samples_in_file", json_integer((json_int_t)l->nsamples));
        break;
    default:
        break;
    }
    return o;
}

json_t *osn__sim_scenario_resolved(const struct osn_sim_scenario *s)
{
    static const char *const kinds[] = {"two-loop", "single-loop", "bi-level"};
    const struct osn_model *m = &s->sc.model;
    const struct osn_sim_cfg *c = &s->cfg;

    return json_pack("{s{ssss}sosososo}", "model", "kind", kinds[m->kind], "policy",
                     osn__policy_names[m->policy == OSN_POLICY_II], "thresholds",
                     thresholds_json(m), "arrivals", arrivals_json(&s->sc), "service",
                     service_json(&s->sc), "sim",
                     json_pack("{sososIsIso}", "time", num(c->time), "warmup", num(c->warmup),
                               "replications", (json_int_t)c->replications, "seed",
                               (json_int_t)c->seed, "feedback_delay", num(c->feedback_delay)));
}

/*
 * Network scenarios (include/osn/net_scenario.h): the schema of the network sections, and the
 * reading of their values into a struct osn_net_cfg with the shared osn_ini_* parsers.
 *
 * Numeric keys are read through one table of (key, destination, lower bound), so that adding a
 * key is one line here, one in the schema and one in `osn sim --help`. osn_net_check() then
 * checks the combination, and a complaint is mapped back to where its key was set.
 */
#include "osn/net_scenario.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "osn/ctl.h"
#include "osn/err.h"

#define SERVER_KEYS(sec)                                                                    \
    {sec, "cost_invite"}, {sec, "cost_retrans"}, {sec, "cost_response"}, {sec, "cost_ack"}, \
            {sec, "cost_bye"}, {sec, "cost_reject"}, {sec, "cost_law"},                     \
    {                                                                                       \
        sec, "buffer"                                                                       \
    }

static const struct osn_ini_keydef net_keys[] = {
        {"net", "topology"},
        {"net", "edges"},
        {"net", "time"},
        {"net", "warmup"},
        {"net", "replications"},
        {"net", "seed"},
        {"net", "level"},
        {"net", "trace_interval"},
        {"source", "rate"},
        {"source", "process"},
        {"source", "mmpp_rates"},
        {"source", "mmpp_switch"},
        {"source", "steps"},
        {"source", "burst_start"},
        {"source", "burst_length"},
        {"source", "burst_factor"},
        {"source", "hold"},
        SERVER_KEYS("server edge"),
        SERVER_KEYS("server core"),
        SERVER_KEYS("server uas"),
        {"link access", "delay"},
        {"link access", "loss"},
        {"link trunk", "delay"},
        {"link trunk", "loss"},
        {"link uas", "delay"},
        {"link uas", "loss"},
        {"control", "kind"},
        {"control", "detector"},
        {"control", "l1"},
        {"control", "h1"},
        {"control", "l2"},
        {"control", "h2"},
        {"control", "policy"},
        {"control", "window"},
        {"control", "alpha"},
        {"control", "retry_after"},
        {"control", "reject_when_full"},
        {"control", "prsm_responses"},
        {"control", "reject_overload"},
        {"control", "target"},
        {"control", "validity"},
        {"control", "interval"},
        {"control", "max_loss"},
        {"control", "cat1"},
        {"control", "tau_factor"},
        {"control", "min_rate"},
        {"control", "release"},
        {"control", "pi_measure"},
        {"control", "pi_target"},
        {"control", "kp"},
        {"control", "ki"},
        {"control", "pi_interval"},
        {"sip", "t1"},
        {"sip", "t2"},
        {"sip", "t4"},
        {"sip", "timer_d"},
        {"sip", "client_mode"},
        {"sip", "rfc6026"},
};

const struct osn_ini_schema osn_net_schema = {net_keys, sizeof net_keys / sizeof net_keys[0], NULL};

/* Whether line (a section header or not) opens a section only network scenarios have. A file
 * of [server core] alone once went to the node's loader: "unknown section [server core]". */
static bool network_section(const char *line)
{
    static const char *const names[] = {"net",     "source", "server", "link",
                                        "control", "sip",    "node"};
    const char *p = line + strspn(line, " \t");

    if (*p != '[')
        return false;
    p += 1 + strspn(p + 1, " \t");
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        size_t n = strlen(names[i]);
        if (strncasecmp(p, names[i], n) == 0 && (p[n] == ']' || p[n] == ' ' || p[n] == '\t'))
            return true;
    }
    return false;
}

bool osn_net_scenario_sniff(const char *path)
{
    char line[512];
    bool found = false;
    FILE *f = path ? fopen(path, "r") : NULL;
    size_t len;
    int st;

    if (!f)
        return false;
    /* A NUL byte ends the sniffing (/dev/zero once kept fgets() busy forever); the loader
     * then says what is wrong with the file. A long line is read on in pieces. */
    while (!found && (st = osn_ini_getline(f, line, sizeof line, &len)) != OSN_INI_LINE_EOF &&
           st != OSN_INI_LINE_NUL)
        found = network_section(line);
    fclose(f);
    return found;
}

struct dkey {
    const char *key;
    double *dst;
    double lo;
    bool excl;
};

static int parse_server(const struct osn_ini *ini, const char *sec, struct osn_net_server_cfg *sv,
                        char *err, size_t errsize)
{
    static const char *const kinds[OSN_NET_NKINDS] = {"invite", "retrans", "response",
                                                      "ack",    "bye",     "reject"};
    static const char *const laws[] = {"det", "exp", NULL};
    const struct osn_key_origin *o;
    char key[64];
    int rc = 0, v;
    long n;

    for (int k = 0; k < OSN_NET_NKINDS && !rc; k++) {
        snprintf(key, sizeof key, "%s.cost_%s", sec, kinds[k]);
        if ((o = osn_ini_get(ini, key)))
            rc = osn_ini_double(o, 0, false, &sv->cost[k], err, errsize);
    }
    snprintf(key, sizeof key, "%s.cost_law", sec);
    if (!rc && (o = osn_ini_get(ini, key))) {
        rc = osn_ini_choice(o, laws, &v, err, errsize);
        sv->exp_cost = v == 1;
    }
    snprintf(key, sizeof key, "%s.buffer", sec);
    if (!rc && (o = osn_ini_get(ini, key))) {
        rc = osn_ini_long(o, 1, 100000000, &n, err, errsize);
        sv->buffer = n;
    }
    return rc;
}

/*
 * A key that cannot act is an error (issue 14): `source.burst_*` without process = profile once
 * ran without the burst, silently. Returns 0 or OSN_ECONFIG naming the key.
 */
static int reject_idle_keys(const struct osn_ini *ini, const struct osn_net_cfg *c, char *err,
                            size_t errsize)
{
    static const char *const profile[] = {"source.steps", "source.burst_start",
                                          "source.burst_length", "source.burst_factor", NULL};
    static const char *const mmpp[] = {"source.mmpp_rates", "source.mmpp_switch", NULL};
    const struct osn_key_origin *o;

    for (int i = 0; c->src.process != OSN_NET_PROFILE && profile[i]; i++)
        if ((o = osn_ini_get(ini, profile[i])))
            return osn_ini_bad(o, err, errsize,
                               "acts only with source.process = profile (it is %s here)",
                               c->src.process == OSN_NET_MMPP ? "mmpp" : "poisson");
    for (int i = 0; c->src.process != OSN_NET_MMPP && mmpp[i]; i++)
        if ((o = osn_ini_get(ini, mmpp[i])))
            return osn_ini_bad(o, err, errsize,
                               "acts only with source.process = mmpp (it is %s here)",
                               c->src.process == OSN_NET_PROFILE ? "profile" : "poisson");
    return 0;
}

/*
 * The detector's thresholds are in its own units: messages in the system for hysteretic, the
 * fraction of time the CPU is busy for occupancy, seconds of queueing delay for delay. The
 * defaults 20/40/60/80 are message counts: under occupancy or delay they were never reached and
 * the run was bit for bit the run without control, silently (issue 20). A detector other than
 * hysteretic now takes defaults of its own for the thresholds not given (occupancy 0.7, 0.9,
 * 0.95, 0.99; delay 0.05, 0.1, 0.2, 0.4 s, below T1 so that it acts before the first
 * retransmission), and a threshold of the wrong kind is refused, naming its key.
 */
static int detector_thresholds(const struct osn_ini *ini, struct osn_net_cfg *c, char *err,
                               size_t errsize)
{
    static const char *const keys[4] = {"control.l1", "control.h1", "control.l2", "control.h2"};
    static const double occupancy[4] = {0.7, 0.9, 0.95, 0.99};
    static const double delay[4] = {0.05, 0.1, 0.2, 0.4};
    struct osn_ctl_det_cfg *d = &c->ctl.det;
    double *v[4] = {&d->l1, &d->h1, &d->l2, &d->h2};
    double timer_b = 64 * c->sip.t1;

    for (int i = 0; i < 4; i++) {
        const struct osn_key_origin *o = osn_ini_get(ini, keys[i]);
        if (!o) {
            if (d->kind == OSN_CTL_DET_OCCUPANCY)
                *v[i] = occupancy[i];
            else if (d->kind == OSN_CTL_DET_DELAY)
                *v[i] = delay[i];
            continue;
        }
        if (d->kind == OSN_CTL_DET_HYSTERETIC && *v[i] != floor(*v[i]))
            return osn_ini_bad(o, err, errsize,
                               "the hysteretic detector counts messages in the system: a whole "
                               "number (fractions are control.detector = occupancy's unit, "
                               "seconds delay's)");
        if (d->kind == OSN_CTL_DET_OCCUPANCY && *v[i] > 1)
            return osn_ini_bad(o, err, errsize,
                               "the occupancy detector measures the fraction of time the CPU is "
                               "busy: a threshold in [0, 1] (%g is a message count, the "
                               "hysteretic detector's unit)",
                               *v[i]);
        if (d->kind == OSN_CTL_DET_DELAY && *v[i] >= timer_b)
            return osn_ini_bad(o, err, errsize,
                               "the delay detector measures queueing delay in seconds: %g s is at "
                               "or beyond Timer B (64 T1 = %g s), when every call has already "
                               "failed (a message count is the hysteretic detector's unit)",
                               *v[i], timer_b);
    }
    return 0;
}

int osn_net_scenario_parse(const struct osn_ini *ini, struct osn_net_cfg *c, char *err,
                           size_t errsize)
{
    static const char *const topo[] = {"collapse", "tandem", "fanin", NULL};
    static const char *const proc[] = {"poisson", "mmpp", "profile", NULL};
    static const char *const dets[] = {"hysteretic", "occupancy", "delay", NULL};
    static const char *const pol[] = {"I", "II", NULL};
    static const char *const modes[] = {"rfc", "sipp", NULL};
    static const char *const yesno[] = {"no", "yes", "false", "true", "0", "1", NULL};
    static const char *const pims[] = {"rrrc", "rtd", NULL};
    struct osn_ctl_cfg *ct = &c->ctl;
    double retry = 0, burst_len = 0, pi_target = NAN;
    const struct dkey dk[] = {
            {"net.time", &c->time, 0, true},
            {"net.warmup", &c->warmup, 0, false},
            {"net.level", &c->level, 0, true},
            {"net.trace_interval", &c->trace_interval, 0, true},
            {"source.rate", &c->src.rate, 0, false},
            {"source.burst_start", &c->src.burst_t, 0, false},
            {"source.burst_length", &burst_len, 0, false},
            {"source.burst_factor", &c->src.burst_factor, 0, false},
            {"source.hold", &c->src.hold, 0, true},
            {"link access.delay", &c->access.delay, 0, false},
            {"link access.loss", &c->access.loss, 0, false},
            {"link trunk.delay", &c->trunk.delay, 0, false},
            {"link trunk.loss", &c->trunk.loss, 0, false},
            {"link uas.delay", &c->uas_link.delay, 0, false},
            {"link uas.loss", &c->uas_link.loss, 0, false},
            {"control.l1", &ct->det.l1, 0, false},
            {"control.h1", &ct->det.h1, 0, true},
            {"control.l2", &ct->det.l2, 0, false},
            {"control.h2", &ct->det.h2, 0, true},
            {"control.window", &ct->det.interval, 0, true},
            {"control.alpha", &ct->det.alpha, 0, true},
            {"control.retry_after", &retry, 0, false},
            {"control.reject_overload", &ct->local.reject_overload, 0, false},
            {"control.validity", &ct->loss.validity, 0, true},
            {"control.interval", &ct->loss.interval, 0, true},
            {"control.max_loss", &ct->loss.max_loss, 0, false},
            {"control.cat1", &ct->loss.cat1, 0, true},
            {"control.tau_factor", &ct->rate.tau_factor, 0, false},
            {"control.min_rate", &ct->rate.min_rate, 0, false},
            {"control.release", &ct->rate.release, 0, false},
            {"control.pi_target", &pi_target, 0, true},
            {"control.kp", &ct->pi.kp, 0, false},
            {"control.ki", &ct->pi.ki, 0, false},
            {"control.pi_interval", &ct->pi.interval, 0, true},
            {"sip.t1", &c->sip.t1, 0, true},
            {"sip.t2", &c->sip.t2, 0, true},
            {"sip.t4", &c->sip.t4, 0, true},
            {"sip.timer_d", &c->sip.timer_d, 0, true},
    };
    const struct osn_key_origin *o;
    int rc = 0, v;
    long n;

    for (size_t i = 0; i < sizeof dk / sizeof dk[0] && !rc; i++)
        if ((o = osn_ini_get(ini, dk[i].key)))
            rc = osn_ini_double(o, dk[i].lo, dk[i].excl, dk[i].dst, err, errsize);
    if (rc)
        return rc;
    if ((o = osn_ini_get(ini, "control.target"))) { /* loss and rate share the target */
        rc = osn_ini_double(o, 0, true, &ct->loss.target, err, errsize);
        ct->rate.target = ct->loss.target;
    }
    if ((o = osn_ini_get(ini, "control.validity")))
        ct->rate.validity = ct->loss.validity;
    if ((o = osn_ini_get(ini, "control.interval")))
        ct->rate.interval = ct->loss.interval;
    if (isfinite(pi_target))
        ct->pi.target = pi_target;
    ct->none.retry_after = ct->local.retry_after = ct->prsm.retry_after = (unsigned)retry;
    c->src.burst_len = burst_len;
    if (!rc && (o = osn_ini_get(ini, "net.topology"))) {
        rc = osn_ini_choice(o, topo, &v, err, errsize);
        c->topology = (enum osn_net_topology)v;
    }
    if (!rc && (o = osn_ini_get(ini, "net.edges"))) {
        rc = osn_ini_long(o, 1, OSN_NET_MAX_EDGES, &n, err, errsize);
        c->edges = (int)n;
    }
    if (!rc && (o = osn_ini_get(ini, "net.replications"))) {
        rc = osn_ini_long(o, 1, 100000, &n, err, errsize);
        c->replications = (int)n;
    }
    if (!rc && (o = osn_ini_get(ini, "net.seed"))) {
        rc = osn_ini_long(o, 0, 0x7fffffffffffffffL, &n, err, errsize);
        c->seed = (uint64_t)n;
    }
    if (!rc && (o = osn_ini_get(ini, "source.process"))) {
        rc = osn_ini_choice(o, proc, &v, err, errsize);
        c->src.process = (enum osn_net_process)v;
    }
    if (!rc && (o = osn_ini_get(ini, "source.mmpp_rates"))) {
        rc = osn_ini_doubles(o, c->src.mmpp_rate, 2, &v, err, errsize);
        if (!rc && v != 2)
            rc = osn_ini_bad(o, err, errsize, "expected two rates (phase 0, phase 1)");
    }
    if (!rc && (o = osn_ini_get(ini, "source.mmpp_switch"))) {
        rc = osn_ini_doubles(o, c->src.mmpp_switch, 2, &v, err, errsize);
        if (!rc && v != 2)
            rc = osn_ini_bad(o, err, errsize, "expected two switch rates (0->1, 1->0)");
    }
    if (!rc && (o = osn_ini_get(ini, "source.steps"))) {
        double x[2 * OSN_NET_MAX_STEPS];
        rc = osn_ini_doubles(o, x, 2 * OSN_NET_MAX_STEPS, &v, err, errsize);
        if (!rc && v % 2)
            rc = osn_ini_bad(o, err, errsize, "expected pairs 'time rate, time rate, ...'");
        for (int i = 0; !rc && i < v / 2; i++) {
            c->src.step_t[i] = x[2 * i];
            c->src.step_rate[i] = x[2 * i + 1];
        }
        c->src.nsteps = rc ? 0 : v / 2;
    }
    if (!rc)
        rc = parse_server(ini, "server edge", &c->edge, err, errsize);
    if (!rc)
        rc = parse_server(ini, "server core", &c->core, err, errsize);
    if (!rc)
        rc = parse_server(ini, "server uas", &c->uas, err, errsize);
    if (!rc && (o = osn_ini_get(ini, "control.kind"))) {
        rc = osn_ini_choice(o, osn_ctl_kind_names, &v, err, errsize);
        if (!rc)
            c->ctl_kind = (enum osn_ctl_kind)v;
    }
    if (!rc && (o = osn_ini_get(ini, "control.detector"))) {
        rc = osn_ini_choice(o, dets, &v, err, errsize);
        ct->det.kind = (enum osn_ctl_det_kind)v;
    }
    if (!rc)
        rc = detector_thresholds(ini, c, err, errsize);
    if (!rc && (o = osn_ini_get(ini, "control.policy"))) {
        rc = osn_ini_choice(o, pol, &v, err, errsize);
        ct->det.policy = (enum osn_ctl_policy)v;
    }
    if (!rc && (o = osn_ini_get(ini, "control.reject_when_full"))) {
        rc = osn_ini_choice(o, yesno, &v, err, errsize);
        ct->none.reject_when_full = ct->prsm.reject_when_full = v % 2;
    }
    if (!rc && (o = osn_ini_get(ini, "control.prsm_responses"))) {
        rc = osn_ini_choice(o, yesno, &v, err, errsize);
        ct->prsm.responses = v % 2;
    }
    if (!rc && (o = osn_ini_get(ini, "control.pi_measure"))) {
        rc = osn_ini_choice(o, pims, &v, err, errsize);
        ct->pi.measure = (enum osn_ctl_pi_measure)v;
    }
    if (!rc && (o = osn_ini_get(ini, "sip.client_mode"))) {
        rc = osn_ini_choice(o, modes, &v, err, errsize);
        c->sipp = v == 1;
    }
    if (!rc && (o = osn_ini_get(ini, "sip.rfc6026"))) {
        rc = osn_ini_choice(o, yesno, &v, err, errsize);
        c->sip.rfc6026 = v % 2;
    }
    if (!rc)
        rc = reject_idle_keys(ini, c, err, errsize);
    if (c->topology == OSN_NET_FANIN)
        ct->rate.n_clients = (unsigned)c->edges;
    ct->prsm.t1 = c->sip.t1;
    return rc;
}

/* Bytes of one live call, an upper estimate: struct call (about 300 bytes), a client and a
 * server transaction of 192 bytes per hop for the INVITE and the BYE, and its messages. */
#define LIVE_CALL_BYTES 2048.0
/* Most calls a run may simulate (all replications). */
#define NET_CALLS_MAX 1e10

double osn_net_scenario_memory(const struct osn_net_cfg *c, double *calls)
{
    double peak = c->src.rate, total = c->warmup + c->time;

    if (c->src.process == OSN_NET_MMPP)
        peak = fmax(c->src.mmpp_rate[0], c->src.mmpp_rate[1]);
    if (c->src.process == OSN_NET_PROFILE) {
        for (int i = 0; i < c->src.nsteps; i++)
            peak = fmax(peak, c->src.step_rate[i]);
        if (c->src.burst_len > 0)
            peak *= fmax(1, c->src.burst_factor);
    }
    if (calls)
        *calls = peak * total * c->replications;
    /* A call lives until Timer B (64 T1) fails it, or through its hold time and the BYE; the
     * replications running at once each hold their own. */
    double live = peak * fmin(total, 64 * c->sip.t1 + c->src.hold + c->sip.t4 + 1);
    return live * LIVE_CALL_BYTES * fmin(c->threads, c->replications);
}

/*
 * The controller's own check, before the run: `control.l1 = 5, control.h1 = 1` once ended in
 * "simulation failed: invalid argument". The detector's thresholds are checked here one by one
 * so that the message names the key; anything else the controller refuses names control.kind.
 */
static int check_control(const struct osn_net_scenario *s, char *err, size_t errsize)
{
    static const char *const det_keys[] = {"control.l1",       "control.h1",     "control.l2",
                                           "control.h2",       "control.alpha",  "control.window",
                                           "control.detector", "control.policy", NULL};
    const struct osn_ctl_cfg *ct = &s->cfg.ctl;
    const struct osn_key_origin *o = NULL;
    struct osn_ctl *ctl = NULL;
    struct osn_ctl_det det;

    if (osn_ctl_new_kind(&ctl, s->cfg.ctl_kind, ct) == 0) {
        osn_ctl_free(ctl);
        return 0;
    }
    bool det_bad = osn_ctl_det_init(&det, &ct->det) != 0;
    for (int i = 0; det_bad && det_keys[i] && !o; i++)
        o = osn_ini_get(&s->ini, det_keys[i]);
    if (!o)
        o = osn_ini_get(&s->ini, "control.kind");
    const char *why = det_bad ? "the detector needs 0 <= l1 < h1 < h2 and l1 < l2 < h2 (alpha in "
                                "(0, 1], window > 0)"
                              : "the controller refuses its parameters (see osn sim --help)";
    if (o)
        return osn_ini_bad(o, err, errsize, "%s", why);
    snprintf(err, errsize, "%s: control: %s", s->ini.path[0] ? s->ini.path : "scenario", why);
    return OSN_ECONFIG;
}

/* Refuses a run that cannot fit in memory (source.rate = 1e12 once took 11 GB in 5 s and kept
 * growing), naming the key that sets the rate. */
static int check_memory(const struct osn_net_scenario *s, char *err, size_t errsize)
{
    static const char *const keys[] = {"source.rate",
                                       "source.mmpp_rates",
                                       "source.steps",
                                       "source.burst_factor",
                                       "source.hold",
                                       "net.time",
                                       NULL};
    const struct osn_key_origin *o = NULL;
    double phys = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
    double calls, bytes = osn_net_scenario_memory(&s->cfg, &calls);

    /* net.time = 1e300 once ran on with no end: past NET_CALLS_MAX calls (hours at the
     * simulator's 1e5-1e6 calls a second), refuse, naming the time. */
    if (!(calls <= NET_CALLS_MAX)) {
        const struct osn_key_origin *t = osn_ini_get(&s->ini, "net.time"),
                                    *r = osn_ini_get(&s->ini, "source.rate");
        /* The one the command line changed is the one to blame; else the time. */
        o = r && strncmp(r->where, "--set", 5) == 0 ? r : t ? t : r;
        if (o)
            return osn_ini_bad(o, err, errsize,
                               "about %.3g calls to simulate (%.3g s at up to %.3g calls/s, %d "
                               "replications), past the %.0e of a few hours",
                               calls, s->cfg.warmup + s->cfg.time,
                               calls / (s->cfg.warmup + s->cfg.time) / s->cfg.replications,
                               s->cfg.replications, NET_CALLS_MAX);
        snprintf(err, errsize, "about %.3g calls to simulate, past the %.0e of a few hours", calls,
                 NET_CALLS_MAX);
        return OSN_ECONFIG;
    }
    if (!(phys > 0) || bytes <= phys / 2)
        return 0;
    for (int i = 0; keys[i] && !o; i++)
        o = osn_ini_get(&s->ini, keys[i]);
    if (o)
        return osn_ini_bad(o, err, errsize,
                           "the calls in flight would need about %.3g GB, more than half of "
                           "this machine's %.3g GB",
                           bytes / 1e9, phys / 1e9);
    snprintf(err, errsize, "the calls in flight would need about %.3g GB", bytes / 1e9);
    return OSN_ECONFIG;
}

int osn_net_scenario_check(const struct osn_net_scenario *s, char *err, size_t errsize)
{
    const char *key = NULL;
    char why[256];
    const struct osn_key_origin *o;

    /* Where the key blamed was not given, its partner in the same rule may have been
     * (T2 < T1 with only sip.t1 set blames sip.t1). */
    static const char *const partner[][2] = {{"sip.t2", "sip.t1"}, {"sip.t1", "sip.t2"}};

    if (osn_net_check(&s->cfg, &key, why, sizeof why) == 0) {
        int rc = check_control(s, err, errsize);
        return rc ? rc : check_memory(s, err, errsize);
    }
    o = key ? osn_ini_get(&s->ini, key) : NULL;
    for (size_t i = 0; key && i < sizeof partner / sizeof partner[0]; i++) {
        const struct osn_key_origin *p = osn_ini_get(&s->ini, partner[i][1]);
        /* ... and a partner changed by --set is what broke a rule the file kept. */
        if (strcmp(key, partner[i][0]) == 0 && p &&
            (!o || (strncmp(p->where, "--set", 5) == 0 && strncmp(o->where, "--set", 5) != 0)))
            o = p;
    }
    if (o)
        return osn_ini_bad(o, err, errsize, "%s", why);
    if (err && errsize)
        snprintf(err, errsize, "%s%s%s: %s", s->ini.path[0] ? s->ini.path : "scenario",
                 key ? ": key " : "", key ? key : "", why);
    return OSN_ECONFIG;
}

int osn_net_scenario_load(struct osn_net_scenario *s, const char *path, const char *const *sets,
                          int nsets, char *err, size_t errsize)
{
    struct osn_net_scenario *tmp;
    int rc;

    if (!s)
        return OSN_EINVAL;
    tmp = calloc(1, sizeof *tmp);
    if (!tmp) {
        if (err && errsize)
            snprintf(err, errsize, "out of memory");
        return OSN_ENOMEM;
    }
    rc = osn_ini_collect(&tmp->ini, path, sets, nsets, &osn_net_schema, err, errsize);
    if (rc)
        goto out;
    osn_net_cfg_default(&tmp->cfg);
    rc = osn_net_scenario_parse(&tmp->ini, &tmp->cfg, err, errsize);
    if (!rc)
        rc = osn_net_scenario_check(tmp, err, errsize);
    if (!rc)
        *s = *tmp;
out:
    free(tmp);
    return rc;
}

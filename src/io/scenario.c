/*
 * Scenario loading: an INI file plus "--set section.key=value" overrides, turned into a
 * resolved, checked struct osn_model.
 *
 * Loading runs in two passes. The first pass collects assignments: inih parses the file through
 * a line-counting reader (the Debian inih handler gets no line number), every key is checked
 * against the table of known sections and keys, a key given twice in the file is an error, and
 * the overrides then replace file values. Each collected key remembers where it came from
 * ("FILE:LINE" or the "--set ..." flag text). The second pass parses the final values, checks
 * that each key belongs to the chosen model kind and number of flows, fills the model, and runs
 * osn_model_resolve() and osn_model_check(); a complaint from the model about a key is mapped
 * back to where that key (or the key it was derived from) was set, or to "(default)".
 *
 * Because values are parsed only in the second pass, an override replaces a bad file value
 * without the bad value ever being looked at.
 */
#include "osn/io.h"

#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "osn/err.h"

/* Defaults, also documented in `osn solve --help` (src/cli/cmd_solve.c). */
#define DEF_L      5
#define DEF_H      10
#define DEF_R      20
#define DEF_RATE   1.2
#define DEF_ACCEPT 0.5 /* overload_rate = rate/2 unless given */
#define DEF_RATE1  0.6
#define DEF_RATE2  0.6
#define DEF_MU     1.0

/* Longest line the reader passes on to inih; longer lines are an error, not a silent split. */
#define LINE_MAX_CHARS 4096

struct keydef {
    const char *section;
    const char *name;
};

/* Every key the scenario format knows; which of them apply depends on kind and flows. */
static const struct keydef keydefs[] = {
        {"model", "kind"},
        {"model", "policy"},
        {"thresholds", "L"},
        {"thresholds", "H"},
        {"thresholds", "R"},
        {"thresholds", "B"},
        {"thresholds", "L1"},
        {"thresholds", "H1"},
        {"thresholds", "L2"},
        {"thresholds", "H2"},
        {"arrivals", "flows"},
        {"arrivals", "rate"},
        {"arrivals", "overload_rate"},
        {"arrivals", "overload_accept"},
        {"arrivals", "rate1"},
        {"arrivals", "rate2"},
        {"service", "law"},
        {"service", "rate"},
};

#define NKEYDEFS (sizeof keydefs / sizeof keydefs[0])

static const char *const section_names[] = {"model", "thresholds", "arrivals", "service"};

/* State of one load: the scenario being filled, the file being read and the first error. */
struct loader {
    struct osn_scenario *sc;
    const char *path; /* scenario file, NULL when none */
    FILE *f;
    int lineno;     /* line most recently handed to inih */
    int err;        /* first error, 0 while none */
    int err_line;   /* its line in the file, 0 when not from the file */
    int read_errno; /* errno of a failed read, 0 if none */
    char *msg;      /* caller's error buffer */
    size_t msgsize;
    char line[LINE_MAX_CHARS + 2];
};

/* Records the first error only: later ones are usually consequences of it. */
static int fail(struct loader *ld, int err, int line, const char *fmt, ...)
{
    va_list ap;

    if (ld->err)
        return ld->err;
    ld->err = err;
    ld->err_line = line;
    if (ld->msg && ld->msgsize) {
        va_start(ap, fmt);
        vsnprintf(ld->msg, ld->msgsize, fmt, ap);
        va_end(ap);
    }
    return err;
}

/* The known section named `section` (any case, blanks around the name ignored), or NULL. */
static const char *canonical_section(const char *section)
{
    size_t n;

    while (isspace((unsigned char)*section))
        section++;
    n = strlen(section);
    while (n > 0 && isspace((unsigned char)section[n - 1]))
        n--;
    for (size_t i = 0; i < sizeof section_names / sizeof section_names[0]; i++)
        if (strlen(section_names[i]) == n && strncasecmp(section, section_names[i], n) == 0)
            return section_names[i];
    return NULL;
}

static const struct keydef *find_keydef(const char *section, const char *name)
{
    for (size_t i = 0; i < NKEYDEFS; i++)
        if (strcmp(keydefs[i].section, section) == 0 && strcasecmp(keydefs[i].name, name) == 0)
            return &keydefs[i];
    return NULL;
}

/* "rate, overload_rate, ..." for the keys of one section, for error messages. */
static void known_keys(const char *section, char *buf, size_t size)
{
    size_t used = 0;

    buf[0] = '\0';
    for (size_t i = 0; i < NKEYDEFS && used < size; i++) {
        if (strcmp(keydefs[i].section, section) != 0)
            continue;
        int n = snprintf(buf + used, size - used, "%s%s", used ? ", " : "", keydefs[i].name);
        if (n < 0)
            break;
        used += (size_t)n;
    }
}

static struct osn_key_origin *find_key(const struct osn_scenario *sc, const char *key)
{
    for (int i = 0; i < sc->nkeys; i++)
        if (strcmp(sc->keys[i].key, key) == 0)
            return (struct osn_key_origin *)&sc->keys[i];
    return NULL;
}

/*
 * Records one assignment after checking its section and key names. `where` is "FILE:LINE" or
 * the --set text; `line` is the file line (0 for an override). A key given twice in the file is
 * an error; an override replaces whatever was there.
 */
static int assign(struct loader *ld, const char *section, const char *name, const char *value,
                  const char *where, int line)
{
    struct osn_scenario *sc = ld->sc;
    const char *csec = canonical_section(section);
    const struct keydef *kd;
    struct osn_key_origin *o;
    char key[64], known[160];

    if (section[0] == '\0')
        return fail(ld, OSN_ECONFIG, line,
                    "%s: key '%s' is outside any section (put it under [model], [thresholds], "
                    "[arrivals] or [service])",
                    where, name);
    if (!csec)
        return fail(ld, OSN_ECONFIG, line,
                    "%s: unknown section [%s] (known: model, thresholds, arrivals, service)", where,
                    section);
    kd = find_keydef(csec, name);
    if (!kd) {
        known_keys(csec, known, sizeof known);
        return fail(ld, OSN_ECONFIG, line, "%s: unknown key '%s.%s' (known in [%s]: %s)", where,
                    csec, name, csec, known);
    }
    snprintf(key, sizeof key, "%s.%s", kd->section, kd->name);
    if (strlen(value) >= sizeof o->value)
        return fail(ld, OSN_ECONFIG, line, "%s: key '%s': value longer than %zu characters", where,
                    key, sizeof o->value - 1);

    o = find_key(sc, key);
    if (o && line > 0)
        return fail(ld, OSN_ECONFIG, line, "%s: key '%s' given twice (first at %s)", where, key,
                    o->where);
    if (!o) {
        if (sc->nkeys >= OSN_SCENARIO_MAX_KEYS) /* cannot happen: keys are unique */
            return fail(ld, OSN_ECONFIG, line, "%s: too many keys", where);
        o = &sc->keys[sc->nkeys++];
    }
    snprintf(o->key, sizeof o->key, "%s", key);
    snprintf(o->value, sizeof o->value, "%s", value);
    snprintf(o->where, sizeof o->where, "%s", where);
    return 0;
}

/* inih handler: one name=value pair of the file. Returns nonzero to go on. */
static int on_pair(void *user, const char *section, const char *name, const char *value)
{
    struct loader *ld = user;
    char where[sizeof ld->sc->keys[0].where];

    if (ld->err)
        return 0;
    snprintf(where, sizeof where, "%s:%d", ld->path, ld->lineno);
    return assign(ld, section, name, value, where, ld->lineno) == 0;
}

/*
 * inih reader: hands over one line at a time, so that ld->lineno is the line of the pair being
 * handled. It also strips leading whitespace (inih would otherwise take an indented line as the
 * continuation of the previous value), drops comment lines (so that their length does not
 * matter), rejects other over-long lines instead of letting inih split them, and checks section
 * headers, which inih does not report for a section without keys.
 */
static char *read_line(char *str, int num, void *stream)
{
    struct loader *ld = stream;
    char *p;
    size_t len;

    if (!fgets(ld->line, sizeof ld->line, ld->f)) {
        if (ferror(ld->f))
            ld->read_errno = errno ? errno : EIO;
        return NULL;
    }
    ld->lineno++;
    len = strlen(ld->line);
    if (len == sizeof ld->line - 1 && ld->line[len - 1] != '\n') {
        int c;
        while ((c = fgetc(ld->f)) != EOF && c != '\n')
            ;
        fail(ld, OSN_ECONFIG, ld->lineno, "%s:%d: line longer than %d characters", ld->path,
             ld->lineno, LINE_MAX_CHARS);
        ld->line[0] = '\0';
    }
    p = ld->line;
    if (ld->lineno == 1 && memcmp(p, "\xEF\xBB\xBF", 3) == 0)
        p += 3; /* UTF-8 byte-order mark */
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p == ';' || *p == '#')
        p[0] = '\0'; /* a comment: inih need not see it, however long it is */
    len = strlen(p);
    if ((int)len >= num) {
        fail(ld, OSN_ECONFIG, ld->lineno, "%s:%d: line longer than %d characters", ld->path,
             ld->lineno, num - 2);
        p[0] = '\0';
        len = 0;
    }
    if (p[0] == '[') {
        char name[128];
        const char *close = strchr(p, ']');
        size_t n = close ? (size_t)(close - p - 1) : 0;
        /* Without the ']' inih reports a malformed line; a too-long name is unknown anyway. */
        if (close) {
            if (n >= sizeof name)
                n = sizeof name - 1;
            memcpy(name, p + 1, n);
            name[n] = '\0';
            if (!canonical_section(name))
                fail(ld, OSN_ECONFIG, ld->lineno,
                     "%s:%d: unknown section [%s] (known: model, thresholds, arrivals, service)",
                     ld->path, ld->lineno, name);
        }
    }
    memcpy(str, p, len + 1);
    return str;
}

/* Parses the whole file into ld->sc->keys. */
static int load_file(struct loader *ld)
{
    int rc;

    ld->f = fopen(ld->path, "r");
    if (!ld->f)
        return fail(ld, OSN_EIO, 0, "%s: cannot open scenario: %s", ld->path, strerror(errno));
    errno = 0;
    rc = ini_parse_stream(read_line, ld, on_pair, ld);
    if (ld->read_errno)
        fail(ld, OSN_EIO, 0, "%s: cannot read scenario: %s", ld->path, strerror(ld->read_errno));
    else if (rc > 0 && (!ld->err || rc < ld->err_line)) {
        /* A line inih could not parse, before any error of ours: that one is the first. */
        ld->err = 0;
        fail(ld, OSN_ECONFIG, rc,
             "%s:%d: malformed line (expected '[section]', 'key = value' or a comment "
             "starting with ';' or '#')",
             ld->path, rc);
    } else if (rc < 0 && !ld->err)
        fail(ld, OSN_EIO, 0, "%s: cannot parse scenario (inih error %d)", ld->path, rc);
    fclose(ld->f);
    ld->f = NULL;
    return ld->err;
}

/* Splits one override "section.key=value" and records it. */
static int load_set(struct loader *ld, const char *set)
{
    char where[sizeof ld->sc->keys[0].where];
    char buf[512];
    char *eq, *dot, *section, *name, *value, *e;

    snprintf(where, sizeof where, "--set %s", set);
    if (strlen(set) >= sizeof buf)
        return fail(ld, OSN_ECONFIG, 0, "%s: override longer than %zu characters", where,
                    sizeof buf - 1);
    snprintf(buf, sizeof buf, "%s", set);
    eq = strchr(buf, '=');
    dot = strchr(buf, '.');
    if (!eq || !dot || dot > eq)
        return fail(ld, OSN_ECONFIG, 0, "%s: expected SECTION.KEY=VALUE (e.g. arrivals.rate=1.2)",
                    where);
    *eq = '\0';
    *dot = '\0';
    section = buf;
    name = dot + 1;
    value = eq + 1;
    /* Trim blanks around each part, as inih does in files. */
    while (isspace((unsigned char)*section))
        section++;
    for (e = section + strlen(section); e > section && isspace((unsigned char)e[-1]);)
        *--e = '\0';
    while (isspace((unsigned char)*name))
        name++;
    for (e = name + strlen(name); e > name && isspace((unsigned char)e[-1]);)
        *--e = '\0';
    while (isspace((unsigned char)*value))
        value++;
    for (e = value + strlen(value); e > value && isspace((unsigned char)e[-1]);)
        *--e = '\0';
    if (!section[0] || !name[0])
        return fail(ld, OSN_ECONFIG, 0, "%s: expected SECTION.KEY=VALUE (e.g. arrivals.rate=1.2)",
                    where);
    return assign(ld, section, name, value, where, 0);
}

/* Reports a bad value: "WHERE: key 'K' = 'V': why". */
static int bad_value(struct loader *ld, const struct osn_key_origin *o, const char *fmt, ...)
{
    char why[256];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    return fail(ld, OSN_ECONFIG, 0, "%s: key '%s' = '%s': %s", o->where, o->key, o->value, why);
}

/* A threshold: a whole number in 0..OSN_R_MAX, with nothing after it. */
static int parse_threshold(struct loader *ld, const struct osn_key_origin *o, long *out)
{
    const char *s = o->value;
    char *end;
    long v;

    if (!s[0])
        return bad_value(ld, o, "empty value (expected a whole number)");
    errno = 0;
    v = strtol(s, &end, 10);
    if (end == s || *end != '\0')
        return bad_value(ld, o, "not a whole number%s",
                         strchr(s, '#') ? " (inline comments start with ';')" : "");
    if (errno == ERANGE || v > OSN_R_MAX)
        return bad_value(ld, o, "larger than the largest supported threshold (%ld)", OSN_R_MAX);
    if (v < 0)
        return bad_value(ld, o, "must not be negative");
    *out = v;
    return 0;
}

/* A finite real number with nothing after it; `positive` demands > 0, else >= 0. */
static int parse_rate(struct loader *ld, const struct osn_key_origin *o, bool positive, double *out)
{
    const char *s = o->value;
    char *end;
    double v;

    if (!s[0])
        return bad_value(ld, o, "empty value (expected a number)");
    errno = 0;
    v = strtod(s, &end);
    if (end == s || *end != '\0')
        return bad_value(ld, o, "not a number%s",
                         strchr(s, '#') ? " (inline comments start with ';')" : "");
    if (!isfinite(v))
        return bad_value(ld, o, "must be a finite number");
    if (positive && !(v > 0))
        return bad_value(ld, o, "must be greater than 0");
    if (!positive && v < 0)
        return bad_value(ld, o, "must not be negative");
    *out = v;
    return 0;
}

static bool is_key(const struct osn_key_origin *o, const char *key)
{
    return strcmp(o->key, key) == 0;
}

/* Parses the keys that decide which other keys apply: kind, policy, flows, law. */
static int apply_shape(struct loader *ld, struct osn_model *m)
{
    const struct osn_key_origin *o;

    if ((o = find_key(ld->sc, "model.kind"))) {
        if (strcasecmp(o->value, "two-loop") == 0)
            m->kind = OSN_KIND_TWO_LOOP;
        else if (strcasecmp(o->value, "single-loop") == 0)
            m->kind = OSN_KIND_SINGLE_LOOP;
        else if (strcasecmp(o->value, "bi-level") == 0)
            m->kind = OSN_KIND_BI_LEVEL;
        else
            return bad_value(ld, o,
                             "unknown model kind (expected two-loop, single-loop or "
                             "bi-level)");
    }
    if ((o = find_key(ld->sc, "model.policy"))) {
        if (strcasecmp(o->value, "I") == 0 || strcmp(o->value, "1") == 0)
            m->policy = OSN_POLICY_I;
        else if (strcasecmp(o->value, "II") == 0 || strcmp(o->value, "2") == 0)
            m->policy = OSN_POLICY_II;
        else
            return bad_value(ld, o, "unknown switching policy (expected I or II)");
    }
    if ((o = find_key(ld->sc, "arrivals.flows"))) {
        if (strcmp(o->value, "1") == 0)
            m->flows = 1;
        else if (strcmp(o->value, "2") == 0)
            m->flows = 2;
        else
            return bad_value(ld, o, "expected 1 or 2");
    }
    if ((o = find_key(ld->sc, "service.law"))) {
        if (strcasecmp(o->value, "exp") != 0)
            return bad_value(ld, o,
                             "service law not supported yet (only 'exp', exponential service, "
                             "is implemented)");
    }
    return 0;
}

/* Returns NULL when key `o` applies to the model's kind and flows, else the reason. */
static const char *misplaced(const struct osn_model *m, const struct osn_key_origin *o)
{
    const char *k = o->key;

    if (strncmp(k, "thresholds.", 11) == 0) {
        const char *t = k + 11;
        bool bi = strcmp(t, "L1") == 0 || strcmp(t, "H1") == 0 || strcmp(t, "L2") == 0 ||
                  strcmp(t, "H2") == 0;
        switch (m->kind) {
        case OSN_KIND_TWO_LOOP:
            if (bi || strcmp(t, "B") == 0)
                return "does not apply to a two-loop model (its thresholds are L, H, R)";
            break;
        case OSN_KIND_SINGLE_LOOP:
            if (bi)
                return "does not apply to a single-loop model (its thresholds are L, H and B "
                       "or R)";
            break;
        case OSN_KIND_BI_LEVEL:
            if (strcmp(t, "L") == 0 || strcmp(t, "H") == 0 || strcmp(t, "B") == 0)
                return "does not apply to a bi-level model (its thresholds are L1, H1, L2, H2, "
                       "R)";
            break;
        }
    } else if (m->flows == 2) {
        if (is_key(o, "arrivals.rate") || is_key(o, "arrivals.overload_rate") ||
            is_key(o, "arrivals.overload_accept"))
            return "does not apply with flows = 2 (give rate1 and rate2; flow 2 is blocked in "
                   "overload)";
    } else if (is_key(o, "arrivals.rate1") || is_key(o, "arrivals.rate2")) {
        return "applies only with flows = 2 (one flow uses rate and overload_rate)";
    }
    return NULL;
}

/* The value of a model field named by a scenario key, for "(default)" messages. */
static void model_value(const struct osn_model *m, const char *key, char *buf, size_t size)
{
    const struct {
        const char *key;
        const long *ival;
        const double *dval;
    } fields[] = {
            {"thresholds.L", &m->L, NULL},
            {"thresholds.H", &m->H, NULL},
            {"thresholds.L1", &m->L1, NULL},
            {"thresholds.H1", &m->H1, NULL},
            {"thresholds.L2", &m->L2, NULL},
            {"thresholds.H2", &m->H2, NULL},
            {"thresholds.R", &m->R, NULL},
            {"thresholds.B", &m->R, NULL},
            {"arrivals.rate", NULL, &m->rate},
            {"arrivals.overload_rate", NULL, &m->overload_rate},
            {"arrivals.rate1", NULL, &m->rate1},
            {"arrivals.rate2", NULL, &m->rate2},
            {"service.rate", NULL, &m->mu},
    };

    snprintf(buf, size, "?");
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        if (strcmp(fields[i].key, key) != 0)
            continue;
        if (fields[i].ival)
            snprintf(buf, size, "%ld", *fields[i].ival);
        else
            snprintf(buf, size, "%g", *fields[i].dval);
    }
}

/*
 * Maps a key named by osn_model_check() to the key the user set. The derived thresholds of the
 * named kinds map to the keys they come from, overload_rate to overload_accept, and the one-flow
 * rates of a two-flow model to rate1. Returns NULL when none was set (a default); *shown is then
 * the user-facing name of the key.
 */
static const struct osn_key_origin *origin_of(const struct osn_scenario *sc, const char *bad,
                                              const char **shown)
{
    const char *cand[3] = {bad, NULL, NULL};
    const struct osn_key_origin *o;
    const struct osn_model *m = &sc->model;

    if (m->kind == OSN_KIND_TWO_LOOP) {
        if (strcmp(bad, "thresholds.L1") == 0)
            cand[0] = "thresholds.L";
        else if (strcmp(bad, "thresholds.H1") == 0 || strcmp(bad, "thresholds.L2") == 0)
            cand[0] = "thresholds.H";
        else if (strcmp(bad, "thresholds.H2") == 0)
            cand[0] = "thresholds.R";
    } else if (m->kind == OSN_KIND_SINGLE_LOOP) {
        if (strcmp(bad, "thresholds.L1") == 0)
            cand[0] = "thresholds.L";
        else if (strcmp(bad, "thresholds.H1") == 0)
            cand[0] = "thresholds.H";
        else if (strcmp(bad, "thresholds.L2") == 0 || strcmp(bad, "thresholds.H2") == 0 ||
                 strcmp(bad, "thresholds.R") == 0)
            cand[0] = "thresholds.R", cand[1] = "thresholds.B";
    }
    if (m->flows == 1 && strcmp(bad, "arrivals.overload_rate") == 0)
        cand[1] = "arrivals.overload_accept";
    if (m->flows == 2 &&
        (strcmp(bad, "arrivals.rate") == 0 || strcmp(bad, "arrivals.overload_rate") == 0))
        cand[0] = "arrivals.rate1", cand[1] = "arrivals.rate2";

    *shown = cand[0];
    for (int i = 0; i < 3 && cand[i]; i++)
        if ((o = find_key(sc, cand[i])))
            return o;
    return NULL;
}

/* Second pass: parses the collected values into the model, resolves and checks it. */

/*
 * True when `later` (an override) replaces `earlier`, a synonym set in the file: an override of
 * overload_accept drops the file's overload_rate, and of B the file's R. Two synonyms from the
 * same source stay an error.
 */
static bool replaces(const struct osn_key_origin *later, const struct osn_key_origin *earlier)
{
    return strncmp(later->where, "--set", 5) == 0 && strncmp(earlier->where, "--set", 5) != 0;
}

static int apply(struct loader *ld)
{
    struct osn_scenario *sc = ld->sc;
    struct osn_model *m = &sc->model;
    const struct osn_key_origin *o, *accept = NULL, *orate = NULL, *rkey = NULL;
    double rate = DEF_RATE, overload_rate = 0, accept_frac = DEF_ACCEPT;
    const char *reason, *bad = NULL, *shown;
    char why[256], val[64];
    int rc;

    memset(m, 0, sizeof *m);
    m->kind = OSN_KIND_TWO_LOOP;
    m->policy = OSN_POLICY_I;
    m->flows = 1;
    m->L = m->L1 = DEF_L;
    m->H = m->H1 = m->L2 = DEF_H;
    m->R = m->H2 = DEF_R;
    m->rate1 = DEF_RATE1;
    m->rate2 = DEF_RATE2;
    m->mu = DEF_MU;
    if ((rc = apply_shape(ld, m)))
        return rc;

    for (int i = 0; i < sc->nkeys; i++) {
        o = &sc->keys[i];
        if ((reason = misplaced(m, o)))
            return fail(ld, OSN_ECONFIG, 0, "%s: key '%s' %s", o->where, o->key, reason);
        if (strncmp(o->key, "thresholds.", 11) == 0) {
            const char *t = o->key + 11;
            long v = 0;
            if ((rc = parse_threshold(ld, o, &v)))
                return rc;
            if (strcmp(t, "R") == 0 || strcmp(t, "B") == 0) {
                if (rkey && !replaces(o, rkey))
                    return fail(ld, OSN_ECONFIG, 0,
                                "%s: key '%s': give thresholds.R or thresholds.B, not both "
                                "(other one at %s)",
                                o->where, o->key, rkey->where);
                rkey = o;
                m->R = v;
            } else if (strcmp(t, "L") == 0) {
                m->L = v;
            } else if (strcmp(t, "H") == 0) {
                m->H = v;
            } else if (strcmp(t, "L1") == 0) {
                m->L1 = v;
            } else if (strcmp(t, "H1") == 0) {
                m->H1 = v;
            } else if (strcmp(t, "L2") == 0) {
                m->L2 = v;
            } else if (strcmp(t, "H2") == 0) {
                m->H2 = v;
            }
        } else if (is_key(o, "arrivals.rate")) {
            if ((rc = parse_rate(ld, o, true, &rate)))
                return rc;
        } else if (is_key(o, "arrivals.overload_rate") || is_key(o, "arrivals.overload_accept")) {
            if ((orate || accept) && replaces(o, orate ? orate : accept))
                orate = accept = NULL;
            if (orate || accept)
                return fail(ld, OSN_ECONFIG, 0,
                            "%s: key '%s': give arrivals.overload_rate or "
                            "arrivals.overload_accept, not both (other one at %s)",
                            o->where, o->key, (orate ? orate : accept)->where);
            if (is_key(o, "arrivals.overload_rate")) {
                if ((rc = parse_rate(ld, o, false, &overload_rate)))
                    return rc;
                orate = o;
            } else {
                if ((rc = parse_rate(ld, o, true, &accept_frac)))
                    return rc;
                if (accept_frac > 1)
                    return bad_value(ld, o, "must be a fraction in (0, 1]");
                accept = o;
            }
        } else if (is_key(o, "arrivals.rate1")) {
            if ((rc = parse_rate(ld, o, false, &m->rate1)))
                return rc;
        } else if (is_key(o, "arrivals.rate2")) {
            if ((rc = parse_rate(ld, o, false, &m->rate2)))
                return rc;
        } else if (is_key(o, "service.rate")) {
            if ((rc = parse_rate(ld, o, true, &m->mu)))
                return rc;
        }
    }

    if (m->flows == 1) {
        m->rate = rate;
        m->overload_rate = orate ? overload_rate : accept_frac * rate;
        m->rate1 = m->rate2 = 0;
        if (orate && overload_rate > rate)
            return bad_value(ld, orate,
                             "exceeds arrivals.rate (%g): overload control only thins "
                             "traffic",
                             rate);
    } else {
        /* Two flows make the same (mode, n) chain as one flow thinned to flow 1. */
        m->rate = m->rate1 + m->rate2;
        m->overload_rate = m->rate1;
    }

    osn_model_resolve(m);
    why[0] = '\0';
    rc = osn_model_check(m, &bad, why, sizeof why);
    if (rc) {
        if (!why[0])
            snprintf(why, sizeof why, "%s", osn_strerror(rc));
        if (!bad)
            return fail(ld, rc, 0, "%s: %s", ld->path ? ld->path : "scenario", why);
        o = origin_of(sc, bad, &shown);
        if (o)
            return fail(ld, rc, 0, "%s: key '%s' = '%s': %s", o->where, o->key, o->value, why);
        model_value(m, shown, val, sizeof val);
        return fail(ld, rc, 0, "(default): key '%s' = '%s': %s", shown, val, why);
    }
    return 0;
}

int osn_scenario_load(struct osn_scenario *sc, const char *path, const char *const *sets, int nsets,
                      char *err, size_t errsize)
{
    /* Built aside and copied on success, so *sc is only written when the load succeeds. */
    static const struct osn_scenario zero;
    struct osn_scenario tmp = zero;
    struct loader ld;

    if (err && errsize)
        err[0] = '\0';
    if (!sc || nsets < 0 || (nsets > 0 && !sets)) {
        if (err && errsize)
            snprintf(err, errsize, "osn_scenario_load: invalid argument");
        return OSN_EINVAL;
    }
    memset(&ld, 0, sizeof ld);
    ld.sc = &tmp;
    ld.path = path;
    ld.msg = err;
    ld.msgsize = errsize;

    if (path) {
        if (strlen(path) >= sizeof tmp.path)
            fail(&ld, OSN_EIO, 0, "%s: scenario path longer than %zu characters", path,
                 sizeof tmp.path - 1);
        else
            snprintf(tmp.path, sizeof tmp.path, "%s", path);
        if (!ld.err)
            load_file(&ld);
    }
    for (int i = 0; i < nsets && !ld.err; i++) {
        if (!sets[i])
            fail(&ld, OSN_EINVAL, 0, "--set: missing value");
        else
            load_set(&ld, sets[i]);
    }
    if (!ld.err)
        apply(&ld);
    if (!ld.err)
        *sc = tmp;
    return ld.err;
}

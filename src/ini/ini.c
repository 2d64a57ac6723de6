/*
 * Scenario files, first layer: collecting "section.key = value" assignments from an INI file
 * and "--set section.key=value" overrides, each remembering where it came from.
 *
 * inih parses the file through a line-counting reader (the Debian inih handler gets no line
 * number). Every key is checked against the caller's schema, a key given twice in the file is an
 * error, and overrides then replace file values. The values are not interpreted here: each module
 * reads its own keys with osn_ini_get() and the parsers below, which report a bad value as
 * "WHERE: key 'K' = 'V': why".
 */
#include "osn/ini.h"

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

/* Longest line the reader passes on to inih; longer lines are an error, not a silent split. */
#define LINE_MAX_CHARS 4096

/* State of one collection: the result being filled, the file being read and the first error. */
struct loader {
    struct osn_ini *ini;
    const struct osn_ini_schema *schema;
    const char *path; /* scenario file, NULL when none */
    FILE *f;
    int lineno;     /* line most recently handed to inih */
    int err;        /* first error, 0 while none */
    int err_line;   /* its line in the file, 0 when not from the file */
    int read_errno; /* errno of a failed read, 0 if none */
    bool stop;      /* binary data or an endless line: read no further */
    char *msg;      /* caller's error buffer */
    size_t msgsize;
    char line[LINE_MAX_CHARS + 2];
};

/* Records the first error only: later ones are usually consequences of it. */
static int fail(struct loader *ld, int err, int line, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

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

/* The schema's spelling of section `section` (any case, blanks around it ignored), or NULL. A
 * member of a family section ([server core7] of "server coreN") is spelt into buf as the
 * family's prefix and the member's number, and *family gets the family's name ("server
 * coreN"); else *family is the spelling returned. */
static const char *canonical_section(const struct osn_ini_schema *schema, const char *section,
                                     char *buf, size_t size, const char **family)
{
    size_t n;
    char trimmed[64];

    while (isspace((unsigned char)*section))
        section++;
    n = strlen(section);
    while (n > 0 && isspace((unsigned char)section[n - 1]))
        n--;
    for (const struct osn_ini_schema *s = schema; s; s = s->next)
        for (size_t i = 0; i < s->n; i++)
            if (s->defs[i].family != OSN_INI_FAMILY_NAMED && strlen(s->defs[i].section) == n &&
                strncasecmp(section, s->defs[i].section, n) == 0)
                return *family = s->defs[i].section;
    snprintf(trimmed, sizeof trimmed, "%.*s", (int)n, section);
    for (const struct osn_ini_schema *s = schema; s; s = s->next)
        for (size_t i = 0; i < s->n; i++) {
            const struct osn_key_spec *k = &s->defs[i];
            int m = n < sizeof trimmed ? osn_ini_family_member(k, trimmed) : 0;
            const char *name = n < sizeof trimmed ? osn_ini_family_name(k, trimmed) : NULL;
            if (name) {
                /* [element pcscf1]: the family's prefix as the table spells it, the name as
                 * written (names are told apart by case, as the element names they are). */
                snprintf(buf, size, "%.*s%s", (int)strlen(k->section) - 1, k->section, name);
                *family = k->section;
                return buf;
            }
            if (m > 0) {
                snprintf(buf, size, "%.*s%d", (int)strlen(k->section) - 1, k->section, m);
                *family = k->section;
                return buf;
            }
        }
    return NULL;
}

static const struct osn_key_spec *find_keydef(const struct osn_ini_schema *schema,
                                              const char *section, const char *name)
{
    for (const struct osn_ini_schema *s = schema; s; s = s->next)
        for (size_t i = 0; i < s->n; i++)
            if (strcmp(s->defs[i].section, section) == 0 && strcasecmp(s->defs[i].name, name) == 0)
                return &s->defs[i];
    return NULL;
}

/* Appends ", word" to buf unless it is there already. */
static void append_word(char *buf, size_t size, const char *word)
{
    size_t used = strlen(buf), wl = strlen(word);
    for (const char *p = buf; (p = strstr(p, word)); p += wl)
        if ((p == buf || p[-1] == ' ') && (p[wl] == ',' || p[wl] == '\0'))
            return;
    snprintf(buf + used, size - used, "%s%s", used ? ", " : "", word);
}

/* "rate, overload_rate, ..." for the keys of one section, or the sections when NULL. */
static void known_names(const struct osn_ini_schema *schema, const char *section, char *buf,
                        size_t size)
{
    char fam[96];

    buf[0] = '\0';
    for (const struct osn_ini_schema *s = schema; s; s = s->next)
        for (size_t i = 0; i < s->n; i++) {
            if (!section && s->defs[i].family > 0) {
                snprintf(fam, sizeof fam, "%s (N = 2 .. %d)", s->defs[i].section,
                         s->defs[i].family);
                append_word(buf, size, fam);
            } else if (!section && s->defs[i].family == OSN_INI_FAMILY_NAMED) {
                snprintf(fam, sizeof fam, "%.*sNAME", (int)strlen(s->defs[i].section) - 1,
                         s->defs[i].section);
                append_word(buf, size, fam);
            } else if (!section)
                append_word(buf, size, s->defs[i].section);
            else if (strcmp(s->defs[i].section, section) == 0)
                append_word(buf, size, s->defs[i].name);
        }
}

/* FNV-1a of a key: the index's hash (keys are short; any spread will do). */
static unsigned key_hash(const char *key)
{
    unsigned h = 2166136261u;
    for (const unsigned char *p = (const unsigned char *)key; *p; p++)
        h = (h ^ *p) * 16777619u;
    return h;
}

/* The index slot of `key`: where it is, or the empty slot where it would go. */
static int *slot_of(const struct osn_ini *ini, const char *key)
{
    unsigned mask = (unsigned)ini->nindex - 1;
    for (unsigned i = key_hash(key) & mask;; i = (i + 1) & mask)
        if (!ini->index[i] || strcmp(ini->keys[ini->index[i] - 1].key, key) == 0)
            return &ini->index[i];
}

const struct osn_key_origin *osn_ini_get(const struct osn_ini *ini, const char *key)
{
    if (!ini->nindex)
        return NULL;
    int at = *slot_of(ini, key);
    return at ? &ini->keys[at - 1] : NULL;
}

void osn_ini_free(struct osn_ini *ini)
{
    if (!ini)
        return;
    free(ini->keys);
    free(ini->index);
    ini->keys = NULL;
    ini->index = NULL;
    ini->nkeys = ini->cap = ini->nindex = 0;
}

/*
 * Room for one more key: the records double (16 first, OSN_INI_MAX_KEYS at most) and the index is
 * rebuilt at twice their number, so it is never more than half full. Returns 0, OSN_ECONFIG at
 * the bound or OSN_ENOMEM; ini is unchanged on failure.
 */
static int make_room(struct osn_ini *ini)
{
    if (ini->nkeys < ini->cap)
        return 0;
    if (ini->cap >= OSN_INI_MAX_KEYS)
        return OSN_ECONFIG;
    int cap = ini->cap ? 2 * ini->cap : 16;
    if (cap > OSN_INI_MAX_KEYS)
        cap = OSN_INI_MAX_KEYS;
    struct osn_key_origin *keys = realloc(ini->keys, (size_t)cap * sizeof *keys);
    if (!keys)
        return OSN_ENOMEM;
    ini->keys = keys;
    int *index = calloc((size_t)cap * 2, sizeof *index);
    if (!index)
        return OSN_ENOMEM; /* the larger records are kept; cap is not raised */
    free(ini->index);
    ini->index = index;
    ini->nindex = cap * 2;
    ini->cap = cap;
    for (int i = 0; i < ini->nkeys; i++)
        *slot_of(ini, ini->keys[i].key) = i + 1;
    return 0;
}

/*
 * Records one assignment after checking its section and key names. `where` is "FILE:LINE" or
 * the --set text; `line` is the file line (0 for an override). A key given twice in the file is
 * an error; an override replaces whatever was there.
 */
static int assign(struct loader *ld, const char *section, const char *name, const char *value,
                  const char *where, int line)
{
    struct osn_ini *ini = ld->ini;
    char member[64];
    const char *fam = NULL;
    const char *csec = canonical_section(ld->schema, section, member, sizeof member, &fam);
    const struct osn_key_spec *kd;
    struct osn_key_origin *o;
    char key[64], known[512];

    if (section[0] == '\0') {
        known_names(ld->schema, NULL, known, sizeof known);
        return fail(ld, OSN_ECONFIG, line,
                    "%s: key '%s' is outside any section (known sections: %s)", where, name, known);
    }
    if (!csec) {
        known_names(ld->schema, NULL, known, sizeof known);
        return fail(ld, OSN_ECONFIG, line, "%s: unknown section [%s] (known: %s)", where, section,
                    known);
    }
    kd = find_keydef(ld->schema, fam, name);
    if (!kd) {
        known_names(ld->schema, fam, known, sizeof known);
        return fail(ld, OSN_ECONFIG, line, "%s: unknown key '%s.%s' (known in [%s]: %s)", where,
                    csec, name, csec, known);
    }
    snprintf(key, sizeof key, "%s.%s", csec, kd->name);
    if (strlen(value) >= sizeof o->value)
        return fail(ld, OSN_ECONFIG, line, "%s: key '%s': value longer than %zu characters", where,
                    key, sizeof o->value - 1);

    o = (struct osn_key_origin *)osn_ini_get(ini, key);
    if (o && line > 0)
        return fail(ld, OSN_ECONFIG, line, "%s: key '%s' given twice (first at %s)", where, key,
                    o->where);
    if (!o) {
        int rc = make_room(ini);
        if (rc == OSN_ECONFIG)
            return fail(ld, rc, line,
                        "%s: more than %d keys, a scenario's bound (what a file can make the "
                        "reader allocate)",
                        where, OSN_INI_MAX_KEYS);
        if (rc)
            return fail(ld, rc, line, "%s: out of memory for %d keys", where, 2 * ini->cap);
        o = &ini->keys[ini->nkeys];
        *slot_of(ini, key) = ++ini->nkeys;
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
    char where[sizeof ld->ini->keys[0].where];

    if (ld->err)
        return 0;
    snprintf(where, sizeof where, "%s:%d", ld->path, ld->lineno);
    return assign(ld, section, name, value, where, ld->lineno) == 0;
}

/* Whether a line (leading blanks skipped) is a comment. */
static bool is_comment(const char *s)
{
    s += strspn(s, " \t");
    return *s == ';' || *s == '#';
}

int osn_ini_getline(FILE *f, char *buf, size_t size, size_t *len)
{
    size_t n = 0;
    int c = EOF;

    while (n < size - 1 && (c = getc(f)) != EOF) {
        if (c == '\0') {
            buf[n] = '\0';
            *len = n;
            return OSN_INI_LINE_NUL;
        }
        buf[n++] = (char)c;
        if (c == '\n')
            break;
    }
    buf[n] = '\0';
    *len = n;
    if (c == EOF && n == 0)
        return OSN_INI_LINE_EOF;
    return n == size - 1 && c != '\n' ? OSN_INI_LINE_LONG : OSN_INI_LINE_OK;
}

/* Reads the next line into ld->line (with its newline) and counts it. */
static int get_line(struct loader *ld, size_t *len)
{
    int st = osn_ini_getline(ld->f, ld->line, sizeof ld->line, len);
    if (st == OSN_INI_LINE_EOF && ferror(ld->f))
        ld->read_errno = errno ? errno : EIO;
    if (st != OSN_INI_LINE_EOF)
        ld->lineno++;
    return st;
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

    if (ld->stop)
        return NULL;
    switch (get_line(ld, &len)) {
    case OSN_INI_LINE_EOF:
        return NULL;
    case OSN_INI_LINE_NUL:
        /* /dev/zero once kept this loop busy forever, and "rate = 1.3\0junk" read as 1.3. */
        ld->stop = true;
        fail(ld, OSN_ECONFIG, ld->lineno,
             "%s:%d: a NUL byte (binary data: not an INI file; is this the scenario?)", ld->path,
             ld->lineno);
        return NULL;
    case OSN_INI_LINE_LONG:
        /* The rest of the file is not read: an endless line (/dev/urandom) would never end. */
        ld->stop = true;
        fail(ld, OSN_ECONFIG, ld->lineno, "%s:%d: %s longer than %d characters", ld->path,
             ld->lineno, is_comment(ld->line) ? "comment line" : "line",
             is_comment(ld->line) ? LINE_MAX_CHARS : num - 2);
        return NULL;
    default:
        break;
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
        char name[128], known[512], member[64];
        const char *fam, *close = strchr(p, ']');
        size_t n = close ? (size_t)(close - p - 1) : 0;
        /* Without the ']' inih reports a malformed line; a too-long name is unknown anyway. */
        if (close) {
            if (n >= sizeof name)
                n = sizeof name - 1;
            memcpy(name, p + 1, n);
            name[n] = '\0';
            if (!canonical_section(ld->schema, name, member, sizeof member, &fam)) {
                known_names(ld->schema, NULL, known, sizeof known);
                fail(ld, OSN_ECONFIG, ld->lineno, "%s:%d: unknown section [%s] (known: %s)",
                     ld->path, ld->lineno, name, known);
            }
        }
    }
    memcpy(str, p, len + 1);
    return str;
}

/* Parses the whole file into ld->ini. */
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

/* Removes blanks at both ends of s in place; returns the new start. */
static char *trim(char *s)
{
    char *e;
    while (isspace((unsigned char)*s))
        s++;
    for (e = s + strlen(s); e > s && isspace((unsigned char)e[-1]);)
        *--e = '\0';
    return s;
}

/* Splits one override "section.key=value" and records it. */
static int load_set(struct loader *ld, const char *set)
{
    char where[sizeof ld->ini->keys[0].where];
    char buf[512];
    char *eq, *dot, *section, *name, *value;

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
    section = trim(buf);
    name = trim(dot + 1);
    value = trim(eq + 1);
    if (!section[0] || !name[0])
        return fail(ld, OSN_ECONFIG, 0, "%s: expected SECTION.KEY=VALUE (e.g. arrivals.rate=1.2)",
                    where);
    return assign(ld, section, name, value, where, 0);
}

int osn_ini_collect(struct osn_ini *ini, const char *path, const char *const *sets, int nsets,
                    const struct osn_ini_schema *schema, char *err, size_t errsize)
{
    /* Built aside and copied on success, so *ini is only written when the load succeeds. */
    struct osn_ini *tmp;
    struct loader ld;

    if (err && errsize)
        err[0] = '\0';
    if (!ini || !schema || nsets < 0 || (nsets > 0 && !sets)) {
        if (err && errsize)
            snprintf(err, errsize, "osn_ini_collect: invalid argument");
        return OSN_EINVAL;
    }
    tmp = calloc(1, sizeof *tmp);
    if (!tmp) {
        if (err && errsize)
            snprintf(err, errsize, "out of memory");
        return OSN_ENOMEM;
    }
    memset(&ld, 0, sizeof ld);
    ld.ini = tmp;
    ld.schema = schema;
    ld.path = path;
    ld.msg = err;
    ld.msgsize = errsize;

    if (path) {
        if (strlen(path) >= sizeof tmp->path)
            fail(&ld, OSN_EIO, 0, "%s: scenario path longer than %zu characters", path,
                 sizeof tmp->path - 1);
        else
            snprintf(tmp->path, sizeof tmp->path, "%s", path);
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
        *ini = *tmp; /* the records move to *ini */
    else
        osn_ini_free(tmp);
    free(tmp);
    return ld.err;
}

/* ---- value parsers ---- */

int osn_ini_bad(const struct osn_key_origin *o, char *err, size_t errsize, const char *fmt, ...)
{
    char why[256];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    if (err && errsize)
        snprintf(err, errsize, "%s: key '%s' = '%s': %s", o->where, o->key, o->value, why);
    return OSN_ECONFIG;
}

static const char *comment_hint(const char *s)
{
    return strchr(s, '#') ? " (inline comments start with ';')" : "";
}

int osn_ini_long(const struct osn_key_origin *o, long lo, long hi, long *out, char *err,
                 size_t errsize)
{
    const char *s = o->value;
    char *end;
    long v;

    if (!s[0])
        return osn_ini_bad(o, err, errsize, "empty value (expected a whole number)");
    errno = 0;
    v = strtol(s, &end, 10);
    if (end == s || *end != '\0')
        return osn_ini_bad(o, err, errsize, "not a whole number%s", comment_hint(s));
    if (errno == ERANGE || v > hi)
        return osn_ini_bad(o, err, errsize, "larger than the largest allowed value (%ld)", hi);
    if (v < lo)
        return osn_ini_bad(o, err, errsize,
                           lo == 0 ? "must not be negative" : "must be at least %ld", lo);
    *out = v;
    return 0;
}

int osn_ini_double(const struct osn_key_origin *o, double lo, bool min_excl, double *out, char *err,
                   size_t errsize)
{
    const char *s = o->value;
    char *end;
    double v;

    if (!s[0])
        return osn_ini_bad(o, err, errsize, "empty value (expected a number)");
    errno = 0;
    v = strtod(s, &end);
    if (end == s || *end != '\0')
        return osn_ini_bad(o, err, errsize, "not a number%s", comment_hint(s));
    if (!isfinite(v))
        return osn_ini_bad(o, err, errsize, "must be a finite number");
    if (min_excl && !(v > lo))
        return osn_ini_bad(o, err, errsize, "must be greater than %g", lo);
    if (!min_excl && v < lo)
        return osn_ini_bad(o, err, errsize,
                           lo == 0 ? "must not be negative" : "must be at least %g", lo);
    *out = v;
    return 0;
}

int osn_ini_doubles(const struct osn_key_origin *o, double *out, int max, int *n, char *err,
                    size_t errsize)
{
    const char *s = o->value;
    int count = 0;

    while (*s) {
        /* Entries are separated by blanks or by one comma: "0.1,,0.2" is not 0.1, 0.2 (an
         * entry left out is an error, not skipped), and nor is a leading or trailing comma. */
        int commas = 0;
        while (*s == ',' || isspace((unsigned char)*s))
            commas += *s++ == ',';
        if (commas > 1 || (commas == 1 && (count == 0 || !*s)))
            return osn_ini_bad(o, err, errsize,
                               "an empty entry in the list (two commas, or a "
                               "comma at an end)");
        if (!*s)
            break;
        char *end;
        errno = 0;
        double v = strtod(s, &end);
        if (end == s || (*end && *end != ',' && !isspace((unsigned char)*end)))
            return osn_ini_bad(o, err, errsize, "not a list of numbers%s", comment_hint(s));
        if (!isfinite(v) || v < 0)
            return osn_ini_bad(o, err, errsize, "list entries must be finite and >= 0");
        if (count >= max)
            return osn_ini_bad(o, err, errsize, "more than %d values", max);
        out[count++] = v;
        s = end;
    }
    if (count == 0)
        return osn_ini_bad(o, err, errsize, "empty list (expected numbers separated by commas)");
    *n = count;
    return 0;
}

int osn_ini_choice(const struct osn_key_origin *o, const char *const *names, int *out, char *err,
                   size_t errsize)
{
    char known[256] = "";
    for (int i = 0; names[i]; i++) {
        if (strcasecmp(o->value, names[i]) == 0) {
            *out = i;
            return 0;
        }
        append_word(known, sizeof known, names[i]);
    }
    return osn_ini_bad(o, err, errsize, "expected one of: %s", known);
}

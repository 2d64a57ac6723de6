/*
 * Key tables (struct osn_key_spec in osn/ini.h): one loader that checks and stores every key a
 * module's table describes, and the printers of the same tables for --help, docs/scenario.md
 * and the resolved-scenario echo. A module keeps only its cross-key rules as code.
 */
#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "osn/err.h"
#include "osn/ini.h"

/* Most numbers a list key holds (source.steps: 32 pairs). */
#define LIST_MAX 64

static const char *const yesno[] = {"no", "yes", "false", "true", "0", "1", NULL};

static void *at(void *cfg, const struct osn_key_spec *k)
{
    return (char *)cfg + k->off;
}

static const void *cat(const void *cfg, const struct osn_key_spec *k)
{
    return (const char *)cfg + k->off;
}

/* Stores the whole number v in k's home. */
static void store_int(void *cfg, const struct osn_key_spec *k, long v)
{
    void *p = at(cfg, k);
    switch (k->store) {
    case OSN_KS_INT:
        *(int *)p = (int)v;
        break;
    case OSN_KS_UINT:
        *(unsigned *)p = (unsigned)v;
        break;
    case OSN_KS_LONG:
        *(long *)p = v;
        break;
    case OSN_KS_ULONG:
        *(unsigned long *)p = (unsigned long)v;
        break;
    case OSN_KS_BOOL:
        *(bool *)p = v != 0;
        break;
    case OSN_KS_DOUBLE:
        *(double *)p = (double)v;
        break;
    default:
        break;
    }
}

static double load_num(const void *cfg, const struct osn_key_spec *k)
{
    const void *p = cat(cfg, k);
    switch (k->store) {
    case OSN_KS_DOUBLE:
        return *(const double *)p;
    case OSN_KS_INT:
        return *(const int *)p;
    case OSN_KS_UINT:
        return *(const unsigned *)p;
    case OSN_KS_LONG:
        return (double)*(const long *)p;
    case OSN_KS_ULONG:
        return (double)*(const unsigned long *)p;
    case OSN_KS_BOOL:
        return *(const bool *)p;
    default:
        return NAN;
    }
}

/* Whether text is one of the words an unbounded double (k->inf) takes. */
static bool unbounded(const char *text)
{
    return strcasecmp(text, "inf") == 0 || strcasecmp(text, "infinite") == 0 ||
           strcasecmp(text, "none") == 0;
}

static int load_one(const struct osn_key_spec *k, const struct osn_key_origin *o, void *cfg,
                    char *err, size_t errsize)
{
    double d, list[LIST_MAX];
    long l;
    int rc = 0, v, n = 0;

    switch (k->type) {
    case OSN_KEY_DOUBLE:
        if (k->inf && unbounded(o->value))
            d = INFINITY, rc = 0;
        else
            rc = osn_ini_double(o, k->lo, k->lo_excl, &d, err, errsize);
        if (!rc && k->store == OSN_KS_DOUBLE)
            *(double *)at(cfg, k) = d;
        else if (!rc)
            store_int(cfg, k, (long)d); /* a whole-number home takes the number's whole part */
        break;
    case OSN_KEY_LONG:
        /* hi >= 2^63 (a seed's) is LONG_MAX: the conversion would overflow. */
        rc = osn_ini_long(o, (long)k->lo, k->hi < 0x1p63 ? (long)k->hi : LONG_MAX, &l, err,
                          errsize);
        if (!rc)
            store_int(cfg, k, l);
        break;
    case OSN_KEY_CHOICE:
    case OSN_KEY_BOOL:
        rc = osn_ini_choice(o, k->type == OSN_KEY_BOOL ? yesno : k->choices, &v, err, errsize);
        if (!rc)
            store_int(cfg, k, k->type == OSN_KEY_BOOL ? v % 2 : v);
        break;
    case OSN_KEY_STRING:
        if (k->store == OSN_KS_NONE) /* its module reads it (a file name, relative to...) */
            break;
        if (strlen(o->value) >= k->size)
            return osn_ini_bad(o, err, errsize, "longer than %zu characters", k->size - 1);
        snprintf(at(cfg, k), k->size, "%s", o->value);
        break;
    case OSN_KEY_LIST:
        rc = osn_ini_doubles(o, list, k->hi > 0 && k->hi < LIST_MAX ? (int)k->hi : LIST_MAX, &n,
                             err, errsize);
        if (!rc && k->store == OSN_KS_DOUBLES) {
            int want = (int)(k->size / sizeof(double));
            if (n != want)
                return osn_ini_bad(o, err, errsize, "expected %d numbers", want);
            memcpy(at(cfg, k), list, k->size);
        }
        break;
    case OSN_KEY_NONE:
        return 0;
    }
    if (!rc && k->hook)
        rc = k->hook(cfg, o, list, n, err, errsize);
    return rc;
}

/* The member number of the n characters at sec in family k, 0 when they name none. */
static int family_number(const struct osn_key_spec *k, const char *sec, size_t n)
{
    size_t p = strlen(k->section) - 1; /* the prefix, before the "N" */
    long v = 0;

    if (k->family <= 0 || n <= p || strncasecmp(sec, k->section, p) != 0 || sec[p] == '0')
        return 0;
    for (size_t i = p; i < n; i++) {
        if (sec[i] < '0' || sec[i] > '9' || i - p > 6)
            return 0;
        v = 10 * v + (sec[i] - '0');
    }
    return v >= 2 && v <= k->family ? (int)v : 0;
}

int osn_ini_family_member(const struct osn_key_spec *k, const char *section)
{
    return family_number(k, section, strlen(section));
}

/* Whether the n characters at sec are a member of the named family k: its prefix (the section
 * less its "*"), then a name of letters, digits, '_', '-' and '.'. */
static bool family_named(const struct osn_key_spec *k, const char *sec, size_t n)
{
    size_t p = strlen(k->section) - 1;

    if (k->family != OSN_INI_FAMILY_NAMED || n <= p || n - p > OSN_INI_NAME_MAX ||
        strncasecmp(sec, k->section, p) != 0)
        return false;
    for (size_t i = p; i < n; i++)
        if (!isalnum((unsigned char)sec[i]) && !strchr("_-.", sec[i]))
            return false;
    return true;
}

const char *osn_ini_family_name(const struct osn_key_spec *k, const char *section)
{
    return family_named(k, section, strlen(section)) ? section + strlen(k->section) - 1 : NULL;
}

const struct osn_key_spec *osn_ini_key_find(const struct osn_ini_schema *schema, const char *key)
{
    const char *dot = strrchr(key, '.');

    if (!dot)
        return NULL;
    for (const struct osn_ini_schema *s = schema; s; s = s->next)
        for (size_t i = 0; i < s->n; i++) {
            const struct osn_key_spec *k = &s->defs[i];
            size_t n = strlen(k->section), len = (size_t)(dot - key);
            bool sec = k->family > 0 ? family_number(k, key, len) > 0
                       : k->family   ? family_named(k, key, len)
                                     : len == n && strncmp(key, k->section, n) == 0;
            if (sec && strcmp(dot + 1, k->name) == 0)
                return k;
        }
    return NULL;
}

int osn_ini_key_index(const struct osn_key_spec *k, const void *cfg)
{
    return (int)load_num(cfg, k);
}

/* Whether name is one of the names "a|b|c" in list (any case). */
static bool among(const char *name, const char *list)
{
    size_t n = strlen(name);

    for (const char *p = list; p; p = strchr(p, '|'), p = p ? p + 1 : NULL)
        if (strncasecmp(p, name, n) == 0 && (p[n] == '|' || p[n] == '\0'))
            return true;
    return false;
}

/* Whether key k acts in cfg: no when_key, or when_key's choice is (one of) when_is. Else *now
 * gets the name of when_key's value. */
static bool acts(const struct osn_ini_schema *schema, const struct osn_key_spec *k, const void *cfg,
                 const char **now)
{
    const struct osn_key_spec *w;

    if (!k->when_key)
        return true;
    w = osn_ini_key_find(schema, k->when_key);
    if (!w || !w->choices)
        return true;
    *now = w->choices[osn_ini_key_index(w, cfg)];
    return among(*now, k->when_is);
}

bool osn_ini_key_acts(const struct osn_ini_schema *schema, const struct osn_key_spec *k,
                      const void *cfg)
{
    const char *now;

    return acts(schema, k, cfg, &now);
}

int osn_ini_load(const struct osn_ini *ini, const struct osn_ini_schema *schema, void *cfg,
                 char *err, size_t errsize)
{
    char key[96];
    const char *now = "";
    int rc = 0;

    for (size_t i = 0; i < schema->n && !rc; i++) {
        const struct osn_key_spec *k = &schema->defs[i];
        const struct osn_key_origin *o;
        snprintf(key, sizeof key, "%s.%s", k->section, k->name);
        if ((o = osn_ini_get(ini, key)))
            rc = load_one(k, o, cfg, err, errsize);
    }
    /* A key that cannot act is an error (issue 14): source.burst_* without process = profile
     * once ran without the burst, silently. */
    for (size_t i = 0; i < schema->n && !rc; i++) {
        const struct osn_key_spec *k = &schema->defs[i];
        const struct osn_key_origin *o;
        snprintf(key, sizeof key, "%s.%s", k->section, k->name);
        if ((o = osn_ini_get(ini, key)) && !acts(schema, k, cfg, &now))
            rc = osn_ini_bad(o, err, errsize, "acts only with %s = %s (it is %s here)", k->when_key,
                             k->when_is, now);
    }
    return rc;
}

int osn_ini_key_numbers(const struct osn_key_spec *k, const void *cfg, double *v, int max)
{
    if (k->get)
        return k->get(cfg, v, max);
    if (k->store == OSN_KS_DOUBLES) {
        int n = (int)(k->size / sizeof(double));
        n = n < max ? n : max;
        memcpy(v, cat(cfg, k), (size_t)n * sizeof(double));
        return n;
    }
    if (max < 1 || k->store == OSN_KS_NONE || k->store == OSN_KS_CHARS)
        return 0;
    v[0] = load_num(cfg, k);
    return 1;
}

void osn_ini_key_text(const struct osn_key_spec *k, const void *cfg, char *buf, size_t size)
{
    double v[LIST_MAX];
    size_t len = 0;
    int n;

    buf[0] = '\0';
    if (k->def) {
        snprintf(buf, size, "%s", k->def);
        return;
    }
    switch (k->type) {
    case OSN_KEY_CHOICE:
        snprintf(buf, size, "%s", k->choices[osn_ini_key_index(k, cfg)]);
        break;
    case OSN_KEY_BOOL:
        snprintf(buf, size, "%s", osn_ini_key_index(k, cfg) ? "yes" : "no");
        break;
    case OSN_KEY_STRING:
        snprintf(buf, size, "%s", (const char *)cat(cfg, k));
        break;
    case OSN_KEY_LONG:
        snprintf(buf, size, "%.0f", load_num(cfg, k));
        break;
    case OSN_KEY_DOUBLE:
    case OSN_KEY_LIST:
        n = osn_ini_key_numbers(k, cfg, v, LIST_MAX);
        for (int i = 0; i < n && len < size; i++) {
            const char *sep = i == 0 ? "" : k->pairs && i % 2 == 0 ? ", " : " ";
            len += (size_t)snprintf(buf + len, size - len, "%s%g", sep, v[i]);
        }
        break;
    case OSN_KEY_NONE:
        break;
    }
}

/* "number", "a|b|c", ... : what a key takes, for the help. */
static void type_text(const struct osn_key_spec *k, char *buf, size_t size)
{
    size_t len = 0;

    switch (k->type) {
    case OSN_KEY_CHOICE:
        buf[0] = '\0';
        for (int i = 0; k->choices[i] && len < size; i++)
            len += (size_t)snprintf(buf + len, size - len, "%s%s", i ? "|" : "", k->choices[i]);
        break;
    case OSN_KEY_BOOL:
        snprintf(buf, size, "yes|no");
        break;
    case OSN_KEY_STRING:
        snprintf(buf, size, "text");
        break;
    case OSN_KEY_LONG:
        snprintf(buf, size, "%.0f..%ld", k->lo, k->hi < 0x1p63 ? (long)k->hi : LONG_MAX);
        break;
    case OSN_KEY_DOUBLE:
        snprintf(buf, size, "%s %g%s", k->lo_excl ? ">" : ">=", k->lo, k->inf ? " or inf" : "");
        break;
    case OSN_KEY_LIST:
        snprintf(buf, size, "%s", k->pairs ? "pairs" : "list");
        break;
    case OSN_KEY_NONE:
        buf[0] = '\0';
        break;
    }
}

/* Writes text s as lines of at most width columns, each indented by indent blanks. */
static void wrap(FILE *f, const char *s, int indent, int width)
{
    while (*s) {
        int room = width - indent, n = (int)strlen(s);
        if (n > room) {
            n = room;
            while (n > 0 && s[n] != ' ')
                n--;
            if (n == 0)
                n = room;
        }
        fprintf(f, "%*s%.*s\n", indent, "", n, s);
        s += n;
        while (*s == ' ')
            s++;
    }
}

/* Writes s with the characters markdown tables give meaning to escaped. */
static void md(FILE *f, const char *s)
{
    bool code = false; /* inside `...`, only | needs it */

    for (; *s; s++) {
        code ^= *s == '`';
        if (*s == '|' || (!code && (*s == '*' || *s == '_' || *s == '<' || *s == '>')))
            fputc('\\', f);
        fputc(*s, f);
    }
}

void osn_ini_keys_print(FILE *f, const struct osn_ini_schema *schema, const void *cfg_default,
                        bool markdown)
{
    const char *sec = NULL;
    char def[256], type[128];

    for (size_t i = 0; i < schema->n; i++) {
        const struct osn_key_spec *k = &schema->defs[i];
        if (k->type == OSN_KEY_NONE)
            continue;
        osn_ini_key_text(k, cfg_default, def, sizeof def);
        type_text(k, type, sizeof type);
        if (!sec || strcmp(sec, k->section) != 0) {
            sec = k->section;
            /* A named family is written as the user writes it: [element NAME]. */
            int len = (int)strlen(sec) - (k->family == OSN_INI_FAMILY_NAMED);
            const char *name = k->family == OSN_INI_FAMILY_NAMED ? "NAME" : "";
            if (markdown)
                fprintf(f,
                        "\n### [%.*s%s]\n\n| key | takes | default | unit | meaning |\n"
                        "|---|---|---|---|---|\n",
                        len, sec, name);
            else
                fprintf(f, "  [%.*s%s]\n", len, sec, name);
        }
        if (markdown) {
            fprintf(f, "| `%s` | ", k->name);
            md(f, type);
            fputs(" | ", f);
            md(f, def[0] ? def : "(none)");
            fputs(" | ", f);
            md(f, k->unit ? k->unit : "");
            fputs(" | ", f);
            md(f, k->help ? k->help : "");
            if (k->when_key) {
                /* through md(): a when_is of several names ("a|b") would end the cell */
                char when[192];
                snprintf(when, sizeof when, " (only with `%s = %s`)", k->when_key, k->when_is);
                md(f, when);
            }
            fputs(" |\n", f);
            continue;
        }
        fprintf(f, "    %-17s %-22s [%s]%s%s\n", k->name, type, def[0] ? def : "none",
                k->unit ? " " : "", k->unit ? k->unit : "");
        char help[512];
        snprintf(help, sizeof help, "%s%s%s%s%s", k->help ? k->help : "",
                 k->when_key ? " (only with " : "", k->when_key ? k->when_key : "",
                 k->when_key ? " = " : "", k->when_key ? k->when_is : "");
        if (k->when_key)
            strncat(help, ")", sizeof help - strlen(help) - 1);
        wrap(f, help, 6, 78);
    }
}

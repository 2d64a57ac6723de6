/*
 * The scenario core: INI files read with file:line, key schemas and their collection, --set
 * overrides and the value parsers every module's scenario adapter uses (src/ini/ini.c).
 *
 * A scenario is an INI file with command-line overrides "--set section.key=value". This layer
 * knows no module: each module's adapter (src/io/) brings its schema and interprets its own keys;
 * every error names where the bad value came from, the file and line or the --set flag. It
 * depends on base only (and inih), so anything that reads scenarios links without the
 * simulator, the solver or the fluid model.
 */
#ifndef OSN_INI_H
#define OSN_INI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Where one key's value came from, for error messages and for the scenario echo. */
struct osn_key_origin {
    char key[64];    /* "section.key" */
    char value[256]; /* as written */
    char where[320]; /* "FILE:LINE" or "--set section.key=value" */
};

/*
 * Keys a scenario holds at most: 2^17 = 131,072. The records grow at run time (doubling), so a
 * small file costs little; this bound is what a hostile file can make the reader allocate
 * (131,072 records of 640 bytes, 80 MiB, plus a 1 MiB index; 40 MiB more while the last
 * doubling copies), and a file that needs more is
 * refused naming FILE:LINE. It is eight keys for each of the 16,384 edges the network simulator
 * carries (net.edges' bound): a fan-in written out by hand takes five.
 */
#define OSN_INI_MAX_KEYS 131072

/* The value types of a key (OSN_KEY_NONE: a key its module still reads by hand). */
enum osn_key_type {
    OSN_KEY_NONE,
    OSN_KEY_DOUBLE, /* a finite number >= lo (> lo with lo_excl); with inf, also unbounded */
    OSN_KEY_LONG,   /* a whole number in [lo, hi] */
    OSN_KEY_CHOICE, /* one of `choices` (any case); stored as its index */
    OSN_KEY_BOOL,   /* yes|no|true|false|1|0 */
    OSN_KEY_STRING, /* text shorter than the char array it is stored in */
    OSN_KEY_LIST,   /* numbers >= 0 separated by commas or blanks, at most hi of them */
};

/* How a key's value is held in its configuration struct; OSN_KEY_AT infers it. */
enum osn_key_store {
    OSN_KS_NONE, /* the key's hook stores it */
    OSN_KS_DOUBLE,
    OSN_KS_INT,
    OSN_KS_UINT, /* unsigned, and enums */
    OSN_KS_LONG,
    OSN_KS_ULONG, /* uint64_t, size_t */
    OSN_KS_BOOL,
    OSN_KS_CHARS,   /* char[size] */
    OSN_KS_DOUBLES, /* double[size / sizeof(double)]: a list of exactly that many */
};

/* Where member `m` of struct `T` lives and how it is held: `.off`, `.size`, `.store`. */
#define OSN_KEY_AT(T, m) \
    .off = offsetof(T, m), .size = sizeof(((T *)0)->m),                                     \
    .store = _Generic(((T *)0)->m, double: OSN_KS_DOUBLE, int: OSN_KS_INT,                  \
                      unsigned: OSN_KS_UINT, long: OSN_KS_LONG, unsigned long: OSN_KS_ULONG, \
                      bool: OSN_KS_BOOL, char *: OSN_KS_CHARS, double *: OSN_KS_DOUBLES,     \
                      default: OSN_KS_UINT)

struct osn_key_origin;

/*
 * One key a scenario format knows: its name (section and key match case-insensitively), and,
 * for a key read by osn_ini_load(), its type, range, where it is stored, and the words that
 * document it (`osn sim --help`, docs/scenario.md). A table of {section, name} only is a
 * schema whose module reads its values by hand.
 */
struct osn_key_spec {
    const char *section;
    const char *name;
    enum osn_key_type type;
    double lo, hi;              /* double: lo; long: [lo, hi]; list: hi values at most */
    bool lo_excl;               /* double: > lo rather than >= lo */
    const char *const *choices; /* choice: NULL-terminated names */
    size_t off, size;           /* OSN_KEY_AT: the offset and size of its home in the cfg */
    enum osn_key_store store;
    /*
     * Optional, after the value is stored (or, for a list with store OSN_KS_NONE, to store it:
     * v[0..n) are the numbers): copies it to the key's other homes, or stores a derived form.
     * Returns 0 or an error from osn_ini_bad().
     */
    int (*hook)(void *cfg, const struct osn_key_origin *o, const double *v, int n, char *err,
                size_t errsize);
    /* A list the hook stores: reads it back for the echo (returns the count, <= max). */
    int (*get)(const void *cfg, double *v, int max);
    bool pairs; /* a list of pairs "a b, a b" (echoed as [[a, b], ...]) */
    /* Acts only when choice key when_key is when_is, or one of its names "a|b". */
    const char *when_key, *when_is;
    const char *unit; /* "s", "calls/s", ... or NULL */
    const char *def;  /* the default in words, when not the default cfg's value */
    const char *help; /* one line */
    /* A double that may be unbounded: inf, infinite or none (any case) store INFINITY (a
     * buffer that never fills). */
    bool inf;
    /* > 0: the section is a family, its name ending in "N" standing for a whole number 2 ..
     * family written without a leading zero ("server coreN": [server core2], [server core7]).
     * The keys are collected under each member's name ("server core7.buffer"); osn_ini_load
     * reads none of them (no key is named with the "N"): the module loads each member with
     * osn_ini_family_member() and a table of its own. OSN_INI_FAMILY_NAMED: the section is a
     * family keyed by a name, its name ending in " *" ("element *": [element pcscf1]), the name
     * 1 .. OSN_INI_NAME_MAX characters of letters, digits, '_', '-' and '.', kept as written;
     * its keys are collected and loaded the same way (osn_ini_family_name()). */
    int family;
};

#define OSN_INI_FAMILY_NAMED (-1)
#define OSN_INI_NAME_MAX     31

/*
 * The keys of one scenario format, as a chain of tables: every module that reads scenarios
 * (model, sim, fluid, ...) keeps its own table and links it in front of the ones it extends.
 */
struct osn_ini_schema {
    const struct osn_key_spec *defs;
    size_t n;
    const struct osn_ini_schema *next;
};

/*
 * The assignments of a scenario file plus overrides, each with its origin. keys[0..nkeys) is
 * allocated (it owns its records: release it with osn_ini_free(); a struct copy shares them, so
 * only one copy is freed). index is a hash table of nindex slots (a power of two, at least twice
 * cap) that holds key i as i + 1 and 0 in an empty slot, so that osn_ini_get() costs the same
 * with 10 keys as with 10^5.
 */
struct osn_ini {
    char path[256]; /* the scenario file, "" when none */
    int nkeys, cap;
    struct osn_key_origin *keys; /* every key set, in order */
    int *index;
    int nindex;
};

/*
 * Reads `path` (may be NULL) and then the `nsets` overrides "section.key=value" into *ini,
 * accepting only the keys of `schema`. A key given twice in the file is an error; an override
 * replaces a file value. Returns 0, or OSN_ECONFIG / OSN_EIO / OSN_EINVAL with one line in err
 * naming FILE:LINE (or the --set flag) and the key; OSN_ENOMEM when the records cannot be had.
 * *ini is only written on success, and then owns allocated records: osn_ini_free() them.
 */
int osn_ini_collect(struct osn_ini *ini, const char *path, const char *const *sets, int nsets,
                    const struct osn_ini_schema *schema, char *err, size_t errsize);

/* Frees the key records of an ini osn_ini_collect() filled and leaves it empty (path kept). NULL,
 * or an ini already freed or zeroed: nothing. */
void osn_ini_free(struct osn_ini *ini);

/* The record of "section.key" (canonical spelling, as in the schema), or NULL when not set. */
const struct osn_key_origin *osn_ini_get(const struct osn_ini *ini, const char *key);

/* Writes "WHERE: key 'K' = 'V': <why>" into err and returns OSN_ECONFIG. */
int osn_ini_bad(const struct osn_key_origin *o, char *err, size_t errsize, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

/* Value parsers; on a bad value they write the message above and return OSN_ECONFIG. */
int osn_ini_long(const struct osn_key_origin *o, long lo, long hi, long *out, char *err,
                 size_t errsize);
/* A finite number; min_excl: the value must be > lo, else >= lo. */
int osn_ini_double(const struct osn_key_origin *o, double lo, bool min_excl, double *out, char *err,
                   size_t errsize);
/* A comma- or blank-separated list of finite numbers >= 0; *n receives the count (<= max). */
int osn_ini_doubles(const struct osn_key_origin *o, double *out, int max, int *n, char *err,
                    size_t errsize);
/* One of the NULL-terminated `names` (any case); *out receives its index. */
int osn_ini_choice(const struct osn_key_origin *o, const char *const *names, int *out, char *err,
                   size_t errsize);

/*
 * Reads one line of a text file into buf (with its newline, NUL-terminated, *len bytes) and
 * tells what ended it: OSN_INI_LINE_OK (a newline, or the last line), OSN_INI_LINE_EOF (nothing
 * left), OSN_INI_LINE_NUL (a NUL byte: binary data, which no text file of ours holds and fgets()
 * would silently cut the line at; /dev/zero once kept a reader busy forever) or
 * OSN_INI_LINE_LONG (size - 1 bytes without a newline; the rest of the line is not read).
 */
enum { OSN_INI_LINE_OK, OSN_INI_LINE_EOF, OSN_INI_LINE_NUL, OSN_INI_LINE_LONG };
int osn_ini_getline(FILE *f, char *buf, size_t size, size_t *len);

/*
 * Reads every key of schema's own table (not of the tables it extends) that ini sets into cfg,
 * the struct the table's offsets are into, checking it against its type and range; keys of
 * type OSN_KEY_NONE are left to their module. Then refuses a key set where it cannot act (its
 * when_key is not when_is). Returns 0 or OSN_ECONFIG with "WHERE: key 'K' = 'V': why" in err.
 */
int osn_ini_load(const struct osn_ini *ini, const struct osn_ini_schema *schema, void *cfg,
                 char *err, size_t errsize);

/* The value of key k in cfg as text ("20", "collapse", "yes", "0.5 0.5"), or k->def. */
void osn_ini_key_text(const struct osn_key_spec *k, const void *cfg, char *buf, size_t size);

/* The index in k->choices of a choice or bool key's value in cfg (a bool: 0 no, 1 yes). */
int osn_ini_key_index(const struct osn_key_spec *k, const void *cfg);

/* The numbers of a double, long or list key in cfg; returns how many (<= max). */
int osn_ini_key_numbers(const struct osn_key_spec *k, const void *cfg, double *v, int max);

/* Whether key k acts in cfg: it has no when_key, or when_key's value in cfg is (one of) when_is. */
bool osn_ini_key_acts(const struct osn_ini_schema *schema, const struct osn_key_spec *k,
                      const void *cfg);

/* The member number of section `section` (its name as collected, "server core7") in family spec
 * k (k->family > 0): 2 .. k->family, or 0 when section is not one of k's members. */
int osn_ini_family_member(const struct osn_key_spec *k, const char *section);

/* The member name of section `section` in the named family k ("element pcscf1" in "element *":
 * "pcscf1", a pointer into section), or NULL when section is not one of k's members. */
const char *osn_ini_family_name(const struct osn_key_spec *k, const char *section);

/* The first key of schema's chain named section.name ("section.name" in key; a family's member
 * "server core7.buffer" finds the family's spec "server coreN"), or NULL. */
const struct osn_key_spec *osn_ini_key_find(const struct osn_ini_schema *schema, const char *key);

/*
 * Prints the keys of schema's own table with the defaults of cfg_default: as the lines of a
 * --help ("  [section]" then "    key  TYPE  [default] unit: help"), or, markdown, as one table
 * per section for docs/scenario.md.
 */
void osn_ini_keys_print(FILE *f, const struct osn_ini_schema *schema, const void *cfg_default,
                        bool markdown);

#endif

/*
 * The topology the user writes (issue 32): [element NAME] sections (role, server, next_hop,
 * next_hop_weights), [source NAME] sections (to, rate) and [link A-B] sections (delay, loss),
 * read into a graph, checked, and then carried by the simulator as the built-in shape the graph
 * has: collapse, a tandem of 1 to OSN_NET_MAX_MIDS mids (a chain of up to 7 proxies: a call's
 * stored path has 8 hops at most), fanin or fanout (docs/scale.md says why only these:
 * controller halves are still placed by hop index). The links of one place may differ (links
 * of their own, found per (from, to)) and the sources' rates too (their shares). A graph of any
 * other shape is refused, naming the key where it leaves them, unless it is a tree (each proxy
 * one next hop or a choice among cores, one or more cores each into a UAS, sources at any proxy
 * below them: tree(), run as OSN_NET_TREE with each source's own path and each chooser's
 * weights); so is every name that names nothing,
 * a cycle, a proxy without a next hop and a link the graph does not have. Each message names
 * FILE:LINE and the key.
 *
 * A built-in shape written out by hand gives the run `net.topology` gives, bit for bit: the
 * elements take the built-in order (the sources in file order, each source's proxy, a tandem's
 * mids, the cores in next_hop order, the UAS) and only their names differ.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io_int.h"
#include "osn/err.h"
#include "osn/net_scenario.h"

enum kind { K_ELEMENT, K_SOURCE, K_LINK, K_SERVER, NKINDS };

static const char *const family_of[NKINDS] = {"element *", "source *", "link *", "server *"};

/* One named section of the file and what was read from it. */
struct named {
    enum kind kind;
    char name[OSN_INI_NAME_MAX + 1];
    const struct osn_key_origin *first; /* its first key in the file, for the messages */
    struct osn_net_topo_keys k;
    struct osn_net_server_cfg server; /* K_SERVER: the costs read */
    int hop[OSN_NET_TOPO_HOPS], nhop; /* K_ELEMENT: next hops; K_SOURCE: hop[0] is `to` */
    int sources;                      /* K_ELEMENT: sources sending to it */
    int mark;                         /* the cycle search's colour: 0 new, 1 on the path, 2 done */
};

/*
 * The graph of the file. Every look-up by name goes through an index, so that reading a file
 * costs about its length (a 16,384-edge fan-in of 81,924 keys took 31.7 s when each name was
 * found by a scan of every section; docs/scale.md): slot[] is a hash of the sections by (kind,
 * name), open addressing, each slot 1 + an index into v (0: empty), nslot a power of two at least
 * twice cap; pos[] gives each section its place in the built-in order (-1 none).
 */
struct graph {
    const struct osn_ini *ini;
    struct named *v; /* v[0..n) of cap allocated: as many as the file has sections */
    int n, cap;
    int *slot, nslot; /* the name index */
    int *order;       /* the elements in the built-in order (load()) */
    int *pos;         /* pos[i]: section i's place in order[], -1 none (shape()) */
    char *err;
    size_t errsize;
};

static const char *const prefix[NKINDS] = {"element ", "source ", "link ", "server "};

/* The record of section x's key, or NULL when the file does not set it. */
static const struct osn_key_origin *get(const struct graph *g, const struct named *x,
                                        const char *key)
{
    char full[96];
    snprintf(full, sizeof full, "%s%s.%s", prefix[x->kind], x->name, key);
    return osn_ini_get(g->ini, full);
}

/* The key to blame for x: `key` where set, else x's first key. */
static const struct osn_key_origin *key_of(const struct graph *g, const struct named *x,
                                           const char *key)
{
    const struct osn_key_origin *o = get(g, x, key);
    return o ? o : x->first;
}

/* FNV-1a of the kind and the len characters of name. */
static uint32_t name_hash(enum kind kind, const char *name, size_t len)
{
    uint32_t h = (2166136261u ^ (uint32_t)kind) * 16777619u;
    for (size_t i = 0; i < len; i++)
        h = (h ^ (unsigned char)name[i]) * 16777619u;
    return h;
}

/* The index slot of (kind, the len characters of name): the one that holds it, or the empty
 * one where it goes. The index is never more than half full, so the probe ends. */
static int *slot_of(const struct graph *g, enum kind kind, const char *name, size_t len)
{
    size_t mask = (size_t)g->nslot - 1;
    for (size_t at = name_hash(kind, name, len) & mask;; at = (at + 1) & mask) {
        int *slot = &g->slot[at];
        if (!*slot)
            return slot;
        const struct named *x = &g->v[*slot - 1];
        /* equal up to len characters: x->name has them, so x->name[len] is within it */
        if (x->kind == kind && strncmp(x->name, name, len) == 0 && x->name[len] == '\0')
            return slot;
    }
}

/* The section of that kind and name (its first len characters), or -1. */
static int find(const struct graph *g, enum kind kind, const char *name, size_t len)
{
    return g->nslot ? *slot_of(g, kind, name, len) - 1 : -1;
}

/* Room for one more named section in g->v (doubling), and an index of twice that many slots
 * (rebuilt); 0 or OSN_ENOMEM. */
static int more_named(struct graph *g)
{
    if (g->n < g->cap)
        return 0;
    int cap = g->cap ? 2 * g->cap : 16;
    struct named *v = realloc(g->v, (size_t)cap * sizeof *v);
    int *slot = v ? calloc((size_t)cap * 2, sizeof *slot) : NULL;
    if (v)
        g->v = v; /* kept, larger, when the index cannot be made: cap is not raised */
    if (!slot) {
        if (g->err && g->errsize)
            snprintf(g->err, g->errsize, "%s: out of memory for %d sections", g->ini->path, cap);
        return OSN_ENOMEM;
    }
    memset(v + g->cap, 0, (size_t)(cap - g->cap) * sizeof *v);
    g->cap = cap;
    free(g->slot);
    g->slot = slot;
    g->nslot = 2 * cap;
    for (int i = 0; i < g->n; i++)
        *slot_of(g, g->v[i].kind, g->v[i].name, strlen(g->v[i].name)) = i + 1;
    return 0;
}

/* The named sections of the file, in the order of their first keys. */
static int collect(struct graph *g)
{
    int sources = 0;
    for (int i = 0; i < g->ini->nkeys; i++) {
        const struct osn_key_origin *o = &g->ini->keys[i];
        const struct osn_key_spec *k = osn_ini_key_find(&osn_net_schema, o->key);
        if (!k || k->family != OSN_INI_FAMILY_NAMED)
            continue;
        char sec[96];
        snprintf(sec, sizeof sec, "%.*s", (int)(strrchr(o->key, '.') - o->key), o->key);
        const char *name = osn_ini_family_name(k, sec);
        enum kind kind = K_ELEMENT;
        while (strcmp(family_of[kind], k->section) != 0)
            kind++;
        if (find(g, kind, name, strlen(name)) >= 0)
            continue;
        /* Refused here, before the graph is searched: each source is an edge of the shape. */
        if (kind == K_SOURCE && ++sources > OSN_NET_MAX_EDGES)
            return osn_ini_bad(o, g->err, g->errsize,
                               "more than %d sources: the simulator carries %d edges at most "
                               "(net.edges' bound)",
                               OSN_NET_MAX_EDGES, OSN_NET_MAX_EDGES);
        if (more_named(g))
            return OSN_ENOMEM;
        struct named *x = &g->v[g->n++];
        x->kind = kind;
        snprintf(x->name, sizeof x->name, "%s", name);
        x->first = o;
        *slot_of(g, kind, x->name, strlen(x->name)) = g->n;
        if ((kind == K_ELEMENT || kind == K_SOURCE) && strlen(name) >= OSN_NET_NAME_LEN)
            return osn_ini_bad(o, g->err, g->errsize,
                               "the name '%s' is longer than the %d characters a result row has",
                               name, OSN_NET_NAME_LEN - 1);
        if ((kind == K_ELEMENT && find(g, K_SOURCE, name, strlen(name)) >= 0) ||
            (kind == K_SOURCE && find(g, K_ELEMENT, name, strlen(name)) >= 0))
            return osn_ini_bad(o, g->err, g->errsize,
                               "'%s' names both an element and a source: give each its own name",
                               name);
    }
    return 0;
}

/* Reads section x's keys through copies of its family's specs renamed for it, into x->k (over
 * kdef) or, for a server, x->server (over the default core's costs, `core` being the family's
 * home). tmp is a configuration to read into. */
static int read_section(struct graph *g, struct named *x, struct osn_net_cfg *tmp,
                        const struct osn_net_topo_keys *kdef,
                        const struct osn_net_server_cfg *core_def)
{
    enum { MAXK = 32 }; /* a family's keys at most (a server's: 14) */
    struct osn_key_spec fam[MAXK];
    char sec[64];
    size_t nk = 0;

    snprintf(sec, sizeof sec, "%s%s", prefix[x->kind], x->name);
    for (size_t i = 0; i < osn_net_schema.n && nk < MAXK; i++)
        if (strcmp(osn_net_schema.defs[i].section, family_of[x->kind]) == 0) {
            fam[nk] = osn_net_schema.defs[i];
            fam[nk].section = sec;
            fam[nk++].family = 0;
        }
    tmp->topo = *kdef;
    tmp->core = *core_def;
    int rc = osn_ini_load(g->ini, &(struct osn_ini_schema){fam, nk, NULL}, tmp, g->err, g->errsize);
    x->k = tmp->topo;
    x->server = tmp->core;
    /* A CANCEL costs what a BYE costs unless the section says otherwise, as in [server core]. */
    if (x->kind == K_SERVER && !get(g, x, "cost_cancel"))
        x->server.cost[OSN_NET_K_CANCEL] = x->server.cost[OSN_NET_K_BYE];
    return rc;
}

/* "unknown element 'x' (elements: a, b, c)". */
static int unknown(struct graph *g, const struct osn_key_origin *o, const char *what,
                   const char *name, size_t len, enum kind kind)
{
    char known[512] = "";
    size_t used = 0;
    for (int i = 0; i < g->n && used < sizeof known; i++)
        if (g->v[i].kind == kind)
            used += (size_t)snprintf(known + used, sizeof known - used, "%s%s", used ? ", " : "",
                                     g->v[i].name);
    return osn_ini_bad(o, g->err, g->errsize, "%s '%.*s' is not an [%s NAME] of this file (%s)",
                       what, (int)len, name, kind == K_ELEMENT ? "element" : "source",
                       used ? known : "none");
}

/* An element's next hops and a source's first element, resolved to indices. */
static int resolve(struct graph *g)
{
    for (int i = 0; i < g->n; i++) {
        struct named *x = &g->v[i];
        if (x->kind == K_SOURCE) {
            const struct osn_key_origin *o = key_of(g, x, "to");
            int to = find(g, K_ELEMENT, x->k.to, strlen(x->k.to));
            if (!x->k.to[0])
                return osn_ini_bad(o, g->err, g->errsize,
                                   "source %s needs `to`, the element it sends its calls to",
                                   x->name);
            if (to < 0)
                return unknown(g, o, "to:", x->k.to, strlen(x->k.to), K_ELEMENT);
            if (g->v[to].k.role != 0)
                return osn_ini_bad(o, g->err, g->errsize,
                                   "a source sends to a proxy (%s is the UAS)", x->k.to);
            x->hop[0] = to, x->nhop = 1;
            g->v[to].sources++;
            continue;
        }
        if (x->kind != K_ELEMENT)
            continue;
        const struct osn_key_origin *o = key_of(g, x, "next_hop");
        for (const char *p = x->k.next_hop; *p;) {
            p += strspn(p, ", \t");
            size_t len = strcspn(p, ", \t");
            if (!len)
                break;
            int h = find(g, K_ELEMENT, p, len);
            if (h < 0)
                return unknown(g, o, "next hop", p, len, K_ELEMENT);
            for (int j = 0; j < x->nhop; j++)
                if (x->hop[j] == h)
                    return osn_ini_bad(o, g->err, g->errsize, "next hop %.*s is named twice",
                                       (int)len, p);
            if (x->nhop == OSN_NET_TOPO_HOPS)
                return osn_ini_bad(o, g->err, g->errsize, "more than %d next hops",
                                   OSN_NET_TOPO_HOPS);
            x->hop[x->nhop++] = h;
            p += len;
        }
        if (x->k.role == 0 && !x->nhop)
            return osn_ini_bad(key_of(g, x, "role"), g->err, g->errsize,
                               "proxy %s has no next_hop: where would it forward?", x->name);
        if (x->k.role == 1 && x->nhop)
            return osn_ini_bad(o, g->err, g->errsize, "the UAS %s answers: it has no next hop",
                               x->name);
        if (x->k.role == 0 && !x->k.server[0])
            return osn_ini_bad(key_of(g, x, "role"), g->err, g->errsize,
                               "proxy %s needs `server`, the [server NAME] of its costs", x->name);
        if (x->k.nweights && x->k.nweights != x->nhop)
            return osn_ini_bad(key_of(g, x, "next_hop_weights"), g->err, g->errsize,
                               "%d weights for %d next hops", x->k.nweights, x->nhop);
    }
    return 0;
}

/* Depth-first from element i: a next hop on the current path closes a cycle. */
static int no_cycle(struct graph *g, int i)
{
    struct named *x = &g->v[i];
    x->mark = 1;
    for (int j = 0; j < x->nhop; j++) {
        struct named *y = &g->v[x->hop[j]];
        if (y->mark == 1)
            return osn_ini_bad(key_of(g, x, "next_hop"), g->err, g->errsize,
                               "a cycle: %s forwards to %s, which leads back to %s", x->name,
                               y->name, x->name);
        if (y->mark == 0 && no_cycle(g, x->hop[j]))
            return OSN_ECONFIG;
    }
    x->mark = 2;
    return 0;
}

/* The costs of element x: its [server NAME], a built-in section or one of the file's. */
static int server_of(struct graph *g, const struct named *x, const struct osn_net_cfg *builtin,
                     struct osn_net_server_cfg *out)
{
    const char *s = x->k.server[0] ? x->k.server : "uas";
    if (strcmp(s, "edge") == 0)
        *out = builtin->edge;
    else if (strcmp(s, "core") == 0)
        *out = builtin->core;
    else if (strcmp(s, "uas") == 0)
        *out = builtin->uas;
    else {
        int k = find(g, K_SERVER, s, strlen(s));
        if (k < 0)
            return osn_ini_bad(key_of(g, x, "server"), g->err, g->errsize,
                               "no [server %s] section (edge, core and uas need none)", s);
        *out = g->v[k].server;
    }
    return 0;
}

/* Refuses a shape the hop path does not carry yet, naming where the graph leaves it. */
static int not_carried(struct graph *g, const struct named *x, const char *key, const char *why)
{
    return osn_ini_bad(
            key_of(g, x, key), g->err, g->errsize,
            "%s: the simulator carries a written topology of a built-in shape or a tree only "
            "(sources each into a proxy of their own, then one core, or one source "
            "into a chain of up to 7 proxies, or a fan-out to cores, then the UAS, "
            "or a tree: each proxy one next hop, up to one core; docs/scale.md)",
            why);
}

/* The element order of the built-in shape the graph has, into c; order[] receives it. */
static int shape(struct graph *g, struct osn_net_cfg *c, int *order, int *norder, int *nmid)
{
    int E = 0, n = 0;
    for (int i = 0; i < g->n; i++)
        if (g->v[i].kind == K_SOURCE)
            order[E++] = i; /* the sources first, in file order (collect() bounds them) */
    if (!E)
        return not_carried(g, &g->v[0], "role", "no [source NAME] sends calls into the network");
    n = E;
    for (int i = 0; i < E; i++) {
        struct named *e = &g->v[g->v[order[i]].hop[0]];
        if (e->sources > 1)
            return not_carried(g, &g->v[order[i]], "to", "two sources send to one proxy");
        order[n++] = g->v[order[i]].hop[0];
    }
    const struct named *e0 = &g->v[order[E]];
    *nmid = 0;
    for (int i = 1; i < E; i++) {
        const struct named *e = &g->v[order[E + i]];
        if (e->nhop != e0->nhop || memcmp(e->hop, e0->hop, sizeof e->hop[0] * (size_t)e->nhop) ||
            memcmp(e->k.weight, e0->k.weight, sizeof e->k.weight[0] * (size_t)e->k.nweights) ||
            e->k.nweights != e0->k.nweights)
            return not_carried(g, e, "next_hop",
                               "the first proxies have different next hops or weights");
    }
    int core0 = n;
    if (e0->nhop > 1) { /* a fan-out: each next hop a core into the UAS */
        c->topology = OSN_NET_FANOUT;
        c->cores = e0->nhop;
        for (int i = 0; i < e0->nhop; i++)
            order[n++] = e0->hop[i];
    } else {
        int at = e0->hop[0];
        if (g->v[at].k.role == 1)
            return not_carried(g, e0, "next_hop", "a proxy forwards straight to the UAS");
        /* One source: a chain, each proxy with one next hop a proxy a mid, up to the core (the
         * last proxy, or one that fans out: refused below). */
        while (E == 1 && g->v[at].nhop == 1 && g->v[g->v[at].hop[0]].k.role == 0) {
            if (*nmid == OSN_NET_MAX_MIDS)
                return osn_ini_bad(key_of(g, &g->v[at], "next_hop"), g->err, g->errsize,
                                   "a chain of more than %d proxies: a call's path has %d hops "
                                   "at most (docs/scale.md)",
                                   OSN_NET_MAX_MIDS + 2, OSN_NET_MAX_MIDS + 3);
            order[n++] = at;
            ++*nmid;
            at = g->v[at].hop[0];
        }
        order[n++] = at;
        c->topology = *nmid ? OSN_NET_TANDEM : E > 1 ? OSN_NET_FANIN : OSN_NET_COLLAPSE;
        c->mids = *nmid ? *nmid : 1;
    }
    int uas = -1;
    for (int i = core0 + *nmid; i < n; i++) {
        const struct named *x = &g->v[order[i]];
        if (x->nhop != 1 || g->v[x->hop[0]].k.role != 1)
            return not_carried(g, x, "next_hop",
                               "a core must forward to the UAS alone (a longer path, or a "
                               "fan-out past the first proxies, is not carried yet)");
        if (uas >= 0 && x->hop[0] != uas)
            return not_carried(g, x, "next_hop", "two UASs");
        uas = x->hop[0];
    }
    order[n++] = uas;
    c->edges = E;
    /* Each element's place; an element at two places is one the shape does not carry (the
     * checks above leave none: a proxy both first and core would forward to itself). */
    for (int j = 0; j < n; j++) {
        if (g->pos[order[j]] >= 0)
            return not_carried(g, &g->v[order[j]], "next_hop", "an element at two places");
        g->pos[order[j]] = j;
    }
    /* Every element and source is on the shape: one left over is one it does not carry. */
    for (int i = 0; i < g->n; i++)
        if ((g->v[i].kind == K_ELEMENT || g->v[i].kind == K_SOURCE) && g->pos[i] < 0)
            return not_carried(g, &g->v[i], "role", "an element no call of this shape reaches");
    *norder = n;
    return 0;
}

/* Element i's hop depth in the built-in order (0 a source, 1 its proxy, 2 the next: a chain's
 * first mid or the core, ...), for its links. */
static int depth(const struct graph *g, int n, int E, int nmid, int i)
{
    int at = g->pos[i];
    if (at < E)
        return 0;
    if (at < 2 * E)
        return 1;
    if (at == n - 1)
        return 3 + nmid;
    return at < 2 * E + nmid ? 2 + at - 2 * E : 2 + nmid;
}

/* The ends of [link A-B] x: *a the element or source A, *b the element B (a name may hold
 * '-': each split is tried until both halves name something); *b -1 when none does. */
static void link_ends(const struct graph *g, const struct named *x, int *a, int *b)
{
    *a = *b = -1;
    for (const char *p = x->name; *b < 0 && (p = strchr(p, '-')); p++) {
        *a = find(g, K_ELEMENT, x->name, (size_t)(p - x->name));
        if (*a < 0)
            *a = find(g, K_SOURCE, x->name, (size_t)(p - x->name));
        *b = *a < 0 ? -1 : find(g, K_ELEMENT, p + 1, strlen(p + 1));
    }
}

/* The links: [link A-B] of an edge of the graph, each at its place (access: from the sources,
 * trunk: between proxies, uas: into the UAS). The links of a place that are all alike (those
 * not written having the place's [link access|trunk|uas]) give the place its delay and loss, as
 * a built-in shape has them; a link that differs from its place's is one of its own
 * (c->link, between its ends' indices in the simulator's order), which the simulator finds per
 * message crossing it (src/sim/net_run.c, setup_links). A K_LINK's hop[0] and hop[1] receive
 * its ends' indices, its `sources` its place. */
static int links(struct graph *g, struct osn_net_cfg *c, const int *order, int n, int nmid,
                 struct osn_net_cfg *tmp)
{
    int last = 2 + nmid; /* the hop depth of the link into the UAS */
    struct osn_net_link_cfg *at[3] = {&c->access, &c->trunk, &c->uas_link};
    const struct named *seen[3] = {NULL};
    struct osn_net_link_cfg defaults[3] = {c->access, c->trunk, c->uas_link};
    int links_at[3] = {0}, written[3] = {0};
    bool alike[3] = {true, true, true};

    for (int i = 0; i < n - 1; i++) {
        int d = depth(g, n, c->edges, nmid, order[i]);
        links_at[d == 0 ? 0 : d == last ? 2 : 1] += g->v[order[i]].nhop;
    }
    for (int i = 0; i < g->n; i++) {
        struct named *x = &g->v[i];
        if (x->kind != K_LINK)
            continue;
        int a, b;
        link_ends(g, x, &a, &b);
        bool edge = false;
        for (int j = 0; b >= 0 && j < g->v[a].nhop; j++)
            edge |= g->v[a].hop[j] == b;
        if (!edge)
            return osn_ini_bad(x->first, g->err, g->errsize,
                               "[link %s] is not a link of the graph: a link is named [link A-B], "
                               "A a source or element that sends to element B",
                               x->name);
        int d = depth(g, n, c->edges, nmid, a), slot = d == 0 ? 0 : d == last ? 2 : 1;
        struct osn_net_topo_keys kdef = c->topo;
        kdef.link = defaults[slot];
        int rc = read_section(g, x, tmp, &kdef, &c->core);
        if (rc)
            return rc;
        if (seen[slot] && memcmp(&seen[slot]->k.link, &x->k.link, sizeof x->k.link) != 0)
            alike[slot] = false;
        seen[slot] = x;
        written[slot]++;
        x->hop[0] = g->pos[a], x->hop[1] = g->pos[b];
        x->sources = slot;
    }
    /* A place whose written links are alike, and either all its links or like its default,
     * has their delay and loss. */
    for (int k = 0; k < 3; k++)
        if (seen[k] && alike[k] &&
            (written[k] == links_at[k] ||
             memcmp(&seen[k]->k.link, &defaults[k], sizeof defaults[k]) == 0))
            *at[k] = seen[k]->k.link;
    /* The links of their own, into an array allocated for them (the scenario owns it). */
    int own = 0;
    for (int i = 0; i < g->n; i++)
        own += g->v[i].kind == K_LINK &&
               memcmp(&g->v[i].k.link, at[g->v[i].sources], sizeof g->v[i].k.link) != 0;
    free(c->link);
    c->link = NULL;
    c->nlinks = 0;
    if (own && !(c->link = malloc((size_t)own * sizeof *c->link)))
        return osn_ini_bad(g->v[0].first, g->err, g->errsize, "out of memory for %d links", own);
    for (int i = 0; i < g->n; i++) {
        const struct named *x = &g->v[i];
        if (x->kind != K_LINK || memcmp(&x->k.link, at[x->sources], sizeof x->k.link) == 0)
            continue;
        c->link[c->nlinks++] = (struct osn_net_link_own){
                .from = (uint16_t)x->hop[0], .to = (uint16_t)x->hop[1], .link = x->k.link};
    }
    return 0;
}

/* Whether proxy x is a core: it forwards to the UAS. */
static bool is_core(const struct graph *g, const struct named *x)
{
    return x->kind == K_ELEMENT && x->k.role == 0 && x->nhop == 1 && g->v[x->hop[0]].k.role == 1;
}

/* Whether the graph is a tree rooted at its UASs: every proxy has one next hop, or several that
 * are all cores (it chooses among them, as a fanout's edge does), and one or more cores each
 * forward to a UAS (one, or each its own). 1 when it is, 0 when it is not (shape()'s message
 * stands), or the code of a refusal of what is not carried yet, naming its key: a choice among
 * proxies that are not all cores, UASs of different servers. */
static int tree_kind(struct graph *g)
{
    int cores = 0, uas = -1;
    for (int i = 0; i < g->n; i++) {
        const struct named *x = &g->v[i];
        if (x->kind != K_ELEMENT || x->k.role != 0)
            continue;
        for (int j = 0; x->nhop > 1 && j < x->nhop; j++)
            if (g->v[x->hop[j]].k.role == 1)
                return 0; /* a core forwarding to the UAS and elsewhere: shape() says */
        for (int j = 0; x->nhop > 1 && j < x->nhop; j++)
            if (!is_core(g, &g->v[x->hop[j]]))
                return osn_ini_bad(key_of(g, x, "next_hop"), g->err, g->errsize,
                                   "%s chooses among next hops and %s is not a core (a proxy "
                                   "into the UAS): the simulator carries a choice among cores "
                                   "only, not yet one among proxies further from the UAS "
                                   "(docs/scale.md)",
                                   x->name, g->v[x->hop[j]].name);
        if (!is_core(g, x))
            continue;
        if (uas >= 0 && x->hop[0] != uas && strcmp(g->v[x->hop[0]].k.server, g->v[uas].k.server))
            return osn_ini_bad(key_of(g, &g->v[x->hop[0]], "server"), g->err, g->errsize,
                               "the UASs %s and %s have different servers: several UASs share "
                               "one [server NAME] (docs/scale.md)",
                               g->v[x->hop[0]].name, g->v[uas].name);
        uas = x->hop[0];
        cores++;
    }
    if (cores > OSN_NET_MAX_CORES)
        return osn_ini_bad(g->v[0].first, g->err, g->errsize,
                           "%d cores (proxies into the UAS): %d at most", cores, OSN_NET_MAX_CORES);
    return cores >= 1;
}

/* A tree (tree_kind) the built-in shapes do not have: sources into proxies at any level, every
 * path up to a core (one, or several among which proxies choose), then the UAS. The order: the
 * sources in file order, the proxies level by level from the sources' first proxies up (each
 * where it is first met: a regular tree takes the order of `topology = tree`), the cores in
 * file order, the UAS; c->up the next hops (a chooser's first), c->core_w the choosers'
 * weights of the cores. */
static int tree(struct graph *g, struct osn_net_cfg *c, int *order, int *norder)
{
    int E = 0, n = 0, C = 0, U = 0;
    for (int i = 0; i < g->n; i++) {
        const struct named *x = &g->v[i];
        g->pos[i] = -1;
        if (x->kind == K_SOURCE)
            order[E++] = i;
    }
    n = E;
    bool choose = false;
    for (int i = 0; i < E; i++) {
        const struct named *src = &g->v[order[i]];
        if (is_core(g, &g->v[src->hop[0]]))
            return osn_ini_bad(key_of(g, src, "to"), g->err, g->errsize,
                               "source %s sends to the core %s: in a tree the core's upstream "
                               "proxies are its control's clients, so a source enters at a proxy "
                               "below it (docs/scale.md)",
                               src->name, g->v[src->hop[0]].name);
        /* `at` is `hops` hops from the source; a next hop not a UAS makes 2 more at least */
        for (int at = src->hop[0], hops = 1; g->v[g->v[at].hop[0]].k.role != 1;
             at = g->v[at].hop[0], hops++)
            if (hops + 2 > OSN_NET_MAX_MIDS + 3)
                return osn_ini_bad(key_of(g, &g->v[at], "next_hop"), g->err, g->errsize,
                                   "a chain of more than %d proxies from source %s: a call's "
                                   "path has %d hops at most (docs/scale.md)",
                                   OSN_NET_MAX_MIDS + 2, src->name, OSN_NET_MAX_MIDS + 3);
    }
    /* level by level: the sources' first proxies, then the next hops of the level before */
    for (int lo = 0, hi = E; lo < hi; lo = hi, hi = n)
        for (int j = lo; j < hi; j++) {
            int next = g->v[order[j]].hop[0];
            if (!is_core(g, &g->v[next]) && g->pos[next] < 0)
                g->pos[next] = n, order[n++] = next;
        }
    /* the cores in file order (one: the tree of one core), then the UASs, each where its first
     * core is (one: the tree of one UAS) */
    for (int i = 0; i < g->n; i++)
        if (is_core(g, &g->v[i]))
            g->pos[i] = n, order[n++] = i, C++;
    for (int j = n - C, end = n; j < end; j++) {
        int u = g->v[order[j]].hop[0];
        if (g->pos[u] < 0)
            g->pos[u] = n, order[n++] = u, U++;
    }
    for (int j = 0; j < n; j++)
        g->pos[order[j]] = j;
    for (int i = 0; i < g->n; i++)
        if ((g->v[i].kind == K_ELEMENT || g->v[i].kind == K_SOURCE) && g->pos[i] < 0)
            return osn_ini_bad(key_of(g, &g->v[i], "role"), g->err, g->errsize,
                               "no call of this shape reaches %s (a tree's elements are each "
                               "on a source's path to the UAS)",
                               g->v[i].name);
    int P = n - E - C - U, nup = E + P + (U > 1 ? C : 0); /* several UASs: the cores' too */
    for (int j = E; j < E + P; j++)
        choose |= g->v[order[j]].nhop > 1;
    free(c->up);
    free(c->core_w);
    c->core_w = NULL;
    if (!(c->up = malloc((size_t)nup * sizeof *c->up)) ||
        (choose && !(c->core_w = calloc((size_t)P * (size_t)C, sizeof *c->core_w))))
        return osn_ini_bad(g->v[0].first, g->err, g->errsize, "out of memory for %d elements", n);
    for (int j = 0; j < nup; j++)
        c->up[j] = (uint16_t)g->pos[g->v[order[j]].hop[0]];
    /* the proxies into the cores: each one's weight of each (1 each when none are given) */
    for (int j = E; choose && j < E + P; j++) {
        const struct named *x = &g->v[order[j]];
        for (int h = 0; is_core(g, &g->v[x->hop[0]]) && h < x->nhop; h++) {
            /* the key's reader took whole numbers 1 .. 1000 only */
            int w = x->k.nweights ? (int)x->k.weight[h] : 1;
            c->core_w[(size_t)(j - E) * (size_t)C + (size_t)(g->pos[x->hop[h]] - E - P)] = w;
        }
    }
    c->topology = OSN_NET_TREE;
    c->edges = E;
    c->proxies = P;
    c->tree_cores = C;
    c->tree_uas = U;
    c->cores = c->mids = 1;
    *norder = n;
    return 0;
}

/* A tree's links: each [link A-B] that differs from its place's (from a source: access, into
 * the UAS: uas, else trunk) is a link of its own. */
static int tree_links(struct graph *g, struct osn_net_cfg *c, struct osn_net_cfg *tmp)
{
    int own = 0;
    free(c->link);
    c->link = NULL;
    c->nlinks = 0;
    for (int pass = 0; pass < 2; pass++) {
        for (int i = 0; i < g->n; i++) {
            struct named *x = &g->v[i];
            if (x->kind != K_LINK)
                continue;
            int a, b;
            link_ends(g, x, &a, &b);
            bool edge = false;
            for (int j = 0; b >= 0 && j < g->v[a].nhop; j++)
                edge |= g->v[a].hop[j] == b;
            if (!edge)
                return osn_ini_bad(x->first, g->err, g->errsize,
                                   "[link %s] is not a link of the graph: a link is named [link "
                                   "A-B], A a source or element that sends to element B",
                                   x->name);
            const struct osn_net_link_cfg *place = g->v[a].kind == K_SOURCE ? &c->access
                                                   : g->v[b].k.role == 1    ? &c->uas_link
                                                                            : &c->trunk;
            struct osn_net_topo_keys kdef = c->topo;
            kdef.link = *place;
            int rc = pass ? 0 : read_section(g, x, tmp, &kdef, &c->core);
            if (rc)
                return rc;
            if (memcmp(&x->k.link, place, sizeof *place) == 0)
                continue;
            if (!pass)
                own++;
            else
                c->link[c->nlinks++] = (struct osn_net_link_own){
                        .from = (uint16_t)g->pos[a], .to = (uint16_t)g->pos[b], .link = x->k.link};
        }
        if (!pass && own && !(c->link = malloc((size_t)own * sizeof *c->link)))
            return osn_ini_bad(g->v[0].first, g->err, g->errsize, "out of memory for %d links",
                               own);
    }
    return 0;
}

/* A tree's servers: the proxies below the core each its own (edge_own) where they differ, the
 * core's, the UAS's. */
static int tree_servers(struct graph *g, struct osn_net_cfg *c, const int *order, int n)
{
    const struct osn_net_cfg builtin = *c;
    int E = c->edges, P = c->proxies, C = c->tree_cores > 1 ? c->tree_cores : 1;
    bool own = false;
    for (int i = E; i < E + P; i++)
        own |= strcmp(g->v[order[i]].k.server, g->v[order[E]].k.server) != 0;
    free(c->edge_own);
    c->edge_own = NULL;
    c->edges_own = 0;
    if (own && !(c->edge_own = malloc((size_t)P * sizeof *c->edge_own)))
        return osn_ini_bad(g->v[0].first, g->err, g->errsize, "out of memory for %d proxies", P);
    if (own)
        c->edges_own = P;
    for (int i = E; i < n; i++) {
        struct osn_net_server_cfg sv;
        int rc = server_of(g, &g->v[order[i]], &builtin, &sv);
        if (rc)
            return rc;
        if (i == E)
            c->edge = sv;
        if (own && i < E + P)
            c->edge_own[i - E] = sv;
        else if (i == E + P)
            c->core = sv;
        else if (i > E + P && i < E + P + C) /* a tree's cores past the first */
            c->more_cores[i - E - P - 1] = sv;
        else if (i >= E + P + C) /* the UASs: one server (tree_kind) */
            c->uas = sv;
    }
    return 0;
}

/* The network keys a written topology sets itself. */
static int no_builtin(struct graph *g)
{
    static const char *const keys[] = {"net.topology", "net.edges", "net.cores", NULL};
    for (int i = 0; keys[i]; i++) {
        const struct osn_key_origin *o = osn_ini_get(g->ini, keys[i]);
        if (o)
            return osn_ini_bad(o, g->err, g->errsize,
                               "the [element NAME] sections write the topology: leave %s out",
                               keys[i]);
    }
    return 0;
}

static int rates_names(struct graph *g, struct osn_net_cfg *c, const int *order, int n);

static int load(struct graph *g, struct osn_net_cfg *c, struct osn_net_cfg *tmp)
{
    int rc = collect(g), *order, n = 0, nmid = 0;
    bool any = false;

    for (int i = 0; i < g->n; i++)
        any |= g->v[i].kind == K_ELEMENT || g->v[i].kind == K_SOURCE;
    if (rc || !any)
        return rc;
    if ((rc = no_builtin(g)))
        return rc;
    /* The built-in order takes each element once at most (shape() refuses one left over). */
    order = g->order = malloc((size_t)g->n * sizeof *order);
    g->pos = malloc((size_t)g->n * sizeof *g->pos);
    if (!order || !g->pos) {
        if (g->err && g->errsize)
            snprintf(g->err, g->errsize, "out of memory");
        return OSN_ENOMEM;
    }
    for (int i = 0; i < g->n; i++)
        g->pos[i] = -1;
    struct osn_net_server_cfg core_def = tmp->core; /* tmp holds the defaults still */
    for (int i = 0; i < g->n && !rc; i++)
        if (g->v[i].kind != K_LINK)
            rc = read_section(g, &g->v[i], tmp, &c->topo, &core_def);
    if (!rc)
        rc = resolve(g);
    for (int i = 0; i < g->n && !rc; i++)
        if (g->v[i].kind == K_ELEMENT && g->v[i].mark == 0)
            rc = no_cycle(g, i);
    if (!rc) {
        /* a graph of no built-in shape may be a tree; else shape()'s message stands */
        rc = shape(g, c, order, &n, &nmid);
        int kind = rc ? tree_kind(g) : 0;
        if (kind != 0 && kind != 1)
            return kind; /* a refusal of tree_kind's */
        if (kind == 1) {
            rc = tree(g, c, order, &n);
            if (!rc)
                rc = tree_links(g, c, tmp);
            if (!rc)
                rc = tree_servers(g, c, order, n);
            if (!rc)
                rc = rates_names(g, c, order, n);
            return rc;
        }
    }
    if (!rc)
        rc = links(g, c, order, n, nmid, tmp);
    if (rc)
        return rc;

    /* The servers, each element's from its section; the proxies at one place alike. */
    const struct osn_net_cfg builtin = *c;
    int E = c->edges;
    const struct named *e0 = &g->v[order[E]];
    /* First proxies of different servers: each its own costs (edge_own, allocated for them). */
    bool own = false;
    for (int i = E; i < 2 * E; i++)
        own |= strcmp(g->v[order[i]].k.server, e0->k.server) != 0;
    free(c->edge_own);
    c->edge_own = NULL;
    c->edges_own = 0;
    if (own && !(c->edge_own = malloc((size_t)E * sizeof *c->edge_own)))
        return osn_ini_bad(key_of(g, e0, "server"), g->err, g->errsize,
                           "out of memory for %d first proxies", E);
    if (own)
        c->edges_own = E;
    for (int i = E; i < n && !rc; i++) {
        const struct named *x = &g->v[order[i]];
        struct osn_net_server_cfg sv;
        rc = server_of(g, x, &builtin, &sv);
        if (rc)
            break;
        if (i < 2 * E) {
            if (i == E)
                c->edge = sv;
            if (own)
                c->edge_own[i - E] = sv;
        } else if (i < 2 * E + nmid) {
            c->mid[i - 2 * E] = sv, c->mid_own = true;
        } else if (i == n - 1) {
            c->uas = sv;
        } else {
            int core = i - 2 * E - nmid;
            if (core == 0)
                c->core = sv;
            else
                c->more_cores[core - 1] = sv;
        }
    }
    if (rc)
        return rc;
    if (c->topology == OSN_NET_FANOUT) {
        for (int i = 0; i < OSN_NET_MAX_CORES; i++)
            c->core_weight[i] = i < e0->k.nweights ? (int)e0->k.weight[i] : 1;
        c->core_weights_given = e0->k.nweights;
    }
    return rates_names(g, c, order, n);
}

/* The sources' rates and the elements' names, order[0..n) the simulator's order, the sources
 * first (c->edges of them). */
static int rates_names(struct graph *g, struct osn_net_cfg *c, const int *order, int n)
{
    int E = c->edges;

    /* The rates: source.rate shared, or each source's own: alike, an equal share each (the
     * built-in fanin's bits); different, each its share of their sum (source.shares). */
    int given = 0;
    bool differ = false;
    double total = 0;
    const struct named *rated = NULL;
    for (int i = 0; i < E; i++) {
        const struct named *x = &g->v[order[i]];
        if (!get(g, x, "rate"))
            continue;
        differ |= rated && x->k.rate != rated->k.rate;
        rated = x, given++, total += x->k.rate;
    }
    if (given && given < E)
        return osn_ini_bad(key_of(g, rated, "rate"), g->err, g->errsize,
                           "a rate for some sources only: give each source its rate, or none "
                           "(then source.rate is shared)");
    if (given) {
        const struct osn_key_origin *o = osn_ini_get(g->ini, "source.rate");
        if (o)
            return osn_ini_bad(o, g->err, g->errsize,
                               "the [source NAME] sections give their rates: leave it out");
        if ((o = osn_ini_get(g->ini, "source.shares")))
            return osn_ini_bad(o, g->err, g->errsize,
                               "the [source NAME] sections give their rates: leave it out");
        c->src.rate = total;
    }
    if (differ) {
        /* each source's share (source.shares), allocated for them: the scenario owns it */
        free(c->src.share);
        c->src.nshares = 0;
        if (!(c->src.share = malloc((size_t)E * sizeof *c->src.share)))
            return osn_ini_bad(get(g, rated, "rate"), g->err, g->errsize,
                               "out of memory for %d sources' rates", E);
        c->src.nshares = E;
        for (int i = 0; i < E; i++)
            c->src.share[i] = g->v[order[i]].k.rate;
    }
    free(c->elem_names);
    c->named = 0;
    if (!(c->elem_names = calloc((size_t)n, sizeof *c->elem_names))) {
        if (g->err && g->errsize)
            snprintf(g->err, g->errsize, "out of memory");
        return OSN_ENOMEM;
    }
    c->named = n;
    for (int i = 0; i < n; i++)
        /* collect() refused a name longer than a row's */
        snprintf(c->elem_names[i], sizeof c->elem_names[i], "%.*s", OSN_NET_NAME_LEN - 1,
                 g->v[order[i]].name);
    return 0;
}

int osn__net_topo_load(const struct osn_ini *ini, struct osn_net_cfg *c, char *err, size_t errsize)
{
    struct graph g = {.ini = ini, .err = err, .errsize = errsize};
    struct osn_net_cfg *tmp = malloc(sizeof *tmp);

    if (!tmp) {
        if (err && errsize)
            snprintf(err, errsize, "out of memory");
        return OSN_ENOMEM;
    }
    osn_net_cfg_default(tmp);
    int rc = load(&g, c, tmp);
    free(tmp);
    free(g.v);
    free(g.slot);
    free(g.order);
    free(g.pos);
    return rc;
}

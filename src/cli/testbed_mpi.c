/*
 * `osn testbed` spread over MPI ranks (testbed.h): `mpirun -n K osn testbed ...` or `srun`.
 *
 * Every rank reads the same options and scenario, so every rank builds the same list of
 * elements and places them alike: an element named in [node] rank = NAME:RANK, ... on that
 * rank, element i (in start order) otherwise on rank i mod K. A run goes through the elements'
 * stages, callee first (the UAS, the cores, a mid, the edges, the sources): at each stage every
 * rank starts its own elements of that stage, reads their listening lines, and the ranks then
 * exchange what they started (address, pid, whether it came up) with one MPI_Allgatherv, so that
 * the next stage's proxies, on any rank, send to the addresses their downstream elements
 * reported. Every exchange carries each rank's status, so that a failure anywhere (a node that
 * did not come up, an interruption) makes every rank stop its nodes and leave at the same point,
 * and no rank waits on one that left. When every source has ended (a last exchange), each rank
 * stops its own nodes by pid and sends rank 0, element by element, the node's end, its JSON
 * summary, the generator's stats rows and the last line of its log; rank 0 writes them into its
 * run directory as if the node had run beside it, reads them as in one process, runs `osn sim`
 * and prints the table. Without a launcher there is one rank and nothing here talks to MPI: the
 * exchanges return the local status (src/study/mpi_load.c opens MPI only under a launcher).
 *
 * The MPI part is the studies' (osn/study_mpi.h): its allgather and its point-to-point messages
 * to rank 0, which poll with 1 ms sleeps so that a waiting rank leaves the CPU to the nodes.
 */
#define _GNU_SOURCE /* getifaddrs, IFF_UP */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <jansson.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "osn/ini.h"
#include "osn/study_mpi.h"
#include "testbed.h"

/* What one rank tells the others after a stage: its status and the elements it runs. */
struct block {
    int status;
    int n;
    struct {
        int idx;
        int pid;
        char addr[64];
    } e[TB_MAX_ELEMS];
};

int tb_bind(const char *spec, int rank, int ranks, char *buf, size_t size)
{
    char list[512], *save, *pick = NULL;
    int n = 0;
    snprintf(list, sizeof list, "%s", spec);
    for (char *t = strtok_r(list, ", ", &save); t; t = strtok_r(NULL, ", ", &save), n++)
        if (n == 0 || n == rank)
            pick = t;
    if (n > 1 && n != ranks)
        return osn_cli_die("testbed",
                           "--bind %s: %d addresses for %d rank%s: give one, one per rank, or "
                           "auto",
                           spec, n, ranks, ranks == 1 ? "" : "s");
    if (!pick)
        return osn_cli_die("testbed", "--bind '%s': expected an address, a list, or auto", spec);
    if (strcmp(pick, "auto") == 0) {
        /* The address other hosts reach this one by; a host name may resolve to 127.0.1.1. */
        struct ifaddrs *ifs = NULL;
        snprintf(buf, size, "127.0.0.1");
        if (getifaddrs(&ifs) != 0)
            return 0;
        for (struct ifaddrs *i = ifs; i; i = i->ifa_next)
            if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET && (i->ifa_flags & IFF_UP) &&
                !(i->ifa_flags & IFF_LOOPBACK)) {
                inet_ntop(AF_INET, &((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr, buf,
                          (socklen_t)size);
                break;
            }
        freeifaddrs(ifs);
        return 0;
    }
    unsigned char a[16];
    if (inet_pton(AF_INET, pick, a) != 1 && inet_pton(AF_INET6, pick, a) != 1)
        return osn_cli_die("testbed", "--bind %s: '%s' is not an IPv4 or IPv6 address", spec, pick);
    snprintf(buf, size, "%s", pick);
    return 0;
}

int tb_mpi_init(struct tb_cfg *cfg)
{
    cfg->rank = 0;
    cfg->ranks = 1;
    return osn_study_mpi_init("testbed", &cfg->rank, &cfg->ranks) != 0 ? OSN_EXIT_ERROR : 0;
}

int tb_place(const struct tb_cfg *cfg, struct tb_net *net, const struct osn_key_origin *o)
{
    char list[256], *save, err[1024], names[512];
    bool named[TB_MAX_ELEMS] = {false};
    size_t len = 0;

    for (int i = 0; i < net->n; i++) {
        net->e[i].rank = cfg->ranks > 1 ? i % cfg->ranks : 0;
        len += (size_t)snprintf(names + len, len < sizeof names ? sizeof names - len : 0, "%s%s",
                                i ? ", " : "", net->e[i].name);
    }
    if (!o)
        return 0;
    snprintf(list, sizeof list, "%s", o->value);
    for (char *t = strtok_r(list, ", ", &save); t; t = strtok_r(NULL, ", ", &save)) {
        char *colon = strchr(t, ':'), *end = NULL;
        long r = -1;
        if (colon) {
            *colon = '\0';
            errno = 0;
            r = strtol(colon + 1, &end, 10);
        }
        int i = 0;
        while (colon && i < net->n && strcmp(net->e[i].name, t) != 0)
            i++;
        if (!colon || end == colon + 1 || *end || errno || r < 0)
            osn_ini_bad(o, err, sizeof err,
                        "'%s%s%s' is not NAME:RANK (a whole number >= 0), comma-separated", t,
                        colon ? ":" : "", colon ? colon + 1 : "");
        else if (i == net->n)
            osn_ini_bad(o, err, sizeof err, "'%s' is no element of this network (%s)", t, names);
        else if (named[i])
            osn_ini_bad(o, err, sizeof err, "element %s is placed twice", t);
        else if (r >= cfg->ranks && cfg->ranks > 1)
            osn_ini_bad(o, err, sizeof err, "%s on rank %ld, but the job has %d ranks (0..%d)", t,
                        r, cfg->ranks, cfg->ranks - 1);
        else {
            named[i] = true;
            net->e[i].rank = cfg->ranks > 1 ? (int)r : 0;
            continue;
        }
        return osn_cli_die("testbed", "%s", err);
    }
    return 0;
}

bool tb_mine(const struct tb_cfg *cfg, const struct tb_net *net, int i)
{
    return cfg->ranks <= 1 || net->e[i].rank == cfg->rank;
}

int tb_mpi_share(const struct tb_cfg *cfg, struct tb_net *net, int status)
{
    if (cfg->ranks <= 1)
        return status;
    struct block *b = calloc((size_t)cfg->ranks, sizeof *b);
    if (!b) {
        /* This rank cannot take part: MPI_Abort from rank 0, or leave and let mpirun stop. */
        osn_cli_die("testbed", "rank %d: out of memory", cfg->rank);
        osn_study_mpi_finish(OSN_EXIT_ERROR);
        exit(OSN_EXIT_ERROR);
    }
    struct block *own = &b[cfg->rank];
    own->status = status;
    for (int i = 0; i < net->n; i++)
        if (tb_mine(cfg, net, i) && net->e[i].p.addr[0]) {
            own->e[own->n].idx = i;
            own->e[own->n].pid = (int)net->e[i].p.pid_was;
            snprintf(own->e[own->n].addr, sizeof own->e[0].addr, "%s", net->e[i].p.addr);
            own->n++;
        }
    int rc = osn_study_mpi_allgather(NULL, b, cfg->ranks, sizeof *b, cfg->ranks);
    int worst = rc != 0 ? OSN_EXIT_ERROR : 0;
    for (int r = 0; rc == 0 && r < cfg->ranks; r++) {
        if (b[r].status != 0)
            worst = b[r].status;
        if (r == cfg->rank)
            continue;
        for (int k = 0; k < b[r].n && k < TB_MAX_ELEMS; k++) {
            int i = b[r].e[k].idx;
            if (i < 0 || i >= net->n)
                continue;
            snprintf(net->e[i].p.addr, sizeof net->e[i].p.addr, "%s", b[r].e[k].addr);
            net->e[i].p.pid_was = b[r].e[k].pid;
        }
    }
    free(b);
    if (rc != 0)
        osn_cli_die("testbed", "rank %d: the exchange of the listening addresses failed",
                    cfg->rank);
    return worst;
}

/* The whole text of a file, or NULL. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *s = NULL;
    long n;
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (s = malloc((size_t)n + 1))) {
        size_t got = fread(s, 1, (size_t)n, f);
        s[got] = '\0';
    }
    fclose(f);
    return s;
}

static void spill(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return;
    fputs(text, f);
    fclose(f);
}

/* Rank != 0: element i's end and files, as one JSON text. */
static char *pack(const struct tb_elem *e, int i, const char *dir)
{
    char path[4200], last[1024];
    snprintf(path, sizeof path, "%s/%s.json", dir, e->name);
    char *summary = slurp(path);
    snprintf(path, sizeof path, "%s/%s.csv", dir, e->name);
    char *stats = slurp(path);
    tb_proc_last_line(&e->p, last, sizeof last);
    json_t *o = json_pack("{sisisbsbsososo}", "idx", i, "status", e->p.status, "reaped",
                          e->p.reaped, "killed", e->p.killed, "summary",
                          summary ? json_string(summary) : json_null(), "stats",
                          stats ? json_string(stats) : json_null(), "last", json_string(last));
    free(summary);
    free(stats);
    char *text = o ? json_dumps(o, JSON_COMPACT) : NULL;
    json_decref(o);
    return text;
}

/* Rank 0: element i as rank `from` says it ended; its files into dir. */
static int unpack(struct tb_net *net, const char *text, int from, const char *dir)
{
    json_t *o = json_loads(text, 0, NULL);
    int i = (int)json_integer_value(json_object_get(o, "idx"));
    char path[4200];
    if (!o || i < 0 || i >= net->n) {
        json_decref(o);
        return osn_cli_die("testbed", "rank %d sent an element's end that cannot be read", from);
    }
    struct tb_elem *e = &net->e[i];
    e->p.status = (int)json_integer_value(json_object_get(o, "status"));
    e->p.reaped = json_is_true(json_object_get(o, "reaped"));
    e->p.killed = json_is_true(json_object_get(o, "killed"));
    const char *summary = json_string_value(json_object_get(o, "summary"));
    const char *stats = json_string_value(json_object_get(o, "stats"));
    const char *last = json_string_value(json_object_get(o, "last"));
    snprintf(path, sizeof path, "%s/%s.json", dir, e->name);
    if (summary)
        spill(path, summary);
    else
        remove(path);
    snprintf(path, sizeof path, "%s/%s.csv", dir, e->name);
    if (stats)
        spill(path, stats);
    tb_proc_log(&e->p, dir, e->name);
    char line[1100];
    snprintf(line, sizeof line, "(rank %d) %s\n", from, last ? last : "");
    spill(e->p.log, line);
    json_decref(o);
    return 0;
}

int tb_mpi_gather(const struct tb_cfg *cfg, struct tb_net *net, const char *dir)
{
    int rc = 0;
    if (cfg->ranks <= 1)
        return 0;
    if (cfg->rank != 0) {
        for (int i = 0; i < net->n; i++) {
            if (!tb_mine(cfg, net, i))
                continue;
            char *text = pack(&net->e[i], i, dir);
            osn_study_mpi_send(text ? 0 : OSN_EXIT_ERROR, text ? text : "{}");
            free(text);
        }
        return 0;
    }
    for (int r = 1; r < cfg->ranks; r++)
        for (int i = 0; i < net->n; i++) {
            if (net->e[i].rank != r) /* rank r sends its own elements, in their order */
                continue;
            int status;
            char *text = osn_study_mpi_recv(r, &status);
            if (!text || status != 0 || unpack(net, text, r, dir) != 0) {
                if (!text || status != 0)
                    osn_cli_die("testbed", "rank %d did not send element %s's end", r,
                                net->e[i].name);
                rc = OSN_EXIT_ERROR;
            }
            free(text);
        }
    return rc;
}

void tb_mpi_finish(const struct tb_cfg *cfg, int status)
{
    if (cfg->ranks > 1)
        osn_study_mpi_finish_everywhere(status);
}

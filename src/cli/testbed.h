/*
 * Private interface of `osn testbed` (src/cli/cmd_testbed.c and testbed_*.c): the whole network
 * of a scenario run for real, one `osn node` process per element on 127.0.0.1, beside `osn sim`
 * on the same scenario, load, warm-up and window.
 *
 *     testbed_net.c    the scenario's elements, in start order (callee first), and their wiring
 *     testbed_load.c   what a load factor sets in the [source]: its rate, MMPP or profile rates
 *     testbed_proc.c   one child process: fork/exec, its listening line, a bounded stop
 *     testbed_run.c    one load x control: start, wait, stop, collect the JSONs, run osn sim
 *     testbed_out.c    the table, the CSV and the JSON of the rows
 *     testbed_plot.c   --plot: goodput against load, through gnuplot
 *     testbed_mpi.c    under mpirun or srun: the elements spread over the ranks
 */
#ifndef OSN_CLI_TESTBED_H
#define OSN_CLI_TESTBED_H

#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "osn/net.h"

/* Edges of a network the testbed starts at most: each element is a process on this machine,
 * so the testbed keeps the limit the simulator had (the simulator's is OSN_NET_MAX_EDGES). */
#define TB_MAX_EDGES 64

/* Cores of a fanout the testbed starts at most: its edge is an osn node, which takes that many
 * next hops (the simulator's limit is OSN_NET_MAX_CORES). */
#define TB_MAX_CORES OSN_ELEM_MAX_HOPS

/* Elements of one network at most: the sources and edges, a mid (tandem) or the cores (fanout),
 * and the UAS. */
#define TB_MAX_ELEMS (2 * TB_MAX_EDGES + TB_MAX_CORES + OSN_NET_MAX_MIDS + 2)

/* One child process that the testbed started and must stop. */
struct tb_proc {
    pid_t pid;      /* > 0 while it runs and is not reaped */
    pid_t pid_was;  /* the pid it had, for the report */
    int out_fd;     /* read end of its standard output until its listening line; -1 after */
    int status;     /* waitpid() status once reaped */
    bool reaped;    /* status is valid */
    bool killed;    /* it did not end within the bound after SIGTERM: SIGKILL */
    char addr[64];  /* the address its listening line reported */
    char log[4096]; /* the file its standard error (and output) goes to */
};

/* One element of the network: what it runs as and where it sends. */
struct tb_elem {
    char name[OSN_NET_NAME_LEN]; /* "uas", "core", "core2", "mid", "mid2", "edge", "edge3", "uac",
                                    "uac3", or its [element NAME] */
    const char *element;         /* its node.element: uas, core, edge or uac */
    int next[TB_MAX_CORES];      /* its downstream elements (several: a fanout's edge)... */
    int nnext;                   /* ...how many; 0 for the UAS */
    int core;                    /* a core: 0 for [server core], i for [server core(i+1)] */
    int mid;                     /* a chain's mid proxy k (1..), its node.mid; 0 otherwise */
    int stage;                   /* 0 for the UAS, then 1 + its downstream elements' stage */
    double share;                /* uac: its fraction of the offered rate (fan-in: 1 / edges) */
    int stream; /* uac: added to net.seed, so that fan-in sources are independent */
    /* The one-way delays of its links in the scenario (s): toward its next hops, and upstream
     * (node.link_delay_down, link_delay_up), and their losses (node.link_loss_down, _up) */
    double delay_down, delay_up, loss_down, loss_up;
    /* A network with links of their own (tb_net.own_links): the link to each next hop, which
     * this element carries both ways (node.next_hop_delays, next_hop_losses), the four above 0 */
    double hop_delay[TB_MAX_CORES], hop_loss[TB_MAX_CORES];
    int sim;          /* its index in the simulator's order of elements (osn_net_elem_index) */
    int rank;         /* the MPI rank that runs it (node.rank, else round-robin) */
    struct tb_proc p; /* this run's process */
};

struct tb_net {
    struct tb_elem e[TB_MAX_ELEMS]; /* in start order: the UAS first, the sources last */
    int n;
    /* The scenario has [link A-B] of their own (osn_net_cfg.nlinks): each link is carried by
     * its upstream end, both ways (tb_elem.hop_delay), since a node cannot tell its upstream
     * peers apart; else each end carries one direction (delay_down, delay_up). */
    bool own_links;
};

/* What every run shares: the options, the scenario's figures, the binary. */
struct tb_cfg {
    char exe[4096];          /* this osn binary (/proc/self/exe resolved) */
    const char *scenario;    /* the scenario file */
    const char *const *sets; /* the user's --set values, passed to every child */
    int nsets;
    double duration, warmup;       /* measured window and warm-up (s) */
    double capacity;               /* the core's call capacity (calls/s); fanout: the cores' sum */
    const struct osn_net_cfg *net; /* the scenario as loaded (sources, cores, weights) */
    double t1, hold;               /* the scenario's T1 and mean hold (s): the drain bound */
    double stats_interval;         /* the generator's stats row (s) */
    uint64_t seed;                 /* net.seed */
    double ready_timeout;          /* s for a node to print its listening line */
    double stop_timeout;           /* s for a node to end after SIGTERM */
    char dir[4096];                /* where each run's files go */
    volatile sig_atomic_t *stop;   /* set by SIGINT/SIGTERM: stop everything, fail */
    int rank, ranks;               /* this process's MPI rank and their number (0, 1: no MPI) */
    char bind[64];                 /* the address this rank's nodes listen on (port 0) */
    bool link_delay;               /* the nodes carry out the scenario's [link] delays */
    int source_rates; /* a written topology's [source NAME] sections give their own rates */
};

/* One row of the table: one control at one load, sim beside real. */
/* The keys of tb_row's sim_more and real_more, those of osn sim's and the generator's JSON. */
#define TB_MORE_KEYS                     \
    {                                    \
        "failed", "abandoned", "retries" \
    }

struct tb_row {
    char control[16];
    double load, rate;          /* load factor; rate = load x capacity (calls/s) */
    double sim_goodput, sim_hw; /* osn sim: mean and 95% half-width over... */
    long sim_n;                 /* ...its replications */
    /* the spread of the simulator's replications' goodput (calls/s), and how many of them fell
     * below the real run's: one real run is one draw, and where the network is on the edge of
     * collapse (no control at load 1) the replications range from collapsed to full, so the
     * real run's rank among them says more than its ratio to their mean; -1: not known */
    double sim_min, sim_max;
    int sim_below;
    double sim_p50, sim_p99;           /* setup delay (s); NaN when no call was set up */
    double real_goodput, real_offered; /* calls/s in the window, from the generators' rows */
    double real_p50, real_p99;         /* setup delay (s) in the window (node.warmup) */
    /* the other rates of the window at the caller (calls/s; TB_MORE_KEYS: failed, abandoned,
     * retries), the simulator's and the generators' summed (their window's, node.warmup; NaN
     * with --warmup 0, when a generator has no window) */
    double sim_more[3], real_more[3];
    double ratio; /* real / sim goodput */
    /* the core's time in overload (controller mode 1 or 2) in the window, a fraction: the
     * simulator's core_overload, and the core node's sampled (testbed_run.c, TB_MODE_ROW) */
    double sim_overload, real_overload;
    double lag_max;              /* the generators' largest schedule lag (s) */
    long late_sends, unfinished; /* INVITEs > 1 ms late; calls not ended at the stop */
    int elements, collected;     /* elements started; JSON summaries read back */
    json_t *elems;               /* per element: name, pid, listen, exit and counters */
    char notes[512];
    bool ok; /* every element came up and wrote its summary */
};

/* testbed_net.c: the elements of the scenario's topology; 0, or OSN_EXIT_ERROR (told). */
int tb_net_build(struct tb_net *net, const struct osn_net_cfg *c);
/* The calls/s a load factor of 1 offers: the core's capacity, or the sum of a fanout's cores'. */
double tb_net_capacity(const struct osn_net_cfg *c);

/* testbed_load.c: the mean calls/s the scenario's [source] offers in the window (t0, t1] of a
 * run (Poisson: its rate; MMPP-2: the stationary mean; profile: the time average of its steps
 * and burst over the window). */
double tb_source_mean(const struct osn_net_source_cfg *s, double t0, double t1);
/* Whether the source can be scaled to a load: 0, or OSN_EXIT_ERROR (told, naming the key) when
 * it offers nothing in the window. */
int tb_source_check(const struct osn_net_cfg *c, double t0, double t1);
/* The --set values that make the source offer `factor` times the scenario's own traffic, every
 * rate multiplied (the MMPP switch rates, the step and burst times and the burst factor kept),
 * written as "KEY=VALUE" strings into out[0..n). Returns n (at most TB_SOURCE_SETS). */
#define TB_SOURCE_SETS 3
#define TB_SET_MAX     2048
int tb_source_sets(const struct osn_net_source_cfg *s, double factor,
                   char out[TB_SOURCE_SETS][TB_SET_MAX]);

/* testbed_proc.c */
/* Starts `argv` (argv[0] the binary) with its standard error, and unless `pipe_out` its
 * standard output too, to p->log; with `pipe_out` its standard output is read by tb_proc_ready.
 * The child dies with the testbed (PR_SET_PDEATHSIG). Returns 0, or -1 with errno. */
int tb_proc_start(struct tb_proc *p, char *const argv[], bool pipe_out);
/* Reads p's standard output until its "... listening on ADDR" line (copied to p->addr), for at
 * most `timeout` s. Returns 0; -1 when it ended or closed its output first, -2 on timeout,
 * -3 when *stop was set. */
int tb_proc_ready(struct tb_proc *p, double timeout, volatile sig_atomic_t *stop);
/* Waits up to `timeout` s for p to end by itself. Returns 1 when it has ended (reaped), 0. */
int tb_proc_wait(struct tb_proc *p, double timeout, volatile sig_atomic_t *stop);
/* SIGTERM, then up to `timeout` s to end, then SIGKILL; always reaps. Nothing if not running. */
void tb_proc_stop(struct tb_proc *p, double timeout);
/* Sets p's log file to DIR/NAME.log. */
void tb_proc_log(struct tb_proc *p, const char *dir, const char *name);
/* The last line of p's log, for an error message ("" if none). */
void tb_proc_last_line(const struct tb_proc *p, char *buf, size_t size);
/* "exit 0", "signal 9", ... */
void tb_proc_status_str(const struct tb_proc *p, char *buf, size_t size);

/* testbed_run.c: the core's stats interval (s), whose rows sample its controller's mode. */
#define TB_MODE_ROW 0.05
/* testbed_run.c: one load x control. Returns 0 with *row filled (row->ok false when an element
 * did not write its summary: the row says so); OSN_EXIT_ERROR when a node did not come up (told,
 * naming the element) or the run was interrupted. Every process it started has ended. */
int tb_run(const struct tb_cfg *cfg, struct tb_net *net, const char *control, double load, int k,
           int nruns, struct tb_row *row);

/* testbed_mpi.c: the ranks under mpirun or srun (one rank, and no MPI, otherwise). */
/* Joins the launcher's job, if any: cfg->rank and cfg->ranks. 0, or OSN_EXIT_ERROR (told). */
int tb_mpi_init(struct tb_cfg *cfg);
/* Places the elements on the ranks: each element named in node.rank (o, "NAME:RANK, ...";
 * NULL when not set) on its rank, the others round-robin (element i on rank i mod ranks); one
 * rank runs them all. 0, or OSN_EXIT_ERROR (told, naming node.rank and where it was set) for a
 * name that is no element of the network, a name given twice, or a rank the job does not have. */
struct osn_key_origin;
int tb_place(const struct tb_cfg *cfg, struct tb_net *net, const struct osn_key_origin *o);
/* Whether element i runs on this rank. */
bool tb_mine(const struct tb_cfg *cfg, const struct tb_net *net, int i);
/* Every rank's elements started so far (address, pid) to every rank, with each rank's status
 * (0 or an exit status); returns the first non-zero status of any rank, else 0. One rank:
 * returns `status`. */
int tb_mpi_share(const struct tb_cfg *cfg, struct tb_net *net, int status);
/* After a run: each rank's elements' ends and files (summary, stats rows, last log line) to
 * rank 0, which writes them into `dir` and sets the elements' ends. 0, or OSN_EXIT_ERROR. */
int tb_mpi_gather(const struct tb_cfg *cfg, struct tb_net *net, const char *dir);
/* --bind: "ADDR" for every rank, "A,B,..." one per rank, or "auto": this host's first
 * non-loopback IPv4 address (127.0.0.1 when it has none). Into buf; 0, or OSN_EXIT_ERROR (told,
 * naming --bind). */
int tb_bind(const char *spec, int rank, int ranks, char *buf, size_t size);
/* Leaves the job (every rank with its own status; no rank waits on another any more). */
void tb_mpi_finish(const struct tb_cfg *cfg, int status);

/* testbed_out.c */
void tb_table_header(FILE *f);
void tb_table_row(FILE *f, const struct tb_row *r);
struct tb_rows {
    const struct tb_cfg *cfg;
    const struct tb_row *r;
    int n;
};
int tb_csv_write(FILE *f, const void *rows, char *err, size_t errsize);
int tb_json_write(FILE *f, const void *rows, char *err, size_t errsize);

/* testbed_plot.c: whether gnuplot can draw a PNG here (else why, in err); and the plot of the
 * rows to `path` (written beside it, then renamed). 0, or OSN_EXIT_ERROR with err. */
int tb_plot_check(char *err, size_t errsize);
int tb_plot_write(const char *path, const struct tb_rows *rows, char *err, size_t errsize);

/* cmd_testbed.c */
int osn_cmd_testbed(int argc, char **argv);
void osn_cmd_testbed_usage(FILE *f);

#endif

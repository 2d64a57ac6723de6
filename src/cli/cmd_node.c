/*
 * `osn node`: one element of a scenario, for real, on UDP.
 *
 * Thin by design: parse the options, load the scenario (src/io/node_scenario.c), run the node
 * (src/node/) until its duration passes or SIGINT/SIGTERM, then write the summary. A signal ends
 * the node cleanly: the summary and the stats are still written, and the exit status is 0.
 */
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cmd_node.h"
#include "osn/err.h"
#include "osn/node_scenario.h"
#include "outputs.h"

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
    (void)sig;
    stop_requested = 1;
}

void osn_cmd_node_usage(FILE *f)
{
    fputs("Usage: osn node [SCENARIO.ini] [--set SECTION.KEY=VALUE]...\n"
          "                [--json FILE|-] [--stats FILE|-] [--trace FILE|-] [-q|--quiet]\n"
          "\n"
          "One element of a SIP network scenario, for real: a stateful proxy (edge, core)\n"
          "or a UAS on a UDP socket, running the transaction machines, the element code and\n"
          "the overload controllers of the network simulator on a monotonic clock. Each\n"
          "message waits in the element's buffer until a virtual CPU has spent its cost\n"
          "(the scenario's cost_* keys; 0 = real speed); the controller watches that queue.\n"
          "It runs until node.duration passes or SIGINT/SIGTERM, then writes its summary.\n"
          "\n"
          "node.element = uac is the load generator: it sends the scenario's [source]\n"
          "traffic (Poisson, MMPP-2 or profile arrivals, exponential hold, retrials,\n"
          "patience) to node.next_hop as the caller (INVITE with SDP, ACK, BYE after the\n"
          "hold, CANCEL when its patience runs out), takes the UAC's decisions of\n"
          "`osn sim`, and measures what it measures at the UAC (offered, goodput, failed\n"
          "by reason, abandoned, setup delay p50/p95/p99, retries). Calls\n"
          "start until node.duration (0: the scenario's time), then it drains until every\n"
          "call has ended. Its JSON says how far the schedule fell behind (lag_max,\n"
          "late_sends); a lag over 10 ms is said on standard error. See docs/node.md.\n"
          "\n"
          "Options:\n"
          "  --set SECTION.KEY=VALUE  override a scenario key; repeatable\n"
          "  --json FILE|-            the summary as JSON at the end\n"
          "  --stats FILE|-           one CSV row per stats interval (cumulative counts):\n"
          "                           t,calls_in,calls_forwarded,calls_ok,rejected_503,\n"
          "                           dropped,retrans_absorbed,queue,mode\n"
          "                           uac: the counts of each interval,\n"
          "                           t,started,retries,answered,failed,failed_timeout,\n"
          "                           failed_rejected,failed_other,live,lag_max_ms,\n"
          "                           abandoned,shed_local\n"
          "  --trace FILE|-           uac: one row per INVITE sent,\n"
          "                           attempt,call,t_sched,t_sent (s since the start)\n"
          "  -q, --quiet              no summary table, no progress line (the listening\n"
          "                           line is still printed)\n"
          "  -h, --help               show this help\n"
          "\n"
          "Scenario keys: a network scenario of `osn sim` (see osn sim --help), of which\n"
          "this element's [server NAME] section, [control] (the server half at the core,\n"
          "the client half at the edge, RFC 7339 oc parameters in the top Via) and [sip]\n"
          "act, plus [node] (all keys: docs/scenario.md); defaults in brackets:\n",
          f);
    osn_cli_node_keys(f);
    fputs("\n"
          "Example (three terminals, or background jobs):\n"
          "  osn node examples/collapse.ini --set node.element=uas --set "
          "node.listen=127.0.0.1:5072\n"
          "  osn node examples/collapse.ini --set node.element=core \\\n"
          "      --set node.listen=127.0.0.1:5071 --set node.next_hop=127.0.0.1:5072\n"
          "  osn node examples/collapse.ini --set node.element=edge \\\n"
          "      --set node.listen=127.0.0.1:5070 --set node.next_hop=127.0.0.1:5071\n"
          "  sipp -sn uac 127.0.0.1:5070 -r 100 -m 1000 ...   (or the load generator:)\n"
          "  osn node examples/collapse.ini --set node.element=uac \\\n"
          "      --set node.listen=127.0.0.1:0 --set node.next_hop=127.0.0.1:5070\n"
          "\n"
          "Output: once its sockets are bound the node prints one line, flushed, with the\n"
          "ports it bound (those the kernel chose for port 0), even with -q:\n"
          "  osn node edge listening on 127.0.0.1:40123 (udp), metrics 127.0.0.1:40124,\n"
          "  next hop 127.0.0.1:5071\n"
          "(one line; no metrics part without metrics, no next hop part for a uas). It goes\n"
          "to standard output, or to standard error when --json - or --stats - takes\n"
          "standard output. A script starts the node with port 0 and reads this line\n"
          "instead of guessing a free port. Progress goes to standard error each stats\n"
          "interval, \"osn node ELEMENT: ...\": one line rewritten on a terminal, a line\n"
          "appended otherwise (so several nodes' logs can be told apart); the summary\n"
          "table to standard output at the end; the JSON summary's listen and metrics are\n"
          "the addresses bound.\n"
          "\n"
          "Exit status: 0 after a clean stop, 2 on any error (naming the file, line and key).\n",
          f);
}

struct node_out {
    const struct osn_node_scenario *sc;
    const struct osn_node_stats *st;
};

static int write_json(FILE *f, const void *ctx, char *err, size_t errsize)
{
    const struct node_out *o = ctx;
    return osn_node_report_json_write(f, o->sc, o->st, err, errsize);
}

int osn_cmd_node(int argc, char **argv)
{
    const char *json = NULL, *stats = NULL, *trace = NULL;
    bool quiet = false;
    const struct osn_cli_opt opts[] = {
            {"--json", NULL, OSN_CLI_OUTPUT, &json},
            {"--stats", NULL, OSN_CLI_OUTPUT, &stats},
            {"--trace", NULL, OSN_CLI_OUTPUT, &trace},
            {"--quiet", "-q", OSN_CLI_FLAG, &quiet},
            {NULL, NULL, 0, NULL},
    };
    struct osn_cli_args a;
    struct osn_node_scenario *sc = NULL;
    struct osn_node_stats st = {0};
    char err[768];
    int status = OSN_EXIT_ERROR;

    if (osn_cli_parse("node", argc, argv, opts, 0, &a) != 0)
        return OSN_EXIT_ERROR;
    if (a.help) {
        osn_cmd_node_usage(stdout);
        free(a.sets);
        return 0;
    }
    struct osn_cli_output outs[3] = {{"--json", json, write_json, {0}},
                                     {"--stats", stats, NULL, {0}},
                                     {"--trace", trace, NULL, {0}}};
    sc = calloc(1, sizeof *sc);
    if (!sc) {
        osn_cli_die("node", "out of memory");
        goto out;
    }
    if (osn_node_scenario_load(sc, a.scenario, a.sets, a.nsets, err, sizeof err) != 0) {
        osn_cli_die("node", "%s", err);
        goto out;
    }
    if (stats && !(sc->cfg.stats = osn_cli_output_open("node", &outs[1])))
        goto out;
    if (trace && sc->cfg.element != OSN_NODE_UAC) {
        osn_cli_die("node", "--trace: only the load generator (node.element = uac) writes one");
        goto out;
    }
    if (trace && !(sc->cfg.trace = osn_cli_output_open("node", &outs[2])))
        goto out;
    sc->cfg.console = quiet ? NULL : stderr;
    sc->cfg.console_lines = !isatty(STDERR_FILENO);
    /* The listening line is the handshake of a script that started the node on port 0: always
     * printed, on standard output unless --json - or --stats - keeps that for their data. */
    sc->cfg.ready = osn_cli_outputs_to_stdout(outs, 3) ? stderr : stdout;
    stop_requested = 0;
    sc->cfg.stop = &stop_requested;
    struct sigaction sa = {0};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    /* A reader that goes away (a closed `--stats -` pipe, a scraper of the metrics port) makes
     * a write fail with EPIPE; SIGPIPE's default action would end the node without a summary. */
    signal(SIGPIPE, SIG_IGN);
    if (osn_node_run(&sc->cfg, &st, err, sizeof err) != 0) {
        osn_cli_die("node", "%s", err);
        goto out;
    }
    struct node_out ctx = {sc, &st};
    if (osn_cli_outputs_write("node", outs, 3, &ctx) != 0)
        goto out;
    if (!quiet && !osn_cli_outputs_to_stdout(outs, 3))
        osn_node_report_table(stdout, sc, &st);
    if (osn_cli_stdout_done("node") != 0 || osn_cli_outputs_commit("node", outs, 3) != 0)
        goto out;
    status = 0;
out:
    osn_cli_outputs_abort(outs, 3);
    osn_node_scenario_release(sc);
    free(sc);
    free(a.sets);
    return status;
}

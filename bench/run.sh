#!/usr/bin/env bash
# Benchmark of the structured solver against a SciPy peer (run by `make bench`).
#
# For R = 1e3 .. 1e6 it runs build/bench_solve R (OSN, one R per process) and
# bench/scipy_peer.py R (the same chain as a sparse matrix, solved by SuperLU), then prints one
# table with both and the ratio of the peer's time to ours. Both solve the two-loop
# M|M|1|<L,H>|<H,R> model with L = R/4, H = R/2, lambda = 1.2, lambda' = 0.6, mu = 1, and both
# print P0 and T_ret, which must agree. The peer is skipped, with a note, when Debian's
# python3-scipy is missing (scripts/deps.sh bench installs it). It measures; it never fails on
# time. OSN_BUILD names the build directory (default build); OSN_BENCH_R overrides the R list.
# OSN_BENCH_FIGURES=FILE: the main figures also go to FILE as CSV (what, osn, peer, peer/osn),
# which `make bench` hands to scripts/perf_record.py for docs/performance.md's dated table.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

build=${OSN_BUILD:-build}
bench="$build/bench_solve"
peer_py=/usr/bin/python3 # Debian's python, which has python3-scipy; the PATH one may not
read -r -a sizes <<<"${OSN_BENCH_R:-1e3 1e4 1e5 1e6}"

if [[ ! -x "$bench" ]]; then
    echo "run.sh: $bench not found; build first (make, or ninja -C $build bench_solve)" >&2
    exit 1
fi
have_peer=1
if ! "$peer_py" -c 'import scipy' 2>/dev/null; then
    have_peer=0
fi

figs=${OSN_BENCH_FIGURES:-}
[[ -n "$figs" ]] && echo "what,osn,peer,peer/osn" >"$figs"
# figure WHAT OSN [PEER [RATIO]]: one row of the figures' CSV (when asked for); "-" when absent.
figure() {
    [[ -n "$figs" ]] || return 0
    printf '"%s","%s","%s","%s"\n' "$1" "$2" "${3:--}" "${4:--}" >>"$figs"
}

# Value of key=... in a line of key=value pairs, or "-".
kv() {
    local v
    v=$(tr ' ' '\n' <<<"$1" | sed -n "s/^$2=//p")
    echo "${v:--}"
}

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)
echo "OSN solver benchmark: two-loop M|M|1|<L,H>|<H,R>, L=R/4, H=R/2, lambda=1.2, lambda'=0.6, mu=1"
echo "machine: ${cpu:-unknown CPU}, nproc=$(nproc), $(uname -sr)"
if ((have_peer)); then
    echo "peer: SciPy $("$peer_py" -c 'import scipy; print(scipy.__version__)') spsolve (SuperLU), one pinned state"
else
    echo "peer: skipped, $peer_py has no scipy (install it with: scripts/deps.sh bench)"
fi
echo

ours=()
theirs=()
for r in "${sizes[@]}"; do
    line=$("$bench" "$r")
    echo "$line"
    ours+=("$line")
    if ((have_peer)); then
        line=$("$peer_py" bench/scipy_peer.py "$r" || echo "scipy_peer R=$r failed")
        echo "$line"
        theirs+=("$line")
    else
        theirs+=("")
    fi
done

echo
printf '%9s %9s | %10s %10s %8s %7s | %10s %10s %10s %8s | %8s | %-14s %s\n' \
    R states "osn s" "states/s" "RSS MiB" "B/state" "scipy s" "solve s" "states/s" "RSS MiB" \
    "peer/osn" "T_ret osn" "T_ret scipy"
for i in "${!ours[@]}"; do
    o=${ours[$i]}
    p=${theirs[$i]}
    os=$(kv "$o" median_s)
    ps=$(kv "$p" median_s)
    ratio=-
    if [[ "$os" != - && "$ps" != - ]]; then
        ratio=$(awk -v a="$ps" -v b="$os" 'BEGIN { printf "%.1f", a / b }')
    fi
    bps=$(awk -v m="$(kv "$o" peak_rss_mib)" -v n="$(kv "$o" states)" \
        'BEGIN { if (n + 0 > 0) printf "%.0f", m * 1048576 / n; else print "-" }')
    printf '%9s %9s | %10s %10s %8s %7s | %10s %10s %10s %8s | %8s | %-14s %s\n' \
        "$(kv "$o" R)" "$(kv "$o" states)" "$os" "$(kv "$o" states_per_s)" \
        "$(kv "$o" peak_rss_mib)" "$bps" "$ps" "$(kv "$p" solve_s)" "$(kv "$p" states_per_s)" \
        "$(kv "$p" peak_rss_mib)" "$ratio" "$(kv "$o" T_ret)" "$(kv "$p" T_ret)"
    figure "exact solve R=$(kv "$o" R) ($(kv "$o" states) states)" "$os s" \
        "$([[ "$ps" != - ]] && echo "SciPy $ps s")" "$ratio"
done
# The states/s curve over R: flat means the cost per state does not grow with R.
first=${ours[0]}
last=${ours[${#ours[@]}-1]}
awk -v a="$(kv "$first" states_per_s)" -v b="$(kv "$last" states_per_s)" \
    -v ra="$(kv "$first" R)" -v rb="$(kv "$last" R)" 'BEGIN {
    if (a + 0 > 0 && b + 0 > 0)
        printf "states/s at R=%s over states/s at R=%s: %.2f (1 = a flat cost per state)\n", ra, rb, a / b }'
echo
echo "Times are medians of 3..50 repeats (at least 0.5 s in all) of one whole solve; 'scipy s' is"
echo "assembly + spsolve + measures, 'solve s' spsolve alone; peer/osn > 1 means OSN is faster."
echo "These machines are shared and noisy (timings vary by 10-30% between runs): read the figures"
echo "as medians and orders of magnitude. The peer's RSS includes about 40 MiB of Python + SciPy;"
echo "B/state is OSN's whole-process peak RSS over the states (small R: mostly the program itself)."

# Fluid model: one simulated hour at 50 ms slots (target: well under 0.1 s).
echo
if [[ -x "$build/bench_fluid" ]]; then
    line=$("$build/bench_fluid")
    echo "$line"
    figure "osn fluid, one hour at 50 ms slots" "$(kv "$line" median_s) s"
else
    echo "run.sh: $build/bench_fluid not found; build first (ninja -C $build bench_fluid)" >&2
fi

# ---- Python module: a solved point through libosn in the process, against a process per point ----
echo
if [[ -e "$build/libosn.so" && -x "$build/osn" ]]; then
    OSN_LIBRARY="$build/libosn.so" PYTHONPATH="$(dirname "${BASH_SOURCE[0]}")/../python" \
        python3 "$(dirname "${BASH_SOURCE[0]}")/python_module.py" "$build/osn"
else
    echo "run.sh: $build/libosn.so not found; Python module skipped (ninja -C $build osn_shared)"
fi

# ---- The return time's distribution: osn solve --dist-tret beside SciPy's expm_multiply ----
# The same two-loop chains (L = R/4, H = R/2); OSN's time is the whole `osn solve` run (solve,
# distribution, quantiles, 201-point curve), the peer's is assembly + expm_multiply on 201
# points up to OSN's p99.9 (bench/tret_peer.py). Both print p50 and p95, which must agree to the
# peer's grid (its quantiles are interpolated).
echo
if [[ -x "$build/osn" ]]; then
    echo "Return-time distribution (two-loop, L=R/4, H=R/2, lambda=1.2, lambda'=0.6, mu=1):"
    printf "%8s %9s %14s %14s %9s %14s %14s %7s\n" R "osn s" "osn p50" "osn p95" "scipy s" \
        "scipy p50" "scipy p95" "peer/osn"
    for R in ${OSN_BENCH_TRET_R:-1000 10000}; do
        tdir=$(mktemp -d)
        t0=$(date +%s.%N)
        "$build/osn" solve --set thresholds.L=$((R / 4)) --set thresholds.H=$((R / 2)) \
            --set thresholds.R="$R" --dist-tret "$tdir/c.csv" --json "$tdir/j.json" -q
        t1=$(date +%s.%N)
        read -r p50 p95 <<<"$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1]));
print(j["T_ret_p50"], j["T_ret_p95"])' "$tdir/j.json")"
        tmax=$(tail -n1 "$tdir/c.csv" | cut -d, -f1)
        ot=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
        if [[ $have_peer == 1 ]]; then
            p=$("$peer_py" "$(dirname "${BASH_SOURCE[0]}")/tret_peer.py" "$R" "$tmax")
            printf "%8s %9s %14.8g %14.8g %9.3f %14.8g %14.8g %7.1f\n" "$R" "$ot" "$p50" "$p95" \
                "$(kv "$p" seconds)" "$(kv "$p" p50)" "$(kv "$p" p95)" \
                "$(awk -v a="$(kv "$p" seconds)" -v b="$ot" 'BEGIN { print a / b }')"
        else
            printf "%8s %9s %14.8g %14.8g %9s %14s %14s %7s\n" "$R" "$ot" "$p50" "$p95" - - - -
        fi
        rm -rf "$tdir"
    done
else
    echo "run.sh: $build/osn not found; return-time distribution skipped"
fi

# ---- osn optimize: the whole (L, H) search, exponential and constant service ----
echo
if [[ -x "$build/bench_optimize" ]]; then
    "$build/bench_optimize" ${OSN_BENCH_OPT_R:-100 200}
else
    echo "run.sh: $build/bench_optimize not found; skipped (ninja -C $build bench_optimize)"
fi

# ---- osn sim: the two-loop M|M|1 node, 1e8 events on one and two threads, SimPy peer ----
# bench_sim runs L=10 H=15 R=20, lambda=1.2, lambda'=0.6, mu=1 in 4 replications; the peer is
# the same node in SimPy (Debian python3-simpy) for a shorter run (OSN_BENCH_SIMPY_EVENTS,
# default 1e6); the ratio compares events per second on one thread.
echo
if [[ -x "$build/bench_sim" ]]; then
    sim_events=${OSN_BENCH_SIM_EVENTS:-1e8}
    echo "OSN simulator benchmark: two-loop M|M|1 node, L=10 H=15 R=20, lambda=1.2 lambda'=0.6 mu=1, $sim_events events"
    sim1=$("$build/bench_sim" "$sim_events" 1)
    echo "$sim1"
    sim2=$("$build/bench_sim" "$sim_events" 2)
    echo "$sim2"
    if "$peer_py" -c 'import simpy' 2>/dev/null || "$peer_py" -c 'import SimPy' 2>/dev/null; then
        peer=$("$peer_py" bench/simpy_peer.py "${OSN_BENCH_SIMPY_EVENTS:-1e6}" || echo "simpy_peer failed")
        echo "$peer"
        awk -v a="$(kv "$sim1" events_per_s)" -v b="$(kv "$sim2" events_per_s)" \
            -v p="$(kv "$peer" events_per_s)" 'BEGIN {
            printf "osn sim: %.1f M events/s on 1 thread, %.1f M events/s on 2 (%.1f per thread)\n", a / 1e6, b / 1e6, b / 2e6
            if (p + 0 > 0) printf "SimPy: %.3g M events/s; osn/SimPy = %.0f (one thread each)\n", p / 1e6, a / p }'
        figure "osn sim, the queue, events/s on 1 thread" "$(kv "$sim1" events_per_s)" \
            "SimPy $(kv "$peer" events_per_s)" \
            "$(awk -v a="$(kv "$sim1" events_per_s)" -v p="$(kv "$peer" events_per_s)" \
                'BEGIN { if (p + 0 > 0) printf "%.0f", a / p; else print "-" }')"
        figure "osn sim, the queue, events/s on 2 threads" "$(kv "$sim2" events_per_s)"
    else
        echo "peer: skipped, $peer_py has neither simpy nor SimPy (install it with: scripts/deps.sh bench)"
        figure "osn sim, the queue, events/s on 1 thread" "$(kv "$sim1" events_per_s)"
        figure "osn sim, the queue, events/s on 2 threads" "$(kv "$sim2" events_per_s)"
    fi
else
    echo "run.sh: $build/bench_sim not found; skipped (ninja -C $build bench_sim)"
fi

# ---- SIP transaction layer: full INVITE client+server exchanges through the state machines ----
echo
if [[ -x "$build/bench_sip" ]]; then
    line=$("$build/bench_sip")
    echo "$line"
    figure "SIP transactions, INVITE exchanges/s" "$(kv "$line" exchanges_per_s)"
else echo "run.sh: $build/bench_sip not found; skipped (ninja -C $build bench_sip)"; fi

# ---- SIP message parser: parse + identities of SIPp's INVITE, beside libosip2 in the same run ----
echo
if [[ -x "$build/bench_sip_parse" ]]; then
    out=$("$build/bench_sip_parse")
    echo "$out"
    figure "SIP parse + identities, messages/s" \
        "$(awk '/^osn_sip_wire_parse/ { print $(NF-3) }' <<<"$out")" \
        "libosip2 $(awk '/^libosip2/ { print $(NF-3) }' <<<"$out")" \
        "$(awk '/^ratio osn/ { print $(NF-1) }' <<<"$out")"
else echo "run.sh: $build/bench_sip_parse not found; skipped (ninja -C $build bench_sip_parse)"; fi

# ---- ctl: client decisions per second (RFC 7339 loss 80/20, RFC 7415 GCRA) and loss server ----
echo
if [[ -x "$build/bench_ctl" ]]; then
    out=$("$build/bench_ctl" "${OSN_BENCH_CTL_N:-2e7}")
    echo "$out"
    figure "ctl client decisions/s, RFC 7339 loss" \
        "$(kv "$(grep loss_client <<<"$out")" decisions_per_s)"
    figure "ctl client decisions/s, RFC 7415 rate" \
        "$(kv "$(grep rate_client <<<"$out")" decisions_per_s)"
else echo "run.sh: $build/bench_ctl not found; skipped (ninja -C $build bench_ctl)"; fi

# ---- sim: SIP network simulator, simulated SIP messages per second on examples/fanin.ini ----
# Its two replications on one thread, then on one thread each (this machine's cores); the median
# of five runs of each, with the CPU time the hypervisor took meanwhile (bench/fanin.py).
# Messages are those the elements processed, warm-up included.
echo
if [[ -x "$build/osn" ]]; then
    out=$("$peer_py" bench/fanin.py "$build/osn" "${OSN_BENCH_FANIN_RUNS:-5}")
    echo "$out"
    while read -r t v; do
        figure "osn sim fanin.ini, M SIP messages/s on $t thread(s)" "$v"
    done < <(sed -n 's/^net sim fanin.ini, \([0-9]*\) thread(s): .* wall: \([0-9.e+]*\) M msgs\/s.*/\1 \2/p' <<<"$out")
    # Instructions per message, which unlike the wall time does not depend on the neighbours:
    # one replication of 40 simulated seconds under cachegrind (about 20 s; skipped without
    # valgrind, or with OSN_BENCH_NO_CACHEGRIND=1).
    if command -v valgrind >/dev/null && [[ -z "${OSN_BENCH_NO_CACHEGRIND:-}" ]]; then
        cg=$(mktemp -d)
        if ! valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file="$cg/out" \
            "$build/osn" sim examples/fanin.ini --set net.replications=1 --set net.time=5 \
            --threads 1 --json "$cg/run.json" >/dev/null 2>"$cg/err"; then
            echo "run.sh: the cachegrind run failed; its last lines:"
            tail -n 3 "$cg/err"
        else
            python3 - "$cg" <<'PY'
import json, re, sys
d = sys.argv[1]
ir = int(re.search(r"I\s+refs:\s+([\d,]+)", open(d + "/err").read()).group(1).replace(",", ""))
n = json.load(open(d + "/run.json"))["messages"]
print("net sim fanin.ini under cachegrind (1 replication, 40 s): %d instructions / %d SIP messages"
      " = %.0f instructions per message" % (ir, n, ir / n))
PY
        fi
        rm -rf "$cg"
    fi
else
    echo "run.sh: $build/osn not found; skipped"
fi

# ---- osn node against Kamailio: CPU per call (user and kernel), the machine's UDP limit, and
# the highest call rate each holds for 60 s ----
# SIPp uac -> proxy -> SIPp uas on 127.0.0.1 (needs sip-tester and kamailio, which
# scripts/deps.sh installs). Kamailio runs with TLSF, -m 8192, a 4 MB receive buffer and as many workers as the node
# (bench/node_lib.sh). bench/node_cpu.sh: 5 interleaved pairs at 1,000 calls/s for 20 s, every
# ratio from all the pairs (median and range), the node's datagrams per CPU-second beside
# bench/udp_limit.c's (built as $build/udp_limit); bench/node_maxrate.sh: rising rates, 60 s
# each, driven by OSN's generator, and bench/gen_maxrate.sh: the generators alone (bounds
# below; OSN_BENCH_NO_NODE=1 skips them); BENCH_SHORT=1 tries both scripts in about a minute and a half
# (low rates, short runs: their figures are for checking the scripts, not for quoting).
echo
if [[ -n "${OSN_BENCH_NO_NODE:-}" ]]; then
    echo "run.sh: osn node against Kamailio skipped (OSN_BENCH_NO_NODE)"
elif [[ -x "$build/osn" ]] && command -v sipp >/dev/null && command -v kamailio >/dev/null; then
    UDP_LIMIT="$build/udp_limit" bash "$(dirname "${BASH_SOURCE[0]}")/node_cpu.sh" "$build/osn"
    echo
    # The proxies' race driven by OSN's generator (SIPp was the limit at 12,000 calls/s;
    # GEN=sipp gives the SIPp-driven race), then the generators' own race, OSN's against SIPp's
    # uac, each straight to an osn uas (issue 30). Worst cases: 5 rates x 2 proxies and 6 rates
    # x 2 generators, steps of at most 185 s: 31 and 37 minutes; each contestant leaves at its
    # first rate not held, so about 12 minutes each where the limits lie near 12,000 and 24,000.
    UDP_LIMIT="$build/udp_limit" GEN=osn PROXIES="osn kamailio" \
        RATES="${OSN_BENCH_NODE_RATES:-4000 8000 12000 16000 24000}" \
        bash "$(dirname "${BASH_SOURCE[0]}")/node_maxrate.sh" "$build/osn"
    echo
    UDP_LIMIT="$build/udp_limit" bash "$(dirname "${BASH_SOURCE[0]}")/gen_maxrate.sh" "$build/osn"
else
    echo "run.sh: osn node against Kamailio skipped (needs $build/osn, sipp and kamailio)"
fi

# ---- osn node as a proxy and as the generator: instructions (and the proxy's system calls) per
# call (issues 34 and 30) ----
# The counts a busy machine does not move: the edge under callgrind, then under strace -c,
# between OSN's generator (300 calls/s for 5 s) and an osn uas (bench/node_callgrind.sh;
# skipped without valgrind, or with OSN_BENCH_NO_NODE=1).
echo
if [[ -n "${OSN_BENCH_NO_NODE:-}" ]]; then
    echo "run.sh: osn node callgrind skipped (OSN_BENCH_NO_NODE)"
elif [[ -x "$build/osn" ]] && command -v valgrind >/dev/null && command -v sipp >/dev/null; then
    bash "$(dirname "${BASH_SOURCE[0]}")/node_callgrind.sh" "$build/osn" || echo "run.sh: node_callgrind.sh failed"
    # The generator's own instructions per call (issue 30), the same way, then SIPp's built-in
    # uac's at the same rate and calls, and the ratio SIPp/osn.
    bash "$(dirname "${BASH_SOURCE[0]}")/gen_callgrind.sh" "$build/osn" || echo "run.sh: gen_callgrind.sh failed"
else
    echo "run.sh: osn node callgrind skipped (needs $build/osn, valgrind and sipp)"
fi

# Parameter studies over MPI ranks: 1 and 2 ranks, parallel efficiency (bench/study_mpi.sh).
echo
OSN_BUILD="$build" bash "$(dirname "${BASH_SOURCE[0]}")/study_mpi.sh"

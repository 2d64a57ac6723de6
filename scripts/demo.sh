#!/usr/bin/env bash
# A tour of OSN in a few minutes (run by `make demo`): exact analysis, simulation, the fluid model
# and the real node.
#
#   1. Solves a reference scenario (examples/two_loop_*.ini, or the same model given with --set
#      flags when no example is there) and prints the readable table.
#   2. Writes the same results as demo/solve.json and demo/solve.csv, and the stationary
#      distribution p(mode, n) as demo/dist.csv.
#   3. Sweeps the offered load lambda from 0.3 to 3 on the two-loop model L=5, H=10, R=20, with
#      the overload rate lambda' = lambda/2 and mu = 1, and prints T_ret, T_cyc and P2 per load
#      (also kept as demo/sweep.csv).
#   4. Simulates the reference scenario with osn sim and prints the exact and the simulated
#      values side by side: the two ways OSN answers, checking each other.
#   5. Runs the fluid model of a 60%-loaded server hit by a 2 s burst (osn fluid) and plots
#      its queue into demo/fluid-burst.png when gnuplot is there.
#   6. Simulates a SIP network (source -> edge -> core -> UAS) at 3x the core's capacity without
#      overload control, then with RFC 7339 loss-based and RFC 7415 rate-based control.
#   7. Hits the same network, at 0.7x, with a 3 s burst and a deep core buffer: without control
#      it never drains; prsm (originals first, copies last) recovers.
#   8. Runs that network for real: three `osn node` processes on 127.0.0.1 driven by SIPp at 3x
#      the core's capacity, without control and with loss (skipped when SIPp is missing).
#
# Usage: scripts/demo.sh [PATH/TO/osn]   (default build/osn)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

osn=${1:-build/osn}
if [[ ! -x "$osn" ]]; then
    echo "demo.sh: $osn not found; run make first" >&2
    exit 1
fi
mkdir -p demo

# The reference row lambda=1.2, L=5, H=10 of docs/models.md, as a file when there is one.
model_sets=(--set model.kind=two-loop --set thresholds.R=20 --set service.rate=1)
scenario=()
for f in examples/two_loop_l1.2_5_10.ini examples/two_loop_*.ini; do
    if [[ -f "$f" ]]; then
        scenario=("$f")
        break
    fi
done
if ((${#scenario[@]} == 0)); then
    scenario=("${model_sets[@]}" --set thresholds.L=5 --set thresholds.H=10
        --set arrivals.rate=1.2 --set arrivals.overload_rate=0.6)
fi

echo "== 1. osn solve ${scenario[*]}"
echo
"$osn" solve "${scenario[@]}"
echo

echo "== 2. the same, written to files"
"$osn" solve "${scenario[@]}" --json demo/solve.json --csv demo/solve.csv \
    --dist demo/dist.csv >/dev/null
echo "demo/solve.json, demo/solve.csv (the measures) and demo/dist.csv ($(($(wc -l <demo/dist.csv) - 1)) states, p(mode,n))"
echo

# Column of a CSV header (1-based) whose name is one of the given names, or 0.
column_of() {
    local header=$1
    shift
    awk -F, -v names="$*" 'BEGIN { n = split(names, want, " ") }
        { for (i = 1; i <= NF; i++) for (j = 1; j <= n; j++) if ($i == want[j]) { print i; exit } }
        END { }' <<<"$header"
}

echo "== 3. load sweep: L=5, H=10, R=20, mu=1, lambda' = lambda/2"
echo
sweep=demo/sweep.csv
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
echo "lambda,T_ret,T_cyc,P2" >"$sweep.tmp"
printf '%8s %14s %14s %14s\n' lambda T_ret T_cyc P2
for lam in 0.3 0.6 0.9 1.2 1.5 2 3; do
    half=$(awk -v l="$lam" 'BEGIN { printf "%.10g", l / 2 }')
    "$osn" solve "${model_sets[@]}" --set thresholds.L=5 --set thresholds.H=10 \
        --set arrivals.rate="$lam" --set arrivals.overload_rate="$half" --csv "$tmp" >/dev/null
    header=$(head -n1 "$tmp")
    row=$(sed -n 2p "$tmp")
    c_ret=$(column_of "$header" T_ret)
    c_cyc=$(column_of "$header" T_cyc)
    c_p2=$(column_of "$header" P2)
    if [[ -z "$c_ret" || -z "$c_cyc" || -z "$c_p2" ]]; then
        echo "demo.sh: $osn wrote no T_ret/T_cyc/P2 columns: $header" >&2
        exit 1
    fi
    IFS=, read -r -a f <<<"$row"
    awk -v l="$lam" -v a="${f[c_ret - 1]}" -v b="${f[c_cyc - 1]}" -v c="${f[c_p2 - 1]}" \
        'BEGIN { printf "%8s %14.6g %14.6g %14.6g\n", l, a, b, c }'
    echo "$lam,${f[c_ret - 1]},${f[c_cyc - 1]},${f[c_p2 - 1]}" >>"$sweep.tmp"
done
mv "$sweep.tmp" "$sweep"
echo

# The narrative quotes the sweep it follows, so its numbers are this run's.
read -r ret_lo ret_hi p2_lo p2_hi lam_lo lam_hi cyc_min lam_min < <(awk -F, '
    NR == 2 { ret_lo = $2; p2_lo = $4; lam_lo = $1; cyc_min = $3; lam_min = $1 }
    NR > 1 {
        ret_hi = $2; p2_hi = $4; lam_hi = $1
        if ($3 + 0 < cyc_min + 0) { cyc_min = $3; lam_min = $1 }
    }
    END {
        printf "%.3g %.3g %.2g %.2g %s %s %.3g %s\n", ret_lo, ret_hi, p2_lo, p2_hi, lam_lo,
            lam_hi, cyc_min, lam_min
    }' "$sweep")

cat <<EOF
What this shows. A server that goes into overload control when its queue reaches H = 10 and
leaves it when the queue has drained to L = 5 (in control it accepts only half the traffic, and
it discards everything while the queue drains from R = 20 back to H). Times are in mean service
times (mu = 1):

- T_ret, the mean time from the onset of overload control back to normal operation, grows with
  the load, from $ret_lo at lambda = $lam_lo to $ret_hi at lambda = $lam_hi: the heavier the
  traffic, the longer the server stays throttled once it starts.
- T_cyc, the mean time between two onsets, is huge at light load (overload is rare), falls to a
  minimum of $cyc_min at lambda = $lam_min, then grows again: at heavy load a cycle is almost all
  return time (T_cyc - T_ret, the normal period, shrinks to a few service times).
- P2, the share of time spent discarding, goes from $p2_lo at lambda = $lam_lo to $p2_hi at
  lambda = $lam_hi: negligible at light load, large once even the halved traffic exceeds the
  service rate.

The sweep is in demo/sweep.csv; the reference solve is in demo/solve.json, demo/solve.csv and
demo/dist.csv.
EOF

echo
echo "== 4. the same model simulated: osn sim ${scenario[*]} (10 replications of 2e4 s)"
echo
"$osn" solve "${scenario[@]}" --json demo/exact.json -q
"$osn" sim "${scenario[@]}" --set sim.time=20000 --set sim.replications=10 --json demo/sim.json -q
python3 - demo/exact.json demo/sim.json <<'PY'
import json, sys
ex, si = (json.load(open(f)) for f in sys.argv[1:3])
print("  %-12s %14s %14s %12s  %s" % ("measure", "exact", "simulated", "+- (95%)", "inside?"))
for k in ["P0", "P1", "P2", "N_mean", "T_ret", "T_ret_sd", "T_cyc", "theta"]:
    e, s, h = float(ex[k]), float(si[k]), float(si[k + "_ci"])
    print("  %-12s %14.6g %14.6g %12.2g  %s" % (k, e, s, h, "yes" if abs(e - s) <= h else "no"))
PY
echo
echo "About one in twenty rows may say 'no' by chance: these are 95% intervals."

echo
echo "== 5. the fluid model: a 2 s burst tips a 60%-loaded server into lasting overload"
echo
plot=()
command -v gnuplot >/dev/null 2>&1 && plot=(--plot demo/fluid-burst.png)
"$osn" fluid examples/fluid-burst-2s.ini --csv demo/fluid-burst.csv "${plot[@]}"
echo
echo "The time series is in demo/fluid-burst.csv${plot:+, the plot in demo/fluid-burst.png}."
echo "The same server recovers from a 0.5 s burst: osn fluid examples/fluid-burst.ini"

echo
echo "== 6. a SIP network at 3x its core's capacity: osn sim examples/collapse.ini"
echo
for kind in none loss rate; do
    "$osn" sim examples/collapse.ini --set control.kind="$kind" --json "demo/net-$kind.json" -q
done
python3 - demo/net-none.json demo/net-loss.json demo/net-rate.json <<'PY'
import json, sys
print("  %-28s %10s %10s %10s %12s" % ("control", "offered", "goodput", "capacity", "p99 setup"))
names = {"none": "none (buffer overflow only)", "loss": "loss (RFC 7339, 80/20)",
         "rate": "rate (RFC 7415 bucket)"}
for f in sys.argv[1:]:
    d = json.load(open(f))
    kind = f.split("net-")[1].split(".")[0]
    print("  %-28s %10.0f %10.1f %10.1f %11.3gs" % (names[kind], d["offered"], d["goodput"],
          d["capacity"], d["setup_delay_p99"]))
PY
echo
echo "Goodput counts calls set up before Timer B. Without control the core's queue delay passes"
echo "T1, retransmissions take its CPU and almost no call completes (congestion collapse); both"
echo "hop-by-hop controls keep goodput near capacity. Results: demo/net-*.json."

echo
echo "== 7. a 3 s burst and a deep buffer: osn sim examples/burst.ini"
echo
for kind in none prsm; do
    "$osn" sim examples/burst.ini --set control.kind="$kind" --json "demo/burst-$kind.json" -q
done
python3 - demo/burst-none.json demo/burst-prsm.json <<'PY'
import json, sys
print("  %-36s %10s %10s %12s %10s" % ("control", "offered", "goodput", "mean setup", "core util"))
names = {"none": "none", "prsm": "prsm (originals first, copies last)"}
for f in sys.argv[1:]:
    d = json.load(open(f))
    kind = f.split("burst-")[1].split(".")[0]
    print("  %-36s %10.1f %10.1f %11.3gs %10.2f" % (names[kind], d["offered"], d["goodput"],
          d["setup_delay_mean"], d["core_util"]))
PY
echo
echo "0.7x the core's capacity with 3x for 3 s at t = 2 s and 50 000 messages of core buffer,"
echo "measured in [35, 45] s. Without control the burst leaves the core saturated by copies for"
echo "good; prsm drains it and is back at light load. Results: demo/burst-*.json; the picture:"
echo "scripts/burst_trace.sh."

echo
echo "== 8. the same control for real: osn node on 127.0.0.1, driven by SIPp"
echo
# SIPp uac -> osn node edge -> osn node core -> osn node uas, examples/node_collapse.ini (core
# capacity 200 calls/s) offered 3x for 15 s, without control and with loss. Every process is
# ours, on loopback, bounded by `timeout` and stopped by pid; skipped without SIPp.
if ! command -v sipp >/dev/null; then
    echo "  skipped: SIPp (sip-tester) is not installed (scripts/deps.sh installs it)"
    exit 0
fi
# Ports: every process binds its own and none is guessed. Each node binds port 0 and prints the
# port it got on its listening line (stdout), read here before the next one starts; SIPp, given
# no -p, -cp or -mp, takes the first free ports itself (bind, else the next port).
ndir=$(mktemp -d)
node_pids=()
exec {lock_fd}</dev/null # the load lock's descriptor (below); no process started here keeps it
trap 'rm -f "$tmp"; [[ ${#node_pids[@]} -eq 0 ]] || kill "${node_pids[@]}" 2>/dev/null || true; rm -rf "$ndir"' EXIT
node_fail() { # MESSAGE: step 8 cannot give its table
    echo "demo.sh: step 8: $*" >&2
    exit 1
}
node_start() { # CONTROL ELEMENT [NEXT_PORT]: one node in the background; its port in node_port
    local ctl=$1 elem=$2 next=${3:-} out=$ndir/$1-$2 args pid
    args=(examples/node_collapse.ini --set control.kind="$ctl" --set node.duration=40 -q
        --set node.element="$elem" --set node.listen=127.0.0.1:0 --json "demo/node-$ctl-$elem.json")
    [[ -n "$next" ]] && args+=(--set node.next_hop=127.0.0.1:"$next")
    rm -f "demo/node-$ctl-$elem.json"
    : >"$out.out" # before the node starts, so that the first read finds it
    timeout 60 "$osn" node "${args[@]}" >"$out.out" 2>"$out.err" {lock_fd}>&- &
    pid=$!
    node_pids+=("$pid")
    node_port=
    for _ in $(seq 100); do # at most 10 s
        node_port=$(sed -n "s/^osn node $elem listening on 127\.0\.0\.1:\([0-9]*\) (udp).*/\1/p" "$out.out" || true)
        [[ -n "$node_port" ]] && return 0
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    node_fail "the $elem node ($ctl) did not start: $(cat "$out.err")"
}
node_run() { # CONTROL: the chain for 15 s at 600 calls/s; the summary in demo/node-CONTROL-*
    local ctl=$1 p_edge rc=0 f p
    node_pids=()
    node_start "$ctl" uas
    node_start "$ctl" core "$node_port"
    node_start "$ctl" edge "$node_port"
    p_edge=$node_port
    for p in "${node_pids[@]}"; do # all three still up before the traffic
        kill -0 "$p" 2>/dev/null || node_fail "$ctl: a node exited before the traffic:" \
            "$(cat "$ndir/$ctl"-*.err)"
    done
    rm -f "demo/node-$ctl-sipp.csv" "demo/node-$ctl-counts.csv" demo/uac_overload_*_counts.csv
    (cd demo && timeout 45 sipp 127.0.0.1:"$p_edge" -sf ../tests/node/sipp/uac_overload.xml \
        -i 127.0.0.1 -ci 127.0.0.1 -mi 127.0.0.1 -r 600 -m 9000 -l 15000 -nostdin \
        -timeout 30s -trace_counts -trace_stat -stf "node-$ctl-sipp.csv" \
        >"node-$ctl-sipp.log" 2>&1 {lock_fd}>&-) || rc=$?
    mv demo/uac_overload_*_counts.csv "demo/node-$ctl-counts.csv" 2>/dev/null || true
    kill "${node_pids[@]}" 2>/dev/null || true
    wait "${node_pids[@]}" 2>/dev/null || true # their summaries are written when they exit
    node_pids=()
    # SIPp's status is not the verdict: failed calls (1) are expected at 3x the capacity, and
    # without control calls still open at the end meet the outer timeout (124). Its files are.
    for f in "demo/node-$ctl-sipp.csv" "demo/node-$ctl-counts.csv" "demo/node-$ctl-edge.json" \
        "demo/node-$ctl-core.json" "demo/node-$ctl-uas.json"; do
        [[ -s "$f" ]] || node_fail "$ctl: no result file $f (SIPp's status $rc;" \
            "demo/node-$ctl-sipp.log)"
    done
}
# One load test at a time on this machine (the lock of tests/node/lib.sh, nl_load_lock): 600
# calls/s next to another load test would measure both machines' contention, not the control.
lock=${NL_LOCK:-/tmp/osn-node-load.lock}
if [[ $lock != none ]] && command -v flock >/dev/null; then
    exec {lock_fd}>&- {lock_fd}>>"$lock"
    flock -n "$lock_fd" || {
        echo "  (waiting for another load test to finish: flock $lock)"
        flock -w 1800 "$lock_fd" || node_fail "$lock still held after 1800 s"
    }
fi
for kind in loss none; do
    node_run "$kind"
done
python3 - <<'PY'
import csv, json, sys
print("  %-8s %11s %13s %12s %12s %13s" % ("control", "SIPp calls", "answered 2xx", "503 at edge",
                                           "core dropped", "mean setup"))
def last(path, sep=";"):
    rows = list(csv.reader(open(path), delimiter=sep))
    return dict(zip(rows[0], rows[-1]))
bad = []
for kind in ("none", "loss"):
    stat = last("demo/node-%s-sipp.csv" % kind)
    counts = last("demo/node-%s-counts.csv" % kind)
    edge = json.load(open("demo/node-%s-edge.json" % kind))
    core = json.load(open("demo/node-%s-core.json" % kind))
    offered, answered = int(stat["OutgoingCall(C)"]), int(counts.get("8_200_Recv", "0") or 0)
    if offered == 0 or answered == 0 or edge["calls_ok"] == 0:
        # nothing went through the chain: a failed run, not a result
        bad.append("%s: SIPp offered %d calls, %d answered with 2xx (the edge's calls_ok %d)"
                   % (kind, offered, answered, edge["calls_ok"]))
        continue
    h, m, sec, us = (int(x) for x in stat["ResponseTime1(C)"].split(":"))
    setup = 3600 * h + 60 * m + sec + us / 1e6  # INVITE -> 200, answered calls (1 ms steps)
    print("  %-8s %11s %13s %12d %12d %12.3fs" % (kind, offered, answered, edge["rejected_503"],
                                                  core["dropped"], setup))
for b in bad:
    print("demo.sh: step 8: " + b + "; see demo/node-*-sipp.log", file=sys.stderr)
sys.exit(1 if bad else 0)
PY
rm -f demo/uac_overload_*_counts.csv demo/uac_overload_*.log
echo
echo "9,000 calls offered at 3x the core's capacity for 15 s. Without control the core's buffer"
echo "fills with copies, tens of thousands are dropped and calls take seconds to set up: the road"
echo "to the collapse that 60 s runs show (osn testbed). With loss the edge sheds two calls"
echo "in three with 503 and the rest are set up at once. Results: demo/node-*.json (each node's"
echo "summary) and demo/node-*-sipp.csv (SIPp's statistics)."

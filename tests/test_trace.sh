#!/usr/bin/env bash
# The time traces (--trace) and per-replication values (--replications-out) of osn sim, node and
# network, checked by what must hold whatever the simulator's numbers are (they change with its
# random streams): with one replication, the trace rows after the warm-up add up to the run's
# estimates (rates, loss fractions, time fractions, the mean setup delay, the retransmission
# ratio); percentiles are ordered; every cell is a number or empty (a dataframe column stays
# numeric); tracing changes no result; the mean of the per-replication rows is the pooled
# estimate for every rate and time fraction, and there is one row per replication.
#
#   tests/test_trace.sh OSN SOURCE_DIR
set -uo pipefail
OSN=$1
ROOT=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
. "$ROOT/tests/cli_lib.sh"
PY=python3
EX=$ROOT/examples

# same_results A B: two JSON documents equal once "timing" and the echoed trace interval (the
# network's net.trace_interval, a setting of the run) are removed.
same_results() {
    "$PY" - "$1" "$2" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
for d in (a, b):
    for x in d if isinstance(d, list) else [d]:
        x.pop("timing")
        x["scenario"].get("resolved", {}).get("net", {}).pop("trace_interval", None)
assert a == b, "the runs differ outside the timing block"
PY
}

# ---- the network: one replication, rows of 0.5 s over 2 s of warm-up and 4 s observed ----
NET=(--set net.time=4 --set net.warmup=2 --set net.replications=1 --set source.rate=600)
for kind in none loss; do
    run 0 "net trace $kind" -- sim "$EX/collapse.ini" "${NET[@]}" --set control.kind=$kind \
        --trace "$TMP/net_$kind.csv" --trace-interval 0.5 --json "$TMP/net_$kind.json" -q
    run 0 "net untraced $kind" -- sim "$EX/collapse.ini" "${NET[@]}" --set control.kind=$kind \
        --json "$TMP/net_${kind}_plain.json" -q
    same_results "$TMP/net_$kind.json" "$TMP/net_${kind}_plain.json" && ok ||
        bad "net $kind: --trace changed the results"
    if "$PY" - "$TMP/net_$kind.csv" "$TMP/net_$kind.json" "$kind" <<'PY'; then ok; else bad "net trace $kind"; fi
import csv, json, math, sys
rows = list(csv.DictReader(open(sys.argv[1])))
d = json.load(open(sys.argv[2]))
kind = sys.argv[3]
res = d["scenario"]["resolved"]
iv, warm, T = 0.5, res["net"]["warmup"], res["net"]["time"]
hdr = list(rows[0].keys())
# Units in the names; every cell a number or empty.
for k in ("replication", "t_s", "offered_per_s", "goodput_per_s", "failed_timeout_per_s",
          "failed_rejected_per_s", "failed_other_per_s", "sent_503_per_s", "retrans_sent_per_s",
          "core_new_per_s", "core_retrans_per_s", "setup_n", "setup_mean_s", "setup_p50_s",
          "setup_p95_s", "setup_p99_s", "edge_queue_msgs", "core_queue_msgs", "uas_queue_msgs",
          "core_mode"):
    assert k in hdr, k
assert ("edge_shed_percent" in hdr) == (kind == "loss"), hdr
for r in rows:
    for k, v in r.items():
        assert v == "" or math.isfinite(float(v)), (k, v)
assert len(rows) == round((warm + T) / iv), len(rows)
assert all(r["replication"] == "0" for r in rows)
assert all(abs(float(r["t_s"]) - (i + 1) * iv) < 1e-9 for i, r in enumerate(rows))
win = [r for r in rows if float(r["t_s"]) > warm + 1e-9]
col = lambda k, rs=win: [float(r[k]) for r in rs]
close = lambda a, b, tol=1e-9: abs(a - b) <= tol * max(1.0, abs(b))
# The window's rows add up to the estimates.
for k in ("offered", "goodput", "failed_timeout", "failed_rejected", "failed_other"):
    got = sum(col(k + "_per_s")) * iv / T
    assert close(got, d[k]), (k, got, d[k])
assert close(sum(col("failed_timeout_per_s") + col("failed_rejected_per_s") +
                 col("failed_other_per_s")) * iv / T, d["failed"])
new, retx = sum(col("core_new_per_s")), sum(col("core_retrans_per_s"))
assert new > 0 and close(retx / new, d["retrans_ratio"]), (retx / new, d["retrans_ratio"])
n = col("setup_n")
assert all(x == int(x) >= 0 for x in n) and sum(n) > 0
have = [r for r in win if r["setup_n"] != "0"]
mean = sum(float(r["setup_mean_s"]) * float(r["setup_n"]) for r in have) / sum(n)
assert close(mean, d["setup_delay_mean"], 1e-6), (mean, d["setup_delay_mean"])
for r in rows:  # an interval without a setup has no delays (empty cells), else ordered ones
    q = [r["setup_p50_s"], r["setup_p95_s"], r["setup_p99_s"]]
    if r["setup_n"] == "0":
        assert q == ["", "", ""] and r["setup_mean_s"] == "", r
    else:
        q = [float(x) for x in q]
        assert 0 < q[0] <= q[1] <= q[2], r
# The pooled median (1 ms histogram bins) lies within the intervals' medians.
p50 = col("setup_p50_s", have)
assert min(p50) - 1e-3 <= d["setup_delay_p50"] <= max(p50) + 1e-3, (p50, d["setup_delay_p50"])
# States: whole messages within the buffers, modes 0..2.
for r in rows:
    assert 0 <= int(r["core_queue_msgs"]) <= res["server core"]["buffer"]
    assert int(r["core_mode"]) in (0, 1, 2)
# Over the whole run: every call rejected got a 503 an overload control sent, and the core
# absorbs no more copies than were sent.
rej, s503 = sum(col("failed_rejected_per_s", rows)), sum(col("sent_503_per_s", rows))
retx_all, sent = sum(col("core_retrans_per_s", rows)), sum(col("retrans_sent_per_s", rows))
assert rej <= s503 and retx_all <= sent, (rej, s503, retx_all, sent)
if kind == "loss":  # 1.6x capacity: the gate sheds, and its level says so
    assert s503 > 0 and rej > 0.9 * s503, (rej, s503)
    assert max(col("edge_shed_percent", rows)) > 0
else:  # no control: no 503, and the overload brings retransmissions
    assert s503 == 0 and sent > 0 and retx_all > 0, (s503, sent, retx_all)
PY
done

# ---- the node: one replication, 10 s rows, with a feedback delay ----
NODE=(--set sim.time=2000 --set sim.warmup=100 --replications 1)
run 0 "node trace" -- sim "$EX/sim_feedback_delay.ini" "${NODE[@]}" --trace "$TMP/node.csv" \
    --trace-interval 10 --json "$TMP/node.json" -q
run 0 "node untraced" -- sim "$EX/sim_feedback_delay.ini" "${NODE[@]}" --json "$TMP/node_plain.json" -q
same_results "$TMP/node.json" "$TMP/node_plain.json" && ok || bad "node: --trace changed the results"
if "$PY" - "$TMP/node.csv" "$TMP/node.json" <<'PY'; then ok; else bad "node trace"; fi
import csv, json, math, sys
rows = list(csv.DictReader(open(sys.argv[1])))
d = json.load(open(sys.argv[2]))
iv, warm, T, R = 10.0, d["warmup"], d["time"], d["scenario"]["R"]
assert list(rows[0].keys()) == ["replication", "t_s", "offered_per_s", "throttled_per_s",
                                "discarded_per_s", "departures_per_s", "n_mean_customers", "P0",
                                "P1", "P2", "n_customers", "mode", "upstream_mode"], rows[0].keys()
for r in rows:
    for k, v in r.items():
        assert math.isfinite(float(v)), (k, v)
    assert abs(float(r["P0"]) + float(r["P1"]) + float(r["P2"]) - 1) < 1e-9, r
    assert 0 <= int(r["n_customers"]) <= R and int(r["mode"]) in (0, 1, 2)
assert len(rows) == round((warm + T) / iv) and all(r["replication"] == "0" for r in rows)
win = [r for r in rows if float(r["t_s"]) > warm + 1e-9]
assert len(win) == round(T / iv)
col = lambda k: [float(r[k]) for r in win]
close = lambda a, b, tol=1e-9: abs(a - b) <= tol * max(1.0, abs(b))
off = sum(col("offered_per_s"))
assert close(sum(col("throttled_per_s")) / off, d["throttled"]), d["throttled"]
assert close(sum(col("discarded_per_s")) / off, d["discarded"]), d["discarded"]
assert close(sum(col("departures_per_s")) * iv / T, d["throughput"])
assert close(sum(col("n_mean_customers")) * iv / T, d["N_mean"])
for m in ("P0", "P1", "P2"):
    assert close(sum(col(m)) * iv / T, d[m]), (m, d[m])
# The upstream acts on the mode of 2 s ago: at some row the two differ, and the model has
# throttled some arrivals.
assert any(r["mode"] != r["upstream_mode"] for r in rows) and d["throttled"] > 0
PY

# ---- per-replication values: the node (5 replications, 1 and 2 threads) ----
for t in 1 2; do
    run 0 "node reps threads $t" -- sim "$EX/sim_two_loop.ini" --set sim.time=2000 --set sim.warmup=100 \
        --replications 5 --threads $t --replications-out "$TMP/reps$t.csv" --json "$TMP/reps$t.json" -q
done
cmp -s "$TMP/reps1.csv" "$TMP/reps2.csv" && ok || bad "node --replications-out depends on --threads"
if "$PY" - "$TMP/reps1.csv" "$TMP/reps1.json" <<'PY'; then ok; else bad "node --replications-out"; fi
import csv, json, sys
rows = list(csv.DictReader(open(sys.argv[1])))
d = json.load(open(sys.argv[2]))
assert len(rows) == d["replications"] == 5, len(rows)
assert [int(r["replication"]) for r in rows] == list(range(5)) == [int(r["stream"]) for r in rows]
assert all(int(r["seed"]) == d["seed"] for r in rows)
# Rates and time fractions (the same window in every replication): the pooled estimate is the
# mean of the replications'.
for k in ("P0", "P1", "P2", "N_mean", "throughput", "mode_change_rate", "nu01", "nu12"):
    mean = sum(float(r[k]) for r in rows) / len(rows)
    assert abs(mean - d[k]) <= 1e-12 * max(1, abs(d[k])), (k, mean, d[k])
# and the replications differ (independent streams)
assert len({r["N_mean"] for r in rows}) == 5
PY

# ---- per-replication values: the network, a sweep of two rates with 3 replications each ----
run 0 "net reps" -- sim "$EX/collapse.ini" --set net.time=2 --set net.warmup=1 --set net.replications=3 \
    --set source.rate=200:400:200 --replications-out "$TMP/nreps.csv" --json "$TMP/nreps.json" -q
if "$PY" - "$TMP/nreps.csv" "$TMP/nreps.json" <<'PY'; then ok; else bad "net --replications-out"; fi
import csv, json, math, sys
rows = list(csv.DictReader(open(sys.argv[1])))
docs = json.load(open(sys.argv[2]))
assert len(rows) == sum(d["replications"] for d in docs) == 6, len(rows)
for r in rows:
    for k, v in r.items():
        assert k in ("control", "osn_version") or v == "" or math.isfinite(float(v)), (k, v)
for d in docs:
    mine = [r for r in rows if float(r["source.rate"]) == d["sweep_value"]]
    assert [int(r["replication"]) for r in mine] == [0, 1, 2] == [int(r["stream"]) for r in mine]
    assert all(int(r["seed"]) == d["seed"] and r["control"] == d["control"] for r in mine)
    for k in ("offered", "goodput", "failed", "admitted", "msg_rate", "core_util", "core_P0"):
        mean = sum(float(r[k]) for r in mine) / len(mine)
        assert abs(mean - d[k]) <= 1e-8 * max(1, abs(d[k])), (k, mean, d[k])
PY

# ---- refused ----
run 2 "node --trace-interval alone" -- sim "$EX/sim_two_loop.ini" --trace-interval 5
expect_err "node --trace-interval alone" "--trace-interval" "without --trace"
run 2 "net --trace-interval alone" -- sim "$EX/collapse.ini" --trace-interval 5
expect_err "net --trace-interval alone" "--trace-interval" "without --trace"
run 2 "node --trace-interval 0" -- sim "$EX/sim_two_loop.ini" --trace "$TMP/x.csv" --trace-interval 0
expect_err "node --trace-interval 0" "--trace-interval" "seconds > 0"
[ ! -e "$TMP/x.csv" ] && ok || bad "a refused --trace left its file"
run 2 "node trace rows" -- sim "$EX/sim_two_loop.ini" --trace "$TMP/x.csv" --trace-interval 1e-4
expect_err "node trace rows" "--trace-interval" "rows"
run 2 "reps and json on stdout" -- sim "$EX/sim_two_loop.ini" --replications-out - --json -
expect_err "reps and json on stdout" "cannot both write to standard output"
summary

#!/usr/bin/env bash
# The load generator's rates over the window after node.warmup (issue 30), on 127.0.0.1 with
# ports the processes chose themselves: generator -> osn node uas, a profile source whose
# warm-up is a burst (600 calls/s for the first 3 s, then 150 calls/s), node.warmup = 3,
# node.duration = 7. The summary's rates must be those of the window [3, 7] s, as osn sim counts
# after its warm-up, not those of the whole run:
#   - offered * 4 s = the first attempts the generator's --trace says it sent in [3, 7] s
#     (exact: the same events, counted by another file);
#   - offered within 150 +- 3.29 sqrt(150 * 4) / 4 calls/s (Poisson, 99.9 %); the whole run's
#     rate, calls_started / 7 s, is (600 * 3 + 150 * 4) / 7 = 342.9 within its own interval: the
#     two differ by 192.9 calls/s, what a rate over the whole run would wrongly report;
#   - goodput within the same interval as offered (every call is answered: good = started);
#   - window_start 3 and window_end 7 in the summary;
#   - node.warmup = 0 keeps the old meaning: rates over the whole run (offered = started / 7).
# About 20 s.   Usage: test_node_genwindow.sh OSN ROOT
set -u
OSN=$1
ROOT=$(cd "$2" && pwd)
. "$ROOT/tests/node/lib.sh"
nl_init genwindow 120
export OSN
SCEN=$ROOT/examples/node_collapse.ini

# gen NAME NEXT_PORT WARMUP: the burst profile's generator in the foreground, its files in
# $NL_TMP/NAME.
gen() {
    local name=$1 next=$2 warm=$3
    local dir=$NL_TMP/$name
    mkdir -p "$dir"
    NL_DIR[$name]=$dir
    timeout -k 5 90 "$OSN" node "$SCEN" --set node.element=uac \
        --set node.listen=127.0.0.1:0 --set "node.next_hop=127.0.0.1:$next" \
        --set node.duration=7 --set "node.warmup=$warm" --set source.process=profile \
        --set source.rate=600 --set "source.steps=3 150" --set source.hold=0.2 \
        --json "$dir/summary.json" --trace "$dir/trace.csv" -q \
        >"$dir/node.out" 2>"$dir/node.err" {NL_LOCK_FD}>&-
}

nl_up "uas did not start" nl_node_start uas uas 0 0 "$SCEN"
nl_require_up

gen w "${NL_PORT[uas]}" 3
rc=$?
nl_check $rc "generator with warm-up 3: exit status $rc: $(cat "$NL_TMP/w/node.err")"
"$NL_PY" - "$NL_TMP/w/summary.json" "$NL_TMP/w/trace.csv" <<'PY'
import csv, json, math, sys
d = json.load(open(sys.argv[1]))
u = d["uac"]
sent = [float(r["t_sent"]) for r in csv.DictReader(open(sys.argv[2]),
        fieldnames=["attempt", "call", "t_sched", "t_sent"]) if r["attempt"] == "0"]
in_win = sum(3 <= t <= 7 for t in sent)
bad = []
if (d.get("window_start"), d.get("window_end")) != (3, 7):
    bad.append(f"window [{d.get('window_start')}, {d.get('window_end')}], expected [3, 7]")
if round(d["offered"] * 4) != in_win:
    bad.append(f"offered {d['offered']} * 4 s != {in_win} first INVITEs sent in [3, 7] s")
hw = 3.29 * math.sqrt(150 * 4) / 4
whole = (600 * 3 + 150 * 4) / 7
hw_whole = 3.29 * math.sqrt(600 * 3 + 150 * 4) / 7
for k in ("offered", "goodput"):
    if abs(d[k] - 150) > hw:
        bad.append(f"{k} {d[k]:.1f} not within 150 +- {hw:.1f} (the window's rate)")
if abs(u["calls_started"] / 7 - whole) > hw_whole:
    bad.append(f"whole run {u['calls_started'] / 7:.1f} not within {whole:.1f} +- {hw_whole:.1f}")
if u["good"] != u["calls_started"] or u["unfinished"] != 0:
    bad.append(f"good {u['good']} of {u['calls_started']} started, {u['unfinished']} unfinished")
for b in bad:
    print("FAIL:", b)
print(f"window [3, 7]: offered {d['offered']:.1f} goodput {d['goodput']:.1f} calls/s "
      f"({in_win} first INVITEs sent in it); whole run {u['calls_started'] / 7:.1f} calls/s")
sys.exit(1 if bad else 0)
PY
nl_check $? "rates over the window after node.warmup"

gen z "${NL_PORT[uas]}" 0
rc=$?
nl_check $rc "generator without warm-up: exit status $rc: $(cat "$NL_TMP/z/node.err")"
"$NL_PY" - "$NL_TMP/z/summary.json" <<'PY'
import json, math, sys
d = json.load(open(sys.argv[1]))
u = d["uac"]
# the summary's reals carry 10 significant digits
ok = (math.isclose(d["offered"], u["calls_started"] / 7, rel_tol=1e-8)
      and math.isclose(d["goodput"], u["good"] / 7, rel_tol=1e-8)
      and (d["window_start"], d["window_end"]) == (0, 7))
print(f"no warm-up: offered {d['offered']:.1f} = {u['calls_started']} / 7 s: {'ok' if ok else 'FAIL'}")
sys.exit(0 if ok else 1)
PY
nl_check $? "node.warmup = 0: rates over the whole run"

nl_stop uas >/dev/null
nl_summary

#!/usr/bin/env bash
# The judgements of bench/node_maxrate.sh (bench/node_maxrate.py), checked without a load test
# on inputs whose verdicts are worked out by hand from the acceptance rules:
#   - a SIPp step: its INVITE rate from -trace_rtt (first to last INVITE) and the p99 as the
#     nearest rank int(0.99 n) of the sorted times, each side of the 95% and 500 ms bounds;
#     every call asked (RATE x DURATION) answered; no refusal at the cap; the bottleneck named
#     from CPU shares (a whole core), SIPp's watchdog, else the socket that dropped most; the node's datagrams per
#     CPU-second and their fraction of the UDP limit;
#   - a step of OSN's generator: from its summary (uac counts, setup_delay_p99, lag_max), the
#     count bound 0.95 R D - 3 sqrt(R D) on each side, every started call good, the p99 bound,
#     a lag of 0.5 s naming the generator; several generators (GEN_PROCS) summed, their
#     largest p99 and lag taken; a missing summary refused (exit 2, named);
#   - the summary: the highest rate held per run, generator and proxy (the unbroken run of held
#     steps from the lowest rate), the ratios osn/kamailio and osn/sipp from every pair of the
#     run as median and range, lower bounds counted (the first held the highest rate asked);
#     a malformed line refused with its file:line;
#   - node_maxrate.sh and gen_maxrate.sh refuse a bad GEN, UAS, RUNS or GEN_PROCS with exit 2, naming it,
#     before starting anything.
#
#   tests/test_bench_maxrate.sh SOURCE_DIR
set -u
SRC=$1
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
MR=$SRC/bench/node_maxrate.py
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() {
    fail=$((fail + 1))
    echo "FAIL: $*"
}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# rtt DIR N GAP_MS FAST_MS SLOW_N SLOW_MS: a SIPp -trace_rtt file of N answered calls, the
# INVITEs GAP_MS apart, every call FAST_MS but SLOW_N of them SLOW_MS (rows: answer time ms;
# INVITE -> 200 ms; rtd 1), with SIPp's heading and an rtd-2 row that must be ignored.
rtt() {
    mkdir -p "$1"
    "$PY" - "$@" <<'PY'
import sys
d, n, gap, fast, slow_n, slow = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), \
    float(sys.argv[4]), int(sys.argv[5]), float(sys.argv[6])
with open(d + "/uac_1_rtt.csv", "w") as f:
    f.write("Date_ms;response_time_ms;rtd_no\n")
    for i in range(n):
        r = slow if i < slow_n else fast
        f.write("%.3f;%.3f;1\n" % (1000 + i * gap + r, r))
    f.write("5000;9999;2\n")
PY
}

# judge WANT_VERDICT WANT_WHY LABEL KEY=VALUE..: one step, its verdict and bottleneck
judge() {
    local want=$1 why=$2 label=$3 out
    shift 3
    out=$("$PY" "$MR" step "$@" 2>&1)
    if [ "$(cut -d' ' -f1-2 <<<"$out")" = "$want $why" ]; then ok; else
        bad "$label: wanted '$want $why', got '$out'"
    fi
}

# ---- SIPp steps: 100 calls/s for 10 s, 1,000 calls asked; HZ 100, 10 s elapsed ----
# 1,000 INVITEs 10 ms apart: (1000 - 1) / 9.99 s = 100.0/s. Nearest rank int(0.99 x 1000) = 990:
# with 9 slow calls the 991st time is fast, with 10 it is slow.
rtt "$T/s_ok" 1000 10 10 9 600
rtt "$T/s_p99" 1000 10 10 10 600
rtt "$T/s_p99b" 1000 10 10 10 499.9
# 10.5 ms apart: 999 / 10.4895 s = 95.24/s >= 95; 10.6 ms: 94.34/s < 95
rtt "$T/s_slow" 1000 10.6 10 0 0
rtt "$T/s_fast" 1000 10.5 10 0 0
base=(gen=sipp px=osn rate=100 duration=10 hz=100 el=10 ok=1000 out=1000 wd=0/0 cap=0)
judge yes - "sipp all good" "${base[@]}" uac_dir="$T/s_ok"
judge no losses-or-delay "sipp p99 600 ms (10 of 1,000 slow)" "${base[@]}" uac_dir="$T/s_p99"
judge yes - "sipp p99 499.9 ms" "${base[@]}" uac_dir="$T/s_p99b"
judge no losses-or-delay "sipp 94.3 INVITEs/s" "${base[@]}" uac_dir="$T/s_slow"
judge yes - "sipp 95.2 INVITEs/s" "${base[@]}" uac_dir="$T/s_fast"
judge no losses-or-delay "sipp 999 of 1,000 answered" "${base[@]}" uac_dir="$T/s_ok" ok=999
judge no losses-or-delay "sipp 999 of 1,000 sent" "${base[@]}" uac_dir="$T/s_ok" out=999
judge no refusals-at-the-cap "sipp 1 refused at the cap" "${base[@]}" uac_dir="$T/s_ok" cap=1
# the bottleneck of a step not held: 950 ticks in 10 s at 100 Hz = 95% of a core
judge no SIPp-uac "sipp uac at 95%" "${base[@]}" uac_dir="$T/s_ok" ok=999 uac_ticks=950
judge no SIPp-uac "sipp watchdog" "${base[@]}" uac_dir="$T/s_ok" ok=999 wd=0/3
judge no proxy "proxy drops" "${base[@]}" uac_dir="$T/s_ok" ok=999 d_px=5
judge no proxy "proxy at 91%" "${base[@]}" uac_dir="$T/s_ok" ok=999 pu1=600 ps1=310
# drops at several sockets, no process at a whole core: the one that dropped most
judge no proxy "drops 526/34942/0" "${base[@]}" uac_dir="$T/s_ok" ok=999 d_uac=526 d_px=34942
judge no SIPp-uac "drops 9/9/9" "${base[@]}" uac_dir="$T/s_ok" ok=999 d_uac=9 d_px=9 d_uas=9
judge no SIPp-uas "uas drops" "${base[@]}" uac_dir="$T/s_ok" ok=999 d_uas=5 uas_kind=SIPp
judge no osn-uas "osn uas at 95%" "${base[@]}" uac_dir="$T/s_ok" ok=999 uas_ticks=950 \
    uas_kind=osn
# the node's datagrams: (3,000 + 3,000) / 2 in 30 ticks = 10,000/s, half the limit of 20,000
out=$("$PY" "$MR" step "${base[@]}" uac_dir="$T/s_ok" din=3000 dout=3000 pu1=10 ps1=20 lim=20000)
grep -q " 10000(0.50) " <<<"$out" && ok || bad "datagrams per CPU-second: $out"
grep -q "^yes - sipp osn  *100  *1000  *1000  *100  *10 " <<<"$out" && ok ||
    bad "sipp row: rate 100, 1,000 calls, 1,000 ok, 100/s, p99 10 ms: $out"

# ---- OSN generator steps: 1,000 calls/s for 10 s; R D = 10,000, sqrt = 100:
# at least 0.95 x 10,000 - 3 x 100 = 9,200 calls started ----
# gjson FILE STARTED GOOD P99_S LAG_S [KEY=N..]: the generator's summary
gjson() {
    "$PY" - "$@" <<'PY'
import json, sys
f, started, good, p99, lag = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], \
    float(sys.argv[5])
u = dict(duration=10.0, calls_started=started, good=good, failed_timeout=0, failed_rejected=0,
         failed_other=0, abandoned=0, unfinished=0)
for a in sys.argv[6:]:
    k, v = a.split("=")
    u[k] = int(v)
json.dump({"element": "uac", "lag_max": lag, "retrans_sent": 0,
           "setup_delay_p99": None if p99 == "null" else float(p99), "uac": u}, open(f, "w"))
PY
}
gjson "$T/g_ok.json" 9200 9200 0.010 0.02
gjson "$T/g_short.json" 9199 9199 0.010 0.02
gjson "$T/g_p99.json" 10000 10000 0.500 0.02
gjson "$T/g_p99b.json" 10000 10000 0.4995 0.02
gjson "$T/g_timeout.json" 10000 9999 0.010 0.02 failed_timeout=1
gjson "$T/g_unf.json" 10000 10000 0.010 0.02 unfinished=1
gjson "$T/g_aband.json" 10000 10000 0.010 0.02 abandoned=1
gjson "$T/g_lag.json" 10000 9999 0.010 0.6 failed_timeout=1
gjson "$T/g_none.json" 0 0 null 0
gb=(gen=osn px=direct rate=1000 duration=10 hz=100 el=10 uas_kind=osn)
judge yes - "osn 9,200 started, all good" "${gb[@]}" gen_json="$T/g_ok.json"
judge no losses-or-delay "osn 9,199 started" "${gb[@]}" gen_json="$T/g_short.json"
judge no losses-or-delay "osn p99 500 ms" "${gb[@]}" gen_json="$T/g_p99.json"
judge yes - "osn p99 499.5 ms" "${gb[@]}" gen_json="$T/g_p99b.json"
judge no losses-or-delay "osn one timeout" "${gb[@]}" gen_json="$T/g_timeout.json"
judge no losses-or-delay "osn one unfinished" "${gb[@]}" gen_json="$T/g_unf.json"
judge no losses-or-delay "osn one abandoned" "${gb[@]}" gen_json="$T/g_aband.json"
judge no losses-or-delay "osn no call" "${gb[@]}" gen_json="$T/g_none.json"
judge no osn-uac "osn lag 0.6 s" "${gb[@]}" gen_json="$T/g_lag.json"
judge no osn-uac "osn generator at 95%" "${gb[@]}" gen_json="$T/g_timeout.json" uac_ticks=950
judge no osn-uac "osn generator's drops" "${gb[@]}" gen_json="$T/g_timeout.json" d_uac=1
judge no refusals-at-the-cap "osn uas refused" "${gb[@]}" gen_json="$T/g_ok.json" cap=2
# GEN_PROCS generators, one summary each: the counts add up against the same bound, the p99
# is the largest of theirs (an upper bound of the p99 of all the calls), the lag the largest
gjson "$T/h1.json" 4600 4600 0.010 0.02
gjson "$T/h2.json" 4600 4600 0.020 0.03
gjson "$T/h2s.json" 4599 4599 0.020 0.03
gjson "$T/h2p.json" 4600 4600 0.500 0.03
gjson "$T/h2l.json" 4600 4599 0.020 0.7 failed_timeout=1
judge yes - "2 generators, 4,600 + 4,600" "${gb[@]}" gen_json="$T/h1.json,$T/h2.json"
judge no losses-or-delay "2 generators, 4,600 + 4,599" "${gb[@]}" gen_json="$T/h1.json,$T/h2s.json"
judge no losses-or-delay "2 generators, p99 10 and 500 ms" "${gb[@]}" \
    gen_json="$T/h1.json,$T/h2p.json"
judge no osn-uac "2 generators, lag 0.02 and 0.7 s" "${gb[@]}" gen_json="$T/h1.json,$T/h2l.json"
out=$("$PY" "$MR" step "${gb[@]}" gen_json="$T/h1.json,$T/h2.json")
grep -q "^yes - osn  direct  *1000  *9200  *9200  *920  *20 .*lag_max=30ms" <<<"$out" && ok ||
    bad "2 generators' row: 9,200 calls, p99 20 ms, lag 30 ms: $out"
out=$("$PY" "$MR" step "${gb[@]}" gen_json="$T/g_ok.json")
grep -q "^yes - osn  direct  *1000  *9200  *9200  *920 .*lag_max=20ms" <<<"$out" && ok ||
    bad "osn row: 9,200 calls, 9,200 ok, 920/s, lag 20 ms: $out"
"$PY" "$MR" step "${gb[@]}" gen_json="$T/nonexistent.json" >/dev/null 2>"$T/e"
rc=$?
[ $rc = 2 ] && grep -q "nonexistent.json" "$T/e" && ok || bad "no summary: exit $rc, $(cat "$T/e")"
"$PY" "$MR" step "${gb[@]}" gen_json="$T/g_ok.json" rate=x >/dev/null 2>"$T/e"
rc=$?
[ $rc = 2 ] && grep -q "rate='x'" "$T/e" && ok || bad "rate=x: exit $rc, $(cat "$T/e")"

# ---- the summary: highest held per run, generator and proxy; ratios from every pair ----
# highest held (the unbroken run of 'yes' from the lowest rate; top = 4000):
#   run 1 sipp: osn 2000, kamailio 1000; run 1 osn: osn 4000 (every rate), kamailio 2000;
#   run 2 osn: osn 1000 (error at 2000), kamailio 2000 (a later 'yes' after its 'no' at 4000
#   does not count: it had left the race)
# osn/kamailio pairs (run, generator): 2000/1000 = 2, 4000/2000 = 2 (a lower bound),
#   1000/2000 = 0.5: median 2.00, range [0.50, 2.00], 3 pairs, 1 lower bound. The last run's
#   pair alone would say 0.50.
# osn/sipp pairs (run, proxy): run 1 osn 4000/2000 = 2 (lower bound), kamailio 2000/1000 = 2;
#   run 2 has no SIPp: no pair.
cat >"$T/res" <<'EOF'
1 sipp osn 1000 yes -
1 sipp kamailio 1000 yes -
1 sipp kamailio 2000 no proxy
1 sipp osn 2000 yes -
1 sipp osn 4000 no SIPp-uac
1 osn osn 1000 yes -
1 osn kamailio 1000 yes -
1 osn kamailio 2000 yes -
1 osn osn 2000 yes -
1 osn osn 4000 yes -
1 osn kamailio 4000 no proxy
2 osn osn 1000 yes -
2 osn kamailio 1000 yes -
2 osn osn 2000 error
2 osn kamailio 2000 yes -
2 osn kamailio 4000 no refusals-at-the-cap
2 osn kamailio 8000 yes -
EOF
"$PY" "$MR" summary "$T/res" 4000 60 >"$T/out" 2>&1
want="run 1, generator sipp, proxy osn: highest held: 2000 calls/s for 60 s (limited by: SIPp-uac at 4000 calls/s)
run 1, generator sipp, proxy kamailio: highest held: 1000 calls/s for 60 s (limited by: proxy at 2000 calls/s)
run 1, generator osn, proxy osn: highest held: 4000 calls/s for 60 s (limited by: every rate asked was held)
run 1, generator osn, proxy kamailio: highest held: 2000 calls/s for 60 s (limited by: proxy at 4000 calls/s)
run 2, generator osn, proxy osn: highest held: 1000 calls/s for 60 s (limited by: a failed step at 2000 calls/s)
run 2, generator osn, proxy kamailio: highest held: 2000 calls/s for 60 s (limited by: refusals-at-the-cap at 4000 calls/s)
osn/kamailio highest rate held: 2.00 [0.50, 2.00] over 3 pairs (goal >= 2; 1 of 3 a lower bound: the first held the highest rate asked; rates from the list RATES, so only as fine as the list)
osn/sipp generator highest rate held: 2.00 [2.00, 2.00] over 2 pairs (goal >= 2; 1 of 2 a lower bound: the first held the highest rate asked; rates from the list RATES, so only as fine as the list)"
if [ "$(cat "$T/out")" = "$want" ]; then ok; else
    bad "summary: got"
    cat "$T/out"
    echo "wanted"
    echo "$want"
fi
# a denominator that held nothing gives no ratio, and says so
printf '1 osn osn 1000 yes -\n1 osn kamailio 1000 no proxy\n' >"$T/res0"
"$PY" "$MR" summary "$T/res0" 1000 10 >"$T/out" 2>&1
grep -q "^osn/kamailio highest rate held: n/a; 1 pair where the second held no rate" "$T/out" &&
    ok || bad "kamailio held none: $(cat "$T/out")"
printf '1 osn osn 1000 yes -\n1 osn osn x yes\n' >"$T/res1"
"$PY" "$MR" summary "$T/res1" 1000 10 >/dev/null 2>"$T/e"
rc=$?
[ $rc = 2 ] && grep -q "res1:2:" "$T/e" && ok || bad "a malformed line: exit $rc, $(cat "$T/e")"

# ---- bad settings: exit 2, named, before any process is started ----
chk() { # chk SCRIPT WHAT ENV..: exit 2 and WHAT on stderr
    local script=$1 what=$2
    shift 2
    env "$@" OSN=/nonexistent NL_LOCK=none bash "$SRC/bench/$script" >/dev/null 2>"$T/e"
    local rc=$?
    if [ $rc = 2 ] && grep -q -- "$what" "$T/e"; then ok; else bad "$script $*: exit $rc, $(cat "$T/e")"; fi
}
chk node_maxrate.sh "unknown generator 'foo'" GEN="osn foo"
chk node_maxrate.sh "UAS='x'" UAS=x
chk node_maxrate.sh "RUNS='0'" RUNS=0
chk node_maxrate.sh "RUNS='two'" RUNS=two
chk node_maxrate.sh "GEN_PROCS='0'" GEN_PROCS=0
chk node_maxrate.sh "GEN_PROCS='17'" GEN_PROCS=17
chk gen_maxrate.sh "UAS='kam'" UAS=kam
chk gen_maxrate.sh "'x' in RATES" RATES="1000 x"

echo "$pass passed, $fail failed"
[ "$fail" = 0 ]

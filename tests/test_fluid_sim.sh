#!/usr/bin/env bash
# Cross-check of the fluid model (`osn fluid`) against the SIP network simulator (`osn sim`) on
# the same system (run by CTest as fluid_sim): examples/fluid-vs-sim.ini and
# examples/sim_fluid_check.ini describe one server of 100 INVITE copies/s, infinite buffer, no
# link delay, T1 = 0.5 s, 6 retransmissions, 100 Trying when the INVITE is served.
# Three arrival profiles, each set in both files the same way: the 2 s burst at 60 % load
# (collapse), a 0.5 s burst (recovers), a steady 120/s overload; then PRSM on two of them.
#
# The simulator's trace (core queue every 0.5 s, replication 0) is averaged over seeds 1..5 and
# compared with the fluid queue at the same instants:
#   queue error   = sum_t |q_sim(t) - q_fluid(t)| / sum_t q_fluid(t)
#                   (time-averaged absolute difference relative to the time-averaged fluid queue;
#                   an L1 ratio, not a mean of pointwise ratios, since a pointwise ratio blows up
#                   where the fluid queue is ~0 while the Poisson-fed simulator has its M/D/1
#                   queue of about 1 message, and in the first seconds of a collapse where the
#                   random instant of tipping over dominates)
#   goodput error = |G_sim - G_fluid| / G_fluid, G = calls answered before Timer B over 120 s.
# Both must be below 10 %. In the 0.5 s case the fluid queue is 0 outside the burst, so the
# queue error is undefined: instead both must recover (fluid `recovered`, simulated queue mean
# over the last 60 s below 5 messages).
# Usage: test_fluid_sim.sh OSN ROOT
set -u
OSN=$1
ROOT=$2
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() {
    fail=$((fail + 1))
    echo "FAIL: $*"
}
FL=$ROOT/examples/fluid-vs-sim.ini
SI=$ROOT/examples/sim_fluid_check.ini
SEEDS="1 2 3 4 5"

# case NAME MODE "FLUID --set ..." "SIM --set ..." [SIM_INI]   (MODE: queue | recover)
check() {
    local name=$1 mode=$2 fset=$3 sset=$4 si=${5:-$SI} traces=""
    # shellcheck disable=SC2086
    if ! "$OSN" fluid "$FL" -q $fset --csv "$TMP/$name.fluid.csv" 2>"$TMP/err"; then
        bad "$name: osn fluid failed: $(cat "$TMP/err")"
        return
    fi
    for s in $SEEDS; do
        # shellcheck disable=SC2086
        if ! "$OSN" sim "$si" -q $sset --set net.seed="$s" --trace "$TMP/$name.sim$s.csv" \
            --trace-interval 0.5 2>"$TMP/err"; then
            bad "$name: osn sim failed (seed $s): $(cat "$TMP/err")"
            return
        fi
        traces="$traces $TMP/$name.sim$s.csv"
    done
    # shellcheck disable=SC2086
    if "$PY" - "$name" "$mode" "$TMP/$name.fluid.csv" $traces <<'PYEOF'; then ok; else bad "$name: fluid and sim differ"; fi
import csv, sys
name, mode, fpath, spaths = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
rows = lambda p: list(csv.DictReader(open(p)))
fl = rows(fpath)
dt = float(fl[1]['t']) - float(fl[0]['t'])
fq, cum = {}, [0.0]
for r in fl:
    fq[round(float(r['t']) / dt)] = float(r['queue'])
    cum.append(cum[-1] + float(r['goodput']) * dt)
runs = [rows(p) for p in spaths]
n = min(len(x) for x in runs)
T = [float(runs[0][i]['t_s']) for i in range(n)]
iv = T[1] - T[0]
qs = [sum(float(x[i]['core_queue_msgs']) for x in runs) / len(runs) for i in range(n)]
gs = sum(float(x[i]['goodput_per_s']) * iv for x in runs for i in range(n)) / len(runs)
K = [round(t / dt) for t in T]
gf = cum[K[-1]]
num = sum(abs(qs[i] - fq[K[i]]) for i in range(n))
den = sum(fq[K[i]] for i in range(n))
gerr = abs(gs - gf) / gf
msg = (f"{name}: goodput fluid {gf / T[-1]:.3f}/s sim {gs / T[-1]:.3f}/s (err {gerr:.4f}); "
       f"final queue fluid {fq[K[-1]]:.0f} sim {qs[-1]:.0f}")
good = gerr < 0.10
if mode == 'queue':
    qerr = num / den
    msg += f"; queue error {qerr:.4f}"
    good = good and qerr < 0.10
else:
    tail = [qs[i] for i in range(n) if T[i] > T[-1] - 60]
    qt = sum(tail) / len(tail)
    msg += f"; fluid queue {fq[K[-1]]:.3g}, sim queue mean over last 60 s {qt:.3f}"
    good = good and fq[K[-1]] < 1 and qt < 5
print(("ok   " if good else "BAD  ") + msg)
sys.exit(0 if good else 1)
PYEOF
}

check collapse queue "" ""
check recover recover "--set profile.burst_duration=0.5" "--set source.burst_length=0.5"
check overload queue \
    "--set profile.burst_start=0 --set profile.burst_duration=120 --set profile.burst_rate=60" \
    "--set source.burst_start=0 --set source.burst_length=120 --set source.burst_factor=2"

# PRSM (docs/protocols.md 8) on the same system: the 2 s burst that collapses the conventional
# server recovers (the copies wait second and are removed, the originals alone load the
# server), and in the steady 120/s overload with a buffer of 1000 messages both hold the buffer
# full and serve at capacity (the sim's buffer key has a space in its section name, so the
# buffer is set in a copy of the file).
SI_B1000=$TMP/sim_b1000.ini
sed 's/^buffer = 100000000 .*/buffer = 1000/' "$SI" >"$SI_B1000"
grep -q '^buffer = 1000$' "$SI_B1000" || bad "could not set the core buffer in $SI_B1000"
check prsm_collapse_burst recover "--set control.kind=prsm" "--set control.kind=prsm"
check prsm_overload_b1000 queue \
    "--set control.kind=prsm --set server.buffer=1000 --set profile.burst_start=0 --set profile.burst_duration=120 --set profile.burst_rate=60" \
    "--set control.kind=prsm --set source.burst_start=0 --set source.burst_length=120 --set source.burst_factor=2" \
    "$SI_B1000"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]

#!/usr/bin/env bash
# Hostile inputs (issue 14 and tests/hostile/README.md), run by CTest as:
#     bash tests/test_hostile.sh PATH_TO_osn REPO_ROOT
#
# Each case is one line of the table in tests/hostile/README.md: what a hostile user gives, what
# OSN must do (exit status 2 with a message naming the key or flag, or a correct answer), and
# nothing left behind. Every run has a time limit, so a regression to a runaway fails instead
# of hanging CTest. Prints "N passed, M failed" last; exits non-zero on any failure.
set -u

OSN=${1:?usage: test_hostile.sh PATH_TO_osn REPO_ROOT}
ROOT=${2:?usage: test_hostile.sh PATH_TO_osn REPO_ROOT}
PY=${PYTHON:-python3}
EX=$ROOT/examples

TMP=$(mktemp -d "${TMPDIR:-/tmp}/osn_test_hostile.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
RUN_TIMEOUT=60
# shellcheck source=tests/cli_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/cli_lib.sh"
cd "$TMP" || exit 1

# no_temporaries NAME: no "*.tmp.*" in $TMP and no /tmp/osn_optimize_* of PID.
no_temporaries() {
    if compgen -G "$TMP/*.tmp.*" >/dev/null; then
        bad "$1: temporaries left: $(ls "$TMP" | grep '\.tmp\.' | head -3)"
    else
        ok
    fi
}

# killed SIG NAME GLOB -- ARGS...: starts osn, waits (<= 20 s) until GLOB exists, sends SIG, and
# checks that osn died of SIG and left no temporary. SIGINT is reset to its default first: a
# background job of a non-interactive shell inherits it ignored, and osn keeps it ignored then.
killed() {
    local sig=$1 name=$2 glob=$3
    shift 4
    perl -e '$SIG{INT} = "DEFAULT"; exec @ARGV or die' "$OSN" "$@" >/dev/null 2>"$TMP/err" &
    local pid=$! i
    for i in $(seq 200); do
        compgen -G "$glob" >/dev/null && break
        sleep 0.1
    done
    compgen -G "$glob" >/dev/null || bad "$name: $glob never appeared"
    kill -s "$sig" "$pid"
    wait "$pid"
    local got=$? want=$((128 + $(kill -l "$sig")))
    [ "$got" -eq "$want" ] && ok || bad "$name: exit status $got, expected $want (killed by $sig)"
    no_temporaries "$name"
    compgen -G "$glob" >/dev/null && bad "$name: $glob left behind" || ok
}

# ==== 1. Outputs ====
# Signals remove every temporary: --grid and --json of optimize, its --plot data in $TMPDIR,
# and --trace of a network simulation.
export TMPDIR=$TMP
killed TERM "SIGTERM optimize --grid" "$TMP/g.csv.tmp.*" -- optimize \
    "$EX/optimize/two_loop_constrained.ini" --set thresholds.R=200 -q --grid "$TMP/g.csv" \
    --json "$TMP/j.json"
killed INT "SIGINT optimize --plot" "$TMP/osn_optimize_*" -- optimize \
    "$EX/optimize/two_loop_constrained.ini" --set thresholds.R=200 -q --plot "$TMP/p.png"
killed TERM "SIGTERM sim --trace" "$TMP/t.trace.tmp.*" -- sim "$EX/collapse.ini" \
    --set net.time=1000 -q --trace "$TMP/t.trace"
killed INT "SIGINT sim --trace" "$TMP/t.trace.tmp.*" -- sim "$EX/collapse.ini" \
    --set net.time=1000 -q --trace "$TMP/t.trace"
unset TMPDIR

# Plot file names are data, never gnuplot script text.
if command -v gnuplot >/dev/null; then
    run 0 "optimize --plot name with a newline" -- optimize "$EX/optimize/two_loop_constrained.ini" \
        -q --plot $'a\nsystem "touch pwned"\n#.png'
    [ ! -e "$TMP/pwned" ] && ok || bad "optimize --plot ran an injected gnuplot command"
    [ -s $'a\nsystem "touch pwned"\n#.png' ] && ok || bad "optimize --plot: no PNG at the odd name"
    run 0 "optimize --plot name with quotes" -- optimize "$EX/optimize/two_loop_constrained.ini" \
        -q --plot "q'\"\`touch pwned2\`.png"
    [ ! -e "$TMP/pwned2" ] && ok || bad "optimize --plot ran a backquoted command"
    run 0 "fluid --plot name with quotes" -- fluid "$EX/fluid-burst.ini" -q \
        --plot $'f\'\nsystem "touch pwned3"\n.png'
    [ ! -e "$TMP/pwned3" ] && ok || bad "fluid --plot ran an injected gnuplot command"
    no_temporaries "plots"
fi
run 2 "fluid --plot -" -- fluid "$EX/fluid-burst.ini" -q --plot -
expect_err "fluid --plot -" "--plot"
# A plot range is checked before the run, and never applies silently to nothing.
run 2 "fluid --plot-range without --plot" -- fluid "$EX/fluid-burst.ini" -q --plot-range 0:10
expect_err "fluid --plot-range without --plot" "--plot-range 0:10" "no --plot"
for r in 5:1 0:0 -1:3 a:b 0:1e400 0:10x 3; do
    run 2 "fluid --plot-range $r" -- fluid "$EX/fluid-burst.ini" -q --plot-range "$r" \
        --plot "$TMP/range.png"
    expect_err "fluid --plot-range $r" "--plot-range $r"
done
[ ! -e "$TMP/range.png" ] && ok || bad "fluid --plot-range: a refused range left a PNG"

# ==== 2. Silent wrong answers ====
# Bounds at or beyond 2^1023 compare as what they are (they once became 0 in extended range).
CON=$EX/optimize/two_loop_constrained.ini
run 0 "optimize min_cycle=9e307" -- optimize "$CON" --set optimize.min_cycle=9e307
grep -q "0 feasible" "$TMP/out" && ok || bad "min_cycle=9e307: $(grep evaluated "$TMP/out")"
run 0 "optimize max_throttle=9e307" -- optimize "$CON" --set optimize.max_throttle=9e307
grep -q "optimum: L=4 H=8" "$TMP/out" && ok || bad "max_throttle=9e307: $(grep -m2 'evaluated\|optimum' "$TMP/out")"
run 0 "optimize max_throttle=DBL_MAX" -- optimize "$CON" --set optimize.max_throttle=1.7976931348623157e308
grep -q "optimum: L=4 H=8" "$TMP/out" && ok || bad "max_throttle=DBL_MAX: $(grep -m1 evaluated "$TMP/out")"
# The fluid model cannot answer a slot of arrivals that takes longer than T1 to serve.
FB=$EX/fluid-burst.ini
run 2 "fluid base_rate=1e6" -- fluid "$FB" --set profile.base_rate=1e6
expect_err "fluid base_rate=1e6" "profile.base_rate" "longer than T1"
run 2 "fluid base_rate=1e308" -- fluid "$FB" --set profile.base_rate=1e308
expect_err "fluid base_rate=1e308" "profile.base_rate"
run 2 "fluid burst_rate=1e300" -- fluid "$FB" --set profile.burst_rate=1e300
expect_err "fluid burst_rate=1e300" "profile.burst_rate"
run 0 "fluid base_rate=900 (in range)" -- fluid "$FB" --set profile.base_rate=900 -q

# Keys that cannot act are errors naming the key.
NET=$EX/collapse.ini
run 2 "sim burst without profile" -- sim "$NET" --set source.burst_start=1.5 \
    --set source.burst_length=2 --set source.burst_factor=10
expect_err "sim burst without profile" "source.burst_start" "process = profile"
run 2 "sim steps with mmpp" -- sim "$NET" --set source.process=mmpp --set source.steps=1,10
expect_err "sim steps with mmpp" "source.steps" "process = profile"
run 2 "sim mmpp_rates with poisson" -- sim "$NET" --set source.mmpp_rates=1,2
expect_err "sim mmpp_rates with poisson" "source.mmpp_rates" "process = mmpp"

# Bytes an INI file cannot hold, and lists with an entry left out.
printf '[arrivals]\nrate = 1.3\0junk\n' >"$TMP/nul.ini"
run 2 "NUL inside a value" -- solve "$TMP/nul.ini"
expect_err "NUL inside a value" "nul.ini:2" "NUL byte"
run 2 "phase_switch=0.1,,0.2" -- solve "$EX/mmpp_bursty.ini" --set arrivals.phase_switch=0.1,,0.2
expect_err "phase_switch=0.1,,0.2" "arrivals.phase_switch" "empty entry"
run 2 "phase_switch=0.1,0.2," -- solve "$EX/mmpp_bursty.ini" --set arrivals.phase_switch=0.1,0.2,
expect_err "phase_switch=0.1,0.2," "arrivals.phase_switch"
run 0 "phase_switch='0.1 , 0.2' still fine" -- solve "$EX/mmpp_bursty.ini" --set "arrivals.phase_switch=0.1 , 0.2" -q

# A trace ends the observation at its last instant, and the report says so (it said 100000).
for i in $(seq 100); do echo 5; done >"$TMP/t5.txt"
printf '[model]\nkind=two-loop\n[thresholds]\nL=5\nH=10\nR=20\n[arrivals]\nprocess=trace\nfile=t5.txt\n[sim]\nwarmup=0\n' >"$TMP/t5.ini"
run 0 "trace of 100 arrivals at t=5" -- sim "$TMP/t5.ini" --json -
"$PY" -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["time"] == 5, d["time"]
# Everything happens at the closing instant: no time in overload or discard, but one onset of
# each in 5 s; the upstream holds back 80 of 100 (mode 2 blocks everything upstream, so the
# server discards none).
assert d["P0"] == 1 and d["P1"] == 0 and d["P2"] == 0
assert abs(d["nu01"] - 0.2) < 1e-12 and abs(d["nu12"] - 0.2) < 1e-12
assert abs(d["theta"] - d["throttled"] - d["discarded"]) < 1e-12
' "$TMP/out" && ok || bad "trace at t=5: $(head -c 300 "$TMP/out")"
run 0 "trace table says 5 s" -- sim "$TMP/t5.ini"
grep -q "replications of 5 s" "$TMP/out" && ok || bad "trace table: $(grep method "$TMP/out")"

# ==== 3. Runaways ====
# /dev/zero as the scenario of every subcommand, or as a file a key names, stops at once.
for cmd in solve optimize sim fluid node; do
    run 2 "$cmd /dev/zero" -- "$cmd" /dev/zero
    expect_err "$cmd /dev/zero" "/dev/zero:1" "NUL byte"
done
run 2 "service.file=/dev/zero" -- solve "$EX/empirical_service.ini" --set service.file=/dev/zero
expect_err "service.file=/dev/zero" "service.file" "NUL byte"
head -c 100000 /dev/zero | tr '\0' 'x' >"$TMP/long.ini"
run 2 "one endless line" -- solve "$TMP/long.ini"
expect_err "one endless line" "long.ini:1" "longer than 198 characters"
printf '[arrivals]\nrate = %0300d\n' 1 >"$TMP/long2.ini"
run 2 "a 300-character line" -- solve "$TMP/long2.ini"
expect_err "a 300-character line" "long2.ini:2" "longer than 198 characters"
run 2 "sim source.rate=1e12" -- sim "$NET" --set source.rate=1e12
expect_err "sim source.rate=1e12" "source.rate"
run 2 "sim source.rate=1e8 (memory)" -- sim "$NET" --set source.rate=1e8 --set net.time=1 --set net.warmup=0
expect_err "sim source.rate=1e8 (memory)" "source.rate"
run 2 "sim --trace-interval 1e-9" -- sim "$NET" --trace "$TMP/x.csv" --trace-interval 1e-9
expect_err "sim --trace-interval 1e-9" "--trace-interval" "rows"
[ ! -e "$TMP/x.csv" ] && ok || bad "--trace-interval 1e-9 left its trace file"
run 2 "fluid delay_up=1e6" -- fluid "$FB" --set server.delay_up=1e6
expect_err "fluid delay_up=1e6" "server.delay_up" "horizon"
run 2 "fluid delay_up=1e9" -- fluid "$FB" --set server.delay_up=1e9
expect_err "fluid delay_up=1e9" "server.delay_up"
run 2 "fluid delay_down=1e9 names delay_down" -- fluid "$FB" --set server.delay_up=1 --set server.delay_down=1e9
expect_err "fluid delay_down=1e9 names delay_down" "server.delay_down"
if [ "$(awk '/MemTotal/ {print $2}' /proc/meminfo)" -lt 40000000 ]; then # 20 GB > half
    run 2 "fluid horizon too big for memory" -- fluid "$FB" --set fluid.horizon=4.9e6 --set fluid.slot=0.05
    expect_err "fluid horizon too big for memory" "fluid.horizon" "GB"
fi

# Cost guards: the embedded chain's weights of a heavy tail, the exhaustive search, long sims.
run 2 "solve lognormal cv=10" -- solve --set service.law=lognormal --set service.cv=10
expect_err "solve lognormal cv=10" "service.cv" "tail"
run 0 "solve lognormal cv=0.7 still solves" -- solve "$EX/lognormal_service.ini" -q
# Solving every pair (--exhaustive, or a model the screen does not cover) past R = 2700 takes
# hours; so does even the screened two-loop M|M|1 scan at R = 4e5.
run 2 "optimize thresholds.R=5000" -- optimize "$CON" --set thresholds.R=5000 --exhaustive
expect_err "optimize thresholds.R=5000" "thresholds.R" "hours"
run 2 "optimize thresholds.R=5000 det" -- optimize "$CON" --set thresholds.R=5000 \
    --set service.law=det
expect_err "optimize thresholds.R=5000 det" "thresholds.R" "hours"
run 2 "optimize thresholds.R=4e5 screened" -- optimize "$CON" --set thresholds.R=400000
expect_err "optimize thresholds.R=4e5 screened" "thresholds.R" "screened"
run 2 "sim sim.time=1e12" -- sim "$EX/sim_two_loop.ini" --set sim.time=1e12
expect_err "sim sim.time=1e12" "sim.time" "events"

# ==== 4. Messages that blame the wrong key ====
run 2 "link trunk.loss=1.5" -- sim "$NET" --set "link trunk.loss=1.5"
expect_err "link trunk.loss=1.5" "link trunk.loss"
run 2 "sip.t2=0.1" -- sim "$NET" --set sip.t2=0.1
expect_err "sip.t2=0.1" "'sip.t2'"
run 2 "sip.t1=10 (T2 from the file)" -- sim "$NET" --set sip.t1=10
expect_err "sip.t1=10 (T2 from the file)" "--set sip.t1=10"
run 2 "net source.rate=0" -- sim "$NET" --set source.rate=0
expect_err "net source.rate=0" "source.rate"

run 2 "net.time on a node scenario" -- sim "$EX/sim_two_loop.ini" --set net.time=5
expect_err "net.time on a node scenario" "net.time" "unknown section [net]"
run 0 "sim thresholds.R=1e9 (the simulator needs little)" -- sim "$EX/sim_two_loop.ini" \
    --set thresholds.R=1000000000 --set sim.time=100 --set sim.warmup=10 -q
run 2 "control.kind=1:3:1" -- sim "$NET" --set control.kind=1:3:1
expect_err "control.kind=1:3:1" "control.kind=1:3:1"
echo 4.9e-324 >"$TMP/tiny.txt"
run 2 "empirical 4.9e-324" -- solve "$EX/empirical_service.ini" --set service.file="$TMP/tiny.txt"
expect_err "empirical 4.9e-324" "service.file" "no finite service rate"
run 0 "optimize ignores L and H" -- optimize "$CON" --set thresholds.L=50 --set thresholds.H=60 -q
run 0 "optimize max_discard=1e-310 --json" -- optimize "$CON" --set optimize.max_discard=1e-310 --json -
"$PY" -c 'import json,sys; json.load(open(sys.argv[1]))' "$TMP/out" && ok || bad "max_discard=1e-310: no JSON"

# ==== Found by tests/hostile/probe.sh (see tests/hostile/README.md) ====
printf '[server core]\nbuffer = 0\n' >"$TMP/net_buf0.ini"
run 2 "network file without [net]" -- sim "$TMP/net_buf0.ini"
expect_err "network file without [net]" "server core.buffer"
run 2 "net.time=1e300" -- sim "$NET" --set net.time=1e300
expect_err "net.time=1e300" "net.time" "calls to simulate"
run 2 "source.rate=1e300 blames the rate" -- sim "$EX/burst.ini" --set source.rate=1e300
expect_err "source.rate=1e300 blames the rate" "source.rate"
run 2 "control l1 > h1" -- sim "$NET" --set control.kind=local --set control.l1=5 --set control.h1=1
expect_err "control l1 > h1" "control.l1" "detector"
run 2 "--trace - --json -" -- sim "$NET" --trace - --json -
expect_err "--trace - --json -" "cannot both write to standard output"
run 2 "solve --json - --csv -" -- solve --json - --csv -
expect_err "solve --json - --csv -" "cannot both write to standard output"
run 2 "node --frobnicate (exit 2, no leak)" -- node --frobnicate
run 2 "node --json without a value" -- node --json

# ==== Keys grown at run time (issue 32): one key more than a scenario holds (OSN_INI_MAX_KEYS,
# 131,072) is refused at its line, after at most 80 MiB of records, not read on ====
awk 'BEGIN { for (i = 0; i <= 131072; i++) printf "[element e%d]\nrole = proxy\n", i }' \
    >"$TMP/keys.ini"
run 2 "131,073 keys" -- sim "$TMP/keys.ini"
expect_err "131,073 keys" "$TMP/keys.ini:262146: more than 131072 keys"

summary

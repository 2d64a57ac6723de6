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
cd "$TMP" || exit 1

passed=0
failed=0
ok() { passed=$((passed + 1)); }
bad() {
    failed=$((failed + 1))
    echo "FAIL: $*"
}

# run EXPECTED_STATUS NAME -- ARGS...: runs osn (at most 60 s), stdout/stderr in $TMP/out, err.
run() {
    local want=$1 name=$2
    shift 3
    timeout 60 "$OSN" "$@" >"$TMP/out" 2>"$TMP/err"
    local got=$?
    if [ "$got" -eq "$want" ]; then
        ok
    else
        bad "$name: exit status $got, expected $want (osn $*)"
        sed 's/^/    stderr: /' "$TMP/err" | head -5
    fi
}

# expect_err NAME TEXT...: each TEXT must appear in the last stderr.
expect_err() {
    local name=$1
    shift
    for t in "$@"; do
        if grep -qF -- "$t" "$TMP/err"; then ok; else bad "$name: stderr lacks '$t': $(head -c 300 "$TMP/err")"; fi
    done
}

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

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

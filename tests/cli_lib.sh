# Shared by the command-line tests (test_cli.sh, test_hostile.sh): counters,
# running osn with its status checked, and reading what it printed. Source it after setting OSN
# and TMP (a scratch directory the caller removes). RUN_TIMEOUT (default 120 s) bounds every
# run, so that a regression to a runaway fails instead of hanging CTest.

passed=0
failed=0

ok() { passed=$((passed + 1)); }

bad() {
    failed=$((failed + 1))
    echo "FAIL: $*"
}

# run EXPECTED_STATUS NAME -- ARGS...: runs osn, keeps stdout/stderr in $TMP/out, $TMP/err.
run() {
    local want=$1 name=$2
    shift 3
    timeout "${RUN_TIMEOUT:-120}" "$OSN" "$@" >"$TMP/out" 2>"$TMP/err"
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
        if grep -qF -- "$t" "$TMP/err"; then
            ok
        else
            bad "$name: stderr lacks '$t': $(head -c 300 "$TMP/err")"
        fi
    done
}

# summary: the last line, "N passed, M failed"; its status is the tests' verdict.
summary() {
    echo "$passed passed, $failed failed"
    [ "$failed" -eq 0 ]
}

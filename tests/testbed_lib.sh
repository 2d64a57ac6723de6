# Helpers of the `osn testbed` tests (tests/test_testbed*.sh), sourced after tests/node/lib.sh
# and nl_init (they write into NL_TMP and report with nl_check).

# tb_gone PID...: true when none of the pids is a live process.
tb_gone() {
    local p
    for p in "$@"; do
        kill -0 "$p" 2>/dev/null && return 1
    done
    return 0
}

# tb_run NAME SECONDS COMMAND...: runs an `osn testbed` command line (COMMAND: osn, or mpirun
# and its options before it) under a timeout of SECONDS, its table in NL_TMP/NAME.out and its
# progress in NL_TMP/NAME.err; shows the table, checks that it exited 0 and that no process its
# progress lines name (by pid) is left. TB_PIDS: those pids, sorted.
tb_run() {
    local name=$1 secs=$2
    shift 2
    timeout -k 5 "$secs" "$@" >"$NL_TMP/$name.out" 2>"$NL_TMP/$name.err" {NL_LOCK_FD}>&-
    local rc=$?
    cat "$NL_TMP/$name.out"
    nl_check $rc "osn testbed ($name) exited $rc: $(tail -3 "$NL_TMP/$name.err")"
    TB_PIDS=$(grep -o 'pid [0-9]*' "$NL_TMP/$name.err" | awk '{print $2}' | sort -n | tr '\n' ' ')
    # shellcheck disable=SC2086 # one pid a word
    tb_gone $TB_PIDS
    nl_check $? "a process the testbed ($name) started is still running: $TB_PIDS"
}

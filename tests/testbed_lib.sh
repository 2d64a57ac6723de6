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

# tb_run_steady NAME SECONDS JSON COMMAND...: tb_run, and again (3 tries at most) while a row of
# JSON (the command's --json) says a generator lagged more than 10 ms behind its schedule. `osn
# testbed` itself marks such a run as one not to trust (the machine was too busy to offer the
# load: at load average 9 to 12 here a plain run's generator lagged 247 ms and its goodput fell
# 15% short of the simulator's), so its real figures compare with nothing. A machine that
# starves the generator on every try still fails, on the figures of the last.
tb_run_steady() {
    local name=$1 secs=$2 json=$3 try lag
    shift 3
    for try in 1 2 3; do
        rm -f "$json"
        tb_run "$name" "$secs" "$@"
        lag=$("$NL_PY" -c 'import json, sys
print(max((r.get("lag_max_s") or 0) for r in json.load(open(sys.argv[1]))))' "$json" 2>/dev/null) ||
            return 0
        awk -v l="$lag" 'BEGIN { exit !(l > 0.010) }' || return 0
        [ "$try" = 3 ] && return 0
        nl_log "$name: a generator lagged $lag s behind its schedule (osn testbed does not trust such a run): again, try $((try + 1)) of 3"
    done
}

# Shared bash helpers of the `osn node` tests, the testbed and the CPU benchmark
# (tests/test_node_*.sh, scripts/testbed.sh, bench/node_cpu.sh). Source it; do not run it.
#
#   . "$ROOT/tests/node/lib.sh"
#   nl_init NAME BUDGET_S [--load]   scratch dir $NL_TMP, cleanup trap, watchdog: after BUDGET_S
#                                    seconds the script is sent SIGTERM (cleanup still runs);
#                                    --load: first wait for the machine-wide load-test lock
#                                    (nl_load_lock), so that two load tests never overlap
#   nl_port VAR [N]                  VAR := a port P on 127.0.0.1 with P..P+N-1 free (UDP and
#                                    TCP), never handed out before in this run
#   nl_wait_udp PORT [S]             wait until something is bound to 127.0.0.1:PORT (ss -uln)
#   nl_sipp_uas NAME PORT [ARGS..]   SIPp uas (built-in, or -sf in ARGS) on 127.0.0.1:PORT,
#                                    in the background; its files in $NL_TMP/NAME
#   nl_sipp_uac NAME DEST_PORT RATE CALLS [ARGS..]
#                                    SIPp uac toward 127.0.0.1:DEST_PORT at RATE calls/s, CALLS
#                                    calls, in the foreground; returns SIPp's status (0 all OK,
#                                    1 some call failed, 97/99 exit on signal/internal, 124 hit
#                                    the outer timeout). Add `&` semantics with nl_sipp_uac_bg.
#   nl_kam_start NAME PORT NEXT_PORT [CHILDREN [CFG]]
#                                    Kamailio stateful proxy (tests/node/kamailio/stateful.cfg)
#   nl_node_start NAME ELEMENT PORT NEXT_PORT [SCENARIO] [osn node args..]
#                                    `osn node` (or, with OSN_NODE_STANDIN=1, a stand-in:
#                                    Kamailio for edge/core, SIPp uas for uas)
#   nl_edge_fast NAME PORT NEXT_PORT `osn node` as an edge at its real speed: every cost 0,
#                                    control none (the CPU benchmarks' proxy)
#   nl_stop NAME [S]                 SIGTERM, wait up to S s (default 10), then SIGKILL;
#                                    returns the process's exit status
#   nl_kill9 NAME                    SIGKILL to the process itself (not its timeout wrapper)
#                                    and to its descendants
#   nl_real_pid NAME                 the process under the timeout wrapper (for /proc)
#   nl_descendants PID               PID and its descendants
#   nl_json NAME KEY [KEY..]         keys of a node's --json summary ("" / "-" if absent)
#   nl_stat NAME COLUMN              last row of a SIPp's -trace_stat CSV, e.g. SuccessfulCall(C)
#   nl_counts NAME REGEX             sum over the columns of SIPp's -trace_counts file whose
#                                    name matches REGEX, e.g. '_503_Recv$'
#   nl_rtt_stats NAME [LIMIT_MS [RTD]]
#                                    "n n_within p50 p99 max" (ms) of SIPp's -trace_rtt file,
#                                    response-time rtd RTD (default 1 = INVITE->200)
#   nl_goodput NAME WARM WINDOW [LIMIT_MS]
#                                    "goodput p50_ms p99_ms n": calls/s whose 200 arrived in
#                                    [t0+WARM, t0+WARM+WINDOW) within LIMIT_MS (default 32000,
#                                    Timer B) of the INVITE, t0 = the first INVITE; the setup
#                                    delay quantiles over those calls (from -trace_rtt, rtd 1)
#   nl_cpu_ticks PID                 utime+stime (clock ticks) of PID and all its descendants
#   nl_ok / nl_bad MSG / nl_skip MSG / nl_summary
#                                    counters; nl_summary prints "N passed, M failed" and
#                                    returns 1 when something failed
#
# Environment:
#   OSN               the osn binary (tests set it from their first argument)
#   OSN_NODE_STANDIN  1: stand-ins for the node (Kamailio proxies, SIPp uas), to check the
#                     harness itself while `osn node` does not exist; node counters are skipped
#   NL_KEEP           1: keep $NL_TMP (logs, SIPp traces, JSON) and print its path
#   NL_KAM_CHILDREN   Kamailio UDP workers (default 1: see stateful.cfg on reordering)
#   NL_SIPP_SLACK     seconds an outer `timeout` gives SIPp beyond its own -timeout (default 10)
#   NL_LOCK           the load-test lock file (default /tmp/osn-node-load.lock; none: no lock)
#   NL_LOCK_WAIT      seconds to wait for it (default 1800)
#
# Every process is started on 127.0.0.1 only, under `timeout` (a hard bound even if the script
# dies), and recorded; cleanup kills exactly those pids, never by name.

NL_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NL_PY=/usr/bin/python3
[ -x "$NL_PY" ] || NL_PY=python3
NL_PASS=0
NL_FAIL=0
NL_SKIP=0
NL_PIDS=()
declare -A NL_PID NL_DIR NL_KIND NL_PORT
NL_WATCHDOG=

nl_log() { echo "[$(date +%T)] $*" >&2; }
nl_ok() { NL_PASS=$((NL_PASS + 1)); }
nl_bad() {
    NL_FAIL=$((NL_FAIL + 1))
    echo "FAIL: $*"
}
nl_skip() {
    NL_SKIP=$((NL_SKIP + 1))
    echo "skip: $*"
}
# nl_check STATUS MSG...: pass when STATUS (the previous command's, $?) is 0
nl_check() {
    local st=$1
    shift
    if [ "$st" -eq 0 ]; then nl_ok; else nl_bad "$*"; fi
}
nl_summary() {
    local s=""
    [ "$NL_SKIP" -gt 0 ] && s=" ($NL_SKIP skipped)"
    echo "$NL_PASS passed, $NL_FAIL failed$s"
    [ "$NL_FAIL" -eq 0 ]
}

nl_cleanup() {
    local p
    if [ -n "$NL_WATCHDOG" ]; then
        kill $(pgrep -P "$NL_WATCHDOG") 2>/dev/null # its sleep (by parent pid, not by name)
        kill "$NL_WATCHDOG" 2>/dev/null
    fi
    for p in "${NL_PIDS[@]}"; do
        kill -0 "$p" 2>/dev/null && kill -TERM "$p" 2>/dev/null
    done
    for p in "${NL_PIDS[@]}"; do
        local i=0
        while kill -0 "$p" 2>/dev/null && [ $i -lt 50 ]; do
            sleep 0.1
            i=$((i + 1))
        done
        kill -0 "$p" 2>/dev/null && kill -KILL "$p" 2>/dev/null
        wait "$p" 2>/dev/null
    done
    if [ "${NL_KEEP:-0}" = 1 ]; then
        echo "kept: $NL_TMP" >&2
    else
        rm -rf "$NL_TMP"
    fi
}

nl_init() {
    local name=$1 budget=$2
    # NL_LOCK_FD: the lock's descriptor (or /dev/null); every process started here closes it,
    # so that a process outliving the script cannot keep the lock.
    exec {NL_LOCK_FD}</dev/null
    [ "${3:-}" = --load ] && nl_load_lock "$name"
    NL_TMP=$(mktemp -d "/tmp/osn-$name.XXXXXX")
    : >"$NL_TMP/.ports"
    trap nl_cleanup EXIT
    trap 'echo "interrupted (watchdog or signal)" >&2; exit 3' TERM INT
    # The watchdog's sleep is the only process of its subshell; both end with the script.
    (
        exec {NL_LOCK_FD}>&-
        sleep "$budget" &
        wait $!
        echo "watchdog: $name exceeded ${budget}s" >&2
        kill -TERM $$ 2>/dev/null
    ) &
    NL_WATCHDOG=$!
    command -v sipp >/dev/null || {
        echo "sipp not installed (scripts/deps.sh installs sip-tester)" >&2
        exit 2
    }
    command -v ss >/dev/null || {
        echo "ss not installed (iproute2)" >&2
        exit 2
    }
}

# nl_load_lock NAME: one load test at a time on this machine, whoever runs it and from
# whichever checkout: an exclusive flock on NL_LOCK (default /tmp/osn-node-load.lock), held
# until the script exits, waited for at most NL_LOCK_WAIT s (default 1800) before the budget's
# watchdog starts. NL_LOCK=none skips it.
nl_load_lock() {
    local lock=${NL_LOCK:-/tmp/osn-node-load.lock}
    [ "$lock" = none ] && return 0
    command -v flock >/dev/null || return 0
    exec {NL_LOCK_FD}>&- {NL_LOCK_FD}>>"$lock"
    if ! flock -n "$NL_LOCK_FD"; then
        echo "$1: waiting for another load test to finish (flock $lock)" >&2
        flock -w "${NL_LOCK_WAIT:-1800}" "$NL_LOCK_FD" || {
            echo "$1: $lock still held after ${NL_LOCK_WAIT:-1800}s" >&2
            exit 3
        }
    fi
}

# nl_port VAR [N]
nl_port() {
    local __var=$1 n=${2:-1} p i used
    used=$(ss -Hlun 2>/dev/null | awk '{print $4}'; ss -Hltn 2>/dev/null | awk '{print $4}')
    used=$(printf '%s\n' "$used" | sed -n 's/.*:\([0-9]*\)$/\1/p' | sort -un)
    local tries=0
    while :; do
        tries=$((tries + 1))
        [ $tries -gt 200 ] && {
            echo "nl_port: no free port" >&2
            return 1
        }
        p=$((20000 + (RANDOM * 32768 + RANDOM) % 30000))
        local clash=0
        for ((i = 0; i < n; i++)); do
            if grep -qx "$((p + i))" <<<"$used" || grep -qx "$((p + i))" "$NL_TMP/.ports"; then
                clash=1
                break
            fi
        done
        [ $clash = 0 ] && break
    done
    for ((i = 0; i < n; i++)); do echo $((p + i)) >>"$NL_TMP/.ports"; done
    printf -v "$__var" '%s' "$p"
}

# nl_wait_udp PORT [SECONDS]
nl_wait_udp() {
    local port=$1 t=${2:-10} i=0
    while [ $i -lt $((t * 10)) ]; do
        ss -Hlun "sport = :$port" 2>/dev/null | grep -q "127.0.0.1:$port" && return 0
        sleep 0.1
        i=$((i + 1))
    done
    echo "nl_wait_udp: nothing bound to 127.0.0.1:$port after ${t}s" >&2
    return 1
}

# Records a started process: its pid (the timeout wrapper's), dir, kind.
nl_track() {
    NL_PID[$1]=$2
    NL_DIR[$1]=$3
    NL_KIND[$1]=$4
    NL_PIDS+=("$2")
}

# The process under a `timeout` wrapper (its only child), else the pid itself.
nl_inner_pid() {
    local p=$1 c i=0
    while [ $i -lt 20 ]; do
        c=$(pgrep -P "$p" 2>/dev/null | head -1)
        [ -n "$c" ] && {
            echo "$c"
            return
        }
        sleep 0.05
        i=$((i + 1))
    done
    echo "$p"
}

# Common SIPp socket options: everything on 127.0.0.1, own control and media ports.
nl_sipp_sockopts() {
    local cp mp
    nl_port cp 1
    nl_port mp 4
    echo "-i 127.0.0.1 -mi 127.0.0.1 -ci 127.0.0.1 -cp $cp -mp $mp"
}

# nl_sipp_uas NAME PORT [ARGS..]; runs at most NL_UAS_TIME seconds (default 120)
nl_sipp_uas() {
    local name=$1 port=$2
    shift 2
    local dir=$NL_TMP/$name t=${NL_UAS_TIME:-120} opts scen=(-sn uas)
    mkdir -p "$dir"
    opts=$(nl_sipp_sockopts)
    for a in "$@"; do [ "$a" = -sf ] && scen=(); done
    # shellcheck disable=SC2086
    (cd "$dir" && exec timeout -k 5 $((t + ${NL_SIPP_SLACK:-10})) sipp "${scen[@]}" $opts \
        -p "$port" -nostdin -timeout "${t}s" -trace_stat -stf stat.csv -fd 1 \
        "$@" >sipp.log 2>&1 {NL_LOCK_FD}>&-) &
    nl_track "$name" $! "$dir" sipp
    NL_PORT[$name]=$port
    nl_wait_udp "$port" 10
}

# nl_sipp_uac_bg NAME DEST_PORT RATE CALLS [ARGS..]: background; NL_UAC_TIME (default: the
# sending time plus 60 s of drain) bounds it. Default scenario: built-in uac; -sf in ARGS
# replaces it.
nl_sipp_uac_bg() {
    local name=$1 dest=$2 rate=$3 calls=$4
    shift 4
    local dir=$NL_TMP/$name port opts scen=(-sn uac)
    local t=${NL_UAC_TIME:-$(((calls + rate - 1) / rate + 60))}
    mkdir -p "$dir"
    nl_port port 1
    opts=$(nl_sipp_sockopts)
    for a in "$@"; do [ "$a" = -sf ] && scen=(); done
    # shellcheck disable=SC2086
    (cd "$dir" && exec timeout -k 5 $((t + ${NL_SIPP_SLACK:-10})) sipp "127.0.0.1:$dest" \
        "${scen[@]}" $opts -p "$port" -r "$rate" -m "$calls" -nostdin -timeout "${t}s" \
        -trace_stat -stf stat.csv -fd 1 -trace_counts -trace_error_codes \
        -trace_rtt -rtt_freq 1 "$@" >sipp.log 2>&1 {NL_LOCK_FD}>&-) &
    nl_track "$name" $! "$dir" sipp
    NL_PORT[$name]=$port
}

nl_sipp_uac() {
    nl_sipp_uac_bg "$@"
    nl_wait_pid "$1"
}

# nl_wait_pid NAME: waits for a tracked process to end by itself; returns its status.
nl_wait_pid() {
    local rc
    wait "${NL_PID[$1]}"
    rc=$?
    return $rc
}

# nl_kam_start NAME PORT NEXT_PORT [CHILDREN [CFG]]; runs at most NL_KAM_TIME s (default 600)
nl_kam_start() {
    local name=$1 port=$2 next=$3 n=${4:-${NL_KAM_CHILDREN:-1}}
    local cfg=${5:-$NL_LIB_DIR/kamailio/stateful.cfg} dir=$NL_TMP/$1
    command -v kamailio >/dev/null || {
        echo "kamailio not installed (scripts/deps.sh installs it)" >&2
        return 1
    }
    mkdir -p "$dir"
    # Foreground main process (-DD), log to stderr (-E); SIGTERM to it stops all its workers.
    timeout -k 5 "${NL_KAM_TIME:-600}" kamailio -f "$cfg" -DD -E -m 512 -n "$n" -w "$dir" \
        -Y "$dir" -A "OSN_LISTEN=udp:127.0.0.1:$port" -A "OSN_NEXT_HOP=\"sip:127.0.0.1:$next\"" \
        >"$dir/kamailio.log" 2>&1 {NL_LOCK_FD}>&- &
    nl_track "$name" $! "$dir" kamailio
    NL_PORT[$name]=$port
    nl_wait_udp "$port" 10 || {
        tail -5 "$dir/kamailio.log" >&2
        return 1
    }
}

# True when `osn node` exists (or stand-ins were asked for).
nl_have_node() {
    [ "${OSN_NODE_STANDIN:-0}" = 1 ] && return 0
    [ -n "${OSN:-}" ] && "$OSN" node --help >/dev/null 2>&1
}

# nl_node_start NAME ELEMENT PORT NEXT_PORT [SCENARIO] [osn node args..]
# SCENARIO may be "" (no file: defaults plus the --set's). The node runs with duration 0 and is
# bounded by NL_NODE_TIME (default 600) through `timeout`, which sends SIGTERM (a clean stop,
# summary written) and SIGKILL 10 s later.
nl_node_start() {
    local name=$1 elem=$2 port=$3 next=$4 scen=${5:-}
    shift 4
    [ $# -gt 0 ] && shift
    local dir=$NL_TMP/$name
    mkdir -p "$dir"
    if [ "${OSN_NODE_STANDIN:-0}" = 1 ]; then
        case $elem in
        uas) NL_UAS_TIME=${NL_NODE_TIME:-600} nl_sipp_uas "$name" "$port" ;;
        *) nl_kam_start "$name" "$port" "$next" ;;
        esac
        return
    fi
    local args=()
    [ -n "$scen" ] && args+=("$scen")
    args+=(--set "node.element=$elem" --set "node.listen=127.0.0.1:$port")
    [ "$elem" != uas ] && args+=(--set "node.next_hop=127.0.0.1:$next")
    args+=(--set node.duration=0 --json "$dir/summary.json" --stats "$dir/stats.csv" -q)
    echo "$OSN node ${args[*]} $*" >"$dir/cmdline"
    timeout -k 10 "${NL_NODE_TIME:-600}" "$OSN" node "${args[@]}" "$@" >"$dir/node.out" \
        2>"$dir/node.err" {NL_LOCK_FD}>&- &
    nl_track "$name" $! "$dir" node
    NL_PORT[$name]=$port
    nl_wait_udp "$port" 10 || {
        tail -5 "$dir/node.err" >&2
        return 1
    }
}

# nl_edge_fast NAME PORT NEXT_PORT: an edge whose messages all cost 0, with no control.
nl_edge_fast() {
    local zero=() k
    for k in invite retrans response ack bye reject; do
        zero+=(--set "server edge.cost_$k=0")
    done
    nl_node_start "$1" edge "$2" "$3" "" "${zero[@]}" --set control.kind=none
}

# nl_stop NAME [SECONDS]: SIGTERM, wait, SIGKILL; returns the exit status.
nl_stop() {
    local name=$1 t=${2:-10} p=${NL_PID[$1]} i=0 rc
    kill -0 "$p" 2>/dev/null && kill -TERM "$p" 2>/dev/null
    while kill -0 "$p" 2>/dev/null && [ $i -lt $((t * 10)) ]; do
        sleep 0.1
        i=$((i + 1))
    done
    kill -0 "$p" 2>/dev/null && {
        echo "nl_stop: $name ($p) did not stop in ${t}s, SIGKILL" >&2
        kill -KILL "$p" 2>/dev/null
    }
    wait "$p" 2>/dev/null
    rc=$?
    return $rc
}

# nl_kill9 NAME: SIGKILL to the process under the timeout wrapper (the wrapper then exits),
# and to its own children if it has any (Kamailio's workers would keep the port otherwise).
nl_kill9() {
    local inner
    inner=$(nl_inner_pid "${NL_PID[$1]}")
    # shellcheck disable=SC2046
    kill -KILL $(nl_descendants "$inner") 2>/dev/null
    wait "${NL_PID[$1]}" 2>/dev/null
    return 0
}

# The real process (for /proc): the child of the timeout wrapper.
nl_real_pid() { nl_inner_pid "${NL_PID[$1]}"; }

# nl_json NAME KEY [KEY..]: the values, space-separated; "" for one absent key, "-" for each
# absent key when several are asked for (so that `read -r a b c` keeps its places).
nl_json() {
    local name=$1
    shift
    "$NL_PY" - "${NL_DIR[$name]}/summary.json" "$@" <<'PY'
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except Exception:
    d = {}
keys = sys.argv[2:]
miss = "" if len(keys) == 1 else "-"
print(" ".join(str(d.get(k, miss)) for k in keys))
PY
}

nl_stat() {
    "$NL_PY" - "${NL_DIR[$1]}/stat.csv" "$2" <<'PY'
import csv, sys
try:
    rows = [r for r in csv.reader(open(sys.argv[1]), delimiter=';') if r]
    print(rows[-1][rows[0].index(sys.argv[2])].strip())
except Exception:
    print("")
PY
}

nl_counts() {
    "$NL_PY" - "${NL_DIR[$1]}" "$2" <<'PY'
import csv, glob, re, sys
files = sorted(glob.glob(sys.argv[1] + "/*_counts.csv"))
total = 0
if files:
    rows = [r for r in csv.reader(open(files[-1]), delimiter=';') if r]
    h, last = rows[0], rows[-1]
    for i, name in enumerate(h):
        if re.search(sys.argv[2], name) and i < len(last) and last[i].strip().isdigit():
            total += int(last[i])
print(total)
PY
}

nl_rtt_stats() {
    "$NL_PY" - "${NL_DIR[$1]}" "${2:-32000}" "${3:-1}" <<'PY'
import csv, glob, sys
lim, rtd = float(sys.argv[2]), sys.argv[3]
v = []
for f in glob.glob(sys.argv[1] + "/*_rtt.csv"):
    for r in csv.reader(open(f), delimiter=';'):
        if len(r) >= 3 and r[2].strip() == rtd:
            try:
                v.append(float(r[1]))
            except ValueError:
                pass
v.sort()
def q(p):
    return v[min(len(v) - 1, int(p * len(v)))] if v else float("nan")
print(len(v), sum(1 for x in v if x < lim), q(0.5), q(0.99), v[-1] if v else float("nan"))
PY
}

nl_goodput() {
    "$NL_PY" - "${NL_DIR[$1]}" "$2" "$3" "${4:-32000}" <<'PY'
import csv, glob, sys
d, warm, win, lim = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
rec = []
for f in glob.glob(d + "/*_rtt.csv"):
    for r in csv.reader(open(f), delimiter=';'):
        try:
            rec.append((float(r[0]), float(r[1]), r[2].strip()))
        except (ValueError, IndexError):
            pass
if not rec or win <= 0:
    print("nan nan nan 0")
    sys.exit()
t0 = min(t - rt for t, rt, _ in rec)
a, b = t0 + 1000 * warm, t0 + 1000 * (warm + win)
v = sorted(rt for t, rt, k in rec if k == "1" and a <= t < b and rt < lim)
def q(p):
    return v[min(len(v) - 1, int(p * len(v)))] if v else float("nan")
print("%.2f %.1f %.1f %d" % (len(v) / win, q(0.5), q(0.99), len(v)))
PY
}

# nl_descendants PID: PID and all its descendants, one per line.
nl_descendants() {
    "$NL_PY" - "$1" <<'PY'
import os, sys
kids = {}
for d in os.listdir("/proc"):
    if d.isdigit():
        try:
            s = open("/proc/%s/stat" % d).read()
        except OSError:
            continue
        kids.setdefault(int(s[s.rindex(")") + 2:].split()[1]), []).append(int(d))
todo, out = [int(sys.argv[1])], []
while todo:
    p = todo.pop()
    out.append(p)
    todo += kids.get(p, [])
print("\n".join(map(str, out)))
PY
}

# nl_cpu_ticks PID: utime+stime of PID and its descendants (children of children included).
nl_cpu_ticks() {
    "$NL_PY" - "$1" <<'PY'
import os, sys
def stat(p):
    try:
        s = open("/proc/%s/stat" % p).read()
    except OSError:
        return None
    f = s[s.rindex(")") + 2:].split()
    return int(f[1]), int(f[11]) + int(f[12])   # ppid, utime + stime
root, kids = int(sys.argv[1]), {}
for d in os.listdir("/proc"):
    if d.isdigit():
        s = stat(d)
        if s:
            kids.setdefault(s[0], []).append(int(d))
todo, total = [root], 0
while todo:
    p = todo.pop()
    s = stat(p)
    if s:
        total += s[1]
    todo += kids.get(p, [])
print(total)
PY
}

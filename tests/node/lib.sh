# Shared bash helpers of the `osn node` tests, the testbed and the CPU benchmark
# (tests/test_node_*.sh, tests/test_testbed.sh, bench/node_cpu.sh). Source it; do not run it.
#
#   . "$ROOT/tests/node/lib.sh"
#   nl_init NAME BUDGET_S [--load]   scratch dir $NL_TMP, cleanup trap, watchdog: after BUDGET_S
#                                    seconds the script is sent SIGTERM (cleanup still runs);
#                                    --load: first wait for the machine-wide load-test lock
#                                    (nl_load_lock), so that two load tests never overlap
#   nl_udp_ports PID                 "PORT FD" for each UDP socket on 127.0.0.1 that PID or
#                                    one of its descendants holds (ss -Hulnp), by fd
#   nl_sipp_uas NAME PORT [ARGS..]   SIPp uas (built-in, or -sf in ARGS) on 127.0.0.1, in the
#                                    background; PORT 0: SIPp picks it; its files in
#                                    $NL_TMP/NAME; the port it bound in NL_PORT[NAME]
#   nl_sipp_uac NAME DEST_PORT RATE CALLS [ARGS..]
#                                    SIPp uac toward 127.0.0.1:DEST_PORT at RATE calls/s, CALLS
#                                    calls, in the foreground; returns SIPp's status (0 all OK,
#                                    1 some call failed, 97/99 exit on signal/internal, 124 hit
#                                    the outer timeout). Add `&` semantics with nl_sipp_uac_bg.
#   nl_kam_start NAME PORT NEXT_PORT [CHILDREN [CFG]]
#                                    Kamailio stateful proxy (tests/node/kamailio/stateful.cfg);
#                                    PORT 0: a port found as nl_kam_start explains
#   nl_node_start NAME ELEMENT PORT NEXT_PORT [SCENARIO] [osn node args..]
#                                    `osn node` (or, with OSN_NODE_STANDIN=1, a stand-in:
#                                    Kamailio for edge/core, SIPp uas for uas); PORT 0 (what
#                                    scripts use): the port the kernel chose, read from the
#                                    node's listening line
#   nl_up MSG CMD [ARGS..]           run a start (nl_sipp_uas, nl_node_start, ...) unless one
#                                    failed before; a failure counts as nl_bad MSG
#   nl_require_up                    after the starts of a chain: when one failed, print the
#                                    summary and exit 1 (no traffic toward a missing element)
#   nl_uas_sized NAME RATE [ARGS..] nl_uas_free (a zero-cost osn uas, below) whose
#                                    node.max_memory holds RATE calls/s (the transactions
#                                    RFC 6026 keeps 64*T1 after each call)
#   nl_edge_fast NAME PORT NEXT_PORT [ARGS..] `osn node` as an edge at its real speed: every cost 0,
#                                    control none (the CPU benchmarks' proxy)
#   nl_stop NAME [S]                 SIGTERM, wait up to S s (default 10), then SIGKILL;
#                                    returns the process's exit status
#   nl_kill9 NAME                    SIGKILL to the process itself (not its timeout wrapper)
#                                    and to its descendants
#   nl_real_pid NAME                 the process under the timeout wrapper (for /proc)
#   nl_descendants PID               PID and its descendants
#   nl_json NAME KEY [KEY..]         keys of a node's --json summary ("" / "-" if absent)
#   nl_metric NAME SERIES            a series of a node's metrics port, e.g. osn_node_transactions
#                                    ("" when the node has none or does not answer)
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
# Ports: nothing here guesses a free port and hopes it stays free (a port found free and
# released before the program binds it can be taken in between: "Address already in use" at
# random). Every process binds its own port and the port is read back from it: `osn node`
# binds port 0 and prints the port on its listening line; SIPp, given no -p, -cp or -mp,
# searches for free ports itself (bind, else the next port) and nl_udp_ports reads its SIP
# port back by its pid; Kamailio cannot bind port 0, see nl_kam_start. After a start,
# NL_PORT[NAME] is the port the process holds.
#
# Environment:
#   OSN               the osn binary (tests set it from their first argument)
#   OSN_NODE_STANDIN  1: stand-ins for the node (Kamailio proxies, SIPp uas), to check the
#                     harness itself while `osn node` does not exist; node counters are skipped
#   NL_KEEP           1: keep $NL_TMP (logs, SIPp traces, JSON) and print its path
#   NL_KAM_CHILDREN   Kamailio UDP workers (default 1: see stateful.cfg on reordering)
#   NL_NODE_WORKERS   nl_edge_fast's node.workers (default 1; the benchmarks' BENCH_WORKERS)
#   NL_KAM_TCP        1: Kamailio listens on TCP too (same port) and reaches its next hop over TCP
#   NL_KAM_MEM        Kamailio's memory options (default "-m 512": Debian's default manager,
#                     512 MB shared); the benchmarks give "-x tlsf -X tlsf -m 8192 -M 64 -b 4194304"
#   NL_SIPP_SLACK     seconds an outer `timeout` gives SIPp beyond its own -timeout (default 10)
#   NL_LOCK           the load-test lock file (default /tmp/osn-node-load.lock; none: no lock)
#   NL_LOCK_WAIT      seconds to wait for it (default 1800; CTest passes its OSN_NODE_LOCK_WAIT
#                     and gives a load test that much more TIMEOUT, tests/node.cmake)
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
        # The watchdog first, then its sleep (found by parent pid, not by name): a sleep killed
        # first lets the watchdog wake, say the budget was exceeded and SIGTERM this script,
        # whose exit status then becomes 3 after a run that passed.
        local sl
        sl=$(pgrep -P "$NL_WATCHDOG")
        kill "$NL_WATCHDOG" 2>/dev/null
        [ -n "$sl" ] && kill $sl 2>/dev/null
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

# nl_udp_ports PID: "PORT FD" per UDP socket bound on 127.0.0.1 by PID or its descendants,
# ascending fd (the order a process opened them in, when it closes none in between).
nl_udp_ports() {
    # shellcheck disable=SC2046
    ss -Hulnp 2>/dev/null | "$NL_PY" -c '
import re, sys
pids = set(sys.argv[1:])
out = set()
for line in sys.stdin:
    f = line.split()
    m = re.match(r"127\.0\.0\.1:(\d+)$", f[3]) if len(f) > 3 else None
    if not m:
        continue
    for pid, fd in re.findall(r"pid=(\d+),fd=(\d+)", line):
        if pid in pids:
            out.add((int(fd), int(m.group(1))))
for fd, port in sorted(out):
    print(port, fd)
' $(nl_descendants "$1")
}

# nl_exclusive_udp PORT PID: true when every socket bound to PORT (UDP, any address) is held by
# PID or its descendants: two programs that both set SO_REUSEADDR (Kamailio does) can share a
# UDP port, and bind() succeeding proves nothing then.
nl_exclusive_udp() {
    # shellcheck disable=SC2046
    ss -Hulnp "sport = :$1" 2>/dev/null | "$NL_PY" -c '
import re, sys
pids = set(sys.argv[1:])
for line in sys.stdin:
    held = set(re.findall(r"pid=(\d+),", line))
    if not held or not held <= pids:
        sys.exit(1)
' $(nl_descendants "$2")
}

# nl_dead NAME: true when the tracked process (its timeout wrapper) has exited.
nl_dead() { ! kill -0 "${NL_PID[$1]}" 2>/dev/null; }

# nl_sipp_port NAME [SECONDS]: NL_PORT[NAME] := the SIP port of a SIPp started without -p. SIPp
# opens its SIP socket first, then its media and control sockets, so the SIP socket has the
# lowest fd of its UDP sockets (SIPp 3.6: SIP on fd 4 or 5, media and control after).
nl_sipp_port() {
    local name=$1 t=${2:-10} i=0 inner p
    while [ $i -lt $((t * 10)) ]; do
        nl_dead "$name" && break
        inner=$(nl_inner_pid "${NL_PID[$name]}")
        p=$(nl_udp_ports "$inner" | awk 'NR == 1 {print $1}')
        if [ -n "$p" ]; then
            NL_PORT[$name]=$p
            return 0
        fi
        sleep 0.1
        i=$((i + 1))
    done
    echo "$name: SIPp bound no UDP port on 127.0.0.1 in ${t}s$(nl_dead "$name" && echo " (it exited)"):" >&2
    tail -5 "${NL_DIR[$name]}/sipp.log" >&2
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

# Common SIPp socket options: everything on 127.0.0.1. No -cp or -mp: without them SIPp binds
# its control socket at the first free port from 8888 and its media sockets at the first free
# even port from 6000 (bind, else the next: no race), where an explicit port would be a guess.
nl_sipp_sockopts() {
    echo "-i 127.0.0.1 -mi 127.0.0.1 -ci 127.0.0.1"
}

# nl_sipp_uas NAME PORT [ARGS..]; runs at most NL_UAS_TIME seconds (default 120). PORT 0: no
# -p, SIPp takes the first free port from 5060 (as above); NL_PORT[NAME] is read back.
nl_sipp_uas() {
    local name=$1 port=$2
    shift 2
    local dir=$NL_TMP/$name t=${NL_UAS_TIME:-120} opts scen=(-sn uas) pp=()
    mkdir -p "$dir"
    opts=$(nl_sipp_sockopts)
    for a in "$@"; do [ "$a" = -sf ] && scen=(); done
    [ "${port:-0}" != 0 ] && pp=(-p "$port")
    # shellcheck disable=SC2086
    (cd "$dir" && exec timeout -k 5 $((t + ${NL_SIPP_SLACK:-10})) sipp "${scen[@]}" $opts \
        "${pp[@]}" -nostdin -timeout "${t}s" -trace_stat -stf stat.csv -fd 1 \
        "$@" >sipp.log 2>&1 {NL_LOCK_FD}>&-) &
    nl_track "$name" $! "$dir" sipp
    nl_sipp_port "$name" 10 || return 1
    if [ "${port:-0}" != 0 ] && [ "${NL_PORT[$name]}" != "$port" ]; then
        echo "$name: SIPp bound ${NL_PORT[$name]}, not $port" >&2
        return 1
    fi
}

# nl_sipp_uac_bg NAME DEST_PORT RATE CALLS [ARGS..]: background; NL_UAC_TIME (default: the
# sending time plus 60 s of drain) bounds it. Default scenario: built-in uac; -sf in ARGS
# replaces it.
nl_sipp_uac_bg() {
    local name=$1 dest=$2 rate=$3 calls=$4
    shift 4
    local dir=$NL_TMP/$name opts scen=(-sn uac)
    local t=${NL_UAC_TIME:-$(((calls + rate - 1) / rate + 60))}
    mkdir -p "$dir"
    opts=$(nl_sipp_sockopts)
    for a in "$@"; do [ "$a" = -sf ] && scen=(); done
    # No -p: SIPp finds its own port (nl_sipp_sockopts); the uac's port is nobody's next hop.
    # shellcheck disable=SC2086
    (cd "$dir" && exec timeout -k 5 $((t + ${NL_SIPP_SLACK:-10})) sipp "127.0.0.1:$dest" \
        "${scen[@]}" $opts -r "$rate" -m "$calls" -nostdin -timeout "${t}s" \
        -trace_stat -stf stat.csv -fd 1 -trace_counts -trace_error_codes \
        -trace_rtt -rtt_freq 1 "$@" >sipp.log 2>&1 {NL_LOCK_FD}>&-) &
    nl_track "$name" $! "$dir" sipp
    NL_PORT[$name]=
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

# nl_kam_start NAME PORT NEXT_PORT [CHILDREN [CFG]]; runs at most NL_KAM_TIME s (default 600).
#
# Kamailio cannot bind port 0 (listen=udp:127.0.0.1:0 binds its default, 5060), so with PORT 0
# it is given a port the kernel has just handed out as free (bind to port 0, read, close), and
# then the result is checked rather than trusted: Kamailio must hold the port (ss, by its pids)
# within 10 s and hold it alone (it sets SO_REUSEADDR, so another program that does too could
# share it). Another program may take the port between the close and Kamailio's bind; then
# Kamailio exits (Address already in use) or shares it, this start is stopped and another port
# tried, up to 5 times. So a taken port costs a retry, never a wrong result.
nl_kam_start() {
    local name=$1 port=$2 next=$3 n=${4:-${NL_KAM_CHILDREN:-1}}
    local cfg=${5:-$NL_LIB_DIR/kamailio/stateful.cfg} dir=$NL_TMP/$1 try p i inner
    command -v kamailio >/dev/null || {
        echo "kamailio not installed (scripts/deps.sh installs it)" >&2
        return 1
    }
    mkdir -p "$dir"
    for try in 1 2 3 4 5; do
        p=$port
        if [ "${p:-0}" = 0 ]; then
            p=$("$NL_PY" -c 'import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])')
        fi
        # NL_KAM_TCP=1: TCP too, on the same port, and to the next hop (stateful.cfg).
        local tcp=() tp=
        [ "${NL_KAM_TCP:-0}" = 1 ] && tcp=(-A OSN_TCP -A "OSN_LISTEN_TCP=tcp:127.0.0.1:$p") &&
            tp=";transport=tcp"
        # Foreground main process (-DD), log to stderr (-E); SIGTERM to it stops its workers.
        # shellcheck disable=SC2086 # NL_KAM_MEM is a list of options
        timeout -k 5 "${NL_KAM_TIME:-600}" kamailio -f "$cfg" -DD -E ${NL_KAM_MEM:--m 512} \
            -n "$n" -w "$dir" -Y "$dir" -A "OSN_LISTEN=udp:127.0.0.1:$p" "${tcp[@]}" \
            -A "OSN_NEXT_HOP=\"sip:127.0.0.1:$next$tp\"" >"$dir/kamailio.log" 2>&1 {NL_LOCK_FD}>&- &
        nl_track "$name" $! "$dir" kamailio
        NL_PORT[$name]=$p
        i=0
        while [ $i -lt 100 ] && ! nl_dead "$name"; do
            inner=$(nl_inner_pid "${NL_PID[$name]}")
            if nl_udp_ports "$inner" | awk '{print $1}' | grep -qx "$p"; then
                nl_exclusive_udp "$p" "$inner" && return 0
                echo "$name: 127.0.0.1:$p is shared with another program; another port" >&2
                break
            fi
            sleep 0.1
            i=$((i + 1))
        done
        echo "$name: Kamailio did not take 127.0.0.1:$p (try $try):" >&2
        tail -3 "$dir/kamailio.log" >&2
        nl_stop "$name" 5
        [ "${port:-0}" = 0 ] || return 1
        cp "$dir/kamailio.log" "$dir/kamailio.log.$try" 2>/dev/null
    done
    return 1
}

# True when `osn node` exists (or stand-ins were asked for).
nl_have_node() {
    [ "${OSN_NODE_STANDIN:-0}" = 1 ] && return 0
    [ -n "${OSN:-}" ] && "$OSN" node --help >/dev/null 2>&1
}

# nl_node_start NAME ELEMENT PORT NEXT_PORT [SCENARIO] [osn node args..]
# SCENARIO may be "" (no file: defaults plus the --set's). The node runs with duration 0 and is
# bounded by NL_NODE_TIME (default 600) through `timeout`, which sends SIGTERM (a clean stop,
# summary written) and SIGKILL 10 s later. PORT 0: the kernel chooses; either way the node's
# listening line (stdout, in $NL_TMP/NAME/node.out) gives NL_PORT[NAME], waited for at most
# 10 s; a node that exits first fails the start with its stderr shown.
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
    NL_PORT[$name]=
    nl_node_port "$name" "$dir/node.out" 10
}

# nl_node_port NAME FILE [SECONDS]: NL_PORT[NAME] := the port on the listening line that the
# node (tracked as NAME) writes to FILE once bound; fails, showing its stderr, if it exits first
# or the line does not come in SECONDS (default 10).
nl_node_port() {
    local name=$1 out=$2 t=${3:-10} i=0 p
    while [ $i -lt $((t * 10)) ]; do
        p=$(sed -n 's/^osn node [a-z]* listening on 127\.0\.0\.1:\([0-9]*\) (udp).*/\1/p' \
            "$out" 2>/dev/null | head -1)
        if [ -n "$p" ] && [ "$p" != 0 ]; then
            NL_PORT[$name]=$p
            return 0
        fi
        nl_dead "$name" && break
        sleep 0.1
        i=$((i + 1))
    done
    if nl_dead "$name"; then
        echo "$name: osn node exited before listening:" >&2
    else
        echo "$name: no listening line from osn node in ${t}s:" >&2
    fi
    tail -5 "${out%/*}/node.err" >&2
    return 1
}

# nl_up MSG CMD [ARGS..] and nl_require_up: see the header. Pass ports as "${NL_PORT[x]:-}"
# (set -u): after a failed start the later ones are not run at all.
NL_UP=1
nl_up() {
    local msg=$1
    shift
    [ "$NL_UP" = 1 ] || return 1
    "$@" && return 0
    nl_bad "$msg"
    NL_UP=0
    return 1
}
nl_require_up() {
    [ "$NL_UP" = 1 ] && return 0
    echo "not every element started: no traffic sent" >&2
    nl_summary
    exit 1
}

# nl_edge_fast NAME PORT NEXT_PORT [osn node args..]: an edge whose messages all cost 0, with
# no control (the args add to or override these).
nl_edge_fast() {
    local name=$1 port=$2 next=$3 zero=() k
    shift 3
    for k in invite retrans response ack bye reject; do
        zero+=(--set "server edge.cost_$k=0")
    done
    nl_node_start "$name" edge "$port" "$next" "" "${zero[@]}" --set control.kind=none \
        --set "node.workers=${NL_NODE_WORKERS:-1}" "$@"
}

# nl_uas_free NAME [osn node args..]: an osn uas on port 0 whose messages all cost 0, with no
# control: a callee that is no contestant in a bench (the args add to or override these).
nl_uas_free() {
    local name=$1 zero=() k
    shift
    for k in invite retrans response ack bye reject; do
        zero+=(--set "server uas.cost_$k=0")
    done
    nl_node_start "$name" uas 0 "" "" "${zero[@]}" --set control.kind=none "$@"
}

# nl_uas_sized NAME RATE [osn node args..]: nl_uas_free whose memory budget holds RATE calls/s:
# node.max_memory = RATE x 64*T1 x 1,024 bytes, at least 1 MiB (its minimum).
# Why: RFC 6026 and RFC 3261 17.2.2 keep a uas's INVITE and BYE transactions 64*T1 (32 s) after
# the call, and every byte they keep, kept records included, counts against node.max_memory.
# Both wait in the kept table (the INVITE once its 2xx is acked): about 290 bytes a call
# (kept_bytes_peak over RATE x 64*T1; bench/uas_memory.sh, 2026-12-07: 281 bytes at 5,000
# calls/s for 40 s, 291 at 1,500 with T1 = 20 ms), and the live transactions are only the calls
# not yet acked (68 at the peak of that run). 1,024 bytes a call leaves more than three times
# that. Before the INVITE was kept a call cost about 1.3 KB (its live INVITE about 1.1 KB of it)
# and the rule was 2 x 2,048 bytes; the default 1 GiB refused calls at 503 from about 25,000
# calls/s (the 222,662 refused at 32,000 calls/s in the generators' race were the uas's, at
# max_memory). max_transactions, when not set, is max_memory / 2,048: it bounds the live ones
# only. NL_UAS_T1 (default 0.5) is the T1 of the run, when the args change sip.t1.
nl_uas_sized() {
    local name=$1 rate=$2 mem
    shift 2
    mem=$(awk -v r="$rate" -v t1="${NL_UAS_T1:-0.5}" \
        'BEGIN { m = r * 64 * t1 * 1024; if (m < 1048576) m = 1048576; printf "%.0f", m }')
    nl_uas_free "$name" --set "node.max_memory=$mem" "$@"
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

# nl_core_scaled SCENARIO SCALE: the core's costs multiplied by SCALE, as --set arguments in
# CORE_SETS (the same arguments go to osn sim and to the core node, so both see one server), and
# the capacity osn sim computes for them in CAP. Exits 1 when osn sim gives no capacity.
nl_core_scaled() {
    local kv
    CORE_SETS=()
    while read -r kv; do
        CORE_SETS+=(--set "$kv")
    done < <("$NL_PY" - "$1" "$2" <<'PY'
import configparser, sys
c = configparser.ConfigParser(inline_comment_prefixes=(";", "#"))
c.read(sys.argv[1])
k = float(sys.argv[2])
for key in ("cost_invite", "cost_retrans", "cost_response", "cost_ack", "cost_bye", "cost_reject"):
    v = c.get("server core", key, fallback=None)
    if v is not None:
        print("server core.%s=%.9g" % (key, k * float(v)))
PY
)
    CAP=$("$OSN" sim "$1" "${CORE_SETS[@]}" --json - -q 2>/dev/null | "$NL_PY" -c \
        'import json, sys; print(json.load(sys.stdin)["capacity"])')
    [ -n "$CAP" ] || {
        echo "no capacity from $OSN sim $1 ${CORE_SETS[*]}" >&2
        exit 1
    }
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

# nl_metric NAME SERIES: the value of SERIES (no labels) on the metrics port of a node started
# with --set node.metrics=127.0.0.1:0 (the port read from its listening line), "" if none.
nl_metric() {
    "$NL_PY" - "${NL_DIR[$1]}/node.out" "$2" <<'PY'
import re, sys, urllib.request
try:
    port = re.search(r", metrics 127\.0\.0\.1:(\d+)", open(sys.argv[1]).readline()).group(1)
    text = urllib.request.urlopen("http://127.0.0.1:%s/metrics" % port, timeout=2).read()
    print(next(l.split()[1] for l in text.decode().splitlines() if l.split()[:1] == [sys.argv[2]]))
except Exception:
    print("")
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

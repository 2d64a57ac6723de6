#!/usr/bin/env bash
# The proxy's cost per call in counts that a busy machine does not move (issue 34): instructions
# and system calls of `osn node` as an edge (every cost 0, control none: bench/node_cpu.sh's
# proxy), on the path
#
#   osn node element=uac --RATE calls/s for DURATION s--> EDGE --> osn node element=uas
#
# all on 127.0.0.1, every process on a port it chose (port 0). Two runs, each with a fresh edge:
#   1. the edge under callgrind: its instructions (Ir) inside node_loop (inclusive) divided by
#      the calls that ended good: set-up (node_setup, its rng streams) and teardown are left
#      out, the loop's idle turns (stats rows, timers) are in; the whole process's Ir is shown
#      beside it, then the top functions (self cost);
#   2. the edge under `strace -c -f`: its system calls per good call, by name (set-up's, about
#      two hundred, included).
# The generator (hold 1 ms, seed 1) and the uas run natively; the edge's own summary says how
# many requests it absorbed as retransmissions: more than none means the edge, slowed by the
# tool, fell behind, and the figures are for a different message mix (lower RATE).
#
# Usage: bench/node_callgrind.sh [OSN]      (default build/osn; about a minute)
#   RATE=300 DURATION=5   calls/s and seconds of the generator
#   NODE_CG_OUT=FILE      keep the callgrind output there (callgrind_annotate --inclusive=yes)
#   NODE_CG_STRACE=0      skip the strace run
# Exit 1 when a run failed or not every call ended good, 2 on bad settings or a missing tool.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OSN=${1:-${OSN:-$ROOT/build/osn}}
RATE=${RATE:-300}
DURATION=${DURATION:-5}
for v in RATE DURATION; do
    case ${!v} in
    '' | *[!0-9]* | 0)
        echo "node_callgrind: $v='${!v}' is not a positive integer" >&2
        exit 2
        ;;
    esac
done
[ -x "$OSN" ] || {
    echo "node_callgrind: $OSN is not an executable (build osn first)" >&2
    exit 2
}
command -v valgrind >/dev/null || {
    echo "node_callgrind: valgrind not installed" >&2
    exit 2
}
. "$ROOT/tests/node/lib.sh"
nl_init nodecallgrind 400
nl_up "uas did not start" nl_uas_free uas
nl_require_up
edge_args=()
for k in invite retrans response ack bye reject; do edge_args+=(--set "server edge.cost_$k=0"); done
edge_args+=(--set control.kind=none --set node.element=edge --set node.listen=127.0.0.1:0
    --set "node.next_hop=127.0.0.1:${NL_PORT[uas]}" --set node.duration=0)

# run NAME TOOL..: the edge under TOOL, then the generator through it; 0 when every call of the
# generator ended good. The edge's files in $NL_TMP/NAME, the generator's in $NL_TMP/NAME/gen.*.
run() {
    local name=$1 dir=$NL_TMP/$1
    shift
    mkdir -p "$dir"
    timeout -k 10 300 "$@" "$OSN" node "${edge_args[@]}" --json "$dir/summary.json" -q \
        >"$dir/node.out" 2>"$dir/node.err" {NL_LOCK_FD}>&- &
    nl_track "$name" $! "$dir" node
    nl_node_port "$name" "$dir/node.out" 60 || return 1
    timeout -k 5 200 "$OSN" node --set node.element=uac --set node.listen=127.0.0.1:0 \
        --set "node.next_hop=127.0.0.1:${NL_PORT[$name]}" --set "node.duration=$DURATION" \
        --set "source.rate=$RATE" --set source.hold=0.001 --set net.seed=1 \
        --json "$dir/gen.json" -q >"$dir/gen.out" 2>"$dir/gen.err" {NL_LOCK_FD}>&-
    local rc=$?
    nl_stop "$name" 60 || rc=1
    [ $rc -eq 0 ] || tail -3 "$dir/gen.err" "$dir/node.err" >&2
    return $rc
}

# good NAME: "good started retrans_absorbed" of run NAME.
good() {
    "$NL_PY" - "$NL_TMP/$1/gen.json" "$NL_TMP/$1/summary.json" <<'PY'
import json, sys
u = json.load(open(sys.argv[1]))["uac"]
e = json.load(open(sys.argv[2]))
print(u["good"], u["calls_started"], e.get("retrans_absorbed", "-"))
PY
}

echo "osn node edge (costs 0, control none) between osn's generator ($RATE calls/s for" \
    "${DURATION} s, hold 1 ms) and an osn uas, all on 127.0.0.1"
cg=${NODE_CG_OUT:-$NL_TMP/cg.out}
run cg valgrind --tool=callgrind --trace-children=no --callgrind-out-file="$cg"
nl_check $? "edge under callgrind"
read -r g s ra < <(good cg)
[ "$g" = "$s" ] && [ "$g" -gt 0 ]
nl_check $? "callgrind run: $g of $s calls good"
total=$(sed -n 's/^summary: *\([0-9]*\).*/\1/p; s/^totals: *\([0-9]*\).*/\1/p' "$cg" | head -1)
loop=$(callgrind_annotate --inclusive=yes "$cg" 2>/dev/null | awk '/:node_loop /||/:node_loop$/ {
    gsub(",", "", $1); if ($1 + 0 > s) s = $1 + 0 } END { print s + 0 }')
awk -v t="$total" -v l="$loop" -v g="$g" -v ra="$ra" 'BEGIN {
    printf "callgrind: %d calls good, %s requests absorbed as retransmissions; node_loop %d Ir" \
        " = %.0f Ir per call (whole process %d Ir, %.0f per call)\n", g, ra, l, l / g, t, t / g }'
callgrind_annotate "$cg" 2>/dev/null | sed -n '/^Ir/,$p' | head -32

if [ "${NODE_CG_STRACE:-1}" != 0 ] && command -v strace >/dev/null; then
    run st strace -c -f -o "$NL_TMP/strace.txt"
    nl_check $? "edge under strace"
    read -r g s ra < <(good st)
    [ "$g" = "$s" ] && [ "$g" -gt 0 ]
    nl_check $? "strace run: $g of $s calls good"
    echo
    awk -v g="$g" -v ra="$ra" '
        $1 ~ /^[0-9.]+$/ && NF >= 5 { n = $4; name = $NF; if (name != "total") { c[name] = n; t += n } }
        END {
            printf "strace: %d calls good, %s requests absorbed as retransmissions; %d system calls" \
                " = %.2f per call:", g, ra, t, t / g
            for (k in c) if (c[k] / g >= 0.005) printf " %s %.2f", k, c[k] / g
            printf "\n" }' "$NL_TMP/strace.txt"
fi
nl_stop uas >/dev/null
nl_summary

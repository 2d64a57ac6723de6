#!/usr/bin/env bash
# The generator's cost per call in instructions (issue 30), the stable measure on a shared
# machine: `osn node element=uac` under callgrind (the generator process only) sends RATE
# Poisson calls/s for DURATION s (hold 1 ms, as bench/gen_maxrate.sh) to an `osn node
# element=uas` with all costs 0 on 127.0.0.1 (ports the nodes chose), then prints the
# generator's instructions (Ir) divided by the calls that ended good, and the top functions.
# Then the peer, the same way: SIPp's built-in uac (`sipp -sn uac`, RATE calls/s, RATE x
# DURATION calls, under `timeout`) under callgrind to the same kind of zero-cost osn uas, its Ir
# divided by its successful calls (its start-up included: SIPp has no setup function to leave
# out, so osn's figure with its setup is the one to set beside it), and the ratio SIPp/osn.
# SIPp is skipped, with a note, when it is not installed.
# Usage: bench/gen_callgrind.sh OSN [RATE=1000] [DURATION=5]     (about 2 minutes)
set -u
OSN=$1 RATE=${2:-1000} DURATION=${3:-5}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/tests/node/lib.sh"
nl_init gencallgrind 300
nl_up "uas did not start" nl_uas_free uas
nl_require_up
out=$NL_TMP/cg.out
timeout -k 5 200 valgrind --tool=callgrind --trace-children=no --callgrind-out-file="$out" \
    "$OSN" node --set node.element=uac --set node.listen=127.0.0.1:0 \
    --set "node.next_hop=127.0.0.1:${NL_PORT[uas]}" --set "node.duration=$DURATION" \
    --set "source.rate=$RATE" --set source.hold=0.001 --set net.seed=1 \
    --json "$NL_TMP/gen.json" -q >"$NL_TMP/gen.out" 2>"$NL_TMP/gen.err" {NL_LOCK_FD}>&-
nl_check $? "generator under callgrind: $(tail -3 "$NL_TMP/gen.err")"
# node_setup (inclusive) is a one-off cost (sockets, tables, rng streams), not a call's.
setup=$(callgrind_annotate --inclusive=yes "$out" 2>/dev/null | awk '/:node_setup/ {
    gsub(",", "", $1); if ($1 + 0 > s) s = $1 + 0 } END { print s + 0 }')
# cg_total FILE: the run's total Ir, from callgrind's summary line.
cg_total() { awk '/^(summary|totals):/ { print $2; exit }' "$1"; }
ir=$(cg_total "$out")
read -r osn_call osn_all < <("$NL_PY" - "$NL_TMP/gen.json" "${ir:-0}" "$setup" <<'PY'
import json, sys
u = json.load(open(sys.argv[1]))["uac"]
ir, setup, good = int(sys.argv[2]), int(sys.argv[3]), u["good"]
print(f"{(ir - setup) / max(good, 1):.0f} {ir / max(good, 1):.0f}")
print(f"generator: {u['calls_started']} calls started, {good} good; {ir} Ir, of which "
      f"node_setup {setup}; {(ir - setup) / max(good, 1):.0f} Ir per call "
      f"(with setup {ir / max(good, 1):.0f})", file=sys.stderr)
sys.exit(0 if good == u["calls_started"] and good > 0 else 1)
PY
)
nl_check $? "summary"
callgrind_annotate "$out" 2>/dev/null | sed -n '/^Ir/,$p' | head -40

# The peer: SIPp's built-in uac, the same rate and calls, to a fresh zero-cost uas.
if command -v sipp >/dev/null; then
    nl_up "uas for SIPp did not start" nl_uas_free uas_sipp
    nl_require_up
    calls=$((RATE * DURATION))
    sout=$NL_TMP/cg_sipp.out
    mkdir -p "$NL_TMP/sipp"
    # shellcheck disable=SC2046
    (cd "$NL_TMP/sipp" && timeout -k 5 300 valgrind --tool=callgrind --trace-children=no \
        --callgrind-out-file="$sout" sipp "127.0.0.1:${NL_PORT[uas_sipp]}" -sn uac \
        $(nl_sipp_sockopts) -r "$RATE" -m "$calls" -nostdin -timeout 200s -trace_stat \
        -stf stat.csv -fd 1 >sipp.log 2>&1 {NL_LOCK_FD}>&-)
    nl_check $? "SIPp under callgrind: $(tail -3 "$NL_TMP/sipp/sipp.log")"
    NL_DIR[sipp]=$NL_TMP/sipp
    sok=$(nl_stat sipp 'SuccessfulCall(C)')
    sretr=$(nl_stat sipp 'Retransmissions(C)')
    sir=$(cg_total "$sout")
    if [[ "$sok" =~ ^[0-9]+$ && "$sok" -gt 0 && "${sir:-}" =~ ^[0-9]+$ ]]; then
        sipp_call=$((sir / sok))
        echo "SIPp uac: $calls calls asked, $sok successful, $sretr retransmissions; $sir Ir;" \
            "$sipp_call Ir per call (start-up included)"
        awk -v s="$sipp_call" -v o="$osn_all" -v p="$osn_call" 'BEGIN {
            printf "SIPp/osn Ir per call: %.2f (osn with its setup), %.2f (without)\n",
                s / o, s / p }'
        # Under callgrind SIPp runs tens of times slower; past about 500 calls/s it falls behind
        # its own schedule, its 500 ms T1 fires before the answers are read, and its figure then
        # includes those retransmissions (at 1,000 calls/s, 2 to 3 a call, 2026-12-07); at 200
        # calls/s it sent none.
        [[ "$sretr" =~ ^[0-9]+$ && "$sretr" -gt 0 ]] &&
            echo "note: SIPp fell behind under callgrind ($sretr retransmissions): its figure" \
                "includes them; a lower RATE (200) compares the two on the same work"
        if [ "$sok" = "$calls" ]; then nl_ok; else nl_bad "SIPp: $sok of $calls calls successful"; fi
    else
        nl_bad "SIPp under callgrind: no successful call counted (${NL_TMP}/sipp/sipp.log)"
    fi
    nl_stop uas_sipp >/dev/null
else
    echo "gen_callgrind.sh: SIPp not installed: its figure skipped"
fi
nl_stop uas >/dev/null
nl_summary

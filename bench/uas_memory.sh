#!/usr/bin/env bash
# What a call costs the osn uas in memory (issue 34): OSN's load generator offers RATE calls/s
# (default 5,000) for SECS seconds (default 40, longer than the 32 s of Timer L, so that the
# transactions waiting reach their steady number) to nl_uas_free (tests/node/lib.sh: every cost
# 0, no control, the callee of bench/gen_maxrate.sh; node.max_memory 8 GiB, so that nothing is
# refused) on 127.0.0.1, ports the processes chose. One row: the calls, the uas's refusals, its
# peaks of transactions (live and kept: transactions_peak counts the live ones) and of the kept
# table's bytes (kept_bytes_peak), and the kernel's peak resident set of the uas
# (/proc/PID/status VmHWM) over its resident set at start; both per call of the window of RFC
# 6026's Timer L (RATE x 64*T1 calls wait at once). A second row: the generator's peaks and its
# VmHWM (read every 0.2 s until it exits). Takes the machine's load-test lock.
#
# Usage: bench/uas_memory.sh OSN        RATE=5000 SECS=40 HOLD=0.001
set -u
OSN=$(realpath "$1")
ROOT=$(cd "$(dirname "$0")/.." && pwd)
. "$ROOT/tests/node/lib.sh"
RATE=${RATE:-5000}
SECS=${SECS:-40}
HOLD=${HOLD:-0.001}
nl_init uasmem $((SECS + 200)) --load
export OSN

nl_up "uas did not start" nl_uas_free uas --set node.metrics=127.0.0.1:0 \
    --set node.max_memory=8589934592
nl_require_up
pid=$(nl_real_pid uas)
base=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status")
dir=$NL_TMP/gen
mkdir -p "$dir"
timeout -k 5 $((SECS + 80)) "$OSN" node --set node.element=uac --set node.listen=127.0.0.1:0 \
    --set "node.next_hop=127.0.0.1:${NL_PORT[uas]}" --set "node.duration=$SECS" \
    --set "source.rate=$RATE" --set "source.hold=$HOLD" --set net.seed=1 \
    --json "$dir/summary.json" -q >"$dir/node.out" 2>"$dir/node.err" {NL_LOCK_FD}>&- &
wrap=$!
# the generator's peak resident set, read until it exits (its summary is written by then)
ghwm=0
for ((i = 0; i < (SECS + 80) * 5; i++)); do
    gpid=$(pgrep -P "$wrap" | head -1)
    h=$(awk '/^VmHWM:/ { print $2 }' "/proc/${gpid:-0}/status" 2>/dev/null)
    [ -n "$h" ] && ghwm=$h
    kill -0 "$wrap" 2>/dev/null || break
    sleep 0.2
done
wait "$wrap"
nl_check $? "generator: $(tail -3 "$dir/node.err")"
hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status")
nl_stop uas >/dev/null
"$NL_PY" - "$dir/summary.json" "${NL_DIR[uas]}/summary.json" "$RATE" "$base" "$hwm" "$ghwm" <<'PY'
import json, sys
gen = json.load(open(sys.argv[1]))
g = gen["uac"]
u = json.load(open(sys.argv[2]))
rate, base, hwm = float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
window = rate * 64 * 0.5  # the calls whose transactions wait at once (Timer L, 64*T1)
print(f"calls {g['calls_started']} started, {g['good']} good; uas refused_at_cap "
      f"{u['refused_at_cap']}; transactions_peak {u['transactions_peak']}, kept_peak "
      f"{u['kept_peak']}, kept_bytes_peak {u['kept_bytes_peak']} "
      f"({u['kept_bytes_peak'] / window:.0f} B per call of the window); VmHWM {hwm} kB, "
      f"start {base} kB: {(hwm - base) * 1024 / window:.0f} B per call of the window "
      f"({window:.0f} calls)")
print(f"generator: transactions_peak {gen['transactions_peak']}, kept_peak {gen['kept_peak']}, "
      f"kept_bytes_peak {gen['kept_bytes_peak']}; VmHWM {sys.argv[6]} kB (last read before "
      f"it exited)")
PY
nl_summary

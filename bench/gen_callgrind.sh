#!/usr/bin/env bash
# The generator's cost per call in instructions (issue 30), the stable measure on a shared
# machine: `osn node element=uac` under callgrind (the generator process only) sends RATE
# Poisson calls/s for DURATION s (hold 1 ms, as bench/gen_maxrate.sh) to an `osn node
# element=uas` with all costs 0 on 127.0.0.1 (ports the nodes chose), then prints the
# generator's instructions (Ir) divided by the calls that ended good, and the top functions.
# Usage: bench/gen_callgrind.sh OSN [RATE=1000] [DURATION=5]     (about 1 minute)
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
"$NL_PY" - "$NL_TMP/gen.json" "$out" "$setup" <<'PY'
import json, sys
u = json.load(open(sys.argv[1]))["uac"]
ir = 0
for line in open(sys.argv[2]):
    if line.startswith("summary:") or line.startswith("totals:"):
        ir = int(line.split()[1])
setup = int(sys.argv[3])
good = u["good"]
print(f"generator: {u['calls_started']} calls started, {good} good; {ir} Ir, of which "
      f"node_setup {setup}; {(ir - setup) / max(good, 1):.0f} Ir per call "
      f"(with setup {ir / max(good, 1):.0f})")
sys.exit(0 if good == u["calls_started"] and good > 0 else 1)
PY
nl_check $? "summary"
callgrind_annotate "$out" 2>/dev/null | sed -n '/^Ir/,$p' | head -40
nl_stop uas >/dev/null
nl_summary

#!/usr/bin/env bash
# The callee's memory budget sized for a rate (issue 30; tests/node/lib.sh, nl_uas_sized): in
# the generators' race of 2026-12-07 the 222,662 calls refused at 32,000 calls/s were refused by
# the osn uas at node.max_memory (its default 1 GiB), not by the generator, which has no cap of
# its own: RFC 6026 and RFC 3261 17.2.2 keep a call's INVITE and BYE transactions 64*T1 after it,
# and max_memory counts every byte they keep. The same race, scaled down to a few seconds by a
# short T1 (sip.t1 = 0.02 s: the final waits last 64*T1 = 1.28 s, both sides), on 127.0.0.1 with
# ports the processes chose themselves:
#   - a uas sized by nl_uas_sized for RATE = 1,500 calls/s (1,500 x 1.28 x 1,024 bytes =
#     2.0 MB) takes 5 s of Poisson calls at that rate from the generator: it refuses none
#     (refused_at_cap 0), every call the generator started ends good, and what the uas kept at
#     its peak (kept_bytes_peak, about 560 KB) is within the budget: the rule's bytes per call
#     are an upper bound of what a call costs;
#   - a uas whose budget does not hold its waits, the way a fixed budget fails a higher rate:
#     1 MiB (the key's minimum) with sip.t1 = 0.1 (its final waits last 6.4 s, longer than the
#     run, so every call's two transactions wait at once: about 7,500 x 290 bytes = 2.2 MB): it
#     refuses calls at its cap, and the generator counts them as rejected, so the first check
#     can fail. (With the waits of 1.28 s, 1 MiB holds 1,500 calls/s since the uas keeps its
#     INVITE compact once acked; before, it refused 5,612 in one run.)
# About 15 s.   Usage: test_node_uassized.sh OSN ROOT
set -u
OSN=$1
ROOT=$(cd "$2" && pwd)
. "$ROOT/tests/node/lib.sh"
nl_init uassized 120
export OSN
RATE=1500
T1=0.02
export NL_UAS_T1=$T1

# run NAME: the generator, RATE calls/s for 5 s to uas NAME, in the foreground; its summary in
# $NL_TMP/gen_NAME.json.
run() {
    timeout -k 5 60 "$OSN" node --set node.element=uac --set node.listen=127.0.0.1:0 \
        --set "node.next_hop=127.0.0.1:${NL_PORT[$1]}" --set node.duration=5 \
        --set "source.rate=$RATE" --set source.hold=0.001 --set net.seed=1 \
        --set "sip.t1=$T1" --json "$NL_TMP/gen_$1.json" -q >"$NL_TMP/gen_$1.out" \
        2>"$NL_TMP/gen_$1.err" {NL_LOCK_FD}>&-
    nl_check $? "generator to $1: $(tail -3 "$NL_TMP/gen_$1.err")"
}

# check NAME WANT: WANT "sized" (no refusal, all good, peak within budget) or "small" (refused).
check() {
    "$NL_PY" - "$NL_TMP/gen_$1.json" "${NL_DIR[$1]}/summary.json" "$2" <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))["uac"]
u = json.load(open(sys.argv[2]))
want = sys.argv[3]
budget = u["scenario_resolved"]["node"]["max_memory"]
cap, kept = u["refused_at_cap"], u["kept_bytes_peak"]
print(f"{want}: uas max_memory {budget}, refused_at_cap {cap}, kept_bytes_peak {kept}; "
      f"generator {g['calls_started']} started, {g['good']} good, {g['failed_rejected']} rejected")
if want == "sized":
    ok = cap == 0 and g["good"] == g["calls_started"] > 0 and 0 < kept <= budget
else:
    ok = cap > 0 and g["failed_rejected"] > 0
sys.exit(0 if ok else 1)
PY
}

nl_up "sized uas did not start" nl_uas_sized sized "$RATE" --set "sip.t1=$T1"
nl_up "small uas did not start" nl_uas_free small --set sip.t1=0.1 \
    --set node.max_memory=1048576
nl_require_up
run sized
run small
nl_stop sized >/dev/null
nl_stop small >/dev/null
check sized sized
nl_check $? "the uas sized for $RATE calls/s refused calls or lost some"
check small small
nl_check $? "the uas with 1 MiB refused nothing: the test cannot tell a budget too small"
nl_summary

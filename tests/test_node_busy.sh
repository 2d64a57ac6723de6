#!/usr/bin/env bash
# The node's virtual CPU keeps nominal time (src/node/recv.c): a message's service starts when
# the one before it ended, or at its arrival if later, and ends `cost` later, whenever the loop
# gets round to it. Its busy time (the JSON's util x elapsed_s) and the controller's view of
# the queue must then be nominal too: the CPU seconds a run's messages cost, not that plus the
# loop's lateness at each service's end. A uas with costs 2 ms an INVITE, 1 ms an ACK, 1.5 ms a
# BYE takes 4 s of 60 calls/s (held 0.1 s) from the generator, on 127.0.0.1 with ports the
# processes chose: its busy time is INVITEs x 2 ms + ACKs x 1 ms + BYEs x 1.5 ms, the counts its
# own and the generator's, within 1% (about 1 ms: a few services under way at the ends). When
# the end of each service was taken when the loop handled it, busy time came out 5 to 15% over
# (50 to 100 us a message on this machine).
# About 15 s.   Usage: test_node_busy.sh OSN ROOT
set -u
OSN=$1
ROOT=$(cd "$2" && pwd)
. "$ROOT/tests/node/lib.sh"
nl_init node_busy 120

nl_node_start uas uas 0 "" "" --set "server uas.cost_invite=0.002" \
    --set "server uas.cost_ack=0.001" --set "server uas.cost_bye=0.0015" \
    --set "server uas.buffer=10000"
nl_check $? "uas with costs up"
timeout -k 5 60 "$OSN" node --set node.element=uac --set node.listen=127.0.0.1:0 \
    --set "node.next_hop=127.0.0.1:${NL_PORT[uas]}" --set node.duration=4 \
    --set source.rate=60 --set source.hold=0.1 --set net.seed=3 \
    --json "$NL_TMP/gen.json" -q >"$NL_TMP/gen.out" 2>"$NL_TMP/gen.err" {NL_LOCK_FD}>&-
nl_check $? "generator: $(tail -3 "$NL_TMP/gen.err")"
nl_stop uas
"$NL_PY" - "$NL_TMP/gen.json" "${NL_DIR[uas]}/summary.json" <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))["uac"]
u = json.load(open(sys.argv[2]))
busy = u["util"] * u["elapsed_s"]
want = u["invites_in"] * 0.002 + g["acks_2xx"] * 0.001 + u["bye_in"] * 0.0015
bad = []
if u["retrans_absorbed"] or g["good"] != g["calls_started"] or g["good"] < 150:
    bad.append(f"a clean run: {g['good']} good of {g['calls_started']}, "
               f"{u['retrans_absorbed']} copies at the uas")
if not abs(busy / want - 1) <= 0.01:
    bad.append(f"busy {busy:.4f} s, the messages' costs {want:.4f} s")
print(f"uas busy {busy:.4f} s for {u['invites_in']} INVITEs, {g['acks_2xx']} ACKs, "
      f"{u['bye_in']} BYEs costing {want:.4f} s ({(busy / want - 1) * 100:+.2f}%)")
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
nl_check $? "the virtual CPU's busy time is its messages' costs"
nl_summary

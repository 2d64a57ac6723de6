#!/usr/bin/env bash
# docs/guide.md step 5 as a check: the guide's network in slow motion
# (examples/guide/kamailio-wire.ini, 1.2x the core's capacity, local control at the thresholds
# the guide chose) run for real on 127.0.0.1 by scripts/testbed.sh (SIPp uac -> osn node edge
# -> osn node core -> SIPp uas) beside `osn sim` on the same file. The guide says the two agree;
# this fails when they do not:
#   - real goodput within 10% of the simulator's (measured 276.6 against 277.1 calls/s);
#   - the core's control acted (core rejected_503 > 0) and dropped nothing (buffer 400 > R);
#   - SIPp offered the rate asked for (a "sipp-limited" run measures the machine, not the chain).
# About 25 s.   Usage: test_guide_wire.sh OSN ROOT
set -u
OSN=$1
ROOT=$(cd "$2" && pwd)
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
LOADS=1.2 CONTROLS=local WARM=5 WINDOW=15 OUT=$OUT OSN=$OSN \
    bash "$ROOT/scripts/testbed.sh" "$ROOT/examples/guide/kamailio-wire.ini" ||
    { echo "FAIL: scripts/testbed.sh failed"; exit 1; }
python3 - "$OUT/testbed.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
if len(rows) != 1:
    sys.exit(f"FAIL: {len(rows)} rows in testbed.csv, expected 1")
r = rows[0]
sim, real = float(r["sim_goodput"]), float(r["real_goodput"])
bad = []
if not (0.9 * sim <= real <= 1.1 * sim):
    bad.append(f"real goodput {real} not within 10% of the simulator's {sim}")
if int(r["core_503"] or 0) <= 0:
    bad.append("the core sent no 503: the control never acted")
if int(r["core_dropped"] or 0) != 0:
    bad.append(f"the core dropped {r['core_dropped']} messages")
if "sipp-limited" in r["notes"]:
    bad.append(f"SIPp could not offer the rate ({r['notes']}): the machine is too busy")
for b in bad:
    print("FAIL:", b)
print(f"real {real} against sim {sim} calls/s: {'FAIL' if bad else 'ok'}")
sys.exit(1 if bad else 0)
PY

#!/usr/bin/env bash
# `osn testbed` spread over MPI ranks (issue 30; CTest testbed_mpi when osn is built with MPI):
# examples/node_collapse.ini at 1x under loss (3 s warm-up, 8 s window), once as one process
# and once under `mpirun -n 3`, where element i runs on rank i mod 3 (uas and uac on rank 0,
# core on rank 1, edge on rank 2) and the ranks exchange their listening addresses:
#   - the MPI run collected every summary (4 of 4) and every node ended with exit 0;
#   - the core's and the edge's ends came from ranks 1 and 2 (their last log lines, which rank
#     0 received, say "(rank 1)" and "(rank 2)"), and each proxy sent to the address its
#     downstream element reported on another rank;
#   - the simulator's figures are the same to the bit (same scenario, seed and keys), and the
#     real goodput of each run is within 10% of the simulator's and of the other run's;
#   - the generator's good calls equal the uas's answered calls (every call accounted for);
#   - no pid of either run is left;
#   - --bind with 2 addresses for 3 ranks exits 2 naming --bind, on every rank;
#   - placement by [node] rank (NAME:RANK, ...): a short run with node.rank = "core:2, edge:1"
#     ends the core on rank 2 and the edge on rank 1 (round-robin would give 1 and 2), the uac
#     (element 3, not named) on rank 0, with every summary collected; a rank the job does not
#     have exits 2 naming node.rank on every rank; an element the network does not have, 2
#     naming node.rank without MPI too.
# About 70 s.   Usage: test_testbed_mpi.sh OSN ROOT MPIRUN
set -u
OSN=$1
ROOT=$(cd "$2" && pwd)
MPIRUN=$3
. "$ROOT/tests/node/lib.sh"
. "$ROOT/tests/testbed_lib.sh"
nl_init testbed_mpi 300 --load
SCEN=$ROOT/examples/node_collapse.ini
T=$NL_TMP
# As root, Open MPI needs --allow-run-as-root; --oversubscribe lets 3 ranks share 2 cores.
MPI=("$MPIRUN" -n 3 --oversubscribe --allow-run-as-root)
ARGS=(--loads 1 --controls loss --duration 8 --warmup 3)

# Open MPI leaks by design (its components are unloaded with their blocks): no leak check.
export ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}detect_leaks=0"

"${MPI[@]}" "$OSN" testbed "$SCEN" "${ARGS[@]}" --bind 127.0.0.1,127.0.0.2 \
    >/dev/null 2>"$T/bad.err" {NL_LOCK_FD}>&-
rc=$?
# grep -o, not -c: the ranks' messages may share a line of stderr when they come at once.
[ $rc = 2 ] && [ "$(grep -o -- '--bind 127.0.0.1,127.0.0.2: 2 addresses for 3 ranks' "$T/bad.err" | wc -l)" = 3 ]
nl_check $? "--bind with 2 addresses for 3 ranks: exit $rc, '$(head -3 "$T/bad.err")'"

"${MPI[@]}" "$OSN" testbed "$SCEN" "${ARGS[@]}" --set "node.rank=core:3" \
    >/dev/null 2>"$T/bad.err" {NL_LOCK_FD}>&-
rc=$?
[ $rc = 2 ] && [ "$(grep -o -- "core on rank 3, but the job has 3 ranks" "$T/bad.err" | wc -l)" = 3 ] &&
    grep -q "node.rank" "$T/bad.err"
nl_check $? "node.rank = core:3 with 3 ranks: exit $rc, '$(head -3 "$T/bad.err")'"
"$OSN" testbed "$SCEN" "${ARGS[@]}" --set "node.rank=core:1, nope:2" >/dev/null 2>"$T/bad.err" \
    {NL_LOCK_FD}>&-
rc=$?
[ $rc = 2 ] && grep -q -- "node.rank.*'nope' is no element of this network (uas, core, edge, uac)" \
    "$T/bad.err"
nl_check $? "node.rank naming no element: exit $rc, '$(cat "$T/bad.err")'"

nl_log "osn testbed, one process: loss at 1x, 3 s + 8 s"
tb_run_steady plain 120 "$T/plain.json" "$OSN" testbed "$SCEN" "${ARGS[@]}" \
    --json "$T/plain.json"

nl_log "mpirun -n 3 osn testbed: loss at 1x, 3 s + 8 s"
tb_run_steady mpi 150 "$T/mpi.json" "${MPI[@]}" "$OSN" testbed "$SCEN" "${ARGS[@]}" \
    --json "$T/mpi.json" --keep "$T/keep"

"$NL_PY" - "$T/plain.json" "$T/mpi.json" "$T/keep/loss_1x" <<'PY'
import json, os, sys
plain, mpi = (json.load(open(p))[0] for p in sys.argv[1:3])
run = sys.argv[3]
bad = []
nodes = {n["name"]: n for n in mpi["nodes"]}
if mpi["collected"] != 4 or sorted(nodes) != ["core", "edge", "uac", "uas"]:
    bad.append(f"MPI run: {mpi['collected']} of {mpi['elements']} summaries, nodes {sorted(nodes)}")
for n in mpi["nodes"]:
    if not n["summary"] or n["end"] != "exit 0":
        bad.append(f"{n['name']}: summary {n['summary']}, end {n['end']}")
for name, rank in (("core", 1), ("edge", 2)):
    log = open(os.path.join(run, name + ".log")).read()
    if not log.startswith(f"(rank {rank})"):
        bad.append(f"{name}'s end did not come from rank {rank}: '{log.strip()}'")
for up, down in (("uac", "edge"), ("edge", "core"), ("core", "uas")):
    if nodes[up].get("next_hop") != nodes[down]["listen"]:
        bad.append(f"{up} sent to {nodes[up].get('next_hop')}, {down} is at {nodes[down]['listen']}")
good = nodes["uac"].get("uac", {}).get("good")
if good is None or good != nodes["uas"].get("calls_ok"):
    bad.append(f"generator good {good} != uas calls_ok {nodes['uas'].get('calls_ok')}")
for k in ("sim_goodput", "sim_goodput_hw", "sim_p99_s"):
    if plain[k] != mpi[k]:
        bad.append(f"{k}: plain {plain[k]}, MPI {mpi[k]}: the same simulation must agree")
sim = plain["sim_goodput"]
for name, r in (("plain", plain), ("MPI", mpi)):
    if not (r["real_goodput"] and abs(r["real_goodput"] / sim - 1) <= 0.10):
        bad.append(f"{name} real goodput {r['real_goodput']} not within 10% of sim {sim}")
if not (plain["real_goodput"] and mpi["real_goodput"] and
        abs(mpi["real_goodput"] / plain["real_goodput"] - 1) <= 0.10):
    bad.append(f"MPI real {mpi['real_goodput']} not within 10% of plain {plain['real_goodput']}")
for b in bad:
    print("FAIL:", b)
print(f"sim {sim}; real plain {plain['real_goodput']}, MPI {mpi['real_goodput']} calls/s; p99 "
      f"real plain {plain['real_p99_s']}, MPI {mpi['real_p99_s']} s: {'FAIL' if bad else 'ok'}")
sys.exit(1 if bad else 0)
PY
nl_check $? "MPI beside one process"

nl_log "mpirun -n 3 osn testbed, node.rank = core:2, edge:1: loss at 1x, 2 s + 4 s"
tb_run_steady placed 150 "$T/placed.json" "${MPI[@]}" "$OSN" testbed "$SCEN" --loads 1 \
    --controls loss --warmup 2 --duration 4 --set "node.rank=core:2, edge:1" --json "$T/placed.json" \
    --keep "$T/placed"
grep -q "3 MPI ranks: uas on 0, core on 2, edge on 1, uac on 0" "$T/placed.err"
nl_check $? "the placement said: $(head -1 "$T/placed.err")"
"$NL_PY" - "$T/placed.json" "$T/placed/loss_1x" <<'PY'
import json, os, sys
row = json.load(open(sys.argv[1]))[0]
run = sys.argv[2]
bad = []
nodes = {n["name"]: n for n in row["nodes"]}
if row["collected"] != 4:
    bad.append(f"{row['collected']} of {row['elements']} summaries")
for n in row["nodes"]:
    if not n["summary"] or n["end"] != "exit 0":
        bad.append(f"{n['name']}: summary {n['summary']}, end {n['end']}")
for name, rank in (("core", 2), ("edge", 1)):
    log = open(os.path.join(run, name + ".log")).read()
    if not log.startswith(f"(rank {rank})"):
        bad.append(f"{name}'s end did not come from rank {rank}: '{log.strip()}'")
for name in ("uas", "uac"):  # rank 0's own: their logs are the nodes' own, not a rank's word
    log = open(os.path.join(run, name + ".log")).read()
    if log.startswith("(rank"):
        bad.append(f"{name} did not run on rank 0: '{log.strip()}'")
for up, down in (("uac", "edge"), ("edge", "core"), ("core", "uas")):
    if nodes[up].get("next_hop") != nodes[down]["listen"]:
        bad.append(f"{up} sent to {nodes[up].get('next_hop')}, {down} is at {nodes[down]['listen']}")
for b in bad:
    print("FAIL:", b)
print(f"placed: real {row['real_goodput']}, sim {row['sim_goodput']} calls/s: "
      f"{'FAIL' if bad else 'ok'}")
sys.exit(1 if bad else 0)
PY
nl_check $? "node.rank placement"

nl_summary

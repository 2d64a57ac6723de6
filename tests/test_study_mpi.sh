#!/usr/bin/env bash
# Studies over MPI ranks (run by CTest as cli_study_mpi when osn is built with MPI): 3 ranks and
# one process give the same JSON, key for key and value for value, for a network study, a node
# study with --precision, a study of fewer points than ranks (each point's replications shared)
# and a resumed study; an error on a bad point still exits 2 and says why.
# The only keys left out are the ones that measure the machine (msgs_per_s, events_per_s...).
# osn optimize on 3 ranks writes the one-process JSON and --grid CSV, byte for byte; a single
# simulation (node, network) whose replications the ranks share writes the one-process files.
# Usage: test_study_mpi.sh OSN ROOT MPIRUN
set -u
OSN=$1
ROOT=$2
MPIRUN=$3
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
. "$ROOT/tests/cli_lib.sh"
E=$ROOT/examples
# As root, Open MPI needs --allow-run-as-root; --oversubscribe lets 3 ranks share 2 cores.
MPI=("$MPIRUN" -n 3 --oversubscribe --allow-run-as-root)

# mpi_run EXPECTED NAME -- ARGS...: osn under mpirun, like run().
mpi_run() {
    local want=$1 name=$2
    shift 3
    # Open MPI leaks by design (its components are unloaded with their blocks): under ASan the
    # ranks do not check leaks; test_study.sh checks the driver's own code in one process.
    ASAN_OPTIONS="${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}detect_leaks=0" \
        timeout 120 "${MPI[@]}" "$OSN" "$@" >"$TMP/out" 2>"$TMP/err"
    local got=$?
    [ "$got" -eq "$want" ] && ok || {
        bad "$name: exit status $got, expected $want"
        head -5 "$TMP/err"
    }
}

same_json() {
    if out=$("$PY" -c "
import json, sys
VOLATILE = {'msgs_per_s', 'wall_s', 'events_per_s', 'timing'}
def strip(x):
    if isinstance(x, dict):
        return {k: strip(v) for k, v in x.items() if k not in VOLATILE}
    if isinstance(x, list):
        return [strip(v) for v in x]
    return x
a = json.dumps(strip(json.load(open(sys.argv[1]))))
b = json.dumps(strip(json.load(open(sys.argv[2]))))
assert a == b, 'the files differ'
assert len(json.load(open(sys.argv[1]))) == int(sys.argv[3])
" "$2" "$3" "$4" 2>&1); then ok; else bad "$1: $out"; fi
}

NET=("$E/collapse.ini" --set net.time=2 --set net.warmup=1 --replications 2 --threads 1
    --set source.rate=200:600:400 --set control.kind=none,loss,rate -q)
run 0 "net one process" -- sim "${NET[@]}" --json "$TMP/net1.json"
mpi_run 0 "net 3 ranks" -- sim "${NET[@]}" --json "$TMP/net3.json"
same_json "net study: 3 ranks = 1 process" "$TMP/net1.json" "$TMP/net3.json" 6

NODE=("$E/sim_md1.ini" --set sim.time=2000 --set sim.warmup=100 --threads 1
    --set thresholds.H=15,18 --set arrivals.rate=0.8,1.2 --precision 0.1 --max-replications 16 -q)
run 0 "node one process" -- sim "${NODE[@]}" --json "$TMP/node1.json"
mpi_run 0 "node 3 ranks" -- sim "${NODE[@]}" --json "$TMP/node3.json"
same_json "node study with --precision: 3 ranks = 1 process" "$TMP/node1.json" "$TMP/node3.json" 4

# Fewer points than ranks: every rank runs each point, its replications (with --precision,
# those each round adds) shared by the ranks; the one-process JSON and CSV.
SHARED=("$E/collapse.ini" --set net.time=2 --set net.warmup=1 --set source.rate=800 --threads 1
    --set control.kind=none,rate --replications 2 --precision 0.02 --max-replications 16)
run 0 "shared one process" -- sim "${SHARED[@]}" --json "$TMP/sh1.json" --csv "$TMP/sh1.csv" -q
mpi_run 0 "shared 3 ranks" -- sim "${SHARED[@]}" --json "$TMP/sh3.json" --csv "$TMP/sh3.csv"
expect_err "shared 3 ranks" "2 points to run on 3 ranks: each point's replications shared"
same_json "2 points on 3 ranks, replications shared = 1 process" "$TMP/sh1.json" "$TMP/sh3.json" 2
cmp -s "$TMP/sh1.csv" "$TMP/sh3.csv" && ok || bad "shared: the CSV of 3 ranks differs"

# Resumed under MPI: 4 of 6 points in the checkpoint, the 2 others run on the ranks (shared).
"$PY" -c "
import json, sys
d = json.load(open(sys.argv[1]))
json.dump([p for i, p in enumerate(d) if i not in (1, 5)], open(sys.argv[2], 'w'))
" "$TMP/net1.json" "$TMP/ckpt.json"
mpi_run 0 "resume 3 ranks" -- sim "${NET[@]}" --resume "$TMP/ckpt.json" --json "$TMP/res3.json"
same_json "resumed on 3 ranks = 1 process" "$TMP/net1.json" "$TMP/res3.json" 6

# osn optimize: the pairs shared by 3 ranks give the one-process files, byte for byte (the JSON
# of the optimum and the --grid CSV of every pair), also with constant service (the embedded
# chain, a cache of service paths per H) and for the bi-level model (skipped pairs).
OPT=$E/optimize/two_loop_constrained.ini
for v in "exp:--set thresholds.R=60" "det:--set thresholds.R=40 --set service.law=det" \
    "bi:$E/optimize/bi_level.ini"; do
    name=${v%%:*}
    args=${v#*:}
    # shellcheck disable=SC2086 # the word splitting of args is wanted
    if [ "$name" = bi ]; then set -- $args; else set -- "$OPT" $args; fi
    run 0 "optimize $name one process" -- optimize "$@" --threads 2 -q \
        --json "$TMP/opt1_$name.json" --grid "$TMP/opt1_$name.csv"
    mpi_run 0 "optimize $name 3 ranks" -- optimize "$@" --threads 1 -q \
        --json "$TMP/opt3_$name.json" --grid "$TMP/opt3_$name.csv"
    for f in json csv; do
        if cmp -s "$TMP/opt1_$name.$f" "$TMP/opt3_$name.$f"; then
            ok
        else
            bad "optimize $name: the $f of 3 ranks differs from one process's"
        fi
    done
done
if [ "$(wc -l <"$TMP/opt1_exp.csv")" -gt 1000 ]; then ok; else bad "optimize: grid too small"; fi
# Without --grid the two-loop M|M|1 scan is screened (every rank runs it whole, nothing to
# exchange); with --grid on rank 0 alone, the other ranks must still join its plain scan.
run 0 "optimize screened one process" -- optimize "$OPT" --set thresholds.R=300 -q \
    --json "$TMP/opt1_scr.json"
mpi_run 0 "optimize screened 3 ranks" -- optimize "$OPT" --set thresholds.R=300 -q \
    --json "$TMP/opt3_scr.json"
cmp -s "$TMP/opt1_scr.json" "$TMP/opt3_scr.json" && ok ||
    bad "optimize screened: the json of 3 ranks differs from one process's"
rm -f "$TMP/optbad.json"
mpi_run 2 "optimize bad key on 3 ranks" -- optimize "$OPT" --set optimize.max_los=0.1 \
    --json "$TMP/optbad.json"
expect_err "optimize bad key on 3 ranks" "max_los"
if [ -e "$TMP/optbad.json" ]; then bad "optimize bad key: wrote a file"; else ok; fi

mpi_run 2 "bad point on 3 ranks" -- sim "$E/sim_md1.ini" --set arrivals.rate=1.2,0.5 --threads 1
expect_err "bad point on 3 ranks" "point 2 of 2 (arrivals.rate=0.5)"

# A single run (no grid): its replications shared by the ranks, 7 on 3 ranks (blocks of 2, 2
# and 3) and 2 on 3 (rank 0 runs none), give the one-process files: the estimates, each
# replication's own values and, for the node, every return time (the empirical curve).
for v in "node:7:$E/sim_two_loop.ini --set sim.time=2e4 --dist-tret TMPDIR/tret_N.csv" \
    "node2:2:$E/sim_two_loop.ini --set sim.time=2e4 --dist-tret TMPDIR/tret_N.csv" \
    "net:5:$E/collapse.ini --set net.time=2 --set net.warmup=1 --set source.rate=600"; do
    name=${v%%:*}
    rest=${v#*:}
    reps=${rest%%:*}
    args=${rest#*:}
    for n in 1 3; do
        # shellcheck disable=SC2086 # the word splitting of args is wanted
        set -- ${args//TMPDIR/$TMP} --replications "$reps" --threads 1 -q \
            --json "$TMP/single${n}_$name.json" --replications-out "$TMP/reps${n}_$name.csv"
        set -- "${@//tret_N/tret${n}_$name}"
        if [ "$n" = 1 ]; then
            run 0 "single $name one process" -- sim "$@"
        else
            mpi_run 0 "single $name 3 ranks" -- sim "$@"
        fi
    done
    same_json "single $name: 3 ranks = 1 process" "$TMP/single1_$name.json" \
        "$TMP/single3_$name.json" "$("$PY" -c "import json,sys; print(len(json.load(open(sys.argv[1]))))" "$TMP/single1_$name.json")"
    cmp -s "$TMP/reps1_$name.csv" "$TMP/reps3_$name.csv" && ok ||
        bad "single $name: --replications-out of 3 ranks differs from one process's"
    if [ "$(($(wc -l <"$TMP/reps3_$name.csv") - 1))" = "$reps" ]; then ok; else
        bad "single $name: not $reps replications"
    fi
    if [ "$name" != net ]; then
        cmp -s "$TMP/tret1_$name.csv" "$TMP/tret3_$name.csv" && ok ||
            bad "single $name: --dist-tret of 3 ranks differs from one process's"
    fi
done
# --compare: each value's replications shared by the ranks, the one-process comparison.
CMP=("$E/collapse.ini" --set net.time=2 --set net.warmup=1 --set source.rate=600
    --compare control.kind=loss,rate --replications 4 --threads 1 -q)
run 0 "compare one process" -- sim "${CMP[@]}" --json "$TMP/cmp1.json"
mpi_run 0 "compare 3 ranks" -- sim "${CMP[@]}" --json "$TMP/cmp3.json"
same_json "compare: 3 ranks = 1 process" "$TMP/cmp1.json" "$TMP/cmp3.json" \
    "$("$PY" -c "import json,sys; print(len(json.load(open(sys.argv[1]))))" "$TMP/cmp1.json")"
mpi_run 2 "single run --trace on 3 ranks" -- sim "$E/sim_two_loop.ini" --trace "$TMP/tr.csv"
expect_err "single run --trace on 3 ranks" "run a traced simulation without mpirun"
if [ -e "$TMP/tr.csv" ]; then bad "--trace refused: wrote a file"; else ok; fi

summary

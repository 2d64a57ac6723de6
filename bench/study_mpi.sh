#!/usr/bin/env bash
# Benchmark of a network study over MPI ranks (run by `make bench` after run.sh): 12 points
# (source.rate 200..1400 x control none, loss, rate) x 8 replications of examples/collapse.ini,
# 10 s after 5 s, one thread per rank, run as a plain process, then with mpirun -n 1 and -n 2.
# Prints the wall times, the parallel efficiency T(1 rank) / (2 x T(2 ranks)), and whether the
# JSON of 2 ranks equals the plain run's (every key but msgs_per_s and the timing block, which
# measure the machine). Then `osn optimize` at R = 200 with constant service (examples/optimize/
# two_loop_constrained.ini, about 20,000 pairs): one thread, all the machine's threads, and
# mpirun -n 2 with one thread per rank, each JSON compared byte for byte with the one-thread
# run's. It measures; it never fails on time. Skipped, with a note, without mpirun or
# without osn-mpi.so. Then a single network run of 8 replications on 1 and 2 ranks, and the
# start-up of a plain run beside one under mpirun. OSN_BUILD names the build directory.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build=${OSN_BUILD:-build}
osn=$build/osn
if ! command -v mpirun >/dev/null || [[ ! -f $build/osn-mpi.so ]]; then
    echo "study_mpi.sh: mpirun or $build/osn-mpi.so missing: MPI study benchmark skipped"
    exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
args=(sim examples/collapse.ini --set net.time=10 --set net.warmup=5 --replications 8
    --threads 1 --set source.rate=200:1400:400 --set control.kind=none,loss,rate -q)
mpi=(mpirun --oversubscribe)
[[ $(id -u) -eq 0 ]] && mpi+=(--allow-run-as-root)

wall() { # wall seconds of "$@"
    local t0 t1
    t0=$(date +%s.%N)
    "$@" >/dev/null
    t1=$(date +%s.%N)
    echo "$t0 $t1" | awk '{printf "%.2f", $2 - $1}'
}

echo "OSN study over MPI: 12 points x 8 replications, collapse.ini, 10 s + 5 s warm-up, 1 thread/rank"
echo "machine: nproc=$(nproc), load average $(cut -d' ' -f1-3 /proc/loadavg)"
t0=$(wall "$osn" "${args[@]}" --json "$tmp/plain.json")
t1=$(wall "${mpi[@]}" -n 1 "$osn" "${args[@]}" --json "$tmp/r1.json")
t2=$(wall "${mpi[@]}" -n 2 "$osn" "${args[@]}" --json "$tmp/r2.json")
same=$(python3 -c "
import json, sys
def strip(x):
    return [{k: v for k, v in p.items() if k not in ('msgs_per_s', 'timing')} for p in x]
a, b = (strip(json.load(open(f))) for f in sys.argv[1:])
print('identical' if a == b else 'DIFFERENT')
" "$tmp/plain.json" "$tmp/r2.json")
printf '  %-22s %8s s\n' "plain (no MPI)" "$t0" "mpirun -n 1" "$t1" "mpirun -n 2" "$t2"
awk -v a="$t1" -v b="$t2" 'BEGIN {printf "  speed-up %.2f, parallel efficiency %.0f%%\n", a / b, 50 * a / b}'
echo "  JSON of 2 ranks vs plain: $same"

opt=(optimize examples/optimize/two_loop_constrained.ini --set thresholds.R=200
    --set service.law=det -q)
nthr=$(nproc)
echo
echo "OSN optimize over threads and MPI ranks: R = 200, constant service (the embedded chain)"
echo "machine: nproc=$nthr, load average $(cut -d' ' -f1-3 /proc/loadavg)"
o1=$(wall "$osn" "${opt[@]}" --threads 1 --json "$tmp/opt1.json")
on=$(wall "$osn" "${opt[@]}" --threads "$nthr" --json "$tmp/optn.json")
o2=$(wall "${mpi[@]}" -n 2 "$osn" "${opt[@]}" --threads 1 --json "$tmp/opt2.json")
printf '  %-22s %8s s\n' "1 thread" "$o1" "$nthr threads" "$on" "mpirun -n 2, 1 thread" "$o2"
awk -v a="$o1" -v b="$on" -v c="$o2" -v n="$nthr" 'BEGIN {
    printf "  threads: speed-up %.2f, efficiency %.0f%%; 2 ranks: speed-up %.2f, efficiency %.0f%%\n",
        a / b, 100 * a / (n * b), a / c, 50 * a / c }'
for f in optn opt2; do
    if cmp -s "$tmp/opt1.json" "$tmp/$f.json"; then s=identical; else s=DIFFERENT; fi
    echo "  JSON of $f vs 1 thread: $s"
done

# A single network run (no grid): its 8 replications shared by 2 ranks.
single=(sim examples/collapse.ini --set net.time=60 --set net.warmup=5 --replications 8
    --threads 1 --set source.rate=1000 -q)
echo
echo "OSN single simulation over MPI ranks: collapse.ini at 1000 calls/s, 8 replications of 60 s"
echo "machine: nproc=$nthr, load average $(cut -d' ' -f1-3 /proc/loadavg)"
s1=$(wall "${mpi[@]}" -n 1 "$osn" "${single[@]}" --json "$tmp/s1.json")
s2=$(wall "${mpi[@]}" -n 2 "$osn" "${single[@]}" --json "$tmp/s2.json")
printf '  %-22s %8s s\n' "mpirun -n 1" "$s1" "mpirun -n 2" "$s2"
awk -v a="$s1" -v b="$s2" 'BEGIN {printf "  speed-up %.2f, parallel efficiency %.0f%%\n", a / b, 50 * a / b}'
same=$(python3 -c "
import json, sys
a, b = ({k: v for k, v in json.load(open(f)).items() if k != 'timing'} for f in sys.argv[1:])
print('identical' if a == b else 'DIFFERENT')
" "$tmp/s1.json" "$tmp/s2.json")
echo "  JSON of 2 ranks vs 1: $same"

# Start-up of a plain run: osn links no MPI library (ldd), and only a launcher's environment
# makes it open osn-mpi.so; the median of 50 runs of a model solved in microseconds.
startup() { # median wall milliseconds of 50 runs of "$@"
    local i t0 t1
    for i in $(seq 50); do
        t0=$(date +%s%N)
        "$@" >/dev/null 2>&1
        t1=$(date +%s%N)
        echo $(((t1 - t0) / 1000))
    done | sort -n | sed -n 25p | awk '{printf "%.1f", $1 / 1000}'
}
echo
echo "OSN start-up (osn solve examples/exact_tiny.ini, median of 50)"
echo "  libraries with 'mpi' in osn's ldd: $(ldd "$osn" | grep -ci mpi || true)"
printf '  %-22s %8s ms\n' "plain" "$(startup "$osn" solve examples/exact_tiny.ini -q)" \
    "mpirun -n 1" "$(startup "${mpi[@]}" -n 1 "$osn" solve examples/exact_tiny.ini -q)"

#!/usr/bin/env bash
# The exact solver against SciPy at one R, in interleaved pairs: OSN, SciPy, OSN, SciPy, ...
#
#   bench/solve_pairs.sh [BUILD_DIR] [R] [PAIRS]   (defaults: build-release, as `make bench`; 1000000; 5)
#
# Each pair is one process of build/bench_solve R (median of its own repeats of a whole solve)
# then one of bench/scipy_peer.py R (assembly + spsolve + measures, also a median of repeats);
# the ratio SciPy/OSN is taken pair by pair, so that the machine's speed, which drifts on a
# shared host from minute to minute, is nearly the same for both terms of each ratio. Prints
# each pair, then the median ratio with its range, the date and the load average before and
# after: the figure docs/performance.md quotes. Measures; never fails on a slow result.
set -eu

build=${1:-build-release}
r=${2:-1000000}
pairs=${3:-5}
py=/usr/bin/python3 # Debian's python, which has python3-scipy

[ -x "$build/bench_solve" ] || { echo "solve_pairs.sh: $build/bench_solve not found" >&2; exit 2; }
"$py" -c 'import scipy' 2>/dev/null || { echo "solve_pairs.sh: $py has no scipy (scripts/deps.sh bench)" >&2; exit 2; }
kv() { tr ' ' '\n' <<<"$1" | sed -n "s/^$2=//p"; }

load0=$(cut -d' ' -f1-3 /proc/loadavg)
ratios=()
for ((i = 1; i <= pairs; i++)); do
    o=$("$build/bench_solve" "$r")
    p=$("$py" bench/scipy_peer.py "$r")
    os=$(kv "$o" median_s)
    ps=$(kv "$p" median_s)
    ratio=$(awk -v a="$ps" -v b="$os" 'BEGIN { printf "%.1f", a / b }')
    ratios+=("$ratio")
    printf 'pair %d: osn %s s, scipy %s s (spsolve alone %s s), scipy/osn %s\n' "$i" "$os" "$ps" \
        "$(kv "$p" solve_s)" "$ratio"
done
sorted=$(printf '%s\n' "${ratios[@]}" | sort -g)
printf 'R = %s, %d interleaved pairs, %s UTC: scipy/osn median %s, range %s to %s; load average %s before, %s after\n' \
    "$r" "$pairs" "$(date -u '+%Y-%m-%d %H:%M')" \
    "$(awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }' <<<"$sorted")" \
    "$(head -n1 <<<"$sorted")" "$(tail -n1 <<<"$sorted")" "$load0" "$(cut -d' ' -f1-3 /proc/loadavg)"

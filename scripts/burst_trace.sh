#!/usr/bin/env bash
# The short overload of examples/burst.ini (0.7x capacity, a 3x burst for 3 s at t = 2 s, core
# buffer 50 000) without control, with the requests-only PRSM of the papers and with prsm as
# osn runs it by default (response copies queued last too): the core's queue and the goodput
# over time from replication 0 (--trace), then docs/burst.png with gnuplot. About 30 s.
# OSN_BUILD names the build directory (default build), OSN_BURST_PNG the image.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

osn=${OSN_BUILD:-build}/osn
png=${OSN_BURST_PNG:-docs/burst.png}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
[[ -x "$osn" ]] || { echo "burst_trace.sh: $osn not found; build first (make)" >&2; exit 1; }

run() { # name, then --set arguments
    local name=$1
    shift
    "$osn" sim examples/burst.ini "$@" --trace "$out/$name.csv" --trace-interval 0.25 \
        --json "$out/$name.json" -q
    python3 - "$out/$name.json" "$name" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print("%-13s goodput %6.1f of %6.1f calls/s  setup delay mean %7.3f s  core util %.3f"
      % (sys.argv[2], d["goodput"], d["offered"], d["setup_delay_mean"], d["core_util"]))
PY
}
run none --set control.kind=none
run prsm_req --set control.prsm_responses=no
run prsm

# The traces are one sample path each (replication 0), not means: the title says so, with
# the seed that reproduces it.
seed=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["seed"])' "$out/prsm.json")
mkdir -p "$(dirname "$png")"
gnuplot <<GP
set terminal pngcairo size 900,720 font "sans,11" noenhanced
set output "$png"
set datafile separator ","
set multiplot layout 2,1 title "examples/burst.ini: 0.7x capacity, 3x for 3 s at t = 2 s, core buffer 50 000\\none run per control (replication 0, seed $seed): a single sample path, no interval"
set grid
set key top right box
set xrange [0:45]
# The burst (grey) and the measurement window (blue) shaded behind both panels.
set object 1 rect from 2, graph 0 to 5, graph 1 behind fc rgb "#d9d9d9" fs solid 0.6 noborder
set object 2 rect from 35, graph 0 to 45, graph 1 behind fc rgb "#c6dbef" fs solid 0.5 noborder
set label 1 "burst" at 3.5, graph 0.95 center front
set label 2 "measured" at 40, graph 0.8 center front
set lmargin 10
set ylabel "core queue + 1 (messages)"
set key right center box opaque
set logscale y
set yrange [1:100000]
plot "$out/none.csv" u "t_s":(column("core_queue_msgs")+1) w l lw 2 lc rgb "#d62728" t "none", \
     "$out/prsm_req.csv" u "t_s":(column("core_queue_msgs")+1) w l lw 2 lc rgb "#ff7f0e" t "prsm, requests only", \
     "$out/prsm.csv" u "t_s":(column("core_queue_msgs")+1) w l lw 2 lc rgb "#2ca02c" t "prsm"
unset logscale y
set key top center
set label 2 at 40, graph 0.06
set yrange [0:*]
set xlabel "time (s); the measures are taken in [35, 45] s (shaded blue), the burst in [2, 5] s (grey)"
set ylabel "goodput (calls/s)"
plot "$out/none.csv" u "t_s":"goodput_per_s" w l lw 2 lc rgb "#d62728" t "none", \
     "$out/prsm_req.csv" u "t_s":"goodput_per_s" w l lw 2 lc rgb "#ff7f0e" t "prsm, requests only", \
     "$out/prsm.csv" u "t_s":"goodput_per_s" w l lw 2 lc rgb "#2ca02c" t "prsm"
unset multiplot
GP
echo "wrote $png"

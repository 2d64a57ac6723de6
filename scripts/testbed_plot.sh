#!/usr/bin/env bash
# Draws the table of scripts/testbed.sh: goodput against offered load, `osn sim` beside the real
# chain on loopback, one panel per control, the core's capacity as a line.
#
# Usage: scripts/testbed_plot.sh TESTBED.csv OUT.png     (needs gnuplot; scripts/deps.sh has it)
set -euo pipefail
csv=${1:?usage: scripts/testbed_plot.sh TESTBED.csv OUT.png}
out=${2:?usage: scripts/testbed_plot.sh TESTBED.csv OUT.png}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# One data file per control: offered rate, sim goodput, real goodput (header dropped).
for c in none loss rate; do
    awk -F, -v c="$c" 'NR > 1 && $1 == c {print $3, $4, $5}' "$csv" >"$tmp/$c.dat"
done
cap=$(awk -F, 'NR > 1 && $2 == 1 {print $3; exit}' "$csv")
# The file names reach gnuplot as data (ARG1, ARG2 of `call`), never as script text.
cat >"$tmp/plot.gp" <<'GP'
set terminal pngcairo size 1200,420 font ",10"
set output ARG1
set multiplot layout 1,3 title "Goodput against offered load: osn sim (model) and osn node on loopback (real, SIPp)"
set xlabel "offered load (calls/s)"
set ylabel "goodput (calls/s answered within Timer B)"
set logscale x
set yrange [0:300]
set xrange [150:3000]
set key top right box opaque
do for [c in "none loss rate"] {
    set title "control = ".c
    plot ARG2."/".c.".dat" using 1:2 with linespoints pt 7 title "osn sim", \
         ARG2."/".c.".dat" using 1:3 with linespoints pt 5 dt 2 title "osn node (SIPp)", \
         ARG3+0 with lines lc rgb "gray" title "core capacity"
}
unset multiplot
GP
gnuplot -c "$tmp/plot.gp" "$out" "$tmp" "$cap"

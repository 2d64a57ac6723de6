#!/usr/bin/env bash
# Draws a table of `osn testbed --csv` (or of the SIPp-driven script it replaced): goodput
# against offered load, `osn sim` beside the real chain on loopback, one panel per control, the
# core's capacity as a line. (`osn testbed --plot` draws the same from its own rows.)
#
# - one labelled x tick per offered rate of the table (its load factor under it);
# - osn sim: the mean over its replications with the 95% half-width as an error bar (CSV columns
#   sim_goodput_hw, sim_replications; a CSV without them is drawn without bars, and says so);
#   osn node: one run per point, no interval, said in the legend;
# - the two series are drawn a few percent apart along x, the real one as open markers on top,
#   so that where they agree (most points) neither hides the other.
#
# Usage: scripts/testbed_plot.sh TESTBED.csv OUT.png     (needs gnuplot; scripts/deps.sh has it)
set -euo pipefail
csv=${1:?usage: scripts/testbed_plot.sh TESTBED.csv OUT.png}
out=${2:?usage: scripts/testbed_plot.sh TESTBED.csv OUT.png}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# One data file per control (rate, sim goodput, its half-width, real goodput), the x tics, the
# core's capacity (the rate at load 1) and the legend's words, read by column name.
python3 - "$csv" "$tmp" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
tmp = sys.argv[2]
if not rows:
    sys.exit(f"testbed_plot: {sys.argv[1]}: no rows")
has_hw = "sim_goodput_hw" in rows[0] and all(r["sim_goodput_hw"] for r in rows)
for c in ("none", "loss", "rate"):
    with open(f"{tmp}/{c}.dat", "w") as f:
        for r in rows:
            if r["control"] == c:
                hw = r["sim_goodput_hw"] if has_hw else "0"
                f.write(f'{r["rate"]} {r["sim_goodput"]} {hw} {r["real_goodput"]}\n')
tics = sorted({(float(r["rate"]), r["load"]) for r in rows})
cap = next((r["rate"] for r in rows if float(r["load"]) == 1), "0")
reps = sorted({r["sim_replications"] for r in rows}) if has_hw else []
sim = (f"osn sim: mean of {'/'.join(reps)} reps, 95% CI" if has_hw
       else "osn sim (no interval in this CSV)")
open(f"{tmp}/tics", "w").write(", ".join(f'"{x:g}\\n{l}x" {x:g}' for x, l in tics))
open(f"{tmp}/vars", "w").write(f"{cap}\n{sim}\n{min(x for x, _ in tics) / 1.5:g}\n"
                               f"{max(x for x, _ in tics) * 1.5:g}\n")
PY
{ read -r cap; read -r simtitle; read -r xmin; read -r xmax; } <"$tmp/vars"
# The file names and titles reach gnuplot as data (ARGn of `call`), never as script text; the
# tics are numbers and load factors from the CSV, checked by the reader above.
cat >"$tmp/plot.gp" <<GP
set terminal pngcairo size 1200,440 font ",10"
set output ARG1
set multiplot layout 1,3 title "Goodput against offered load: osn sim beside osn node on loopback (SIPp; one run per point)"
set xlabel "offered load (calls/s; multiple of the core's capacity)" offset 0,-0.6
set bmargin 5
set ylabel "goodput (calls/s answered within Timer B)"
set logscale x
set xtics ($(cat "$tmp/tics"))
set yrange [0:320]
set xrange [${xmin}:${xmax}]
# One legend, in the middle panel's empty lower half (the three panels share it).
do for [c in "none loss rate"] {
    set title "control = ".c
    if (c eq "loss") { set key bottom center reverse Left box opaque } else { unset key }
    plot ARG3+0 with lines lc rgb "gray" title "core capacity", \\
         ARG2."/".c.".dat" using (\$1*0.95):2:3 with yerrorlines pt 7 ps 1.1 lc rgb "#1f77b4" lw 2 \\
             title ARG4, \\
         ARG2."/".c.".dat" using (\$1*1.05):4 with linespoints pt 6 ps 1.8 lw 2 dt 2 \\
             lc rgb "#d62728" title "osn node: one run"
}
unset multiplot
GP
gnuplot -c "$tmp/plot.gp" "$out" "$tmp" "$cap" "$simtitle"

#!/usr/bin/env python3
"""Study 3: thresholds that minimise the return time under throttling and cycle constraints.

  study.py            the full study: table.csv, table.txt, figure.png, map.png here (a minute)
  study.py --check    the reduced verdict of make check (seconds): exit 1 if the claim fails
  study.py --plot     figure.png again from table.csv (seconds)

The claim (Abaev, Gaidamaka, Pechinkin, Razumchik, Shorgin, ECMS 2012, "Simulation of overload
control in SIP server networks"): a control mechanism "that minimizes the return time from
overloading states satisfying the throttling and mean control cycle time constraints" can be
found for the hysteretic M|M|1 model; the bursty-traffic and two-flow papers extend the model.
"""
import atexit
import csv
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import common  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
BASE = os.path.join(HERE, "base.ini")
# Inputs of the same mean offered rate 1.2 (20 % overload); in overload half of it is accepted.
INPUTS = {
    "poisson": [],
    # phases 0.6 and 2.4/s, left at 0.05 and 0.1/s: P(phase 2) = 1/3, mean 1.2; long bursts
    "mmpp": ["arrivals.process=mmpp", "arrivals.phase_rates=0.6, 2.4",
             "arrivals.phase_switch=0.05, 0.1", "arrivals.overload_accept=0.5",
             # the bursts (1.2/s accepted in overload, above mu) keep P2 >= 1.9 % at any
             # thresholds with R = 20: the discard bound is 5 % here
             "optimize.max_discard=0.05"],
    # flow 1 (priority) 0.6/s and flow 2 0.6/s, flow 2 blocked in overload: lambda' = 0.6
    "two flows": ["arrivals.flows=2", "arrivals.rate1=0.6", "arrivals.rate2=0.6"],
}
MIN_CYCLE = [0, 5, 10, 15, 20, 25, 30, 35, 40]
MAX_THROTTLE = [1, 0.6, 0.5, 0.45, 0.42, 0.4]


def optimum(name, extra):
    sets = INPUTS[name] + extra
    ini = BASE if not INPUTS[name] else variant_ini(name)
    r = common.osn("optimize", ini, sets)
    if not r.get("found"):
        return (None, None, None, None, None, None)
    return (r["L"], r["H"], r["T_ret"], r["P1"] + r["P2"], r["T_cyc"], r["P2"])


_VARIANTS = {}
TMP = tempfile.mkdtemp()
atexit.register(shutil.rmtree, TMP, True)


def sim_ini():
    """base.ini without its [optimize] section, for osn sim."""
    text = open(BASE).read()
    path = os.path.join(TMP, "sim.ini")
    open(path, "w").write(text[:text.index("[optimize]")])
    return path


def variant_ini(name):
    """base.ini without the Poisson-only keys, for the MMPP and two-flow inputs."""
    if name not in _VARIANTS:
        text = open(BASE).read().replace("rate = 1.2\noverload_rate = 0.6\n", "")
        path = os.path.join(TMP, f"{name.replace(' ', '_')}.ini")
        _VARIANTS[name] = path
        open(path, "w").write(text)
    return _VARIANTS[name]


def sweep():
    rows = []
    for name in INPUTS:
        for c in MIN_CYCLE:
            rows.append((name, "min_cycle", c) + optimum(name, [f"optimize.min_cycle={c}"]))
        for t in MAX_THROTTLE:
            rows.append((name, "max_throttle", t) + optimum(name, [f"optimize.max_throttle={t}"]))
    return rows


HEADER = ["input", "constraint", "bound", "L", "H", "T_ret", "throttle", "T_cyc", "P2"]


def monotone(rows):
    """Tightening a constraint shrinks the feasible set: the optimum T_ret cannot fall."""
    ok = True
    for name in INPUTS:
        for cons in ("min_cycle", "max_throttle"):
            seq = [r for r in rows if r[0] == name and r[1] == cons and r[5] is not None]
            for a, b in zip(seq, seq[1:]):
                if b[5] < a[5] * (1 - 1e-9):
                    ok = False
                    print(f"  {name} {cons}: T_ret fell from {a[5]} to {b[5]}")
    return ok


def check():
    ok = True
    rows = [("poisson", "min_cycle", c) + optimum("poisson", [f"optimize.min_cycle={c}"])
            for c in (0, 10, 20, 30)]
    ok &= common.verdict(monotone(rows) and len({(r[3], r[4]) for r in rows}) >= 3,
                         "the optimum moves as min_cycle tightens and T_ret never falls: " +
                         ", ".join(f"{r[2]} s -> <{r[3]},{r[4]}> {r[5]:.2f}" for r in rows))
    # The optimiser's choice against its own grid, re-read: no feasible pair is better.
    p = subprocess.run([common.OSN, "optimize", BASE, "-q", "--grid", "-", "--set",
                        "optimize.min_cycle=20"], capture_output=True, text=True, check=True)
    grid = list(csv.DictReader(p.stdout.splitlines()))
    best = min((float(g["T_ret"]), int(g["L"]), int(g["H"])) for g in grid
               if float(g["P2"]) <= 1e-3 and float(g["T_cyc"]) >= 20)
    L, H, T = rows[2][3], rows[2][4], rows[2][5]
    ok &= common.verdict((best[1], best[2]) == (L, H) and abs(best[0] - T) < 1e-9 * T,
                         f"min_cycle 20: <{L},{H}> is the best feasible pair of the "
                         f"{len(grid)}-pair grid re-read ({best[0]:.4f})")
    # The optimum simulated: its return time, cycle and discard as the solver says.
    s = common.osn("sim", sim_ini(), [f"thresholds.L={L}", f"thresholds.H={H}", "sim.time=100000",
                                 "sim.replications=5"])
    ok &= common.verdict(abs(s["T_ret"] - T) <= 1.5 * s["T_ret_ci"] and
                         s["T_cyc"] + 1.5 * s["T_cyc_ci"] >= 20 and
                         s["P2"] - 1.5 * (s["P2_ci"] or 0) <= 1e-3,
                         f"simulated at <{L},{H}>: T_ret {s['T_ret']:.3f} +- {s['T_ret_ci']:.3f} "
                         f"(exact {T:.3f}), T_cyc {s['T_cyc']:.1f} +- {s['T_cyc_ci']:.1f} (>= 20), "
                         f"P2 {s['P2']:.2e} (<= 1e-3)")
    return ok


PLOT = r"""
set terminal pngcairo size 1200,460 font ",10"
set output ARG2
set datafile separator ","
set multiplot layout 1,2 title "Least return time T_{ret} under constraints, <L,H>|<H,20>, mean load 1.2, P2 <= 1e-3 (MMPP: 5 %)\nexact (osn optimize): no simulation, no replications, no interval"
set grid
set key top left box opaque
set title "optimum T_{ret} as min T_{cyc} tightens"
set xlabel "min mean control cycle T_{cyc} (s)"
set ylabel "T_{ret} at the optimum (s)"
# Two flows give the very same optimum as Poisson (the same chain, README): drawn first, as
# large open triangles with a dashed line, so that the Poisson points show inside them.
plot ARG1 using 3:(strcol(1) eq "two flows" && strcol(2) eq "min_cycle" ? $6 : 1/0) with linespoints pt 8 ps 2.2 lw 1.5 dt 2 lc rgb "#ff7f0e" title "two flows (= Poisson)", \
     ARG1 using 3:(strcol(1) eq "poisson" && strcol(2) eq "min_cycle" ? $6 : 1/0) with linespoints pt 7 lc rgb "#1f77b4" title "Poisson", \
     ARG1 using 3:(strcol(1) eq "mmpp" && strcol(2) eq "min_cycle" ? $6 : 1/0) with linespoints pt 5 lc rgb "#2ca02c" title "MMPP-2"
set title "the optimum's thresholds (Poisson)"
set ylabel "threshold"
plot ARG1 using 3:(strcol(1) eq "poisson" && strcol(2) eq "min_cycle" ? $4 : 1/0) with linespoints pt 7 title "L", \
     ARG1 using 3:(strcol(1) eq "poisson" && strcol(2) eq "min_cycle" ? $5 : 1/0) with linespoints pt 5 title "H"
unset multiplot
"""


def main():
    if sys.argv[1:] == ["--check"]:
        sys.exit(0 if check() else 1)
    csvp = os.path.join(HERE, "table.csv")
    if sys.argv[1:] == ["--plot"]:  # redraw figure.png from table.csv, no solving
        common.gnuplot(PLOT, csvp, os.path.join(HERE, "figure.png"))
        return
    rows = sweep()
    csvp = os.path.join(HERE, "table.csv")
    common.write_csv(csvp, rows, HEADER)
    fmt = {"T_ret": "{:.3f}", "throttle": "{:.3f}", "T_cyc": "{:.2f}", "P2": "{:.2e}"}
    txt = common.table(rows, HEADER, fmt)
    txt += "\nmonotone (T_ret never falls as a constraint tightens): " + str(monotone(rows)) + "\n"
    open(os.path.join(HERE, "table.txt"), "w").write(txt)
    print(txt)
    common.gnuplot(PLOT, csvp, os.path.join(HERE, "figure.png"))
    subprocess.run([common.OSN, "optimize", BASE, "-q", "--set", "optimize.min_cycle=20",
                    "--plot", os.path.join(HERE, "map.png")], check=True)


if __name__ == "__main__":
    main()

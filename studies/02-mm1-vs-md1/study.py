#!/usr/bin/env python3
"""Study 2: the return time from overload, M|M|1 against M|D|1 (exact curves, simulation points).

  study.py            the full study: table.csv, table.txt, figure.png here (about a minute)
  study.py --check    the reduced verdict of make check (seconds): exit 1 if the claim fails
  study.py --plot     figure.png again from load.csv and thresholds.csv (seconds)

The claim (Abaev, Gaidamaka, Samouylov et al., RUDN, on the M|G|1|<L,H>|B hysteretic model): the
return time from an overload state, the target measure, differs between the M|M|1 system
(analytic) and the M|D|1 system (simulated there).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import common  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
MODEL = os.path.join(HERE, "model.ini")


def point(lam, L, H, law, time, reps):
    """Exact T_ret (osn solve) and simulated T_ret with its 95 % half-width (osn sim)."""
    sets = [f"arrivals.rate={lam}", f"arrivals.overload_rate={lam / 2}", f"thresholds.L={L}",
            f"thresholds.H={H}", f"service.law={law}"]
    ex = common.osn("solve", MODEL, sets)
    si = common.osn("sim", MODEL, sets + [f"sim.time={time}", f"sim.replications={reps}"])
    return ex["T_ret"], si["T_ret"], si["T_ret_ci"]


def row(sweep, x, lam, L, H, time, reps):
    return (sweep, x, lam, L, H) + point(lam, L, H, "exp", time, reps) + \
        point(lam, L, H, "det", time, reps)


HEADER = ["sweep", "x", "lambda", "L", "H", "mm1_exact", "mm1_sim", "mm1_sim_hw",
          "md1_exact", "md1_sim", "md1_sim_hw"]

PLOT = r"""
set terminal pngcairo size 1200,460 font ",10"
set output ARG3
set datafile separator ","
set multiplot layout 1,2 title "Return time from overload T_{ret}, M|M|1 vs M|D|1 <L,H>|B = 20, mu = 1, lambda' = lambda/2: exact lines, simulation points\n(each the mean of 5 replications of 20,000 service times, bars: 95 % intervals)"
set grid
set key top left box opaque
set ylabel "T_{ret} (mean overload period, service times)"
set title "against the load (L = 5, H = 10)"
set logscale y
set xlabel "offered load lambda/mu"
plot ARG1 using 2:6 with lines lw 2 lc 1 title "M|M|1 exact", \
     ARG1 using 2:7:8 with yerrorbars pt 7 lc 1 title "M|M|1 simulation", \
     ARG1 using 2:9 with lines lw 2 lc 2 title "M|D|1 exact", \
     ARG1 using 2:10:11 with yerrorbars pt 5 lc 2 title "M|D|1 simulation"
set title "against the abatement threshold L (H = 10, lambda = 1.2)"
unset logscale y
set xlabel "L"
plot ARG2 using 2:6 with lines lw 2 lc 1 title "M|M|1 exact", \
     ARG2 using 2:7:8 with yerrorbars pt 7 lc 1 title "M|M|1 simulation", \
     ARG2 using 2:9 with lines lw 2 lc 2 title "M|D|1 exact", \
     ARG2 using 2:10:11 with yerrorbars pt 5 lc 2 title "M|D|1 simulation"
unset multiplot
"""


def check():
    """Two points: at each the simulated return times agree with the exact ones within 1.5
    half-widths of their 95 % intervals (about 3 sigma: the solver's embedded chain against the
    simulator), and M|D|1 differs from M|M|1 beyond the intervals."""
    ok = True
    for lam, L, H in ((1.2, 5, 10), (0.9, 2, 10)):
        r = row("check", lam, lam, L, H, 20000, 5)
        mm, mms, mmh, md, mds, mdh = r[5:]
        ok &= common.verdict(abs(mms - mm) <= 1.5 * mmh and abs(mds - md) <= 1.5 * mdh,
                             f"lambda={lam} L={L} H={H}: exact within the simulation interval: "
                             f"M|M|1 {mm:.3f} vs {mms:.3f} +- {mmh:.3f}, "
                             f"M|D|1 {md:.3f} vs {mds:.3f} +- {mdh:.3f}")
        ok &= common.verdict(abs(mds - mm) > mdh and abs(mms - md) > mmh,
                             f"lambda={lam} L={L} H={H}: the systems differ: M|D|1/M|M|1 = "
                             f"{md / mm:.3f}, beyond both intervals")
    return ok


def plot():
    common.gnuplot(PLOT, os.path.join(HERE, "load.csv"), os.path.join(HERE, "thresholds.csv"),
                   os.path.join(HERE, "figure.png"))


def full():
    load = [row("load", lam, lam, 5, 10, 20000, 5)
            for lam in (0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.4, 1.6, 1.8, 2.0)]
    thr = [row("L", L, 1.2, L, 10, 20000, 5) for L in range(0, 10)]
    rows = load + thr
    csv = os.path.join(HERE, "table.csv")
    common.write_csv(csv, rows, HEADER)
    common.write_csv(os.path.join(HERE, "load.csv"), load, HEADER)
    common.write_csv(os.path.join(HERE, "thresholds.csv"), thr, HEADER)
    fmt = {h: "{:.3f}" for h in HEADER}
    fmt.update({"sweep": "{}", "x": "{}", "L": "{}", "H": "{}", "lambda": "{}",
                "md1/mm1": "{:.3f}"})
    common.write_tables(os.path.join(HERE, "table.txt"),
                        [([r + (r[8] / r[5],) for r in rows], HEADER + ["md1/mm1"])], fmt)
    plot()


if __name__ == "__main__":
    common.study_main(check, full, plot)

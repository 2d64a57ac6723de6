#!/usr/bin/env python3
"""Study 6: the bistability map of the fluid model, checked by the network simulator.

  study.py            the full study: boundary.csv, grid.csv, sim.csv, queue.csv, table.txt and
                      figure.png here (about a minute)
  study.py --check    the reduced verdict of make check (about 10 s): exit 1 if a claim fails
  study.py --plot     figure.png again from the CSVs, without rerunning

The finding (issue 31, on the Hong-Huang-Yan fluid model of RFC 3261 retransmissions): a server
of mu messages/s under new INVITEs at lambda/s is bistable. Above mu/7 (seven copies per call:
the original and 6 retransmissions) a long enough burst leaves it collapsed for good; below
mu/7 any burst recovers; and the burst needed to tip it shrinks with the load (5 s at 30/s,
2 s at 60/s, 1 s at 90/s, for a burst of 100 extra INVITEs/s).
"""
import csv
import math
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import common  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
EX = os.path.join(common.ROOT, "examples")
FLUID = os.path.join(EX, "fluid-burst.ini")       # 100 msg/s server, base + 100/s burst at 10 s
SIM = os.path.join(EX, "sim_fluid_check.ini")     # the same system message by message

MU = 100.0          # server capacity, messages/s (both files)
T1 = 0.5            # s
COPIES = 7          # the original and 6 retransmissions (RFC 3261 Timer A before Timer B)
BURST_RATE = 100.0  # INVITEs/s added during the burst (both files)
START = 10.0        # s, burst start
TAIL = 240.0        # s simulated after the burst's end before the fluid run is judged
TMAX = 150.0        # s, longest burst searched
SIM_WINDOW = (80.0, 40.0)  # simulator: warm-up and window (s); the burst ends by 14 s


def tipping_wait(lam):
    """The queueing delay above which the fluid queue can only grow, from the slot equations
    (README): a call whose wait W passes copy j's send time (2^j - 1) T1 has been sent j + 1
    times, so the queue grows where lambda n(W) > mu. The least such send time, or None where
    7 lambda <= mu (the queue falls at every wait)."""
    for j in range(0, COPIES):
        if (j + 1) * lam > MU:
            return (2 ** j - 1) * T1
    return None


# ---- the fluid model ----

def fluid(lam, T, horizon, csv_out=None):
    extra = ["--csv", csv_out] if csv_out else []
    return common.osn("fluid", FLUID, [f"profile.base_rate={lam}",
                                       f"profile.burst_duration={T}",
                                       f"fluid.horizon={horizon}"], extra)


def outcome(lam, T):
    """How the fluid run ends TAIL s after the burst: 'recovers' (queue back to zero, or
    falling over the last 64 T1) or 'collapses' (queue rising over the last 64 T1), with the
    fluid's JSON summary."""
    horizon = START + T + TAIL
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "s.csv")
        r = fluid(lam, T, horizon, path)
        with open(path) as f:
            q = [float(row["queue"]) for row in csv.DictReader(f)]
    if r["state"] == "recovered":
        return "recovers", r
    back = int(round(64 * T1 / 0.05))
    return ("collapses" if q[-1] > q[-1 - back] else "recovers"), r


def boundary(lam, tol=0.02):
    """T*(lambda): the shortest burst (s) after which the fluid stays collapsed, by bisection
    (the outcome is monotone in T); inf when even TMAX s recovers."""
    if outcome(lam, TMAX)[0] == "recovers":
        return math.inf
    lo, hi = 0.0, TMAX
    if outcome(lam, 0.0)[0] == "collapses":
        return 0.0
    while hi - lo > max(0.05, tol * hi):
        mid = 0.5 * (lo + hi)
        if outcome(lam, mid)[0] == "collapses":
            hi = mid
        else:
            lo = mid
    return 0.5 * (lo + hi)


# ---- the network simulator ----

def wilson(k, n, z=1.96):
    """95 % Wilson interval of a proportion k/n: (centre, half-width)."""
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    return c, z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d


def sim(lam, T, reps):
    """The burst message by message: each replication collapsed or not (failed calls over
    offered ones in the window [80, 120] s above one half), the share collapsed with its
    Wilson interval, and the window's goodput with its 95 % t-interval."""
    warm, time = SIM_WINDOW
    _, rows = common.osn_reps("sim", SIM, [f"source.rate={lam}",
                                           f"source.burst_factor={(lam + BURST_RATE) / lam!r}",
                                           f"source.burst_length={T}", f"net.warmup={warm}",
                                           f"net.time={time}", f"net.replications={reps}"])
    k = sum(1 for r in rows if r["failed"] > 0.5 * r["offered"])
    share, share_hw = wilson(k, len(rows))
    good, good_hw = common.mean_hw([r["goodput"] for r in rows])
    return k, len(rows), share, share_hw, good, good_hw


def sim_trace(lam, T, path):
    """Replication 0's core queue every 0.5 s (for the figure)."""
    common.osn("sim", SIM, [f"source.rate={lam}",
                            f"source.burst_factor={(lam + BURST_RATE) / lam!r}",
                            f"source.burst_length={T}", "net.warmup=0", "net.time=120",
                            "net.replications=1"], ["--trace", path, "--trace-interval", "0.5"])
    with open(path) as f:
        return [(float(r["t_s"]), float(r["core_queue_msgs"])) for r in csv.DictReader(f)]


# The simulator's three points, at 60 calls/s (study 4's load): well below the fluid's
# boundary, at it, and well above it (the boundary is looked up at run time, not assumed).
SIM_LOAD = 60.0


def sim_points(tstar):
    return [("below", 0.5 * tstar), ("near", tstar), ("above", 2.0 * tstar)]


PLOT = r"""
set terminal pngcairo size 1300,520 font ",10"
set output ARG5
set datafile separator ","
set multiplot layout 1,2 title "Bistability of a SIP server under RFC 3261 retransmissions (server 100 msg/s, T1 0.5 s, burst of +100 INVITEs/s at 10 s)"
set grid
set title "fluid map: burst length needed to collapse the server for good"
set xlabel "offered load lambda (new INVITEs/s)"
set ylabel "burst length (s)"
set logscale y
set xrange [0:102]
set yrange [0.1:5000]
set key top right box opaque
set arrow 1 from 100.0/7, 0.1 to 100.0/7, 200 nohead dt 2 lw 2 lc rgb "black"
set label 1 "mu/7 = 14.3/s: below it every burst recovers" at 100.0/7 + 1, 0.13 left
plot ARG2 using 1:($3 == 1 ? $2 : 1/0) with points pt 5 ps 0.6 lc rgb "#d62728" title "fluid grid: collapses", \
     ARG2 using 1:($3 == 0 ? $2 : 1/0) with points pt 4 ps 0.6 lc rgb "#2ca02c" title "fluid grid: recovers", \
     ARG1 using 1:($2 < 1e6 ? $2 : 1/0) with lines lw 2 lc rgb "black" title "fluid boundary T*(lambda) (bisection)", \
     ARG3 using 2:6:($7 > 0.5 ? 0xd62728 : 0x2ca02c) with points pt 7 ps 2.2 lc rgb variable title "simulator at 60/s: share of 20 runs collapsed [95% CI]", \
     ARG3 using 2:6:(sprintf("%.0f%% [%.0f, %.0f]", 100*$7, 100*$8, 100*$9)) with labels left offset 1.8,0 notitle
unset arrow 1
unset label 1
set title "queue at 60/s: fluid (lines) and the simulator, one run (points)"
set xlabel "time (s)"
set ylabel "server queue (messages)"
set yrange [1:100000]
set xrange [0:120]
set key top left box opaque
plot for [i=2:4] ARG4 using 1:i with lines lw 2 lc i-1 title columnhead(i), \
     for [i=5:7] ARG4 using 1:i every 2 with points pt 7 ps 0.5 lc i-4 title columnhead(i)
unset multiplot
"""
# (ARG3's dot is red where most replications collapsed, green where most recovered; the label
# beside it gives the share of replications that collapsed and its 95% Wilson interval: a share
# of 20 runs has no error bar on the burst axis.)


def plot():
    common.gnuplot(PLOT, os.path.join(HERE, "boundary.csv"), os.path.join(HERE, "grid.csv"),
                   os.path.join(HERE, "sim.csv"), os.path.join(HERE, "queue.csv"),
                   os.path.join(HERE, "figure.png"))


def check():
    ok = True
    # 1. The mu/7 line, derived (README): just below it even a 150 s burst drains, just above
    #    it the same burst collapses the server for good.
    lo, hi = outcome(14.0, TMAX), outcome(14.5, TMAX)
    ok &= common.verdict(lo[0] == "recovers" and hi[0] == "collapses",
                         f"{TMAX:.0f} s burst: 14/s {lo[0]}, 14.5/s {hi[0]} (mu/7 = 14.29/s)")
    # 2. The issue's three bursts collapse the server, and the boundary lies below each
    #    (brackets of the full study's bisection, table.txt).
    for lam, issue, below, above in ((30.0, 5.0, 3.4, 3.9), (60.0, 2.0, 0.95, 1.15),
                                     (90.0, 1.0, 0.55, 0.66)):
        o = [outcome(lam, T)[0] for T in (issue, below, above)]
        ok &= common.verdict(o == ["collapses", "recovers", "collapses"],
                             f"{lam:.0f}/s: burst {issue} s {o[0]}; T* in ({below}, {above}) s: "
                             f"{o[1]}, {o[2]}")
    # 3. The staircase the tipping wait predicts: T* drops by a step where mu/lambda crosses 2
    #    (tipping wait 1.5 s -> 0.5 s), far more than along the tread from 45/s to 49/s.
    t45, t49, t51 = boundary(45.0, 0.04), boundary(49.0, 0.04), boundary(51.0, 0.04)
    ok &= common.verdict(t49 / t51 > 1.25 and t45 / t49 < 1.15,
                         f"step at mu/2: T*(45/s) {t45:.2f} s, T*(49/s) {t49:.2f} s, T*(51/s) "
                         f"{t51:.2f} s")
    # 4. The simulator on both sides of the boundary at 60/s, 6 replications each.
    for name, T in (("below", 0.52), ("above", 2.09)):
        k, n, share, hw, good, ghw = sim(SIM_LOAD, T, 6)
        want = 0 if name == "below" else n
        ok &= common.verdict(k == want, f"sim 60/s, burst {T:.2f} s ({name} T*): {k}/{n} "
                             f"collapsed, goodput {good:.1f} +- {ghw:.1f}/s")
    return ok


def full():
    loads = [8, 10, 12, 13, 14, 14.5, 15, 16, 17, 18, 19, 20, 21, 22, 24, 25, 26, 28, 30, 32,
             33, 34, 36, 40, 45, 49, 51, 55, 60, 65, 70, 75, 80, 85, 90, 95, 99]
    brows = []
    for lam in loads:
        t = boundary(lam)
        d = tipping_wait(lam)
        brows.append((lam, t if math.isfinite(t) else 1e9, d if d is not None else None))
    hb = ["lambda", "tstar", "tipping_wait"]
    common.write_csv(os.path.join(HERE, "boundary.csv"), brows, hb)
    grows = []
    for lam in range(5, 101, 5):
        for T in (0.2, 0.5, 1, 2, 3, 5, 8, 13, 20, 35, 60, 100, 150):
            grows.append((lam, T, 1 if outcome(float(lam), float(T))[0] == "collapses" else 0))
    common.write_csv(os.path.join(HERE, "grid.csv"), grows, ["lambda", "burst", "collapses"])
    tstar = dict((r[0], r[1]) for r in brows)[SIM_LOAD]
    srows = []
    qcols = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, T in sim_points(tstar):
            f = fluid(SIM_LOAD, T, 120.0, os.path.join(tmp, f"f_{name}.csv"))
            k, n, share, hw, good, ghw = sim(SIM_LOAD, T, 20)
            srows.append((name, SIM_LOAD, T, k, n, T, k / n, max(share - hw, 0),
                          min(share + hw, 1), good, ghw,
                          f["state"], f["goodput"]))
            with open(os.path.join(tmp, f"f_{name}.csv")) as fh:
                qcols[f"fluid burst {T:.2f} s"] = [(float(r["t"]), float(r["queue"]))
                                                   for r in csv.DictReader(fh)]
            qcols[f"sim burst {T:.2f} s"] = sim_trace(SIM_LOAD, T, os.path.join(tmp, "tr.csv"))
    hs = ["point", "lambda", "burst", "collapsed", "reps", "burst_y", "share_collapsed",
          "share_lo", "share_hi", "goodput", "goodput_hw", "fluid_state", "fluid_goodput"]
    common.write_csv(os.path.join(HERE, "sim.csv"), srows, hs)
    # queue.csv: t, the three fluid queues (every 0.5 s), the three simulator queues.
    names = list(qcols)
    fl = [qcols[n] for n in names[0::2]]
    sm = [qcols[n] for n in names[1::2]]
    with open(os.path.join(HERE, "queue.csv"), "w") as f:
        f.write("t," + ",".join(names[0::2]) + "," + ",".join(names[1::2]) + "\n")
        for i, (t, _) in enumerate(sm[0]):
            k = int(round(t / 0.05)) - 1
            vals = [max(c[k][1], 1) if 0 <= k < len(c) else "" for c in fl]
            vals += [max(c[i][1], 1) for c in sm]
            f.write(f"{t:g}," + ",".join(f"{v:g}" if v != "" else "" for v in vals) + "\n")
    fmt = {"tstar": "{:.2f}", "tipping_wait": "{}", "lambda": "{:g}", "burst": "{:.2f}",
           "share_collapsed": "{:.2f}", "share_lo": "{:.2f}", "share_hi": "{:.2f}",
           "goodput": "{:.1f}", "goodput_hw": "{:.1f}", "fluid_goodput": "{:.1f}",
           "burst_y": "{:.2f}"}
    common.write_tables(os.path.join(HERE, "table.txt"), [(brows, hb), (srows, hs)], fmt)
    plot()


if __name__ == "__main__":
    common.study_main(check, full, plot)

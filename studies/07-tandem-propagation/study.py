#!/usr/bin/env python3
"""Study 7: overload migrating upstream in a tandem of proxies, and PI between the proxies.

  study.py            the full study: fluid.csv, fluid_queue.csv, sim.csv, paired.csv,
                      sim_queue.csv, table.txt and figure.png here (about a minute)
  study.py --check    the reduced verdict of make check (about 10 s): exit 1 if a claim fails
  study.py --plot     figure.png again from the CSVs, without rerunning

The finding (issue 31, on Hong, Huang and Yan's tandem fluid model): after the burst that
collapses a single server at 60 % load, the overload of the downstream proxy P2 migrates to
the upstream proxy P1, which ends with far more queued messages (42,024 against 5,637); and the
papers place their PI retransmission control between the two proxies. Does it stop the
migration? Fluid model (deterministic) and network simulator (seeds paired: common random
numbers, so none and pi see the same calls in each seed).
"""
import csv
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import common  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
FLUID = os.path.join(HERE, "fluid.ini")
SIM = os.path.join(HERE, "sim.ini")
PROXIES = ("edge", "mid", "core")

# The fluid runs: P1's capacity swept (P2 100/s), each with no control; with P2 made fast
# (1000/s: P2 never overloads, so whatever P1 keeps is its own collapse under the burst, not
# migrated); and with the PI loop on P1's retransmissions toward P2 (on the redundant ratio,
# then on the delay); and with no control but P1's own retransmissions free of work, as in the
# simulator, whose proxies pay nothing to send a copy.
P1_RATES = (200, 250, 300, 400, 500, 600)
FLUID_KINDS = [("none", []), ("P1 alone", ["server p2.rate=1000"]),
               ("rrrc", ["control.kind=rrrc"]), ("rtd", ["control.kind=rtd"]),
               ("P1's own copies free", ["server p1.retx_cost=0"])]


def fluid(p1, kind, csv_out=None):
    extra = ["--csv", csv_out] if csv_out else []
    r = common.osn("fluid", FLUID, [f"server p1.rate={p1}"] + dict(FLUID_KINDS)[kind], extra)
    return (p1, kind, r["final_queue_p1"], r["final_queue_p2"], r["goodput"],
            r["failed"] / r["offered"], r["state"])


# The simulator's set-ups: sim.ini (edge and mid at 60 % at 60 calls/s, as P1 at 200/s), the
# proxies twice as fast (as P1 at 400/s), and the core ten times as fast (it never overloads:
# what the proxies keep then is their own collapse under the burst).
SETUPS = {
    "proxies 60 %": [],
    "proxies 30 %": ["server edge.cost_invite=0.0025", "server edge.cost_retrans=0.0025",
                     "server edge.cost_response=0.00083333333333333333"],
    "core fast": ["server core.cost_invite=0.001", "server core.cost_retrans=0.001"],
}


def sim_run(setup, kind, seed, trace):
    """One seed of sim.ini: the JSON summary and, from the trace, each proxy's queue at 120 s
    and its mean over the last 30 s."""
    r = common.osn("sim", SIM, SETUPS[setup] + [f"control.kind={kind}", f"net.seed={seed}"],
                   ["--trace", trace, "--trace-interval", "0.5"])
    with open(trace) as f:
        rows = list(csv.DictReader(f))
    out = {"goodput": r["goodput"], "failed": r["failed"] / r["offered"],
           "offered": r["offered"], "rows": rows}
    tail = [x for x in rows if float(x["t_s"]) > 90]
    for p in PROXIES:
        out[f"{p}_end"] = float(rows[-1][f"{p}_queue_msgs"])
        out[f"{p}_tail"] = sum(float(x[f"{p}_queue_msgs"]) for x in tail) / len(tail)
    return out


def sim_pairs(setup, seeds, tmp, kinds=("none", "pi")):
    """none and pi on each seed (the same calls: common random numbers)."""
    runs = {k: [] for k in kinds}
    for s in seeds:
        for k in runs:
            runs[k].append(sim_run(setup, k, s, os.path.join(tmp, f"{k}_{s}.csv")))
        if len(kinds) < 2:
            continue
        if runs["none"][-1]["offered"] != runs["pi"][-1]["offered"]:
            sys.exit("none and pi were offered different calls: no common random numbers")
    return runs


MEASURES = [f"{p}_{w}" for p in PROXIES for w in ("end", "tail")] + ["goodput", "failed"]
COLLAPSED = 1000  # messages queued at 120 s: a proxy this far behind has collapsed


def summarise(setup, runs):
    """Per control, each measure's mean and 95 % t half-width over the seeds, and the seeds
    in which each proxy ended collapsed; then pi - none paired by seed."""
    rows = []
    for k in runs:
        rows.append((setup, k, len(runs[k])) +
                    tuple(sum(1 for r in runs[k] if r[f"{p}_end"] > COLLAPSED) for p in PROXIES) +
                    tuple(v for m in MEASURES for v in common.mean_hw([r[m] for r in runs[k]])))
    if "pi" not in runs:
        return rows, None
    diff = (setup, "pi - none (paired)", len(runs["pi"]), None, None, None) + tuple(
        v for m in MEASURES for v in common.paired([r[m] for r in runs["pi"]],
                                                   [r[m] for r in runs["none"]]))
    return rows, diff


PLOT = r"""
set terminal pngcairo size 1300,520 font ",10"
set output ARG3
set datafile separator ","
set multiplot layout 1,2 title "Tandem after a 2 s burst at 60 % load (+100 INVITEs/s): where the overload ends up, with and without PI between the proxies"
set grid
set logscale y
set yrange [1:200000]
set xrange [0:120]
set xlabel "time (s)"
set ylabel "queue (messages; 1 = empty)"
set key top left box opaque
set title "fluid (deterministic): UAC -> P1 -> P2 (100/s); lines at 1 = empty"
plot ARG1 using 1:2 with lines lw 2 lc rgb "#d62728" title "P1 200/s, none: P1", \
     ARG1 using 1:3 with lines lw 2 dt 2 lc rgb "#d62728" title "P1 200/s, none: P2", \
     ARG1 using 1:4 with lines lw 2 lc rgb "#1f77b4" title "P1 200/s, RRRC: P1", \
     ARG1 using 1:6 with lines lw 2 lc rgb "#ff7f0e" title "P1 300/s, none: P1", \
     ARG1 using 1:7 with lines lw 2 dt 2 lc rgb "#ff7f0e" title "P1 300/s, none: P2", \
     ARG1 using 1:8 with lines lw 2 lc rgb "#2ca02c" title "P1 300/s, RRRC: P1 (P2 likewise)"
set title "simulator, proxies at 60 %: UAC -> edge -> mid -> core (100/s), one run (seed 1)"
plot ARG2 using 1:2 with lines lw 2 lc rgb "#ff7f0e" title "edge, none", \
     ARG2 using 1:3 with lines lw 2 lc rgb "#d62728" title "mid (core's upstream), none", \
     ARG2 using 1:4 with lines lw 2 dt 2 lc rgb "#d62728" title "core, none", \
     ARG2 using 1:6 with lines lw 2 lc rgb "#1f77b4" title "mid, pi between mid and core", \
     ARG2 using 1:7 with lines lw 2 dt 2 lc rgb "#1f77b4" title "core, pi between mid and core"
unset multiplot
"""


def plot():
    common.gnuplot(PLOT, os.path.join(HERE, "fluid_queue.csv"),
                   os.path.join(HERE, "sim_queue.csv"), os.path.join(HERE, "figure.png"))


def col(m):
    """Index of measure m's mean in a summarise() row (its half-width follows)."""
    return 6 + 2 * MEASURES.index(m)


def check():
    ok = True
    none, alone = fluid(200, "none"), fluid(200, "P1 alone")
    ok &= common.verdict(round(none[2]) == 42024 and round(none[3]) == 5637,
                         f"fluid, P1 200/s: P1 ends with {none[2]:.0f} queued, P2 {none[3]:.0f} "
                         f"(the issue's 42,024 and 5,637)")
    ok &= common.verdict(alone[2] > 1000 and alone[6] == "failing",
                         f"fluid, P1 200/s, P2 fast: P1 still ends with {alone[2]:.0f} queued: "
                         f"its own collapse under the burst, not migrated")
    m, a = fluid(300, "none"), fluid(300, "P1 alone")
    ok &= common.verdict(m[2] > 1000 and a[6] == "recovered",
                         f"fluid, P1 300/s: P1 ends with {m[2]:.0f} queued behind P2, recovers "
                         f"alone ({a[6]}): migrated")
    r200, r300, t200 = fluid(200, "rrrc"), fluid(300, "rrrc"), fluid(200, "rtd")
    ok &= common.verdict(r300[6] == "recovered" and r200[3] < 1 and r200[2] > 1000,
                         f"fluid rrrc: P1 300/s {r300[6]}; P1 200/s P2 drained ({r200[3]:.0f}) "
                         f"but P1 {r200[2]:.0f} queued ({r200[6]})")
    ok &= common.verdict(t200[6] == "recovered",
                         f"fluid rtd, P1 200/s: {t200[6]} (P1 {t200[2]:.0f}, P2 {t200[3]:.0f})")
    with tempfile.TemporaryDirectory() as tmp:
        fast = sim_pairs("proxies 30 %", range(1, 5), tmp)
        slow = sim_pairs("proxies 60 %", range(1, 5), tmp)
    rows, diff = summarise("proxies 30 %", fast)
    nm = rows[0]
    ok &= common.verdict(nm[5] == 4 and nm[3] == 0 and nm[4] == 0,
                         f"sim, proxies 30 % (4 seeds), none: core collapsed in {nm[5]}, mid in "
                         f"{nm[4]}, edge in {nm[3]}: no migration (mid ends with "
                         f"{nm[col('mid_end')]:.0f} +- {nm[col('mid_end') + 1]:.0f})")
    d, dh = diff[col("goodput")], diff[col("goodput") + 1]
    ok &= common.verdict(rows[1][5] == 0 and d - dh > 0,
                         f"sim, proxies 30 %, pi: core collapsed in {rows[1][5]} of 4; goodput "
                         f"pi - none {d:.1f} +- {dh:.1f}/s (paired)")
    rows, _ = summarise("proxies 60 %", slow)
    ok &= common.verdict(rows[1][5] == 0,
                         f"sim, proxies 60 %, pi: core collapsed in {rows[1][5]} of 4, mid in "
                         f"{rows[1][4]}, edge in {rows[1][3]}")
    return ok


def full():
    with tempfile.TemporaryDirectory() as tmp:
        frows, cols = [], {}
        for p1 in P1_RATES:
            for kind, _ in FLUID_KINDS:
                path = os.path.join(tmp, f"f_{p1}_{len(frows)}.csv")
                frows.append(fluid(p1, kind, path))
                if (p1, kind) in ((200, "none"), (200, "rrrc"), (300, "none"), (300, "rrrc")):
                    with open(path) as f:
                        cols[(p1, kind)] = [(float(r["t"]), float(r["p1_queue"]),
                                             float(r["p2_queue"])) for r in csv.DictReader(f)]
        keys = list(cols)
        with open(os.path.join(HERE, "fluid_queue.csv"), "w") as f:
            f.write("t," + ",".join(f"p1_{k[0]}_{k[1]}_P1,p1_{k[0]}_{k[1]}_P2" for k in keys)
                    + "\n")
            for i in range(len(cols[keys[0]])):
                f.write(f"{cols[keys[0]][i][0]:g}," + ",".join(
                    f"{max(cols[k][i][1], 1):g},{max(cols[k][i][2], 1):g}" for k in keys) + "\n")
        srows, drows, trace = [], [], None
        for setup in SETUPS:
            kinds = ("none",) if setup == "core fast" else ("none", "pi")
            runs = sim_pairs(setup, range(1, 11), tmp, kinds)
            rows, diff = summarise(setup, runs)
            srows += rows
            if diff:
                drows.append(diff)
            if setup == "proxies 60 %":
                trace = (runs["none"][0]["rows"], runs["pi"][0]["rows"])
    hf = ["p1_rate", "run", "final_queue_p1", "final_queue_p2", "goodput", "failed", "state"]
    common.write_csv(os.path.join(HERE, "fluid.csv"), frows, hf)
    hs = ["setup", "control", "seeds", "edge_collapsed", "mid_collapsed", "core_collapsed"] + \
        [x for m in MEASURES for x in (m, m + "_hw")]
    common.write_csv(os.path.join(HERE, "sim.csv"), srows, hs)
    common.write_csv(os.path.join(HERE, "paired.csv"), drows, hs)
    with open(os.path.join(HERE, "sim_queue.csv"), "w") as f:
        f.write("t," + ",".join(f"{k}_{p}" for k in ("none", "pi") for p in PROXIES) + "\n")
        for a, b in zip(*trace):
            f.write(a["t_s"] + "," + ",".join(f"{max(float(r[f'{p}_queue_msgs']), 1):g}"
                                              for r in (a, b) for p in PROXIES) + "\n")
    fmt = {h: "{:.1f}" for h in hs + hf}
    fmt.update({"run": "{}", "control": "{}", "setup": "{}", "state": "{}", "seeds": "{}",
                "edge_collapsed": "{}", "mid_collapsed": "{}", "core_collapsed": "{}",
                "p1_rate": "{}", "failed": "{:.3f}", "failed_hw": "{:.3f}"})
    common.write_tables(os.path.join(HERE, "table.txt"), [(frows, hf), (srows + drows, hs)], fmt)
    plot()


if __name__ == "__main__":
    common.study_main(check, full, plot)

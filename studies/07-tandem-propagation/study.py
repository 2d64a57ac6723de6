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

# The fluid runs: no control, the PI loop on P1's retransmissions toward P2 (on the redundant
# ratio, then on the delay), and no control with one of P1's work sources taken away, to see
# which of them carries the overload upstream.
FLUID_RUNS = [
    ("none", []),
    ("rrrc", ["control.kind=rrrc"]),
    ("rtd", ["control.kind=rtd"]),
    ("none, P1's own retransmissions free", ["server p1.retx_cost=0"]),
    ("none, P2's responses free at P1", ["server p1.response_cost=0"]),
]


def fluid(name, csv_out=None):
    extra = ["--csv", csv_out] if csv_out else []
    r = common.osn("fluid", FLUID, dict(FLUID_RUNS)[name], extra)
    return (name, r["final_queue_p1"], r["final_queue_p2"], r["goodput"],
            r["failed"] / r["offered"], r["state"])


def sim_run(kind, seed, trace):
    """One seed of sim.ini: the JSON summary and, from the trace, each proxy's queue at 120 s
    and its mean over the last 30 s."""
    r = common.osn("sim", SIM, [f"control.kind={kind}", f"net.seed={seed}"],
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


def sim_pairs(seeds, tmp):
    """none and pi on each seed (the same calls: common random numbers)."""
    runs = {k: [] for k in ("none", "pi")}
    for s in seeds:
        for k in runs:
            runs[k].append(sim_run(k, s, os.path.join(tmp, f"{k}_{s}.csv")))
        if runs["none"][-1]["offered"] != runs["pi"][-1]["offered"]:
            sys.exit("none and pi were offered different calls: no common random numbers")
    return runs


MEASURES = [f"{p}_{w}" for p in PROXIES for w in ("end", "tail")] + ["goodput", "failed"]


def summarise(runs):
    """Per control, each measure's mean and 95 % t half-width over the seeds; and pi - none
    paired by seed."""
    rows = []
    for k in ("none", "pi"):
        rows.append((k,) + tuple(v for m in MEASURES for v in
                                 common.mean_hw([r[m] for r in runs[k]])))
    diff = ("pi - none (paired)",) + tuple(
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
set title "fluid: UAC -> P1 (200/s) -> P2 (100/s)"
plot ARG1 using 1:2 with lines lw 2 lc rgb "#d62728" title "P1 (upstream), no control", \
     ARG1 using 1:3 with lines lw 2 dt 2 lc rgb "#d62728" title "P2 (downstream), no control", \
     ARG1 using 1:4 with lines lw 2 lc rgb "#1f77b4" title "P1, RRRC between P1 and P2", \
     ARG1 using 1:5 with lines lw 2 dt 2 lc rgb "#1f77b4" title "P2, RRRC between P1 and P2"
set title "simulator: UAC -> edge -> mid -> core (100/s), seed 1 (one run, no interval)"
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


def check():
    ok = True
    none, rrrc, rtd = fluid("none"), fluid("rrrc"), fluid("rtd")
    ok &= common.verdict(round(none[1]) == 42024 and round(none[2]) == 5637,
                         f"fluid none: P1 ends with {none[1]:.0f} queued, P2 {none[2]:.0f} "
                         f"(the issue's 42,024 and 5,637)")
    ok &= common.verdict(rrrc[2] < 1 and rrrc[1] > 1000 and rrrc[5] == "failing",
                         f"fluid rrrc: P2 drained ({rrrc[2]:.0f}) but P1 ends with "
                         f"{rrrc[1]:.0f} queued, {rrrc[5]}: the migration is not stopped")
    ok &= common.verdict(rtd[5] == "recovered" and rtd[1] < 1 and rtd[2] < 1,
                         f"fluid rtd: {rtd[5]}, P1 {rtd[1]:.0f}, P2 {rtd[2]:.0f}")
    with tempfile.TemporaryDirectory() as tmp:
        runs = sim_pairs(range(1, 5), tmp)
    rows, diff = summarise(runs)
    col = {m: 1 + 2 * n for n, m in enumerate(MEASURES)}

    def est(row, m):
        return row[col[m]], row[col[m] + 1]

    nm, pm = rows
    (e, eh), (c, ch) = est(nm, "edge_end"), est(nm, "core_end")
    ok &= common.verdict(e - eh > 1000 and c - ch > 1000,
                         f"sim none (4 seeds): edge ends with {e:.0f} +- {eh:.0f} queued, core "
                         f"{c:.0f} +- {ch:.0f}: the overload reached the first proxy")
    for m in ("edge_end", "mid_end", "core_end"):
        d, dh = est(diff, m)
        p, ph = est(pm, m)
        ok &= common.verdict(p + ph < 50 and (d + dh < 0 or m == "mid_end"),
                             f"sim pi: {m} {p:.1f} +- {ph:.1f}; pi - none {d:.0f} +- {dh:.0f} "
                             f"(paired by seed)")
    d, dh = est(diff, "goodput")
    ok &= common.verdict(d - dh > 0, f"sim goodput pi - none {d:.1f} +- {dh:.1f}/s (paired)")
    return ok


def main():
    if sys.argv[1:] == ["--check"]:
        sys.exit(0 if check() else 1)
    if sys.argv[1:] == ["--plot"]:
        plot()
        return
    with tempfile.TemporaryDirectory() as tmp:
        paths = {n: os.path.join(tmp, f"f{i}.csv") for i, (n, _) in enumerate(FLUID_RUNS)}
        frows = [fluid(n, paths[n]) for n, _ in FLUID_RUNS]
        cols = {}
        for n in ("none", "rrrc"):
            with open(paths[n]) as f:
                cols[n] = [(float(r["t"]), float(r["p1_queue"]), float(r["p2_queue"]))
                           for r in csv.DictReader(f)]
        with open(os.path.join(HERE, "fluid_queue.csv"), "w") as f:
            f.write("t,none_p1,none_p2,rrrc_p1,rrrc_p2\n")
            for a, b in zip(cols["none"], cols["rrrc"]):
                f.write(f"{a[0]:g},{max(a[1], 1):g},{max(a[2], 1):g},{max(b[1], 1):g},"
                        f"{max(b[2], 1):g}\n")
        runs = sim_pairs(range(1, 11), tmp)
    hf = ["run", "final_queue_p1", "final_queue_p2", "goodput", "failed", "state"]
    common.write_csv(os.path.join(HERE, "fluid.csv"), frows, hf)
    rows, diff = summarise(runs)
    hs = ["control"] + [x for m in MEASURES for x in (m, m + "_hw")]
    common.write_csv(os.path.join(HERE, "sim.csv"), rows, hs)
    common.write_csv(os.path.join(HERE, "paired.csv"), [diff], hs)
    with open(os.path.join(HERE, "sim_queue.csv"), "w") as f:
        f.write("t," + ",".join(f"{k}_{p}" for k in ("none", "pi") for p in PROXIES) + "\n")
        for a, b in zip(runs["none"][0]["rows"], runs["pi"][0]["rows"]):
            f.write(a["t_s"] + "," + ",".join(f"{max(float(r[f'{p}_queue_msgs']), 1):g}"
                                              for r in (a, b) for p in PROXIES) + "\n")
    fmt = {h: "{:.1f}" for h in hs + hf}
    fmt.update({"run": "{}", "control": "{}", "state": "{}", "failed": "{:.3f}",
                "failed_hw": "{:.3f}"})
    txt = common.table(frows, hf, fmt) + "\n" + common.table(rows + [diff], hs, fmt)
    open(os.path.join(HERE, "table.txt"), "w").write(txt)
    print(txt)
    plot()


if __name__ == "__main__":
    main()

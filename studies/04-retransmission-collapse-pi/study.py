#!/usr/bin/env python3
"""Study 4: retransmission collapse after a short burst, its PI control, and the finite buffer.

  study.py            the full study: tables (*.csv, table.txt) and figure.png here (a minute)
  study.py --check    the reduced verdict of make check (seconds): exit 1 if a claim fails

Claims (Hong, Huang, Yan): a short overload at moderate load can leave a SIP server in a
retransmission-sustained overload it never leaves without control; PI control of the
retransmission rate (RRRC on the redundant ratio, RTD on the INVITE -> 100 Trying delay)
recovers it; in the tandem, a small buffer recovers where a large one stays overloaded.
"""
import csv
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import common  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
EX = os.path.join(common.ROOT, "examples")
FLUID = os.path.join(EX, "fluid-vs-sim.ini")      # 100 msg/s server, 60/s + 100/s for 2 s
SIM = os.path.join(EX, "sim_fluid_check.ini")     # the same system message by message
BURST = os.path.join(EX, "burst.ini")             # the network of the deep-buffer pi check


def fluid_burst(algo, csv_out=None):
    extra = ["--csv", csv_out] if csv_out else []
    r = common.osn("fluid", FLUID, [f"control.kind={algo}"], extra)
    return (f"fluid {algo}", r["goodput"], 0.0, r["failed"] / r["offered"], 0.0,
            r["final_queue"], r["state"])


def sim_burst(kind, reps, trace=None):
    extra = ["--trace", trace, "--trace-interval", "0.5"] if trace else []
    r = common.osn("sim", SIM, [f"control.kind={kind}", f"net.replications={reps}"], extra)
    off = r["offered"]
    return (f"sim {kind}", r["goodput"], r["goodput_ci"] or 0, r["failed"] / off,
            (r["failed_ci"] or 0) / off, None, None)


def tandem(buffer):
    """The burst of fluid-vs-sim.ini on the default tandem (P1 200/s, P2 100/s, no delays), both buffers B."""
    r = common.osn("fluid", None, ["fluid.topology=tandem", "profile.shape=burst",
                                   "profile.base_rate=60", "profile.burst_start=10",
                                   "profile.burst_duration=2", "profile.burst_rate=100",
                                   f"server p2.buffer={buffer}", f"server p1.buffer={buffer}"])
    return (buffer, r["goodput"], r["failed"] / r["offered"], r["lost"], r["state"])


# The former deep-buffer check of tests/test_net.c (study 08 restates it): the burst network with the core's
# costs rearranged at equal capacity (370 calls/s) to remove one retransmission source at a time.
VARIANTS = [
    ("as is (examples/burst.ini)", []),
    ("core responses free, INVITE 1.9 ms",
     ["server core.cost_response=0", "server core.cost_invite=0.0019"]),
    ("core BYE free, INVITE 1.5 ms", ["server core.cost_bye=0", "server core.cost_invite=0.0015"]),
    ("core responses and BYE free, INVITE 2.4 ms",
     ["server core.cost_response=0", "server core.cost_bye=0", "server core.cost_invite=0.0024"]),
]


def deep(variant, kind):
    sets = dict(VARIANTS)[variant] + [f"control.kind={kind}"]
    r = common.osn("sim", BURST, sets)
    return (variant, kind, r["offered"], r["goodput"], r["goodput_ci"] or 0,
            r["retrans_ratio"], r["retrans_ratio_ci"] or 0, r["setup_delay_mean"])


PLOT = r"""
set terminal pngcairo size 1200,460 font ",10"
set output ARG4
set datafile separator ","
set multiplot layout 1,2 title "Retransmission collapse after a 2 s burst at 60 % load (100 msg/s server) and its PI control\nfluid model: deterministic; simulator: one run (its replication 0, seed 1), no interval"
set grid
set key right center box opaque
set title "server queue: fluid (lines) and simulator (points)"
set xlabel "time (s)"
set ylabel "queue (messages)"
set logscale y
set yrange [1:100000]
plot ARG1 using 1:"none_queue" with lines lw 2 lc 1 title "fluid, no control", \
     ARG1 using 1:"rrrc_queue" with lines lw 2 lc 2 title "fluid, RRRC", \
     ARG1 using 1:"rtd_queue" with lines lw 2 lc 3 title "fluid, RTD", \
     ARG2 using 1:2 every 4 with points pt 7 ps 0.5 lc 1 title "simulator, no control", \
     ARG2 using 1:3 every 4 with points pt 5 ps 0.5 lc 2 title "simulator, pi (RRRC)"
unset logscale y
set yrange [0:70]
set logscale x
set title "tandem UAC -> P1 -> P2, same burst: goodput against the buffer B of P1 and P2 (fluid)"
set xlabel "buffer B of each proxy (messages; 1e6 = infinite)"
set ylabel "goodput (calls/s answered before Timer B)"
set key bottom left
plot ARG3 using ($1 > 1e6 ? 1e6 : $1):2 with linespoints lw 2 pt 7 title "goodput", \
     60.4 with lines dt 2 lc rgb "gray" title "offered (mean over 120 s)"
unset multiplot
"""


def merge_fluid(paths, out):
    """One CSV: t and the queue of each fluid run."""
    cols = {}
    for name, p in paths.items():
        cols[name] = [(float(r["t"]), float(r["queue"])) for r in csv.DictReader(open(p))]
    with open(out, "w") as f:
        f.write("t," + ",".join(f"{n}_queue" for n in paths) + "\n")
        for i in range(len(next(iter(cols.values())))):
            f.write(f"{cols['none'][i][0]:g}," + ",".join(f"{cols[n][i][1]:g}" for n in paths)
                    + "\n")


def merge_sim(paths, out):
    runs = {n: [(r["t_s"], r["core_queue_msgs"]) for r in csv.DictReader(open(p))]
            for n, p in paths.items()}
    with open(out, "w") as f:
        f.write("t,none_queue,pi_queue\n")
        for (t, a), (_, b) in zip(runs["none"], runs["pi"]):
            f.write(f"{t},{a},{b}\n")


def check():
    ok = True
    for algo, want in (("none", "failing"), ("rrrc", "recovered"), ("rtd", "recovered")):
        r = fluid_burst(algo)
        ok &= common.verdict(r[6] == want, f"fluid {algo}: {r[6]} (want {want}), goodput "
                             f"{r[1]:.1f}/s, failed {r[3]:.1%}")
    none, pi = sim_burst("none", 3), sim_burst("pi", 3)
    ok &= common.verdict(none[1] + none[2] < 0.5 * 61.5,
                         f"sim none: goodput {none[1]:.1f} +- {none[2]:.1f}/s (< half of 61.5)")
    ok &= common.verdict(pi[1] - pi[2] > 0.9 * 61.5 and pi[3] + pi[4] < 0.01,
                         f"sim pi: goodput {pi[1]:.1f} +- {pi[2]:.1f}/s (> 90 %), failed "
                         f"{pi[3]:.2%} +- {pi[4]:.2%} (< 1 %)")
    small, large = tandem(20), tandem(1000)
    ok &= common.verdict(small[4] == "recovered" and large[4] == "failing",
                         f"tandem: buffers 20 {small[4]} ({small[1]:.1f}/s), 1000 {large[4]} "
                         f"({large[1]:.1f}/s)")
    a = deep(VARIANTS[0][0], "pi")
    b = deep(VARIANTS[3][0], "pi")
    ok &= common.verdict(a[5] - a[6] > 2 * 0.05 and b[5] + b[6] < 2 * 0.05,
                         f"deep buffer: pi misses its ratio as is ({a[5]:.2f} +- {a[6]:.2f}) and "
                         f"holds it without BYE copies and the core's own INVITE copies "
                         f"({b[5]:.3f} +- {b[6]:.3f}; target 0.05, bound 0.1)")
    return ok


def plot():
    common.gnuplot(PLOT, os.path.join(HERE, "queue_fluid.csv"),
                   os.path.join(HERE, "queue_sim.csv"), os.path.join(HERE, "tandem.csv"),
                   os.path.join(HERE, "figure.png"))


def full():
    with tempfile.TemporaryDirectory() as tmp:
        fl = {a: os.path.join(tmp, f"fluid_{a}.csv") for a in ("none", "rrrc", "rtd")}
        tr = {k: os.path.join(tmp, f"sim_{k}.csv") for k in ("none", "pi")}
        rows = [fluid_burst(a, fl[a]) for a in fl] + [sim_burst(k, 5, tr[k]) for k in tr]
        merge_fluid(fl, os.path.join(HERE, "queue_fluid.csv"))
        merge_sim(tr, os.path.join(HERE, "queue_sim.csv"))
    h1 = ["run", "goodput", "goodput_hw", "failed", "failed_hw", "final_queue", "state"]
    common.write_csv(os.path.join(HERE, "burst.csv"), rows, h1)
    trows = [tandem(b) for b in (10, 20, 50, 100, 200, 500, 1000, 5000, "inf")]
    h2 = ["buffer", "goodput", "failed", "lost", "state"]
    common.write_csv(os.path.join(HERE, "tandem.csv"),
                     [(1e7 if b == "inf" else b,) + r[1:] for (b, *_), r in zip(trows, trows)], h2)
    drows = [deep(v, k) for v, _ in VARIANTS for k in ("none", "pi")]
    h3 = ["variant", "control", "offered", "goodput", "goodput_hw", "retrans_ratio",
          "retrans_ratio_hw", "setup_delay"]
    common.write_csv(os.path.join(HERE, "deep_buffer.csv"), drows, h3)
    f1 = {h: "{:.3f}" for h in h1 + h2 + h3}
    f1.update({"run": "{}", "state": "{}", "buffer": "{}", "variant": "{}", "control": "{}",
               "failed": "{:.2%}", "failed_hw": "{:.2%}"})
    common.write_tables(os.path.join(HERE, "table.txt"), [(rows, h1), (trows, h2), (drows, h3)],
                        f1)
    plot()


if __name__ == "__main__":
    common.study_main(check, full, plot)

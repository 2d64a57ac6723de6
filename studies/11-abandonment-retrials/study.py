#!/usr/bin/env python3
"""Study 11: callers who give up and callers who retry, against each control's goodput and the
load at which it collapses.

  study.py            the full study: runs.csv, paired.csv, collapse.csv, figure.csv,
                      table.txt and figure.png here
  study.py --check    the reduced verdict of make check: exit 1 if a claim fails
  study.py --plot     figure.png again from figure.csv, without rerunning

A finding the papers do not have (issue 31, after the call-flow issue): their sources never give
up and never try again. examples/collapse.ini (UAC -> edge -> core -> UAS, the core 370.4
calls/s, buffer 50 000) at offered loads of 1 to 10 times the core's capacity, with no control,
loss (RFC 7339) and rate (RFC 7415) at the edge, and four kinds of callers: neither; callers who
give up (patience exponential, mean 4 s, then CANCEL); callers who retry a refused or timed-out
call (probability 0.8, after an exponential 5 s, at most 3 times); and the same retrying callers
told by every 503 to wait 10 s (Retry-After, honoured). Every run of a control and load is on
the same seed, so that the four kinds of callers see the same first attempts (common random
numbers), and each kind is compared with "neither" replication by replication.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import common  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
COLLAPSE = os.path.join(common.ROOT, "examples", "collapse.ini")
CAP = 1 / 2.7e-3  # the core's capacity, calls/s (osn sim prints it: 370.37)
CONTROLS = ("none", "loss", "rate")
CALLERS = [
    ("neither", []),
    ("give up", ["source.patience=exp", "source.patience_mean=4"]),
    ("retry", ["source.retry_prob=0.8", "source.retry_delay=5", "source.max_retries=3"]),
    ("retry + Retry-After 10 s", ["source.retry_prob=0.8", "source.retry_delay=5",
                                 "source.max_retries=3", "control.retry_after=10",
                                 "source.honour_retry_after=yes"]),
]
LOADS = (1, 2, 3, 4, 6, 8, 10)
MEASURES = ("offered", "goodput", "failed", "abandoned", "retries", "attempts_per_call",
            "core_util", "setup_delay_mean")
WORKERS = int(os.environ.get("STUDY11_WORKERS", "2"))
COLLAPSED = 0.5  # goodput below half the core's capacity: collapsed


def point(control, caller, load, reps, time):
    """The per-replication rows of one control, kind of callers and load (a multiple of the
    core's capacity)."""
    sets = [f"control.kind={control}", f"net.replications={reps}", f"net.time={time}",
            f"source.rate={load * CAP:.6f}"] + dict(CALLERS)[caller]
    return common.osn_reps("sim", COLLAPSE, sets)[1]


def sweep(control, caller, loads, reps, time):
    """{load: per-replication rows} of one control and kind of callers, two runs at a time
    (each run is one process on one core)."""
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(max_workers=WORKERS) as ex:
        rows = list(ex.map(lambda x: point(control, caller, x, reps, time), loads))
    return dict(zip(loads, rows))


def col(rows, m):
    return [r[m] if isinstance(r[m], float) else float("nan") for r in rows]


def collect(loads, reps, time, controls=CONTROLS, callers=None):
    """{(control, caller): {load: rows}}, checking that the callers of one control were offered
    the same first attempts in every replication."""
    res = {}
    for c in controls:
        for k, _ in CALLERS:
            if callers and k not in callers:
                continue
            res[(c, k)] = sweep(c, k, loads, reps, time)
        base = res[(c, "neither")]
        for k, _ in CALLERS:
            if (c, k) not in res:
                continue
            for x in loads:
                if col(res[(c, k)][x], "offered") != col(base[x], "offered"):
                    sys.exit(f"{c}, {k}, load {x}: other first attempts than 'neither': no "
                             "common random numbers")
    return res


def collapse_points(curves, loads):
    """Per replication, the load at which goodput first falls below half the capacity
    (interpolated; None: not up to the last load)."""
    reps = len(curves[loads[0]])
    return [common.crossing(loads, [curves[x][i]["goodput"] for x in loads], COLLAPSED * CAP)
            for i in range(reps)]


def summarise(res, loads):
    rows, prows, crows = [], [], []
    for (c, k), curves in res.items():
        for x in loads:
            rr = curves[x]
            rows.append((c, k, x, len(rr)) +
                        tuple(v for m in MEASURES for v in common.mean_hw(col(rr, m))))
            if k != "neither":
                base = res[(c, "neither")][x]
                d, hw = common.paired(col(rr, "goodput"), col(base, "goodput"))
                w, whw = common.welch(col(rr, "goodput"), col(base, "goodput"))
                prows.append((c, f"{k} - neither", x, len(rr), d, hw, w, whw))
        pts = collapse_points(curves, loads)
        mean_curve = [common.mean_hw(col(curves[x], "goodput"))[0] for x in loads]
        at = common.crossing(loads, mean_curve, COLLAPSED * CAP)
        n_none = sum(p is None for p in pts)
        if n_none == 0:
            m, hw = common.mean_hw(pts)
        else:
            m, hw = None, None
        d = dhw = None
        if k != "neither":
            bp = collapse_points(res[(c, "neither")], loads)
            if all(p is not None for p in pts + bp):
                d, dhw = common.paired(pts, bp)
        crows.append((c, k, len(pts), at, m, hw, n_none, d, dhw))
    return rows, prows, crows


PLOT = r"""
set terminal pngcairo size 1500,520 font ",10"
set output ARG2
set datafile separator ","
set multiplot layout 1,3 title "Goodput against offered load, examples/collapse.ini (core capacity 370 calls/s, buffer 50 000): mean of ".ARG3." replications per point, 95 % t-intervals; the four kinds of callers share their first attempts (common random numbers)"
set grid
set xlabel "offered load (first attempts / core capacity)"
set ylabel "goodput (calls/s answered before Timer B)"
set xrange [0.5:10.5]
set yrange [0:640]
set key top right box opaque
do for [c=0:2] {
    set title (c == 0 ? "no control" : c == 1 ? "loss (RFC 7339) at the edge" : "rate (RFC 7415) at the edge")
    plot ARG1 using 2:(column(3 + 8 * c)):(column(4 + 8 * c)) with yerrorlines lw 2 pt 7 lc rgb "#1f77b4" title "neither", \
         ARG1 using 2:(column(5 + 8 * c)):(column(6 + 8 * c)) with yerrorlines lw 2 pt 5 lc rgb "#2ca02c" title "give up (patience exp, mean 4 s)", \
         ARG1 using 2:(column(7 + 8 * c)):(column(8 + 8 * c)) with yerrorlines lw 2 pt 9 lc rgb "#d62728" title "retry (p 0.8, 5 s, at most 3)", \
         ARG1 using 2:(column(9 + 8 * c)):(column(10 + 8 * c)) with yerrorlines lw 2 pt 11 dt 2 lc rgb "#ff7f0e" title "retry, 503 Retry-After 10 s honoured", \
         370.37 with lines dt 3 lc rgb "gray40" title "capacity", \
         185.19 with lines dt 2 lc rgb "black" title "collapse level (half the capacity)"
}
unset multiplot
"""


def plot(reps):
    common.gnuplot(PLOT, os.path.join(HERE, "figure.csv"), os.path.join(HERE, "figure.png"),
                   str(reps))


def check():
    ok = True
    x = common.crossing([1, 2, 3], [300.0, 200.0, 100.0], 185.19)
    ok &= common.verdict(abs(x - 2.1481) < 1e-4 and common.crossing([1, 2], [300, 250], 185) is None,
                         f"crossing(): 2.1481 by hand, {x:.4f}")
    reps, time = 3, 5
    res = collect((2,), reps, time, ("none",), ("neither", "give up"))
    n, g = res[("none", "neither")][2], res[("none", "give up")][2]
    d, hw = common.paired(col(g, "goodput"), col(n, "goodput"))
    ok &= common.verdict(d + hw < 0 and max(col(g, "goodput")) < 1,
                         f"none at 2x: callers who give up take goodput from "
                         f"{common.mean_hw(col(n, 'goodput'))[0]:.1f} to 0 (paired {d:.1f} +- "
                         f"{hw:.1f} calls/s): collapse comes earlier")
    res = collect((3,), reps, time, ("loss",), ("neither", "retry"))
    n, r = res[("loss", "neither")][3], res[("loss", "retry")][3]
    d, hw = common.paired(col(r, "goodput"), col(n, "goodput"))
    att = common.mean_hw(col(r, "attempts_per_call"))
    ok &= common.verdict(min(col(r, "goodput")) > 0.9 * CAP and abs(d) < hw + 15 and
                         att[0] > 2,
                         f"loss at 3x: retrying callers make {att[0]:.2f} attempts per call, and "
                         f"goodput stays at {common.mean_hw(col(r, 'goodput'))[0]:.1f} (> 90 % "
                         f"of capacity; retry - neither {d:.1f} +- {hw:.1f}, paired)")
    return ok


def fmt_pt(v):
    return "-" if v is None else f"{v:.2f}"


def main():
    if sys.argv[1:] == ["--check"]:
        sys.exit(0 if check() else 1)
    reps = int(os.environ.get("STUDY11_REPS", "3"))
    if sys.argv[1:] == ["--plot"]:
        plot(reps)
        return
    loads = LOADS
    time = float(os.environ.get("STUDY11_TIME", "5"))
    res = collect(loads, reps, time)
    rows, prows, crows = summarise(res, loads)
    h = ["control", "callers", "load", "reps"] + [x for m in MEASURES for x in (m, m + "_hw")]
    hp = ["control", "pair", "load", "reps", "goodput_paired", "paired_hw", "goodput_welch",
          "welch_hw"]
    hc = ["control", "callers", "reps", "collapse_mean_curve", "collapse_mean", "collapse_hw",
          "reps_not_collapsed", "paired_shift", "paired_shift_hw"]
    common.write_csv(os.path.join(HERE, "runs.csv"), rows, h)
    common.write_csv(os.path.join(HERE, "paired.csv"), prows, hp)
    common.write_csv(os.path.join(HERE, "collapse.csv"), crows, hc)
    frows = []
    for i, x in enumerate(loads):
        r = [i, x]
        for c in CONTROLS:
            for k, _ in CALLERS:
                r += list(common.mean_hw(col(res[(c, k)][x], "goodput")))
        frows.append(tuple(r))
    common.write_csv(os.path.join(HERE, "figure.csv"), frows,
                     ["i", "load"] + [f"{c}_{k}_{s}".replace(" ", "_").replace(",", "")
                                      for c in CONTROLS for k, _ in CALLERS for s in ("g", "hw")])
    fmt = {x: "{:.3f}" for x in h + hp + hc}
    fmt.update({"control": "{}", "callers": "{}", "pair": "{}", "load": "{}", "reps": "{}",
                "reps_not_collapsed": "{}"})
    txt = (f"window {time:g} s after 35 s of warm-up, seed 1, {reps} replications\n\n" +
           common.table(rows, h, fmt) + "\n" + common.table(prows, hp, fmt) + "\n" +
           common.table(crows, hc, fmt))
    open(os.path.join(HERE, "table.txt"), "w").write(txt)
    print(txt)
    plot(reps)


if __name__ == "__main__":
    main()

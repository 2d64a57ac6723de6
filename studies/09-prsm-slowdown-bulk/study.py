#!/usr/bin/env python3
"""Study 9: PRSM under server slowdown and bulk arrivals, against none, loss and rate.

  study.py            the full study: runs.csv, paired.csv, fluid.csv, trace_*.csv, table.txt
                      and figure.png here (about three minutes on two cores)
  study.py --check    the reduced verdict of make check (about 20 s): exit 1 if a claim fails
  study.py --plot     figure.png again from the CSVs, without rerunning

Yavas, Hokelek and Gunsel (IJCS 2017, doi 10.1002/dac.3357) test PRSM "under bulk and bursty
arrivals and server slowdown"; study 05 covers the bursty case. Here the system of study 05
(sim.ini: one SIP server of 100 INVITE copies/s behind an RFC 3261 client, buffer 2000) at 60 %
load meets (a) a slowdown of the server to a fraction f of its speed for 60 s, and (b) new
INVITEs in batches of n arriving at one instant (60 calls/s on average). Every control runs on
the same seeds (common random numbers), one run per seed, so that each control is compared
with PRSM replication by replication (paired intervals; Welch's beside them as a note).
"""
import csv
import os
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import common  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SIM = os.path.join(HERE, "sim.ini")
FLUID = os.path.join(HERE, "fluid.ini")
CONTROLS = ("prsm", "none", "loss", "rate")
LAMBDA, MU = 60.0, 100.0  # calls/s offered; the server's INVITE copies/s
SLOW_START, SLOW_LEN = 60.0, 60.0  # s
HORIZON = 240.0  # s, each run
FACTORS = (0.8, 0.6, 0.5, 0.4, 0.3)
BATCHES = (1, 10, 25, 50, 100, 200, 400)
BACK = 10  # the core's queue is back to normal at 10 messages or fewer (M/D/1 at 60 %: 1.05)
WORKERS = int(os.environ.get("STUDY09_WORKERS", "2"))
MEASURES = ("offered", "goodput", "failed", "setup_delay_mean")


def scenario(kind, x):
    """The --set lines of scenario kind ("slow": factor x; "bulk": batch size x)."""
    if kind == "slow":
        return [f"server core.slowdown_start={SLOW_START}",
                f"server core.slowdown_end={SLOW_START + SLOW_LEN}",
                f"server core.slowdown_factor={x}"]
    if x == 1:
        return []  # batches of one: the Poisson reference
    return ["source.process=bulk", f"source.bulk_size={x}"]


def recovery(trace):
    """Seconds from the slowdown's end until the core's queue is back at BACK messages or fewer
    (trace rows of 1 s); None when it never is within the run."""
    end = SLOW_START + SLOW_LEN
    for row in trace:
        t = float(row["t_s"])
        if t >= end and float(row["core_queue_msgs"]) <= BACK:
            return t - end
    return None


def one(kind, x, control, seed, horizon, trace_to=None, interval=1.0):
    """One run (one replication on `seed`): its measures, and the recovery time (slowdown)."""
    sets = scenario(kind, x) + [f"control.kind={control}", f"net.seed={seed}",
                                f"net.time={horizon}"]
    with tempfile.TemporaryDirectory() as d:
        path = trace_to or os.path.join(d, "trace.csv")
        r = common.osn("sim", SIM, sets, ["--trace", path, "--trace-interval", str(interval)])
        with open(path) as f:
            trace = list(csv.DictReader(f))
    row = {m: r[m] for m in MEASURES}
    row["failed_ratio"] = r["failed"] / r["offered"] if r["offered"] else 0.0
    row["recovery"] = recovery(trace) if kind == "slow" else None
    return row


def collect(kind, xs, seeds, horizon):
    """{(x, control): [rows in seed order]}, WORKERS runs at a time."""
    jobs = [(x, c, s) for x in xs for c in CONTROLS for s in seeds]
    with ThreadPoolExecutor(max_workers=WORKERS) as ex:
        rows = list(ex.map(lambda j: one(kind, j[0], j[1], j[2], horizon), jobs))
    out = {}
    for (x, c, _), row in zip(jobs, rows):
        out.setdefault((x, c), []).append(row)
    return out


def col(rows, m, censor=None):
    """The measure m of rows; a recovery that never came counts as `censor` (the run's rest)."""
    return [censor if r[m] is None else r[m] for r in rows]


def fluid(factors):
    """The fluid model's slowdown (fluid.ini; the papers' own kind of model, one deterministic
    run per point): rows of factor, control, failed / offered, mean INVITE -> 100 delay (every
    answer) and whether the server's queue was empty again by the run's end (1 or 0)."""
    rows = []
    for f in factors:
        for c in ("prsm", "none"):
            r = common.osn("fluid", FLUID, [f"profile.slowdown_factor={f}", f"control.kind={c}"])
            rows.append((f, c, r["failed"] / r["offered"], r["mean_delay"], int(r["recovered"])))
    return rows


FLUID_H = ["factor", "control", "failed_ratio", "mean_delay", "recovered"]


def recovery_closed_form(f):
    """PRSM's return time: the slowdown leaves (lambda - f mu) d INVITEs queued (none is lost:
    the buffer holds them and no copy costs work), which drain at mu - lambda."""
    return max(0.0, (LAMBDA - f * MU) * SLOW_LEN) / (MU - LAMBDA)


def summarise(kind, res, xs):
    """Rows of runs.csv (mean and 95 % half-width per point and control) and paired.csv
    (PRSM minus each other control, paired and Welch)."""
    rest = HORIZON - SLOW_START - SLOW_LEN
    runs, paired = [], []
    for x in xs:
        for c in CONTROLS:
            rows = res[(x, c)]
            g, gh = common.mean_hw(col(rows, "goodput"))
            fr, frh = common.mean_hw(col(rows, "failed_ratio"))
            d, dh = common.mean_hw(col(rows, "setup_delay_mean"))
            rec = [r["recovery"] for r in rows]
            if kind == "slow" and all(v is not None for v in rec):
                rm, rh = common.mean_hw(rec)
            else:
                rm, rh = None, None
            back = sum(v is not None for v in rec) if kind == "slow" else None
            runs.append((kind, x, c, len(rows), g, gh, fr, frh, d, dh, rm, rh, back))
        p = res[(x, "prsm")]
        for c in CONTROLS[1:]:
            q = res[(x, c)]
            for m in ("goodput", "failed_ratio", "setup_delay_mean", "recovery"):
                if m == "recovery" and kind != "slow":
                    continue
                a, b = col(p, m, rest), col(q, m, rest)
                pm, ph = common.paired(a, b)
                wm, wh = common.welch(a, b)
                paired.append((kind, x, c, m, pm, ph, wh))
    return runs, paired


RUNS_H = ["scenario", "x", "control", "reps", "goodput", "goodput_hw", "failed_ratio",
          "failed_ratio_hw", "delay", "delay_hw", "recovery", "recovery_hw", "returned"]
PAIRED_H = ["scenario", "x", "other", "measure", "prsm_minus_other", "paired_hw", "welch_hw"]

PLOT = r"""
set terminal pngcairo size 1500,900 font ",10"
set output ARG4
set datafile separator ","
set multiplot layout 2,3 title "PRSM vs none, loss (RFC 7339), rate (RFC 7415): one server of 100 INVITEs/s, buffer 2000, 60 calls/s offered on average; ".ARG5." replications of 240 s per point (mean, 95 % CI), time series: one run (seed 1)"
set grid
set key box opaque
# (a) the slowdown, one run
set title "(a) slowdown to half speed in 60-120 s (grey): calls answered per second, one run"
set xlabel "time (s)"
set ylabel "goodput (calls/s, 1 s bins)"
set xrange [0:240]
set yrange [0:110]
set key top right
set object 1 rect from 60,0 to 120,110 fc rgb "#e0e0e0" fs solid 0.6 behind
plot ARG2 using 2:($1==0 ? $4 : 1/0) every ::0 with lines lw 2 lc 1 title "PRSM", \
     ARG2 using 2:($1==1 ? $4 : 1/0) with lines lw 1.5 lc 2 title "none", \
     ARG2 using 2:($1==2 ? $4 : 1/0) with lines lw 1.5 lc 3 title "loss", \
     ARG2 using 2:($1==3 ? $4 : 1/0) with lines lw 1.5 lc 4 dt 2 title "rate"
unset object 1
# (b) goodput against the slowdown's depth
set title "(b) goodput over the run against the slowdown's depth (60 s)"
set xlabel "server speed during the slowdown (fraction of 100/s)"
set ylabel "goodput (calls/s)"
set xrange [0.25:0.85]
set yrange [0:70]
set key bottom right
plot ARG1 using ($2-0.006):(strcol(1) eq "slow" && strcol(3) eq "prsm" ? $5 : 1/0):6 with yerrorlines pt 7 lc 1 lw 2 title "PRSM", \
     ARG1 using ($2-0.002):(strcol(1) eq "slow" && strcol(3) eq "none" ? $5 : 1/0):6 with yerrorlines pt 5 lc 2 title "none", \
     ARG1 using ($2+0.002):(strcol(1) eq "slow" && strcol(3) eq "loss" ? $5 : 1/0):6 with yerrorlines pt 9 lc 3 title "loss", \
     ARG1 using ($2+0.006):(strcol(1) eq "slow" && strcol(3) eq "rate" ? $5 : 1/0):6 with yerrorlines pt 11 lc 4 title "rate", \
     60 with lines dt 3 lc rgb "gray" title "offered"
# (c) return time
set title "(c) return time: slowdown's end to a server queue <= 10 messages\n(1 s bins; none: never within the run, not drawn)"
set ylabel "return time (s)"
set yrange [0:70]
set samples 200
set key top right
plot ARG1 using ($2-0.004):(strcol(1) eq "slow" && strcol(3) eq "prsm" ? $11 : 1/0):12 with yerrorbars pt 7 lc 1 title "PRSM", \
     ARG1 using ($2+0.000):(strcol(1) eq "slow" && strcol(3) eq "loss" ? $11 : 1/0):12 with yerrorbars pt 9 lc 3 title "loss", \
     ARG1 using ($2+0.004):(strcol(1) eq "slow" && strcol(3) eq "rate" ? $11 : 1/0):12 with yerrorbars pt 11 lc 4 title "rate", \
     (x < 0.6 ? 60 * (60 - 100 * x) / 40 : 0) with lines dt 2 lc 1 title "PRSM, closed form (60-100f) 60/40 s"
# (d) bulk, one run
set title "(d) batches of 200 INVITEs at one instant (20 s of one run):\nthe server's queue (messages)"
set xlabel "time (s)"
set ylabel "messages in the server"
set xrange [100:120]
set yrange [0:*]
set key top right
plot ARG3 using 2:($1==0 ? $18 : 1/0) with lines lw 2 lc 1 title "PRSM", \
     ARG3 using 2:($1==1 ? $18 : 1/0) with lines lw 1.5 lc 2 title "none", \
     ARG3 using 2:($1==2 ? $18 : 1/0) with lines lw 1.5 lc 3 title "loss", \
     ARG3 using 2:($1==3 ? $18 : 1/0) with lines lw 1.5 lc 4 dt 2 title "rate"
# (e) goodput against the batch size
set title "(e) goodput against the batch size (60 calls/s on average)"
set xlabel "INVITEs per batch (1: Poisson)"
set logscale x
set xrange [0.7:600]
set ylabel "goodput (calls/s)"
set yrange [0:70]
set key bottom left
plot ARG1 using ($2*0.96):(strcol(1) eq "bulk" && strcol(3) eq "prsm" ? $5 : 1/0):6 with yerrorlines pt 7 lc 1 lw 2 title "PRSM", \
     ARG1 using ($2*0.99):(strcol(1) eq "bulk" && strcol(3) eq "none" ? $5 : 1/0):6 with yerrorlines pt 5 lc 2 title "none", \
     ARG1 using ($2*1.01):(strcol(1) eq "bulk" && strcol(3) eq "loss" ? $5 : 1/0):6 with yerrorlines pt 9 lc 3 title "loss", \
     ARG1 using ($2*1.04):(strcol(1) eq "bulk" && strcol(3) eq "rate" ? $5 : 1/0):6 with yerrorlines pt 11 lc 4 title "rate"
# (f) delay against the batch size
set title "(f) mean INVITE -> 180 delay (= the server's 100 Trying),\nanswered calls only"
set ylabel "seconds"
set logscale y
set yrange [0.005:100]
set key top left
plot ARG1 using ($2*0.96):(strcol(1) eq "bulk" && strcol(3) eq "prsm" ? $9 : 1/0):10 with yerrorlines pt 7 lc 1 lw 2 title "PRSM", \
     ARG1 using ($2*0.99):(strcol(1) eq "bulk" && strcol(3) eq "none" ? $9 : 1/0):10 with yerrorlines pt 5 lc 2 title "none", \
     ARG1 using ($2*1.01):(strcol(1) eq "bulk" && strcol(3) eq "loss" ? $9 : 1/0):10 with yerrorlines pt 9 lc 3 title "loss", \
     ARG1 using ($2*1.04):(strcol(1) eq "bulk" && strcol(3) eq "rate" ? $9 : 1/0):10 with yerrorlines pt 11 lc 4 title "rate", \
     0.5 with lines dt 3 lc rgb "gray" title "T1 = 0.5 s"
unset multiplot
"""


def traces():
    """One run per control (seed 1): the slowdown to half (1 s rows) and batches of 200 (0.1 s
    rows: a row must be shorter than the batches' 3.3 s mean spacing and the 2 s the server
    takes to serve one batch, or the rows average the batches away)."""
    for kind, x, interval, name in (("slow", 0.5, 1.0, "trace_slow.csv"),
                                    ("bulk", 200, 0.1, "trace_bulk.csv")):
        rows, header = [], None
        with tempfile.TemporaryDirectory() as d:
            for i, c in enumerate(CONTROLS):
                path = os.path.join(d, f"{c}.csv")
                one(kind, x, c, 1, HORIZON, path, interval)
                with open(path) as f:
                    r = list(csv.reader(f))
                header = r[0]
                rows += [[str(i)] + row[1:] for row in r[1:]]  # column 1: the control's index
        with open(os.path.join(HERE, name), "w") as f:
            f.write(",".join(["control"] + header[1:]) + "\n")
            f.writelines(",".join(row) + "\n" for row in rows)


def plot(reps=None):
    if reps is None:
        with open(os.path.join(HERE, "runs.csv")) as f:
            reps = next(csv.DictReader(f))["reps"]
    common.gnuplot(PLOT, os.path.join(HERE, "runs.csv"), os.path.join(HERE, "trace_slow.csv"),
                   os.path.join(HERE, "trace_bulk.csv"), os.path.join(HERE, "figure.png"),
                   str(reps))


def verdicts(slow, bulk, f, n, seeds):
    """The claims on one slowdown factor f and one batch size n; True when all hold."""
    rest = HORIZON - SLOW_START - SLOW_LEN
    ok = True
    p = slow[(f, "prsm")]
    fr = max(col(p, "failed_ratio"))
    ok &= common.verdict(fr < 0.005, f"slowdown to {f}: PRSM fails {fr:.3%} of the calls at most "
                                     f"(< 0.5 %, {len(seeds)} seeds)")
    for c in CONTROLS[1:]:
        m, h = common.paired(col(p, "goodput"), col(slow[(f, c)], "goodput"))
        ok &= common.verdict(m - h > 0, f"slowdown to {f}: goodput PRSM - {c} {m:+.2f} +- "
                                        f"{h:.2f} calls/s (paired, > 0)")
    rec = col(p, "recovery")
    want = recovery_closed_form(f)
    ok &= common.verdict(all(v is not None and abs(v - want) <= 0.2 * want + 2 for v in rec),
                         f"slowdown to {f}: PRSM back in {rec} s, closed form {want:.1f} s "
                         "(within 20 % + 2 s)")
    none_back = col(slow[(f, "none")], "recovery")
    ok &= common.verdict(all(v is None for v in none_back),
                         f"slowdown to {f}: none never back within the run's last {rest:.0f} s "
                         f"({none_back})")
    p = bulk[(n, "prsm")]
    fr = max(col(p, "failed_ratio"))
    ok &= common.verdict(fr < 0.005, f"batches of {n}: PRSM fails {fr:.3%} of the calls at most "
                                     "(< 0.5 %)")
    for c in CONTROLS[1:]:
        m, h = common.paired(col(p, "goodput"), col(bulk[(n, c)], "goodput"))
        ok &= common.verdict(m - h > 0, f"batches of {n}: goodput PRSM - {c} {m:+.2f} +- "
                                        f"{h:.2f} calls/s (paired, > 0)")
    return ok


def fluid_verdicts(rows, f):
    """The fluid model's slowdown to f: PRSM fails no call and empties its queue, none does
    not."""
    by = {(x, c): (fr, d, back) for x, c, fr, d, back in rows}
    pf, pd, pb = by[(f, "prsm")]
    nf, nd, nb = by[(f, "none")]
    return common.verdict(pf < 0.005 and pb and not nb and nf > 0.05,
                          f"fluid, slowdown to {f}: PRSM fails {pf:.3%} and is back: {bool(pb)}; "
                          f"none fails {nf:.1%} and is back: {bool(nb)}")


def check():
    seeds = [1, 2, 3]
    slow = collect("slow", [0.5], seeds, HORIZON)
    bulk = collect("bulk", [200], seeds, 180)
    ok = verdicts(slow, bulk, 0.5, 200, seeds)
    return fluid_verdicts(fluid([0.5]), 0.5) and ok


def full():
    seeds = list(range(1, 7))
    slow = collect("slow", FACTORS, seeds, HORIZON)
    bulk = collect("bulk", BATCHES, seeds, HORIZON)
    r1, p1 = summarise("slow", slow, FACTORS)
    r2, p2 = summarise("bulk", bulk, BATCHES)
    common.write_csv(os.path.join(HERE, "runs.csv"), r1 + r2, RUNS_H)
    common.write_csv(os.path.join(HERE, "paired.csv"), p1 + p2, PAIRED_H)
    fmt = {h: "{:.3f}" for h in RUNS_H + PAIRED_H}
    fmt.update({"scenario": "{}", "x": "{}", "control": "{}", "other": "{}", "measure": "{}",
                "reps": "{}", "returned": "{}", "failed_ratio": "{:.2%}",
                "failed_ratio_hw": "{:.2%}"})
    fl = fluid(FACTORS)
    common.write_csv(os.path.join(HERE, "fluid.csv"), fl, FLUID_H)
    fmt.update({"factor": "{}", "mean_delay": "{:.3f}", "recovered": "{}"})
    common.write_tables(os.path.join(HERE, "table.txt"),
                        [(r1 + r2, RUNS_H), (p1 + p2, PAIRED_H), (fl, FLUID_H)], fmt)
    traces()
    plot(len(seeds))
    verdicts(slow, bulk, 0.5, 200, seeds)
    fluid_verdicts(fl, 0.5)


if __name__ == "__main__":
    common.study_main(check, full, plot)

#!/usr/bin/env python3
"""Study 1: loss-based (LBOC) against rate-based (RBOC) overload control as the RTT grows.

  study.py            the full study: table.csv, paired.csv, growth.csv, release.csv,
                      table.txt, figure.png here (about 5 minutes of CPU)
  study.py --plot     redraw figure.png from table.csv, paired.csv and release.csv
  study.py --check    the reduced verdict of make check (seconds): exit 1 if the claim fails

The claim (RUDN group): "RBOC ... demonstrates higher effectiveness of the congestion control,
as a result of which the average time in the overload mode is less than for LBOC mechanism.
However, LBOC mechanism has the ability to maintain its high efficiency for all RTT values on
the same thresholds, while RBOC mechanism needs to have its own threshold dynamic control
mechanism for different RTT values".

Every run uses the same seed and replication count, and osn sim draws the arrivals from streams
of their own (common random numbers): replication i of every control and every RTT is offered
the same calls. The comparisons are therefore paired by replication: the difference of two runs
is estimated from the per-replication differences (--replications-out), with a t-interval on
n - 1 degrees of freedom, not from the two runs' separate intervals.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import common  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
NET = os.path.join(common.ROOT, "examples", "collapse.ini")
# MMPP-2 source: 200 calls/s for 2 s on average, 600/s for 1 s: mean 333/s = 0.9 of the core's
# 370/s, bursts at 1.6 x capacity. The hysteretic detector of the core keeps its defaults
# (l1 20, h1 40, l2 60, h2 80 messages).
SOURCE = ["source.process=mmpp", "source.mmpp_rates=200, 600", "source.mmpp_switch=0.5, 1"]
THRESHOLDS = (20, 40, 60, 80)
CAPACITY = 370.37       # calls/s, osn sim's `capacity`
PEAK = 600.0            # calls/s in the burst phase
MSGS_PER_CALL = 6       # at the core: INVITE, 180, 200, ACK, BYE, 200 of BYE
RTTS = (0.01, 0.05, 0.1, 0.2, 0.4)
TIME, REPS = 600, 6     # the full study: 6 replications of 600 s after a 10 s warm-up
# RBOC's release rule (src/ctl/rate.c): in mode 0 the server stops the rate limit once the
# new-INVITE arrival rate falls below release x the limit; OSN's default is 0.8. The
# alternative releases at the first estimate after abatement: with release = 1e9 the condition
# always holds ("release at once").
RELEASE_DEFAULT, RELEASE_AT_ONCE = 0.8, 1e9
# The rows of the full study: code, control kind, RTT-aware thresholds?, release
# rate_dyn (src/ctl/rate_dyn.c) is our dynamic RBOC: the core measures the feedback delay and
# moves the onset of its limit and the limit itself by the queue growth expected over it; its
# detector (what is measured as overload) keeps the same thresholds.
VARIANTS = ((0, "loss", False, None), (1, "rate", False, RELEASE_DEFAULT),
            (2, "rate", True, RELEASE_DEFAULT), (3, "rate", False, RELEASE_AT_ONCE),
            (4, "rate_dyn", False, RELEASE_DEFAULT))
DIFF_CODES = (1, 2, 3, 4)
# The release sweep: RBOC on the default thresholds at the two ends of the RTT range, release
# from 0 (never lifted: in mode 0 the limit only relaxes to the new estimate) to at once.
SWEEP_RTTS, SWEEP_RELEASES = (0.01, 0.4), (0, 0.5, RELEASE_DEFAULT, 1, RELEASE_AT_ONCE)
NAMES = {0: "loss", 1: "rate", 2: "rate, RTT-aware", 3: "rate, release at once",
         4: "rate_dyn (dynamic)"}
MEASURES = ("core_overload", "core_T_ret", "core_P2", "goodput", "failed")


def rtt_aware(rtt):
    """Our RTT-aware thresholds for RBOC: the onset thresholds H1, H2 lowered by the excess
    messages that reach the core during one RTT of a burst before the new rate takes effect,
    (peak - capacity) x messages per call x RTT, so that the queue is back near H when the
    throttle bites; never below L + 1."""
    l1, h1, l2, h2 = THRESHOLDS
    d = round((PEAK - CAPACITY) * MSGS_PER_CALL * rtt)
    return l1, max(l1 + 1, h1 - d), l2, max(l2 + 1, h2 - d)


def run(kind, rtt, thresholds, time, reps, release=None):
    """One osn sim run (seed 1): the pooled estimates with their intervals, and the
    per-replication values of MEASURES and of offered (lists in replication order)."""
    l1, h1, l2, h2 = thresholds
    sets = SOURCE + [
        f"control.kind={kind}", f"link trunk.delay={rtt / 2}", f"net.time={time}",
        "net.warmup=10", f"net.replications={reps}", f"control.l1={l1}", f"control.h1={h1}",
        f"control.l2={l2}", f"control.h2={h2}"]
    if release is not None:
        sets.append(f"control.release={release:g}")
    r, rows = common.osn_reps("sim", NET, sets)
    if len(rows) != reps:
        sys.exit(f"{kind} at RTT {rtt}: {len(rows)} replication rows, want {reps}")
    est = {k: (r[k], r[k + "_ci"] or 0) for k in MEASURES}
    est["offered"] = r["offered"]
    per = {k: [row[k] for row in rows] for k in MEASURES + ("offered",)}
    return est, per


def pair(a, b, key):
    """Paired difference a - b of one measure over the replications of two runs; the runs must
    have been offered the same calls replication by replication (common random numbers)."""
    if a["offered"] != b["offered"]:
        sys.exit("paired runs were offered different calls: no common random numbers")
    return common.paired(a[key], b[key])


def diff_of_diffs(a1, a0, b1, b0, key):
    """Paired (a1 - a0) - (b1 - b0) per replication: the RBOC growth beyond LBOC's."""
    for x in (a0, b1, b0):
        if x["offered"] != a1["offered"]:
            sys.exit("paired runs were offered different calls: no common random numbers")
    return common.mean_hw([(w - x) - (y - z) for w, x, y, z in
                           zip(a1[key], a0[key], b1[key], b0[key])])


HEADER = ["rtt", "control", "l1", "h1", "l2", "h2", "release", "overload", "overload_hw",
          "T_ret", "T_ret_hw", "P2", "P2_hw", "goodput", "goodput_hw", "failed", "failed_hw",
          "offered"]
# paired.csv: rate - loss at each RTT (control: 1 = rate, 2 = RTT-aware, 3 = release at once,
# 4 = rate_dyn),
# paired over the same replications; _hw are 95 % t half-widths on n - 1 degrees of freedom.
PHEADER = ["rtt", "control", "n", "d_overload", "d_overload_hw", "d_T_ret", "d_T_ret_hw",
           "d_goodput", "d_goodput_hw", "d_failed", "d_failed_hw"]
# growth.csv: 400 ms - 10 ms for each control, paired by replication (same arrivals).
# release.csv: RBOC with each release value against LBOC, paired by replication.
RHEADER = ["rtt", "release", "n", "overload", "overload_hw", "T_ret", "goodput",
           "d_overload", "d_overload_hw", "d_T_ret", "d_T_ret_hw"]
GHEADER = ["control", "n", "overload_10ms", "overload_400ms", "ratio", "d_overload",
           "d_overload_hw", "d_T_ret", "d_T_ret_hw", "minus_loss", "minus_loss_hw"]

PLOT = r"""
set terminal pngcairo size 1800,1000 font ",10"
set output ARG4
set datafile separator ","
set multiplot layout 2,3 title "LBOC (loss) vs RBOC (rate) at the core, MMPP-2 input (mean 0.9 of capacity): n = ".ARG5." replications x 600 s each, 95 % t-intervals; differences paired by replication (same arrivals)"
set grid
set key below height 1.5
set xlabel "RTT edge <-> core (s)"
set xrange [0:0.42]
set title "time in overload mode P1 + P2 (each run's own interval)"
set ylabel "fraction of time"
plot ARG1 skip 1 every 5::0 using 1:8:9 with yerrorlines pt 7 lc 1 title "LBOC (loss), thresholds 20/40/60/80", \
     ARG1 skip 1 every 5::1 using 1:8:9 with yerrorlines pt 5 lc 2 title "RBOC (rate), same thresholds, release 0.8 (default)", \
     ARG1 skip 1 every 5::2 using 1:8:9 with yerrorlines pt 9 dt 2 lc 3 title "RBOC, RTT-aware onset thresholds", \
     ARG1 skip 1 every 5::3 using 1:8:9 with yerrorlines pt 11 dt 3 lw 1.5 lc 7 title "RBOC, release at once", \
     ARG1 skip 1 every 5::4 using 1:8:9 with yerrorlines pt 13 lw 2 lc 4 title "rate\\_dyn: dynamic RBOC (measured feedback delay)"
set title "mean overload period T_{ret} at the core (each run's own interval)"
set ylabel "seconds"
set logscale y
plot ARG1 skip 1 every 5::0 using 1:10:11 with yerrorlines pt 7 lc 1 title "LBOC (loss)", \
     ARG1 skip 1 every 5::1 using 1:10:11 with yerrorlines pt 5 lc 2 title "RBOC (rate), release 0.8", \
     ARG1 skip 1 every 5::2 using 1:10:11 with yerrorlines pt 9 dt 2 lc 3 title "RBOC, RTT-aware", \
     ARG1 skip 1 every 5::3 using 1:10:11 with yerrorlines pt 11 dt 3 lw 1.5 lc 7 title "RBOC, release at once", \
     ARG1 skip 1 every 5::4 using 1:10:11 with yerrorlines pt 13 lw 2 lc 4 title "rate\\_dyn"
unset logscale y
set xzeroaxis lt -1 lw 1.5
set xrange [-0.5:4.5]
set xlabel "RBOC release (0 = never lifted in mode 0, 0.8 = OSN default)"
set title "release rule: paired RBOC - LBOC, time in overload"
set ylabel "difference in fraction of time (< 0: RBOC better)"
plot ARG3 skip 1 every ::0::4 using 0:8:9:xtic(column(2) > 100 ? "at once" : strcol(2)) with yerrorlines pt 5 lc 2 title "RTT 10 ms", \
     ARG3 skip 1 every ::5::9 using 0:8:9 with yerrorlines pt 4 dt 2 lc 6 title "RTT 400 ms"
set xrange [0:0.42]
set xlabel "RTT edge <-> core (s)"
set xtics autofreq
set title "paired RBOC - LBOC, time in overload"
plot ARG2 skip 1 every 4::0 using 1:4:5 with yerrorlines pt 5 lc 2 title "rate (release 0.8) - loss", \
     ARG2 skip 1 every 4::1 using 1:4:5 with yerrorlines pt 9 dt 2 lc 3 title "rate RTT-aware - loss", \
     ARG2 skip 1 every 4::2 using 1:4:5 with yerrorlines pt 11 dt 3 lw 1.5 lc 7 title "rate, release at once - loss", \
     ARG2 skip 1 every 4::3 using 1:4:5 with yerrorlines pt 13 lw 2 lc 4 title "rate\\_dyn - loss"
set title "paired RBOC - LBOC, mean overload period T_{ret}"
set ylabel "difference in seconds (< 0: RBOC better)"
plot ARG2 skip 1 every 4::0 using 1:6:7 with yerrorlines pt 5 lc 2 title "rate (release 0.8) - loss", \
     ARG2 skip 1 every 4::1 using 1:6:7 with yerrorlines pt 9 dt 2 lc 3 title "rate RTT-aware - loss", \
     ARG2 skip 1 every 4::2 using 1:6:7 with yerrorlines pt 11 dt 3 lw 1.5 lc 7 title "rate, release at once - loss", \
     ARG2 skip 1 every 4::3 using 1:6:7 with yerrorlines pt 13 lw 2 lc 4 title "rate\\_dyn - loss"
set xrange [-0.5:4.5]
set xlabel "RBOC release (0 = never lifted in mode 0, 0.8 = OSN default)"
set title "release rule: paired RBOC - LBOC, T_{ret}"
plot ARG3 skip 1 every ::0::4 using 0:10:11:xtic(column(2) > 100 ? "at once" : strcol(2)) with yerrorlines pt 5 lc 2 title "RTT 10 ms", \
     ARG3 skip 1 every ::5::9 using 0:10:11 with yerrorlines pt 4 dt 2 lc 6 title "RTT 400 ms"
unset multiplot
"""


def signed(m, h, unit=""):
    return f"{m:+.3f} +- {h:.3f}{unit}"


def check():
    """At RTT 10 ms and 400 ms, loss and rate on the same thresholds (5 replications of 300 s,
    seed 1), every comparison paired by replication:
    - RBOC's time in overload grows with the RTT by more than LBOC's: the paired difference of
      differences (rate 400 - rate 10) - (loss 400 - loss 10) has its 95 % interval above 0;
    - RBOC's mean overload period T_ret is longer than LBOC's at both RTTs (paired);
    - at 10 ms, the paired rate - loss difference in time in overload is printed as the
      interval finds it (at this size: RBOC below LBOC, interval clear of 0; the assert
      is that it is, so a change that moves it shows up);
    - rate_dyn (the dynamic RBOC) spends less time in overload than LBOC at 10 and 400 ms."""
    n, time = 5, 300
    res = {(k, rtt): run(k, rtt, THRESHOLDS, time, n)[1] for k in ("loss", "rate", "rate_dyn")
           for rtt in (0.01, 0.4)}
    ok = True
    for k in ("loss", "rate"):
        m, h = pair(res[(k, 0.4)], res[(k, 0.01)], "core_overload")
        ok &= common.verdict(True, f"{k}: time in overload 400 ms - 10 ms, paired: "
                             f"{signed(m, h)} (n = {n})")
    m, h = diff_of_diffs(res[("rate", 0.4)], res[("rate", 0.01)], res[("loss", 0.4)],
                         res[("loss", 0.01)], "core_overload")
    ok &= common.verdict(m - h > 0, f"RBOC's growth minus LBOC's, paired: {signed(m, h)} "
                         f"(want > 0 beyond the interval)")
    m, h = pair(res[("rate", 0.01)], res[("loss", 0.01)], "core_overload")
    ok &= common.verdict(m + h < 0, f"RTT 10 ms: rate - loss time in overload, paired: "
                         f"{signed(m, h)} ("
                         + ("RBOC below LBOC" if m + h < 0 else "RBOC above LBOC" if m - h > 0
                            else "not resolved") + f" at n = {n} x {time} s)")
    for rtt in (0.01, 0.4):
        m, h = pair(res[("rate", rtt)], res[("loss", rtt)], "core_T_ret")
        ok &= common.verdict(m - h > 0, f"RTT {rtt * 1000:g} ms: rate - loss T_ret, paired: "
                             f"{signed(m, h, ' s')} (want RBOC longer)")
    # rate_dyn, the dynamic RBOC: below LBOC's time in overload at both ends of the RTT range.
    for rtt in (0.01, 0.4):
        m, h = pair(res[("rate_dyn", rtt)], res[("loss", rtt)], "core_overload")
        ok &= common.verdict(m + h < 0, f"RTT {rtt * 1000:g} ms: rate_dyn - loss time in "
                             f"overload, paired: {signed(m, h)} (want rate_dyn below)")
    return ok


def plot():
    common.gnuplot(PLOT, *(os.path.join(HERE, f) for f in ("table.csv", "paired.csv",
                   "release.csv", "figure.png")), str(REPS))


def main():
    if sys.argv[1:] == ["--check"]:
        sys.exit(0 if check() else 1)
    if sys.argv[1:] == ["--plot"]:  # redraw the figure from the CSV files only
        plot()
        return
    if sys.argv[1:]:
        sys.exit(__doc__)
    rows, per = [], {}
    for rtt in RTTS:
        for code, kind, aware, release in VARIANTS:
            thr = rtt_aware(rtt) if aware else THRESHOLDS
            est, p = run(kind, rtt, thr, TIME, REPS, release)
            per[(rtt, code)] = p
            rows.append((rtt, code) + thr + (release if release is not None else "",)
                        + sum((est[k] for k in MEASURES), ()) + (est["offered"],))
            print(rows[-1], flush=True)
    prow = []
    for rtt in RTTS:
        for code in DIFF_CODES:
            prow.append((rtt, code, REPS)
                        + pair(per[(rtt, code)], per[(rtt, 0)], "core_overload")
                        + pair(per[(rtt, code)], per[(rtt, 0)], "core_T_ret")
                        + pair(per[(rtt, code)], per[(rtt, 0)], "goodput")
                        + pair(per[(rtt, code)], per[(rtt, 0)], "failed"))
    grow = []
    lo, hi = RTTS[0], RTTS[-1]
    for code, _, _, _ in VARIANTS:
        a, b = per[(hi, code)], per[(lo, code)]
        ma, mb = [common.mean_hw(x["core_overload"])[0] for x in (a, b)]
        dd = (diff_of_diffs(a, b, per[(hi, 0)], per[(lo, 0)], "core_overload") if code
              else ("", ""))
        grow.append((code, REPS, mb, ma, ma / mb) + pair(a, b, "core_overload")
                    + pair(a, b, "core_T_ret") + dd)
    rel = []
    for rtt in SWEEP_RTTS:
        for release in SWEEP_RELEASES:
            code = {RELEASE_DEFAULT: 1, RELEASE_AT_ONCE: 3}.get(release)
            if code is not None:  # already run
                est = next(dict(zip(HEADER, r)) for r in rows if r[0] == rtt and r[1] == code)
                est = {"core_overload": (est["overload"], est["overload_hw"]),
                       "core_T_ret": (est["T_ret"], 0), "goodput": (est["goodput"], 0)}
                p = per[(rtt, code)]
            else:
                est, p = run("rate", rtt, THRESHOLDS, TIME, REPS, release)
            rel.append((rtt, release, REPS) + est["core_overload"]
                       + (est["core_T_ret"][0], est["goodput"][0])
                       + pair(p, per[(rtt, 0)], "core_overload")
                       + pair(p, per[(rtt, 0)], "core_T_ret"))
            print(rel[-1], flush=True)
    common.write_csv(os.path.join(HERE, "release.csv"), rel, RHEADER)
    common.write_csv(os.path.join(HERE, "table.csv"), rows, HEADER)
    common.write_csv(os.path.join(HERE, "paired.csv"), prow, PHEADER)
    common.write_csv(os.path.join(HERE, "growth.csv"), grow, GHEADER)
    f4 = "{:.4f}"
    fmt = {h: f4 for h in HEADER + PHEADER + GHEADER + RHEADER}
    fmt.update({"rtt": "{}", "control": "{}", "l1": "{}", "h1": "{}", "l2": "{}", "h2": "{}",
                "n": "{}", "release": "{:g}", "goodput": "{:.1f}", "goodput_hw": "{:.1f}",
                "failed": "{:.1f}", "failed_hw": "{:.1f}", "offered": "{:.1f}",
                "ratio": "{:.3f}", "d_overload": "{:+.4f}", "d_T_ret": "{:+.4f}",
                "minus_loss": "{:+.4f}", "d_goodput": "{:+.1f}", "d_goodput_hw": "{:.1f}",
                "d_failed": "{:+.1f}", "d_failed_hw": "{:.1f}"})
    fmt_blank = lambda r: tuple(None if v == "" else v for v in r)
    txt = (f"Estimates per run ({REPS} replications of {TIME} s after 10 s, seed 1; _hw: 95 % "
           "half-width of the run's own interval)\n\n"
           + common.table([fmt_blank((r[0], NAMES[r[1]]) + r[2:]) for r in rows], HEADER, fmt)
           + f"\nPaired by replication, RBOC variant - LBOC at the same RTT (n = {REPS}, 95 % "
           "t half-widths on n - 1 degrees of freedom)\n\n"
           + common.table([(r[0], NAMES[r[1]]) + r[2:] for r in prow], PHEADER, fmt)
           + f"\nPaired by replication across the RTT, 400 ms - 10 ms for each control (same "
           "arrivals in both; minus_loss: that growth minus LBOC's, paired)\n\n"
           + common.table([fmt_blank((NAMES[r[0]],) + r[1:]) for r in grow], GHEADER, fmt)
           + f"\nRBOC's release rule (src/ctl/rate.c: in mode 0 the limit is lifted once arrivals "
           "< release x limit; 0 = never, 1e9 = at the first estimate), default thresholds; d_: "
           f"RBOC - LBOC paired by replication (n = {REPS})\n\n"
           + common.table(rel, RHEADER, fmt))
    open(os.path.join(HERE, "table.txt"), "w").write(txt)
    print(txt)
    plot()


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Study 1: loss-based (LBOC) against rate-based (RBOC) overload control as the RTT grows.

  study.py            the full study: table.csv, table.txt, figure.png here (about 5 minutes)
  study.py --plot     redraw figure.png from table.csv
  study.py --check    the reduced verdict of make check (seconds): exit 1 if the claim fails

The claim (RUDN group): "RBOC ... demonstrates higher effectiveness of the congestion control,
as a result of which the average time in the overload mode is less than for LBOC mechanism.
However, LBOC mechanism has the ability to maintain its high efficiency for all RTT values on
the same thresholds, while RBOC mechanism needs to have its own threshold dynamic control
mechanism for different RTT values".
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


def rtt_aware(rtt):
    """Our RTT-aware thresholds for RBOC: the onset thresholds H1, H2 lowered by the excess
    messages that reach the core during one RTT of a burst before the new rate takes effect,
    (peak - capacity) x messages per call x RTT, so that the queue is back near H when the
    throttle bites; never below L + 1."""
    l1, h1, l2, h2 = THRESHOLDS
    d = round((PEAK - CAPACITY) * MSGS_PER_CALL * rtt)
    return l1, max(l1 + 1, h1 - d), l2, max(l2 + 1, h2 - d)


def run(kind, rtt, thresholds, time, reps):
    l1, h1, l2, h2 = thresholds
    r = common.osn("sim", NET, SOURCE + [
        f"control.kind={kind}", f"link trunk.delay={rtt / 2}", f"net.time={time}",
        "net.warmup=10", f"net.replications={reps}", f"control.l1={l1}", f"control.h1={h1}",
        f"control.l2={l2}", f"control.h2={h2}"])
    g = lambda k: (r[k], r[k + "_ci"] or 0)
    return (*g("core_overload"), *g("core_T_ret"), *g("core_P2"), *g("goodput"),
            *g("failed"), r["offered"])


HEADER = ["rtt", "control", "l1", "h1", "l2", "h2", "overload", "overload_hw", "T_ret",
          "T_ret_hw", "P2", "P2_hw", "goodput", "goodput_hw", "failed", "failed_hw", "offered"]

PLOT = r"""
set terminal pngcairo size 1200,460 font ",10"
set output ARG2
set datafile separator ","
set multiplot layout 1,2 title "LBOC (loss) vs RBOC (rate) at the core, MMPP-2 input (mean 0.9 of capacity), RTT swept (95 % CI)"
set grid
set key top left box opaque
set xlabel "RTT edge <-> core (s)"
set xrange [0:0.42]
set title "time in overload mode P1 + P2"
set ylabel "fraction of time"
plot ARG1 skip 1 every 3::0 using 1:7:8 with yerrorlines pt 7 lc 1 title "LBOC (loss), thresholds 20/40/60/80", \
     ARG1 skip 1 every 3::1 using 1:7:8 with yerrorlines pt 5 lc 2 title "RBOC (rate), same thresholds", \
     ARG1 skip 1 every 3::2 using 1:7:8 with yerrorlines pt 9 dt 2 lc 3 title "RBOC, RTT-aware onset thresholds"
set title "mean overload period T_{ret} at the core"
set ylabel "seconds"
set logscale y
set key bottom right
plot ARG1 skip 1 every 3::0 using 1:9:10 with yerrorlines pt 7 lc 1 title "LBOC (loss)", \
     ARG1 skip 1 every 3::1 using 1:9:10 with yerrorlines pt 5 lc 2 title "RBOC (rate)", \
     ARG1 skip 1 every 3::2 using 1:9:10 with yerrorlines pt 9 dt 2 lc 3 title "RBOC, RTT-aware"
unset multiplot
"""


def check():
    """At RTT 10 ms and 400 ms, loss and rate on the same thresholds (5 replications of 300 s):
    RBOC's time in overload grows with the RTT by more than the 95 % half-width of the
    difference, sqrt(h1^2 + h2^2) for two independent estimates; LBOC's does not."""
    ok = True
    res = {(k, rtt): run(k, rtt, THRESHOLDS, 300, 5) for k in ("loss", "rate")
           for rtt in (0.01, 0.4)}
    for k in ("loss", "rate"):
        a, ah = res[(k, 0.01)][:2]
        b, bh = res[(k, 0.4)][:2]
        grows = b - a > (ah * ah + bh * bh) ** 0.5
        ok &= common.verdict(grows == (k == "rate"),
                             f"{k}: time in overload {a:.3f} +- {ah:.3f} at RTT 10 ms, "
                             f"{b:.3f} +- {bh:.3f} at 400 ms ("
                             f"{'grows' if grows else 'no growth beyond the intervals'}; want "
                             f"{'growth' if k == 'rate' else 'none'})")
    return ok


def main():
    if sys.argv[1:] == ["--check"]:
        sys.exit(0 if check() else 1)
    if sys.argv[1:] == ["--plot"]:  # redraw the figure from table.csv only
        common.gnuplot(PLOT, os.path.join(HERE, "table.csv"), os.path.join(HERE, "figure.png"))
        return
    rows = []
    for rtt in (0.01, 0.05, 0.1, 0.2, 0.4):
        for code, kind, thr in ((0, "loss", THRESHOLDS), (1, "rate", THRESHOLDS),
                                (2, "rate", rtt_aware(rtt))):
            rows.append((rtt, code) + thr + run(kind, rtt, thr, 600, 6))
            print(rows[-1], flush=True)
    csv = os.path.join(HERE, "table.csv")
    common.write_csv(csv, rows, HEADER)
    fmt = {h: "{:.4f}" for h in HEADER}
    fmt.update({"rtt": "{}", "control": "{}", "l1": "{}", "h1": "{}", "l2": "{}", "h2": "{}",
                "goodput": "{:.1f}", "goodput_hw": "{:.1f}", "failed": "{:.1f}",
                "failed_hw": "{:.1f}", "offered": "{:.1f}"})
    names = {0: "loss", 1: "rate", 2: "rate, RTT-aware"}
    txt = common.table([(r[0], names[r[1]]) + r[2:] for r in rows], HEADER, fmt)
    open(os.path.join(HERE, "table.txt"), "w").write(txt)
    print(txt)
    common.gnuplot(PLOT, csv, os.path.join(HERE, "figure.png"))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Study 8: PI retransmission control designed as the papers design it, short and deep buffers.

  study.py            the full study: gains.txt, runs.csv, paired.csv, figure.csv, table.txt and
                      figure.png here
  study.py --check    the reduced verdict of make check: exit 1 if a claim fails
  study.py --plot     figure.png again from figure.csv, without rerunning

Claims (Hong, Huang, Yan: GLOBECOM 2010 RRRC, ICC 2011 RTD, the journal version): a PI
controller of the upstream server's retransmission *message* rate, with gains from their
stability (phase-margin) guidelines, mitigates a short-term overload "without rejecting calls or
reducing resource utilization" and holds the redundant-message ratio at its target. Checked on
examples/burst.ini (UAC -> edge -> core -> UAS, 70 % load, x3 for 3 s), with the core's buffer
short (500 messages: its wait cannot reach T1) and deep (50 000), every run of a buffer on the
same seed, so that the controls see the same calls (common random numbers) and are compared
replication by replication (paired intervals).
"""
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import common  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
BURST = os.path.join(common.ROOT, "examples", "burst.ini")

# The plant, from examples/burst.ini and the network's defaults (src/sim/net.c).
LAMBDA = 259.26       # originals at the core, calls/s (0.7 x 370.4)
COST_RETX = 0.5e-3    # s of core CPU per absorbed copy (server core.cost_retrans)
RTT = 0.01            # edge <-> core round trip on the trunk link (2 x 5 ms)
BUFFERS = (("short", 500), ("deep", 50000))
MEASURES = ("offered", "goodput", "retrans_ratio", "setup_delay_mean", "failed",
            "failed_rejected", "core_util")


def design():
    """The gains of both loops by the phase-margin rule of docs/protocols.md 7.3 (the form of
    the papers' stability guidelines that OSN implements: osn_ctl_pi_design()). Returns
    {loop: dict(numbers)}."""
    # RTD: plant e^{-s theta} / (mu s) from the copy rate r to the delay tau: a copy the cap lets
    # through adds its CPU time to the core's queue, so mu = 1 / cost_retrans. Dead time: the
    # trunk's round trip, the target delay itself (a 100 Trying sample reaches the edge only after
    # the wait it measures) and half a control interval. Crossover and margin: the fluid model's
    # defaults (1 rad/s, 45 degrees), with T_c = 0.1 s so that T_c << 1 / omega_c.
    mu, wc, pm, tc, tau0 = 1 / COST_RETX, 1.0, 45.0, 0.1, 0.2
    theta = RTT + tau0 + tc / 2
    phi = math.radians(pm) + wc * theta
    rtd = dict(mu=mu, omega_c=wc, pm=pm, interval=tc, target=tau0, theta=theta,
               phi=math.degrees(phi), kp=mu * wc * math.sin(phi), ki=mu * wc * wc * math.cos(phi))
    # RRRC: the ratio psi = copies / originals is static in the copy rate, psi = r / lambda, with
    # dead time theta = T_c (the core's window, then the edge's wait for its next boundary) + RTT.
    # The same rule on L(s) = (K_P + K_I / s) e^{-s theta} / lambda: |L(j omega_c)| = 1 and a phase
    # margin PM give K_P = lambda sin(phi_z), K_I = lambda omega_c cos(phi_z), phi_z = PM - 90 +
    # omega_c theta; PM = 90 - omega_c theta is the largest with K_P >= 0 (phi_z = 0: integral
    # action only). omega_c = 0.5 rad/s: two control intervals per radian.
    tc_r, wc_r = 1.0, 0.5
    theta_r = tc_r + RTT
    pm_r = 90 - math.degrees(wc_r * theta_r)
    rrrc = dict(lam=LAMBDA, omega_c=wc_r, pm=pm_r, interval=tc_r, target=0.05, theta=theta_r,
                phi=0.0, kp=0.0, ki=LAMBDA * wc_r)
    return {"rtd": rtd, "rrrc": rrrc}


def variants(g):
    """(name, --set list) of each control run."""
    rr, rt = g["rrrc"], g["rtd"]
    rrrc = ["control.kind=pi", "control.pi_measure=rrrc", f"control.pi_target={rr['target']}",
            f"control.pi_interval={rr['interval']}", f"control.kp={rr['kp']:.6g}",
            f"control.ki={rr['ki']:.6g}"]
    rtd = ["control.kind=pi", "control.pi_measure=rtd", f"control.pi_target={rt['target']}",
           f"control.pi_interval={rt['interval']}", f"control.kp={rt['kp']:.6g}",
           f"control.ki={rt['ki']:.6g}"]
    return [("none", ["control.kind=none"]),
            ("pi default (rrrc 50/100; INVITE cap)", ["control.kind=pi"]),
            ("rrrc designed; message cap", rrrc + ["control.pi_cap_noninvite=yes"]),
            ("rtd designed; INVITE cap", rtd),
            ("rtd designed; message cap", rtd + ["control.pi_cap_noninvite=yes"])]


def run(sets, buffer, reps):
    """The per-replication rows of one control on one buffer (seed 7, burst.ini's)."""
    _, rows = common.osn_reps("sim", BURST, sets + [f"server core.buffer={buffer}",
                                                    f"net.replications={reps}"])
    return rows


def runs(buffer, reps, names=None):
    g = design()
    out = {}
    for name, sets in variants(g):
        if names and name not in names:
            continue
        out[name] = run(sets, buffer, reps)
    offered = [[r["offered"] for r in rows] for rows in out.values()]
    if any(o != offered[0] for o in offered):
        sys.exit("the controls were offered different calls: no common random numbers")
    return out


def col(rows, m):
    return [r[m] if isinstance(r[m], float) else float("nan") for r in rows]


def paired_row(buf, a, b, ra, rb, m):
    """a - b on measure m, paired by replication, with Welch's interval as a note."""
    d, hw = common.paired(col(ra, m), col(rb, m))
    w, whw = common.welch(col(ra, m), col(rb, m))
    return (buf, f"{a} - {b}", m, len(ra), d, hw, w, whw)


PAIRS = [("pi default (rrrc 50/100; INVITE cap)", "none"),
         ("rrrc designed; message cap", "none"),
         ("rtd designed; message cap", "none"),
         ("rrrc designed; message cap", "pi default (rrrc 50/100; INVITE cap)"),
         ("rtd designed; message cap", "rtd designed; INVITE cap")]

PLOT = r"""
set terminal pngcairo size 1300,820 font ",10"
set output ARG2
set datafile separator ","
set multiplot layout 2,2 title "PI control of the retransmission rate after a 3 s burst (x3) at 70 % load, examples/burst.ini: mean of ".ARG3." replications (seed 7), 95 % t-intervals"
set grid y
set style fill solid 0.5 border -1
set boxwidth 0.6
set xtics rotate by -15 scale 0
set xrange [-0.6:4.6]
set key top left box opaque
set ylabel "goodput (calls/s answered before Timer B)"
set yrange [0:320]
set title "core buffer 500 messages (its wait stays below T1)"
plot ARG1 using 1:3:4:xtic(2) with boxerrorbars lc rgb "#1f77b4" title "goodput", \
     ARG1 using 1:11 with lines dt 2 lw 2 lc rgb "gray40" title "offered"
set title "core buffer 50 000 messages"
plot ARG1 using 1:7:8:xtic(2) with boxerrorbars lc rgb "#1f77b4" title "goodput", \
     ARG1 using 1:11 with lines dt 2 lw 2 lc rgb "gray40" title "offered"
set logscale y
set yrange [0.001:20]
set ylabel "copies the core absorbed / new requests (ratio)"
unset logscale y
set yrange [0:8]
set ylabel "failed calls/s (Timer B, 408, 503)"
set title "failed calls, buffer 500 (no copy reaches the core: the ratio is 0 for every control)"
plot ARG1 using 1:12:13:xtic(2) with boxerrorbars lc rgb "#9467bd" title "failed calls/s"
set logscale y
set yrange [0.001:20]
set ylabel "copies the core absorbed / new requests (ratio)"
set title "redundant-message ratio, buffer 50 000 (no bar: a ratio of 0)"
plot ARG1 using 1:($9 > 0.001 ? $9 : 0.001):10:xtic(2) with boxerrorbars lc rgb "#d62728" title "retransmission ratio", \
     0.05 with lines dt 2 lw 2 lc rgb "black" title "rrrc target 0.05"
unset multiplot
"""

SHORT = {"none": "none", "pi default (rrrc 50/100; INVITE cap)": "pi default",
         "rrrc designed; message cap": "rrrc designed; msg cap",
         "rtd designed; INVITE cap": "rtd designed; INVITE cap",
         "rtd designed; message cap": "rtd designed; msg cap"}


def plot(reps):
    common.gnuplot(PLOT, os.path.join(HERE, "figure.csv"), os.path.join(HERE, "figure.png"),
                   str(reps))


def gains_text(g):
    rt, rr = g["rtd"], g["rrrc"]
    return (f"rtd : mu = 1/cost_retrans = {rt['mu']:.0f}/s, omega_c = {rt['omega_c']} rad/s, "
            f"PM = {rt['pm']} deg, theta = RTT + tau0 + T_c/2 = {rt['theta']:.3f} s, "
            f"phi = {rt['phi']:.2f} deg -> K_P = {rt['kp']:.1f}, K_I = {rt['ki']:.1f} "
            f"(T_c = {rt['interval']} s, tau0 = {rt['target']} s)\n"
            f"rrrc: lambda = {rr['lam']}/s, omega_c = {rr['omega_c']} rad/s, theta = T_c + RTT = "
            f"{rr['theta']:.2f} s, PM = 90 - omega_c theta = {rr['pm']:.1f} deg, phi_z = 0 -> "
            f"K_P = {rr['kp']:.1f}, K_I = {rr['ki']:.1f} (T_c = {rr['interval']} s, psi0 = "
            f"{rr['target']})\n")


def check():
    ok = True
    g = design()
    rt, rr = g["rtd"], g["rrrc"]
    ok &= common.verdict(abs(rt["kp"] - 1730.2) < 0.1 and abs(rt["ki"] - 1003.1) < 0.1 and
                         rr["kp"] == 0 and abs(rr["ki"] - 129.6) < 0.1,
                         f"gains by the phase-margin rule: rtd K_P {rt['kp']:.1f}, K_I "
                         f"{rt['ki']:.1f}; rrrc K_P {rr['kp']:.1f}, K_I {rr['ki']:.1f}")
    reps = 3
    deep = runs(50000, reps, ("none", "pi default (rrrc 50/100; INVITE cap)",
                              "rrrc designed; message cap"))
    d, dn, dd = (deep["rrrc designed; message cap"], deep["none"],
                 deep["pi default (rrrc 50/100; INVITE cap)"])
    psi, psi_hw = common.mean_hw(col(d, "retrans_ratio"))
    fail = max(col(d, "failed"))
    ok &= common.verdict(psi + psi_hw < 0.05 and fail == 0,
                         f"deep, rrrc designed, message cap: ratio {psi:.3f} +- {psi_hw:.3f} "
                         f"below its target 0.05 (claim 1), no call failed or rejected (claim 2)")
    g1, h1 = common.paired(col(d, "goodput"), col(dn, "goodput"))
    g2, h2 = common.paired(col(d, "goodput"), col(dd, "goodput"))
    ok &= common.verdict(g1 - h1 > 0 and g2 - h2 > 0,
                         f"deep: goodput designed - none {g1:.1f} +- {h1:.1f}, designed - pi "
                         f"default {g2:.1f} +- {h2:.1f} calls/s (paired, {reps} replications)")
    gp, gh = common.mean_hw(col(d, "goodput"))
    off = common.mean_hw(col(d, "offered"))[0]
    ok &= common.verdict(gp + gh < 0.9 * off,
                         f"deep: but the core stays saturated: goodput {gp:.1f} +- {gh:.1f} of "
                         f"{off:.1f} offered (its own INVITE copies toward the UAS)")
    short = runs(500, reps, ("none", "rtd designed; message cap"))
    sn, st = short["none"], short["rtd designed; message cap"]
    gn, ghn = common.mean_hw(col(sn, "goodput"))
    f1, fh = common.paired(col(st, "failed"), col(sn, "failed"))
    ok &= common.verdict(abs(gn - off) < 0.03 * off and f1 - fh > 0,
                         f"short: none recovers alone (goodput {gn:.1f} +- {ghn:.1f}); rtd "
                         f"designed fails calls: failed rtd - none {f1:.2f} +- {fh:.2f}/s "
                         f"(paired)")
    return ok


def main():
    if sys.argv[1:] == ["--check"]:
        sys.exit(0 if check() else 1)
    reps = int(os.environ.get("STUDY08_REPS", "6"))
    if sys.argv[1:] == ["--plot"]:
        plot(reps)
        return
    g = design()
    gt = gains_text(g)
    print(gt)
    rows, prows, fig = [], [], {}
    for buf, b in BUFFERS:
        res = runs(b, reps)
        for name, rr in res.items():
            rows.append((buf, name, len(rr)) + tuple(
                v for m in MEASURES for v in common.mean_hw(col(rr, m))))
            fig.setdefault(name, {})[buf] = (common.mean_hw(col(rr, "goodput")),
                                             common.mean_hw(col(rr, "retrans_ratio")),
                                             common.mean_hw(col(rr, "offered"))[0],
                                             common.mean_hw(col(rr, "failed")))
        for a, bb in PAIRS:
            for m in ("goodput", "retrans_ratio", "setup_delay_mean", "failed"):
                prows.append(paired_row(buf, a, bb, res[a], res[bb], m))
    h = ["buffer", "control", "reps"] + [x for m in MEASURES for x in (m, m + "_hw")]
    common.write_csv(os.path.join(HERE, "runs.csv"), rows, h)
    hp = ["buffer", "pair", "measure", "reps", "paired_diff", "paired_hw", "welch_diff",
          "welch_hw"]
    common.write_csv(os.path.join(HERE, "paired.csv"), prows, hp)
    frows = []
    for i, (name, d) in enumerate(fig.items()):
        (gs, gsh), (rs, rsh), off, (fs, fsh) = d["short"]
        (gd, gdh), (rd, rdh), _, _ = d["deep"]
        frows.append((i, SHORT[name], gs, gsh, rs, rsh, gd, gdh, rd, rdh, off, fs, fsh))
    common.write_csv(os.path.join(HERE, "figure.csv"), frows,
                     ["i", "control", "goodput_short", "hw", "ratio_short", "hw",
                      "goodput_deep", "hw", "ratio_deep", "hw", "offered", "failed_short", "hw"])
    fmt = {x: "{:.3f}" for x in h + hp}
    fmt.update({"buffer": "{}", "control": "{}", "reps": "{}", "pair": "{}", "measure": "{}"})
    txt = gt + "\n" + common.table(rows, h, fmt) + "\n" + common.table(prows, hp, fmt)
    open(os.path.join(HERE, "table.txt"), "w").write(txt)
    print(txt)
    plot(reps)


if __name__ == "__main__":
    main()

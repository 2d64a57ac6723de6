#!/usr/bin/env python3
"""Study 5: PRSM against conventional SIP over the buffer size, fluid model and simulator.

  study.py            the full study: table.csv, table.txt, figure.png here (a few minutes)
  study.py --check    the reduced verdict of make check (seconds): exit 1 if the claim fails
  study.py --plot     figure.png again from table.csv, without rerunning (a second)

The claim (Yavas, Hokelek, Gunsel, IJCS 2017): with PRSM "the number of failed call attempts is
close to 0 and the mean response delay is kept constant around 175 ms ... when the buffer size is
higher than 1K while both metrics are significantly higher for the conventional SIP".
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import common  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
FLUID = os.path.join(HERE, "fluid.ini")
SIM = os.path.join(HERE, "sim.ini")


def sim_ini(tmp, buffer):
    """A copy of sim.ini with the core's buffer set (its section name has a space)."""
    path = os.path.join(tmp, f"sim_{buffer}.ini")
    text = open(SIM).read()
    assert "\nbuffer = 1000\n" in text
    open(path, "w").write(text.replace("\nbuffer = 1000\n", f"\nbuffer = {buffer}\n"))
    return path


def fluid_point(buffer, algo, seeds, horizon):
    """Fluid failure ratio and mean response delay, averaged over the MMPP paths of seeds."""
    fail = delay = 0.0
    for s in seeds:
        r = common.osn("fluid", FLUID, [f"server.buffer={buffer}", f"control.kind={algo}",
                                        f"profile.seed={s}", f"fluid.horizon={horizon}"])
        fail += r["failed"] / r["offered"]
        delay += r["mean_delay"]
    return fail / len(seeds), delay / len(seeds)


def sim_point(tmp, buffer, kind, reps, time):
    """Simulated failure ratio and INVITE -> 180 delay (the core hop's 100 Trying), with the
    95 % half-widths over the replications."""
    r = common.osn("sim", sim_ini(tmp, buffer), [f"control.kind={kind}", f"net.time={time}",
                                                 f"net.replications={reps}"])
    off = r["offered"]
    return (r["failed"] / off, (r["failed_ci"] or 0) / off, r["setup_delay_mean"],
            r["setup_delay_mean_ci"] or 0)


def collect(buffers, seeds, reps, horizon):
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for b in buffers:
            row = [b]
            for algo, kind in (("prsm", "prsm"), ("none", "none")):
                row += fluid_point(b, algo, seeds, horizon)
                row += sim_point(tmp, b, kind, reps, horizon)
            rows.append(tuple(row))
    return rows


HEADER = ["buffer",
          "prsm_fluid_failed", "prsm_fluid_delay", "prsm_sim_failed", "prsm_sim_failed_hw",
          "prsm_sim_delay", "prsm_sim_delay_hw",
          "conv_fluid_failed", "conv_fluid_delay", "conv_sim_failed", "conv_sim_failed_hw",
          "conv_sim_delay", "conv_sim_delay_hw"]

PLOT = r"""
set terminal pngcairo size 1200,460 font ",10"
set output ARG2
set datafile separator ","
set multiplot layout 1,2 title "PRSM vs conventional SIP, MMPP-2 input (mean 60 % load, bursts 150 %): fluid lines, simulation points (5 replications, 95 % CI)"
set logscale x
set xrange [30:300000]
set xlabel "buffer size (messages)"
set grid
set key top left box opaque
set title "failed call attempts"
set ylabel "failed / offered calls (%)"
set yrange [0:*]
plot ARG1 using 1:($2*100) with lines lw 2 lc 1 title "PRSM, fluid", \
     ARG1 using 1:($4*100):($5*100) with yerrorbars pt 7 lc 1 title "PRSM, simulation", \
     ARG1 using 1:($8*100) with lines lw 2 lc 2 title "conventional, fluid", \
     ARG1 using 1:($10*100):($11*100) with yerrorbars pt 5 lc 2 title "conventional, simulation"
# Two measures, each named: the fluid model's response delay counts every answer (also one
# after Timer B), the simulator's INVITE -> 180 only the calls whose 180 came back (README).
set title "mean delay: fluid, INVITE -> server's 100 Trying (every answer);\nsimulation, INVITE -> 180 at the UAC (answered calls only)"
set ylabel "seconds"
set logscale y
set yrange [0.1:1e5]   # room above the data for the legend
plot ARG1 using 1:3 with lines lw 2 lc 1 title "PRSM, fluid: INVITE -> 100", \
     ARG1 using 1:6:7 with yerrorbars pt 7 lc 1 title "PRSM, simulation: INVITE -> 180", \
     ARG1 using 1:9 with lines lw 2 lc 2 title "conventional, fluid: INVITE -> 100", \
     ARG1 using 1:12:13 with yerrorbars pt 5 lc 2 title "conventional, simulation: INVITE -> 180", \
     0.175 with lines dt 2 lc rgb "gray" title "175 ms (the paper)"
unset multiplot
"""


def check():
    """The claim above 1K on two buffers, 2K and 20K: PRSM's failures ~0 and its delay flat and
    small, conventional SIP's both well above, each with the simulator's 95 % intervals."""
    rows = collect([2000, 20000], seeds=[1, 2], reps=4, horizon=300)
    ok = True
    for r in rows:
        b, pf, pd, ps, psh, psd, psdh, cf, cd, cs, csh, csd, csdh = r
        ok &= common.verdict(pf < 0.005 and ps + psh < 0.005,
                             f"B={b}: PRSM failed fluid {pf:.4%}, sim {ps:.4%} +- {psh:.4%} (< 0.5 %)")
        ok &= common.verdict(cf > 0.05 and cs - csh > 0.05,
                             f"B={b}: conventional failed fluid {cf:.2%}, sim {cs:.2%} +- {csh:.2%} (> 5 %)")
        ok &= common.verdict(pd < 0.5 and psd + psdh < 0.5,
                             f"B={b}: PRSM delay fluid {pd:.3f} s, sim {psd:.3f} +- {psdh:.3f} s (< 0.5 s)")
        ok &= common.verdict(cd > 5 * pd and csd - csdh > 5 * (psd + psdh),
                             f"B={b}: conventional delay fluid {cd:.2f} s, sim {csd:.2f} +- "
                             f"{csdh:.2f} s (> 5 x PRSM's)")
    (b1, _, pd1, _, _, s1, h1, *_), (b2, _, pd2, _, _, s2, h2, *_) = rows
    ok &= common.verdict(abs(pd2 - pd1) < 0.01 * pd1 and abs(s2 - s1) <= h1 + h2,
                         f"PRSM delay flat from B={b1} to {b2}: fluid {pd1:.4f} -> {pd2:.4f} s, "
                         f"sim {s1:.3f} -> {s2:.3f} s (within the intervals)")
    return ok


def main():
    if sys.argv[1:] == ["--check"]:
        sys.exit(0 if check() else 1)
    if sys.argv[1:] == ["--plot"]:
        common.gnuplot(PLOT, os.path.join(HERE, "table.csv"), os.path.join(HERE, "figure.png"))
        return
    buffers = [50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000, 200000]
    rows = collect(buffers, seeds=[1, 2, 3, 4, 5], reps=5, horizon=600)
    common.write_csv(os.path.join(HERE, "table.csv"), rows, HEADER)
    fmt = {h: "{:.4f}" for h in HEADER}
    fmt["buffer"] = "{}"
    for h in HEADER:
        if "failed" in h:
            fmt[h] = "{:.2%}"
    txt = common.table(rows, HEADER, fmt)
    open(os.path.join(HERE, "table.txt"), "w").write(txt)
    print(txt)
    common.gnuplot(PLOT, os.path.join(HERE, "table.csv"), os.path.join(HERE, "figure.png"))


if __name__ == "__main__":
    main()

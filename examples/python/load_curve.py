#!/usr/bin/env python3
"""A load curve from Python, one library call per curve (no process per point).

The two-loop M|M|1 model <L,H>|<H,R> of the README's tour (mu = 1, R = 20, half the offered
calls accepted in overload), for three threshold pairs, offered load 0.5 to 2: the mean return
time T_ret from overload to normal mode (log scale), and the throughput against the offered
load with the lines goodput = offered and capacity = mu.

    python3 examples/python/load_curve.py [OUT.png]       # default load_curve.png

Needs the installed module (make install) and Debian's python3-matplotlib.
"""

import sys

import matplotlib

matplotlib.use("Agg")  # a file, no display needed
import matplotlib.pyplot as plt
from matplotlib.ticker import FormatStrFormatter, LogLocator

import osn

out = sys.argv[1] if len(sys.argv) > 1 else "load_curve.png"
loads = [round(0.5 + 0.05 * i, 2) for i in range(31)]
pairs = [(5, 10), (10, 15), (15, 18)]
colors = plt.get_cmap("viridis")([0.0, 0.45, 0.85])

fig, (ax_ret, ax_thr) = plt.subplots(1, 2, figsize=(11, 4.2), constrained_layout=True)
for (L, H), color in zip(pairs, colors):
    curve = osn.solve([{"rate": x} for x in loads], overload_accept=0.5, L=L, H=H, R=20)
    label = f"L = {L}, H = {H}"
    ax_ret.semilogy(loads, [p["T_ret"] for p in curve], "o-", ms=3, color=color, label=label)
    ax_thr.plot(loads, [p["throughput"] for p in curve], "o-", ms=3, color=color, label=label)
ax_thr.plot(loads, loads, ":", color="grey", label="goodput = offered")
ax_thr.axhline(1.0, ls="--", color="black", lw=1, label="capacity (mu = 1)")

ax_ret.set_xlabel("offered load lambda / mu")
ax_ret.set_ylabel("mean return time T_ret (s, log scale)")
ax_ret.set_title("Time from overload onset back to normal mode")
# The curves span about a decade and a half: label 1, 2, 3 and 5 of each, not only the powers of ten
# (which left a single labelled tick, 10^1).
ax_ret.yaxis.set_major_locator(LogLocator(base=10, subs=(1, 2, 3, 5)))
ax_ret.yaxis.set_major_formatter(FormatStrFormatter("%g"))
ax_ret.yaxis.set_minor_formatter(FormatStrFormatter(""))
ax_ret.grid(True, which="both", alpha=0.3)
ax_ret.legend(title="thresholds, R = 20")
ax_thr.set_xlabel("offered load lambda / mu")
ax_thr.set_ylabel("throughput (calls/s)")
ax_thr.set_title("Throughput against offered load")
ax_thr.set_ylim(0, 2.05)
ax_thr.grid(True, alpha=0.3)
ax_thr.legend(loc="upper left")
fig.suptitle(f"two-loop M|M|1, lambda' = lambda/2, policy I (osn {osn.version()})")
fig.savefig(out, dpi=110)
print(f"load_curve.py: {len(pairs)} curves of {len(loads)} points into {out}")

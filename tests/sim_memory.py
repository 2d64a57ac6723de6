#!/usr/bin/env python3
"""Memory per live call of the network simulator against the figure docs/performance.md states
(issue 32: "memory per live call and per element, measured and stated in the docs").

Two runs of a small fan-in (8 edges) at one call rate and two mean hold times, long enough for
both to reach their steady state: the calls held at the end are, by Little's law, the rate times
the mean hold, lam * h * (1 - exp(-T / h)) for Poisson arrivals from time 0 and exponential holds
(T the simulated time). Everything else a run holds at its peak (the transactions of the calls
being set up and torn down, the timer rings, the elements) depends on the rate alone and is the
same in both, so the difference of their peak RSS (os.wait4's ru_maxrss, the kernel's count)
over the difference of the calls held is what one more live call costs: a slope, not one ratio.
The pools hand out 2 MB blocks of 8,192 calls, so a peak is known to about a block: the two
runs differ by about 48,000 calls, six blocks, and the figure is asserted within MARGIN (20%:
five runs under load gave 244 to 251 bytes; a block more or less in one peak is 17%, and the
calls numbered per source (docs/scale.md, slice 2) drew other holds whose longer run peaked
one 2 MiB block higher, 85.9 -> 87.9 MiB: 289 to 293 bytes in four runs).

Usage: sim_memory.py OSN ROOT [MARGIN]     exit 0 when the slope is within MARGIN of the
docs' figure (the line "Memory per live call: **N bytes**" of docs/performance.md).
"""
import math
import os
import re
import subprocess
import sys

RATE = 800                 # calls/s, half the core's capacity with the costs below
HOLDS = (4.0, 64.0)        # s: 3,200 and 51,200 calls held
T = 256.0                  # s simulated: 4 times the longer hold (98% of its steady state)
SETS = ["net.edges=8", f"source.rate={RATE}", "control.kind=none", "net.replications=1",
        "net.warmup=251", "net.time=5",
        # 0.2 + 0.1 + 0.1 + 3 x 0.1 ms: 1,430 calls/s at the core
        "server core.cost_invite=0.0002", "server core.cost_ack=0.0001",
        "server core.cost_bye=0.0001", "server core.cost_response=0.0001"]


def held(h):
    return RATE * h * (1 - math.exp(-T / h))


def peak_rss(osn, ini, hold):
    args = [osn, "sim", ini, "-q", "--threads", "1"]
    for s in SETS + [f"source.hold={hold}"]:
        args += ["--set", s]
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    err = p.stderr.read().decode()
    p.stderr.close()
    if status != 0:
        sys.exit(f"FAIL osn sim (hold {hold}): status {status}: {err.strip()}")
    return ru.ru_maxrss * 1024  # KiB on Linux


def main():
    osn, root = sys.argv[1], sys.argv[2]
    margin = float(sys.argv[3]) if len(sys.argv) > 3 else 0.20
    doc = open(os.path.join(root, "docs", "performance.md")).read()
    m = re.search(r"Memory per live call: \*\*([\d,]+) bytes\*\*", doc)
    if not m:
        sys.exit("FAIL docs/performance.md states no 'Memory per live call: **N bytes**'")
    stated = int(m.group(1).replace(",", ""))
    ini = os.path.join(root, "examples", "fanin.ini")
    rss = [peak_rss(osn, ini, h) for h in HOLDS]
    calls = [held(h) for h in HOLDS]
    slope = (rss[1] - rss[0]) / (calls[1] - calls[0])
    print(f"     peak RSS {rss[0] / 2**20:.1f} MiB with {calls[0]:.0f} calls held, "
          f"{rss[1] / 2**20:.1f} MiB with {calls[1]:.0f}: {slope:.0f} bytes per live call "
          f"(docs: {stated}, margin {100 * margin:.0f}%)")
    ok = abs(slope - stated) <= margin * stated
    print(("ok   " if ok else "FAIL ") + f"bytes per live call {slope:.0f} within "
          f"{100 * margin:.0f}% of {stated}")
    print(f"{0 if ok else 1} failed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

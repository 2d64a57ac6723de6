#!/usr/bin/env python3
"""Cost per solved point from Python: the module over libosn (one call, in the process) against
the way without it, one `osn solve --json` process per point, in the same run.

    OSN_LIBRARY=build/libosn.so PYTHONPATH=python python3 bench/python_module.py build/osn [N]

The two-loop M|M|1 model of the README's tour (L = 10, H = 15, R = 20), N offered rates
(default 400) through the module, N/8 through processes; both answers must agree. It measures;
it never fails on time.
"""

import json
import subprocess
import sys
import time

import osn

exe = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 400
pts = [{"rate": round(0.5 + 2.5 * i / n, 6)} for i in range(n)]
common = {"L": 10, "H": 15, "R": 20}

t = time.perf_counter()
mod = osn.solve(pts, **common)
t_mod = (time.perf_counter() - t) / n

m = max(1, n // 8)
t = time.perf_counter()
for p, r in zip(pts[:m], mod):
    sets = [f"arrivals.rate={p['rate']!r}"] + [f"thresholds.{k}={v}" for k, v in common.items()]
    cmd = [exe, "solve", "--json", "-"] + [a for s in sets for a in ("--set", s)]
    doc = json.loads(subprocess.run(cmd, capture_output=True, check=True).stdout)
    assert doc["T_ret"] == r["T_ret"], (p, doc["T_ret"], r["T_ret"])
t_proc = (time.perf_counter() - t) / m

print(
    f"python_module points={n} module_ms_per_point={t_mod * 1e3:.3f} "
    f"process_ms_per_point={t_proc * 1e3:.2f} (osn solve --json, {m} points) "
    f"ratio={t_proc / t_mod:.0f}"
)

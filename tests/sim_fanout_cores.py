#!/usr/bin/env python3
"""A fan-out of 8 cores of unequal capacity (issue 32: the number of cores sized at run time),
by `osn sim --json` on a scenario written here: one edge, core k (k = 1..8) of capacity 10 k
calls/s (every cost of [server core] divided by k; 360 calls/s in all), edge weights 1..8.

1. Below capacity (180 calls/s, half of 360), no control: smooth weighted round-robin offers
   core k exactly w_k / sum(w) = k / 36 of the new INVITEs over every 36, and nothing throttles
   them, so core k's share of the INVITEs processed is k / 36 (within 0.002, the window's edges),
   every core is busy half its time (rate k / 36 x 180 = 5 k calls/s against its capacity 10 k:
   utilisation 0.5, within 0.05: the costs are constant and the shares exact), and every call
   offered is good (goodput = offered within 2%).
2. At 1.5 x the capacity (540 calls/s) under loss control: goodput within 15% of the sum of the
   capacities, 360 calls/s, and no core processes more INVITEs than its capacity allows.
3. Bad input: exit 2 naming the key: net.cores = 64 (past OSN_NET_MAX_CORES, 63), a [server
   core9] of 8 cores, net.cores = 9 without [server core9].

Usage: sim_fanout_cores.py OSN      exit 0 when every check holds.
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sim_json import FAILS, check, refused, sim  # noqa: E402

K = 8
W = list(range(1, K + 1))
BASE = {"invite": 0.04, "retrans": 0.02, "response": 0.01, "ack": 0.01, "bye": 0.02,
        "reject": 0.01}  # 1 / (0.04 + 0.01 + 0.02 + 3 x 0.01) = 10 calls/s


def scenario(path):
    light = "\n".join(f"cost_{k} = {v / 100:.6g}" for k, v in BASE.items())
    lines = ["[net]", "topology = fanout", "edges = 1", f"cores = {K}", "time = 20",
             "warmup = 35", "replications = 1",
             "[source]", "rate = 180", "hold = 1",
             "[server edge]", "next_hop_weights = " + ", ".join(map(str, W)), light,
             "buffer = 5000",
             "[server uas]", light, "buffer = 5000",
             "[link access]", "delay = 0.001", "[link trunk]", "delay = 0.001", "[link uas]",
             "delay = 0.001", "[control]", "kind = none"]
    for k in range(1, K + 1):
        lines.append("[server core]" if k == 1 else f"[server core{k}]")
        lines += [f"cost_{n} = {v / k:.9g}" for n, v in BASE.items()]
        lines.append("buffer = 20000")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def names():
    return ["core"] + [f"core{k}" for k in range(2, K + 1)]


def main():
    osn = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        ini = os.path.join(tmp, "fanout8.ini")
        scenario(ini)
        d = sim(osn, ini, tmp)
        if d:
            cores = [d["by_name"].get(n) for n in names()]
            check(all(cores), f"elements {names()} in the result")
            if all(cores):
                inv = [c["invite"] for c in cores]
                tot = sum(inv)
                for k, (c, n) in enumerate(zip(cores, inv), 1):
                    sh, want = n / tot, W[k - 1] / sum(W)
                    check(abs(sh - want) <= 0.002,
                          f"core {k}: share of INVITEs {sh:.4f}, weight's {want:.4f}")
                    check(abs(c["capacity"] - 10 * k) <= 1e-6 * k,
                          f"core {k}: capacity {c['capacity']:.3f} = {10 * k}")
                    check(abs(c["util"] - 0.5) <= 0.05, f"core {k}: utilisation {c['util']:.3f}"
                          " = 0.5 (5 k calls/s of 10 k)")
                g, o = d["goodput"], d["offered"]
                check(abs(g - o) <= 0.02 * o, f"below capacity: goodput {g:.1f} = offered {o:.1f}")
        d = sim(osn, ini, tmp, "source.rate=540", "control.kind=loss", "control.target=0.95")
        if d:
            cores = [d["by_name"][n] for n in names()]
            cap = sum(c["capacity"] for c in cores)
            g = d["goodput"]
            print(f"     overload: goodput {g:.1f} of capacity {cap:.0f} calls/s "
                  f"({100 * (g / cap - 1):+.1f}%)")
            check(abs(g - cap) <= 0.15 * cap, f"overload: goodput {g:.1f} within 15% of {cap:.0f}")
            for c in cores:
                check(c["invite"] <= 1.02 * c["capacity"],
                      f"overload: {c['name']} {c['invite']:.1f} INVITEs/s <= capacity "
                      f"{c['capacity']:.0f}")
        for sets, key in ((["net.cores=64"], "net.cores"),
                          (["server core9.buffer=10"], "server core9.buffer"),
                          (["net.cores=9"], "net.cores")):
            refused(osn, ini, sets, key)
    print(f"{len(FAILS)} failed")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())

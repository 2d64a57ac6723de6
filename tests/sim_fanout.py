#!/usr/bin/env python3
"""The simulator's fan-out and mesh (issue 33, topology = fanout), by `osn sim --json`:

1. examples/fanout.ini (one edge, cores of 200 and 100 calls/s, loss, 450 calls/s offered) and
   examples/mesh.ini (two edges): goodput within 15% of the sum of the cores' capacities (300
   calls/s); with equal weights the slower core's share of the INVITEs follows its feedback
   (about its capacity's share, 1/3), not its weight (1/2): in [0.28, 0.40]; no core processes
   more INVITEs than its capacity allows.
2. below capacity (150 calls/s), nothing throttled, weights 2, 1: the INVITEs split 2:1 (smooth
   weighted round-robin is exact over every 3 INVITEs: 1/3 +- 0.01 to core2).
3. bad input: exit 2 naming the key (a weight count that is not the core count, 5 cores).

Usage: sim_fanout.py OSN ROOT      exit 0 when every check holds.
"""
import json
import os
import subprocess
import sys
import tempfile

FAILS = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        FAILS.append(what)


def sim(osn, ini, tmp, *sets):
    out = os.path.join(tmp, "out.json")
    args = [osn, "sim", ini, "-q", "--json", out]
    for s in sets:
        args += ["--set", s]
    r = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                       timeout=120)
    if r.returncode != 0:
        check(False, f"osn sim {ini} {sets}: exit {r.returncode} {r.stderr.strip()}")
        return None
    d = json.load(open(out))
    d["by_name"] = {e["name"]: e for e in d["elements"]}
    return d


def share(d):
    c1, c2 = d["by_name"]["core"]["invite"], d["by_name"]["core2"]["invite"]
    return c2 / (c1 + c2)


def main():
    osn, root = sys.argv[1], sys.argv[2]
    ex = os.path.join(root, "examples")
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("fanout.ini", "mesh.ini"):
            d = sim(osn, os.path.join(ex, name), tmp)
            if not d:
                continue
            cores = [d["by_name"][n] for n in ("core", "core2")]
            cap = sum(c["capacity"] for c in cores)
            g = d["goodput"]
            sh = share(d)
            print(f"     {name}: goodput {g:.1f} of capacity {cap:.0f} calls/s "
                  f"({100 * (g / cap - 1):+.1f}%), core2's share of INVITEs {sh:.3f} "
                  f"(weight 0.5, capacity 0.333)")
            check(abs(g - cap) <= 0.15 * cap, f"{name}: goodput {g:.1f} within 15% of {cap:.0f}")
            check(0.28 <= sh <= 0.40, f"{name}: core2's share {sh:.3f} follows its feedback, "
                  "not its weight")
            for c in cores:
                check(c["invite"] <= 1.02 * c["capacity"],
                      f"{name}: {c['name']} {c['invite']:.1f} INVITEs/s <= capacity "
                      f"{c['capacity']:.0f}")
        d = sim(osn, os.path.join(ex, "fanout.ini"), tmp, "source.rate=150",
                "server edge.next_hop_weights=2, 1", "net.replications=1")
        if d:
            check(abs(share(d) - 1 / 3) <= 0.01,
                  f"150 calls/s, weights 2, 1: core2's share {share(d):.4f}, 1/3 by weight")
        for sets, key in ((["server edge.next_hop_weights=1"], "server edge.next_hop_weights"),
                          (["net.cores=5"], "net.cores")):
            args = [osn, "sim", os.path.join(ex, "fanout.ini"), "-q"]
            for s in sets:
                args += ["--set", s]
            r = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True, timeout=60)
            check(r.returncode == 2 and key in r.stderr,
                  f"{sets}: exit {r.returncode}, {r.stderr.strip()!r}")
    print(f"{len(FAILS)} failed")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())

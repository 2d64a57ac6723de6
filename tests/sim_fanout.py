#!/usr/bin/env python3
"""The simulator's fan-out and mesh (issue 33, topology = fanout), by `osn sim --json`:

1. examples/fanout.ini (one edge, cores of 200 and 100 calls/s, loss, 450 calls/s offered) and
   examples/mesh.ini (two edges): goodput within 15% of the sum of the cores' capacities (300
   calls/s); with equal weights the slower core's share of the INVITEs follows its feedback
   (about its capacity's share, 1/3), not its weight (1/2): in [0.28, 0.40]; no core processes
   more INVITEs than its capacity allows.
2. below capacity (150 calls/s), nothing throttled, weights 2, 1: the INVITEs split 2:1 (smooth
   weighted round-robin is exact over every 3 INVITEs: 1/3 +- 0.01 to core2).
3. bad input: exit 2 naming the key (a weight count that is not the core count, 64 cores, 3
   cores with no [server core3], a [server core3] of a fanout of 2, an outage that starts at a
   negative time).
4. one of two cores down for part of the run: examples/fanout.ini at 150 calls/s (core alone
   can carry them: 200 calls/s) with core2 cut off the network from 30 s ([server core2]
   outage_start), T1 50 ms (Timer B 3.2 s). The edge's first timeouts toward core2, at about
   33.2 s, mark it down for down_time = 30 s (and fail those INVITEs over to core): while it is
   down (window 40..60 s) the edge sends core2 no INVITE at all (invites_in 0, against 75/s
   without the outage), core takes every call, and goodput is the offered load within 5% (the
   other core's capacity is not the limit). With the outage over at 45 s, once the mark has
   expired (about 66 s) core2 is offered its weight's share again: 1/2 in the window 75..95 s.

Usage: sim_fanout.py OSN ROOT      exit 0 when every check holds.
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sim_json import FAILS, check, refused, sim  # noqa: E402


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
        down = ["server core2.outage_start=30"]
        for what, sets, lo, hi in (
                ("no outage, window 40..60 s", ["net.warmup=40", "net.time=20"], 0.48, 0.52),
                ("core2 cut off from 30 s, window 40..60 s",
                 down + ["server core2.outage_end=inf", "net.warmup=40", "net.time=20"], 0, 0),
                ("core2 cut off 30..45 s, window 75..95 s",
                 down + ["server core2.outage_end=45", "net.warmup=75", "net.time=20"],
                 0.48, 0.52)):
            base = ["source.rate=150", "net.replications=1", "sip.t1=0.05"]
            d = sim(osn, os.path.join(ex, "fanout.ini"), tmp, *(base + sets))
            if not d:
                continue
            c1, c2 = d["by_name"]["core"]["invites_in"], d["by_name"]["core2"]["invites_in"]
            sh = c2 / (c1 + c2)
            g = d["goodput"]
            print(f"     {what}: INVITEs sent to core {c1:.1f}/s, to core2 {c2:.1f}/s "
                  f"(share {sh:.3f}), goodput {g:.1f} calls/s")
            check(lo <= sh <= hi, f"{what}: core2's share of INVITEs {sh:.3f} in [{lo}, {hi}]")
            check(abs(g - 150) <= 0.05 * 150, f"{what}: goodput {g:.1f} within 5% of 150")
        for sets, key in ((["server edge.next_hop_weights=1"], "server edge.next_hop_weights"),
                          (["net.cores=64"], "net.cores"),
                          (["net.cores=3"], "net.cores"),
                          (["server core3.buffer=10"], "server core3.buffer"),
                          (["server core2.outage_start=-1"], "server core2.outage_start")):
            refused(osn, os.path.join(ex, "fanout.ini"), sets, key)
    print(f"{len(FAILS)} failed")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())

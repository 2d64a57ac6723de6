#!/usr/bin/env python3
"""The ratios of bench/node_cpu.sh, pair by pair over all the pairs of a run.

    node_pairs.py RESULTS LIMITS HZ

RESULTS has one line per run: "PAIR PROXY CALLS_OK USER_TICKS SYS_TICKS DGRAMS_IN DGRAMS_OUT"
(PROXY osn or kamailio; the datagram counts are the node's, "-" for Kamailio). LIMITS has one
line per pair: "PAIR DATAGRAMS_PER_CPU_S" (bench/udp_limit.c, measured after that pair). HZ is
the clock ticks per second of the tick counts.

For every pair that has both runs, the ratio osn/kamailio of CPU per completed call is taken in
user time, in kernel time and in both; each is printed as its median and range over the pairs,
so that no single run (the last, say) decides it. The node's datagrams moved per CPU-second,
(read + sent) / 2, over the UDP limit of the same pair, likewise. A pair missing a run, or a
proxy with no CPU counted, gives no ratio rather than a wrong one.
"""
import statistics
import sys


def span(v):
    return "%.3f [%.3f, %.3f] over %d pair%s" % (
        statistics.median(v), min(v), max(v), len(v), "" if len(v) == 1 else "s")


def main(argv):
    if len(argv) != 4:
        print("usage: node_pairs.py RESULTS LIMITS HZ", file=sys.stderr)
        return 2
    hz = float(argv[3])
    runs, lim = {}, {}
    for n, line in enumerate(open(argv[1]), 1):
        f = line.split()
        if not f:
            continue
        if len(f) < 5 or f[1] not in ("osn", "kamailio") or not all(x.isdigit() for x in f[2:5]):
            print("%s:%d: not 'PAIR PROXY OK USER SYS [IN OUT]'" % (argv[1], n), file=sys.stderr)
            return 2
        runs[(f[0], f[1])] = [int(x) for x in f[2:5]] + [
            int(x) if x.isdigit() else None for x in (f[5:7] + ["-", "-"])[:2]]
    for line in open(argv[2]):
        f = line.split()
        if len(f) == 2 and f[1].isdigit():
            lim[f[0]] = int(f[1])
    ru, rs, rt, frac = [], [], [], []
    for pair in sorted({p for p, _ in runs}, key=lambda p: (len(p), p)):
        o, k = runs.get((pair, "osn")), runs.get((pair, "kamailio"))
        if o and o[0] > 0 and o[1] + o[2] > 0 and o[3] is not None and o[4] is not None \
                and lim.get(pair, 0) > 0:
            frac.append((o[3] + o[4]) / 2 / ((o[1] + o[2]) / hz) / lim[pair])
        if not (o and k) or o[0] == 0 or k[0] == 0:
            continue
        (oo, ou, os_), (ko, ku, ks) = o[:3], k[:3]
        if ku > 0:
            ru.append((ou / oo) / (ku / ko))
        if ks > 0:
            rs.append((os_ / oo) / (ks / ko))
        if ku + ks > 0:
            rt.append(((ou + os_) / oo) / ((ku + ks) / ko))
    if ru:
        print("osn/kamailio user CPU per call:   " + span(ru) + " (goal <= 0.3)")
    if rs:
        print("osn/kamailio kernel CPU per call: " + span(rs))
    if rt:
        print("osn/kamailio CPU per call:        " + span(rt) + " (goal <= 0.7)")
    else:
        print("osn/kamailio: no pair with both runs; no ratio")
    if frac:
        print("osn datagrams per CPU-second / UDP limit: " + span(frac) + " (goal >= 0.9)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

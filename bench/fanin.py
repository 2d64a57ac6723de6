#!/usr/bin/python3
"""The SIP network benchmark of `make bench`: simulated SIP messages per second on fanin.ini.

Usage: bench/fanin.py OSN [RUNS]. Runs `OSN sim examples/fanin.ini --threads T --json -` RUNS
times (default 5) for T = 1 and for T = min(2, CPUs), and prints for each T the median run:
messages, wall time and messages per wall second (the figure the target of 5 M/s is about).

These machines are virtual and shared: the hypervisor takes CPU time from them ("steal" in
/proc/stat), and that time is in the wall time. So each line also gives the steal share of the
machine's CPU time during the runs (median over the runs) and the messages per second of CPU
time the process got (user + system, from getrusage): the second does not count the stolen
time, but it is not a wall-clock figure and is not what the target is measured by.
"""
import json
import os
import resource
import statistics
import subprocess
import sys


def cpu_ticks():
    """(busy, steal) jiffies of all CPUs: busy is user + nice + system + irq + softirq."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = v[:8]
    return user + nice + system + irq + softirq, steal


def one_run(osn, threads):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    b0, s0 = cpu_ticks()
    out = subprocess.run(
        [osn, "sim", "examples/fanin.ini", "--threads", str(threads), "--json", "-", "-q"],
        check=True, capture_output=True, text=True).stdout
    b1, s1 = cpu_ticks()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    d = json.loads(out)
    cpu_s = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    busy, steal = b1 - b0, s1 - s0
    return {
        "messages": d["messages"],
        "msgs_per_s": d["timing"]["msgs_per_s"],
        "wall_s": d["messages"] / d["timing"]["msgs_per_s"],
        "per_cpu_s": d["messages"] / cpu_s if cpu_s > 0 else float("nan"),
        "steal": steal / (busy + steal) if busy + steal > 0 else 0.0,
        "goodput": d["goodput"],
        "capacity": d["capacity"],
    }


def main():
    osn = sys.argv[1]
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    for threads in sorted({1, min(2, os.cpu_count() or 1)}):
        rs = sorted((one_run(osn, threads) for _ in range(runs)), key=lambda r: r["msgs_per_s"])
        m = rs[len(rs) // 2]
        print("net sim fanin.ini, %d thread(s): %d SIP messages in %.3f s wall: %.3g M msgs/s "
              "(median of %d, range %.3g-%.3g; target 5 M/s); goodput %.1f of capacity %.1f calls/s"
              % (threads, m["messages"], m["wall_s"], m["msgs_per_s"] / 1e6, runs,
                 rs[0]["msgs_per_s"] / 1e6, rs[-1]["msgs_per_s"] / 1e6, m["goodput"],
                 m["capacity"]))
        print("  steal (CPU time the hypervisor took) %.0f%% of the machine's CPU time, median; "
              "%.3g M msgs per CPU-second the process got, median"
              % (100 * statistics.median(r["steal"] for r in rs),
                 statistics.median(r["per_cpu_s"] for r in rs) / 1e6))


if __name__ == "__main__":
    main()

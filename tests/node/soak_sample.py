#!/usr/bin/env python3
"""Samples running `osn node` processes for the soak (tests/test_node_soak.sh).

    soak_sample.py OUT.csv PERIOD STOP_FILE MAX_S NAME:PID:METRICS_PORT [...]

Every PERIOD seconds, until STOP_FILE exists or MAX_S seconds have passed, writes one row per
node to OUT.csv:

    t,node,rss_kb,transactions,queue

t is seconds since the sampler started; rss_kb is VmRSS of /proc/PID/status (what the kernel
holds resident for the process, the figure a leak moves); transactions and queue are the
node's own gauges osn_node_transactions and osn_node_queue read from its metrics endpoint
(-1 when the scrape failed: the endpoint answers within 10 s even behind hostile clients,
so a failure here is worth seeing in the file rather than a crash of the sampler).
"""
import os
import sys
import time
import urllib.request


def rss_kb(pid):
    try:
        with open("/proc/%s/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return -1


def gauges(port):
    out = {"osn_node_transactions": -1, "osn_node_queue": -1}
    try:
        with urllib.request.urlopen("http://127.0.0.1:%s/metrics" % port, timeout=5) as r:
            for line in r.read().decode().splitlines():
                f = line.split()
                if len(f) == 2 and f[0] in out:
                    out[f[0]] = int(float(f[1]))
    except (OSError, ValueError):
        pass
    return out["osn_node_transactions"], out["osn_node_queue"]


def main():
    out, period, stop, max_s = sys.argv[1], float(sys.argv[2]), sys.argv[3], float(sys.argv[4])
    nodes = [a.split(":") for a in sys.argv[5:]]
    t0 = time.monotonic()
    with open(out, "w") as f:
        f.write("t,node,rss_kb,transactions,queue\n")
        while True:
            t = time.monotonic() - t0
            for name, pid, port in nodes:
                txn, queue = gauges(port)
                f.write("%.1f,%s,%d,%d,%d\n" % (t, name, rss_kb(pid), txn, queue))
            f.flush()
            if os.path.exists(stop) or t >= max_s:
                return
            # The next sample on the period's grid, however long this one's scrapes took.
            time.sleep(max(0.0, period - (time.monotonic() - t0 - t)))


if __name__ == "__main__":
    main()

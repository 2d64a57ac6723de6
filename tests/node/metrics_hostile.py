#!/usr/bin/env python3
"""Scrapers that vanish must never end `osn node`: its metrics port under clients that reset the
connection before the answer, connect and close at once (a TCP health check), open many idle
connections and drop them together, or trickle a request byte by byte (slowloris). Afterwards
an ordinary scrape must still succeed, and the node must stop cleanly on SIGTERM with exit 0
and its JSON summary written.

Usage: metrics_hostile.py OSN        exit 0 when the node survived, 1 otherwise.
"""
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request


def free_ports():
    # Ephemeral ports for the node: the node binds them after we release them, so another
    # process may take one in between; start() retries on that (a bind failure is reported).
    s = [socket.socket(socket.AF_INET, t) for t in (socket.SOCK_DGRAM, socket.SOCK_STREAM)]
    for x in s:
        x.bind(("127.0.0.1", 0))
    ports = [x.getsockname()[1] for x in s]
    for x in s:
        x.close()
    return ports


def start(osn, tmp, duration):
    for _ in range(5):
        sip, met = free_ports()
        err = open(os.path.join(tmp, "err"), "w+")
        p = subprocess.Popen(
            ["timeout", "60", osn, "node", "--set", "node.element=uas",
             "--set", f"node.listen=127.0.0.1:{sip}", "--set", f"node.metrics=127.0.0.1:{met}",
             "--set", f"node.duration={duration}", "--json", os.path.join(tmp, "out.json"),
             "-q"], stderr=err, stdout=subprocess.DEVNULL)
        for _ in range(100):
            if p.poll() is not None:
                break
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{met}/metrics", timeout=1).read()
                return p, met
            except OSError:
                time.sleep(0.05)
        p.kill()
        p.wait()
        err.seek(0)
        if "cannot bind" not in err.read() and "cannot listen" not in err.read():
            break
    sys.exit("the node did not start: " + open(os.path.join(tmp, "err")).read())


def reset_close(met, send_request):
    c = socket.create_connection(("127.0.0.1", met), timeout=2)
    if send_request:
        c.sendall(b"GET /metrics HTTP/1.0\r\n\r\n")
    c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # RST on close
    c.close()


def attempt(fn, *args):
    """Runs one hostile client; what the client itself suffers (refused, reset, timed out) is
    not the test: whether the node lives is."""
    try:
        fn(*args)
    except OSError:
        pass


def health_check(met):
    socket.create_connection(("127.0.0.1", met), timeout=2).close()


def idle_then_reset(met, count):
    idle = []
    for _ in range(count):
        attempt(lambda: idle.append(socket.create_connection(("127.0.0.1", met), timeout=2)))
    for c in idle:
        c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        c.close()


def slowloris(met):
    slow = socket.create_connection(("127.0.0.1", met), timeout=2)
    for b in b"GET /metr":  # a request trickled in, then abandoned
        slow.send(bytes([b]))
        time.sleep(0.02)
    slow.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    slow.close()


def main():
    osn = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="osn_metrics_hostile.")
    p, met = start(osn, tmp, 60)
    for _ in range(40):  # answered into a reset connection: EPIPE / ECONNRESET on the write
        attempt(reset_close, met, True)
    for _ in range(40):
        attempt(health_check, met)
    attempt(idle_then_reset, met, 100)
    attempt(slowloris, met)
    time.sleep(0.3)
    alive = p.poll() is None
    text = ""
    if alive:
        try:
            text = urllib.request.urlopen(f"http://127.0.0.1:{met}/metrics", timeout=2).read()
            text = text.decode()
        except OSError as e:
            text = f"({e})"
    if alive:
        p.terminate()  # `timeout` passes SIGTERM on: the node stops cleanly and writes its JSON
    rc = p.wait(timeout=30)
    ok = True
    if not alive or rc != 0:
        print(f"FAIL: the node died under vanishing scrapers (exit {rc})")
        ok = False
    if alive and "osn_node_datagrams_in_total" not in text:
        print("FAIL: the scrape after the hostile clients had no counters")
        ok = False
    try:
        json.load(open(os.path.join(tmp, "out.json")))
    except (OSError, ValueError) as e:
        print(f"FAIL: no JSON summary after the run: {e}")
        ok = False
    if ok:
        print("metrics port survived closes, resets, idle and slow clients")
    shutil.rmtree(tmp, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

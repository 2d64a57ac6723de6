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
import re
import select
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request


def listening(p, seconds=10):
    """The ports on the listening line the node prints on stdout (a pipe) once it has bound
    port 0: (sip, metrics); None when it exits or prints none within `seconds`."""
    fd, buf, end = p.stdout.fileno(), b"", time.monotonic() + seconds
    while b"\n" not in buf:
        left = end - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return None
        chunk = os.read(fd, 4096)
        if not chunk:
            return None  # the node exited
        buf += chunk
    m = re.match(rb"osn node \w+ listening on 127\.0\.0\.1:(\d+) \(udp\), "
                 rb"metrics 127\.0\.0\.1:(\d+)", buf)
    return (int(m.group(1)), int(m.group(2))) if m else None


def start(osn, tmp, duration):
    # Port 0: the node binds what the kernel gives and says which on its listening line.
    err = open(os.path.join(tmp, "err"), "w+")
    p = subprocess.Popen(
        ["timeout", "60", osn, "node", "--set", "node.element=uas",
         "--set", "node.listen=127.0.0.1:0", "--set", "node.metrics=127.0.0.1:0",
         "--set", f"node.duration={duration}", "--json", os.path.join(tmp, "out.json"),
         "-q"], stderr=err, stdout=subprocess.PIPE)
    ports = listening(p)
    if not ports:
        p.kill()
        p.wait()
        sys.exit("the node did not start: " + open(os.path.join(tmp, "err")).read())
    return p, ports[1]


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

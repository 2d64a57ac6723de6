#!/usr/bin/env python3
"""A next hop that refuses (port unreachable) is said and counted, not silent: an edge whose
next hop has no socket gets ICMP port unreachable for every INVITE it sends there; within a
second stderr says "next hop ... unreachable" and the JSON summary counts next_hop_unreachable.

The closed port is one this test bound and released; should another process take it in
between (then no ICMP comes), the test sees the port bound and tries another, at most 5 times.

Usage: unreachable.py OSN        exit 0 when the node said and counted it.
"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time


def closed_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def bound(port):
    try:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("127.0.0.1", port))
        s.close()
        return False
    except OSError:
        return True


def attempt(osn, tmp):
    dead = closed_port()
    out = os.path.join(tmp, "edge.json")
    p = subprocess.Popen([osn, "node", "--set", "node.element=edge", "--set",
                          "node.listen=127.0.0.1:0", "--set", f"node.next_hop=127.0.0.1:{dead}",
                          "--set", "node.duration=2", "-q", "--json", out],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    m = re.search(r"listening on 127\.0\.0\.1:(\d+) \(udp\)", p.stdout.readline())
    if not m:
        p.kill()
        sys.exit("the node did not start: " + p.communicate()[1])
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    me = s.getsockname()[1]
    sent = time.monotonic()
    s.sendto((f"INVITE sip:b@127.0.0.1 SIP/2.0\r\n"
              f"Via: SIP/2.0/UDP 127.0.0.1:{me};branch=z9hG4bKunreach\r\nMax-Forwards: 70\r\n"
              f"From: <sip:a@127.0.0.1>;tag=1\r\nTo: <sip:b@127.0.0.1>\r\n"
              f"Call-ID: unreach@test\r\nCSeq: 1 INVITE\r\nContent-Length: 0\r\n\r\n").encode(),
             ("127.0.0.1", int(m.group(1))))
    err = p.stderr.readline()  # the first line on stderr, or "" at the node's end
    said_after = time.monotonic() - sent
    rest_out, rest_err = p.communicate(timeout=20)
    if p.returncode != 0:
        sys.exit(f"the node exited {p.returncode}: {err}{rest_err}")
    count = json.load(open(out)).get("next_hop_unreachable")
    return dead, err, said_after, count


def main():
    osn = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="osn_unreachable.")
    try:
        for _ in range(5):
            dead, err, said_after, count = attempt(osn, tmp)
            if "unreachable" not in err and bound(dead):
                continue  # another process took the port: not a closed one after all
            ok = (f"next hop 127.0.0.1:{dead} unreachable" in err and said_after < 1.0 and
                  isinstance(count, int) and count >= 1)
            print(f"stderr: {err.strip()!r} after {said_after:.3f} s; next_hop_unreachable "
                  f"{count}")
            if not ok:
                print("FAIL: a refusing next hop was not said within a second and counted")
            return 0 if ok else 1
        print("FAIL: every closed port was taken by another process")
        return 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

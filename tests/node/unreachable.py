#!/usr/bin/env python3
"""A next hop that refuses (port unreachable) is said and counted, not silent: an edge whose
next hop has no socket gets ICMP port unreachable for every INVITE it sends there; within a
second stderr says "next hop ADDR unreachable (port unreachable)", at most once a second, and
the JSON summary counts next_hop_unreachable and send_errors. The edge sends to its next hop
by a UDP socket connected to it (the test finds it in /proc/net/udp[6]: its remote address is
the next hop). Over IPv4 (127.0.0.1) and IPv6 ([::1]; skipped, said so, when the machine has
no ::1).

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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nodeproc  # noqa: E402


DURATION = 2  # s: the INVITE and its Timer A copies at 0.5 and 1.5 s draw 3 refusals


def closed_port(fam, host):
    s = socket.socket(fam, socket.SOCK_DGRAM)
    s.bind((host, 0))
    port = s.getsockname()[1]
    s.close()
    return port


def bound(fam, host, port):
    try:
        s = socket.socket(fam, socket.SOCK_DGRAM)
        s.bind((host, port))
        s.close()
        return False
    except OSError:
        return True


def connected_to(pid, fam, port):
    """Whether process pid holds a UDP socket whose remote port is `port` (/proc/net/udp[6]:
    rem_address is HEXADDR:HEXPORT, 0 for an unconnected socket)."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            link = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if link.startswith("socket:["):
            inodes.add(link[8:-1])
    table = "/proc/net/udp6" if fam == socket.AF_INET6 else "/proc/net/udp"
    with open(table) as f:
        next(f)
        for line in f:
            col = line.split()
            if col[9] in inodes and int(col[2].split(":")[1], 16) == port:
                return True
    return False


def attempt(osn, tmp, fam, host):
    dead = closed_port(fam, host)
    lit = f"[{host}]" if fam == socket.AF_INET6 else host
    out = os.path.join(tmp, "edge.json")
    p = subprocess.Popen([osn, "node", "--set", "node.element=edge", "--set",
                          f"node.listen={lit}:0", "--set", f"node.next_hop={lit}:{dead}",
                          "--set", f"node.duration={DURATION}", "-q", "--json", out],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    m = re.search(re.escape(lit) + r":(\d+) \(udp\)", p.stdout.readline())
    if not m:
        p.kill()
        sys.exit("the node did not start: " + p.communicate()[1])
    connected = connected_to(p.pid, fam, dead)
    s = socket.socket(fam, socket.SOCK_DGRAM)
    s.bind((host, 0))
    me = s.getsockname()[1]
    sent = time.monotonic()
    s.sendto((f"INVITE sip:b@{lit} SIP/2.0\r\n"
              f"Via: SIP/2.0/UDP {lit}:{me};branch=z9hG4bKunreach\r\nMax-Forwards: 70\r\n"
              f"From: <sip:a@{lit}>;tag=1\r\nTo: <sip:b@{lit}>\r\n"
              f"Call-ID: unreach@test\r\nCSeq: 1 INVITE\r\nContent-Length: 0\r\n\r\n").encode(),
             (host, int(m.group(1))))
    err = p.stderr.readline()  # the first line on stderr, or "" at the node's end
    said_after = time.monotonic() - sent
    rest_out, rest_err = p.communicate(timeout=20)
    if p.returncode != 0:
        sys.exit(f"the node exited {p.returncode}: {err}{rest_err}")
    lines = 1 + sum("unreachable" in line for line in rest_err.splitlines())
    summary = json.load(open(out))
    return (f"{lit}:{dead}", dead, err, said_after, summary.get("next_hop_unreachable"),
            summary.get("send_errors"), lines, connected)


def check(osn, tmp, fam, host):
    for _ in range(5):
        addr, dead, err, said_after, count, send_errors, lines, connected = \
            attempt(osn, tmp, fam, host)
        if "unreachable" not in err and bound(fam, host, dead):
            continue  # another process took the port: not a closed one after all
        print(f"{addr}: stderr {err.strip()!r} after {said_after:.3f} s, {lines} such line(s); "
              f"next_hop_unreachable {count}, send_errors {send_errors}; a socket connected "
              f"to it: {connected}")
        bad = []
        if not err.startswith(f"osn node edge: next hop {addr} unreachable (port unreachable)"):
            bad.append("the line on stderr is not the one expected")
        if not said_after < 1.0:
            bad.append("said later than a second after the refused INVITE")
        # 3 refusals in DURATION s: said at the first, then at most once a second.
        if not (isinstance(count, int) and count == 3):
            bad.append("next_hop_unreachable is not 3 (the INVITE and its 2 copies)")
        if send_errors != count:
            bad.append("send_errors does not count the refused datagrams")
        if lines > DURATION:
            bad.append("said more than once a second")
        if not connected:
            bad.append("no UDP socket connected to the next hop")
        for b in bad:
            print("FAIL: " + b)
        return not bad
    print("FAIL: every closed port was taken by another process")
    return False


def main():
    osn = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="osn_unreachable.")
    try:
        ok = check(osn, tmp, socket.AF_INET, "127.0.0.1")
        if nodeproc.have_ipv6_loopback():
            ok = check(osn, tmp, socket.AF_INET6, "::1") and ok
        else:
            print("SKIP IPv6: this machine has no ::1 (cannot bind [::1]:0)")
        return 0 if ok else 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""How much a forged INVITE brings back to the address it names (issue 28, "amplification"):
bytes the victim receives over bytes sent to `osn node`, for one datagram and for a flood from
one source, with the per-source budget (node.per_source_rate) off and on.

The victim is the UDP socket the INVITEs are sent from (a forger would put its victim's address
in the source and in the Via; on loopback the test sends from the victim itself and never
answers: no ACK, no 200 to anything). Three elements face it: a uas; an edge in front of a uas
(the 2xx copies relayed); an edge toward a dead next hop (100, then 408 resent until Timer H).

  amplify.py OSN             the test: [sip] timers shortened (T1 = 20 ms, T2/T1 = 8 as by
                             default, so the counts are the default timers'), about 15 s; fails
                             unless a flood of 100 INVITEs in 0.1 s from one source brings back
                             less than it sent (ratio < 1) with per_source_rate = 2, and more than
                             5 times with the budget off (the measurement is live)
  amplify.py OSN --measure [--setup=uas|edge+uas|edge-dead]
                             the default timers, 40 s per run: the table in docs/node.md
"""
import os
import select
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nodeproc  # noqa: E402

SHORT = ["--set", "sip.t1=0.02", "--set", "sip.t2=0.16", "--set", "sip.t4=0.1",
         "--set", "sip.timer_d=0.5"]


def start(osn, timers, *sets):
    p = subprocess.Popen(["timeout", "--foreground", "300", osn, "node",
                          "--set", "node.listen=127.0.0.1:0", *timers, *sets, "-q"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    ready = nodeproc.listening(p)
    if not ready:
        p.kill()
        sys.exit("the node did not start: " + p.communicate()[1].decode(errors="replace"))
    return p, ready.sip


def invite(port, i):
    return (f"INVITE sip:b@127.0.0.1 SIP/2.0\r\n"
            f"Via: SIP/2.0/UDP 127.0.0.1:{port};branch=z9hG4bKf{i}\r\n"
            f"Max-Forwards: 70\r\nFrom: <sip:a@x>;tag=f\r\nTo: <sip:b@x>\r\n"
            f"Call-ID: f{i}\r\nCSeq: 1 INVITE\r\nContent-Length: 0\r\n\r\n").encode()


def ratio(osn, timers, setup, rate, n, spread, wait):
    """Bytes back over bytes in for n forged INVITEs sent over `spread` s, counted for `wait`
    s after the first; also the datagrams back."""
    procs = []
    try:
        budget = ["--set", f"node.per_source_rate={rate}"]
        if setup == "uas":
            p, target = start(osn, timers, "--set", "node.element=uas", *budget)
            procs.append(p)
        else:
            dead = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            dead.bind(("127.0.0.1", 0))
            hop = dead.getsockname()[1]
            if setup == "edge+uas":
                u, hop = start(osn, timers, "--set", "node.element=uas")
                procs.append(u)
            p, target = start(osn, timers, "--set", "node.element=edge",
                              "--set", f"node.next_hop=127.0.0.1:{hop}", *budget)
            procs.append(p)
        v = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        v.bind(("127.0.0.1", 0))
        port = v.getsockname()[1]
        sent = back = nback = 0
        t0 = time.monotonic()
        for i in range(n):
            d = invite(port, i)
            v.sendto(d, ("127.0.0.1", target))
            sent += len(d)
            if n > 1:
                time.sleep(spread / n)
        while time.monotonic() < t0 + wait:
            if select.select([v], [], [], 0.1)[0]:
                back += len(v.recv(65535))
                nback += 1
        return back / sent, nback, sent, back
    finally:
        for p in procs:
            p.terminate()
            err = p.communicate(timeout=10)[1].decode(errors="replace")
            if "Sanitizer" in err:
                sys.exit("the node: " + err)


def main():
    osn = sys.argv[1]
    if "--measure" in sys.argv:
        print("setup      budget  datagrams in  bytes in  datagrams back  bytes back  ratio")
        setups = [a.split("=", 1)[1] for a in sys.argv if a.startswith("--setup=")]
        for setup in setups or ["uas", "edge+uas", "edge-dead"]:
            for rate in [0, 2]:
                for n, spread in [(1, 0), (100, 0.1)]:
                    r, nb, s, b = ratio(osn, [], setup, rate, n, spread, 40)
                    print(f"{setup:10} {rate or 'off':>6}  {n:12}  {s:8}  {nb:14}  {b:10}"
                          f"  {r:5.2f}")
        return 0
    ok = True
    for setup in ["uas", "edge+uas", "edge-dead"]:
        off = ratio(osn, SHORT, setup, 0, 100, 0.1, 3)
        on = ratio(osn, SHORT, setup, 2, 100, 0.1, 3)
        print(f"{setup}: flood of 100, ratio {off[0]:.2f} with the budget off, "
              f"{on[0]:.2f} with per_source_rate = 2")
        if not on[0] < 1:
            print(f"FAIL: {setup}: the budget let a flood bring back {on[0]:.2f} times")
            ok = False
        if not off[0] > 5:
            print(f"FAIL: {setup}: without the budget only {off[0]:.2f} times: not measured?")
            ok = False
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The node carries out the scenario's link delays (node.link_delay_down, link_delay_up; issue
30): a plain UDP socket plays the caller in front of an edge proxy and a uas, twice in one run:
  - without delays (the baseline), and with a 50 ms link between edge and uas, carried out by
    both ends (the edge holds what it sends down, the uas what it sends up), and 50 ms between
    the caller and the edge (the edge holds what it sends up);
  - each INVITE's 100 Trying comes back one link later (edge -> caller: 50 ms), its 180 three
    links later (edge -> uas, uas -> edge, edge -> caller: 150 ms): every delay at least that
    (a datagram is never sent before its time), and the median at most 40 ms above the
    baseline's median plus the added delay (the machine is shared: the upper bound is loose);
  - a full delay line: a uas holding its responses 1 s in a line of 65,535 bytes, sent 300
    INVITEs at once, loses what does not fit and counts it (link_dropped > 0); nothing reaches
    the caller within the first 0.9 s, and what arrives fits in the line;
  - the link's loss (node.link_loss_up = 0.3): a uas answers 1,000 OPTIONS, each 200 lost on its
    link with probability 0.3; what the caller gets plus what the uas counts lost (link_lost) is
    every answer, and the lost share is 0.3 within 3.3 binomial standard deviations (99.9%);
    the same seed loses the same answers again; without loss, link_lost is 0;
  - links of their own (node.next_hop_delays, issue 32): an edge with two next hops, uas's at
    links of 50 and 100 ms that the edge carries both ways (it holds what it sends to each and
    what comes back from each; the uas's hold nothing): each 180 comes one round trip of its
    link later, so the calls fall in two groups, at 100 ms and at 200 ms, each group's median
    at most 40 ms above the baseline's plus its round trip, none sooner; the 100 Trying (the
    edge's own, upstream, no link) comes without delay;
  - bad values exit 2 naming the key: a negative delay, a delay over TCP, a loss of 1; for
    next_hop_delays a count that is not one a next hop, beside link_delay_down, on a uas.
Without link delays the 180 comes in about a millisecond. Usage: link_delay.py OSN
"""
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nodeproc import Node  # noqa: E402

D = 0.05  # s: the one-way delay of each delayed link


def node(osn, tmp, name, *sets, duration=6):
    """An osn node (nodeproc.Node) that runs `duration` s and writes its summary."""
    return Node(osn, tmp, name, "--set", f"node.duration={duration}", *sets, metrics=False,
                summary=True, seconds=60)


def summary(n):
    n.p.wait(timeout=60)
    return n.summary()


def invite(s, to, call):
    port = s.getsockname()[1]
    msg = (f"INVITE sip:bob@127.0.0.1:{to} SIP/2.0\r\n"
           f"Via: SIP/2.0/UDP 127.0.0.1:{port};branch=z9hG4bKld{call}\r\n"
           f"Max-Forwards: 70\r\nFrom: <sip:alice@127.0.0.1>;tag=a{call}\r\n"
           f"To: <sip:bob@127.0.0.1>\r\nCall-ID: {call}@link-delay\r\n"
           f"CSeq: 1 INVITE\r\nContact: <sip:alice@127.0.0.1:{port}>\r\n"
           f"Content-Length: 0\r\n\r\n")
    s.sendto(msg.encode(), ("127.0.0.1", to))


def options(s, to, call):
    port = s.getsockname()[1]
    msg = (f"OPTIONS sip:bob@127.0.0.1:{to} SIP/2.0\r\n"
           f"Via: SIP/2.0/UDP 127.0.0.1:{port};branch=z9hG4bKlo{call}\r\n"
           f"Max-Forwards: 70\r\nFrom: <sip:alice@127.0.0.1>;tag=a{call}\r\n"
           f"To: <sip:bob@127.0.0.1>\r\nCall-ID: {call}@link-loss\r\n"
           f"CSeq: 1 OPTIONS\r\nContent-Length: 0\r\n\r\n")
    s.sendto(msg.encode(), ("127.0.0.1", to))


def answered(port, calls, tag):
    """Sends `calls` OPTIONS to port, 100 at a time, and counts the distinct calls answered."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
    s.bind(("127.0.0.1", 0))
    got = set()
    for k in range(0, calls, 100):
        for i in range(k, min(k + 100, calls)):
            options(s, port, f"{tag}{i}")
        time.sleep(0.05)
    end = time.monotonic() + 1.0
    while time.monotonic() < end:
        s.settimeout(max(0.001, end - time.monotonic()))
        try:
            text = s.recv(65535).decode(errors="replace")
        except socket.timeout:
            break
        for line in text.split("\r\n"):
            if line.startswith("Call-ID: "):
                got.add(line[9:])
    s.close()
    return len(got)


def delays(edge_port, calls, tag):
    """INVITE -> first 100 and first 180, per call, one call at a time (s)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    t100, t180 = [], []
    for i in range(calls):
        call = f"{tag}{i}"
        t0 = time.monotonic()
        invite(s, edge_port, call)
        got = {}
        while 180 not in got and time.monotonic() < t0 + 2:
            s.settimeout(max(0.001, t0 + 2 - time.monotonic()))
            try:
                text = s.recv(65535).decode(errors="replace")
            except socket.timeout:
                break
            if f"Call-ID: {call}@" in text:
                got.setdefault(int(text.split()[1]), time.monotonic() - t0)
        if 100 in got and 180 in got:
            t100.append(got[100])
            t180.append(got[180])
        time.sleep(0.02)
    s.close()
    return t100, t180


def main():
    osn = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="osn_link_delay.")
    ok = True

    def check(what, cond, detail=""):
        nonlocal ok
        print(("ok   " if cond else "FAIL ") + what + (": " + detail if detail else ""))
        ok = ok and cond

    try:
        # Bad values: exit 2 naming the key.
        for key, sets in (("node.link_delay_down", ["node.element=edge", "node.listen=127.0.0.1:0",
                                                    "node.next_hop=127.0.0.1:9",
                                                    "node.link_delay_down=-1"]),
                          ("node.link_delay_up", ["node.listen=127.0.0.1:0;transport=tcp",
                                                  "node.link_delay_up=0.05"]),
                          ("node.link_loss_up", ["node.listen=127.0.0.1:0",
                                                 "node.link_loss_up=1"]),
                          ("node.link_loss_down", ["node.listen=127.0.0.1:0;transport=tcp",
                                                   "node.link_loss_down=0.1"]),
                          ("node.next_hop_delays", ["node.element=edge", "node.listen=127.0.0.1:0",
                                                    "node.next_hop=127.0.0.1:9, 127.0.0.1:10",
                                                    "node.next_hop_delays=0.05"]),
                          ("node.next_hop_delays", ["node.element=edge", "node.listen=127.0.0.1:0",
                                                    "node.next_hop=127.0.0.1:9",
                                                    "node.link_delay_down=0.01",
                                                    "node.next_hop_delays=0.05"]),
                          ("node.next_hop_delays", ["node.element=uas", "node.listen=127.0.0.1:0",
                                                    "node.next_hop_delays=0.05"]),
                          ("node.next_hop_losses", ["node.element=edge", "node.listen=127.0.0.1:0",
                                                    "node.next_hop=127.0.0.1:9",
                                                    "node.next_hop_losses=1"])):
            args = [osn, "node"]
            for v in sets:
                args += ["--set", v]
            r = subprocess.run(args, capture_output=True, text=True, timeout=30)
            check(f"{sets[-1]} exits 2 naming {key}", r.returncode == 2 and key in r.stderr,
                  f"exit {r.returncode}: {r.stderr.strip()}")

        uas0 = node(osn, tmp, "uas0", "--set", "node.element=uas")
        edge0 = node(osn, tmp, "edge0", "--set", "node.element=edge",
                     "--set", f"node.next_hop=127.0.0.1:{uas0.port}")
        uas1 = node(osn, tmp, "uas1", "--set", "node.element=uas",
                    "--set", f"node.link_delay_up={D}")
        edge1 = node(osn, tmp, "edge1", "--set", "node.element=edge",
                     "--set", f"node.next_hop=127.0.0.1:{uas1.port}",
                     "--set", f"node.link_delay_down={D}", "--set", f"node.link_delay_up={D}")
        b100, b180 = delays(edge0.port, 15, "base")
        d100, d180 = delays(edge1.port, 15, "delay")
        check("every call answered 100 and 180", len(b180) == 15 and len(d180) == 15,
              f"{len(b180)} baseline, {len(d180)} delayed")
        if b180 and d180:
            print(f"     INVITE->100 median: baseline {1e3 * statistics.median(b100):.1f} ms, "
                  f"delayed {1e3 * statistics.median(d100):.1f} ms (min {1e3 * min(d100):.1f})")
            print(f"     INVITE->180 median: baseline {1e3 * statistics.median(b180):.1f} ms, "
                  f"delayed {1e3 * statistics.median(d180):.1f} ms (min {1e3 * min(d180):.1f})")
            check("no 100 before one link delay (50 ms)", min(d100) >= D)
            check("no 180 before three link delays (150 ms)", min(d180) >= 3 * D)
            check("median 100 within 40 ms of baseline + 50 ms",
                  statistics.median(d100) <= statistics.median(b100) + D + 0.04)
            check("median 180 within 40 ms of baseline + 150 ms",
                  statistics.median(d180) <= statistics.median(b180) + 3 * D + 0.04)
        # Links of their own: the edge carries both, both ways.
        uas3 = node(osn, tmp, "uas3", "--set", "node.element=uas")
        uas4 = node(osn, tmp, "uas4", "--set", "node.element=uas")
        edge3 = node(osn, tmp, "edge3", "--set", "node.element=edge",
                     "--set", f"node.next_hop=127.0.0.1:{uas3.port}, 127.0.0.1:{uas4.port}",
                     "--set", f"node.next_hop_delays={D}, {2 * D}")
        o100, o180 = delays(edge3.port, 20, "own")
        near = [t for t in o180 if t < 4 * D]
        far = [t for t in o180 if t >= 4 * D]
        check("links of their own: every call answered 100 and 180", len(o180) == 20,
              f"{len(o180)} of 20")
        if o180 and b180:
            print(f"     own links, INVITE->180: {len(near)} calls median "
                  f"{1e3 * statistics.median(near or [0]):.1f} ms, {len(far)} median "
                  f"{1e3 * statistics.median(far or [0]):.1f} ms; INVITE->100 median "
                  f"{1e3 * statistics.median(o100):.1f} ms")
            check("both next hops took calls", near and far, f"{len(near)}, {len(far)}")
            check("no 180 before its link's round trip (100 ms)", min(o180) >= 2 * D)
            check("the 50 ms link: median 180 within 40 ms of baseline + 100 ms",
                  bool(near) and statistics.median(near) <= statistics.median(b180) + 2 * D + 0.04)
            check("the 100 ms link: median 180 within 40 ms of baseline + 200 ms",
                  bool(far) and statistics.median(far) <= statistics.median(b180) + 4 * D + 0.04)
            check("the edge's 100 Trying is not held (median within 40 ms of baseline)",
                  statistics.median(o100) <= statistics.median(b100) + 0.04)
        for n in (uas0, edge0, uas1, edge1, uas3, uas4, edge3):
            st = summary(n)
            check(f"{os.path.basename(n.json)}: nothing lost on the link",
                  st.get("link_dropped") == 0, str(st.get("link_dropped")))

        # A full delay line: 300 INVITEs at once to a uas that holds its responses 1 s in
        # 65,535 bytes.
        uas2 = node(osn, tmp, "uas2", "--set", "node.element=uas", "--set",
                    "node.link_delay_up=1", "--set", "node.link_buffer=65535", duration=3)
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
        s.bind(("127.0.0.1", 0))
        t0 = time.monotonic()
        for i in range(300):
            invite(s, uas2.port, f"full{i}")
        first, size, n = None, 0, 0
        while time.monotonic() < t0 + 1.8:
            s.settimeout(max(0.001, t0 + 1.8 - time.monotonic()))
            try:
                data = s.recv(65535)
            except socket.timeout:
                break
            first = first if first is not None else time.monotonic() - t0
            size += len(data)
            n += 1
        st = summary(uas2)
        check("a full delay line loses and counts (link_dropped > 0)",
              st.get("link_dropped", 0) > 0, f"link_dropped {st.get('link_dropped')}")
        check("nothing comes before the 1 s delay", first is None or first >= 0.9,
              f"first after {first} s")
        check("what came in the first delay fits in the line (65,535 bytes)",
              0 < size <= 65535, f"{n} datagrams, {size} bytes")

        # The link's loss: 1,000 answers, each lost with probability 0.3 on the uas's link up.
        N, P = 1000, 0.3
        lost = []
        for name, sets in (("loss_a", [f"node.link_loss_up={P}"]),
                           ("loss_b", [f"node.link_loss_up={P}"]),
                           ("loss_0", [])):
            args = ["--set", "node.element=uas"]
            for v in sets:
                args += ["--set", v]
            uas = node(osn, tmp, name, *args, duration=4)
            got = answered(uas.port, N, name)
            st = summary(uas)
            lost.append(st.get("link_lost"))
            check(f"{name}: every answer came or was counted lost ({got} + {st.get('link_lost')})",
                  st.get("link_lost") is not None and got + st["link_lost"] == N)
        sd = (N * P * (1 - P)) ** 0.5
        check(f"the lost share is {P} within 3.3 sd ({lost[0]} of {N})",
              lost[0] is not None and abs(lost[0] - N * P) <= 3.3 * sd)
        check("the same seed loses as many again", lost[0] == lost[1], f"{lost[0]}, {lost[1]}")
        check("no loss set: nothing lost", lost[2] == 0, str(lost[2]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("link_delay:", "ok" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

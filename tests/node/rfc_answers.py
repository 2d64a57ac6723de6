#!/usr/bin/env python3
"""RFC answers of `osn node` on the wire (issue 28), each failing without its behaviour:
  - 481: a uas answers a BYE and a CANCEL for no call of its own 481 (RFC 3261 15.1.2, 9.2); a
    BYE of a call it answered still gets 200;
  - 482: two edges forward to each other (A's next hop is a UDP relay to B, B's is A: port 0
    everywhere), one INVITE: the caller gets 482 Loop Detected from the first pass back through
    A (RFC 3261 16.3 step 4), not a 483 or a 400 after 64 hops, and every transaction ends;
  - 513: an INVITE that fits in a datagram but whose forward (our Via added) does not gets 513
    Message Too Large (RFC 3261 18.1.1, UDP only), not a 500, and nothing goes down.
Short [sip] timers (nodeproc.SHORT_TIMERS); about 10 s. Usage: rfc_answers.py OSN
"""
import os
import socket
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nodeproc import SHORT_TIMERS, Node, scrape, wait_ended  # noqa: E402
from txn_end import Caller  # noqa: E402

import shutil  # noqa: E402
import tempfile  # noqa: E402


def finals(c, timeout):
    """Every final response's (status, CSeq method) until `timeout` s pass without one."""
    got = []
    c.s.settimeout(timeout)
    while True:
        try:
            text = c.s.recv(65535).decode(errors="replace")
        except socket.timeout:
            return got
        status = int(text.split()[1])
        if status >= 200:
            got.append((status, text.split("CSeq:")[1].split("\r\n")[0].split()[-1]))


def relay(src, a_port, b_port, stop):
    """A network path between A and B, no SIP: what comes from B goes to A, the rest to B."""
    src.settimeout(0.1)
    while not stop.is_set():
        try:
            d, frm = src.recvfrom(65535)
        except socket.timeout:
            continue
        src.sendto(d, ("127.0.0.1", a_port if frm[1] == b_port else b_port))


def main():
    osn = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="osn_rfc_answers.")
    nodes, ok, stop = [], True, threading.Event()

    def check(what, cond, detail):
        nonlocal ok
        print(("ok   " if cond else "FAIL ") + what + ": " + detail)
        ok = ok and cond

    try:
        uas = Node(osn, tmp, "uas", *SHORT_TIMERS, "--set", "node.element=uas")
        nodes.append(uas)
        c = Caller()
        # 481, and 200 for a BYE of a known call.
        c.request(uas.sip, "BYE", "nocall", "b1", 2, to_tag=";tag=x")
        c.request(uas.sip, "CANCEL", "nocall2", "c1", 1)
        got = finals(c, 0.5)
        check("481 for a BYE and a CANCEL of no call", sorted(got) == [(481, "BYE"),
                                                                       (481, "CANCEL")],
              str(got[:4]))
        c.request(uas.sip, "INVITE", "known", "i2", 1)
        got = finals(c, 0.3)
        c.request(uas.sip, "ACK", "known", "a2", 1, to_tag=";tag=x")
        c.request(uas.sip, "BYE", "known", "b2", 2, to_tag=";tag=x")
        got += finals(c, 0.3)
        check("200 for the BYE of a call answered", (200, "BYE") in got and
              (481, "BYE") not in got, str(got[-2:]))

        # 482: A -> relay -> B -> A.
        path = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        path.bind(("127.0.0.1", 0))
        a = Node(osn, tmp, "edge-a", *SHORT_TIMERS, "--set", "node.element=edge",
                 "--set", f"node.next_hop=127.0.0.1:{path.getsockname()[1]}")
        nodes.append(a)
        b = Node(osn, tmp, "edge-b", *SHORT_TIMERS, "--set", "node.element=edge",
                 "--set", f"node.next_hop=127.0.0.1:{a.sip}")
        nodes.append(b)
        threading.Thread(target=relay, args=(path, a.sip, b.sip, stop), daemon=True).start()
        t0 = time.time()
        c.request(a.sip, "INVITE", "loop", "l1", 1)
        got = finals(c, 1.0)
        check("482 for a request that loops", got[:1] == [(482, "INVITE")],
              f"{got[:2]} after {time.time() - t0:.2f} s")
        m = scrape(a.met)
        check("one 482, at A", m.get("osn_node_loops_482_total") == 1,
              f"loops_482_total {m.get('osn_node_loops_482_total')}")
        c.request(a.sip, "ACK", "loop", "l1", 1, to_tag=";tag=x")

        # 513: an INVITE of about 65,480 bytes to an edge before the uas.
        e = Node(osn, tmp, "edge", *SHORT_TIMERS, "--set", "node.element=edge",
                 "--set", f"node.next_hop=127.0.0.1:{uas.sip}")
        nodes.append(e)
        head = (f"INVITE sip:bob@127.0.0.1 SIP/2.0\r\n"
                f"Via: SIP/2.0/UDP 127.0.0.1:{c.port};branch=z9hG4bKbig\r\n"
                f"Max-Forwards: 70\r\nFrom: <sip:alice@127.0.0.1>;tag=abig\r\n"
                f"To: <sip:bob@127.0.0.1>\r\nCall-ID: big@txn-end\r\nCSeq: 1 INVITE\r\n"
                f"Content-Type: text/plain\r\n")
        body = "x" * (65480 - len(head) - 30)
        msg = (head + f"Content-Length: {len(body)}\r\n\r\n" + body).encode()
        c.s.sendto(msg, ("127.0.0.1", e.sip))
        got = finals(c, 1.0)
        m = scrape(e.met)
        check("513 for a forward too large for UDP", got[:1] == [(513, "INVITE")] and
              m.get("osn_node_too_large_513_total") == 1,
              f"{got[:2]}, a {len(msg)}-byte request")
        c.request(e.sip, "ACK", "big", "big", 1, to_tag=";tag=x")

        for name, live in wait_ended(nodes, 10).items():
            check(f"{name} ends with no transaction", live == 0, f"{live:.0f} live")
    finally:
        stop.set()
        for n in nodes:
            n.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

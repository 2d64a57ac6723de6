#!/usr/bin/env python3
"""Every transaction of `osn node` ends: after each way a transaction can end, and once the
timers have run out, the node holds none (the gauge osn_node_transactions of its metrics port,
live and kept ones, is 0; the edge kept some meanwhile). A leak counts against max_transactions, so enough of them end in a 503 for every call.

The ways driven here, through edge proxies in front of a uas node, with the [sip] timers
shortened (T1 = 20 ms, so Timer B is 1.28 s) so that the test waits seconds, not minutes:
  - calls that succeed: INVITE, 2xx, ACK, BYE, 200;
  - a dead next hop: the client transaction times out (Timer B) and the caller gets a 408,
    which it ACKs (the node once leaked the client transaction of every 408: issue 28);
  - Max-Forwards 0: a 483 without forwarding;
  - a flood against max_transactions = 4: the excess is refused with a stateless 503;
  - a faulty next hop whose 486 keeps only the proxy's Via: the caller gets 502;
  - a caller that never ACKs a final response (Timer H ends the server transaction).

Usage: txn_end.py OSN        prints what it checked; exit 0 when every node ends at 0.
"""
import os
import shutil
import socket
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nodeproc import SHORT_TIMERS, Node, scrape, wait_ended  # noqa: E402


class Caller:
    def __init__(self):
        self.s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.s.bind(("127.0.0.1", 0))
        self.port = self.s.getsockname()[1]

    def request(self, to, method, call, branch, cseq, mf=70, to_tag=""):
        msg = (f"{method} sip:bob@127.0.0.1:{to} SIP/2.0\r\n"
               f"Via: SIP/2.0/UDP 127.0.0.1:{self.port};branch=z9hG4bK{branch}\r\n"
               f"Max-Forwards: {mf}\r\nFrom: <sip:alice@127.0.0.1>;tag=a{call}\r\n"
               f"To: <sip:bob@127.0.0.1>{to_tag}\r\nCall-ID: {call}@txn-end\r\n"
               f"CSeq: {cseq} {method}\r\nContent-Length: 0\r\n\r\n")
        self.s.sendto(msg.encode(), ("127.0.0.1", to))

    def finals(self, want, timeout):
        """The first final response to an INVITE of each Call-ID in `want`, until all have
        come or the time is up (other messages, such as copies of earlier answers, are read
        and passed over)."""
        got, end = {}, time.time() + timeout
        while not set(want) <= set(got) and time.time() < end:
            self.s.settimeout(max(0.01, end - time.time()))
            try:
                text = self.s.recv(65535).decode(errors="replace")
            except socket.timeout:
                break
            status = int(text.split()[1])
            if status < 200 or "INVITE" not in text.split("CSeq:")[1].split("\r\n")[0]:
                continue
            head = {l.split(":", 1)[0].lower(): l.split(":", 1)[1].strip()
                    for l in text.split("\r\n")[1:] if ":" in l}
            call = head["call-id"].split("@")[0]
            tag = head["to"].split("tag=")[1] if "tag=" in head["to"] else ""
            if call in want:
                got.setdefault(call, (status, tag))
        return got


def faulty_next_hop(sock, stop):
    """Answers each INVITE with a 486 that keeps only the top Via (the proxy's own): RFC 3261
    16.7 says such a response is for the proxy, which cannot relay it; the caller must still get
    a final answer and the proxy's server transaction must end (fuzz_node found it stuck in
    Proceeding for good)."""
    sock.settimeout(0.2)
    while not stop.is_set():
        try:
            data, peer = sock.recvfrom(65535)
        except socket.timeout:
            continue
        lines = data.decode(errors="replace").split("\r\n")
        if not lines[0].startswith("INVITE"):
            continue
        vias = [l for l in lines if l.lower().startswith("via:")]
        keep = [l for l in lines[1:] if l.split(":")[0].lower() in ("from", "call-id", "cseq")]
        to = [l + ";tag=faulty" for l in lines if l.lower().startswith("to:")]
        sock.sendto(("SIP/2.0 486 Busy Here\r\n" + "\r\n".join(vias[:1] + keep + to) +
                     "\r\nContent-Length: 0\r\n\r\n").encode(), peer)


def main():
    osn = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="osn_txn_end.")
    dead = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)  # bound, never read: no answer
    dead.bind(("127.0.0.1", 0))
    faulty = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    faulty.bind(("127.0.0.1", 0))
    stop = threading.Event()
    threading.Thread(target=faulty_next_hop, args=(faulty, stop), daemon=True).start()
    nodes, ok = [], True
    try:
        uas = Node(osn, tmp, "uas", *SHORT_TIMERS, "--set", "node.element=uas")
        nodes.append(uas)
        edge = Node(osn, tmp, "edge", *SHORT_TIMERS, "--set", "node.element=edge",
                    "--set", f"node.next_hop=127.0.0.1:{uas.sip}")
        nodes.append(edge)
        to_dead = Node(osn, tmp, "edge-dead", *SHORT_TIMERS, "--set", "node.element=edge",
                       "--set", f"node.next_hop=127.0.0.1:{dead.getsockname()[1]}")
        nodes.append(to_dead)
        capped = Node(osn, tmp, "edge-capped", *SHORT_TIMERS, "--set", "node.element=edge",
                      "--set", f"node.next_hop=127.0.0.1:{uas.sip}",
                      "--set", "node.max_transactions=4")
        nodes.append(capped)
        to_faulty = Node(osn, tmp, "edge-faulty", *SHORT_TIMERS, "--set", "node.element=edge",
                         "--set", f"node.next_hop=127.0.0.1:{faulty.getsockname()[1]}")
        nodes.append(to_faulty)
        c = Caller()
        expect = {}

        def call(node, n, tag, mf=70, ack=True):
            for i in range(n):
                c.request(node.sip, "INVITE", f"{tag}{i}", f"{tag}{i}", 1, mf=mf)
            got = c.finals({f"{tag}{i}" for i in range(n)}, 5)
            for i in range(n):
                status, to_tag = got.get(f"{tag}{i}", (0, ""))
                expect.setdefault(tag, []).append(status)
                if status >= 300 and ack:  # the ACK of a non-2xx: hop by hop, same branch
                    c.request(node.sip, "ACK", f"{tag}{i}", f"{tag}{i}", 1, to_tag=f";tag={to_tag}")
                elif status >= 200 and ack:  # the ACK of a 2xx, then the BYE
                    c.request(node.sip, "ACK", f"{tag}{i}", f"{tag}{i}ack", 1,
                              to_tag=f";tag={to_tag}")
                    c.request(node.sip, "BYE", f"{tag}{i}", f"{tag}{i}bye", 2,
                              to_tag=f";tag={to_tag}")
            c.finals({"none"}, 0.2)  # the BYEs' answers, drained

        call(edge, 20, "ok")
        # Their final waits are kept compact (src/node/kept.c), and counted in the gauge too.
        kept = scrape(edge.met).get("osn_node_transactions_kept", 0)
        if not kept:
            print("FAIL: the edge kept none of the ok calls' transactions in their final wait")
            ok = False
        call(to_dead, 20, "dead")
        call(edge, 3, "mf0", mf=0)
        call(to_dead, 3, "noack", ack=False)
        call(capped, 12, "flood")
        call(to_faulty, 5, "faulty")
        want = {"ok": {200}, "dead": {408}, "mf0": {483}, "noack": {408}, "flood": {200, 503},
                "faulty": {502}}
        for tag, statuses in expect.items():
            if not set(statuses) <= want[tag] or 0 in statuses:
                print(f"FAIL: {tag}: final statuses {sorted(set(statuses))}, want {want[tag]}")
                ok = False
        if 503 not in expect["flood"]:
            print("FAIL: the flood never reached max_transactions (no 503)")
            ok = False
        # The longest wait: Timer B (64 T1 = 1.28 s) then Timer H (64 T1) for the unACKed 408s;
        # the UAS's Timer J/K and the 2xx's Accepted state are shorter. 15 s is a generous bound.
        for name, live in wait_ended(nodes, 15).items():
            print(f"{name}: {live:.0f} live transactions after the timers ran out")
            if live:
                print(f"FAIL: {name} leaked {live:.0f} transactions")
                ok = False
    finally:
        stop.set()
        for n in nodes:
            n.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

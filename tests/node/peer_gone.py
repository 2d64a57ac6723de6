#!/usr/bin/env python3
"""A peer that went away costs no other peer a datagram. The node's sockets queue ICMP errors
(IP_RECVERR, udp.c); on Linux such a socket also keeps the error pending, and its next send
fails with ECONNREFUSED: the error of the datagram that drew it, not of the datagram at hand.
An edge that answered a caller who has closed its port must still answer the next caller.

Each round: the edge (costs 0: each request handled as it is read) is stopped (SIGSTOP);
caller A sends an INVITE and closes its port; caller B sends an INVITE; the edge is continued
(SIGCONT) and reads both in one batch. Its 100 Trying to A draws ICMP port unreachable on the
listening socket, its INVITE to the next hop leaves by the next hop's socket, then its 100
Trying to B leaves by the listening socket again: without a retry that send fails with A's
error and B never hears its 100. Over ROUNDS rounds B must get ROUNDS 100s, the JSON summary
must count no send error and one peer_unreachable per 100 A could not take (its INVITE's
100, and nothing else: A's INVITE is forwarded, its transaction waits for the next hop).

Usage: peer_gone.py OSN        exit 0 when no innocent datagram was lost.
"""
import os
import shutil
import signal
import socket
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nodeproc  # noqa: E402

ROUNDS = 5


def invite(host, me, tag):
    return (f"INVITE sip:b@{host} SIP/2.0\r\n"
            f"Via: SIP/2.0/UDP {host}:{me};branch=z9hG4bKgone{tag}\r\nMax-Forwards: 70\r\n"
            f"From: <sip:a@{host}>;tag={tag}\r\nTo: <sip:b@{host}>\r\n"
            f"Call-ID: gone{tag}@test\r\nCSeq: 1 INVITE\r\nContent-Length: 0\r\n\r\n").encode()


def main():
    osn = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="osn_peer_gone.")
    hop = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)  # a next hop that hears, not answers
    hop.bind(("127.0.0.1", 0))
    costs = [a for k in ("invite", "retrans", "response", "ack", "bye", "reject", "cancel")
             for a in ("--set", f"server edge.cost_{k}=0")]
    node = nodeproc.Node(osn, tmp, "edge", "--set", "node.element=edge", "--set",
                         f"node.next_hop=127.0.0.1:{hop.getsockname()[1]}", *costs,
                         metrics=False, summary=True, seconds=60)
    b = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    b.bind(("127.0.0.1", 0))
    b.settimeout(2)
    got_b = 0
    try:
        pid = node.pid()
        for i in range(ROUNDS):
            a = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            a.bind(("127.0.0.1", 0))
            os.kill(pid, signal.SIGSTOP)
            a.sendto(invite("127.0.0.1", a.getsockname()[1], f"a{i}"), ("127.0.0.1", node.sip))
            a.close()
            b.sendto(invite("127.0.0.1", b.getsockname()[1], f"b{i}"), ("127.0.0.1", node.sip))
            os.kill(pid, signal.SIGCONT)
            try:
                while True:  # B's 100 Trying, within 2 s
                    status, _, _ = nodeproc.parse_response(b.recv(65535).decode())
                    if status == 100:
                        got_b += 1
                        break
            except socket.timeout:
                pass
            time.sleep(0.05)
    finally:
        rc = node.stop()
    s = node.summary()
    print(f"B's 100 Trying: {got_b} of {ROUNDS}; send_errors {s.get('send_errors')}, "
          f"peer_unreachable {s.get('peer_unreachable')}, datagrams_out "
          f"{s.get('datagrams_out')}; exit {rc}")
    bad = []
    if got_b != ROUNDS:
        bad.append(f"B lost {ROUNDS - got_b} 100 Trying (A's ICMP error taken for B's)")
    if s.get("send_errors") != 0:
        bad.append("send_errors counts datagrams that were not at fault")
    if s.get("peer_unreachable") != ROUNDS:
        bad.append(f"peer_unreachable is not {ROUNDS} (one per 100 Trying A could not take)")
    if rc != 0:
        bad.append(f"the node exited {rc}")
    for m in bad:
        print("FAIL: " + m)
    shutil.rmtree(tmp, ignore_errors=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

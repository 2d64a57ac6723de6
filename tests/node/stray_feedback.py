#!/usr/bin/env python3
"""A response that matches nothing the node sent cannot throttle it: RFC 7339 feedback is read
from a stray response only when it comes from a next hop's own address (node security).

An edge with control loss (one next hop, then two) before next hops that are UDP sockets here:

  stranger  a socket that is not a next hop sends the edge a 200 OK it never asked for, its top
            Via the edge's own with oc=100 (shed every request): the throttle gauge stays 0,
            the datagram is counted as stray, and a new INVITE is still forwarded. Before the
            fix an edge with one next hop took any response's feedback as that hop's, so one
            forged datagram from anywhere made it shed all its calls with 503.
  next hop  the same datagram from the next hop's own socket (a late answer of the server the
            edge sends to, whose transaction has ended) still feeds that server's client half,
            as the simulator does: the gauge reads 100.
  fanout    with two next hops, a stranger's datagram feeds neither; from the second next hop it
            feeds that one only.

Usage: stray_feedback.py OSN     exit 0 when every check held, 1 otherwise.
"""
import os
import socket
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nodeproc import Node, scrape  # noqa: E402  (port 0, the listening line read one way)

failures = 0
STRAY = 'osn_node_stray_total'


def fail(msg):
    global failures
    failures += 1
    print("FAIL " + msg)


def udp():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    s.settimeout(5)
    return s


def forged_200(edge_port, tag):
    """A 200 OK to an INVITE the edge never forwarded, with RFC 7339 feedback of oc=100."""
    return (f"SIP/2.0 200 OK\r\n"
            f"Via: SIP/2.0/UDP 127.0.0.1:{edge_port};branch=z9hG4bKforged{tag};oc=100;"
            f'oc-algo="loss";oc-validity=30000;oc-seq=1282321615.{tag}\r\n'
            f"From: <sip:alice@127.0.0.1>;tag=a{tag}\r\nTo: <sip:bob@127.0.0.1>;tag=b{tag}\r\n"
            f"Call-ID: forged-{tag}@127.0.0.1\r\nCSeq: 1 INVITE\r\n"
            f"Content-Length: 0\r\n\r\n").encode()


def invite(edge_port, me, tag):
    return (f"INVITE sip:bob@127.0.0.1:{edge_port} SIP/2.0\r\n"
            f"Via: SIP/2.0/UDP 127.0.0.1:{me};branch=z9hG4bKstray{tag}\r\n"
            f"Max-Forwards: 70\r\nFrom: <sip:alice@127.0.0.1>;tag=c{tag}\r\n"
            f"To: <sip:bob@127.0.0.1>\r\nCall-ID: stray-{tag}@127.0.0.1\r\n"
            f"CSeq: 1 INVITE\r\nContact: <sip:alice@127.0.0.1:{me}>\r\n"
            f"Content-Length: 0\r\n\r\n").encode()


def settle(n, stray, seconds=5):
    """Waits until the edge has counted `stray` stray datagrams; its metrics then."""
    end = time.monotonic() + seconds
    while True:
        got = scrape(n.met)
        if got.get(STRAY, -1) >= stray or \
                time.monotonic() > end:
            return got


def check_one(osn, tmp):
    hop, stranger, caller = udp(), udp(), udp()
    n = Node(osn, tmp, "node", "--set", "node.element=edge", "--set", "control.kind=loss",
             "--set", f"node.next_hop=127.0.0.1:{hop.getsockname()[1]}",
             "--set", "node.duration=40", seconds=60)
    key = 'osn_node_client_shed_percent{element="edge"}'
    try:
        stranger.sendto(forged_200(n.sip, 1), ("127.0.0.1", n.sip))
        got = settle(n, 1)
        if got.get(key) != 0 or got.get(STRAY) != 1:
            fail(f"stranger: {key} = {got.get(key)}, stray = {got.get(STRAY)}; want 0 and 1")
        else:
            print(f"ok   stranger: {key} 0 after a forged oc=100 from a stranger, 1 stray")
        caller.sendto(invite(n.sip, caller.getsockname()[1], 1), ("127.0.0.1", n.sip))
        req = hop.recv(65535).decode(errors="replace")
        if not req.startswith("INVITE "):
            fail(f"stranger: the next hop got {req.splitlines()[0]!r}, want the INVITE")
        else:
            print("ok   stranger: a new INVITE is still forwarded")
        hop.sendto(forged_200(n.sip, 2), ("127.0.0.1", n.sip))
        got = settle(n, 2)
        if got.get(key) != 100:
            fail(f"next hop: {key} = {got.get(key)} after oc=100 from the next hop, want 100")
        else:
            print(f"ok   next hop: {key} 100 after a stray oc=100 from the next hop itself")
    except (OSError, ValueError) as e:
        fail(f"one next hop: {e!r}: " + n.stderr()[-1000:])
    finally:
        n.stop()
        for s in (hop, stranger, caller):
            s.close()


def check_fanout(osn, tmp):
    hops, stranger = [udp(), udp()], udp()
    names = [f"127.0.0.1:{h.getsockname()[1]}" for h in hops]
    n = Node(osn, tmp, "node", "--set", "node.element=edge", "--set", "control.kind=loss",
             "--set", "node.next_hop=" + ", ".join(names), "--set", "node.duration=40",
             seconds=60)
    keys = [f'osn_node_client_shed_percent{{element="edge",server="{s}"}}' for s in names]
    try:
        stranger.sendto(forged_200(n.sip, 3), ("127.0.0.1", n.sip))
        got = settle(n, 1)
        if [got.get(k) for k in keys] != [0, 0]:
            fail(f"fanout stranger: {[got.get(k) for k in keys]}, want [0, 0]")
        else:
            print("ok   fanout: a stranger's oc=100 feeds neither server")
        hops[1].sendto(forged_200(n.sip, 4), ("127.0.0.1", n.sip))
        got = settle(n, 2)
        if [got.get(k) for k in keys] != [0, 100]:
            fail(f"fanout next hop: {[got.get(k) for k in keys]}, want [0, 100]")
        else:
            print("ok   fanout: the second server's own oc=100 feeds it alone")
    except (OSError, ValueError) as e:
        fail(f"fanout: {e!r}: " + n.stderr()[-1000:])
    finally:
        n.stop()
        for s in hops + [stranger]:
            s.close()


def main():
    osn = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="osn_stray_feedback.")
    check_one(osn, tmp)
    check_fanout(osn, tmp)
    print(f"{failures} failed")
    sys.exit(1 if failures else 0)


main()

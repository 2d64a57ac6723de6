#!/usr/bin/env python3
"""With workers, a TCP next hop that answers on a new connection to our Via's sent-by reaches
the worker that holds the transaction (docs/node.md, "TCP and workers"; src/node/tcp.c).

An edge of 2 workers, listening on UDP and TCP, forwards INVITEs over TCP to this script's next
hop. Each proxy worker names its own port in its Via (workers.c); the next hop reads the
INVITE's top Via (SIP/2.0/TCP HOST:PORT) and sends its 200 OK on a new connection to
HOST:PORT (RFC 3261 18.2.2: what a server does when the request's connection is gone; some
peers always do it), closing the one the INVITE came on. Callers send CALLS INVITEs over UDP,
each from a socket of its own (the kernel spreads them over the workers).

Checks: every caller gets its 200; the Vias named 2 ports (both workers forwarded), each of
which accepted a TCP connection; the edge counted no stray message (a response on the wrong
worker is one). Without TCP on a worker's own port, the next hop's connect is refused and no
caller gets a 200.

Usage: tcp_workers_via.py OSN        exit 0 when every response came back.
"""
import os
import re
import shutil
import socket
import sys
import tempfile
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nodeproc  # noqa: E402

CALLS = 12


def read_msg(conn, buf):
    """One SIP message from TCP connection conn (framed by Content-Length), and what is left;
    (None, b"") at its end."""
    while b"\r\n\r\n" not in buf:
        chunk = conn.recv(65535)
        if not chunk:
            return None, b""
        buf += chunk
    head, _, rest = buf.partition(b"\r\n\r\n")
    m = re.search(rb"(?im)^(?:content-length|l)\s*:\s*(\d+)", head)
    size = int(m.group(1)) if m else 0
    while len(rest) < size:
        chunk = conn.recv(65535)
        if not chunk:
            return None, b""
        rest += chunk
    return head.decode() + "\r\n\r\n" + rest[:size].decode(), rest[size:]


class NextHop:
    """A TCP next hop that answers each INVITE 200 on a new connection to its top Via."""

    def __init__(self):
        self.srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.srv.bind(("127.0.0.1", 0))
        self.srv.listen(64)
        self.srv.settimeout(0.5)
        self.port = self.srv.getsockname()[1]
        self.via_ports, self.refused, self.answered = set(), [], 0
        self.stop = False
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def run(self):
        while not self.stop:
            try:
                conn, _ = self.srv.accept()
            except socket.timeout:
                continue
            conn.settimeout(5)
            threading.Thread(target=self.serve, args=(conn,), daemon=True).start()

    def serve(self, conn):
        buf = b""
        try:
            while True:
                msg, buf = read_msg(conn, buf)
                if msg is None or not msg.startswith("INVITE "):
                    if msg is None:
                        return
                    continue
                self.answer(msg)
        except OSError:
            pass
        finally:
            conn.close()

    def answer(self, msg):
        head = msg.split("\r\n\r\n", 1)[0].split("\r\n")
        keep = [h for h in head[1:] if re.match(r"(?i)(via|from|to|call-id|cseq)\s*:", h)]
        top = next(h for h in keep if h.lower().startswith("via"))
        m = re.search(r"SIP/2\.0/TCP\s+([^:;\s]+):(\d+)", top)
        if not m:
            self.refused.append("top Via is not TCP: " + top)
            return
        host, port = m.group(1), int(m.group(2))
        self.via_ports.add(port)
        resp = ["SIP/2.0 200 OK"] + [h + ";tag=nh" if h.lower().startswith("to") else h
                                     for h in keep]
        resp += ["Contact: <sip:nh@127.0.0.1>", "Content-Length: 0", "", ""]
        try:
            out = socket.create_connection((host, port), timeout=2)
            out.sendall("\r\n".join(resp).encode())
            out.close()
            self.answered += 1
        except OSError as e:
            self.refused.append(f"{host}:{port}: {e}")


def invite(port, i):
    return (f"INVITE sip:b@127.0.0.1 SIP/2.0\r\n"
            f"Via: SIP/2.0/UDP 127.0.0.1:{port};branch=z9hG4bKtcpvia{i}\r\nMax-Forwards: 70\r\n"
            f"From: <sip:a@127.0.0.1>;tag=a{i}\r\nTo: <sip:b@127.0.0.1>\r\n"
            f"Call-ID: tcpvia{i}@test\r\nCSeq: 1 INVITE\r\n"
            f"Contact: <sip:a@127.0.0.1:{port}>\r\nContent-Length: 0\r\n\r\n").encode()


def main():
    osn = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="osn_tcp_via.")
    hop = NextHop()
    costs = [a for k in ("invite", "retrans", "response", "ack", "bye", "reject", "cancel")
             for a in ("--set", f"server edge.cost_{k}=0")]
    node = nodeproc.Node(osn, tmp, "edge", "--set", "node.element=edge", "--set",
                         "node.workers=2", "--set",
                         f"node.next_hop=127.0.0.1:{hop.port};transport=tcp", *costs,
                         listen="127.0.0.1:0;transport=tcp", metrics=False, summary=True,
                         seconds=60)
    callers = []
    for i in range(CALLS):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("127.0.0.1", 0))
        s.settimeout(0.2)
        s.sendto(invite(s.getsockname()[1], i), ("127.0.0.1", node.sip))
        callers.append(s)
    got = 0
    for s in callers:
        for _ in range(25):  # 5 s at most for each
            try:
                status, _, _ = nodeproc.parse_response(s.recv(65535).decode())
            except socket.timeout:
                continue
            if status == 200:
                got += 1
                break
        s.close()
    rc = node.stop()
    hop.stop = True
    hop.thread.join(2)
    summary = node.summary()
    stray = summary.get("stray")
    print(f"200 OK back to {got} of {CALLS} callers; Via ports {sorted(hop.via_ports)} "
          f"(listen {node.sip}); next hop answered {hop.answered}, could not "
          f"{len(hop.refused)}{': ' + hop.refused[0] if hop.refused else ''}; stray {stray}; "
          f"exit {rc}")
    bad = []
    if got != CALLS:
        bad.append(f"{CALLS - got} callers got no 200")
    if len(hop.via_ports) != 2:
        bad.append("the INVITEs' Vias did not name 2 ports (one per worker)")
    if hop.refused:
        bad.append("a Via's sent-by took no TCP connection")
    if stray != 0:
        bad.append("a response reached a worker that does not hold its transaction")
    if rc != 0:
        bad.append(f"the node exited {rc}")
    for b in bad:
        print("FAIL: " + b)
    shutil.rmtree(tmp, ignore_errors=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""`osn node` over TCP (RFC 3261 18) against peers written here, each reading the stream by
its own framing (Content-Length, 18.3), about 30 s:

  framing   a uas listening on TCP: an INVITE sent in three pieces and two INVITEs in one write
            are each answered 180 and 200 on the same connection; a double CRLF (RFC 5626
            3.5.1's ping) gets one CRLF back (4.4.1); a request without Content-Length gets 400
            and the connection is closed (18.3: mandatory on a stream; the node's choice of
            "400 and close", since the next message's start is unknown).
  next hop  an edge whose next hop is ;transport=tcp, in front of a socket of this script: while
            the socket is bound but not listening the connect is refused and the caller gets 500
            at once (RFC 3261 16.9: the transport error is a 503 from the next hop; 16.7 step 6:
            the only response a 503, the proxy answers 500), not Timer B's 408 after 32 s; once
            it listens the edge opens the connection again, its INVITE has Via SIP/2.0/TCP and
            comes once (no Timer A: no copy in 1.7 s, where UDP sends copies at 0.5 and 1.5 s),
            and the 200 sent back on it reaches the caller; a connection closed under a pending
            INVITE: 500 at once.
  dialog    an edge on TCP both ways (caller and next hop this script's): its Record-Route says
            ;transport=tcp (16.6 step 4); a copy of the 200 from the next hop reaches the
            INVITE client kept in Accepted (RFC 6026 7.2; kept.c) and is relayed on the caller's
            connection, byte for byte the first relay; the ACK and BYE routed by that
            Record-Route to a Request-URI with ;transport=tcp go over a TCP connection the edge
            opens to it; a 200 whose caller closed its connection goes to the caller's Via
            sent-by over a new connection (18.2.2).
  double_rr an edge listening on UDP and TCP between a caller over UDP and a next hop over TCP
            (RFC 5658): its INVITE carries two Record-Route values, the TCP one on top; the ACK
            and the caller's BYE, routed by the reversed set over UDP, reach the callee over TCP
            with both of the edge's Route values removed; the callee's BYE, routed over TCP by the
            set in order, reaches the caller over UDP, and each 200 comes back; with the legs the
            other way round (TCP caller, UDP next hop) the UDP value is on top.
  hostile   on the uas (tcp_buffer 65,535, tcp_idle_timeout 3 s, tcp_max_connections 1,050): a
            peer sending a header with no end and never reading is closed at 65,535 bytes; a
            peer sending INVITEs and never reading its answers is paused (its output over half
            of tcp_buffer), then closed; 1,000 idle connections cost the node less than 16 MiB
            of RSS, a new TCP and a UDP caller are still answered meanwhile, 100 more connections
            find exactly 50 places (the other 50 are closed at once), and all are closed after
            the idle timeout. The counts are read back from the JSON summary.

Usage: tcp.py OSN [PART..]   exit 0 when every check passes (PART: framing, next_hop, dialog,
                             double_rr, hostile; all by default).
"""
import os
import re
import resource
import socket
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nodeproc  # noqa: E402

FAILS = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        FAILS.append(what)


class Node(nodeproc.Node):
    """A node listening at `listen`, no metrics port, its JSON summary returned by stop()."""

    def __init__(self, osn, tmp, name, listen, *sets):
        super().__init__(osn, tmp, name, *sets, listen=listen, metrics=False, summary=True,
                         seconds=150)

    def stop(self):
        rc = super().stop()
        check(rc == 0, f"{self.name} exits 0 on SIGTERM ({rc}): {self.stderr()[-600:]}")
        return self.summary()


def invite(call, via, port, body=""):
    """An INVITE of Call-ID `call` with top Via `via`, Content-Length right."""
    return (f"INVITE sip:bob@127.0.0.1:{port} SIP/2.0\r\nVia: {via};branch=z9hG4bK{call}\r\n"
            f"Max-Forwards: 70\r\nFrom: <sip:alice@127.0.0.1>;tag=a{call}\r\n"
            f"To: <sip:bob@127.0.0.1>\r\nCall-ID: {call}@tcp-test\r\nCSeq: 1 INVITE\r\n"
            f"Contact: <sip:alice@127.0.0.1>\r\n"
            + (f"Content-Type: application/sdp\r\n" if body else "")
            + f"Content-Length: {len(body.encode())}\r\n\r\n{body}").encode()


class Stream:
    """A TCP connection read as RFC 3261 18.3 says: a header, a blank line, Content-Length
    bytes."""

    def __init__(self, port=None, sock=None):
        self.s = sock or socket.create_connection(("127.0.0.1", port), timeout=5)
        self.buf = b""
        self.eof = False

    def message(self, timeout):
        end = time.monotonic() + timeout
        while True:
            while self.buf.startswith(b"\r\n"):
                self.buf = self.buf[2:]
            h = self.buf.find(b"\r\n\r\n")
            if h >= 0:
                m = re.search(rb"\r\n(?:content-length|l)[ \t]*:[ \t]*(\d+)", self.buf[:h + 2],
                              re.I)
                n = h + 4 + (int(m.group(1)) if m else 0)
                if len(self.buf) >= n:
                    msg, self.buf = self.buf[:n], self.buf[n:]
                    return msg.decode(errors="replace")
            left = end - time.monotonic()
            if left <= 0 or self.eof:
                return None
            self.s.settimeout(left)
            try:
                chunk = self.s.recv(65536)
            except socket.timeout:
                return None
            except ConnectionError:
                chunk = b""
            if not chunk:
                self.eof = True
            self.buf += chunk

    def statuses(self, want, timeout):
        """Statuses of the responses read until `want` (a status) has come, for each call."""
        got, end = [], time.monotonic() + timeout
        while time.monotonic() < end:
            m = self.message(end - time.monotonic())
            if m is None:
                break
            if m.startswith("SIP/2.0 "):
                got.append((int(m.split()[1]), re.search(r"Call-ID: (\S+)", m).group(1)))
            if want(got):
                break
        return got

    def closed(self, timeout):
        """Whether the peer closed the connection within `timeout` (what is unread is read)."""
        end = time.monotonic() + timeout
        while not self.eof and time.monotonic() < end:
            self.message(end - time.monotonic())
        return self.eof


def ack(st, via, port, got):
    """The ACK of each 200 in `got`, at once: the uas resends a 2xx until its ACK (RFC 3261
    13.3.1.4, on any transport), which would count as a retransmission here."""
    for status, call in got:
        if status == 200:
            c = call.split("@")[0]
            st.s.sendall(invite(c, via, port).replace(b"INVITE", b"ACK")
                         .replace(b"z9hG4bK" + c.encode(), b"z9hG4bKack" + c.encode()))


def two_hundreds(calls):
    return lambda got: {c for s, c in got if s == 200} >= {f"{c}@tcp-test" for c in calls}


def framing(osn, tmp):
    uas = Node(osn, tmp, "uas-framing", "127.0.0.1:0;transport=tcp")
    via = "SIP/2.0/TCP 127.0.0.1:9"
    # A ping on a connection of its own: the answer is exactly one CRLF.
    s = socket.create_connection(("127.0.0.1", uas.port), timeout=5)
    s.sendall(b"\r\n\r\n")
    s.settimeout(3)
    pong = b""
    try:
        while len(pong) < 2:
            c = s.recv(16)
            if not c:
                break
            pong += c
    except socket.timeout:
        pass
    check(pong == b"\r\n", f"a double CRLF (RFC 5626 ping) gets one CRLF back ({pong!r})")
    s.close()
    # One INVITE in three writes (cut in its header and in its body), then two in one write.
    st = Stream(uas.port)
    sdp = "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"
    one = invite("f1", via, uas.port, sdp)
    for part in (one[:40], one[40:len(one) - 10], one[len(one) - 10:]):
        st.s.sendall(part)
        time.sleep(0.2)
    got = st.statuses(two_hundreds(["f1"]), 5)
    ack(st, via, uas.port, got)
    check((180, "f1@tcp-test") in got and (200, "f1@tcp-test") in got,
          f"an INVITE in three pieces: 180 and 200 on its connection ({got})")
    st.s.sendall(invite("f2", via, uas.port) + invite("f3", via, uas.port, sdp))
    got = st.statuses(two_hundreds(["f2", "f3"]), 5)
    ack(st, via, uas.port, got)
    check(sorted(c for s, c in got if s == 200) == ["f2@tcp-test", "f3@tcp-test"],
          f"two INVITEs in one write: a 200 each ({got})")
    # No Content-Length: 400, then the connection is closed.
    bad = re.sub(rb"Content-Length: \d+\r\n", b"", invite("f4", via, uas.port))
    st.s.sendall(bad)
    got = st.statuses(lambda g: any(s == 400 for s, c in g), 5)
    check((400, "f4@tcp-test") in got, f"an INVITE without Content-Length: 400 ({got})")
    check(st.closed(3), "and the connection closed after it")
    d = uas.stop()
    check(d.get("tcp_bad_framing") == 1 and d.get("retrans_sent") == 0,
          f"JSON: tcp_bad_framing 1 ({d.get('tcp_bad_framing')}), retrans_sent 0 "
          f"({d.get('retrans_sent')}), tcp_msgs_in {d.get('tcp_msgs_in')}")


def next_hop(osn, tmp):
    hop = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    hop.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    hop.bind(("127.0.0.1", 0))  # bound, not listening: a connect is refused
    hp = hop.getsockname()[1]
    edge = Node(osn, tmp, "edge-hop", "127.0.0.1:0",
                "--set", "node.element=edge", "--set", f"node.next_hop=127.0.0.1:{hp};transport=tcp")
    caller = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    caller.bind(("127.0.0.1", 0))
    via = f"SIP/2.0/UDP 127.0.0.1:{caller.getsockname()[1]}"

    def final(call, timeout):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            caller.settimeout(max(0.01, end - time.monotonic()))
            try:
                m = caller.recv(65535).decode(errors="replace")
            except socket.timeout:
                return None, None
            st = int(m.split()[1])
            if st >= 200 and f"Call-ID: {call}@tcp-test" in m:
                if st >= 300:  # its ACK (RFC 3261 17.1.1.3), so that the edge resends nothing
                    to = re.search(r"\r\nTo: ([^\r]*)", m).group(1)
                    ack = invite(call, via, edge.port).replace(b"INVITE", b"ACK")
                    ack = re.sub(rb"To: [^\r]*", b"To: " + to.encode(), ack)
                    caller.sendto(ack, ("127.0.0.1", edge.port))
                return st, time.monotonic()
        return None, None

    t0 = time.monotonic()
    caller.sendto(invite("h1", via, edge.port), ("127.0.0.1", edge.port))
    st, t = final("h1", 10)
    check(st == 500 and t - t0 < 2,
          f"next hop refuses the connection: 500 in {(t or t0 + 99) - t0:.2f} s ({st})")
    hop.listen(4)
    t0 = time.monotonic()
    caller.sendto(invite("h2", via, edge.port), ("127.0.0.1", edge.port))
    hop.settimeout(5)
    try:
        conn, _ = hop.accept()
    except socket.timeout:
        conn = None
    check(conn is not None, "the edge opens the connection again")
    if conn:
        down = Stream(sock=conn)
        m = down.message(5) or ""
        top = re.search(r"\r\nVia: ([^\r]*)", m)
        check(m.startswith("INVITE ") and top and
              top.group(1).startswith(f"SIP/2.0/TCP 127.0.0.1:{edge.port};branch=z9hG4bK"),
              f"the INVITE has Via SIP/2.0/TCP ({top.group(1) if top else m[:60]!r})")
        again = down.message(1.7)
        check(again is None, f"no copy of it in 1.7 s (no Timer A over TCP): {again!r:.40}")
        head = m.split("\r\n\r\n")[0].split("\r\n")
        vias = [l for l in head if l.startswith("Via:")]
        resp = ("SIP/2.0 200 OK\r\n" + "\r\n".join(vias) + "\r\n" +
                "\r\n".join(l for l in head if l.split(":")[0] in ("From", "Call-ID", "CSeq")) +
                "\r\nTo: <sip:bob@127.0.0.1>;tag=b\r\nContact: <sip:bob@127.0.0.1>\r\n"
                "Content-Length: 0\r\n\r\n")
        conn.sendall(resp.encode())
        st, _ = final("h2", 5)
        check(st == 200, f"the 200 on that connection reaches the caller ({st})")
        # A connection closed under a pending INVITE: its transaction's transport error.
        t0 = time.monotonic()
        caller.sendto(invite("h3", via, edge.port), ("127.0.0.1", edge.port))
        m = down.message(5) or ""
        check("Call-ID: h3@tcp-test" in m, "the next INVITE on the same connection")
        conn.close()
        st, t = final("h3", 10)
        check(st == 500 and t - t0 < 2,
              f"connection closed under it: 500 in {(t or t0 + 99) - t0:.2f} s ({st})")
    d = edge.stop()
    check(d.get("tcp_connects", 0) >= 2 and d.get("transport_500") == 2 and
          d.get("timeouts_408") == 0 and d.get("retrans_sent") == 0,
          f"JSON: tcp_connects {d.get('tcp_connects')} >= 2, transport_500 "
          f"{d.get('transport_500')} = 2, timeouts_408 {d.get('timeouts_408')} = 0, "
          f"retrans_sent {d.get('retrans_sent')} = 0")
    # The refused connect is a failure; the close of the connection by its peer (a FIN, no
    # reset) is not, and is counted apart (the transaction on it still fails: 500 above).
    check(d.get("tcp_connect_failed") == 1 and d.get("tcp_closed_by_peer") == 1,
          f"JSON: tcp_connect_failed {d.get('tcp_connect_failed')} = 1 (the refused connect), "
          f"tcp_closed_by_peer {d.get('tcp_closed_by_peer')} = 1 (the next hop's close)")
    hop.close()


def listener():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind(("127.0.0.1", 0))
    s.listen(4)
    s.settimeout(5)
    return s, s.getsockname()[1]


def accepted(lsock):
    try:
        return Stream(sock=lsock.accept()[0])
    except socket.timeout:
        return None


def answer(req, status="200 OK", contact=""):
    """A UAS's answer to request text `req` (RFC 3261 8.2.6.2): its Vias, From, Call-ID, CSeq,
    its To with a tag."""
    head = req.split("\r\n\r\n")[0].split("\r\n")
    keep = [l for l in head if l.split(":")[0] in ("Via", "From", "Call-ID", "CSeq",
                                                     "Record-Route")]
    to = [l for l in head if l.startswith("To:")][0]
    if ";tag=" not in to:
        to += ";tag=b"
    return (f"SIP/2.0 {status}\r\n" + "\r\n".join(keep + [to]) +
            (f"\r\nContact: <{contact}>" if contact else "") +
            "\r\nContent-Length: 0\r\n\r\n").encode()


def in_dialog(method, edge, via_port, call, cseq, target, rr):
    """The caller's ACK or BYE of call `call`: Route our Record-Route (12.2.1.1), Request-URI
    the callee's Contact."""
    return (f"{method} {target} SIP/2.0\r\n"
            f"Via: SIP/2.0/TCP 127.0.0.1:{via_port};branch=z9hG4bK{method}{call}\r\n"
            f"Route: {rr}\r\nMax-Forwards: 70\r\nFrom: <sip:alice@127.0.0.1>;tag=a{call}\r\n"
            f"To: <sip:bob@127.0.0.1>;tag=b\r\nCall-ID: {call}@tcp-test\r\n"
            f"CSeq: {cseq} {method}\r\nContent-Length: 0\r\n\r\n").encode()


def next_final(st, what, timeout):
    """The next response on stream st whose CSeq line ends with `what` and whose status is
    final (a 100 Trying passed over)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        m = st.message(end - time.monotonic())
        if m is None:
            return ""
        cseq = re.search(r"\r\nCSeq: ([^\r]*)", m)
        if m.startswith("SIP/2.0 ") and int(m.split()[1]) >= 200 and cseq and \
                cseq.group(1).endswith(what):
            return m
    return ""


def dialog(osn, tmp):
    down, dp = listener()    # the next hop
    callee, cp = listener()  # the callee's Contact: not a next hop, reached by its URI only
    back, bp = listener()    # the caller's sent-by: where a response goes when its connection is gone
    edge = Node(osn, tmp, "edge-dialog", "127.0.0.1:0;transport=tcp",
                "--set", "node.element=edge", "--set", f"node.next_hop=127.0.0.1:{dp};transport=tcp")
    via = f"SIP/2.0/TCP 127.0.0.1:{bp}"
    up = Stream(edge.port)
    up.s.sendall(invite("d1", via, edge.port))
    hop = accepted(down)
    m = (hop.message(5) if hop else None) or ""
    rr = re.search(r"\r\nRecord-Route: ([^\r]*)", m)
    want_rr = f"<sip:127.0.0.1:{edge.port};transport=tcp;lr>"
    check(rr is not None and rr.group(1) == want_rr,
          f"INVITE over TCP both ways: Record-Route {rr.group(1) if rr else None}, want {want_rr}")
    target = f"sip:bob@127.0.0.1:{cp};transport=tcp"
    ok = answer(m, contact=target) if m else b""
    if hop:
        hop.s.sendall(ok)
    first = next_final(up, "INVITE", 5)
    time.sleep(0.3)  # both INVITE transactions in Accepted: kept
    if hop:
        hop.s.sendall(ok)  # a UAS resends its 2xx until the ACK (RFC 3261 13.3.1.4)
    again = next_final(up, "INVITE", 3)
    check(first.startswith("SIP/2.0 200") and again == first,
          f"a copy of the 200 at the kept INVITE client is relayed on the caller's connection, "
          f"byte for byte ({len(first)}, {len(again)} bytes)")
    route = want_rr if rr else f"<sip:127.0.0.1:{edge.port};lr>"
    up.s.sendall(in_dialog("ACK", edge, bp, "d1", 1, target, route))
    far = accepted(callee)
    m = (far.message(5) if far else None) or ""
    top = re.search(r"\r\nVia: ([^\r]*)", m)
    check(m.startswith(f"ACK {target} ") and top and top.group(1).startswith("SIP/2.0/TCP "),
          f"the ACK routed to a Request-URI with ;transport=tcp goes over TCP "
          f"({top.group(1)[:40] if top else m[:40]!r})")
    up.s.sendall(in_dialog("BYE", edge, bp, "d1", 2, target, route))
    m = (far.message(5) if far else None) or ""
    check(m.startswith(f"BYE {target} "), f"the BYE too, on the same connection ({m[:40]!r})")
    if m:
        far.s.sendall(answer(m))
    got = next_final(up, "BYE", 5)
    check(got.startswith("SIP/2.0 200") and "CSeq: 2 BYE" in got,
          f"its 200 back on the caller's connection ({got[:30]!r})")
    # RFC 3261 18.2.2: the caller's connection gone when the response comes.
    up2 = Stream(edge.port)
    up2.s.sendall(invite("d2", via, edge.port))
    m = hop.message(5) if hop else None
    up2.s.close()
    time.sleep(0.5)  # the edge sees the close before the answer comes
    if m:
        hop.s.sendall(answer(m, "486 Busy Here"))
    fb = accepted(back)
    got = (fb.message(5) if fb else None) or ""
    check(got.startswith("SIP/2.0 486") and "Call-ID: d2@tcp-test" in got,
          f"its connection closed, the 486 comes over a new connection to the Via's sent-by "
          f"127.0.0.1:{bp} ({got[:30]!r})")
    d = edge.stop()
    check(d.get("kept_peak", 0) >= 2 and d.get("tcp_fallback") == 1 and
          d.get("transport_500") == 0,
          f"JSON: kept_peak {d.get('kept_peak')} >= 2, tcp_fallback {d.get('tcp_fallback')} = 1, "
          f"transport_500 {d.get('transport_500')} = 0")
    for s in (down, callee, back):
        s.close()


def request(method, ruri, via, call, cseq, routes=(), to_tag="", contact=""):
    """A request of call `call` (tags a<call> and, in a dialog, b): top Via `via` (its branch
    made of the method, call and CSeq), Route `routes` in order, Contact `contact`."""
    return (f"{method} {ruri} SIP/2.0\r\nVia: {via};branch=z9hG4bK{method}{call}{cseq}\r\n"
            + "".join(f"Route: {r}\r\n" for r in routes) +
            f"Max-Forwards: 70\r\nFrom: <sip:alice@127.0.0.1>;tag=a{call}\r\n"
            f"To: <sip:bob@127.0.0.1>{';tag=' + to_tag if to_tag else ''}\r\n"
            f"Call-ID: {call}@tcp-test\r\nCSeq: {cseq} {method}\r\n"
            + (f"Contact: <{contact}>\r\n" if contact else "") +
            "Content-Length: 0\r\n\r\n").encode()


def headers(m, name):
    """The values of header `name` in message text m, one per line, in order."""
    return re.findall(r"\r\n" + name + r": ([^\r]*)", m.split("\r\n\r\n")[0])


def double_rr(osn, tmp):
    """RFC 5658: a caller over UDP, an edge, a next hop over TCP (this script's, the callee)."""
    down, dp = listener()
    edge = Node(osn, tmp, "edge-rr", "127.0.0.1:0;transport=tcp",
                "--set", "node.element=edge", "--set", f"node.next_hop=127.0.0.1:{dp};transport=tcp")
    ep = edge.port
    caller = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    caller.bind(("127.0.0.1", 0))
    up_port = caller.getsockname()[1]
    via = f"SIP/2.0/UDP 127.0.0.1:{up_port}"
    me = f"sip:alice@127.0.0.1:{up_port}"      # the caller's Contact: UDP
    bob = f"sip:bob@127.0.0.1:{dp};transport=tcp"  # the callee's: TCP, the next hop's address

    def from_edge(what, timeout=5):
        """The next datagram to the caller whose first line starts with `what`."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            caller.settimeout(max(0.01, end - time.monotonic()))
            try:
                m = caller.recv(65535).decode(errors="replace")
            except socket.timeout:
                return ""
            if m.startswith(what):
                return m
        return ""

    uris = [f"<sip:127.0.0.1:{ep};transport=tcp;lr>", f"<sip:127.0.0.1:{ep};lr>"]
    hop = None
    for call in ("r1", "r2"):
        caller.sendto(request("INVITE", f"sip:bob@127.0.0.1:{dp}", via, call, 1, contact=me),
                      ("127.0.0.1", ep))
        hop = hop or accepted(down)
        m = (hop.message(5) if hop else None) or ""
        rr = headers(m, "Record-Route")
        check(rr == uris, f"{call}: UDP in, TCP out: two Record-Route values, the TCP leg's on top "
              f"(RFC 5658 4): {rr}, want {uris}")
        if hop and m:
            hop.s.sendall(answer(m, contact=bob))
        ok = from_edge("SIP/2.0 200")
        check(headers(ok, "Record-Route") == uris, f"{call}: the caller's 200 carries both "
              f"({headers(ok, 'Record-Route')})")
        # The caller's route set is the Record-Route reversed (RFC 3261 12.1.2): the edge's UDP
        # URI first, so its ACK and its BYE go over UDP; the edge removes both of its values and
        # sends them to the Request-URI, the callee's Contact, over TCP.
        caller.sendto(request("ACK", bob, via, call, 1, uris[::-1], "b"), ("127.0.0.1", ep))
        m = (hop.message(5) if hop else None) or ""
        check(m.startswith(f"ACK {bob} ") and not headers(m, "Route") and
              headers(m, "Via")[:1] and headers(m, "Via")[0].startswith("SIP/2.0/TCP "),
              f"{call}: the ACK reaches the callee over TCP, both Route values ours removed "
              f"({m[:60]!r}, Route {headers(m, 'Route')})")
    # r1: the caller hangs up. Its BYE over UDP, on to the callee over TCP, the 200 back.
    caller.sendto(request("BYE", bob, via, "r1", 2, uris[::-1], "b"), ("127.0.0.1", ep))
    m = (hop.message(5) if hop else None) or ""
    check(m.startswith(f"BYE {bob} ") and not headers(m, "Route"),
          f"r1: the caller's BYE (UDP) reaches the callee over TCP, no Route left "
          f"({m[:60]!r}, Route {headers(m, 'Route')})")
    if m:
        hop.s.sendall(answer(m))
    got = from_edge("SIP/2.0 200")
    check("CSeq: 2 BYE" in got, f"r1: its 200 comes back to the caller over UDP ({got[:40]!r})")
    # r2: the callee hangs up. Its route set is the Record-Route in order (12.1.1): the edge's TCP
    # URI first, so it opens a connection to it; the edge removes both values and sends the BYE
    # to the caller's Contact over UDP.
    far = Stream(ep)
    far.s.sendall(request("BYE", me, f"SIP/2.0/TCP 127.0.0.1:{dp}", "r2", 1, uris, "a").replace(
        b"From: <sip:alice@127.0.0.1>;tag=ar2", b"From: <sip:bob@127.0.0.1>;tag=b").replace(
        b"To: <sip:bob@127.0.0.1>;tag=a", b"To: <sip:alice@127.0.0.1>;tag=ar2"))
    m = from_edge(f"BYE {me} ")
    top = headers(m, "Via")
    check(m and not headers(m, "Route") and top and top[0].startswith("SIP/2.0/UDP "),
          f"r2: the callee's BYE (TCP) reaches the caller over UDP, no Route left "
          f"({m[:60]!r}, Via {top[:1]}, Route {headers(m, 'Route')})")
    if m:
        caller.sendto(answer(m), ("127.0.0.1", ep))
    got = next_final(far, "BYE", 5)
    check(got.startswith("SIP/2.0 200"), f"r2: its 200 back on the callee's connection "
          f"({got[:30]!r})")
    d = edge.stop()
    check(d.get("calls_ok") == 2 and d.get("bye_ok") == 2 and d.get("transport_500") == 0 and
          d.get("stray") == 0,
          f"JSON: calls_ok {d.get('calls_ok')} = 2, bye_ok {d.get('bye_ok')} = 2, transport_500 "
          f"{d.get('transport_500')} = 0, stray {d.get('stray')} = 0")
    caller.close()
    down.close()
    # The reverse: a caller over TCP, a next hop over UDP. The outgoing leg's value, now UDP's,
    # is on top, the caller's TCP one below.
    hop_u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    hop_u.bind(("127.0.0.1", 0))
    hp = hop_u.getsockname()[1]
    edge2 = Node(osn, tmp, "edge-rr2", "127.0.0.1:0;transport=tcp",
                 "--set", "node.element=edge", "--set", f"node.next_hop=127.0.0.1:{hp}")
    st = Stream(edge2.port)
    st.s.sendall(request("INVITE", f"sip:bob@127.0.0.1:{hp}", "SIP/2.0/TCP 127.0.0.1:9", "r3", 1,
                         contact="sip:alice@127.0.0.1:9;transport=tcp"))
    hop_u.settimeout(5)
    try:
        m = hop_u.recv(65535).decode(errors="replace")
    except socket.timeout:
        m = ""
    want = [f"<sip:127.0.0.1:{edge2.port};lr>", f"<sip:127.0.0.1:{edge2.port};transport=tcp;lr>"]
    rr = headers(m, "Record-Route")
    check(rr == want, f"r3: TCP in, UDP out: the UDP leg's value on top: {rr}, want {want}")
    if m:
        hop_u.sendto(answer(m, "486 Busy Here"), ("127.0.0.1", edge2.port))
    got = next_final(st, "INVITE", 5)
    check(got.startswith("SIP/2.0 486"), f"r3: the 486 back on the caller's connection "
          f"({got[:30]!r})")
    edge2.stop()
    hop_u.close()


def hostile(osn, tmp):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 8192), hard))
    uas = Node(osn, tmp, "uas-hostile", "127.0.0.1:0;transport=tcp",
               "--set", "node.tcp_buffer=65535", "--set", "node.tcp_idle_timeout=3",
               "--set", "node.tcp_max_connections=1050")
    via = "SIP/2.0/TCP 127.0.0.1:9"
    rss0 = uas.rss_kb()
    # A header without end, never reading.
    a = socket.create_connection(("127.0.0.1", uas.port), timeout=5)
    a.setblocking(False)
    sent = 0
    junk = b"INVITE sip:x@127.0.0.1 SIP/2.0\r\nX-Pad: " + b"a" * 4096
    end = time.monotonic() + 5
    while time.monotonic() < end:
        try:
            sent += a.send(junk if sent == 0 else b"a" * 4096)
        except BlockingIOError:
            time.sleep(0.05)
        except ConnectionError:
            break
    check(sent >= 65535 and sent < 8 << 20,
          f"a header without end: the node stopped taking it after {sent} bytes")
    # INVITEs without reading the answers.
    b = socket.create_connection(("127.0.0.1", uas.port), timeout=5)
    b.setblocking(False)
    k = 0
    end = time.monotonic() + 6
    while time.monotonic() < end:
        try:
            b.send(invite(f"s{k}", via, uas.port))
            k += 1
        except BlockingIOError:
            time.sleep(0.05)
        except ConnectionError:
            break
    check(k > 0 and uas.rss_kb() - rss0 < 64 << 10,
          f"a peer that does not read: {k} INVITEs sent, RSS +{(uas.rss_kb() - rss0) // 1024} MiB")
    # a and b stay open on our side until the end: their ports must not be reused by the idle
    # connections below, which would then be sent b's late 2xx retransmissions (RFC 3261
    # 18.2.2: a response goes to a connection from its request's source address) and be
    # closed for overflow, not idleness (a run under ASan: tcp_closed_idle 1,049).
    time.sleep(4.5)  # the idle timeout closes b's connection (its output stuck) if not yet
    rss1 = uas.rss_kb()
    idle = [socket.create_connection(("127.0.0.1", uas.port), timeout=5) for _ in range(1000)]
    time.sleep(0.5)
    # Other peers are answered meanwhile: a new TCP connection, and UDP.
    st = Stream(uas.port)
    st.s.sendall(invite("o1", via, uas.port))
    got = st.statuses(two_hundreds(["o1"]), 3)
    check((200, "o1@tcp-test") in got, f"with 1,000 idle connections a TCP caller gets 200 ({got})")
    st.s.close()
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.bind(("127.0.0.1", 0))
    u.settimeout(3)
    u.sendto(invite("o2", f"SIP/2.0/UDP 127.0.0.1:{u.getsockname()[1]}", uas.port),
             ("127.0.0.1", uas.port))
    codes = []
    try:
        while 200 not in codes:
            codes.append(int(u.recv(65535).split()[1]))
    except socket.timeout:
        pass
    check(200 in codes, f"and a UDP caller too ({codes})")
    time.sleep(0.3)
    more = [socket.create_connection(("127.0.0.1", uas.port), timeout=5) for _ in range(100)]
    time.sleep(0.8)
    shut = 0
    for s in more:
        s.setblocking(False)
        try:
            shut += s.recv(16) == b""
        except BlockingIOError:
            pass
        except ConnectionError:
            shut += 1
    check(shut == 50, f"at tcp_max_connections 1,050: of 100 more connections {shut} closed "
                      f"at once (want 50)")
    rss2 = uas.rss_kb()
    check(rss2 - rss1 < 16 << 10,
          f"1,050 open connections: RSS {rss1} -> {rss2} kB (+{rss2 - rss1}, < 16 MiB)")
    # The idle timeout (3 s, looked for every second) closes them all. A loaded machine delays
    # the node's accepts and sweeps (a loop of 2026-12-07 found 1,099 closed after a fixed 4.5 s
    # at load 10), so the count is polled for up to 12 s.
    conns = idle + more
    for s in conns:
        s.setblocking(False)
    open_ = set(range(len(conns)))
    end = time.monotonic() + 12
    while open_ and time.monotonic() < end:
        time.sleep(0.25)
        for i in list(open_):
            try:
                if conns[i].recv(16) == b"":
                    open_.discard(i)
            except BlockingIOError:
                pass
            except ConnectionError:
                open_.discard(i)
    for s in conns + [a, b]:
        s.close()
    gone = len(conns) - len(open_)
    check(gone == 1100, f"after tcp_idle_timeout, {gone} of 1,100 connections closed by the node")
    d = uas.stop()
    want = {"tcp_closed_overflow": lambda v: v >= 1, "tcp_paused": lambda v: v >= 1,
            "tcp_refused": lambda v: v == 50, "tcp_closed_idle": lambda v: v >= 1050,
            "tcp_accepted": lambda v: v >= 1053}
    for key, ok in want.items():
        check(key in d and ok(d[key]), f"JSON {key} = {d.get(key)}")
    # Under ASan (OSN_SANITIZED, set by tests/node.cmake) freed memory waits in its quarantine,
    # 256 MiB by default, before it is reused: the bound grows by that much (peaks of 199 and
    # 233 MiB were measured there, 92 to 100 MiB without it).
    bound = (128 + (256 if os.environ.get("OSN_SANITIZED") == "1" else 0)) << 10
    check(d.get("rss_peak_kb", 0) < bound,
          f"JSON rss_peak_kb {d.get('rss_peak_kb')} < {bound >> 10} MiB")


def main():
    osn = sys.argv[1]
    parts = {"framing": framing, "next_hop": next_hop, "dialog": dialog, "double_rr": double_rr,
             "hostile": hostile}
    chosen = sys.argv[2:] or list(parts)  # a part or several by name, to run them alone
    with tempfile.TemporaryDirectory(prefix="osn-tcp-") as tmp:
        for name in chosen:
            parts[name](osn, tmp)
    print(f"{'FAILED: ' + str(len(FAILS)) if FAILS else 'all passed'}")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""`osn node` over IPv6, on [::1] with ports of the kernel's choice:

1. a chain SIPp uac -> osn node edge -> osn node uas: every call answered (SIPp's exit status
   0 and its count of successful calls, the edge's calls_ok);
2. the request the edge forwards, caught by a socket of this test as its next hop: it comes
   from the edge's listening address, its top Via is "SIP/2.0/UDP [::1]:PORT;branch=z9hG4bK..."
   (RFC 3261 25.1 sent-by = host [":" port], host = IPv6reference), and both OSN's parser and
   libosip2 read it alike (test_sip_osip FILE); the answer this test sends to that sent-by
   reaches the caller, from the edge's address; the edge's Record-Route names it as an
   IPv6reference (<sip:[::1]:PORT;lr>), and an in-dialog BYE whose Route names the edge goes on
   by loose routing to its Request-URI, sip:b@[::1]:PORT (not the next hop), from the edge's
   address;
3. a dialog through edge -> core by its Record-Route set (route6): the callee and the caller
   receive Record-Route: <sip:[::1]:CORE;lr>, <sip:[::1]:EDGE;lr> (RFC 3261 19.1.1 with RFC
   2732's brackets) and Vias SIP/2.0/UDP [::1]:PORT; the caller's ACK (Route: edge, core) reaches
   the callee's Contact from the core; the callee's BYE (Route: core, edge) goes up to the
   caller's Contact from the edge, its Route used up, and the caller's 200 comes back down;
4. the uas's 200 to an INVITE with an SDP offer: Contact <sip:[::1]:PORT> (RFC 3261 19.1.1,
   RFC 5118 4.1) and the answer's "c=IN IP6 ::1" (RFC 4566 5.7: no brackets); to an INVITE
   whose Via names another address, with a valueless rport: rport=SOURCE_PORT and
   received=::1 (RFC 3581 4, RFC 3261 18.2.1, bare IPv6address as RFC 5118 4.5);
5. bad addresses: exit status 2, the key named.

Skipped, and said so, when the machine has no ::1.

Usage: ipv6.py OSN TEST_SIP_OSIP      exit 0 when every check holds, 77 when skipped.
"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nodeproc  # noqa: E402

FAILS = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        FAILS.append(what)


def start(osn, tmp, name, *sets, duration=15):
    """An `osn node` on [::1]:0 for `duration` s, its JSON in TMP/NAME.json; (node, port) once
    it says where it listens. SETS are key=value."""
    args = ["--set", f"node.duration={duration}"]
    for s in sets:
        args += ["--set", s]
    n = nodeproc.Node(osn, tmp, name, *args, listen="[::1]:0", metrics=False, summary=True,
                      seconds=duration + 60)
    return n, n.sip


def stop(n):
    n.stop(seconds=10)


def invite(me, call_id, body=""):
    sdp = "Content-Type: application/sdp\r\n" if body else ""
    return (f"INVITE sip:b@[::1] SIP/2.0\r\n"
            f"Via: SIP/2.0/UDP [::1]:{me};branch=z9hG4bK{call_id}\r\nMax-Forwards: 70\r\n"
            f"From: <sip:a@[::1]>;tag=1\r\nTo: <sip:b@[::1]>\r\nCall-ID: {call_id}@test\r\n"
            f"CSeq: 1 INVITE\r\nContact: <sip:a@[::1]:{me}>\r\n{sdp}"
            f"Content-Length: {len(body)}\r\n\r\n{body}").encode()


def recv_final(s):
    """Datagrams until a final response; (its text, its source)."""
    while True:
        data, src = s.recvfrom(65535)
        text = data.decode(errors="replace")
        if not text.startswith("SIP/2.0 1"):
            return text, src


def chain(osn, tmp):
    uas, uas_port = start(osn, tmp, "uas", "node.element=uas")
    edge, edge_port = start(osn, tmp, "edge", "node.element=edge",
                            f"node.next_hop=[::1]:{uas_port}")
    calls = 10
    try:
        r = subprocess.run(["timeout", "40", "sipp", "-sn", "uac", "-i", "::1",
                            f"[::1]:{edge_port}", "-m", str(calls), "-r", "10", "-timeout",
                            "30", "-timeout_error", "-trace_stat", "-stf",
                            os.path.join(tmp, "uac.csv")], stdin=subprocess.DEVNULL,
                           cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        ok_calls = None
        try:
            rows = open(os.path.join(tmp, "uac.csv")).read().splitlines()
            head = rows[0].split(";")
            ok_calls = int(rows[-1].split(";")[head.index("SuccessfulCall(C)")])
        except (OSError, ValueError, IndexError):
            pass
        check(r.returncode == 0 and ok_calls == calls,
              f"SIPp uac over [::1] -> edge -> uas: exit {r.returncode}, {ok_calls} of {calls} "
              f"calls successful" + ("" if r.returncode == 0 else " " + r.stderr.strip()[-300:]))
    finally:
        stop(edge)
        stop(uas)
    e = json.load(open(os.path.join(tmp, "edge.json")))
    check(e.get("calls_ok") == calls and e.get("send_errors") == 0,
          f"edge: calls_ok {e.get('calls_ok')} of {calls}, send_errors {e.get('send_errors')}")


def via(osn, tmp, osip):
    hop = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    hop.bind(("::1", 0))
    hop.settimeout(5)
    edge, edge_port = start(osn, tmp, "edge2", "node.element=edge",
                            f"node.next_hop=[::1]:{hop.getsockname()[1]}")
    caller = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    caller.bind(("::1", 0))
    caller.settimeout(5)
    try:
        caller.sendto(invite(caller.getsockname()[1], "v6via"), ("::1", edge_port))
        data, src = hop.recvfrom(65535)
        text = data.decode(errors="replace")
        top = re.search(r"^Via: (.*)$", text, re.M).group(1).strip()
        check(src[:2] == ("::1", edge_port),
              f"the forward comes from the edge's listening address: [{src[0]}]:{src[1]}")
        check(re.fullmatch(r"SIP/2\.0/UDP \[::1\]:%d;branch=z9hG4bK[0-9a-f]+" % edge_port, top)
              is not None, f"forwarded top Via {top!r}")
        path = os.path.join(tmp, "forwarded.sip")
        open(path, "wb").write(data)
        r = subprocess.run([osip, path], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           text=True)
        check(r.returncode == 0, "OSN's parser and libosip2 read the forward alike: " +
              r.stdout.strip())
        # The next hop answers to the sent-by, [::1]:edge_port (RFC 3261 18.2.2).
        lines = text.split("\r\n")
        keep = [ln for ln in lines if re.match(r"(Via|From|Call-ID|CSeq):", ln)]
        to = next(ln for ln in lines if ln.startswith("To:")) + ";tag=hop"
        resp = "\r\n".join(["SIP/2.0 200 OK"] + keep + [to, "Content-Length: 0", "", ""])
        hop.sendto(resp.encode(), ("::1", edge_port))
        final, src = recv_final(caller)
        check(final.startswith("SIP/2.0 200") and src[:2] == ("::1", edge_port),
              f"the 200 reaches the caller from [{src[0]}]:{src[1]}: {final.splitlines()[0]!r}")
        ours = re.search(r"^Via: (.*)$", final, re.M).group(1).strip()
        check(ours.startswith(f"SIP/2.0/UDP [::1]:{caller.getsockname()[1]};"),
              f"with the caller's Via on top: {ours!r}")
        rr = re.search(r"^Record-Route: (.*)$", text, re.M)
        rr = rr.group(1).strip() if rr else None
        check(rr == f"<sip:[::1]:{edge_port};lr>", f"the edge's Record-Route {rr!r}")
        # Loose routing over IPv6 (RFC 3261 16.4, 16.12): the top Route names the edge, none is
        # left, so the BYE goes to its Request-URI, by the listening socket.
        callee = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
        callee.bind(("::1", 0))
        callee.settimeout(5)
        me, there = caller.getsockname()[1], callee.getsockname()[1]
        bye = (f"BYE sip:b@[::1]:{there} SIP/2.0\r\n"
               f"Via: SIP/2.0/UDP [::1]:{me};branch=z9hG4bKv6bye\r\nMax-Forwards: 70\r\n"
               f"Route: <sip:[::1]:{edge_port};lr>\r\n"
               f"From: <sip:a@[::1]>;tag=1\r\nTo: <sip:b@[::1]>;tag=hop\r\n"
               f"Call-ID: v6via@test\r\nCSeq: 2 BYE\r\nContent-Length: 0\r\n\r\n")
        caller.sendto(bye.encode(), ("::1", edge_port))
        try:
            data, src = callee.recvfrom(65535)
            got = data.decode(errors="replace")
        except socket.timeout:
            got, src = "", ("", 0)
        check(got.startswith(f"BYE sip:b@[::1]:{there} ") and "\r\nRoute:" not in got and
              src[:2] == ("::1", edge_port),
              f"a BYE routed by Route to [::1]:{there} arrives from [{src[0]}]:{src[1]}, its "
              f"Route popped: {got.splitlines()[0] if got else 'nothing'!r}")
    finally:
        stop(edge)


def headers(text, name):
    """The values of header `name` in a message's text, one per line, in order."""
    return [ln.split(":", 1)[1].strip() for ln in text.split("\r\n\r\n")[0].split("\r\n")[1:]
            if ln.lower().startswith(name.lower() + ":")]


def v6sock():
    s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    s.bind(("::1", 0))
    s.settimeout(5)
    return s, s.getsockname()[1]


def recv_any(s):
    """The next datagram past provisional responses: (text, (host, port)), ("", None) none."""
    try:
        while True:
            data, src = s.recvfrom(65535)
            text = data.decode(errors="replace")
            if not text.startswith("SIP/2.0 1"):
                return text, src[:2]
    except socket.timeout:
        return "", None


def reply(req, status, extra=()):
    """A response to request text `req`: Vias, From, Call-ID, CSeq copied, To tagged, `extra`."""
    head = req.split("\r\n\r\n")[0].split("\r\n")
    keep = [ln for ln in head[1:] if ln.lower().startswith(("via:", "from:", "call-id:",
                                                            "cseq:"))]
    to = next(ln for ln in head if ln.lower().startswith("to:"))
    to += "" if "tag=" in to else ";tag=callee6"
    return "\r\n".join([f"SIP/2.0 {status} OK"] + keep + [to] + list(extra) +
                        ["Content-Length: 0", "", ""]).encode()


def route6(osn, tmp):
    """A dialog through edge -> core on [::1] by its Record-Route set (RFC 3261 16.6 step 4,
    12.1, 16.12; RFC 2732/3261 19.1.1 brackets): the callee and the caller each receive the
    Record-Route <sip:[::1]:CORE;lr>, <sip:[::1]:EDGE;lr> and Vias "SIP/2.0/UDP [::1]:PORT";
    the caller's ACK follows it down (Route: edge, core) to the callee's Contact; the callee's
    BYE follows it up (Route: core, edge) to the caller's Contact, from the edge, its Route
    used up, and the caller's 200 goes back down to the callee."""
    callee, cp = v6sock()
    caller, ap = v6sock()
    core, core_port = start(osn, tmp, "core6", "node.element=core",
                            f"node.next_hop=[::1]:{cp}")
    edge, edge_port = start(osn, tmp, "edge6", "node.element=edge",
                            f"node.next_hop=[::1]:{core_port}")
    want_rr = [f"<sip:[::1]:{core_port};lr>", f"<sip:[::1]:{edge_port};lr>"]
    a, b = "<sip:a@[::1]>;tag=1", "<sip:b@[::1]>"
    try:
        caller.sendto(invite(ap, "v6route"), ("::1", edge_port))
        inv, src = recv_any(callee)
        vias = headers(inv, "Via")
        check(inv.startswith("INVITE ") and src == ("::1", core_port) and
              headers(inv, "Record-Route") == want_rr and len(vias) == 3 and
              vias[0].startswith(f"SIP/2.0/UDP [::1]:{core_port};") and
              vias[1].startswith(f"SIP/2.0/UDP [::1]:{edge_port};"),
              f"route6: the callee receives Record-Route {headers(inv, 'Record-Route')}, "
              f"Vias {[v.split(';')[0] for v in vias]}")
        callee.sendto(reply(inv, 200, [f"Record-Route: {v}" for v in
                                       headers(inv, "Record-Route")] +
                            [f"Contact: <sip:b@[::1]:{cp}>"]), ("::1", core_port))
        ok, src = recv_any(caller)
        rr = headers(ok, "Record-Route")
        check(ok.startswith("SIP/2.0 200") and src == ("::1", edge_port) and rr == want_rr,
              f"route6: the caller receives the 200 from the edge, Record-Route {rr}")
        to_tag = ";tag=callee6"  # the tag reply() gave the 200
        route = ", ".join(reversed(want_rr))  # 12.1.2: the caller's route set
        ack = (f"ACK sip:b@[::1]:{cp} SIP/2.0\r\nVia: SIP/2.0/UDP [::1]:{ap};branch=z9hG4bKv6a\r\n"
               f"Route: {route}\r\nMax-Forwards: 70\r\nFrom: {a}\r\nTo: {b}{to_tag}\r\n"
               f"Call-ID: v6route@test\r\nCSeq: 1 ACK\r\nContent-Length: 0\r\n\r\n")
        caller.sendto(ack.encode(), ("::1", edge_port))
        got, src = recv_any(callee)
        check(got.startswith(f"ACK sip:b@[::1]:{cp} ") and src == ("::1", core_port) and
              not headers(got, "Route") and len(headers(got, "Via")) == 3,
              f"route6: the caller's ACK follows the route set to the callee's Contact, from "
              f"the core: {got.splitlines()[0] if got else 'nothing'!r}")
        bye = (f"BYE sip:a@[::1]:{ap} SIP/2.0\r\nVia: SIP/2.0/UDP [::1]:{cp};branch=z9hG4bKv6b\r\n"
               f"Route: {', '.join(want_rr)}\r\nMax-Forwards: 70\r\nFrom: {b}{to_tag}\r\n"
               f"To: {a}\r\nCall-ID: v6route@test\r\nCSeq: 1 BYE\r\n"
               f"Content-Length: 0\r\n\r\n")
        callee.sendto(bye.encode(), ("::1", core_port))
        got, src = recv_any(caller)
        vias = headers(got, "Via")
        check(got.startswith(f"BYE sip:a@[::1]:{ap} ") and src == ("::1", edge_port) and
              not headers(got, "Route") and len(vias) == 3 and
              vias[0].startswith(f"SIP/2.0/UDP [::1]:{edge_port};") and
              vias[1].startswith(f"SIP/2.0/UDP [::1]:{core_port};"),
              f"route6: the callee's BYE follows the route set up to the caller's Contact, from "
              f"the edge, Vias {[v.split(';')[0] for v in vias]}")
        if got.startswith("BYE "):
            caller.sendto(reply(got, 200), ("::1", edge_port))
        got, src = recv_any(callee)
        check(got.startswith("SIP/2.0 200") and src == ("::1", core_port),
              f"route6: the caller's 200 reaches the callee: "
              f"{got.splitlines()[0] if got else 'nothing'!r}")
    finally:
        stop(edge)
        stop(core)
        caller.close()
        callee.close()
    for name in ("edge6", "core6"):
        d = json.load(open(os.path.join(tmp, name + ".json")))
        check(d.get("bye_in") == 1 and d.get("bye_ok") == 1 and d.get("send_errors") == 0,
              f"route6: {name} bye_in {d.get('bye_in')}, bye_ok {d.get('bye_ok')}, "
              f"send_errors {d.get('send_errors')}")


def contact(osn, tmp):
    uas, uas_port = start(osn, tmp, "uas2", "node.element=uas")
    s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    s.bind(("::1", 0))
    s.settimeout(5)
    offer = ("v=0\r\no=a 1 1 IN IP6 ::1\r\ns=-\r\nc=IN IP6 ::1\r\nt=0 0\r\n"
             "m=audio 4000 RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\n")
    try:
        s.sendto(invite(s.getsockname()[1], "v6contact", offer), ("::1", uas_port))
        final, _ = recv_final(s)
        m = re.search(r"^Contact: (.*)$", final, re.M)
        got = m.group(1).strip() if m else None
        check(got == f"<sip:[::1]:{uas_port}>", f"the uas's Contact {got!r}")
        c = re.search(r"^c=(.*)$", final, re.M)
        check(c is not None and c.group(1).strip() == "IN IP6 ::1",
              f"its SDP answer's c= line {c.group(1).strip() if c else None!r}")
        # RFC 3581 4 and RFC 3261 18.2.1: a valueless rport gets the source port, and received
        # the source address, a bare IPv6address (25.1 via-received; RFC 5118 4.5), also when
        # the sent-by names another address.
        me = s.getsockname()[1]
        req = invite(me, "v6rport").decode().replace(
            f"Via: SIP/2.0/UDP [::1]:{me};branch=z9hG4bKv6rport",
            "Via: SIP/2.0/UDP [2001:db8::9]:5060;rport;branch=z9hG4bKv6rport")
        s.sendto(req.encode(), ("::1", uas_port))
        final, src = recv_final(s)
        v = re.search(r"^Via: (.*)$", final, re.M).group(1).strip()
        want = f"SIP/2.0/UDP [2001:db8::9]:5060;rport={me};branch=z9hG4bKv6rport;received=::1"
        check(v == want and src[1] == uas_port,
              f"answered to the source: top Via {v!r} (want {want!r})")
    finally:
        stop(uas)


def bad(osn):
    for key, sets in [("node.listen", ["node.listen=::1:5060"]),
                      ("node.listen", ["node.listen=[::1:5060"]),
                      ("node.listen", ["node.listen=[fe80::1%lo]:0"]),
                      ("node.next_hop", ["node.listen=[::1]:0", "node.next_hop=127.0.0.1:5060"]),
                      ("node.next_hop", ["node.listen=[::1]:0", "node.next_hop=[::1]:0"])]:
        args = [osn, "node", "-q", "--set", "node.element=edge", "--set",
                "node.next_hop=[::1]:5080"]
        for s in sets:
            args += ["--set", s]
        r = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           timeout=10)
        check(r.returncode == 2 and f"'{key}'" in r.stderr,
              f"{' '.join(sets)}: exit {r.returncode}, {r.stderr.strip()!r}")


def main():
    osn, osip = sys.argv[1], sys.argv[2]
    try:
        s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
        s.bind(("::1", 0))
        s.close()
    except OSError as e:
        print(f"SKIP: this machine has no ::1 ({e})")
        return 77
    tmp = tempfile.mkdtemp(prefix="osn_ipv6.")
    try:
        chain(osn, tmp)
        via(osn, tmp, osip)
        route6(osn, tmp)
        contact(osn, tmp)
        bad(osn)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{len(FAILS)} failed" if FAILS else "all passed")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())

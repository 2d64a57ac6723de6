#!/usr/bin/env python3
"""The callee's BYE goes up through an edge whose client half sheds everything (issue 33).

A caller and a callee, sockets of this test, and between them `osn node` edge with control.kind
loss and the callee as its one next hop. The callee plays an RFC 7339 server in overload: its 200
to the INVITE carries oc=100 (loss) in the edge's Via, so the edge's client half toward it sheds
every new request from then on (RFC 7339 7.2: oc=100 takes both categories, BYEs too). Then:

  1. the callee hangs up: its BYE, with Route: <the edge's Record-Route> and the caller's Contact
     as Request-URI (RFC 3261 12.2.1.1), goes upstream (16.4, 16.12): it reaches the caller from
     the edge, its Route gone, its Vias the edge's and the callee's, the edge's with no oc offer
     (no client half of the edge is for the caller); the caller's 200 reaches the callee. It is
     not answered 503: the client half holds the callee's state, not the caller's (RFC 7339
     5.10). Before the fix the edge answered it 503 (the element put it to that client half).
  2. a second call's INVITE, and the caller's BYE of the first call (by Route, down to the
     callee), are each answered 503 by the edge: the client half does shed what goes down.

The edge's counts: bye_in 2, bye_ok 1 (the caller's 200 relayed), rejected_503 2, calls_ok 1.
Usage: callee_bye.py OSN
"""
import os
import re
import shutil
import socket
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nodeproc import SHORT_TIMERS, Node, parse_response, wait_ended  # noqa: E402

FAILS = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        FAILS.append(what)


def sock():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    s.settimeout(3)
    return s, s.getsockname()[1]


def recv(s):
    """The next datagram's text and source, ("", None) after the timeout."""
    try:
        data, src = s.recvfrom(65535)
        return data.decode(errors="replace"), src
    except socket.timeout:
        return "", None


def final(s):
    """The next final response (or request) on s, past provisional responses."""
    while True:
        text, src = recv(s)
        if not text.startswith("SIP/2.0 1"):
            return text, src


def headers(text, name):
    return [ln.split(":", 1)[1].strip() for ln in text.split("\r\n\r\n")[0].split("\r\n")[1:]
            if ln.lower().startswith(name.lower() + ":")]


def answer(req, status, extra=(), top_extra=""):
    """A response to request text `req`: its Vias (the top one with `top_extra`), From, To (with a
    tag unless it has one), Call-ID, CSeq, then `extra` lines."""
    head = req.split("\r\n\r\n")[0].split("\r\n")
    vias = [ln for ln in head if ln.lower().startswith("via:")]
    vias[0] += top_extra
    keep = [ln for ln in head[1:] if ln.lower().startswith(("from:", "call-id:", "cseq:"))]
    to = next(ln for ln in head if ln.lower().startswith("to:"))
    if "tag=" not in to:
        to += ";tag=callee"
    return ("\r\n".join([f"SIP/2.0 {status} Reason"] + vias + keep + [to] + list(extra) +
                        ["Content-Length: 0", "", ""])).encode()


def request(method, uri, via_port, branch, call, cseq, frm, to, route="", contact=""):
    return (f"{method} {uri} SIP/2.0\r\n"
            f"Via: SIP/2.0/UDP 127.0.0.1:{via_port};branch=z9hG4bK{branch}\r\n"
            + (f"Route: {route}\r\n" if route else "") +
            f"Max-Forwards: 70\r\nFrom: {frm}\r\nTo: {to}\r\nCall-ID: {call}@test\r\n"
            f"CSeq: {cseq} {method}\r\n" + (f"Contact: {contact}\r\n" if contact else "") +
            "Content-Length: 0\r\n\r\n").encode()


def main():
    osn = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="osn_callee_bye.")
    caller, cp = sock()
    callee, ep = sock()
    edge = None
    try:
        edge = Node(osn, tmp, "edge", "--set", "node.element=edge", "--set", "control.kind=loss",
                    "--set", f"node.next_hop=127.0.0.1:{ep}", *SHORT_TIMERS)
        at = ("127.0.0.1", edge.sip)
        alice, bob = "<sip:alice@127.0.0.1>;tag=caller", "<sip:bob@127.0.0.1>"
        caller.sendto(request("INVITE", f"sip:bob@127.0.0.1:{edge.sip}", cp, "inv1", "cb1", 1,
                              alice, bob, contact=f"<sip:alice@127.0.0.1:{cp}>"), at)
        inv, _ = recv(callee)
        check(inv.startswith("INVITE ") and re.search(r";oc(;|$)", headers(inv, "Via")[0]),
              f"the INVITE reaches the callee, the edge's Via offering oc: "
              f"{(headers(inv, 'Via') or ['nothing'])[0]!r}")
        rr = headers(inv, "Record-Route")
        check(rr == [f"<sip:127.0.0.1:{edge.sip};lr>"], f"with the edge's Record-Route {rr}")
        # The callee's 200: oc=100 in the edge's Via, the Record-Route copied (12.1.1).
        callee.sendto(answer(inv, 200, [f"Record-Route: {v}" for v in rr] +
                             [f"Contact: <sip:bob@127.0.0.1:{ep}>"],
                             ';oc=100;oc-algo="loss";oc-validity=60000;oc-seq=1.0'), at)
        ok, _ = final(caller)
        st, h, _ = parse_response(ok) if ok else (None, {}, "")
        check(st == 200 and h.get("record-route") == rr, f"the caller gets the 200: {st}, "
              f"Record-Route {h.get('record-route')}")
        shed = edge.scrape().get('osn_node_client_shed_percent{element="edge"}')
        check(shed == 100, f"the edge's client half sheds {shed} % after oc=100")
        to_tag = h["to"][0].split("tag=")[1] if st == 200 else "x"
        bob_t = f"<sip:bob@127.0.0.1>;tag={to_tag}"
        caller.sendto(request("ACK", f"sip:bob@127.0.0.1:{ep}", cp, "ack1", "cb1", 1, alice,
                              bob_t, route=rr[0] if rr else ""), at)
        ack, _ = recv(callee)
        check(ack.startswith(f"ACK sip:bob@127.0.0.1:{ep} "), "the ACK follows the route set: "
              + repr(ack.split("\r\n")[0]))

        # 1. The callee hangs up: up to the caller's Contact, by the edge's Route value.
        callee.sendto(request("BYE", f"sip:alice@127.0.0.1:{cp}", ep, "cbye1", "cb1", 1,
                              bob_t, alice, route=rr[0] if rr else ""), at)
        bye, src = recv(caller)
        vias = headers(bye, "Via")
        check(bye.startswith(f"BYE sip:alice@127.0.0.1:{cp} ") and src == at and
              not headers(bye, "Route") and len(vias) == 2 and
              vias[0].startswith(f"SIP/2.0/UDP 127.0.0.1:{edge.sip};") and
              vias[1].startswith(f"SIP/2.0/UDP 127.0.0.1:{ep};"),
              f"the callee's BYE reaches the caller from the edge, Route gone, Vias {vias}: "
              f"{bye.split(chr(13))[0]!r}")
        check(bool(vias) and not re.search(r";oc\b", vias[0]),
              f"the edge offers the caller no oc: {(vias or ['-'])[0]!r}")
        if bye.startswith("BYE "):
            caller.sendto(answer(bye, 200), at)
        got, _ = final(callee)
        check(got.startswith("SIP/2.0 200"), "the callee gets the caller's 200, not a 503: "
              + repr(got.split("\r\n")[0]))

        # 2. What goes down is shed: a new INVITE, and the caller's BYE of the first call.
        caller.sendto(request("INVITE", f"sip:bob@127.0.0.1:{edge.sip}", cp, "inv2", "cb2", 1,
                              alice, bob, contact=f"<sip:alice@127.0.0.1:{cp}>"), at)
        got, _ = final(caller)
        check(got.startswith("SIP/2.0 503"), "a new INVITE: " + repr(got.split("\r\n")[0]))
        caller.sendto(request("ACK", f"sip:bob@127.0.0.1:{edge.sip}", cp, "inv2", "cb2", 1,
                              alice, "<sip:bob@127.0.0.1>;tag=" +
                              (got.split("tag=")[1].split("\r\n")[0] if "tag=" in got else "x")),
                      at)
        caller.sendto(request("BYE", f"sip:bob@127.0.0.1:{ep}", cp, "bye2", "cb1", 2, alice,
                              bob_t, route=rr[0] if rr else ""), at)
        got, _ = final(caller)
        check(got.startswith("SIP/2.0 503"), "the caller's BYE, down by Route: " +
              repr(got.split("\r\n")[0]))
        got, _ = recv(callee)
        check(not got.startswith("BYE") and not got.startswith("INVITE"),
              "the callee gets neither: " + repr(got.split("\r\n")[0]))

        left = wait_ended([edge], 20)
        check(left["edge"] == 0, f"the edge ends with {left['edge']:.0f} transactions")
        m = edge.scrape()
        counts = {k: m.get(f"osn_node_{k}_total") for k in
                  ("bye_in", "bye_ok", "rejected_503", "calls_ok")}
        check(counts == {"bye_in": 2, "bye_ok": 1, "rejected_503": 2, "calls_ok": 1},
              f"the edge's counts {counts}")
    finally:
        if edge:
            edge.stop()
        caller.close()
        callee.close()
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{len(FAILS)} failed" if FAILS else "all passed")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())

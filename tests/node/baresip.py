#!/usr/bin/env python3
"""A real softphone, baresip, calls through `osn node` and is called through it (issue 33).

  caller: baresip dials sip:bob@EDGE; edge -> core -> uas. The call is established (baresip says
          CALL_ESTABLISHED; the uas counts a good call and resends no 2xx: the ACK reached it),
          then baresip hangs up: its BYE gets 200 from the uas (bye_ok) and baresip says
          CALL_CLOSED.
  caller, callee hangs up: baresip dials a third edge -> core -> uas whose uas ends every call
          itself (source.callee_hangs_up = 1, hold 0.5 s): the call is established, and at the
          hold's end the uas's BYE goes by the route set (the Record-Route of core and edge) up
          to baresip's Contact, which answers 200 back down. baresip says CALL_CLOSED with the
          reason of a BYE received ("Connection reset by peer") and sends no BYE of its own;
          edge and core each count the BYE in and the 2xx relayed, the uas counts one BYE sent
          and answered 2xx, and no hop counts a 503, 408, 481 or stray message.
  callee: a small UAC here sends an INVITE with an SDP offer to a second edge -> core whose next
          hop is baresip, which answers by itself (answermode=auto): 200 with baresip's Contact
          and an SDP answer reach the UAC through both proxies; it ACKs and sends the BYE to that
          Contact (no Record-Route yet), 200.
  callee hangs up: the UAC calls baresip through that edge -> core again, ACKs by the route set
          (the Record-Route reversed), and baresip is told to hang up (ctrl_tcp `hangup`): its
          BYE goes up by the route set, core then edge, and reaches the UAC's Contact from the
          edge with three Vias; the UAC answers 200, which goes back down; edge and core each
          count the BYE in and the 2xx relayed, and no 503 (callee_hangs_up).

baresip runs headless from its own config directory: no audio hardware (aubridge for source and
player; the uas answers every stream inactive anyway), control over ctrl_tcp (JSON netstrings).
baresip 1.0 cannot say which port it bound for port 0, so its SIP and control ports are chosen
by binding port 0 here and releasing it; when baresip fails to bind one (taken meanwhile) the
start is retried with new ports, three times at most. Every process runs under `timeout` and is
stopped by its pid. Exit 77 (ctest: skipped) when baresip is not installed.
Usage: baresip.py OSN
"""
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nodeproc import Node, parse_response, scrape, wait_ended  # noqa: E402

# T1 200 ms: a 2xx resent before the ACK then means a lost ACK, not a slow machine (with
# nodeproc.SHORT_TIMERS' T1 of 20 ms it could be either), and the transactions still end
# within 64*T1 = 12.8 s rather than RFC 3261's 32 s.
RFC_TIMERS = ["--set", "sip.t1=0.2", "--set", "sip.t2=0.8", "--set", "sip.t4=1",
              "--set", "sip.timer_d=2"]


def free_port(kind):
    s = socket.socket(socket.AF_INET, kind)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Baresip:
    """baresip with account sip:bob@127.0.0.1, auto-answer, driven over ctrl_tcp."""

    def __init__(self, tmp):
        self.dir = os.path.join(tmp, "baresip")
        os.makedirs(self.dir, exist_ok=True)
        self.events, self.buf = [], b""
        for attempt in range(3):
            self.sip, self.ctl = free_port(socket.SOCK_DGRAM), free_port(socket.SOCK_STREAM)
            with open(os.path.join(self.dir, "config"), "w") as f:
                f.write(f"poll_method poll\nsip_listen 127.0.0.1:{self.sip}\n"
                        "module_path /usr/lib/baresip/modules\n"
                        "module g711.so\nmodule aubridge.so\nmodule_app account.so\n"
                        "module_app menu.so\nmodule ctrl_tcp.so\n"
                        f"ctrl_tcp_listen 127.0.0.1:{self.ctl}\n"
                        "audio_player aubridge,nil\naudio_source aubridge,nil\n"
                        "audio_alert aubridge,nil\n")
            with open(os.path.join(self.dir, "accounts"), "w") as f:
                f.write("<sip:bob@127.0.0.1>;regint=0;answermode=auto;audio_codecs=PCMU,PCMA\n")
            self.log = os.path.join(self.dir, f"log{attempt}")
            with open(self.log, "w") as log:
                self.p = subprocess.Popen(["timeout", "120", "baresip", "-f", self.dir, "-v"],
                                          stdin=subprocess.DEVNULL, stdout=log, stderr=log)
            self.c = self.connect(5)
            if self.c:
                return
            self.stop()
        sys.exit("baresip did not start: " + open(self.log).read()[-2000:])

    def connect(self, seconds):
        end = time.time() + seconds
        while time.time() < end and self.p.poll() is None:
            try:
                return socket.create_connection(("127.0.0.1", self.ctl), timeout=1)
            except OSError:
                time.sleep(0.1)
        return None

    def command(self, cmd, params=""):
        msg = json.dumps({"command": cmd, "params": params, "token": cmd}).encode()
        self.c.sendall(str(len(msg)).encode() + b":" + msg + b",")

    def wait_event(self, kind, seconds, count=1):
        """Reads the netstrings baresip sends until `count` events of type `kind` have come;
        True if they did."""
        end = time.time() + seconds
        while time.time() < end:
            if sum(e.get("type") == kind for e in self.events) >= count:
                return True
            self.c.settimeout(max(0.05, end - time.time()))
            try:
                chunk = self.c.recv(65536)
            except socket.timeout:
                break
            if not chunk:
                break
            self.buf += chunk
            while b":" in self.buf:
                n, _, rest = self.buf.partition(b":")
                if len(rest) < int(n) + 1:
                    break
                msg, self.buf = json.loads(rest[:int(n)]), rest[int(n) + 1:]
                if msg.get("event"):
                    self.events.append(msg)
        return sum(e.get("type") == kind for e in self.events) >= count

    def stop(self):
        if self.p.poll() is None:
            self.p.terminate()
            try:
                self.p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()


def uac_call(check, edge_port):
    """A UAC calls sip:bob@ through the edge; returns when the call is over."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    me = s.getsockname()[1]
    sdp = ("v=0\r\no=uac 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"
           "m=audio 9 RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\na=inactive\r\n")

    def req(method, uri, cseq, to_tag="", body="", branch=None):
        extra = "Content-Type: application/sdp\r\n" if body else ""
        msg = (f"{method} {uri} SIP/2.0\r\n"
               f"Via: SIP/2.0/UDP 127.0.0.1:{me};branch=z9hG4bK{branch or method + str(cseq)}\r\n"
               f"Max-Forwards: 70\r\nFrom: <sip:alice@127.0.0.1>;tag=uac1\r\n"
               f"To: <sip:bob@127.0.0.1>{to_tag}\r\nCall-ID: bs1@baresip-test\r\n"
               f"CSeq: {cseq} {method}\r\nContact: <sip:alice@127.0.0.1:{me}>\r\n"
               f"{extra}Content-Length: {len(body)}\r\n\r\n{body}")
        return msg.encode()

    def final(seconds):
        end = time.time() + seconds
        while time.time() < end:
            s.settimeout(max(0.05, end - time.time()))
            try:
                st, h, body = parse_response(s.recv(65535).decode(errors="replace"))
            except socket.timeout:
                break
            if st >= 200:
                return st, h, body
        return None, {}, ""

    try:
        s.sendto(req("INVITE", f"sip:bob@127.0.0.1:{edge_port}", 1, body=sdp),
                 ("127.0.0.1", edge_port))
        st, h, body = final(10)
        contact = (h.get("contact") or [""])[0]
        check("callee: baresip's 200 reaches the UAC through edge and core with a Contact and "
              "an SDP answer", st == 200 and "sip:" in contact and "m=audio" in body,
              f"{st} contact {contact!r}")
        if st != 200:
            return
        uri = contact.split("<")[-1].split(">")[0]
        host, port = uri.split("@")[-1].split(";")[0].split(":")
        to_tag = ";tag=" + h["to"][0].split("tag=")[1].split(";")[0]
        s.sendto(req("ACK", uri, 1, to_tag, branch="ack1"), (host, int(port)))
        time.sleep(0.3)
        s.sendto(req("BYE", uri, 2, to_tag), (host, int(port)))
        st, _, _ = final(5)
        check("callee: the BYE to baresip's Contact gets 200", st == 200, str(st))
    finally:
        s.close()


def callee_hangs_up(check, bs, edge, core):
    """A UAC calls baresip through edge -> core by the route set both ways (RFC 3261 12.1.2,
    16.12): baresip answers, the UAC ACKs by Route; baresip is told to hang up over ctrl_tcp and
    its BYE goes up by the Record-Route set, core then edge, to the UAC's Contact, which answers
    200. Returns the BYE as it arrived ("" none)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    me = s.getsockname()[1]
    sdp = ("v=0\r\no=uac 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n"
           "m=audio 9 RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\na=inactive\r\n")
    at = ("127.0.0.1", edge.sip)

    def req(method, uri, cseq, to_tag="", body="", route=""):
        extra = "Content-Type: application/sdp\r\n" if body else ""
        extra += f"Route: {route}\r\n" if route else ""
        return (f"{method} {uri} SIP/2.0\r\n"
                f"Via: SIP/2.0/UDP 127.0.0.1:{me};branch=z9hG4bKcallee{method}{cseq}\r\n"
                f"Max-Forwards: 70\r\nFrom: <sip:alice@127.0.0.1>;tag=uac2\r\n"
                f"To: <sip:bob@127.0.0.1>{to_tag}\r\nCall-ID: bs2@baresip-test\r\n"
                f"CSeq: {cseq} {method}\r\nContact: <sip:alice@127.0.0.1:{me}>\r\n"
                f"{extra}Content-Length: {len(body)}\r\n\r\n{body}").encode()

    def next_msg(seconds, final=True):
        end = time.time() + seconds
        while time.time() < end:
            s.settimeout(max(0.05, end - time.time()))
            try:
                data, src = s.recvfrom(65535)
            except socket.timeout:
                break
            text = data.decode(errors="replace")
            if not final or not text.startswith("SIP/2.0 1"):
                return text, src
        return "", None

    try:
        s.sendto(req("INVITE", f"sip:bob@127.0.0.1:{edge.sip}", 1, body=sdp), at)
        text, _ = next_msg(10)
        st, h, _ = parse_response(text) if text.startswith("SIP/2.0") else (None, {}, "")
        rr = h.get("record-route", [])
        want = [f"<sip:127.0.0.1:{core.sip};lr>", f"<sip:127.0.0.1:{edge.sip};lr>"]
        check("callee hangs up: baresip's 200 reaches the UAC with the Record-Route of core and "
              "edge", st == 200 and rr == want, f"{st}, Record-Route {rr}")
        if st != 200:
            return ""
        contact = h["contact"][0].split("<")[-1].split(">")[0]
        to_tag = ";tag=" + h["to"][0].split("tag=")[1].split(";")[0]
        # The route set is the Record-Route reversed (12.1.2): edge first, where the ACK goes.
        route = ", ".join(reversed(rr))
        s.sendto(req("ACK", contact, 1, to_tag, route=route), at)
        time.sleep(0.3)
        before = {n.name: n.scrape() for n in (edge, core)}
        bs.command("hangup")
        bye, src = next_msg(10, final=False)
        vias = [v for v in parse_response("SIP/2.0 0 x\r\n" + bye.split("\r\n", 1)[-1])[1]
                .get("via", [])] if bye else []
        check("callee hangs up: baresip's BYE reaches the UAC from the edge, at its Contact, "
              "through edge and core (Vias edge, core, baresip), its Route used up",
              bye.startswith(f"BYE sip:alice@127.0.0.1:{me}") and src == at and
              "\r\nRoute:" not in bye and len(vias) == 3 and
              vias[0].startswith(f"SIP/2.0/UDP 127.0.0.1:{edge.sip};") and
              vias[1].startswith(f"SIP/2.0/UDP 127.0.0.1:{core.sip};") and
              vias[2].startswith(f"SIP/2.0/UDP 127.0.0.1:{bs.sip};"),
              f"{bye.splitlines()[0] if bye else 'nothing'!r} from {src}, Vias {vias}")
        if not bye.startswith("BYE "):
            return ""
        head = bye.split("\r\n\r\n")[0].split("\r\n")
        keep = [ln for ln in head[1:] if ln.lower().split(":")[0] in
                ("via", "from", "to", "call-id", "cseq")]
        s.sendto(("\r\n".join(["SIP/2.0 200 OK"] + keep + ["Content-Length: 0", "", ""]))
                 .encode(), at)
        for _ in range(30):  # the 200 goes down through edge and core to baresip
            after = {n.name: n.scrape() for n in (edge, core)}
            if all(after[n].get("osn_node_bye_ok_total", 0) >
                   before[n].get("osn_node_bye_ok_total", 0) for n in after):
                break
            time.sleep(0.1)
        for n in (edge.name, core.name):
            d = {k: after[n].get(f"osn_node_{k}_total", 0) -
                 before[n].get(f"osn_node_{k}_total", 0)
                 for k in ("bye_in", "bye_ok", "rejected_503", "timeouts_408")}
            check(f"callee hangs up: {n} took the BYE in and relayed the UAC's 200, no 503",
                  d == {"bye_in": 1, "bye_ok": 1, "rejected_503": 0, "timeouts_408": 0}, str(d))
        return bye
    finally:
        s.close()


def caller_callee_hangs_up(check, bs, uas, core, edge):
    """baresip dials through edge -> core to a uas that ends the call itself (callee_hangs_up =
    1): its BYE reaches baresip by the route set through core and edge, and baresip answers
    200."""
    n = sum(e.get("type") == "CALL_CLOSED" for e in bs.events)
    bs.command("dial", f"sip:bob@127.0.0.1:{edge.sip}")
    up = bs.wait_event("CALL_ESTABLISHED", 10, n + 1)
    m = uas.scrape()
    check("caller, callee hangs up: baresip establishes the call through edge and core to the uas",
          up and m.get("osn_node_calls_ok_total") == 1,
          f"events {[e.get('type') for e in bs.events]}, uas calls_ok "
          f"{m.get('osn_node_calls_ok_total')}")
    # The uas hangs up at the hold's end (0.5 s after its 2xx); nobody tells baresip to.
    down = bs.wait_event("CALL_CLOSED", 10, n + 1)
    closed = [e for e in bs.events if e.get("type") == "CALL_CLOSED"][n:]
    why = closed[0].get("param", "") if closed else ""
    # baresip logs this line for a session the peer ended (a BYE received), not for its own.
    said = f"sip:bob@127.0.0.1:{edge.sip}: session closed: Connection reset by peer"
    logged = said in open(bs.log).read()
    check("caller, callee hangs up: baresip says the remote side closed the call",
          down and why == "Connection reset by peer" and logged,
          f"CALL_CLOSED {closed}, log line {said!r} {'found' if logged else 'missing'}")
    # baresip's 200 goes down through edge and core to the uas a moment after it closes.
    for _ in range(30):
        m = {x.name: x.scrape() for x in (uas, core, edge)}
        if m[uas.name].get("osn_node_bye_sent_ok_total", 0) >= 1:
            break
        time.sleep(0.1)

    def total(name, key):  # a counter summed over its series (labels, if any)
        return sum(v for k, v in m[name].items() if k.split("{")[0] == f"osn_node_{key}_total")

    zero = ("rejected_503", "timeouts_408", "no_dialog_481", "stray")
    got = {k: total(uas.name, k) for k in ("bye_sent", "bye_sent_ok", "bye_in") + zero}
    check("caller, callee hangs up: the uas sent one BYE, answered 2xx, and got none",
          got == dict(bye_sent=1, bye_sent_ok=1, bye_in=0, **{k: 0 for k in zero}), str(got))
    for x in (core, edge):
        got = {k: total(x.name, k) for k in ("bye_in", "bye_ok") + zero}
        check(f"caller, callee hangs up: {x.name} took the uas's BYE in and relayed baresip's "
              "200, nothing refused or stray",
              got == dict(bye_in=1, bye_ok=1, **{k: 0 for k in zero}), str(got))


def main():
    osn = sys.argv[1]
    if not shutil.which("baresip"):
        print("SKIP: baresip is not installed (scripts/deps.sh test installs it)")
        return 77
    tmp = tempfile.mkdtemp(prefix="osn_baresip.")
    ok, nodes, bs = True, [], None

    def check(what, cond, detail=""):
        nonlocal ok
        print(("ok   " if cond else "FAIL ") + what + (": " + detail if detail else ""))
        ok = ok and cond

    try:
        bs = Baresip(tmp)
        uas = Node(osn, tmp, "uas", "--set", "node.element=uas", *RFC_TIMERS)
        core = Node(osn, tmp, "core", "--set", "node.element=core",
                    "--set", f"node.next_hop=127.0.0.1:{uas.sip}", *RFC_TIMERS)
        edge = Node(osn, tmp, "edge", "--set", "node.element=edge",
                    "--set", f"node.next_hop=127.0.0.1:{core.sip}", *RFC_TIMERS)
        core2 = Node(osn, tmp, "core2", "--set", "node.element=core",
                     "--set", f"node.next_hop=127.0.0.1:{bs.sip}", *RFC_TIMERS)
        edge2 = Node(osn, tmp, "edge2", "--set", "node.element=edge",
                     "--set", f"node.next_hop=127.0.0.1:{core2.sip}", *RFC_TIMERS)
        uas3 = Node(osn, tmp, "uas3", "--set", "node.element=uas",
                    "--set", "source.callee_hangs_up=1", "--set", "source.hold=0.5",
                    *RFC_TIMERS)
        core3 = Node(osn, tmp, "core3", "--set", "node.element=core",
                     "--set", f"node.next_hop=127.0.0.1:{uas3.sip}", *RFC_TIMERS)
        edge3 = Node(osn, tmp, "edge3", "--set", "node.element=edge",
                     "--set", f"node.next_hop=127.0.0.1:{core3.sip}", *RFC_TIMERS)
        nodes += [uas, core, edge, core2, edge2, uas3, core3, edge3]

        # baresip calls the uas.
        bs.command("dial", f"sip:bob@127.0.0.1:{edge.sip}")
        up = bs.wait_event("CALL_ESTABLISHED", 10)
        m = scrape(uas.met)
        check("caller: baresip establishes the call through edge and core to the uas", up and
              m.get("osn_node_calls_ok_total") == 1,
              f"events {[e.get('type') for e in bs.events]}, uas calls_ok "
              f"{m.get('osn_node_calls_ok_total')}")
        time.sleep(0.6)  # 3 T1: a 2xx not ACKed would have been resent by now
        m = scrape(uas.met)
        check("caller: the ACK reached the uas (no 2xx resent)",
              m.get("osn_node_retrans_sent_total") == 0,
              f"retrans_sent {m.get('osn_node_retrans_sent_total')}")
        bs.command("hangup")
        down = bs.wait_event("CALL_CLOSED", 10)
        # baresip closes the call as it sends the BYE; the BYE then follows the route set
        # through edge and core (Record-Route), so the uas's count may come a moment later.
        for _ in range(20):
            m = scrape(uas.met)
            if m.get("osn_node_bye_ok_total") == 1:
                break
            time.sleep(0.1)
        check("caller: baresip hangs up, the uas answers its BYE 200", down and
              m.get("osn_node_bye_ok_total") == 1 and m.get("osn_node_no_dialog_481_total") == 0,
              f"bye_ok {m.get('osn_node_bye_ok_total')}, 481s "
              f"{m.get('osn_node_no_dialog_481_total')}")
        check("caller: baresip saw no error", "Bad message" not in open(bs.log).read())

        # The UAC here calls baresip.
        uac_call(check, edge2.sip)
        check("callee: baresip answered and closed the call",
              bs.wait_event("CALL_ESTABLISHED", 5, 2) and bs.wait_event("CALL_CLOSED", 5, 2),
              str([e.get("type") for e in bs.events]))

        # The UAC calls baresip again, and baresip hangs up this time.
        callee_hangs_up(check, bs, edge2, core2)
        check("callee hangs up: baresip answered and closed the call",
              bs.wait_event("CALL_ESTABLISHED", 5, 3) and bs.wait_event("CALL_CLOSED", 5, 3),
              str([e.get("type") for e in bs.events]))

        # baresip calls a uas that hangs up.
        caller_callee_hangs_up(check, bs, uas3, core3, edge3)

        for name, live in wait_ended(nodes, 30).items():
            check(f"{name} ends with no transaction", live == 0, f"{live:.0f} live")
    finally:
        for n in nodes:
            n.stop()
        if bs:
            bs.stop()
            if not ok:
                print(open(bs.log).read()[-4000:])
        shutil.rmtree(tmp, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""What `osn node`'s uas answers on the wire, as a user agent must (issue 33), each check failing
without its behaviour; a plain UDP socket plays the peer, headers are read from the text:
  - INVITE with an SDP offer of PCMA, PCMU and telephone-event: the 180 and the 200 carry a
    Contact with the uas's own address (RFC 3261 12.1.1), the 200 an application/sdp answer
    with one m= line at a non-zero port, PCMA only (the first offered, RFC 3264 6), inactive,
    and the offer's t= line; a Content-Length that is the body's;
  - OPTIONS: 200 with Allow naming INVITE, ACK, BYE, CANCEL and OPTIONS, Accept and Supported
    (RFC 3261 11.2);
  - MESSAGE: 405 with the same Allow (8.2.1, 20.5);
  - a re-INVITE in the dialog: 200 alone with Contact and SDP, and its ACK (found by Call-ID and
    CSeq, RFC 3261 13.2.2.4) stops its 2xx;
  - a BYE and an INFO with a To tag of no dialog: 481 (12.2.2), a BYE of the call: 200;
  - an INVITE with a malformed offer: 488 (21.4.26), and one with a text/plain body: 415 with
    Accept: application/sdp (21.4.13);
  - every transaction ends.
Short [sip] timers (nodeproc.SHORT_TIMERS); a few seconds. Usage: uas_answers.py OSN
"""
import os
import shutil
import socket
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nodeproc import SHORT_TIMERS, Node, parse_response, wait_ended  # noqa: E402

OFFER = ("v=0\r\no=alice 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\n"
         "t=0 0\r\nm=audio 4000 RTP/AVP 8 0 101\r\na=rtpmap:8 PCMA/8000\r\n"
         "a=rtpmap:0 PCMU/8000\r\na=rtpmap:101 telephone-event/8000\r\n"
         "a=fmtp:101 0-15\r\na=sendrecv\r\n")


class Peer:
    def __init__(self, to):
        self.s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.s.bind(("127.0.0.1", 0))
        self.port, self.to, self.n = self.s.getsockname()[1], to, 0

    def send(self, method, call, cseq=1, to_tag="", body="", ctype="application/sdp"):
        self.n += 1
        extra = f"Content-Type: {ctype}\r\n" if body else ""
        msg = (f"{method} sip:bob@127.0.0.1:{self.to} SIP/2.0\r\n"
               f"Via: SIP/2.0/UDP 127.0.0.1:{self.port};branch=z9hG4bKua{self.n}\r\n"
               f"Max-Forwards: 70\r\nFrom: <sip:alice@127.0.0.1>;tag=a{call}\r\n"
               f"To: <sip:bob@127.0.0.1>{to_tag}\r\nCall-ID: {call}@uas-answers\r\n"
               f"CSeq: {cseq} {method}\r\nContact: <sip:alice@127.0.0.1:{self.port}>\r\n"
               f"{extra}Content-Length: {len(body.encode())}\r\n\r\n{body}")
        self.s.sendto(msg.encode(), ("127.0.0.1", self.to))

    def responses(self, upto, timeout=1.0):
        """Responses (status, {lower-case name: [values]}, body) until a final one of status
        >= 200 has come, or `timeout` s without any."""
        got = []
        self.s.settimeout(timeout)
        while True:
            try:
                text = self.s.recv(65535).decode(errors="replace")
            except socket.timeout:
                return got
            status, hdrs, body = parse_response(text)
            got.append((status, hdrs, body))
            if status >= upto:
                return got


def main():
    osn = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="osn_uas_answers.")
    ok, uas = True, None

    def check(what, cond, detail=""):
        nonlocal ok
        print(("ok   " if cond else "FAIL ") + what + (": " + detail if detail else ""))
        ok = ok and cond

    try:
        uas = Node(osn, tmp, "uas", *SHORT_TIMERS, "--set", "node.element=uas")
        me = f"sip:127.0.0.1:{uas.sip}"
        p = Peer(uas.sip)

        p.send("INVITE", "c1", body=OFFER)
        got = p.responses(200)
        st = [g[0] for g in got]
        check("180 then 200 to an INVITE", st[-2:] == [180, 200], str(st))
        r180 = next((g for g in got if g[0] == 180), None)
        r200 = next((g for g in got if g[0] == 200), None)
        check("the 180 has our Contact", r180 and r180[1].get("contact") == [f"<{me}>"],
              str(r180 and r180[1].get("contact")))
        check("the 200 has our Contact", r200 and r200[1].get("contact") == [f"<{me}>"],
              str(r200 and r200[1].get("contact")))
        body = r200[2] if r200 else ""
        lines = body.split("\r\n")
        m = [l for l in lines if l.startswith("m=")]
        check("the 200 carries application/sdp of its length",
              r200 and r200[1].get("content-type") == ["application/sdp"] and
              r200[1].get("content-length") == [str(len(body.encode()))],
              str(r200 and (r200[1].get("content-type"), r200[1].get("content-length"))))
        check("the answer takes the first offered codec only (PCMA, 8)",
              len(m) == 1 and m[0].split()[3:] == ["8"] and m[0].split()[1] != "0" and
              "a=rtpmap:8 PCMA/8000" in lines and not any("PCMU" in l or "telephone" in l
                                                          for l in lines), str(m))
        check("the answer is inactive with the offer's t= line and a c= line",
              "a=inactive" in lines and "t=0 0" in lines and
              any(l.startswith("c=IN IP4 127.0.0.1") for l in lines), body.replace("\r\n", "|"))
        tag = r200[1]["to"][0].split("tag=")[1] if r200 else "x"
        p.send("ACK", "c1", to_tag=f";tag={tag}")

        # A re-INVITE in the dialog: 200 alone, Contact and SDP; its ACK (the same Call-ID as
        # the first INVITE's, CSeq 2) stops its 2xx: at most one copy in 64*T1 (1.28 s), where
        # an ACK taken for the first INVITE's would leave about 16.
        p.send("INVITE", "c1", cseq=2, to_tag=f";tag={tag}", body=OFFER)
        got = p.responses(200)
        r = got[-1] if got else (0, {}, "")
        check("a re-INVITE gets 200 alone, with Contact and SDP",
              [g[0] for g in got] == [200] and r[1].get("contact") == [f"<{me}>"] and
              "m=audio" in r[2], str([g[0] for g in got]))
        p.send("ACK", "c1", cseq=2, to_tag=f";tag={tag}")
        copies = p.responses(700, timeout=1.5)
        check("the re-INVITE's ACK stops its 2xx", len(copies) <= 1,
              f"{len(copies)} copies after the ACK")

        p.send("OPTIONS", "o1")
        r = p.responses(200)
        h = r[-1][1] if r else {}
        allow = sorted(x.strip() for v in h.get("allow", []) for x in v.split(","))
        check("OPTIONS: 200 with Allow, Accept and Supported",
              r and r[-1][0] == 200 and allow == sorted(["INVITE", "ACK", "BYE", "CANCEL",
                                                         "OPTIONS"]) and
              h.get("accept") == ["application/sdp"] and "supported" in h,
              f"{r and r[-1][0]} allow {allow} accept {h.get('accept')} "
              f"supported {h.get('supported')}")

        p.send("MESSAGE", "m1", body="hi", ctype="text/plain")
        r = p.responses(200)
        h = r[-1][1] if r else {}
        allow = sorted(x.strip() for v in h.get("allow", []) for x in v.split(","))
        check("MESSAGE: 405 with Allow", r and r[-1][0] == 405 and "INVITE" in allow and
              "MESSAGE" not in allow, f"{r and r[-1][0]} allow {allow}")

        p.send("BYE", "nodialog", cseq=2, to_tag=";tag=zz")
        r1 = p.responses(200)
        p.send("INFO", "nodialog2", cseq=2, to_tag=";tag=zz")
        r2 = p.responses(200)
        check("481 for a BYE and an INFO in no dialog",
              r1 and r1[-1][0] == 481 and r2 and r2[-1][0] == 481,
              f"{r1 and r1[-1][0]} {r2 and r2[-1][0]}")

        p.send("INVITE", "bad", body="v=0\r\nhello\r\n")
        r = p.responses(200)
        check("488 for a malformed offer", [g[0] for g in r if g[0] >= 200] == [488],
              str([g[0] for g in r]))
        p.send("ACK", "bad", to_tag=";tag=x")
        p.send("INVITE", "txt", body="hello", ctype="text/plain")
        r = p.responses(200)
        check("415 with Accept for a body not SDP", r and r[-1][0] == 415 and
              r[-1][1].get("accept") == ["application/sdp"], str(r and r[-1][:2]))
        p.send("ACK", "txt", to_tag=";tag=x")

        p.send("BYE", "c1", cseq=3, to_tag=f";tag={tag}")
        r = p.responses(200)
        check("200 for the BYE of the call", r and r[-1][0] == 200, str(r and r[-1][0]))

        live = wait_ended([uas], 10)["uas"]
        check("every transaction ends", live == 0, f"{live:.0f} live")
    finally:
        if uas:
            uas.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Transactions in their final wait are kept compact (src/node/kept.c): a copy that reaches one
gets exactly what the RFC says, byte for byte what the live transaction sent before it was
kept; and the memory budget sizes the cap.

Driven here, on 127.0.0.1 with ports the nodes chose (port 0), this script playing the caller
and, behind an edge, the next hop:
  1. uas, OPTIONS answered 200 and a BYE of no call answered 481 (RFC 3261 17.2.2: the
     non-INVITE server in Completed resends its final to a copy): the copy's answer equals the
     first answer byte for byte, and the uas holds them kept (osn_node_transactions_kept);
  1b. uas, INVITE answered 200: live until its ACK (its TU resends the 2xx from it), kept
     after (RFC 6026 Accepted, Timer L); an INVITE copy then is absorbed, nothing sent (7.1),
     and an ACK copy too, not counted stray;
  2. edge, INVITE answered 486 by the next hop: the edge ACKs it (RFC 3261 17.1.1.3); a copy of
     the 486 gets the same ACK again (17.1.1.2, INVITE client in Completed, kept), and the
     caller's INVITE copy after its ACK is absorbed, nothing sent (17.2.1, Confirmed);
  3. edge, INVITE answered 200: a copy of the 200 from the next hop is relayed upstream again,
     byte for byte the first relay (RFC 6026 7.2 and 7.1, both transactions in Accepted,
     kept); the caller's INVITE copy is absorbed (7.1);
  4. edge, BYE answered 200 by the next hop: the caller's BYE copy gets the same 200 from the
     edge (17.2.2), and the next hop sees no second BYE;
  5. a copy that is not the request first answered (another Call-ID line, same key) is
     not answered from a reprint that would differ: counted in kept_unsent;
  6. max_memory: 2 MiB gives max_transactions 1024 (2 MiB / 2048, the rule of docs/node.md)
     in the resolved scenario of the JSON summary; 1000 bytes is refused with exit 2 naming
     node.max_memory;
  7. the load generator (this script its callee; run before 6): once a call is acked its
     INVITE client in Accepted is kept (the call holds the BYE's text, not the transaction),
     so while the BYEs wait only they are live; a 200 copy reaching a kept INVITE is ACKed
     again, the first ACK but for its branch (RFC 3261 13.2.2.4, 6026 7.2); every call ends
     good.

Usage: kept.py OSN      prints what it checked; exit 0 when all passed.
"""
import json
import os
import re
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nodeproc  # noqa: E402


class Node(nodeproc.Node):
    """A node on port 0 with its metrics port, RFC 3261's timers (no --set of [sip])."""

    def wait_kept(self, want, seconds=5):
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            if self.gauge("transactions_kept") >= want:
                return True
            time.sleep(0.05)
        return False


class Sock:
    def __init__(self):
        self.s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.s.bind(("127.0.0.1", 0))
        self.port = self.s.getsockname()[1]

    def send(self, data, port):
        self.s.sendto(data, ("127.0.0.1", port))

    def recv(self, want, timeout=3):
        """The first datagram whose start line starts with `want` (others passed over: 100s),
        None when none comes in time."""
        end = time.monotonic() + timeout
        while True:
            left = end - time.monotonic()
            if left <= 0 or not select.select([self.s], [], [], left)[0]:
                return None
            data = self.s.recv(65535)
            if data.startswith(want.encode()):
                return data


def request(method, to, port, call, branch, cseq, to_tag="", extra=""):
    return (f"{method} sip:bob@127.0.0.1:{to} SIP/2.0\r\n"
            f"Via: SIP/2.0/UDP 127.0.0.1:{port};branch=z9hG4bK{branch}\r\n"
            f"Max-Forwards: 70\r\nFrom: <sip:alice@127.0.0.1>;tag=a{call}\r\n"
            f"To: <sip:bob@127.0.0.1>{to_tag}\r\nCall-ID: {call}@kept\r\n"
            f"CSeq: {cseq} {method}\r\n{extra}Content-Length: 0\r\n\r\n").encode()


def answer(req, status, reason, tag="d1", contact=False):
    """What a UAS answers request `req` (bytes), RFC 3261 8.2.6.2: its Vias, From, Call-ID and
    CSeq, its To with our tag."""
    head = req.split(b"\r\n\r\n")[0].decode().split("\r\n")
    keep = [l for l in head[1:] if l.split(":")[0].lower() in ("via", "from", "call-id", "cseq")]
    to = [l for l in head[1:] if l.lower().startswith("to:")][0]
    if ";tag=" not in to:
        to += f";tag={tag}"
    lines = [f"SIP/2.0 {status} {reason}"] + keep + [to]
    if contact:
        lines.append("Contact: <sip:bob@127.0.0.1>")
    return ("\r\n".join(lines) + "\r\nContent-Length: 0\r\n\r\n").encode()


def main():
    osn = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="kept-")
    nodes, ok = [], True

    def check(cond, what):
        nonlocal ok
        print(("ok: " if cond else "FAIL: ") + what)
        ok = ok and cond

    try:
        # ---- 1. uas
        uas = Node(osn, tmp, "uas", "--set", "node.element=uas")
        nodes.append(uas)
        c = Sock()
        for method, status, call in (("OPTIONS", "200", "o1"), ("BYE", "481", "b0")):
            req = request(method, uas.sip, c.port, call, call, 1, to_tag=";tag=x" if
                          method == "BYE" else "")
            c.send(req, uas.sip)
            first = c.recv("SIP/2.0 " + status)
            kept = uas.wait_kept(1)
            c.send(req, uas.sip)
            again = c.recv("SIP/2.0 " + status)
            check(first is not None and kept and again == first,
                  f"uas {method} {status}: kept ({kept}), the copy's answer is the first's, "
                  f"byte for byte ({len(first or b'')} bytes)")

        # ---- 1b. uas, INVITE answered 200, then its ACK
        before = uas.gauge("transactions_kept")
        stray = uas.gauge("stray_total")
        inv = request("INVITE", uas.sip, c.port, "u200", "u200", 1)
        c.send(inv, uas.sip)
        ok200 = c.recv("SIP/2.0 200")
        live = uas.live() - uas.gauge("transactions_kept")
        check(ok200 is not None and live == 1 and uas.gauge("transactions_kept") == before,
              f"uas, INVITE answered 200 and not acked: live ({live} live), its TU resends "
              "the 2xx from it (RFC 3261 13.3.1.4)")
        to_tag = re.search(rb"To: [^\r]*?(;tag=[^\r;]+)", ok200 or b"")
        ack = request("ACK", uas.sip, c.port, "u200", "u200ack", 1,
                      to_tag=to_tag.group(1).decode() if to_tag else "")
        c.send(ack, uas.sip)
        kept = uas.wait_kept(before + 1)
        live = uas.live() - uas.gauge("transactions_kept")
        check(kept and live == 0,
              f"uas, its ACK come: the INVITE kept for the rest of Timer L ({live} live, "
              f"kept {uas.gauge('transactions_kept'):.0f})")
        while c.recv("SIP/2.0", 0.2):  # a 2xx copy sent before the ACK came
            pass
        absorbed = uas.gauge("retrans_absorbed_total")
        c.send(inv, uas.sip)
        got = c.recv("SIP/2.0", 0.7)
        check(got is None and uas.gauge("retrans_absorbed_total") == absorbed + 1,
              "uas, an INVITE copy after the ACK (kept, Accepted): absorbed, nothing sent "
              "(RFC 6026 7.1)")
        c.send(ack, uas.sip)
        # an OPTIONS behind it: its 200 says the ACK copy was handled before
        c.send(request("OPTIONS", uas.sip, c.port, "o2", "o2", 1), uas.sip)
        got = c.recv("SIP/2.0")
        check(got is not None and b"CSeq: 1 OPTIONS" in got and uas.gauge("stray_total") == stray,
              f"uas, an ACK copy after the move: absorbed, nothing sent, not stray "
              f"(stray {uas.gauge('stray_total'):.0f}, was {stray:.0f})")

        # ---- 2..5. edge in front of this script as its next hop
        down = Sock()
        edge = Node(osn, tmp, "edge", "--set", "node.element=edge", "--set", "sip.t4=30",
                    "--set", f"node.next_hop=127.0.0.1:{down.port}")
        nodes.append(edge)
        up = Sock()

        # 2. INVITE -> 486
        inv = request("INVITE", edge.sip, up.port, "i486", "i486", 1)
        up.send(inv, edge.sip)
        fwd = down.recv("INVITE")
        r486 = answer(fwd, 486, "Busy Here")
        down.send(r486, edge.sip)
        ack1 = down.recv("ACK")
        got = up.recv("SIP/2.0 486")
        to_tag = re.search(rb"To: [^\r]*?(;tag=[^\r;]+)", got or b"")
        up.send(request("ACK", edge.sip, up.port, "i486", "i486", 1,
                        to_tag=to_tag.group(1).decode() if to_tag else ""), edge.sip)
        kept = edge.wait_kept(2)  # the INVITE server (Confirmed) and client (Completed)
        down.send(r486, edge.sip)
        ack2 = down.recv("ACK")
        check(ack1 is not None and kept and ack2 == ack1,
              f"edge, a copy of the 486 at the kept INVITE client gets the same ACK "
              f"({len(ack1 or b'')} bytes), kept {kept}")
        up.send(inv, edge.sip)
        check(up.recv("SIP/2.0", 0.5) is None,
              "edge, the caller's INVITE copy in Confirmed (kept): absorbed, nothing sent")

        # 3. INVITE -> 200
        before = edge.gauge("transactions_kept")
        inv = request("INVITE", edge.sip, up.port, "i200", "i200", 1)
        up.send(inv, edge.sip)
        fwd = down.recv("INVITE")
        r200 = answer(fwd, 200, "OK", contact=True)
        down.send(r200, edge.sip)
        rel1 = up.recv("SIP/2.0 200")
        kept = edge.wait_kept(before + 2)  # both in Accepted
        down.send(r200, edge.sip)
        rel2 = up.recv("SIP/2.0 200")
        check(rel1 is not None and kept and rel2 == rel1,
              f"edge, a copy of the 200 at the kept INVITE client is relayed again, byte for "
              f"byte the first relay ({len(rel1 or b'')} bytes), kept {kept}")
        up.send(inv, edge.sip)
        check(up.recv("SIP/2.0", 0.5) is None,
              "edge, the caller's INVITE copy in Accepted (kept): absorbed, nothing sent")

        # 4. BYE -> 200
        before = edge.gauge("transactions_kept")
        bye = request("BYE", edge.sip, up.port, "i200", "i200bye", 2, to_tag=";tag=d1")
        up.send(bye, edge.sip)
        fwd = down.recv("BYE")
        down.send(answer(fwd, 200, "OK"), edge.sip)
        b1 = up.recv("SIP/2.0 200")
        kept = edge.wait_kept(before + 1)
        up.send(bye, edge.sip)
        b2 = up.recv("SIP/2.0 200")
        check(b1 is not None and kept and b2 == b1,
              f"edge, the caller's BYE copy at the kept BYE server gets the same 200 "
              f"({len(b1 or b'')} bytes), kept {kept}")
        check(down.recv("BYE", 0.5) is None, "edge, the next hop saw one BYE only")

        # 5. a copy whose answer would differ (its Call-ID changed, its key the same)
        odd = bye.replace(b"Call-ID: i200@kept", b"Call-ID: i200x@kept")
        up.send(odd, edge.sip)
        got = up.recv("SIP/2.0", 0.5)
        end = time.monotonic() + 3
        while edge.gauge("kept_unsent_total") < 1 and time.monotonic() < end:
            time.sleep(0.05)
        check(got is None and edge.gauge("kept_unsent_total") == 1,
              "edge, a copy unlike the request first answered: no answer, kept_unsent 1")

        # ---- 7. the load generator, this script its callee
        callee = Sock()
        gen = Node(osn, tmp, "gen", "--set", "node.element=uac", "--set", "source.rate=5",
                   "--set", "node.duration=2", "--set", "source.hold=100", "--set", "net.seed=1",
                   "--set", f"node.next_hop=127.0.0.1:{callee.port}", summary=True)
        nodes.append(gen)
        oks, acks, byes = {}, {}, []
        end = time.monotonic() + 20
        while time.monotonic() < end and not (oks and len(byes) == len(oks) == len(acks)):
            got = callee.recv("", 0.5)
            if not got:
                continue
            cid = re.search(rb"Call-ID: *([^\r]+)", got).group(1)
            if got.startswith(b"INVITE"):
                oks.setdefault(cid, answer(got, 200, "OK", contact=True))
                callee.send(oks[cid], gen.sip)
            elif got.startswith(b"ACK"):
                acks.setdefault(cid, got)
            elif got.startswith(b"BYE"):
                byes.append(got)
        n = len(oks)
        kept, live = gen.gauge("transactions_kept"), gen.live() - gen.gauge("transactions_kept")
        check(n > 0 and len(acks) == len(byes) == n and kept >= n and live == n,
              f"generator, {n} calls acked and hung up: their INVITEs kept in Accepted (kept "
              f"{kept:.0f}), only the BYEs live ({live:.0f})")
        cid = next(iter(oks), None)
        if cid:
            callee.send(oks[cid], gen.sip)
        again = callee.recv("ACK", 2)

        def unbranched(ack):  # each ACK the generator prints has a branch of its own
            return re.sub(rb";branch=[^;\r]+", b"", ack or b"")
        check(cid is not None and again and unbranched(again) == unbranched(acks.get(cid)),
              f"generator, a 200 copy at its kept INVITE client is ACKed again (RFC 3261 "
              f"13.2.2.4), the first ACK but for its branch ({len(again or b'')} bytes)")
        for bye in byes:
            callee.send(answer(bye, 200, "OK"), gen.sip)
        rc = gen.p.wait(timeout=60)
        uac = json.load(open(gen.json))["uac"] if rc == 0 else {}
        check(rc == 0 and uac.get("good") == uac.get("calls_started") == n,
              f"generator, exit {rc}: {uac.get('good')} good of {uac.get('calls_started')}")

        # ---- 6. max_memory sizes max_transactions
        js = os.path.join(tmp, "mem.json")
        p = subprocess.run(["timeout", "30", osn, "node", "--set", "node.listen=127.0.0.1:0",
                            "--set", "node.max_memory=2097152", "--set", "node.duration=0.2",
                            "--json", js, "-q"], capture_output=True, text=True)
        derived = None
        if p.returncode == 0 and os.path.exists(js):
            d = json.load(open(js))
            derived = d["scenario_resolved"]["node"]["max_transactions"]
        check(derived == 2097152 // 2048,
              f"max_memory 2 MiB: max_transactions {derived}, want {2097152 // 2048}")
        p = subprocess.run(["timeout", "30", osn, "node", "--set", "node.max_memory=1000"],
                           capture_output=True, text=True)
        check(p.returncode == 2 and "node.max_memory" in p.stderr,
              f"max_memory 1000: exit {p.returncode}, '{p.stderr.strip()}'")
    finally:
        for n in nodes:
            n.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""A stand-in for `osn node`, for testing the test harness only; NOT the product.

It speaks the command-line contract of `osn node` (see tests/node/lib.sh) well enough for the
interop and RFC 4475 tests to exercise their node code paths (argument passing, SIGTERM, the
--json summary and its counters, the --stats CSV) before the real node exists:

    OSN=tests/node/fake_osn.py OSN_REAL=build/osn bash tests/test_node_interop.sh ...

Every other subcommand (`sim` ...) is handed to the real osn named by OSN_REAL.
What it does: `uas` answers INVITE with 180 and 200 (retransmitting the 200 until the ACK),
BYE and other requests with 200; `edge`/`core` is a transaction-stateful proxy toward
next_hop: 100 Trying upstream, a Via of its own on top, Max-Forwards decremented (483 at 0),
retransmitted requests absorbed (last response repeated), the top Via popped from responses,
which go to the next Via's host:port; a 2xx ACK and CANCEL are forwarded. It has no costs, no
overload control, no timers beyond the UAS's 200 retransmission, and a minimal parser:
a request without a parseable start line, Via, Call-ID, CSeq (number and method matching
the request line), From and To, or with a Content-Length beyond the datagram, is malformed
(400 when the top Via can be read, else dropped).
"""
import json
import os
import re
import resource
import select
import signal
import socket
import sys
import time

KEYS = ("calls_in", "calls_forwarded", "calls_ok", "rejected_503", "timeouts_408", "dropped",
        "retrans_absorbed", "bad_answered", "bad_dropped", "bye_in", "bye_ok",
        "transactions_peak", "rss_peak_kb")
COMPACT = {"v": "via", "i": "call-id", "f": "from", "t": "to", "l": "content-length",
           "m": "contact", "c": "content-type"}


def usage():
    print(__doc__)
    print("usage: fake_osn.py node [SCENARIO.ini] [--set SECTION.KEY=VALUE]... [--json FILE|-]"
          " [--stats FILE|-] [-q]")


class Msg:
    def __init__(self, data):
        head, sep, body = data.partition(b"\r\n\r\n")
        if not sep:
            raise ValueError("no end of headers")
        lines = head.decode("utf-8", "replace").split("\r\n")
        # unfold continuation lines
        self.lines = []
        for ln in lines[1:]:
            if ln[:1] in (" ", "\t") and self.lines:
                self.lines[-1] += " " + ln.strip()
            else:
                self.lines.append(ln)
        self.start = lines[0]
        self.body = body
        m = re.match(r"^SIP/2\.0 (\d{3}) ", self.start + " ")
        if m:
            self.code, self.method = int(m.group(1)), None
        else:
            m = re.match(r"^([A-Za-z0-9.!%*_+`'~-]+) (\S+) SIP/2\.0$", self.start)
            if not m:
                raise ValueError("bad start line")
            self.code, self.method = None, m.group(1)

    def hdrs(self, name):
        out = []
        for i, ln in enumerate(self.lines):
            n, sep, v = ln.partition(":")
            n = n.strip().lower()
            if sep and COMPACT.get(n, n) == name:
                out.append((i, v.strip()))
        return out

    def get(self, name):
        h = self.hdrs(name)
        return h[0][1] if h else None

    def top_via(self):
        h = self.hdrs("via")
        return h[0][1].split(",")[0].strip() if h else None

    def encode(self):
        return ("\r\n".join([self.start] + self.lines) + "\r\n\r\n").encode() + self.body


def via_addr(via):
    m = re.match(r"SIP/2\.0/UDP\s+([^;:\s]+)(?::(\d+))?", via or "", re.I)
    if not m:
        return None
    host, port = m.group(1), int(m.group(2) or 5060)
    rp = re.search(r";rport=(\d+)", via)
    rc = re.search(r";received=([^;\s]+)", via)
    return (rc.group(1) if rc else host, int(rp.group(1)) if rp else port)


def branch(via):
    m = re.search(r";\s*branch\s*=\s*([^;\s,]+)", via or "", re.I)
    return m.group(1) if m else None


def main(argv):
    if len(argv) < 2 or argv[1] != "node":
        real = os.environ.get("OSN_REAL")
        if real and len(argv) >= 2:
            os.execv(real, [real] + argv[1:])
        usage()
        return 2
    cfg = {"node.element": "edge", "node.listen": "127.0.0.1:5060", "node.next_hop": "",
           "node.duration": "0", "node.stats_interval": "1", "control.kind": "none"}
    jpath = spath = None
    quiet = False
    i = 2
    while i < len(argv):
        a = argv[i]
        if a in ("--help", "-h"):
            usage()
            return 0
        if a == "--set":
            k, _, v = argv[i + 1].partition("=")
            cfg[k.strip()] = v.strip()
            i += 2
        elif a == "--json":
            jpath = argv[i + 1]
            i += 2
        elif a == "--stats":
            spath = argv[i + 1]
            i += 2
        elif a == "-q":
            quiet = True
            i += 1
        elif a.startswith("-"):
            print("osn node: unknown option %s" % a, file=sys.stderr)
            return 2
        else:
            i += 1  # scenario file: costs are ignored by this stand-in
    elem = cfg["node.element"]
    if elem not in ("edge", "core", "uas"):
        print("osn node: node.element: '%s' is not edge, core or uas" % elem, file=sys.stderr)
        return 2
    if elem != "uas" and not cfg["node.next_hop"]:
        print("osn node: node.next_hop is required for a proxy", file=sys.stderr)
        return 2
    lh, lp = cfg["node.listen"].rsplit(":", 1)
    nh = None
    if elem != "uas":
        h, p = cfg["node.next_hop"].rsplit(":", 1)
        nh = (h, int(p))
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
    sock.bind((lh, int(lp)))
    lp = sock.getsockname()[1]  # port 0: the one the kernel chose
    me = "%s:%s" % (lh, lp)
    # the listening line, as osn node prints it (stderr when --json - or --stats - take stdout)
    line = "osn node %s listening on %s (udp)" % (elem, me)
    if nh:
        line += ", next hop %s:%d" % nh
    print(line, file=sys.stderr if "-" in (jpath, spath) else sys.stdout, flush=True)
    n = dict.fromkeys(KEYS, 0)
    stop = []
    signal.signal(signal.SIGTERM, lambda *a: stop.append(1))
    signal.signal(signal.SIGINT, lambda *a: stop.append(1))
    t_start = time.monotonic()
    duration = float(cfg["node.duration"])
    interval = float(cfg["node.stats_interval"])
    sf = None
    if spath:
        sf = sys.stdout if spath == "-" else open(spath, "w")
        sf.write("t,calls_in,calls_forwarded,calls_ok,rejected_503,dropped,retrans_absorbed,"
                 "queue,mode\n")
    next_stats = t_start + interval
    server = {}   # (upstream branch, method) -> dict(last=bytes, addr, down=branch, ok)
    client = {}   # our branch -> server key
    uas_2xx = {}  # call-id -> [bytes, addr, next_time, interval, deadline]
    seq = [0]

    def send(data, addr):
        try:
            sock.sendto(data, addr)
        except OSError:
            n["dropped"] += 1

    def reply(req, addr, code, reason, totag=None):
        lines = [ln for ln in req.lines if re.match(r"(?i)\s*(via|v|from|f|to|t|call-id|i|cseq)\s*:", ln)]
        if totag:
            lines = [ln + ";tag=" + totag if re.match(r"(?i)\s*(to|t)\s*:", ln) and ";tag=" not in ln
                     else ln for ln in lines]
        lines.append("Content-Length: 0")
        data = ("SIP/2.0 %d %s\r\n" % (code, reason) + "\r\n".join(lines) + "\r\n\r\n").encode()
        send(data, addr)
        return data

    def valid_request(m, raw):
        if m.top_via() is None or via_addr(m.top_via()) is None:
            return False
        for h in ("call-id", "from", "to", "cseq"):
            if m.get(h) is None:
                return False
        cs = re.match(r"^(\d{1,10})\s+(\S+)$", m.get("cseq"))
        if not cs or int(cs.group(1)) >= 2 ** 31 or (m.method and cs.group(2) != m.method):
            return False
        cl = m.get("content-length")
        if cl is not None:
            if not re.match(r"^\d{1,9}$", cl) or int(cl) > len(m.body):
                return False
        return True

    while not stop:
        now = time.monotonic()
        if duration > 0 and now - t_start >= duration:
            break
        r, _, _ = select.select([sock], [], [], 0.05)
        now = time.monotonic()
        for cid, e in list(uas_2xx.items()):
            if now >= e[4]:
                del uas_2xx[cid]
            elif now >= e[2]:
                send(e[0], e[1])
                e[3] = min(e[3] * 2, 4.0)
                e[2] = now + e[3]
        if sf and now >= next_stats:
            sf.write("%.0f,%d,%d,%d,%d,%d,%d,0,0\n" % (now - t_start, n["calls_in"],
                     n["calls_forwarded"], n["calls_ok"], n["rejected_503"], n["dropped"],
                     n["retrans_absorbed"]))
            sf.flush()
            next_stats += interval
        if not r:
            continue
        try:
            raw, addr = sock.recvfrom(65536)
        except (BlockingIOError, InterruptedError):
            continue
        try:
            m = Msg(raw)
        except ValueError:
            n["bad_dropped"] += 1
            continue
        if m.code is not None:  # a response
            if elem == "uas" or m.top_via() is None or m.code == 100:
                continue  # a proxy does not forward 100 Trying (RFC 3261 16.7)
            br = branch(m.top_via())
            key = client.get(br)
            if key is None:
                continue
            st = server[key]
            i0, v0 = m.hdrs("via")[0]
            rest = [x.strip() for x in v0.split(",")[1:]]
            if rest:
                m.lines[i0] = "Via: " + ", ".join(rest)
            else:
                del m.lines[i0]
            data = m.encode()
            st["last"] = data
            send(data, st["addr"])
            if key[1] == "INVITE" and 200 <= m.code < 300 and not st["ok"]:
                st["ok"] = True
                n["calls_ok"] += 1
            if key[1] == "BYE" and 200 <= m.code < 300 and not st["ok"]:
                st["ok"] = True
                n["bye_ok"] += 1
            continue
        if not valid_request(m, raw):
            va = via_addr(m.top_via()) if m.top_via() else None
            if va and m.method != "ACK":
                reply(m, (addr[0], va[1]), 400, "Bad Request")
                n["bad_answered"] += 1
            else:
                n["bad_dropped"] += 1
            continue
        top = m.top_via()
        br = branch(top)
        ua = via_addr(top)
        ua = (addr[0], ua[1])  # RFC 3261 18.2.2: received = the packet's source
        meth = m.method
        key = (br, "INVITE" if meth == "ACK" else meth)
        if meth == "ACK":
            if elem == "uas":
                uas_2xx.pop(m.get("call-id"), None)
                continue
            if key in server and not server[key]["ok"]:
                continue  # ACK of a non-2xx final: hop by hop, absorbed
        elif key in server:
            n["retrans_absorbed"] += 1
            if server[key]["last"]:
                send(server[key]["last"], server[key]["addr"])
            continue
        if elem == "uas":
            st = {"last": None, "addr": ua, "ok": False}
            server[key] = st
            if meth == "INVITE":
                n["calls_in"] += 1
                n["calls_forwarded"] += 1
                tag = "fake%d" % len(server)
                reply(m, ua, 180, "Ringing", tag)
                st["last"] = reply(m, ua, 200, "OK", tag)
                st["ok"] = True
                n["calls_ok"] += 1
                uas_2xx[m.get("call-id")] = [st["last"], ua, time.monotonic() + 0.5, 0.5,
                                             time.monotonic() + 32]
            else:
                if meth == "BYE":
                    n["bye_in"] += 1
                    n["bye_ok"] += 1
                st["last"] = reply(m, ua, 200, "OK")
            n["transactions_peak"] = max(n["transactions_peak"], len(server))
            continue
        # proxy
        mf = m.hdrs("max-forwards")
        if mf:
            try:
                v = int(mf[0][1])
            except ValueError:
                v = 70
            if v <= 0:
                reply(m, ua, 483, "Too Many Hops")
                continue
            m.lines[mf[0][0]] = "Max-Forwards: %d" % (v - 1)
        seq[0] += 1
        ours = "z9hG4bK-fake-%d-%d" % (os.getpid(), seq[0])
        m.lines.insert(0, "Via: SIP/2.0/UDP %s;branch=%s" % (me, ours))
        if meth != "ACK":
            st = {"last": None, "addr": ua, "ok": False}
            server[key] = st
            client[ours] = key
            n["transactions_peak"] = max(n["transactions_peak"], len(server))
            if meth == "INVITE":
                n["calls_in"] += 1
                n["calls_forwarded"] += 1
                st["last"] = reply(m, ua, 100, "Trying")
            elif meth == "BYE":
                n["bye_in"] += 1
        send(m.encode(), nh)
    n["rss_peak_kb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    out = dict(n, element=elem, control=cfg["control.kind"],
               elapsed_s=round(time.monotonic() - t_start, 3))
    if jpath:
        text = json.dumps(out, indent=1) + "\n"
        if jpath == "-":
            sys.stdout.write(text)
        else:
            with open(jpath, "w") as f:
                f.write(text)
    if sf and sf is not sys.stdout:
        sf.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/env python3
"""The metrics endpoint's throttle gauge moves with the next hop's feedback, carries the element
as a label, and docs/node.md lists every series the node exports (issue 35).

Checks, each printed as FAIL when it does not hold:
  gauge   an edge with control loss, then rate, before a next hop (a UDP socket here) that
          answers the forwarded INVITE with 486 carrying RFC 7339 feedback in the top Via:
          loss, oc=20 -> osn_node_client_shed_percent{element="edge"} 20 (RFC 7339 5.5: oc is
          the percentage of requests to reduce); rate, oc=150 ->
          osn_node_client_rate_limit_per_s{element="edge"} 150 (RFC 7415 3.3: oc is the
          highest rate, requests per second); before the answer, 0 and +Inf (no feedback yet);
          rate_dyn (whose client half is rate's) as rate
  fanout  an edge with control loss before two next hops: one gauge per server
          (osn_node_client_shed_percent{element="edge",server="HOST:PORT"}), 0 for both before
          any feedback; after the server the INVITE went to answers with oc=20, 20 for it and
          still 0 for the other (RFC 7339 5.10: a client keeps the state per server)
  docs    the series of docs/node.md's table ("The metrics endpoint") are exactly those a uas,
          an edge with loss and an edge with rate, with one and with two next hops, export
          together, with the labels shown

Usage: metrics_gauge.py OSN SOURCE_DIR     exit 0 when every check held, 1 otherwise.
"""
import os
import re
import select
import socket
import sys
import tempfile
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nodeproc import Node  # noqa: E402  (port 0, the listening line read one way)

failures = 0


def fail(msg):
    global failures
    failures += 1
    print("FAIL " + msg)


def start(osn, tmp, *sets):
    """A node on 127.0.0.1:0 with its metrics port for at most 40 s; SETS are key=value."""
    args = [a for s in sets for a in ("--set", s)]
    return Node(osn, tmp, "node", "--set", "node.duration=40", *args, seconds=60)


def scrape(met):
    return urllib.request.urlopen(f"http://127.0.0.1:{met}/metrics", timeout=5).read().decode()


def samples(text):
    """{name{labels}: value} of the exposition's samples."""
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            key, _, value = line.rpartition(" ")
            out[key] = value
    return out


def invite(caller, edge_port, me):
    return (f"INVITE sip:bob@127.0.0.1:{edge_port} SIP/2.0\r\n"
            f"Via: SIP/2.0/UDP 127.0.0.1:{me};branch=z9hG4bKgauge{os.getpid()}\r\n"
            f"Max-Forwards: 70\r\nFrom: <sip:alice@127.0.0.1>;tag=a1\r\n"
            f"To: <sip:bob@127.0.0.1>\r\nCall-ID: gauge-{os.getpid()}@127.0.0.1\r\n"
            f"CSeq: 1 INVITE\r\nContact: <sip:alice@127.0.0.1:{me}>\r\n"
            f"Content-Length: 0\r\n\r\n").encode()


def answer_with_feedback(hop, request, oc, algo):
    """486 to the forwarded INVITE, the RFC 7339 parameters in its top Via (the edge's own,
    its offer `oc` and `oc-algo` replaced by the server's choice)."""
    head = request.split("\r\n\r\n", 1)[0].split("\r\n")
    vias = [h for h in head if h.lower().startswith(("via:", "v:"))]
    top = re.sub(r";oc(-[a-z]+)?(=(\"[^\"]*\"|[^;,\s]*))?", "", vias[0])
    top += f';oc={oc};oc-algo="{algo}";oc-validity=30000;oc-seq=1282321615.782'
    keep = [h for h in head[1:] if h.lower().startswith(("from:", "to:", "call-id:", "cseq:",
                                                          "f:", "t:", "i:"))]
    return ("SIP/2.0 486 Busy Here\r\n" + "\r\n".join([top] + vias[1:] + keep)
            + "\r\nContent-Length: 0\r\n\r\n").encode()


def check_gauge(osn, tmp, kind, oc, series, before, algo=None):
    hop = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    hop.bind(("127.0.0.1", 0))
    hop.settimeout(5)
    n = start(osn, tmp, "node.element=edge", f"control.kind={kind}",
                        f"node.next_hop=127.0.0.1:{hop.getsockname()[1]}")
    caller = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    caller.bind(("127.0.0.1", 0))
    caller.settimeout(5)
    key = f'{series}{{element="edge"}}'
    try:
        got = samples(scrape(n.met)).get(key)
        if got != before:
            fail(f"{kind}: before any feedback {key} = {got}, want {before}")
        caller.sendto(invite(caller, n.sip, caller.getsockname()[1]), ("127.0.0.1", n.sip))
        req, edge = hop.recvfrom(65535)
        req = req.decode(errors="replace")
        if not req.startswith("INVITE "):
            fail(f"{kind}: the next hop got {req.splitlines()[0]!r}, want the INVITE")
        hop.sendto(answer_with_feedback(hop, req, oc, algo or kind), edge)
        status = caller.recv(65535).decode(errors="replace").split("\r\n")[0]
        while status.startswith("SIP/2.0 1"):  # a 100 Trying of the edge's own first
            status = caller.recv(65535).decode(errors="replace").split("\r\n")[0]
        if status != "SIP/2.0 486 Busy Here":
            fail(f"{kind}: the caller got {status!r}, want the 486 relayed")
        got = samples(scrape(n.met)).get(key)
        if got is None or float(got) != float(oc):
            fail(f"{kind}: after oc={oc} {key} = {got}, want {oc}")
        else:
            print(f"ok   {kind}: {key} {got} after oc={oc} (before: {before})")
    except (OSError, ValueError) as e:
        fail(f"{kind}: {e!r}: " + open(os.path.join(tmp, "err")).read()[-1000:])
    finally:
        n.stop()
        hop.close()
        caller.close()


def check_fanout(osn, tmp, oc):
    """Two next hops, control loss: a gauge per server; the one that answers with oc=20 reads
    20, the other (no feedback from it) still 0 (RFC 7339 5.10: the state is per server)."""
    hops = []
    for _ in range(2):
        h = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        h.bind(("127.0.0.1", 0))
        hops.append(h)
    names = [f"127.0.0.1:{h.getsockname()[1]}" for h in hops]
    n = start(osn, tmp, "node.element=edge", "control.kind=loss",
                        "node.next_hop=" + ", ".join(names))
    caller = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    caller.bind(("127.0.0.1", 0))
    caller.settimeout(5)
    keys = [f'osn_node_client_shed_percent{{element="edge",server="{s}"}}' for s in names]
    try:
        got = samples(scrape(n.met))
        if [got.get(k) for k in keys] != ["0", "0"]:
            fail(f"fanout: before any feedback {keys} = {[got.get(k) for k in keys]}, want 0, 0")
        caller.sendto(invite(caller, n.sip, caller.getsockname()[1]), ("127.0.0.1", n.sip))
        ready, _, _ = select.select(hops, [], [], 5)
        if not ready:
            raise OSError("no next hop got the INVITE")
        i = hops.index(ready[0])
        req, edge = hops[i].recvfrom(65535)
        hops[i].sendto(answer_with_feedback(hops[i], req.decode(errors="replace"), oc, "loss"),
                       edge)
        status = caller.recv(65535).decode(errors="replace").split("\r\n")[0]
        while status.startswith("SIP/2.0 1"):
            status = caller.recv(65535).decode(errors="replace").split("\r\n")[0]
        got = samples(scrape(n.met))
        want = ["0", "0"]
        want[i] = str(oc)
        have = [got.get(k) for k in keys]
        if [None if g is None else float(g) for g in have] != [float(w) for w in want]:
            fail(f"fanout: after oc={oc} from {names[i]} {keys} = {have}, want {want}")
        else:
            print(f"ok   fanout: {keys[i]} {have[i]}, {keys[1 - i]} {have[1 - i]}")
    except (OSError, ValueError) as e:
        fail(f"fanout: {e!r}: " + open(os.path.join(tmp, "err")).read()[-1000:])
    finally:
        n.stop()
        for h in hops:
            h.close()
        caller.close()


def documented(src):
    """The series names (with their label names) of docs/node.md's metrics table."""
    text = open(os.path.join(src, "docs", "node.md"), encoding="utf-8").read()
    sec = text[text.index("## The metrics endpoint"):]
    sec = sec[:sec.index("\n## ", 3)]
    names = set()
    for m in re.finditer(r"^\| `(osn_node_[a-z0-9_]+)(\{[^`]*\})?` \|", sec, re.M):
        labels = re.findall(r"([a-z_]+)=", m.group(2) or "")
        names.add(m.group(1) + (f"{{{','.join(labels)}}}" if labels else ""))
    return names


def exported(text):
    names = set()
    for key in samples(text):
        m = re.match(r'^([a-z0-9_]+)(\{([a-z_]+="[^"]*",?)+\})?$', key)
        if m:
            labels = re.findall(r'([a-z_]+)="', m.group(2) or "")
            names.add(m.group(1) + (f"{{{','.join(labels)}}}" if labels else ""))
        else:
            fail(f"docs: a sample the check cannot read: {key!r}")
    return names


def main():
    osn, src = sys.argv[1], sys.argv[2]
    tmp = tempfile.mkdtemp(prefix="osn_metrics_gauge.")
    check_gauge(osn, tmp, "loss", 20, "osn_node_client_shed_percent", "0")
    check_gauge(osn, tmp, "rate", 150, "osn_node_client_rate_limit_per_s", "+Inf")
    # rate_dyn's client half is rate's (RFC 7415 feedback): its gauge comes from the registry too
    check_gauge(osn, tmp, "rate_dyn", 150, "osn_node_client_rate_limit_per_s", "+Inf", "rate")
    check_fanout(osn, tmp, 20)

    have = set()
    for sets in (("node.element=uas",),
                 ("node.element=edge", "control.kind=loss", "node.next_hop=127.0.0.1:9"),
                 ("node.element=edge", "control.kind=rate", "node.next_hop=127.0.0.1:9"),
                 ("node.element=edge", "control.kind=loss",
                  "node.next_hop=127.0.0.1:9, 127.0.0.1:11"),
                 ("node.element=edge", "control.kind=rate",
                  "node.next_hop=127.0.0.1:9, 127.0.0.1:11")):
        n = start(osn, tmp, *sets)
        try:
            have |= exported(scrape(n.met))
        except OSError as e:
            fail(f"docs: scrape of {sets}: {e!r}")
        finally:
            n.stop()
    docs = documented(src)
    if have - docs:
        fail(f"docs: exported but not in docs/node.md's table: {sorted(have - docs)}")
    if docs - have:
        fail(f"docs: in docs/node.md's table but not exported: {sorted(docs - have)}")
    if have == docs:
        print(f"ok   docs: docs/node.md lists the {len(docs)} series exported")
    print(f"{failures} failed")
    sys.exit(1 if failures else 0)


main()

#!/usr/bin/env python3
"""`osn node`'s metrics endpoint as HTTP and under hostile scrapers (issues 28, 35).

Checks, each printed as FAIL when it does not hold:
  http       GET /metrics 200 with the counters (Prometheus text format, every series of the
             hand-written endpoint, plus osn_node_info{element="uas"}); HEAD /metrics 200 with
             a Content-Length and no body; GET /other 404; POST (with a body), PUT, DELETE
             /metrics 405 with `Allow: GET, HEAD`
  scrapes    500 ordinary scrapes in a row (one connection each, the request sent at once, the
             answer read to the close), zero failures (the hand-written endpoint lost 0.2-2% to
             a connection reset: it could close the socket with the request unread)
  vanishing  clients that reset the connection before the answer, connect and close at once (a
             TCP health check), open many idle connections and drop them together, or trickle
             a request and abandon it: the node lives
  per_ip     one address holding more idle connections than its share (16): the ones beyond it
             are closed at once, and a scrape from another address is answered at once
  limit      more idle connections than the endpoint's limit (64), from several addresses: the
             node keeps answering SIP (OPTIONS over UDP), the idle connections are closed by
             the idle timeout (5 s) without an HTTP byte sent to them, and a scrape made while
             they hold every slot is answered once they are gone (within the timeout + 5 s)
  trickle    the same with clients that send their request a byte a second (never idle, never
             done): each is cut 10 s after its accept, and the scrape behind them is answered
             within that + 5 s; the node answers SIP meanwhile
Then an ordinary scrape still succeeds, and the node stops on SIGTERM with exit 0 and its JSON
summary written. Last, an edge with control loss, rate and pi: the client half's level is shown
for the first two (osn_node_client_shed_percent, osn_node_client_rate_limit_per_s).

Usage: metrics_hostile.py OSN        exit 0 when every check held, 1 otherwise.
"""
import json
import os
import re
import shutil
import socket
import struct
import sys
import tempfile
import threading
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from nodeproc import Node  # noqa: E402  (port 0, the listening line read one way)


def start(osn, tmp, duration, args=("--set", "node.element=uas")):
    """A node on 127.0.0.1:0 with its metrics port and JSON summary (TMP/node.json, stderr in
    TMP/node.err) for `duration` s: (process, metrics port, SIP port)."""
    n = Node(osn, tmp, "node", *args, "--set", f"node.duration={duration}", summary=True,
             seconds=150)
    return n.p, n.met, n.sip


def reset_close(met, send_request):
    c = socket.create_connection(("127.0.0.1", met), timeout=2)
    if send_request:
        c.sendall(b"GET /metrics HTTP/1.0\r\n\r\n")
    c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # RST on close
    c.close()


def attempt(fn, *args):
    """Runs one hostile client; what the client itself suffers (refused, reset, timed out) is
    not the test: whether the node lives is."""
    try:
        fn(*args)
    except OSError:
        pass


def health_check(met):
    socket.create_connection(("127.0.0.1", met), timeout=2).close()


def idle_then_reset(met, count):
    idle = []
    for _ in range(count):
        attempt(lambda: idle.append(socket.create_connection(("127.0.0.1", met), timeout=2)))
    for c in idle:
        c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        c.close()


def slowloris(met):
    slow = socket.create_connection(("127.0.0.1", met), timeout=2)
    for b in b"GET /metr":  # a request trickled in, then abandoned
        slow.send(bytes([b]))
        time.sleep(0.02)
    slow.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    slow.close()


IDLE_S = 5  # the endpoint's idle timeout (src/node/metrics.c METRICS_IDLE_S)
LIFETIME_S = 10  # and its bound on a connection's life (METRICS_LIFETIME_S)
LIMIT = 64  # connections at once (METRICS_CONN_LIMIT)
PER_IP = 16  # of which from one address (METRICS_PER_IP)
FAILS = []


def fail(msg):
    print("FAIL: " + msg)
    FAILS.append(msg)


def raw_http(met, request, src="127.0.0.1", timeout=5):
    """Sends request bytes, reads until the server closes; (status, headers dict, body)."""
    c = socket.socket()
    c.settimeout(timeout)
    c.bind((src, 0))
    c.connect(("127.0.0.1", met))
    c.sendall(request)
    data = b""
    while True:
        b = c.recv(65536)
        if not b:
            break
        data += b
    c.close()
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode(errors="replace").split("\r\n")
    status = int(lines[0].split()[1]) if len(lines[0].split()) > 1 else 0
    hdr = {l.split(":", 1)[0].strip().lower(): l.split(":", 1)[1].strip()
           for l in lines[1:] if ":" in l}
    return status, hdr, body


# The series of the hand-written endpoint, unchanged (scripts and tests read them).
SERIES = """datagrams_in_total datagrams_out_total invites_in_total calls_in_total
calls_forwarded_total calls_ok_total rejected_503_total refused_at_cap_total timeouts_408_total
too_many_hops_total dropped_total retrans_absorbed_total retrans_sent_total bye_in_total
bye_ok_total acks_forwarded_total bad_answered_total bad_dropped_total stray_total
send_errors_total transactions_peak queue mode transactions""".split()


def check_exposition(text, element="uas"):
    """Prometheus text format 0.0.4: every sample `name[{labels}] value`, with its HELP and
    TYPE before it; every series of the old endpoint present."""
    import re
    sample = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[a-zA-Z_]+="[^"]*"\})? '
                        r'(-?[0-9.e+-]+|\+Inf|NaN)$')
    helped, typed, names = set(), set(), set()
    for line in text.splitlines():
        if line.startswith("# HELP "):
            helped.add(line.split()[2])
        elif line.startswith("# TYPE "):
            typed.add(line.split()[2])
        else:
            m = sample.match(line)
            if not m or m.group(1) not in helped or m.group(1) not in typed:
                fail(f"exposition: bad or undeclared line {line!r}")
                return
            names.add(m.group(1))
    missing = [n for n in SERIES if "osn_node_" + n not in names]
    if missing:
        fail(f"exposition: series missing: {missing}")
    if f'osn_node_info{{element="{element}"}} 1' not in text:
        fail(f'exposition: no osn_node_info{{element="{element}"}} 1')


def check_http(met):
    def req(method, path, extra=b""):
        return (f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                .encode() + extra + b"\r\n")
    try:
        st, h, body = raw_http(met, req("GET", "/metrics"))
        if st != 200 or b"osn_node_datagrams_in_total" not in body:
            fail(f"GET /metrics: {st}, {len(body)} bytes")
        if not h.get("content-type", "").startswith("text/plain; version=0.0.4"):
            fail(f"GET /metrics: Content-Type {h.get('content-type')}")
        check_exposition(body.decode(errors="replace"))
        st, h, body = raw_http(met, req("HEAD", "/metrics"))
        if st != 200 or body or int(h.get("content-length", "0")) <= 0:
            fail(f"HEAD /metrics: {st}, Content-Length {h.get('content-length')}, "
                 f"{len(body)} body bytes (want 200, > 0, none)")
        for path in ("/other", "/", "/metrics/x"):
            st, h, body = raw_http(met, req("GET", path))
            if st != 404:
                fail(f"GET {path}: {st}, want 404")
        post = req("POST", "/metrics", b"Content-Length: 5\r\n")[:-2] + b"\r\nhello"
        for method, r in (("POST", post), ("PUT", req("PUT", "/metrics")),
                          ("DELETE", req("DELETE", "/metrics"))):
            st, h, body = raw_http(met, r)
            allow = {a.strip() for a in h.get("allow", "").split(",")}
            if st != 405 or allow != {"GET", "HEAD"}:
                fail(f"{method} /metrics: {st}, Allow '{h.get('allow')}' "
                     "(want 405, Allow: GET, HEAD)")
    except (OSError, ValueError, IndexError) as e:
        fail(f"HTTP checks: {e!r}")


def check_scrapes(met, count=500):
    """Ordinary scrapes: one connection each, the request sent as soon as it is open, the answer
    read to the server's close. The hand-written endpoint read before the request had arrived
    and closed with it unread (a reset, which can destroy the answer in flight): 0.2-2% failed."""
    bad = {}
    for _ in range(count):
        try:
            status, _, body = raw_http(
                met, b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            if status != 200 or b"osn_node_transactions" not in body:
                bad["incomplete"] = bad.get("incomplete", 0) + 1
        except OSError as e:
            bad[type(e).__name__] = bad.get(type(e).__name__, 0) + 1
    n = sum(bad.values())
    print(f"{count} ordinary scrapes in a row: {n} failed {bad if bad else ''}")
    if n:
        fail(f"{n} of {count} ordinary scrapes failed: {bad}")


def idle_conns(met, sources, each):
    out = []
    for src in sources:
        for _ in range(each):
            c = socket.socket()
            c.settimeout(2)
            c.bind((src, 0))
            try:
                c.connect(("127.0.0.1", met))  # completes in the backlog even when not accepted
                out.append(c)
            except OSError:
                c.close()
    return out


def wait_closed(conns, within):
    """Waits until the server has closed every connection (EOF or reset); returns how many
    received HTTP bytes and how many are still open after `within` seconds."""
    got_bytes, open_ = 0, list(conns)
    t_end = time.monotonic() + within
    while open_ and time.monotonic() < t_end:
        still = []
        for c in open_:
            c.setblocking(False)
            try:
                b = c.recv(4096)
                if b:
                    got_bytes += 1
                    still.append(c)  # an answer, then (old endpoint) the close
                continue
            except BlockingIOError:
                still.append(c)
            except OSError:
                pass  # reset: closed
        open_ = still
        if open_:
            time.sleep(0.1)
    return got_bytes, len(open_)


def drop(conns):
    for c in conns:
        try:
            c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        except OSError:
            pass
        c.close()


def sip_options(sip, timeout=2):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    s.settimeout(timeout)
    me = s.getsockname()[1]
    branch = "z9hG4bKmet%d" % int(time.monotonic() * 1e6)
    s.sendto((f"OPTIONS sip:node@127.0.0.1:{sip} SIP/2.0\r\n"
              f"Via: SIP/2.0/UDP 127.0.0.1:{me};branch={branch}\r\nMax-Forwards: 70\r\n"
              f"From: <sip:probe@127.0.0.1>;tag=p1\r\nTo: <sip:node@127.0.0.1>\r\n"
              f"Call-ID: {branch}@127.0.0.1\r\nCSeq: 1 OPTIONS\r\nContent-Length: 0\r\n\r\n"
              ).encode(), ("127.0.0.1", sip))
    try:
        return s.recv(65535).decode(errors="replace").split("\r\n")[0]
    except OSError as e:
        return f"no answer ({e})"
    finally:
        s.close()


def scrape_from(met, src, timeout):
    t0 = time.monotonic()
    try:
        st, _, body = raw_http(met, b"GET /metrics HTTP/1.0\r\n\r\n", src=src, timeout=timeout)
        ok = st == 200 and b"osn_node_datagrams_in_total" in body
        return ok, time.monotonic() - t0, f"status {st}"
    except OSError as e:
        return False, time.monotonic() - t0, repr(e)


def check_per_ip(met):
    hog = idle_conns(met, ["127.0.0.20"], PER_IP + 4)
    time.sleep(0.5)
    ok, dt, why = scrape_from(met, "127.0.0.1", 3)
    print(f"per-IP: a scrape beside {len(hog)} idle connections of one address: {why} after "
          f"{dt:.2f} s")
    if not ok or dt > 1:
        fail(f"per-IP: a scrape from another address beside {PER_IP + 4} idle connections "
             f"of one: {why} after {dt:.2f} s (want an answer within 1 s)")
    got, left = wait_closed(hog[PER_IP:], 1.5)  # beyond the share: closed at once
    if got or left:
        fail(f"per-IP: of the {len(hog) - PER_IP} connections beyond one address's share, "
             f"{got} got HTTP bytes and {left} are still open after 1.5 s (want 0, 0)")
    drop(hog)


def check_limit(met, sip):
    srcs = [f"127.0.0.{i}" for i in range(2, 12)]  # 10 addresses x 8: within the per-IP share
    idle = idle_conns(met, srcs, (LIMIT + 16) // len(srcs))
    t0 = time.monotonic()
    time.sleep(0.5)
    answer = sip_options(sip)
    if not answer.startswith("SIP/2.0 200"):
        fail(f"limit: OPTIONS to the node while {len(idle)} idle HTTP connections: {answer}")
    ok, dt, why = scrape_from(met, "127.0.0.1", IDLE_S + 10)
    print(f"limit: a scrape behind {len(idle)} idle connections: {why} after {dt:.2f} s")
    if not ok or time.monotonic() - t0 > IDLE_S + 5:
        fail(f"limit: a scrape behind {len(idle)} idle connections: {why} after {dt:.2f} s "
             f"(want 200 within {IDLE_S + 5} s)")
    got, left = wait_closed(idle, 2 * IDLE_S + 5)
    if got or left:
        fail(f"limit: of {len(idle)} idle connections (no request), {got} got HTTP bytes and "
             f"{left} were still open after {2 * IDLE_S + 5} s (want 0, 0: closed by the "
             "idle timeout)")
    drop(idle)
    answer = sip_options(sip)
    if not answer.startswith("SIP/2.0 200"):
        fail(f"limit: OPTIONS after the idle connections: {answer}")


def check_trickle(met, sip):
    srcs = [f"127.0.0.{i}" for i in range(30, 39)]  # 9 addresses x 8 = 72 > the limit
    slow = idle_conns(met, srcs, 8)
    t0 = time.monotonic()
    res = {}
    th = threading.Thread(target=lambda: res.update(
        r=scrape_from(met, "127.0.0.1", LIFETIME_S + 10)))
    request = b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 100
    sent, answered, open_ = 0, 0, list(slow)
    sip_answer = None
    while open_ and time.monotonic() - t0 < 2 * LIFETIME_S + 5:
        still = []
        for c in open_:
            try:
                c.setblocking(False)
                try:
                    if c.recv(4096) == b"":
                        continue  # closed by the node
                    answered += 1
                except BlockingIOError:
                    pass
                c.send(request[sent % len(request):sent % len(request) + 1])
                still.append(c)
            except OSError:
                pass  # reset by the node: closed
        open_ = still
        sent += 1
        if sent == 2:
            th.start()
        if sent == 4:
            sip_answer = sip_options(sip)
        time.sleep(1)
    if sent < 2:
        th.start()
    if sip_answer is None:
        sip_answer = sip_options(sip)
    th.join(LIFETIME_S + 15)
    ok, dt, why = res.get("r", (False, 0, "no scrape"))
    print(f"trickle: a scrape behind {len(slow)} trickling connections: {why} after {dt:.2f} s; "
          f"{len(open_)} still open after {time.monotonic() - t0:.1f} s")
    if not ok or dt > LIFETIME_S + 5:
        fail(f"trickle: a scrape behind {len(slow)} trickling connections: {why} after "
             f"{dt:.2f} s (want 200 within {LIFETIME_S + 5} s)")
    if open_ or answered:
        fail(f"trickle: {len(open_)} trickling connections still open after "
             f"{2 * LIFETIME_S + 5} s, {answered} answered (want 0, 0)")
    if not (sip_answer or "").startswith("SIP/2.0 200"):
        fail(f"trickle: OPTIONS to the node meanwhile: {sip_answer}")
    drop(slow)


def check_client_level(osn, tmp):
    """An edge's client half shows its level for loss and rate (nothing sent yet: control off,
    0 % shed, no rate limit), nothing for pi; osn_node_info names the element."""
    want = {"loss": 'osn_node_client_shed_percent{element="edge"} 0\n',
            "rate": 'osn_node_client_rate_limit_per_s{element="edge"} +Inf\n', "pi": None}
    for kind, line in want.items():
        p, met, _ = start(osn, tmp, 30, ("--set", "node.element=edge", "--set",
                                         "node.next_hop=127.0.0.1:9", "--set",
                                         f"control.kind={kind}"))
        try:
            st, _, body = raw_http(met, b"GET /metrics HTTP/1.0\r\n\r\n")
            text = body.decode(errors="replace")
        except OSError as e:
            st, text = 0, repr(e)
        p.terminate()
        if p.wait(timeout=30) != 0:
            fail(f"edge with control {kind}: exit {p.returncode}: "
                 + open(os.path.join(tmp, "node.err")).read()[-2000:])
        check_exposition(text, "edge")
        has = [l for l in text.splitlines() if l.startswith("osn_node_client_")]
        if st != 200 or (line and line not in text) or (not line and has):
            fail(f"edge with control {kind}: {st}, client series {has} (want {line!r})")


def main():
    osn = sys.argv[1]
    tmp = tempfile.mkdtemp(prefix="osn_metrics_hostile.")
    p, met, sip = start(osn, tmp, 120)
    check_http(met)
    check_scrapes(met)
    for _ in range(40):  # answered into a reset connection: EPIPE / ECONNRESET on the write
        attempt(reset_close, met, True)
    for _ in range(40):
        attempt(health_check, met)
    attempt(idle_then_reset, met, 100)
    attempt(slowloris, met)
    time.sleep(0.3)
    if p.poll() is None:
        check_per_ip(met)
        check_limit(met, sip)
        check_trickle(met, sip)
    alive = p.poll() is None
    text = ""
    if alive:
        try:
            text = urllib.request.urlopen(f"http://127.0.0.1:{met}/metrics", timeout=2).read()
            text = text.decode()
        except OSError as e:
            text = f"({e})"
    if alive:
        p.terminate()  # `timeout` passes SIGTERM on: the node stops cleanly and writes its JSON
    rc = p.wait(timeout=30)
    if not alive or rc != 0:
        fail(f"the node died under hostile scrapers (exit {rc}): "
             + open(os.path.join(tmp, "node.err")).read()[-2000:])
    if alive and "osn_node_datagrams_in_total" not in text:
        fail(f"the scrape after the hostile clients had no counters: {text[:200]}")
    try:
        json.load(open(os.path.join(tmp, "node.json")))
    except (OSError, ValueError) as e:
        fail(f"no JSON summary after the run: {e}")
    check_client_level(osn, tmp)
    if not FAILS:
        print("metrics endpoint: HTTP semantics, 500 scrapes, vanishing, per-address, "
              "over-the-limit and trickling clients, client level: all held")
    shutil.rmtree(tmp, ignore_errors=True)
    return 0 if not FAILS else 1


if __name__ == "__main__":
    sys.exit(main())

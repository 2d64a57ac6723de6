"""`osn node` as a process of a Python test (tests/node/*.py): started on port 0, its ports read
back from the listening line it prints once bound, its metrics scraped, stopped by its own pid.

  Node(osn, tmp, name, *args, ...)  one node; .sip (alias .port), .met, .line, .p; scrape(),
                                    gauge(), live(), rss_kb(), stop(), summary(), stderr()
  listening(p, seconds)             the listening line of a started node: Ready(sip, met, host,
                                    line), or None
  scrape(met)                       {series: value} of a metrics port
  wait_ended(nodes, seconds)        waits for every node to hold no transaction
  parse_response(text)              (status, {header: [values]}, body) of a SIP response
  have_ipv6_loopback()              whether [::1]:0 can be bound here
  SHORT_TIMERS                      [sip] timers that end transactions in seconds, not minutes

The node prints one line on stdout once its sockets are bound (src/node/run.c):
  osn node ELEMENT listening on HOST:PORT (udp)[, tcp HOST:PORT][, metrics HOST:PORT][, ...]
"""
import collections
import json
import os
import re
import select
import signal
import socket
import subprocess
import sys
import time
import urllib.request

# T1 = 20 ms: Timers B, F, H and J (64 T1) are 1.28 s; Timer D 0.5 s, Timers I and K (T4) 0.1 s.
SHORT_TIMERS = ["--set", "sip.t1=0.02", "--set", "sip.t2=0.08", "--set", "sip.t4=0.1",
                "--set", "sip.timer_d=0.5"]

Ready = collections.namedtuple("Ready", "sip met host line")


def listening(p, seconds=10):
    """The listening line of the node started as `p` (stdout a pipe, bytes): Ready(sip, met,
    host, line), met None when the line names no metrics port; None when the node exits or
    prints no such line within `seconds`. A Ready unpacks as (sip, met, ...)[:2]."""
    fd, buf, end = p.stdout.fileno(), b"", time.monotonic() + seconds
    while b"\n" not in buf:
        left = end - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            return None
        chunk = os.read(fd, 4096)
        if not chunk:
            return None  # the node exited
        buf += chunk
    line = buf.split(b"\n", 1)[0].decode(errors="replace")
    m = re.match(r"osn node \w+ listening on (\S+):(\d+) \(udp\)", line)
    if not m:
        return None
    met = re.search(r", metrics \S+:(\d+)", line)
    return Ready(int(m.group(2)), int(met.group(1)) if met else None, m.group(1), line)


def scrape(met):
    """{series (labels included): value} of the metrics port `met` on 127.0.0.1."""
    text = urllib.request.urlopen(f"http://127.0.0.1:{met}/metrics", timeout=2).read().decode()
    return {l.split()[0]: float(l.split()[1]) for l in text.splitlines()
            if l and not l.startswith("#")}


class Node:
    """One `osn node` listening on `listen` (port 0: the kernel chooses and the listening line
    says which), under `timeout` (`seconds`); `args` are its other arguments (a scenario file,
    --set pairs). metrics: a metrics port on 127.0.0.1:0 too; summary: --json to
    TMP/NAME.json. Its stderr goes to TMP/NAME.err. A node that does not start ends the test
    (sys.exit) with its stderr."""

    def __init__(self, osn, tmp, name, *args, listen="127.0.0.1:0", metrics=True,
                 summary=False, seconds=120):
        self.name = name
        self.err = os.path.join(tmp, name + ".err")
        self.json = os.path.join(tmp, name + ".json") if summary else None
        cmd = ["timeout", "--foreground", str(seconds), osn, "node",
               "--set", "node.listen=" + listen]
        if metrics:
            cmd += ["--set", "node.metrics=127.0.0.1:0"]
        cmd += list(args)
        if self.json:
            cmd += ["--json", self.json]
        with open(self.err, "w") as err:
            self.p = subprocess.Popen(cmd + ["-q"], stderr=err, stdout=subprocess.PIPE)
        ready = listening(self.p)
        if not ready or (metrics and ready.met is None):
            self.p.kill()
            self.p.wait()
            sys.exit(f"{name} did not start: " + self.stderr())
        self.sip, self.met, self.host, self.line = ready
        self.port = self.sip

    def stderr(self):
        with open(self.err) as f:
            return f.read()

    def scrape(self):
        return scrape(self.met)

    def gauge(self, name, missing=-1):
        """The series osn_node_NAME of the metrics port, `missing` when absent."""
        return self.scrape().get("osn_node_" + name, missing)

    def live(self):
        """Transactions the node holds, live and kept (the gauge osn_node_transactions)."""
        return self.scrape()["osn_node_transactions"]

    def pid(self):
        """The node's own pid (the child of its timeout wrapper)."""
        return int(subprocess.run(["pgrep", "-P", str(self.p.pid)], capture_output=True,
                                  text=True).stdout.split()[0])

    def rss_kb(self):
        with open(f"/proc/{self.pid()}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def stop(self, sig=signal.SIGTERM, seconds=30):
        """Sends `sig` (a clean stop: the summary is written), waits `seconds`, then SIGKILL;
        returns the exit status."""
        if self.p.poll() is None:
            self.p.send_signal(sig)
        try:
            return self.p.wait(timeout=seconds)
        except subprocess.TimeoutExpired:
            self.p.kill()
            return self.p.wait()

    def summary(self):
        with open(self.json) as f:
            return json.load(f)


def parse_response(text):
    """(status, {lower-case header name: [values]}, body) of a SIP response's text."""
    head, _, body = text.partition("\r\n\r\n")
    lines = head.split("\r\n")
    hdrs = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        hdrs.setdefault(name.strip().lower(), []).append(value.strip())
    return int(lines[0].split()[1]), hdrs, body


def have_ipv6_loopback():
    """Whether this machine has ::1 (a UDP socket binds [::1]:0)."""
    try:
        s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
        s.bind(("::1", 0))
        s.close()
        return True
    except OSError:
        return False


def wait_ended(nodes, seconds):
    """Waits until no node holds a live transaction, `seconds` at most; {name: live} then."""
    end = time.time() + seconds
    while time.time() < end and any(n.live() for n in nodes):
        time.sleep(0.2)
    return {n.name: n.live() for n in nodes}

#!/usr/bin/env python3
"""`osn node` edge with several next hops (issue 33), on loopback, ports of the kernel's choice:

1. weights (IPv4): OSN's load generator -> edge (next_hop = A, B; next_hop_weights = 3, 1) ->
   two `osn node` uas. Every call good; the INVITEs split 3:1 exactly up to one round of the
   smooth weighted round-robin (|A - 3 B| <= 3); each uas's own count of INVITEs equals the
   edge's count for it; each uas gets the BYEs of its own calls (the Route of the dialog); the
   edge's per-server counts add up to its calls_forwarded, and the metrics endpoint's
   osn_node_next_hop_invites_total{server=...} equals the JSON summary's.
2. failover (IPv6 on [::1], IPv4 when the machine has no ::1): equal weights, the edge's T1 50
   ms (Timer B 3.2 s); one uas is killed (SIGKILL) 2 s into the run. Its INVITEs time out at
   the edge, it is marked down once, the INVITEs that timed out go to the other uas (failover),
   and every call of the run is good, also those started after the down mark.
3. bad lists: exit status 2, naming node.next_hop or node.next_hop_weights.

Usage: fanout.py OSN ROOT      exit 0 when every check holds.
"""
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nodeproc  # noqa: E402

FAILS = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        FAILS.append(what)


class Node(nodeproc.Node):
    """An `osn node` of examples/node_collapse.ini on HOST:0 (its port read back), for
    `duration` s; SETS are key=value."""

    def __init__(self, osn, scen, tmp, name, host, *sets, duration=40, metrics=False):
        args = [scen, "--set", f"node.duration={duration}"]
        for s in sets:
            args += ["--set", s]
        super().__init__(osn, tmp, name, *args, listen=f"{host}:0", metrics=metrics,
                         summary=True, seconds=duration + 30)
        self.metrics = self.met

    def kill9(self):
        """SIGKILL to the node itself (under its timeout wrapper): a server that vanishes."""
        os.kill(self.pid(), signal.SIGKILL)


def gen(osn, scen, tmp, name, host, next_port, secs, rate):
    """The load generator toward host:next_port, in the foreground; its summary's uac block."""
    out = os.path.join(tmp, name + ".json")
    target = f"[{host}]" if ":" in host else host
    r = subprocess.run(["timeout", str(secs + 90), osn, "node", scen, "-q", "--json", out,
                        "--set", "node.element=uac", "--set", f"node.listen={target}:0",
                        "--set", f"node.next_hop={target}:{next_port}",
                        "--set", f"node.duration={secs}", "--set", f"source.rate={rate}",
                        "--set", "source.hold=0.2"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    check(r.returncode == 0, f"{name}: generator exit status {r.returncode} {r.stderr[-300:]}")
    return json.load(open(out))["uac"]


def scrape(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
        text = r.read().decode()
    got = {}
    for m in re.finditer(r'^osn_node_next_hop_(\w+)_total\{server="([^"]+)"\} (\d+)$', text,
                         re.M):
        got[(m.group(1), m.group(2))] = int(m.group(3))
    return got


def weights(osn, scen, tmp):
    a = Node(osn, scen, tmp, "uas_a", "127.0.0.1", "node.element=uas")
    b = Node(osn, scen, tmp, "uas_b", "127.0.0.1", "node.element=uas")
    edge = Node(osn, scen, tmp, "edge", "127.0.0.1", "node.element=edge",
                f"node.next_hop=127.0.0.1:{a.port}, 127.0.0.1:{b.port}",
                "node.next_hop_weights=3, 1", metrics=True)
    check(f"next hops 127.0.0.1:{a.port}, 127.0.0.1:{b.port}" in edge.line,
          f"the edge's listening line names both next hops: {edge.line.strip()!r}")
    try:
        u = gen(osn, scen, tmp, "gen1", "127.0.0.1", edge.port, 4, 150)
        time.sleep(1)  # the last BYEs
        met = scrape(edge.metrics)
    finally:
        edge.stop()
        a.stop()
        b.stop()
    e, sa, sb = edge.summary(), a.summary(), b.summary()
    hops = e.get("next_hops", [])
    check(len(hops) == 2, f"the edge's JSON has next_hops for both: {len(hops)}")
    if len(hops) != 2:
        return
    ia, ib = hops[0]["invites"], hops[1]["invites"]
    print(f"     generator: {u['calls_started']} calls, {u['good']} good; edge INVITEs to A "
          f"{ia}, to B {ib} (share of A {ia / max(1, ia + ib):.4f}, weight share 0.75)")
    check(u["good"] == u["calls_started"] > 400 and u["unfinished"] == 0,
          f"every call good: {u['good']} of {u['calls_started']}, unfinished {u['unfinished']}")
    check(abs(ia - 3 * ib) <= 3, f"INVITEs split by weight 3:1 within one round: A {ia}, B {ib}")
    check(ia + ib == e["calls_forwarded"] == e["calls_ok"],
          f"per-server INVITEs add up: {ia} + {ib} = calls_forwarded {e['calls_forwarded']}, "
          f"calls_ok {e['calls_ok']}")
    check(sa["calls_in"] == ia and sb["calls_in"] == ib,
          f"each uas counted the INVITEs the edge sent it: A {sa['calls_in']} = {ia}, "
          f"B {sb['calls_in']} = {ib}")
    check(sa["bye_ok"] == sa["calls_ok"] and sb["bye_ok"] == sb["calls_ok"],
          f"each uas got the BYEs of its own calls (Route): A {sa['bye_ok']}/{sa['calls_ok']}, "
          f"B {sb['bye_ok']}/{sb['calls_ok']}")
    srv_a, srv_b = hops[0]["server"], hops[1]["server"]
    check(met.get(("invites", srv_a)) == ia and met.get(("invites", srv_b)) == ib,
          f"metrics osn_node_next_hop_invites_total A {met.get(('invites', srv_a))}, "
          f"B {met.get(('invites', srv_b))} = JSON {ia}, {ib}")
    check(met.get(("sent", srv_a), 0) + met.get(("sent", srv_b), 0) ==
          hops[0]["sent"] + hops[1]["sent"] and met.get(("timeouts", srv_a)) == 0,
          f"metrics sent {met.get(('sent', srv_a))} + {met.get(('sent', srv_b))}, timeouts 0")


def failover(osn, scen, tmp):
    v6 = nodeproc.have_ipv6_loopback()
    host, uri = ("::1", "[::1]") if v6 else ("127.0.0.1", "127.0.0.1")
    print(f"     failover over {'IPv6 [::1]' if v6 else 'IPv4 (no ::1 here)'}")
    a = Node(osn, scen, tmp, "f_uas_a", uri, "node.element=uas")
    b = Node(osn, scen, tmp, "f_uas_b", uri, "node.element=uas")
    edge = Node(osn, scen, tmp, "f_edge", uri, "node.element=edge",
                f"node.next_hop={uri}:{a.port}, {uri}:{b.port}", "sip.t1=0.05",
                "node.down_time=30")
    secs = 8
    try:
        out = os.path.join(tmp, "gen2.json")
        p = subprocess.Popen(["timeout", str(secs + 90), osn, "node", scen, "-q", "--json", out,
                              "--set", "node.element=uac", "--set", f"node.listen={uri}:0",
                              "--set", f"node.next_hop={uri}:{edge.port}",
                              "--set", f"node.duration={secs}", "--set", "source.rate=50",
                              "--set", "source.hold=0.2"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        time.sleep(2)
        b.kill9()
        _, err = p.communicate(timeout=secs + 100)
        check(p.returncode == 0, f"generator exit status {p.returncode} {err[-300:]}")
        u = json.load(open(out))["uac"]
    finally:
        edge.stop()
        a.stop()
        b.stop()
    e = edge.summary()
    hops = e.get("next_hops", [])
    if len(hops) != 2:
        check(False, f"the edge's JSON has next_hops for both: {len(hops)}")
        return
    ha, hb = hops
    print(f"     generator: {u['calls_started']} calls, {u['good']} good; edge: to A "
          f"{ha['invites']} INVITEs ({ha['failovers']} failovers), to B {hb['invites']} "
          f"({hb['timeouts']} timeouts, {hb['downs']} down marks, down at the end {hb['down']})")
    check(u["good"] == u["calls_started"] > 300 and u["unfinished"] == 0,
          f"every call good through the failover: {u['good']} of {u['calls_started']}")
    check(hb["timeouts"] >= 1 and hb["downs"] == 1 and hb["down"] and not ha["down"],
          f"B timed out ({hb['timeouts']}), was marked down once ({hb['downs']}) and is down "
          f"at the end ({hb['down']}); A up")
    check(ha["failovers"] >= 1 and ha["failovers"] <= hb["invites"],
          f"INVITEs B failed went to A: {ha['failovers']} failovers, B had {hb['invites']}")
    # Once B is down (at most Timer B, 3.2 s, after the kill) nothing new goes to it: B's
    # INVITEs are those of the first 2 + 3.2 s at most, half of them (equal weights).
    check(hb["invites"] <= 50 * (2 + 3.2 + 0.5) / 2 + 5 and ha["invites"] >= u["calls_started"]
          - hb["invites"], f"B was offered INVITEs only until its down mark: {hb['invites']}")
    check(e["calls_ok"] == u["good"], f"edge calls_ok {e['calls_ok']} = good {u['good']}")


def bad(osn, scen, tmp):
    cases = [("node.next_hop=127.0.0.1:5071, 127.0.0.1:5072", "node.next_hop_weights=1",
              "key 'node.next_hop_weights'"),
             ("node.next_hop=127.0.0.1:5071, 127.0.0.1:5072", "node.next_hop_weights=1, 0",
              "key 'node.next_hop_weights'"),
             ("node.next_hop=127.0.0.1:5071, [::1]:5072", "node.next_hop_weights=",
              "key 'node.next_hop'"),
             ("node.next_hop=127.0.0.1:5071, 127.0.0.1:5071", "node.next_hop_weights=",
              "key 'node.next_hop'"),
             ("node.next_hop=127.0.0.1:5071, nothere", "node.next_hop_weights=",
              "key 'node.next_hop'")]
    for hop, w, want in cases:
        r = subprocess.run([osn, "node", scen, "-q", "--set", "node.element=edge",
                            "--set", "node.listen=127.0.0.1:0", "--set", hop, "--set", w,
                            "--set", "node.duration=1"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           timeout=20)
        check(r.returncode == 2 and want in r.stderr,
              f"{hop} {w}: exit {r.returncode}, {r.stderr.strip()!r}")


def main():
    osn, root = sys.argv[1], sys.argv[2]
    scen = os.path.join(root, "examples", "node_collapse.ini")
    with tempfile.TemporaryDirectory() as tmp:
        bad(osn, scen, tmp)
        weights(osn, scen, tmp)
        failover(osn, scen, tmp)
    print(f"{len(FAILS)} failed")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())

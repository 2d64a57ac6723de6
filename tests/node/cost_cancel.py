#!/usr/bin/env python3
"""A CANCEL costs what a BYE costs unless `cost_cancel` says otherwise (issue 33), in both
worlds. Each server's costs are set so that cost_bye, cost_invite and every other cost differ,
so the default can only come out right by being cost_bye:

  simulator: `osn sim examples/fanout.ini` (edge, two cores, uas; a short run): the resolved
             scenario of its JSON gives every [server] cost_cancel = its own cost_bye, also
             [server core2], whose costs are its own; an explicit cost_cancel wins;
  node:      `osn node` as a uas with cost_bye 50 ms, cost_invite 1 s, the rest 0, is sent 10
             CANCELs for no call: each is answered 481 (RFC 3261 9.2) after its turn on the
             node's CPU, and the node's CPU time, util x elapsed_s of its summary, is
             10 x 50 ms = 0.5 s (10 s if a CANCEL cost cost_invite); its scenario_resolved says
             cost_cancel 0.05; with cost_cancel = 0.005 set, 0.05 s (0.5 s if it were ignored).
             The CPU time is counted to when each service's timer fired, so a loaded machine
             adds its lateness: the checks take the value at least, and below half the way to
             the wrong one.

Usage: cost_cancel.py OSN SOURCE_DIR
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
from nodeproc import Node, parse_response  # noqa: E402

FAILS = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        FAILS.append(what)


def sim(osn, src):
    scen = os.path.join(src, "examples", "fanout.ini")
    base = [osn, "sim", scen, "--set", "net.time=0.5", "--set", "net.warmup=0",
            "--set", "source.rate=10", "--json", "-", "-q"]
    r = subprocess.run(["timeout", "60"] + base, capture_output=True, text=True)
    check(r.returncode == 0, f"osn sim fanout.ini: exit {r.returncode} {r.stderr.strip()[-300:]}")
    if r.returncode:
        return
    res = json.loads(r.stdout)["scenario"]["resolved"]
    for sec in ("server edge", "server core", "server core2", "server uas"):
        s = res[sec]
        others = [v for k, v in s.items() if k.startswith("cost_") and
                  k not in ("cost_bye", "cost_cancel", "cost_law", "cost_cv")]
        check(s["cost_cancel"] == s["cost_bye"] and s["cost_bye"] != s["cost_invite"],
              f"sim [{sec}]: cost_cancel {s['cost_cancel']} = cost_bye {s['cost_bye']} "
              f"(cost_invite {s['cost_invite']}, others {others})")
    r = subprocess.run(["timeout", "60"] + base + ["--set", "server core.cost_cancel=0.00123"],
                       capture_output=True, text=True)
    s = json.loads(r.stdout)["scenario"]["resolved"]["server core"] if r.returncode == 0 else {}
    check(s.get("cost_cancel") == 0.00123,
          f"sim [server core]: an explicit cost_cancel wins: {s.get('cost_cancel')}")


def cancel(me, i):
    return (f"CANCEL sip:b@127.0.0.1 SIP/2.0\r\n"
            f"Via: SIP/2.0/UDP 127.0.0.1:{me};branch=z9hG4bKcc{i}\r\nMax-Forwards: 70\r\n"
            f"From: <sip:a@127.0.0.1>;tag=a{i}\r\nTo: <sip:b@127.0.0.1>\r\n"
            f"Call-ID: cc{i}@test\r\nCSeq: 1 CANCEL\r\nContent-Length: 0\r\n\r\n").encode()


def node(osn, tmp, name, n_cancel, *sets):
    """A uas whose costs are all 0 but cost_bye 50 ms and cost_invite 1 s (and `sets`), sent
    n_cancel CANCELs for no call; (481s received, the node's CPU seconds, its resolved cost,
    seconds from the first CANCEL sent to the last 481)."""
    costs = ["--set", "node.element=uas", "--set", "server uas.cost_bye=0.05",
             "--set", "server uas.cost_invite=1"]
    for k in ("retrans", "response", "ack", "reject"):
        costs += ["--set", f"server uas.cost_{k}=0"]
    for s in sets:
        costs += ["--set", s]
    uas = Node(osn, tmp, name, *costs, metrics=False, summary=True, seconds=60)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    s.settimeout(5)
    got, t0, t_last = 0, time.monotonic(), None
    try:
        for i in range(n_cancel):
            s.sendto(cancel(s.getsockname()[1], i), ("127.0.0.1", uas.sip))
        for _ in range(n_cancel):
            try:
                st, _, _ = parse_response(s.recv(65535).decode(errors="replace"))
            except socket.timeout:
                break
            got += st == 481
            t_last = time.monotonic() - t0
    finally:
        s.close()
        uas.stop(seconds=10)
    d = uas.summary()
    busy = d["util"] * d["elapsed_s"]
    return got, busy, d["scenario_resolved"]["server uas"]["cost_cancel"], t_last


def main():
    osn, src = sys.argv[1], sys.argv[2]
    tmp = tempfile.mkdtemp(prefix="osn_cost_cancel.")
    try:
        sim(osn, src)
        got, busy, cost, t = node(osn, tmp, "uas", 10)
        check(got == 10, f"node: 10 CANCELs for no call, {got} answered 481")
        check(cost == 0.05, f"node: scenario_resolved cost_cancel {cost} = cost_bye 0.05")
        check(0.5 - 1e-6 <= busy < 5,
              f"node: CPU time {busy:.6f} s = 10 x cost_bye 0.5 s (cost_invite: 10 s)")
        check(t is not None and t >= 0.5 - 0.005,
              f"node: the last 481 {t if t is None else round(t, 3)} s after the first CANCEL, "
              f"not before 10 x 50 ms of CPU")
        got, busy, cost, _ = node(osn, tmp, "uas_set", 10, "server uas.cost_cancel=0.005")
        check(got == 10 and cost == 0.005 and 0.05 - 1e-6 <= busy < 0.275,
              f"node: with cost_cancel = 0.005 set, {got} 481s, CPU time {busy:.6f} s = 0.05 s "
              f"(cost_bye: 0.5 s)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{len(FAILS)} failed" if FAILS else "all passed")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())

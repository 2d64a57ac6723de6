"""What the simulator's Python tests share (sim_fanout.py, sim_fanout_cores.py): a check that
prints and records its outcome, and one `osn sim --json` run read back with its elements by
name.

  check(ok, what)              prints "ok" or "FAIL" and what; a failure is kept in FAILS
  sim(osn, ini, tmp, *sets)    the JSON result of `osn sim INI --set ...` (by_name: elements by
                               name), or None (a failed check) when it exits non-zero
  refused(osn, ini, sets, key) checks that `osn sim INI --set ...` exits 2 naming key
"""
import json
import os
import subprocess

FAILS = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        FAILS.append(what)


def sim(osn, ini, tmp, *sets):
    out = os.path.join(tmp, "out.json")
    args = [osn, "sim", ini, "-q", "--json", out]
    for s in sets:
        args += ["--set", s]
    r = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                       timeout=120)
    if r.returncode != 0:
        check(False, f"osn sim {os.path.basename(ini)} {list(sets)}: exit {r.returncode} "
              f"{r.stderr.strip()}")
        return None
    with open(out) as f:
        d = json.load(f)
    d["by_name"] = {e["name"]: e for e in d["elements"]}
    return d


def refused(osn, ini, sets, key):
    args = [osn, "sim", ini, "-q"]
    for s in sets:
        args += ["--set", s]
    r = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                       timeout=60)
    check(r.returncode == 2 and key in r.stderr, f"{sets}: exit {r.returncode}, {r.stderr.strip()!r}")

#!/usr/bin/env python3
"""The load tests' CTest TIMEOUT covers their wait for the load-test lock.

A load test (a script calling `nl_init NAME BUDGET --load`, tests/node/lib.sh) first waits for
the machine-wide load-test lock, up to NL_LOCK_WAIT seconds (1800 by default), while another
checkout's load test, make testbed or make bench holds it; then it runs. So CTest must give it
NL_LOCK_WAIT (ENVIRONMENT) and a TIMEOUT beyond that wait, else CTest kills it while it waits
its turn and reports a timeout where nothing ran. This reads what CTest will run
(`ctest --show-only=json-v1`), finds the tests whose script takes the lock, and checks each.

Usage: lock_timeout.py BUILD_DIR SOURCE_DIR     exit 0 when every load test is consistent.
"""
import json
import os
import re
import subprocess
import sys

# Seconds of its own run a load test is allowed at least, beyond the wait (the shortest budget
# of a load test in CTest is 170 s, tests/test_testbed.sh).
MIN_RUN = 120


def main():
    build, src = sys.argv[1], os.path.abspath(sys.argv[2])
    out = subprocess.run(["ctest", "--test-dir", build, "--show-only=json-v1"],
                         capture_output=True, text=True, check=True).stdout
    bad, seen = [], 0
    for t in json.loads(out)["tests"]:
        scripts = [a for a in t.get("command", [])
                   if a.endswith(".sh") and os.path.abspath(a).startswith(src)]
        if not any(re.search(r"^\s*nl_init\s.*--load", open(s).read(), re.M) for s in scripts):
            continue
        seen += 1
        props = {p["name"]: p["value"] for p in t.get("properties", [])}
        env = dict(e.split("=", 1) for e in props.get("ENVIRONMENT", []))
        wait = int(env.get("NL_LOCK_WAIT", 1800))  # lib.sh's default when not given
        timeout = float(props.get("TIMEOUT", 1500))  # CTest's default
        ok = "NL_LOCK_WAIT" in env and timeout >= wait + MIN_RUN
        print(f"{'ok  ' if ok else 'FAIL'} {t['name']}: TIMEOUT {timeout:g} s, lock wait {wait} s"
              f"{'' if 'NL_LOCK_WAIT' in env else ' (not given: lib.sh default)'}")
        if not ok:
            bad.append(t["name"])
    if not seen:
        print("FAIL: no load test found (nl_init ... --load) among CTest's tests")
        return 1
    if bad:
        print(f"FAIL: {len(bad)} of {seen} load tests can be killed by CTest while they wait "
              f"for the lock: {', '.join(bad)}")
        return 1
    print(f"{seen} load tests: TIMEOUT >= lock wait + {MIN_RUN} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

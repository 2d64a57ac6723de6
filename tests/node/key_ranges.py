#!/usr/bin/env python3
"""A node key out of its range is refused by the generic loader, in its words, from the range
the key table states (src/io/node_scenario.c; src/ini/keys.c): one key, one place. The node's
own check (osn_node_check, src/node/config.c) says only what a table cannot: addresses and the
relations between keys (a uac's warmup against its duration, here).

Each case: exit 2 and stderr exactly the loader's line for --set (`osn node: --set K=V: key
'K' = 'V': WORDS`), or for a scenario file its file:line.

Usage: key_ranges.py OSN        exit 0 when every message is the loader's.
"""
import os
import shutil
import subprocess
import sys
import tempfile

CASES = [  # key, value, the loader's words for the table's range
    ("node.duration", "-1", "must not be negative"),
    ("node.down_time", "-1", "must not be negative"),
    ("node.warmup", "-0.5", "must not be negative"),
    ("node.stats_interval", "0", "must be greater than 0"),
    ("node.per_source_rate", "-2", "must not be negative"),
    ("node.max_memory", "5", "must be at least 1048576"),
    ("node.max_transactions", "0", "must be at least 1"),
    ("node.workers", "65", "larger than the largest allowed value (64)"),
    ("node.workers", "-1", "must not be negative"),
    ("node.tcp_max_connections", "0", "must be at least 1"),
    ("node.tcp_idle_timeout", "0", "must be greater than 0"),
    ("node.tcp_buffer", "100", "must be at least 65535"),
    ("node.link_delay_down", "inf", "must be a finite number"),
    ("node.link_delay_up", "-1", "must not be negative"),
    ("node.link_loss_down", "-0.1", "must not be negative"),
    ("node.link_buffer", "10", "must be at least 65535"),
    ("server edge.buffer", "0", "must be at least 1"),
]


def run(osn, *args):
    p = subprocess.run(["timeout", "20", osn, "node", "--set", "node.listen=127.0.0.1:0",
                        *args, "-q"], capture_output=True, text=True)
    return p.returncode, p.stderr.strip()


def main():
    osn = sys.argv[1]
    bad = 0
    for key, value, words in CASES:
        rc, err = run(osn, "--set", f"{key}={value}")
        want = f"osn node: --set {key}={value}: key '{key}' = '{value}': {words}"
        ok = rc == 2 and err == want
        bad += not ok
        print(("ok  " if ok else "FAIL") + f" {key}={value}: exit {rc}: {err}")
    tmp = tempfile.mkdtemp(prefix="osn_key_ranges.")
    try:
        ini = os.path.join(tmp, "n.ini")
        with open(ini, "w") as f:
            f.write("[node]\nelement = uas\n\ntcp_buffer = 100\n")
        rc, err = run(osn, ini)
        want = f"osn node: {ini}:4: key 'node.tcp_buffer' = '100': must be at least 65535"
        ok = rc == 2 and err == want
        bad += not ok
        print(("ok  " if ok else "FAIL") + f" a file's tcp_buffer = 100: exit {rc}: {err}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    # What no table states stays the node's own check, naming the key: a double's upper bound
    # (OSN_KEY_DOUBLE has a lower one only), and a relation between keys.
    rc, err = run(osn, "--set", "node.link_loss_down=1")
    ok = rc == 2 and err.endswith("key 'node.link_loss_down' = '1': must be a probability in [0, 1)")
    bad += not ok
    print(("ok  " if ok else "FAIL") + f" link_loss_down 1: exit {rc}: {err}")
    rc, err = run(osn, "--set", "node.element=uac", "--set", "node.next_hop=127.0.0.1:9",
                  "--set", "node.duration=1", "--set", "node.warmup=2")
    ok = rc == 2 and "node.warmup" in err and "less than its node.duration (1 s)" in err
    bad += not ok
    print(("ok  " if ok else "FAIL") + f" uac warmup 2 > duration 1: exit {rc}: {err}")
    print(f"{len(CASES) + 3 - bad} passed, {bad} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

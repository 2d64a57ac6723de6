#!/usr/bin/env bash
# The pieces of the node benchmarks (bench/node_cpu.sh, bench/node_maxrate.sh,
# bench/node_callgrind.sh) that can be
# checked without a load test:
#   - bench/udp_limit.c counts what the kernel counts: run in a network namespace of its own
#     (unshare -n, where /proc/net/snmp counts that namespace's UDP alone), its warm-up plus its
#     datagrams equal the kernel's InDatagrams and OutDatagrams exactly, with nothing lost, and
#     its rate is datagrams / cpu_s; so does -p (the echoing socket in a second process), whose
#     end is one datagram more each way; skipped, said so, where no namespace can be made;
#   - udp_limit refuses a bad argument with exit 2, naming it;
#   - bench/node_pairs.py takes every ratio pair by pair over all the pairs and prints median
#     and range, checked against values worked out by hand below (the last pair alone, the
#     rule it replaces, would give 0.100 for user time, not 0.250); a pair missing a run gives
#     no ratio; a malformed line is refused with its file:line;
#   - both scripts refuse bad settings (exit 2, naming them) before starting anything.
#
#   tests/test_bench_node.sh UDP_LIMIT SOURCE_DIR
set -u
UDP=$1
SRC=$2
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
pass=0
fail=0
skip=0
ok() { pass=$((pass + 1)); }
bad() {
    fail=$((fail + 1))
    echo "FAIL: $*"
}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# kv LINE KEY: the value of KEY=... in a line of key=value pairs
kv() { tr ' ' '\n' <<<"$1" | sed -n "s/^$2=//p"; }

# ---- udp_limit against the kernel's own counters ----
# shellcheck disable=SC2016
if out=$(unshare -n sh -c 'ip link set lo up || exit 77
    grep "^Udp: [0-9]" /proc/net/snmp
    "$1" 0.2 4 200
    grep "^Udp: [0-9]" /proc/net/snmp' sh "$UDP" 2>"$T/err"); then
    read -r _ in0 _ _ out0 _ <<<"$(sed -n 1p <<<"$out")"
    line=$(sed -n 2p <<<"$out")
    read -r _ in1 _ _ out1 _ <<<"$(sed -n 3p <<<"$out")"
    w=$(kv "$line" warmup)
    d=$(kv "$line" datagrams)
    if [ -n "$d" ] && [ "$((in1 - in0))" = "$((w + d))" ] && [ "$((out1 - out0))" = "$((w + d))" ] &&
        [ "$(kv "$line" lost)" = 0 ] && [ "$w" = 800 ] && [ "$d" -gt 0 ]; then
        ok
    else
        bad "udp_limit counts: '$line' against the kernel's InDatagrams $((in1 - in0)), OutDatagrams $((out1 - out0)) (warm-up 100 rounds x 2 x 4 = 800)"
    fi
    # it stops at 0.2 CPU-seconds, or at 3 x 0.2 s of wall time on a machine too busy to give
    # it that much
    if "$PY" -c 'import sys
d, c, r, w = (float(x) for x in sys.argv[1:])
sys.exit(0 if (c >= 0.2 or w >= 0.6) and abs(r - d / c) <= 0.01 * r else 1)' "$d" \
        "$(kv "$line" cpu_s)" "$(kv "$line" datagrams_per_cpu_s)" "$(kv "$line" wall_s)"; then
        ok
    else
        bad "udp_limit: datagrams_per_cpu_s is not datagrams / cpu_s, or it stopped early: '$line'"
    fi
else
    skip=$((skip + 1))
    echo "skip: udp_limit against /proc/net/snmp: no network namespace here ($(head -1 "$T/err"))"
fi
# -p: the same counts with B in a process of its own, plus the end (one datagram each way: the
# parent's send, the echo process's receive); cpu_s is both processes' time, over 0.5 s of wall
# shellcheck disable=SC2016
if out=$(unshare -n sh -c 'ip link set lo up || exit 77
    grep "^Udp: [0-9]" /proc/net/snmp
    "$1" -p 0.5 4 200
    grep "^Udp: [0-9]" /proc/net/snmp
    times' sh "$UDP" 2>"$T/err"); then
    read -r _ in0 _ _ out0 _ <<<"$(sed -n 1p <<<"$out")"
    line=$(sed -n 2p <<<"$out")
    read -r _ in1 _ _ out1 _ <<<"$(sed -n 3p <<<"$out")"
    w=$(kv "$line" warmup)
    d=$(kv "$line" datagrams)
    if [ -n "$d" ] && [ "$((in1 - in0))" = "$((w + d + 1))" ] &&
        [ "$((out1 - out0))" = "$((w + d + 1))" ] && [ "$(kv "$line" processes)" = 2 ] &&
        [ "$(kv "$line" lost)" = 0 ] && [ "$w" = 800 ] && [ "$d" -gt 0 ]; then
        ok
    else
        bad "udp_limit -p counts: '$line' against the kernel's InDatagrams $((in1 - in0)), OutDatagrams $((out1 - out0)) (warm-up 800, and the end: 1 each way)"
    fi
    # cpu_s counts the echo process too: it is most of what the shell's `times` gives for its
    # children (udp_limit, its echo process, ip and grep; in ticks of 0.01 s), where the parent
    # alone would be about half; and the rate is datagrams / cpu_s over at least 0.5 s of wall
    kids=$(sed -n 5p <<<"$out" | awk '{ for (i = 1; i <= NF; i++) { split($i, a, /[ms]/); t += a[1] * 60 + a[2] } } END { print t }')
    if "$PY" -c 'import sys
d, c, r, w, k = (float(x) for x in sys.argv[1:])
sys.exit(0 if w >= 0.5 and abs(r - d / c) <= 0.01 * r and c >= 0.8 * k - 0.02 else 1)' "$d" \
        "$(kv "$line" cpu_s)" "$(kv "$line" datagrams_per_cpu_s)" "$(kv "$line" wall_s)" "$kids"; then
        ok
    else
        bad "udp_limit -p: datagrams_per_cpu_s is not datagrams / cpu_s, it stopped early, or cpu_s misses the echo process (children's CPU ${kids:-?} s): '$line'"
    fi
else
    skip=$((skip + 1))
    echo "skip: udp_limit -p against /proc/net/snmp: no network namespace here ($(head -1 "$T/err"))"
fi

# ---- udp_limit's arguments ----
for args in "0" "-1" "abc" "1 0" "1 2000" "1 32 0" "1 32 1" "1 32 4000" "1 32 200 extra" "-x 1" "-p -q"; do
    # shellcheck disable=SC2086
    "$UDP" $args >"$T/o" 2>"$T/e"
    rc=$?
    if [ $rc = 2 ] && grep -q "usage: udp_limit" "$T/e"; then ok; else bad "udp_limit $args: exit $rc"; fi
done
"$UDP" 1 x 2>"$T/e"
grep -q "BATCH 'x'" "$T/e" && ok || bad "udp_limit 1 x does not name BATCH: $(cat "$T/e")"

# ---- node_pairs.py: the ratios, pair by pair, worked out by hand ----
# HZ = 100. CPU per call in ticks per call, osn over kamailio:
#   pair 1: osn 1000 calls, user 10, sys 20; kam 1000 calls, user 40, sys 20
#           user 0.25, kernel 1.0, both 30/60 = 0.5
#   pair 2: osn 2000 calls, user 30, sys 30; kam 1000 calls, user 30, sys 10
#           user 0.015/0.03 = 0.5, kernel 0.015/0.01 = 1.5, both 0.03/0.04 = 0.75
#   pair 3: osn 1000 calls, user 5, sys 15; kam 1000 calls, user 50, sys 25
#           user 0.1, kernel 0.6, both 20/75 = 0.2667
#   pair 4: osn only: no ratio
# medians and ranges: user 0.250 [0.100, 0.500], kernel 1.000 [0.600, 1.500],
#   both 0.500 [0.267, 0.750], over 3 pairs.
# The node's datagrams: pair 1 read 3000 + sent 3000 = 3000 moved in 30 ticks (0.3 s),
#   10,000/s, over the pair's limit of 20,000: 0.500; pairs 2 and 3 give none ("-"), pair 4
#   has no limit measured.
cat >"$T/res" <<'EOF'
1 osn 1000 10 20 3000 3000
1 kamailio 1000 40 20 - -
2 kamailio 1000 30 10 - -
2 osn 2000 30 30 - -
3 osn 1000 5 15 - -
3 kamailio 1000 50 25 - -
4 osn 1000 10 10 100 100
EOF
printf '1 20000\n2 20000\n3 20000\n' >"$T/lim"
"$PY" "$SRC/bench/node_pairs.py" "$T/res" "$T/lim" 100 >"$T/out" 2>&1
want="osn/kamailio user CPU per call:   0.250 [0.100, 0.500] over 3 pairs (goal <= 0.3)
osn/kamailio kernel CPU per call: 1.000 [0.600, 1.500] over 3 pairs
osn/kamailio CPU per call:        0.500 [0.267, 0.750] over 3 pairs (goal <= 0.7)
osn datagrams per CPU-second / UDP limit: 0.500 [0.500, 0.500] over 1 pair (goal >= 0.9)"
if [ "$(cat "$T/out")" = "$want" ]; then ok; else
    bad "node_pairs.py: got"
    cat "$T/out"
    echo "wanted"
    echo "$want"
fi
printf '1 osn 1000 10\n' >"$T/res2"
"$PY" "$SRC/bench/node_pairs.py" "$T/res2" "$T/lim" 100 >/dev/null 2>"$T/e"
rc=$?
[ $rc = 2 ] && grep -q "res2:1:" "$T/e" && ok || bad "node_pairs.py: a short line: exit $rc, $(cat "$T/e")"
printf '1 osn 1000 10 20 - -\n' >"$T/res3"
"$PY" "$SRC/bench/node_pairs.py" "$T/res3" "$T/lim" 100 >"$T/out" 2>&1
grep -q "no pair with both runs" "$T/out" && ok || bad "node_pairs.py: one run alone: $(cat "$T/out")"

# ---- bad settings: exit 2, named, before any process is started ----
chk() { # chk WHAT ENV.. -- SCRIPT : exit 2 and WHAT on stderr
    local what=$1
    shift
    env "$@" OSN=/nonexistent bash "$SRC/bench/$script" >/dev/null 2>"$T/e"
    local rc=$?
    if [ $rc = 2 ] && grep -q -- "$what" "$T/e"; then ok; else bad "$script $*: exit $rc, $(cat "$T/e")"; fi
}
script=node_maxrate.sh
chk "unknown proxy 'foo'" PROXIES="osn foo"
chk "'x' in RATES" RATES="1000 x"
chk "'0' in RATES" DURATION=0
chk "BENCH_WORKERS='0'" BENCH_WORKERS=0
script=node_cpu.sh
chk "PAIRS='0'" PAIRS=0
chk "RATE='1e3'" RATE=1e3
chk "BENCH_WORKERS='0'" BENCH_WORKERS=0
script=node_callgrind.sh
chk "RATE='0'" RATE=0
chk "DURATION='5s'" DURATION=5s
chk "/nonexistent is not an executable"

if [ "$skip" -gt 0 ]; then
    echo "$pass passed, $fail failed, $skip skipped"
else
    echo "$pass passed, $fail failed"
fi
[ "$fail" = 0 ]

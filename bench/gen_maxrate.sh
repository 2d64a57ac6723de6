#!/usr/bin/env bash
# Issue 30's highest-rate check: OSN's load generator alone against SIPp's uac alone, each
# straight to a uas, in the same run and the same harness (bench/node_maxrate.sh with
# PROXIES=direct and GEN="sipp osn"): rising RATES, the two generators alternating at each
# rate, each leaving at its first rate not held (every call answered, >= 95% of the rate
# offered, p99 INVITE -> 200 below T1), then "osn/sipp generator highest rate held" (goal
# >= 2). Each row names what was busy: the generator's CPU share of a core, its socket's
# receive-buffer drops, SIPp's watchdog or OSN's lag.
#
# The callee is the same for both, `osn node element=uas` with every cost 0 (UAS=osn), so that
# the generators race and not the uas: SIPp's own uas dropped datagrams at 12,000 calls/s
# (docs/performance.md, 2026-12-06). UAS=sipp or UAS=auto (each generator its own uas) may be
# given.
#
# Usage: bench/gen_maxrate.sh [OSN]
#   RATES="4000 8000 12000 16000 24000 32000"  DURATION=60  RUNS=1  (as node_maxrate.sh)
# Worst case (defaults): 12 steps of at most 185 s, 37 minutes; each generator leaves at its
# first failure, so a run where SIPp fails at 16,000 and OSN's at 32,000 takes 10 steps of
# about 70 s, 12 minutes. The bound is printed at the start; the watchdog enforces it.
HERE=$(cd "$(dirname "$0")" && pwd)
export RATES=${RATES:-4000 8000 12000 16000 24000 32000}
export PROXIES=direct GEN="sipp osn" UAS=${UAS:-osn}
exec bash "$HERE/node_maxrate.sh" "$@"

#!/usr/bin/env bash
# What abandonment and retrials do to each control (issue 33), in the simulator: the table of
# docs/abandonment.md, control x {no retrials, retrials ignoring Retry-After, retrials
# honouring it}, on examples/collapse.ini at 3x capacity with callers whose patience is
# exponential of mean 4 s. For each control and each way of honouring Retry-After, one
# `osn sim --compare source.retry_prob=0,0.5` pairs the run without retrials and the run with
# them on the same replications (common random numbers: arrivals, holds, patience and retry
# draws per call), so each difference carries its paired 95% half-width; the two "no retrials"
# runs of a control are the same run (Retry-After is read only by a retry). Goodput and
# abandoned are calls/s over the window; the abandoned fraction is abandoned / offered (first
# attempts), its half-width abandoned's over offered; --compare reports no abandoned, so a grid
# over the same keys gives every measure of the same runs (checked: same goodput). n =
# replications x first attempts per replication in the window.
#
# Usage: scripts/abandon_table.sh [OSN]   (default build/osn); env REPS (8), WARM (60), WINDOW
# (20), THREADS (2). Prints a Markdown table on stdout; about 8 minutes on 2 shared cores.
set -eu
OSN=${1:-build/osn}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
REPS=${REPS:-8}
WARM=${WARM:-60}
WINDOW=${WINDOW:-20}
THREADS=${THREADS:-2}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
SET=(--set source.patience=exp --set source.patience_mean=4 --set control.retry_after=10
    --set "net.warmup=$WARM" --set "net.time=$WINDOW" --replications "$REPS" --threads "$THREADS")
# The paired differences: --compare reports goodput (not abandoned) with its paired interval.
for ctl in none loss rate; do
    for honour in no yes; do
        "$OSN" sim "$ROOT/examples/collapse.ini" --compare source.retry_prob=0,0.5 \
            --set "control.kind=$ctl" --set "source.honour_retry_after=$honour" "${SET[@]}" \
            -q --json "$TMP/$ctl-$honour.json"
    done
done
# Every measure of the same runs (same seed, same keys: the same numbers) as a grid.
"$OSN" sim "$ROOT/examples/collapse.ini" --set control.kind=none,loss,rate \
    --set source.retry_prob=0,0.5 --set source.honour_retry_after=no,yes "${SET[@]}" -q \
    --json "$TMP/grid.json"
python3 - "$TMP" "$REPS" "$WINDOW" <<'PY'
import json, sys
tmp, reps, window = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
grid = {(p["control.kind"], float(p["source.retry_prob"]), p["source.honour_retry_after"]): p
        for p in json.load(open(f"{tmp}/grid.json"))}
def cell(r, c):
    f, hw = r["abandoned"] / r["offered"], r["abandoned_ci"] / r["offered"]
    assert abs(r["goodput"] - c["goodput"]) < 1e-9, "the grid and --compare ran different runs"
    return f"{r['goodput']:.1f} ± {r['goodput_ci']:.1f}, {100 * f:.2f} ± {100 * hw:.2f} %"
def diff(c):
    return f"{c['goodput_diff']:+.1f} ± {c['goodput_diff_ci']:.1f}"
print("| control | no retrials: goodput, abandoned | ignoring Retry-After: goodput, abandoned "
      "| difference | honouring Retry-After: goodput, abandoned | difference | n |")
print("|---|---|---|---|---|---|---|")
for ctl in ("none", "loss", "rate"):
    no = json.load(open(f"{tmp}/{ctl}-no.json"))
    yes = json.load(open(f"{tmp}/{ctl}-yes.json"))
    g0, gi, gh = (grid[(ctl, 0.0, "no")], grid[(ctl, 0.5, "no")], grid[(ctl, 0.5, "yes")])
    n = round(reps * g0["offered"] * window)
    print(f"| {ctl} | {cell(g0, no[0])} | {cell(gi, no[1])} | {diff(no[1])} | "
          f"{cell(gh, yes[1])} | {diff(yes[1])} | {reps} x {n // reps} |")
PY

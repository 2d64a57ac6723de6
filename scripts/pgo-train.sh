#!/usr/bin/env bash
# Training run of profile-guided optimisation (called by `make release`): the instrumented osn
# of build-pgo/ runs a short mix of the examples, so that the optimised build in build-release/
# is laid out for the paths they take: the exact solver, the queue simulator, the fluid model,
# and the SIP network with every control on each topology. Only counts are kept (in the profile
# directory); the outputs are thrown away. A few seconds.
#
# Usage: scripts/pgo-train.sh PATH/TO/instrumented/osn
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
osn=$1
# One thread: the counts are then the same from run to run (and never torn by two threads).
# The JSON writers are part of the mix; their files go to a scratch directory, never to
# /dev/null: an output is replaced by rename, which as root once turned /dev/null into a file.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
run() { "$osn" "$@" --json "$scratch/out.json" >/dev/null; }
sim() { run sim "$@" --threads 1; }

run solve examples/two_loop_l1.2_10_15.ini
run solve examples/bi_level.ini
sim examples/sim_two_loop.ini --replications 2
run fluid examples/fluid-burst.ini
for kind in none local loss rate prsm pi; do
    sim examples/collapse.ini --set control.kind=$kind --set net.replications=1 \
        --set net.warmup=5 --set net.time=5
done
sim examples/tandem.ini --set net.replications=1 --set net.warmup=5 --set net.time=5
sim examples/fanin.ini --set net.replications=1 --set net.warmup=10 --set net.time=5

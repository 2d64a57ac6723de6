#!/bin/sh
# Writes on stdout a fan-in of E edges as a user writes a topology (docs/scale.md, "A topology
# the user writes"): [source sI] into [element eI] over [link sI-eI], each eI a proxy of the
# [server edge] costs into one core c ([server core]), c into the UAS u; 5 E + 4 keys. Its run
# is the run of `[net] topology = fanin, edges = E` with [link access] delay DELAY, bit for bit
# (test_net_topo runs the same file, E = 1000, written by its own loop).
#
# Usage: scripts/fanin_written.sh E [DELAY] > FILE.ini    (DELAY: seconds, default 0.005)
#   time build-dev/osn sim FILE.ini --set net.time=0.001 --set net.warmup=0 \
#       --set net.replications=1 --set source.rate=1000 --quiet
set -eu
E=${1:?usage: fanin_written.sh E [DELAY]}
DELAY=${2:-0.005}
case $E in
'' | *[!0-9]*) echo "fanin_written.sh: E '$E': expected a whole number of edges" >&2; exit 2 ;;
esac
awk -v E="$E" -v D="$DELAY" 'BEGIN {
    for (i = 0; i < E; i++)
        printf "[source s%d]\nto = e%d\n[link s%d-e%d]\ndelay = %s\n", i, i, i, i, D
    for (i = 0; i < E; i++)
        printf "[element e%d]\nrole = proxy\nserver = edge\nnext_hop = c\n", i
    printf "[element c]\nrole = proxy\nserver = core\nnext_hop = u\n[element u]\nrole = uas\n"
}'

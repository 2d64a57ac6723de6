# shellcheck shell=bash
# Shared by the two node benchmarks (bench/node_cpu.sh, bench/node_maxrate.sh); sourced after
# tests/node/lib.sh. It fixes how Kamailio is run in both, so that the race is the same one:
#
# - Kamailio's best documented set-up for speed, not Debian's defaults: the TLSF allocator for
#   shared and private memory (-x tlsf -X tlsf; Debian's default manager keeps debugging
#   records on every allocation and costs about 2.5 times the CPU per call), 8 GB of shared
#   memory (-m 8192: at 512 MB tm ran out near 4,000 calls/s, and at 2 GB at 16,000 calls/s
#   held 60 s, 50,641 requests refused on 2026-12-07, "out of memory", which capped its rate
#   rather than its CPU; the pool is a bound, its pages are touched as tm uses them), 64 MB of private memory per process (-M 64; default 8), and
#   the same UDP receive buffer as the node asks for (-b 4194304; Kamailio's default probe stops
#   at 256 KB, and in the run of 2026-12-06 it dropped 22,191 datagrams in its socket at 6,000
#   calls/s with a fifth of a core busy, while the node's 4 MB buffer dropped none).
#   BENCH_KAM_MEM overrides the options.
# - As many UDP workers as the node has loops: BENCH_WORKERS (default 1) is Kamailio's -n
#   (children) and the node's `[node] workers`. Kamailio's timer and main processes come with
#   it, and their CPU is counted too. With more than one worker SIPp's uac sends each call from a
#   socket of its own (-t un; BENCH_SIPP_T overrides): the node's workers each have a listening
#   socket (SO_REUSEPORT) and the kernel spreads the peers over them by address and port, so
#   one socket (-t u1) would load one worker; Kamailio's workers share one socket and take
#   either. Both proxies get the same generator.
# - Kamailio cannot bind port 0. Its port is not guessed: nl_kam_start (tests/node/lib.sh) asks
#   the kernel for a free port, starts Kamailio on it and then checks that Kamailio holds it,
#   alone (ss, by its pids); if it exited (address in use) or shares the port, that start is
#   stopped and a fresh port tried, at most 5 times. A port taken meanwhile costs a retry,
#   never a wrong figure.
#
#   bench_cpu_split PID    "UTIME STIME": clock ticks of PID and all its descendants
#   bench_header TITLE     the table's heading: date (UTC), load average, the generator, both
#                          proxies as run (BENCH_GEN_DESC, when set, names the generator
#                          instead of SIPp uac -> proxy -> SIPp uas)
#   bench_loadavg          the 1-, 5- and 15-minute load averages, "a/b/c"
#   bench_uniq WORD..      the words once each, first order kept (a proxy named twice runs once)

BENCH_KAM_MEM=${BENCH_KAM_MEM:--x tlsf -X tlsf -m 8192 -M 64 -b 4194304}
BENCH_WORKERS=${BENCH_WORKERS:-1}
case $BENCH_WORKERS in
'' | *[!0-9]* | 0 | 0*)
    echo "bench: BENCH_WORKERS='$BENCH_WORKERS' is not a whole number 1..64" >&2
    exit 2
    ;;
esac
if [ "$BENCH_WORKERS" -gt 64 ]; then
    echo "bench: BENCH_WORKERS='$BENCH_WORKERS' is not a whole number 1..64" >&2
    exit 2
fi
if [ "$BENCH_WORKERS" = 1 ]; then BENCH_SIPP_T=${BENCH_SIPP_T:-u1}; else BENCH_SIPP_T=${BENCH_SIPP_T:-un}; fi
case $BENCH_SIPP_T in
u1 | un) ;;
*)
    echo "bench: BENCH_SIPP_T='$BENCH_SIPP_T' is not u1 or un" >&2
    exit 2
    ;;
esac
SIPP_T=(-t "$BENCH_SIPP_T")
# SIPp refuses -t un while its socket limit (50,000 by default) exceeds the open-file limit.
[ "$BENCH_SIPP_T" = un ] && SIPP_T+=(-max_socket 10000)
export NL_KAM_MEM=$BENCH_KAM_MEM NL_KAM_CHILDREN=$BENCH_WORKERS NL_NODE_WORKERS=$BENCH_WORKERS

bench_cpu_split() {
    "$NL_PY" - "$1" <<'PY'
import os, sys
def stat(p):
    try:
        s = open("/proc/%s/stat" % p).read()
    except OSError:
        return None
    f = s[s.rindex(")") + 2:].split()
    return int(f[1]), int(f[11]), int(f[12])   # ppid, utime, stime
root, kids = int(sys.argv[1]), {}
for d in os.listdir("/proc"):
    if d.isdigit():
        s = stat(d)
        if s:
            kids.setdefault(s[0], []).append(int(d))
todo, ut, st = [root], 0, 0
while todo:
    p = todo.pop()
    s = stat(p)
    if s:
        ut += s[1]
        st += s[2]
    todo += kids.get(p, [])
print(ut, st)
PY
}

bench_loadavg() { awk '{ print $1 "/" $2 "/" $3 }' /proc/loadavg; }

bench_uniq() { printf '%s\n' "$@" | awk 'NF && !seen[$0]++' | tr '\n' ' '; }

bench_header() {
    local sipp_v kam_v
    sipp_v=$(sipp -v 2>/dev/null | sed -n 's/^ *SIPp \(v[^ ,]*\).*/\1/p' | head -1)
    sipp_v=${sipp_v%.}
    kam_v=$(kamailio -v 2>/dev/null | sed -n 's/^version: kamailio \([^ ]*\).*/\1/p')
    echo "$1"
    echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); load average (1/5/15 min): $(bench_loadavg)" \
        "on $(nproc) cores; $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
    if [ -n "${BENCH_GEN_DESC:-}" ]; then
        echo "generator: ${BENCH_GEN_DESC/SIPp/SIPp ${sipp_v:-?}}"
    else
        echo "generator: SIPp ${sipp_v:-?} (built-in uac and uas scenarios, 1 MB socket buffers," \
            "uac -t $BENCH_SIPP_T), SIPp uac -> proxy -> SIPp uas, all on 127.0.0.1"
    fi
    echo "kamailio: ${kam_v:-?}, tests/node/kamailio/stateful.cfg (tm), $BENCH_KAM_MEM," \
        "-n $BENCH_WORKERS (children=$BENCH_WORKERS, as many UDP workers as the node has loops)"
    echo "osn node: edge, every cost 0, control none, workers = $BENCH_WORKERS ($OSN)"
}

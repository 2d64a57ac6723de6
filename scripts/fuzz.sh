#!/usr/bin/env bash
# Builds and runs a libFuzzer target: the SIP parser's (fuzz/fuzz_sip.c, the default) or the
# node's (fuzz/fuzz_node.c: sequences of datagrams and clock steps into the node's driver).
#
#   scripts/fuzz.sh BUILD_DIR [BUDGET [TARGET]]     default 600 (wall seconds), fuzz_sip
#
# BUDGET is either N, N seconds of wall time (libFuzzer's -max_total_time; CTest's 60 s runs use
# it), or Ncpu, N seconds of CPU time (user + sys) of the fuzzing process: `make fuzz` gives each
# target 1800cpu, the 30 CPU-minutes issue 28 asks for. A CPU budget because libFuzzer has
# none (-max_total_time is wall time, -runs a count whose duration depends on the input mix) and
# this machine is shared: under load a wall bound buys an unknown fraction of a core, so the
# same command would fuzz for 30 minutes one day and 10 the next. The script reads the process's
# utime + stime from /proc/PID/stat every 5 s and sends it SIGINT once the budget is spent;
# libFuzzer then prints its final statistics and exits (status 72, reported here as 0). The
# budget is overshot by at most one polling interval. OSN_FUZZ_MAX_WALL=S (optional) also caps
# the wall time, for a run that must end by a given hour; the last line says whether the CPU
# budget was reached.
#
# BUILD_DIR is a build of its own, configured here on first use with clang-16 (Debian clang-16;
# -fsanitize=fuzzer needs libclang-rt-16-dev), ASan + UBSan and OSN_FUZZ=ON. The committed seed
# corpus (fuzz/corpus/ for the parser, fuzz/corpus_node/ for the node, written by
# fuzz/node_seeds.py) is read, never written: new inputs go to BUILD_DIR/corpus-TARGET/, crashes
# to BUILD_DIR/artifacts-TARGET/. One process (-jobs 0), inputs up to 8 KiB (-max_len=8192:
# the torture messages are at most 3.5 KiB; the parser's caps are tested beyond that by
# test_sip_parse). Exit status 0 when the run ends with no finding; otherwise libFuzzer's (a
# crash, a leak, or a broken invariant, with the input saved under artifacts-TARGET/).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

build=${1:?usage: scripts/fuzz.sh BUILD_DIR [BUDGET [TARGET]]}
budget=${2:-600}
case $budget in
*[!0-9]*cpu | cpu | *cpu*cpu)
    echo "fuzz.sh: bad budget '$budget' (N wall seconds or Ncpu CPU seconds)" >&2
    exit 2
    ;;
*cpu) cpu_budget=${budget%cpu} wall=${OSN_FUZZ_MAX_WALL:-0} ;;
'' | *[!0-9]*)
    echo "fuzz.sh: bad budget '$budget' (N wall seconds or Ncpu CPU seconds)" >&2
    exit 2
    ;;
*) cpu_budget=0 wall=$budget ;;
esac
target=${3:-fuzz_sip}
case $target in
fuzz_sip) seeds=fuzz/corpus ;;
fuzz_node) seeds=fuzz/corpus_node ;;
*)
    echo "fuzz.sh: unknown target '$target' (fuzz_sip, fuzz_node)" >&2
    exit 2
    ;;
esac
cc=${OSN_FUZZ_CC:-clang-16}

if ! command -v "$cc" >/dev/null; then
    echo "fuzz.sh: $cc not found (scripts/deps.sh installs clang-16 and libclang-rt-16-dev)" >&2
    exit 1
fi
if [[ ! -f "$build/build.ninja" ]]; then
    # Optimised, but with assert() on (no -DNDEBUG): the debug-build checks of derived state
    # (src/sip/print.c's forward parse, src/node/gen.c's INVITE parse) then see hostile input.
    CC="$cc" cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOSN_SANITIZE=ON \
        -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g" -DOSN_FUZZ=ON -DOSN_FUZZ_TEST=OFF >/dev/null
fi
ninja -C "$build" -j2 "$target" >/dev/null
mkdir -p "$build/corpus-$target" "$build/artifacts-$target"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
args=("$build/corpus-$target" "$seeds" -max_total_time="$wall" -max_len=8192 -timeout=10
    -rss_limit_mb=2048 -artifact_prefix="$build/artifacts-$target/" -print_final_stats=1)
if ((cpu_budget == 0)); then
    exec "$build/$target" "${args[@]}"
fi

# CPU-bounded run: poll the fuzzer's own CPU time (fields 14 and 15 of /proc/PID/stat, counted
# after the ")" that ends the command name, in clock ticks).
tick=$(getconf CLK_TCK)
"$build/$target" "${args[@]}" &
pid=$!
trap 'kill -INT "$pid" 2>/dev/null || true' INT TERM
cpu=0 sent=0 t0=$SECONDS
while kill -0 "$pid" 2>/dev/null; do
    if stat=$(cat "/proc/$pid/stat" 2>/dev/null); then
        read -r -a f <<<"${stat##*) }"
        cpu=$(((f[11] + f[12]) / tick))
        if ((sent == 0 && cpu >= cpu_budget)); then
            kill -INT "$pid" 2>/dev/null || true
            sent=1
        fi
    fi
    sleep 5
done
rc=0
wait "$pid" || rc=$?
if ((sent == 1 && rc == 72)); then
    rc=0
fi
reached=no
((cpu >= cpu_budget)) && reached=yes
echo "fuzz.sh: $target: $cpu CPU-seconds (user + sys, last sample) of a ${cpu_budget} s budget" \
    "in $((SECONDS - t0)) s wall; budget reached: $reached; exit $rc"
exit "$rc"

#!/usr/bin/env bash
# Builds and runs a libFuzzer target: the SIP parser's (fuzz/fuzz_sip.c, the default) or the
# node's (fuzz/fuzz_node.c: sequences of datagrams and clock steps into the node's driver).
#
#   scripts/fuzz.sh BUILD_DIR [SECONDS [TARGET]]     default 600 s, fuzz_sip
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

build=${1:?usage: scripts/fuzz.sh BUILD_DIR [SECONDS]}
seconds=${2:-600}
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
    CC="$cc" cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOSN_SANITIZE=ON \
        -DOSN_FUZZ=ON -DOSN_FUZZ_TEST=OFF >/dev/null
fi
ninja -C "$build" -j2 "$target" >/dev/null
mkdir -p "$build/corpus-$target" "$build/artifacts-$target"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
exec "$build/$target" "$build/corpus-$target" "$seeds" -max_total_time="$seconds" \
    -max_len=8192 -timeout=10 -rss_limit_mb=2048 -artifact_prefix="$build/artifacts-$target/" \
    -print_final_stats=1

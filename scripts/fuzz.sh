#!/usr/bin/env bash
# Builds and runs the SIP parser's libFuzzer target (fuzz/fuzz_sip.c).
#
#   scripts/fuzz.sh BUILD_DIR [SECONDS]     default 600 s
#
# BUILD_DIR is a build of its own, configured here on first use with clang-16 (Debian clang-16;
# -fsanitize=fuzzer needs libclang-rt-16-dev), ASan + UBSan and OSN_FUZZ=ON. The committed seed
# corpus fuzz/corpus/ is read, never written: new inputs go to BUILD_DIR/corpus/, crashes to
# BUILD_DIR/artifacts/. One process (-jobs 0), inputs up to 8 KiB (-max_len=8192: the torture
# messages are at most 3.5 KiB; the parser's caps are tested beyond that by test_sip_parse).
# Exit status 0 when the run ends with no finding; otherwise libFuzzer's (a crash or a broken
# round-trip invariant, with the input saved under artifacts/).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

build=${1:?usage: scripts/fuzz.sh BUILD_DIR [SECONDS]}
seconds=${2:-600}
cc=${OSN_FUZZ_CC:-clang-16}

if ! command -v "$cc" >/dev/null; then
    echo "fuzz.sh: $cc not found (scripts/deps.sh installs clang-16 and libclang-rt-16-dev)" >&2
    exit 1
fi
if [[ ! -f "$build/build.ninja" ]]; then
    CC="$cc" cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOSN_SANITIZE=ON \
        -DOSN_FUZZ=ON -DOSN_FUZZ_TEST=OFF >/dev/null
fi
ninja -C "$build" -j2 fuzz_sip >/dev/null
mkdir -p "$build/corpus" "$build/artifacts"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
exec "$build/fuzz_sip" "$build/corpus" fuzz/corpus -max_total_time="$seconds" -max_len=8192 \
    -timeout=10 -rss_limit_mb=2048 -artifact_prefix="$build/artifacts/" -print_final_stats=1

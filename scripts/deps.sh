#!/usr/bin/env bash
# Installs the Debian 12 packages OSN needs, and nothing else.
#
#   scripts/deps.sh          build and test: compiler, cmake, ninja, pkg-config, the -dev
#                            libraries, python3 (tests that parse JSON; the Python module's
#                            tests), python3-matplotlib (examples/python/load_curve.py, run by
#                            the install test), clang-format (the
#                            format gate of `make check`), gnuplot-nox (`osn fluid --plot`);
#                            for the SIP parser's tests, which `make check` runs: libosip2-dev
#                            (LGPL; the differential test's and the parser benchmark's peer,
#                            never linked into osn), clang-16 and libclang-rt-16-dev (the
#                            libFuzzer target, -fsanitize=fuzzer); sip-tester (SIPp) and
#                            kamailio: the real SIP peers of the `osn node` tests (tests/node/,
#                            scripts/testbed.sh, bench/node_cpu.sh), run as separate processes
#                            on 127.0.0.1, never linked (SIPp's uac/uas messages are also the
#                            parser's test data); openmpi-bin and libopenmpi-dev: studies over
#                            MPI ranks (optional at build time; tests/test_study_mpi.sh)
#   scripts/deps.sh bench    the above plus python3-scipy, the peer of bench/scipy_peer.py, and
#                            python3-simpy (SimPy 2.3), the peer of bench/simpy_peer.py
#
# When everything is present it prints nothing and touches no network: each package is checked
# with dpkg-query. Otherwise, as root, it runs apt-get install (non-interactive, no recommends);
# `apt-get update` runs only when that install fails, e.g. on a machine with no package lists,
# and the install is then tried once more. Not root and something missing: it prints the
# command to run and exits 1.
set -euo pipefail

base=(gcc libc6-dev make cmake ninja-build pkg-config libinih-dev libjansson-dev libcmocka-dev
    python3 python3-matplotlib clang-format gnuplot-nox libosip2-dev clang-16 libclang-rt-16-dev
    sip-tester kamailio openmpi-bin libopenmpi-dev)
bench=(python3-scipy python3-simpy)

want=("${base[@]}")
for group in "$@"; do
    case "$group" in
    bench) want+=("${bench[@]}") ;;
    *)
        echo "deps.sh: unknown group '$group' (known: bench)" >&2
        exit 2
        ;;
    esac
done

missing=()
for pkg in "${want[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
    [[ "$status" == "install ok installed" ]] || missing+=("$pkg")
done
((${#missing[@]} == 0)) && exit 0

if ((EUID != 0)); then
    echo "deps.sh: missing Debian packages: ${missing[*]}" >&2
    echo "deps.sh: run as root:  apt-get install --no-install-recommends ${missing[*]}" >&2
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
apt_install() {
    apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=300 "${missing[@]}"
}

log=$(mktemp)
trap 'rm -f "$log"' EXIT
echo "deps.sh: installing ${missing[*]}" >&2
if ! apt_install >"$log" 2>&1; then
    # Most often a fresh machine without package lists ("Unable to locate package").
    if ! apt-get update -q >>"$log" 2>&1 || ! apt_install >>"$log" 2>&1; then
        cat "$log" >&2
        echo "deps.sh: apt-get install failed" >&2
        exit 1
    fi
fi

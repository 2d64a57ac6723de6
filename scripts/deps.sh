#!/usr/bin/env bash
# Installs the Debian 12 packages OSN needs, in tiers, and nothing beyond the tier asked for.
#
#   scripts/deps.sh [TIER]     install what TIER needs (default: build); each tier includes
#                              the ones above it
#   scripts/deps.sh --list     print every tier and its packages, with why
#
# The tiers, and the make targets that ask for them:
#   build   `make`, `make install`: compiler, cmake, ninja, pkg-config and the libraries osn
#           links (inih, jansson, libmicrohttpd: the HTTP of `osn node`'s metrics endpoint,
#           LGPL-2.1+, linked as a shared library), python3 (the Python module, the build's
#           helper scripts)
#   demo    `make demo`: sip-tester (SIPp drives the demo's three real nodes), gnuplot-nox
#           (`osn fluid --plot`)
#   test    `make check`, `make testbed`, `make fuzz`: cmocka (the C tests), libosip2-dev (LGPL;
#           the SIP parser's differential test and benchmark peer, never linked into osn),
#           clang-16 and libclang-rt-16-dev (the libFuzzer target), clang-format (the format
#           gate), python3-matplotlib (the Python example the install test runs), kamailio
#           (the real proxy of the node tests), openmpi-bin and libopenmpi-dev (studies over
#           MPI ranks), baresip-core (a real softphone calling and called through the node;
#           the binary and its modules without the GUI and video packages `baresip` pulls in)
#   bench   `make bench`: python3-scipy (bench/scipy_peer.py) and python3-simpy (SimPy 2.3,
#           bench/simpy_peer.py)
#
# SIPp and Kamailio run as separate processes on 127.0.0.1, started and stopped by the scripts
# that need them. Installing kamailio never leaves a SIP service behind: while apt runs, a
# policy-rc.d forbids starting services (so the package's postinst cannot start it), and the
# kamailio unit is then masked, so it does not start at the next boot either (Debian's package
# would otherwise listen on port 5060 of every interface, osn node's default port).
#
# When everything is present it prints nothing and touches no network: each package is checked
# with dpkg-query. Otherwise, as root, it runs apt-get install (non-interactive, no recommends);
# `apt-get update` runs only when that install fails, e.g. on a machine with no package lists,
# and the install is then tried once more. Not root and something missing: it prints the
# command to run and exits 1.
set -euo pipefail

tiers=(build demo test bench)
build=(gcc libc6-dev make cmake ninja-build pkg-config libinih-dev libjansson-dev
    libmicrohttpd-dev python3)
demo=(sip-tester gnuplot-nox)
test=(libcmocka-dev libosip2-dev clang-16 libclang-rt-16-dev clang-format python3-matplotlib
    kamailio openmpi-bin libopenmpi-dev baresip-core)
bench=(python3-scipy python3-simpy)

if [[ "${1:-}" == --list ]]; then
    for t in "${tiers[@]}"; do
        declare -n pkgs=$t
        echo "$t: ${pkgs[*]}"
    done
    exit 0
fi

tier=${1:-build}
want=()
found=0
for t in "${tiers[@]}"; do
    declare -n pkgs=$t
    want+=("${pkgs[@]}")
    if [[ "$t" == "$tier" ]]; then
        found=1
        break
    fi
done
if ((!found)); then
    echo "deps.sh: unknown tier '$tier' (known: ${tiers[*]}; --list shows them)" >&2
    exit 2
fi

missing=()
for pkg in "${want[@]}"; do
    status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
    [[ "$status" == "install ok installed" ]] || missing+=("$pkg")
done
((${#missing[@]} == 0)) && exit 0

if ((EUID != 0)); then
    echo "deps.sh: missing Debian packages for tier '$tier': ${missing[*]}" >&2
    echo "deps.sh: run as root:  apt-get install --no-install-recommends ${missing[*]}" >&2
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
apt_install() {
    apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=300 "${missing[@]}"
}

log=$(mktemp)
# OSN_DEPS_POLICY_RC_D: another place for it, for tests/test_deps.sh only (with shims of apt-get
# and systemctl on the PATH); apt's invoke-rc.d reads /usr/sbin/policy-rc.d alone.
policy=${OSN_DEPS_POLICY_RC_D:-/usr/sbin/policy-rc.d}
own_policy=0
cleanup() {
    rm -f "$log"
    ((own_policy)) && rm -f "$policy"
    return 0
}
trap cleanup EXIT
# No service may start while packages are installed (invoke-rc.d and deb-systemd-invoke ask
# policy-rc.d; 101 = action forbidden). An existing policy-rc.d is the machine's: left alone.
if [[ ! -e "$policy" ]]; then
    printf '#!/bin/sh\n# scripts/deps.sh of OSN: no service starts during its install\nexit 101\n' \
        >"$policy"
    chmod 755 "$policy"
    own_policy=1
fi
echo "deps.sh: installing ${missing[*]}" >&2
if ! apt_install >"$log" 2>&1; then
    # Most often a fresh machine without package lists ("Unable to locate package").
    if ! apt-get update -q >>"$log" 2>&1 || ! apt_install >>"$log" 2>&1; then
        cat "$log" >&2
        echo "deps.sh: apt-get install failed" >&2
        exit 1
    fi
fi
if [[ " ${missing[*]} " == *" kamailio "* ]]; then
    # Stopped where a systemd runs, then disabled (systemd and SysV links) and masked, so that
    # neither a boot nor a dependency starts it. `systemctl --root=/` edits the links without
    # a running systemd (a container, a chroot).
    if [[ -d /run/systemd/system ]]; then
        systemctl stop kamailio.service >/dev/null 2>&1 || true
    fi
    if command -v systemctl >/dev/null; then
        systemctl --root=/ disable kamailio.service >/dev/null 2>&1 || true
        systemctl --root=/ mask kamailio.service >/dev/null 2>&1 || true
    fi
    echo "deps.sh: kamailio installed with its service masked (tests start their own)" >&2
fi

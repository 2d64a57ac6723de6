#!/usr/bin/env bash
# `make install` as a user meets it, staged into a temporary DESTDIR (issue 20):
#   - the files land where they should (osn, libosn.so, headers, osn.pc, osn.1, the Python
#     module), and the installed osn runs;
#   - examples/c/solve.c builds against the staged tree with pkg-config alone, runs on the
#     shared library, and prints the measures `osn solve --json` gives for the same model (to
#     the 17 digits both print; its own T_ret also against the closed form 12.5 - 7.5*0.6^5);
#   - the Python module, imported from the staged tree, finds its libosn and gives the same
#     dicts as `osn solve --json` (tests/test_python.py), and its example draws a figure.
#
#   tests/test_install.sh BUILD_DIR SOURCE_DIR
set -uo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
. "$src/tests/cli_lib.sh"
pass() { ok; }
fail() { bad "$@"; }

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
prefix=/usr/local

if ! DESTDIR=$stage cmake --install "$build" --prefix "$prefix" >"$stage/install.log" 2>&1; then
    cat "$stage/install.log"
    fail "cmake --install into DESTDIR failed"
    summary
fi
root=$stage$prefix
pydir=$(sed -n 's/^OSN_PYTHON_DIR:[A-Z]*=//p' "$build/CMakeCache.txt")
libdir=$(sed -n 's/^CMAKE_INSTALL_LIBDIR:[A-Z]*=//p' "$build/CMakeCache.txt")
for f in bin/osn "$libdir/libosn.so" "$libdir/libosn.so.0" include/osn/model.h include/osn/xd.h \
    include/osn/json_api.h include/osn/version.h "$libdir/pkgconfig/osn.pc" share/man/man1/osn.1 \
    "$pydir/osn/__init__.py" "$pydir/osn/_where.py"; do
    if [[ -e "$root/$f" ]]; then pass "installed $f"; else fail "not installed: $f"; fi
done
# The chosen API only (docs/api.md): the modules' internal interfaces are not installed, and
# every installed header compiles on its own (it includes what it needs).
for h in node.h sim.h net.h elem.h sip.h ctl.h ini.h; do
    if [[ -e "$root/include/osn/$h" ]]; then fail "internal header installed: $h"; else pass "not installed: $h"; fi
done
# The headers installed are exactly those docs/api.md's table names (its first column): the
# page that says what is stable cannot leave out, or promise, a header the install differs on.
documented=$(grep '^| `osn/' "$src/docs/api.md" | cut -d'|' -f2 | grep -o 'osn/[a-z_]*\.h' | sort)
installed=$(cd "$root/include" && ls osn/*.h | sort)
if [[ "$documented" == "$installed" ]]; then
    pass "installed headers = docs/api.md's table"
else
    fail "installed headers differ from docs/api.md's table: $(diff <(echo "$documented") <(echo "$installed") | grep '^[<>]' | tr '\n' ' ')"
fi
for h in "$root"/include/osn/*.h; do
    if echo "#include <osn/$(basename "$h")>" | cc -fsyntax-only -I"$root/include" -x c - 2>"$stage/h.log"; then
        pass "$(basename "$h") compiles alone"
    else
        cat "$stage/h.log"
        fail "$(basename "$h") does not compile alone (it needs a header that is not installed?)"
    fi
done
# Only the headers: no build-tree path in what a user's compiler reads.
if grep -qF -e "$build" -e "$src" "$root/$libdir/pkgconfig/osn.pc"; then
    fail "osn.pc names the build or source tree"
else
    pass "osn.pc names the prefix only"
fi
grep -q "^prefix=$prefix\$" "$root/$libdir/pkgconfig/osn.pc" && pass "osn.pc prefix" ||
    fail "osn.pc prefix is not $prefix"
head -1 "$root/share/man/man1/osn.1" | grep -q '^\.TH OSN 1' && pass "man page header" ||
    fail "osn.1 is not a man page"
grep -q '^\.SH "OSN SIM"' "$root/share/man/man1/osn.1" && pass "man page has osn sim" ||
    fail "osn.1 lacks the osn sim section"

osn=$root/bin/osn
"$osn" --version | grep -q '^osn [0-9]' && pass "installed osn --version" ||
    fail "installed osn --version"

# The C example, built the way its header says, against the staged tree only.
export PKG_CONFIG_SYSROOT_DIR=$stage PKG_CONFIG_PATH=$root/$libdir/pkgconfig
export PKG_CONFIG_LIBDIR=$root/$libdir/pkgconfig:/usr/lib/x86_64-linux-gnu/pkgconfig:/usr/lib/pkgconfig:/usr/share/pkgconfig
cp -r "$src/examples/c" "$stage/c"
if make -s -C "$stage/c" >"$stage/cc.log" 2>&1; then
    pass "examples/c builds with pkg-config"
else
    cat "$stage/cc.log"
    fail "examples/c does not build against the installed library"
fi
# ldd's output is taken whole first: under pipefail, `ldd | grep -q` fails whenever grep exits
# on its match before ldd has written its last line (SIGPIPE), which made this check flaky.
linked=$(ldd "$stage/c/solve"; LD_LIBRARY_PATH=$root/$libdir ldd "$stage/c/solve")
if grep -q "libosn.so.0 => $root/$libdir/libosn.so.0" <<<"$linked"; then
    pass "examples/c links the shared libosn"
else
    fail "examples/c is not linked with libosn.so.0"
fi
for args in "" "1.5 5 10 20" "0.9 10 15 20"; do
    set -- $args
    sets=()
    if (($# > 0)); then
        sets=(--set "arrivals.rate=$1" --set "arrivals.overload_rate=$(python3 -c "print($1/2)")")
    fi
    if (($# > 1)); then
        sets+=(--set "thresholds.L=$2" --set "thresholds.H=$3" --set "thresholds.R=$4")
    else
        sets+=(--set thresholds.L=10 --set thresholds.H=15 --set thresholds.R=20)
    fi
    LD_LIBRARY_PATH=$root/$libdir "$stage/c/solve" $args >"$stage/c.out" 2>&1 ||
        { fail "examples/c/solve $args failed: $(cat "$stage/c.out")"; continue; }
    "$osn" solve "${sets[@]}" --json "$stage/cli.json" -q ||
        { fail "osn solve ${sets[*]}"; continue; }
    if python3 - "$stage/c.out" "$stage/cli.json" "$args" <<'PY'; then
import json, sys
c = dict(line.split(" ", 1) for line in open(sys.argv[1]).read().splitlines())
cli = json.load(open(sys.argv[2]))
bad = []
for k, v in c.items():
    if k == "osn_version":
        continue
    if float(v) != cli[k]:
        bad.append(f"{k}: C {v} vs osn solve {cli[k]!r}")
if sys.argv[3] == "":
    ref = 12.5 - 7.5 * 0.6**5
    if abs(float(c["T_ret"]) - ref) > 1e-12 * ref:
        bad.append(f"T_ret {c['T_ret']} vs closed form {ref}")
if bad:
    print("\n".join(bad))
    sys.exit(1)
PY
        pass "examples/c/solve ${args:-(defaults)} = osn solve --json"
    else
        fail "examples/c/solve ${args:-(defaults)} differs from osn solve --json"
    fi
done

# A private prefix, as a user without root installs (make install PREFIX=$HOME/.local): the C
# example builds with PKG_CONFIG_PATH alone and runs without LD_LIBRARY_PATH (osn.pc's rpath).
private=$stage/private
if cmake --install "$build" --prefix "$private" >"$stage/private.log" 2>&1 &&
    cp -r "$src/examples/c" "$stage/c2" &&
    env -u PKG_CONFIG_SYSROOT_DIR -u PKG_CONFIG_LIBDIR PKG_CONFIG_PATH="$private/$libdir/pkgconfig" \
        make -s -C "$stage/c2" >"$stage/c2.log" 2>&1 &&
    env -u LD_LIBRARY_PATH "$stage/c2/solve" >"$stage/c2.out" 2>&1; then
    pass "a private prefix: examples/c builds with PKG_CONFIG_PATH and runs without LD_LIBRARY_PATH"
else
    cat "$stage/private.log" "$stage/c2.log" "$stage/c2.out" 2>/dev/null | tail -5
    fail "a private prefix: examples/c does not build or run"
fi

# The Python module from the staged tree: its own libosn, found relative to it.
if PYTHONPATH=$root/$pydir python3 "$src/tests/test_python.py" "$osn" "$src"; then
    pass "python module (tests/test_python.py)"
else
    fail "python module (tests/test_python.py)"
fi
# The module's example, as examples/README.md shows it, with Debian's python3 and matplotlib.
py=/usr/bin/python3
[ -x "$py" ] || py=python3
if PYTHONPATH=$root/$pydir "$py" "$src/examples/python/load_curve.py" "$stage/curve.png" \
    >"$stage/py.log" 2>&1 && [ "$(stat -c %s "$stage/curve.png")" -gt 20000 ]; then
    pass "examples/python/load_curve.py draws its figure"
else
    cat "$stage/py.log"
    fail "examples/python/load_curve.py"
fi
summary

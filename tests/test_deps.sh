#!/usr/bin/env bash
# scripts/deps.sh, the dependency tiers (issue 35): each make target asks for its own tier only;
# a user without root who has a tier gets no request for root and no install; one who lacks a
# package is told the apt-get line and nothing is run; as root, Kamailio is installed with no
# service start allowed during apt and its service disabled and masked afterwards.
#
# Usage: test_deps.sh SOURCE_DIR     Prints "N passed, M failed"; exits 1 on a failure.
#
# dpkg-query, apt-get, sudo and systemctl are shims on the PATH (a scratch directory): what is
# "installed" is the test's to say, and nothing is installed or started for real. The non-root
# runs use setpriv as nobody when the test runs as root, else the test's own user.
set -u
SRC=$(cd "${1:?usage: test_deps.sh SOURCE_DIR}" && pwd)
DEPS=$SRC/scripts/deps.sh
TMP=$(mktemp -d) || exit 1
trap 'rm -rf "$TMP"' EXIT
chmod 755 "$TMP"
passed=0
failed=0
check() { if [ "$1" -eq 0 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL: $2"; fi; }

# ---- the tiers, one list, printed by --list; each tier has what the one before has ----
list=$(bash "$DEPS" --list)
[ "$(cut -d: -f1 <<<"$list" | tr '\n' ' ')" = "build demo test bench " ]
check $? "--list: tiers build demo test bench in order: $list"
grep -q '^build: .*libinih-dev.*libjansson-dev.*libmicrohttpd-dev' <<<"$list" &&
    grep -q '^demo: .*sip-tester' <<<"$list" && grep -q '^test: .*kamailio' <<<"$list" &&
    grep -q '^test: .*clang-16' <<<"$list" && grep -q '^test: .*openmpi-bin' <<<"$list" &&
    grep -q '^bench: .*python3-scipy.*python3-simpy' <<<"$list" &&
    ! grep -q '^build: .*\(kamailio\|clang-16\|openmpi\|sip-tester\|scipy\)' <<<"$list"
check $? "--list: the build tier has no test or bench package: $list"
bash "$DEPS" nosuch >/dev/null 2>"$TMP/err"
rc=$?
[ $rc = 2 ] && grep -q "unknown tier 'nosuch'" "$TMP/err"
check $? "an unknown tier: exit $rc (want 2), $(cat "$TMP/err")"

# ---- each make target asks for its own tier (make -n prints the recipes, runs none) ----
for t in "all build" "install build" "demo demo" "check test" "testbed test" "fuzz test" \
    "bench bench"; do
    read -r target tier <<<"$t"
    asked=$(env -u MAKEFLAGS -u MFLAGS make -n -C "$SRC" "$target" 2>/dev/null | sed -n 's/^scripts\/deps\.sh \([a-z]*\)$/\1/p' |
        sort -u | tr '\n' ' ')
    # a target asks for its tier, and for the build tier at most besides (its build step)
    want="$tier "
    [ "$tier" != build ] && [ "$asked" = "$(printf '%s\n' build "$tier" | sort -u | tr '\n' ' ')" ] &&
        want=$asked
    [ "$asked" = "$want" ]
    check $? "make $target asks for tier(s) '$asked' (want $tier, and build at most besides)"
done

# ---- the shims ----
mkdir -p "$TMP/bin" "$TMP/log"
chmod 777 "$TMP/log"
cat >"$TMP/bin/dpkg-query" <<'SH'
#!/bin/sh
# dpkg-query -W -f='${Status}' PKG: installed unless PKG is in $MISSING
pkg=$3
case " $MISSING " in *" $pkg "*) exit 1 ;; esac
printf 'install ok installed'
SH
cat >"$TMP/bin/apt-get" <<'SH'
#!/bin/sh
# apt-get: logged; while it runs, a service start must be forbidden (policy-rc.d exits 101)
echo "apt-get $*" >>"$LOG"
if [ -x "$OSN_DEPS_POLICY_RC_D" ]; then
    "$OSN_DEPS_POLICY_RC_D" kamailio start
    echo "policy-rc.d kamailio start: $?" >>"$LOG"
fi
exit 0
SH
printf '#!/bin/sh\necho "sudo $*" >>"$LOG"\nexit 1\n' >"$TMP/bin/sudo"
printf '#!/bin/sh\necho "systemctl $*" >>"$LOG"\nexit 0\n' >"$TMP/bin/systemctl"
chmod 755 "$TMP/bin"/*
export LOG=$TMP/log/calls
touch "$LOG"
chmod 666 "$LOG"
as_user() {
    if [ "$(id -u)" = 0 ]; then
        setpriv --reuid=nobody --regid=nogroup --clear-groups -- env PATH="$TMP/bin:$PATH" "$@"
    else
        env PATH="$TMP/bin:$PATH" "$@"
    fi
}
if [ "$(id -u)" = 0 ] && ! command -v setpriv >/dev/null; then
    echo "SKIP: root without setpriv: the non-root checks need another user"
else
    # A user without root who has the build tier (a test-tier package missing): nothing asked.
    : >"$LOG"
    MISSING="kamailio clang-16" as_user bash "$DEPS" build >"$TMP/out" 2>&1
    rc=$?
    [ $rc = 0 ] && [ ! -s "$TMP/out" ] && [ ! -s "$LOG" ]
    check $? "non-root, build tier present, test tier not: exit $rc (want 0), output '$(cat "$TMP/out")', calls '$(cat "$LOG")' (want none)"
    # The same user and the test tier: told what to run as root; nothing run.
    : >"$LOG"
    MISSING="kamailio clang-16" as_user bash "$DEPS" test >"$TMP/out" 2>&1
    rc=$?
    [ $rc = 1 ] && [ ! -s "$LOG" ] &&
        grep -q "run as root:  apt-get install --no-install-recommends clang-16 kamailio" "$TMP/out"
    check $? "non-root, test tier missing: exit $rc (want 1), '$(cat "$TMP/out")', calls '$(cat "$LOG")' (want none)"
    # The real machine, as the user: the build tier is here (the test is built), so nothing.
    if [ "$(id -u)" = 0 ]; then
        setpriv --reuid=nobody --regid=nogroup --clear-groups -- bash "$DEPS" build >"$TMP/out" 2>&1
    else
        bash "$DEPS" build >"$TMP/out" 2>&1
    fi
    rc=$?
    [ $rc = 0 ] && [ ! -s "$TMP/out" ]
    check $? "non-root on this machine, build tier: exit $rc (want 0, silent), '$(cat "$TMP/out")'"
fi

# ---- as root: Kamailio installed with no service start, then disabled and masked ----
# (Only when deps.sh takes the policy's place from the test: else it would write the machine's.)
if [ "$(id -u)" = 0 ] && ! grep -q 'OSN_DEPS_POLICY_RC_D' "$DEPS"; then
    check 1 "deps.sh does not take OSN_DEPS_POLICY_RC_D: the install path is not run"
elif [ "$(id -u)" = 0 ]; then
    : >"$LOG"
    export OSN_DEPS_POLICY_RC_D=$TMP/policy-rc.d
    MISSING="kamailio" PATH="$TMP/bin:$PATH" bash "$DEPS" test >"$TMP/out" 2>&1
    rc=$?
    [ $rc = 0 ] && grep -q '^apt-get install .* kamailio$' "$LOG" &&
        grep -qx 'policy-rc.d kamailio start: 101' "$LOG" &&
        grep -qx 'systemctl --root=/ disable kamailio.service' "$LOG" &&
        grep -qx 'systemctl --root=/ mask kamailio.service' "$LOG" &&
        [ ! -e "$OSN_DEPS_POLICY_RC_D" ] && ! grep -q '^sudo' "$LOG" &&
        grep -q 'kamailio installed with its service masked' "$TMP/out"
    check $? "root, kamailio missing: exit $rc; calls: $(tr '\n' ';' <"$LOG"); output: $(cat "$TMP/out")"
    # A policy-rc.d already there is the machine's: kept as it was.
    printf '#!/bin/sh\nexit 0\n' >"$OSN_DEPS_POLICY_RC_D"
    chmod 755 "$OSN_DEPS_POLICY_RC_D"
    : >"$LOG"
    MISSING="kamailio" PATH="$TMP/bin:$PATH" bash "$DEPS" test >/dev/null 2>&1
    grep -qx 'policy-rc.d kamailio start: 0' "$LOG" && grep -q 'exit 0' "$OSN_DEPS_POLICY_RC_D"
    check $? "root, an existing policy-rc.d is left alone: $(tr '\n' ';' <"$LOG")"
    unset OSN_DEPS_POLICY_RC_D
else
    echo "SKIP: not root: the install path (as root) is not run"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

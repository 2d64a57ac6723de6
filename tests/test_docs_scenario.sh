#!/usr/bin/env bash
# docs/scenario.md is generated from the key tables (osn help scenario --markdown) and checked
# in; this test fails when the checked-in file differs from what the binary prints, so that a
# key's description lives in its table only. Run by CTest as:
#     bash tests/test_docs_scenario.sh PATH_TO_osn REPO_ROOT
set -u

OSN=${1:?usage: test_docs_scenario.sh PATH_TO_osn REPO_ROOT}
ROOT=${2:?usage: test_docs_scenario.sh PATH_TO_osn REPO_ROOT}

out=$(mktemp "${TMPDIR:-/tmp}/osn_docs_scenario.XXXXXX") || exit 1
trap 'rm -f "$out"' EXIT
if ! "$OSN" help scenario --markdown >"$out"; then
    echo "FAIL: '$OSN help scenario --markdown' failed"
    exit 1
fi
if ! diff -u "$ROOT/docs/scenario.md" "$out"; then
    echo "FAIL: docs/scenario.md differs from the key tables (diff above: - the file, + the"
    echo "binary). Regenerate it with:"
    echo "    $OSN help scenario --markdown > $ROOT/docs/scenario.md"
    exit 1
fi
echo "docs/scenario.md matches the key tables"

#!/usr/bin/env bash
# Every scenario in examples/ runs with the command examples/README.md lists it under, as written
# there (only the output is redirected): the page names each file exactly once, under a heading
# "## `osn CMD`..."; the run exits 0 and writes a JSON document that loads and carries the
# version. A file missing from the page, listed twice, or refused by its command fails.
#
#   tests/test_examples.sh OSN SOURCE_DIR
set -uo pipefail
OSN=$1
ROOT=$2
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
. "$ROOT/tests/cli_lib.sh"

# file<TAB>command, from the page's tables.
python3 - "$ROOT/examples/README.md" >"$TMP/listed" <<'PY' || bad "cannot read examples/README.md"
import re, sys
cmd = None
seen = {}
for line in open(sys.argv[1]):
    m = re.match(r"##+ `osn (\w+)`", line)
    if m:
        cmd = m.group(1)
    elif line.startswith("## "):
        cmd = None
    elif line.startswith("| `") and cmd:
        first = line.split("|")[1]
        for f in re.findall(r"`([^`]+\.ini)`", first):
            if f in seen:
                sys.exit(f"{f} listed twice (under osn {seen[f]} and osn {cmd})")
            seen[f] = cmd
            print(f"{f}\t{cmd}")
PY

# Every scenario file is on the page.
(cd "$ROOT/examples" && find . -name '*.ini' | sed 's|^\./||' | sort) >"$TMP/files"
cut -f1 "$TMP/listed" | sort >"$TMP/names"
missing=$(comm -23 "$TMP/files" "$TMP/names")
extra=$(comm -13 "$TMP/files" "$TMP/names")
[ -z "$missing" ] && ok || bad "examples/README.md does not list: $missing"
[ -z "$extra" ] && ok || bad "examples/README.md lists files that do not exist: $extra"

while IFS=$'\t' read -r file cmd; do
    [ -f "$ROOT/examples/$file" ] || continue
    run 0 "osn $cmd examples/$file" -- "$cmd" "$ROOT/examples/$file" --json "$TMP/out.json" -q
    if python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); d = d if isinstance(d, list) else [d]; sys.exit(0 if all(x.get("osn_version") for x in d) else 1)' "$TMP/out.json" 2>/dev/null; then
        ok
    else
        bad "osn $cmd examples/$file: no JSON document with osn_version"
    fi
    rm -f "$TMP/out.json"
done <"$TMP/listed"
summary

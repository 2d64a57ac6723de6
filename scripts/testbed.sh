#!/usr/bin/env bash
# Replaced by `osn testbed` (docs/testbed.md); kept so that old command lines still work.
exec "${OSN:-$(dirname "$0")/../build/osn}" testbed "$@"

#!/usr/bin/env bash
# Writes the man page osn(1) from the command's own help texts, so that it can never disagree
# with them: `osn --help` as the description, then one section per command with its --help
# verbatim. Run by the build (cmake/install.cmake); installed by `make install`.
#
#   scripts/manpage.sh OSN OUT.1
set -euo pipefail
osn=$1
out=$2

# roff: a backslash is \e; a line starting with . or ' is protected by \&.
verbatim() {
    printf '.nf\n'
    sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"
    printf '.fi\n'
}

overview=$("$osn" --help)
version=$("$osn" --version | sed 's/^osn //')
commands=$(printf '%s\n' "$overview" | sed -n '/^Commands:/,/^$/p' | awk 'NF > 1 { print $1 }')

tmp=$(mktemp "$out.XXXXXX")
trap 'rm -f "$tmp"' EXIT
{
    printf '.TH OSN 1 "" "osn %s" "OSN manual"\n' "$version"
    printf '.SH NAME\nosn \\- SIP server overload control: exact analysis, simulation, fluid model, SIP node\n'
    printf '.SH SYNOPSIS\n.B osn\n.I COMMAND\n.RI [ ARGS ]...\n.br\n.B osn help\n.I COMMAND\n'
    printf '.SH DESCRIPTION\n'
    printf '%s\n' "$overview" | verbatim
    for c in $commands; do
        printf '.SH "OSN %s"\n' "$(printf '%s' "$c" | tr '[:lower:]' '[:upper:]')"
        "$osn" help "$c" | verbatim
    done
    printf '.SH "SEE ALSO"\nThe README and docs/ of the source tree; examples/ for scenarios of every kind.\n'
} >"$tmp"
chmod 644 "$tmp"
mv "$tmp" "$out"
trap - EXIT

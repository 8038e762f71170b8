#!/usr/bin/env bash
# Golden test: cape-translate [FLAGS] NAME.c must print exactly NAME.expected.c.
#   check_golden.sh CAPE_TRANSLATE DIR NAME [FLAGS...]
# Regenerate after a deliberate template change with CAPE_GOLDEN_UPDATE=1, then read the diff.
set -euo pipefail
tr=$1 dir=$2 name=$3
shift 3
cd "$dir"
expected=$name.expected.c
[ $# -gt 0 ] && expected=$name${1//-/_}.expected.c
if [ "${CAPE_GOLDEN_UPDATE:-}" = 1 ]; then "$tr" "$@" "$name.c" -o "$expected"; fi
"$tr" "$@" "$name.c" -o - | diff -u "$expected" - && echo "ok: $name"

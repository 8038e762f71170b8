#!/usr/bin/env bash
# A critical section in another file than the region, writing the region's local through a
# pointer: the one case whose writes are not carried (docs/critical.md); cape must say so
# (never a silently wrong sum). In one file, the same program is right.
#   two_files.sh CAPE_CC CAPE DIR
set -euo pipefail
cc=$1 cape=$2 dir=$3
if [ ! -x "$cape" ]; then echo "SKIP: $cape not built" >&2; exit 77; fi
work=$(mktemp -d "${TMPDIR:-/tmp}/cape-two-files.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
"$cc" -O1 "$dir/region.c" "$dir/add_to.c" -o two
timeout 120 "$cape" run -n 3 -- ./two > out 2> err
grep -q "wrote the stack of the function that runs the region" err ||
  { cat out err >&2; echo "FAIL: no warning for the other file's critical section" >&2; exit 1; }
cat "$dir/add_to.c" "$dir/region.c" | grep -v '^void add_to(long \*sum, long v);$' > one.c
"$cc" -O1 one.c -o one
timeout 120 "$cape" run -n 3 -- ./one > out 2> err
[ "$(cat out)" = "s 3" ] || { cat out err >&2; echo "FAIL: one file: expected s 3" >&2; exit 1; }
if grep -q "wrote the stack" err; then cat err >&2; echo "FAIL: warned in one file" >&2; exit 1; fi
echo "ok: warned for the other file's critical section; one file is right"

#!/usr/bin/env bash
# A tracked mapping written and then moved with mremap in one window (programs/remap_written.c)
# under --tracker mprotect, lazy and eager: the job must fail (never print a result) and say
# why, naming the tracker to use. (monitor/mprotect_tracker.cpp, before_mapping_call.)
#   remap_refused.sh CAPE_CC CAPE SRC
set -uo pipefail
cc=$1 cape=$2 src=$3
[ -x "$cape" ] || { echo "SKIP: $cape not built"; exit 77; }
work=$(mktemp -d "${TMPDIR:-/tmp}/cape-remap-refused.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
"$cc" -O2 -fopenmp "$src" -o prog || exit 1
fail=0
for sync in lazy eager; do
  status=0
  timeout 120 "$cape" run -n 3 --tracker mprotect --sync "$sync" -- ./prog > out 2> err || status=$?
  if [ "$status" = 0 ] || [ -s out ]; then echo "FAIL ($sync): status $status, output: $(cat out)"; fail=1; fi
  if ! grep -q "cannot be followed by --tracker mprotect.*run with --tracker uffd" err cape-logs/*.log 2>/dev/null; then
    echo "FAIL ($sync): no message saying why"; cat err; fail=1
  fi
done
exit $fail

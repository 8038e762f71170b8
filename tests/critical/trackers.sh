#!/usr/bin/env bash
# Every tests/critical program under other trackers than the default (uffd), 3 nodes, both
# models, against gcc -fopenmp (docs/critical.md), then the refusal under --tracker mprotect
# (writes made under a lock were lost now and then under load with it: 6 of 30 runs of
# crit_collect.c beside a -j2 ctest; docs/critical.md "Trackers"). CRIT_TRACKERS picks the
# trackers that must give the right output (default: full).
#   trackers.sh CAPE_CC CAPE PROGRAMS_DIR
set -euo pipefail
cc=$1 cape=$2 dir=$3
if [ ! -x "$cape" ]; then echo "SKIP: $cape not built" >&2; exit 77; fi
work=$(mktemp -d "${TMPDIR:-/tmp}/cape-crit-trackers.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
status=0
for src in "$dir"/*.c; do
  p=$(basename "$src" .c)
  gcc -O1 -fopenmp "$src" -o "$p.native"
  OMP_NUM_THREADS=3 "./$p.native" > "$p.expected"
  for m in dickpt tickpt; do
    "$cc" -O1 --ckpt=$m "$src" -o "$p.$m" 2> cc.err || { cat cc.err >&2; status=1; continue; }
    for t in ${CRIT_TRACKERS:-full}; do
      if timeout 120 "$cape" run -n 3 --tracker $t -- "./$p.$m" > out 2> err && cmp -s "$p.expected" out; then
        echo "ok: $p $m $t"
      else
        echo "FAIL: $p $m $t" >&2; diff "$p.expected" out >&2 || true; tail -3 err >&2; status=1
      fi
    done
  done
done
# mprotect is refused with a clear error (docs/critical.md "Trackers"), never a wrong result.
"$cc" -O1 "$dir/crit_sum.c" -o refused
if timeout 120 "$cape" run -n 3 --tracker mprotect -- ./refused > out 2> err; then
  echo "FAIL: crit_sum ran under --tracker mprotect" >&2; status=1
elif ! grep -q "^cape: critical sections, atomics, locks and ordered blocks across nodes under --tracker mprotect: not reliable yet" err; then
  echo "FAIL: no clear refusal under --tracker mprotect" >&2; cat err >&2; status=1
else
  echo "ok: refused under --tracker mprotect"
fi
exit $status

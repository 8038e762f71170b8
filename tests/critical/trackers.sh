#!/usr/bin/env bash
# Every tests/critical program under other trackers than the default (uffd), 3 nodes, both
# models, against gcc -fopenmp (docs/critical.md). CRIT_TRACKERS picks them (default: full;
# "mprotect full" also runs the faithful tracker, where unwritten pages stay read-only inside
# the window, so grants are injected into protected memory and the stack's extent cannot be
# read from the tracked set: every program passes alone, but one run of crit_collect.c gave a
# wrong result under a loaded -j2 ctest, not reproduced in 32 runs since; docs/critical.md).
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
exit $status

#!/usr/bin/env bash
# Runtime-call traps per region on every node (issue 14): a `parallel for` with clause calls
# (reduction, private, firstprivate, lastprivate, shared locals; under TICKPT also the
# implicitly shared ones) makes the same 2 traps per region per node as an empty one: its
# clause calls ride on start()'s trap (session 11). Counted by `--log calls:info` ("rank R:
# C runtime calls in T traps") as the difference between 40 and 10 regions. Counts, not
# times: no timing involved.
#   traps_per_region.sh CAPE_CC CAPE NODES CAPE_CC_FLAGS...
set -euo pipefail
cc=$1 cape=$2 n=$3
shift 3
if [ ! -x "$cape" ]; then echo "SKIP: $cape not built" >&2; exit 77; fi
work=$(mktemp -d "${TMPDIR:-/tmp}/cape-traps.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
cat > prog.c <<'C'
#include <stdio.h>
#include <stdlib.h>
int g[300];
int main(int argc, char **argv) {
  int regions = atoi(argv[1]), a = 1, b = 2, c = 0, last = -1, tmp = 0;
  long acc = 0;
  for (int r = 0; r < regions; r++) {
    long s = 0;
    double h = 0;
    int i;
#pragma omp parallel for reduction(+: s, h) private(tmp) firstprivate(a) lastprivate(last, c) shared(b)
    for (i = 0; i < 300; i++) {
      tmp = a + i;
      last = tmp * b;
      c = i;
      s += g[i] + i;
      h += 0.5 * i;
    }
    acc += s + last + c + (long)h;
  }
  printf("%ld\n", acc);
  return 0;
}
C
"$cc" -O2 "$@" prog.c -o prog
traps() {  # traps() REGIONS: "T0 T1 ..." per rank
  rm -rf logs
  "$cape" run -n "$n" --log calls:info --output-dir logs -- ./prog "$1" > out 2> err || { cat err logs/* >&2; exit 1; }
  for ((r = 0; r < n; r++)); do
    cat err logs/* 2>/dev/null | sed -n "s/.*rank $r: [0-9]* runtime calls in \([0-9]*\) traps.*/\1/p" | head -1
  done
}
few=($(traps 10)) many=($(traps 40))
status=0
for ((r = 0; r < n; r++)); do
  per=$(( (many[r] - few[r]) / 30 ))
  rest=$(( (many[r] - few[r]) % 30 ))
  echo "rank $r: ${few[r]} traps for 10 regions, ${many[r]} for 40: $per per region$( [ "$rest" = 0 ] || echo " (+$rest/30)")"
  if [ "$per" -ne 2 ] || [ "$rest" -ne 0 ]; then echo "FAIL: rank $r makes $(awk -v d=$(( many[r] - few[r] )) "BEGIN { print d / 30 }") traps per region, not 2" >&2; status=1; fi
done
exit $status

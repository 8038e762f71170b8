#!/usr/bin/env bash
# A program of two files: the region is in main.c, the function it calls writes a static
# array and a counter of work.c (shared, 002 Sect. 3.1). Under TICKPT each translated file
# registers its own static variables (docs/translator.md, TICKPT). Built with gcc -fopenmp
# and with cape-cc (separate compiles, then a link), run natively and on N CAPE nodes.
#   multifile.sh CAPE_CC CAPE N [CAPE_CC_FLAGS...]
set -euo pipefail
cc=$1 cape=$2 n=$3
shift 3
work=$(mktemp -d "${TMPDIR:-/tmp}/cape-multifile.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
cat > work.h <<'H'
void work(int i);
long checksum(void);
H
cat > work.c <<'W'
#include "work.h"
#define N 900
static long cells[N];
long touched_by_last = -1;
void work(int i) {
  cells[i] = (long)i * i + 7;
  if (i == N - 1) touched_by_last = i;
}
long checksum(void) {
  long s = 0;
  for (int i = 0; i < N; i++) s += cells[i] * (i % 11 + 1);
  return s + touched_by_last;
}
W
cat > main.c <<'M'
#include <stdio.h>
#include "work.h"
int main(void) {
#pragma omp parallel for
  for (int i = 0; i < 900; i++) work(i);
  printf("checksum %ld\n", checksum());
  return 0;
}
M
gcc -O1 -fopenmp main.c work.c -o native
OMP_NUM_THREADS=$n ./native > expected
"$cc" -O1 -Wall "$@" -c work.c
"$cc" -O1 -Wall "$@" -c main.c
"$cc" "$@" main.o work.o -o prog
if [ ! -x "$cape" ]; then echo "SKIP: $cape not built" >&2; exit 77; fi
timeout 120 "$cape" run -n "$n" -- ./prog > actual 2> run.err || { cat run.err >&2; exit 1; }
cmp -s expected actual || { echo "FAIL:"; cat expected actual run.err; exit 1; } >&2
echo "ok: two files agree on $n nodes ($*)"

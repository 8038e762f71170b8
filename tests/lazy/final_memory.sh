#!/usr/bin/env bash
# --sync=lazy at the program's end (tests/lazy): after the last region every node runs the
# sequential tail, and a slave's memory must be what eager gives wherever the program reads
# it. bench/e2e/jacobi.c's tail reads the whole grid on every node; each slave prints its
# checksum into its log (only the master's output reaches the terminal): all must equal
# gcc -fopenmp's.   final_memory.sh CAPE_CC CAPE SRC TRACKER
set -uo pipefail
cc=$1 cape=$2 src=$3 tracker=$4
work=$(mktemp -d "${TMPDIR:-/tmp}/cape-lazy-final.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
gcc -O1 -fopenmp "$src" -o native && OMP_NUM_THREADS=3 ./native 150 6 > expected 2>/dev/null || exit 1
"$cc" -O1 "$src" -o prog || exit 1
timeout 120 "$cape" run -n 3 --sync lazy --tracker "$tracker" --output-dir logs ./prog 150 6 > actual 2> err ||
  { echo "FAIL: the job failed"; cat err; exit 1; }
fail=0
cmp -s expected actual || { echo "FAIL: the master's output differs"; cat expected actual; fail=1; }
for r in 1 2; do
  grep -qxF "$(cat expected)" "logs/node.$r.log" || { echo "FAIL: node $r's final memory differs"; cat "logs/node.$r.log"; fail=1; }
done
exit $fail

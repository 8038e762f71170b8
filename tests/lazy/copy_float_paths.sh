#!/usr/bin/env bash
# --sync=lazy, the program's publishing copy may float (tests/lazy; docs/monitor.md, "What a
# sweep costs and what travels, session 14"): with more nodes than CPUs, bench/e2e/jacobi.c
# 1000 x 4 on 3 nodes with CAPE_LAZY_COPY_FLOAT=1 gives gcc -fopenmp's output, and the master's
# and a slave's copies (650 pages a share) ran with every CPU allowed (`monitor:debug`: "the
# publishing copy may run on N CPUs"); by default (off) the same output and no copy moved; a
# bad value is refused with a message naming the variable. Skipped (77) on a host with a CPU
# per node or a single CPU. Not timed.
#   copy_float_paths.sh CAPE_CC CAPE SRC
set -uo pipefail
cc=$1 cape=$2 src=$3
unset CAPE_LAZY_COPY_FLOAT CAPE_PIN
cpus=$(nproc)
[ "$cpus" -ge 2 ] && [ "$cpus" -lt 3 ] || { echo "SKIP: $cpus CPUs (needs 2: more nodes than CPUs, more than one CPU)"; exit 77; }
work=$(mktemp -d "${TMPDIR:-/tmp}/cape-lazy-float.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
gcc -O2 -fopenmp "$src" -o native && OMP_NUM_THREADS=3 ./native 1000 4 > expected 2>/dev/null || exit 1
"$cc" -O2 "$src" -o prog || exit 1
fail=0
moved='sync=lazy: the publishing copy may run on [2-9]'
CAPE_LAZY_COPY_FLOAT=1 timeout 200 "$cape" run -n 3 --sync lazy --output-dir logs --log monitor:debug ./prog 1000 4 \
  > actual 2> err ||
  { echo "FAIL: the job failed"; tail -20 err; exit 1; }
cmp -s expected actual || { echo "FAIL: CAPE_LAZY_COPY_FLOAT=1: the output differs from gcc -fopenmp's"; diff expected actual; fail=1; }
grep -q "$moved" err || { echo "FAIL: CAPE_LAZY_COPY_FLOAT=1: the master's publishing copy did not float"; fail=1; }
grep -q "$moved" logs/node.1.log || { echo "FAIL: CAPE_LAZY_COPY_FLOAT=1: slave 1's publishing copy did not float"; fail=1; }
rm -rf logs
timeout 200 "$cape" run -n 3 --sync lazy --output-dir logs --log monitor:debug ./prog 1000 4 \
  > actual.off 2> err.off || { echo "FAIL: the job without CAPE_LAZY_COPY_FLOAT failed"; tail -20 err.off; exit 1; }
cmp -s expected actual.off || { echo "FAIL: by default: the output differs"; diff expected actual.off; fail=1; }
if grep -q "$moved" err.off logs/*.log; then echo "FAIL: by default a copy floated"; fail=1; fi
rm -rf logs
if CAPE_LAZY_COPY_FLOAT=yes timeout 100 "$cape" run -n 3 --sync lazy --output-dir logs ./prog 100 2 > /dev/null 2> err.bad; then
  echo "FAIL: CAPE_LAZY_COPY_FLOAT=yes was accepted"; fail=1
elif ! grep -q "CAPE_LAZY_COPY_FLOAT='yes': give 1" err.bad; then
  echo "FAIL: CAPE_LAZY_COPY_FLOAT=yes: no message naming the variable"; cat err.bad; fail=1
fi
exit $fail

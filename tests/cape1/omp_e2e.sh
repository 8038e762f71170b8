#!/bin/bash
# One program of tests/omp with `cape-cc --model=cape1` (003 Fig. 2, complete checkpoints; a
# region's barriers, reductions, lastprivate and threadprivate as docs/cape1.md "Regions"
# says): its output must equal `gcc -fopenmp`'s (OMP_NUM_THREADS=PARTS) both ways it runs,
#   - `cape run -n PARTS`: at every region the master's complete checkpoint travels to each
#     slave node, whose program becomes that part's process in place; the deltas come back;
#   - `cape monitor` with CAPE1_PARTS=PARTS: the parts are processes restarted beside it;
# and no checkpoint file may be left behind.
# Usage: omp_e2e.sh CAPE CAPE_CC PROGRAM.c PARTS [OPT]   (OPT: -O2 by default)
set -u
for fd in $(ls /proc/$$/fd); do [ "$fd" -gt 2 ] && eval "exec $fd>&-" 2>/dev/null; done
CAPE=$1 CC=$2 SRC=$3 PARTS=$4 OPT=${5:--O2}
dir=$(mktemp -d "${TMPDIR:-/tmp}/cape1o.XXXXXX")
trap 'rm -rf "$dir"' EXIT
gcc -fopenmp "$OPT" "$SRC" -o "$dir/native" -lm || { echo "FAIL: gcc -fopenmp"; exit 1; }
OMP_NUM_THREADS=$PARTS "$dir/native" < /dev/null > "$dir/native.out" 2>&1 || { echo "FAIL: the native run"; exit 1; }
if ! "$CC" --model=cape1 "$OPT" "$SRC" -o "$dir/cape1" -lm 2> "$dir/cc.err"; then
  echo "FAIL: cape-cc --model=cape1"; cat "$dir/cc.err"; exit 1
fi
mkdir "$dir/tmp"
TMPDIR=$dir/tmp CAPE1_PARTS=$PARTS "$CAPE" monitor -- "$dir/cape1" < /dev/null > "$dir/cape1.out" 2> "$dir/cape1.err" \
  || { echo "FAIL: the cape1 run"; tail -n 5 "$dir/cape1.err"; exit 1; }
diff "$dir/native.out" "$dir/cape1.out" > "$dir/diff" || { echo "FAIL: output differs"; head -20 "$dir/diff"; exit 1; }
[ -z "$(ls -A "$dir/tmp")" ] || { echo "FAIL: checkpoint files left behind"; ls -R "$dir/tmp"; exit 1; }
(cd "$dir" && TMPDIR=$dir/tmp "$CAPE" run -n "$PARTS" -- "$dir/cape1" < /dev/null > "$dir/run.out" 2> "$dir/run.err") \
  || { echo "FAIL: cape run -n $PARTS"; tail -n 5 "$dir/run.err"; tail -n 5 "$dir"/cape-logs/*; exit 1; }
diff "$dir/native.out" "$dir/run.out" > "$dir/diff" || { echo "FAIL: cape run's output differs"; head -20 "$dir/diff"; exit 1; }
[ -z "$(ls -A "$dir/tmp")" ] || { echo "FAIL: checkpoint files left behind by cape run"; ls -R "$dir/tmp"; exit 1; }
echo "PASS: $(wc -l < "$dir/cape1.out") lines as gcc -fopenmp with $PARTS parts, under cape monitor and cape run -n $PARTS"

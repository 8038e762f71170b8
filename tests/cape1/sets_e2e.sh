#!/bin/bash
# A program with `cape-cc --model=cape1` on 2, 3 and 4 nodes: what it prints, inside regions
# too, must be gcc -fopenmp's (OMP_NUM_THREADS = the nodes) as a set of lines (stdout and
# stderr each sorted: nodes print in any order, as threads do), with exit status 0, both ways
# it runs: `cape run -n N` (a slave's region output goes to the job's stdout, docs/cape1.md
# "Output inside a region") and `cape monitor` with CAPE1_PARTS=N; no checkpoint file left.
# Usage: sets_e2e.sh CAPE CAPE_CC PROGRAM.c [OPT] [NODES...]   (OPT -O2, NODES 2 3 4 by default)
set -u
for fd in $(ls /proc/$$/fd); do [ "$fd" -gt 2 ] && eval "exec $fd>&-" 2>/dev/null; done
CAPE=$1 CC=$2 SRC=$3 OPT=${4:--O2}
shift 4 2>/dev/null || shift $#
NODES=${*:-2 3 4}
dir=$(mktemp -d "${TMPDIR:-/tmp}/cape1s.XXXXXX")
trap 'rm -rf "$dir"' EXIT
gcc -fopenmp "$OPT" "$SRC" -o "$dir/native" -lm || { echo "FAIL: gcc -fopenmp"; exit 1; }
if ! "$CC" --model=cape1 "$OPT" "$SRC" -o "$dir/cape1" -lm 2> "$dir/cc.err"; then
  echo "FAIL: cape-cc --model=cape1"; cat "$dir/cc.err"; exit 1
fi
mkdir "$dir/tmp"
fail=0
# same WHAT: the sorted streams of the run in $dir/got.{out,err} against gcc's.
same() {
  if ! diff <(sort "$dir/want.out") <(sort "$dir/got.out") > "$dir/diff" ||
     ! diff <(sort "$dir/want.err") <(sort "$dir/got.err" | grep -v '^cape' ) >> "$dir/diff"; then
    echo "FAIL: $1: the lines differ from gcc -fopenmp's (< gcc, > cape):"; head -20 "$dir/diff"; fail=1
  fi
  if [ -n "$(ls -A "$dir/tmp")" ]; then echo "FAIL: $1: checkpoint files left behind"; ls -R "$dir/tmp"; fail=1; fi
}
for n in $NODES; do
  OMP_NUM_THREADS=$n "$dir/native" < /dev/null > "$dir/want.out" 2> "$dir/want.err" || { echo "FAIL: the native run"; exit 1; }
  TMPDIR=$dir/tmp CAPE1_PARTS=$n timeout 120 "$CAPE" monitor -- "$dir/cape1" < /dev/null > "$dir/got.out" 2> "$dir/got.err"
  rc=$?
  if [ $rc != 0 ]; then echo "FAIL: cape monitor, $n parts: exit status $rc"; tail -n 5 "$dir/got.err"; fail=1; else same "cape monitor, $n parts"; fi
  rm -rf "$dir/cape-logs"
  (cd "$dir" && TMPDIR=$dir/tmp timeout 120 "$CAPE" run -n "$n" -- "$dir/cape1" < /dev/null > "$dir/got.out" 2> "$dir/got.err")
  rc=$?
  if [ $rc != 0 ]; then
    echo "FAIL: cape run -n $n: exit status $rc"; tail -n 5 "$dir/got.err"; tail -n 5 "$dir"/cape-logs/* 2>/dev/null; fail=1
  else
    same "cape run -n $n"
  fi
done
[ $fail = 0 ] || exit 1
echo "PASS: $(wc -l < "$dir/want.out") + $(wc -l < "$dir/want.err") lines as gcc -fopenmp's (as sets) on $NODES nodes, under cape run and cape monitor"

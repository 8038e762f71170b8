#!/usr/bin/env bash
# `make demo`: the papers' matrix product (paper-repro/mamult.c) built with cape-cc, run on a
# local 3-node cape cluster, and compared with native OpenMP (3 threads). Parts of the
# pipeline that are not built yet are named, and the parts that exist are shown.
set -uo pipefail
build=${1:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
n=${DEMO_N:-600}
nodes=${DEMO_NODES:-3}
work=$(mktemp -d "${TMPDIR:-/tmp}/cape-demo.XXXXXX")
trap 'rm -rf "$work"' EXIT

cape=$root/$build/cli/cape
cape_cc=$root/$build/translator/cape-cc

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

echo "== native OpenMP: gcc -fopenmp, $nodes threads"
gcc -O2 -fopenmp "$root/paper-repro/mamult.c" -o "$work/mamult-omp" || exit 1
t0=$(now)
OMP_NUM_THREADS=$nodes "$work/mamult-omp" "$n" > "$work/native.out" || exit 1
t1=$(now)
cat "$work/native.out"
native_time=$(elapsed "$t0" "$t1")

missing=()
[ -x "$cape" ] || missing+=("the cape command ($build/cli/cape)")
[ -x "$cape_cc" ] || missing+=("the translator cape-cc ($build/translator/cape-cc)")
has_command() { "$cape" --help 2>/dev/null | grep -qE "^  $1 "; }
if [ -x "$cape" ] && ! has_command run; then missing+=("'cape run' (net/ launchers)"); fi
if [ ${#missing[@]} -gt 0 ]; then
  echo
  echo "demo: the whole pipeline is not built yet; missing: ${missing[*]}."
  if [ -x "$cape" ]; then
    echo "== what exists: the checkpoint tools"
    "$cape" --help | sed -n '1,20p'
  fi
  echo "demo: native OpenMP ran in ${native_time} s; cape comparison skipped (see above)."
  exit 0
fi

echo
echo "== cape: cape-cc, then cape run -n $nodes (local launcher)"
"$cape_cc" -O2 "$root/paper-repro/mamult.c" -o "$work/mamult-cape" || exit 1
t0=$(now)
"$cape" run -n "$nodes" --output-dir "$work/logs" -- "$work/mamult-cape" "$n" > "$work/cape.out"
status=$?
t1=$(now)
cat "$work/cape.out"
cape_time=$(elapsed "$t0" "$t1")
if [ $status -ne 0 ]; then
  echo "demo: FAILED: cape run exited with status $status"
  exit 1
fi
if cmp -s "$work/native.out" "$work/cape.out"; then
  echo "demo: results MATCH: native OpenMP ${native_time} s, cape on $nodes local nodes ${cape_time} s (n=$n, whole runs)"
else
  echo "demo: results DIFFER between native OpenMP and cape:"
  diff "$work/native.out" "$work/cape.out"
  exit 1
fi

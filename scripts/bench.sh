#!/usr/bin/env bash
# Runs every benchmark program of a bench build (cape_bench_*, not the *_victim programs
# they run under the monitor), one after the other.
# Results are ratios measured within each run; the machine is shared and noisy.
set -euo pipefail
build=${1:-build-bench}
found=0
while IFS= read -r b; do
  found=1
  echo "== $(basename "$b")"
  "$b"
  echo
done < <(find "$build/bench" -type f -name 'cape_bench_*' ! -name '*_victim' -perm -u+x | sort)
[ "$found" = 1 ] || { echo "no benchmarks found under $build/bench" >&2; exit 1; }

#!/usr/bin/env bash
# Runs every benchmark program of a bench build (cape_bench_*, not the *_victim programs
# they run under the monitor), one after the other, then the end-to-end benchmark (whole
# `cape run` jobs beside MPI, scripts/bench-e2e.sh).
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
# Whole jobs beside their MPI versions (BENCH_E2E=full for the issue's sizes).
echo "== end-to-end (scripts/bench-e2e.sh)"
"$(dirname "$0")/bench-e2e.sh" "$build"
# The two-level model against the single one (issue 13).
echo "== two-level model (scripts/bench-mt.sh)"
"$(dirname "$0")/bench-mt.sh" "$build"
# Critical sections across nodes beside an MPI round trip (docs/critical.md).
echo
echo "== critical sections (scripts/bench-critical.sh)"
"$(dirname "$0")/bench-critical.sh" "$build"

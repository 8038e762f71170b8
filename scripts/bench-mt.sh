#!/usr/bin/env bash
# The two-level model's benchmark (issue 13): the matrix product (paper-repro/mamult.c) and a
# stencil (bench/e2e/jacobi.c), each built with cape-cc (single model) and cape-cc --model=mt,
# run on the same node count with each tracker, interleaved (single, mt, single, mt ...), and
# compared by medians within this one run (never absolute figures: the machine is shared).
# Two figures per job: the program's kernel time (its own omp_get_wtime, stderr) and the
# master's compute phase (`cape run --log calls:info`: the time from the call before each
# create("after") to it, summed over the regions). Outputs are compared with gcc -fopenmp's.
# Paper anchor: 1.6-3.1x from 2-4 threads (000_2e1115959baa0e7d.txt Sect. 4).
#
#   scripts/bench-mt.sh [BUILD_DIR]      (default build-bench; `make bench` runs it)
#   BENCH_RUNS=N (default 3)  BENCH_MT_NODES="1 2"  BENCH_TRACKERS="uffd mprotect"
#   BENCH_THREADS=K (default 2)  BENCH_ONLY="mamult jacobi"
set -uo pipefail
build=${1:-build-bench}
root=$(cd "$(dirname "$0")/.." && pwd)
case $build in /*) ;; *) build=$root/$build ;; esac
runs=${BENCH_RUNS:-3}
node_counts=${BENCH_MT_NODES:-1 2}
trackers=${BENCH_TRACKERS:-uffd mprotect inproc}
k=${BENCH_THREADS:-2}
only=${BENCH_ONLY:-mamult jacobi}
cape=$build/cli/cape
cape_cc=$build/translator/cape-cc
for t in "$cape" "$cape_cc"; do [ -x "$t" ] || { echo "bench-mt: $t is missing: build first" >&2; exit 1; }; done
work=$(mktemp -d "${TMPDIR:-/tmp}/cape-bench-mt.XXXXXX")
trap 'rm -rf "$work"' EXIT

# name | source | arguments
table="
mamult|paper-repro/mamult.c|600
jacobi|bench/e2e/jacobi.c|1500 30
"
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
kernel() { sed -n 's/.*compute \([0-9.]*\) s.*/\1/p; s/^bench: seconds \([0-9.]*\).*/\1/p; s/^jacobi: \([0-9.]*\) s.*/\1/p' "$1" | head -1; }
computing() { sed -n 's/.*rank 0: .* \([0-9.e+-]*\) ms computing.*/\1/p' "$1" | head -1; }

printf '%-8s %5s %-9s %-7s %12s %14s\n' program nodes tracker model "kernel s" "compute ms"
while IFS='|' read -r name src args; do
  [ -n "$name" ] || continue
  case " $only " in *" $name "*) ;; *) continue ;; esac
  gcc -O2 -fopenmp "$root/$src" -o "$work/$name.native" || exit 1
  OMP_NUM_THREADS=1 "$work/$name.native" $args > "$work/$name.expected" 2> /dev/null < /dev/null
  # What the machine gives threads right now: native OpenMP, 1 vs K threads, interleaved.
  for r in $(seq "$runs"); do
    for th in 1 "$k"; do
      OMP_NUM_THREADS=$th "$work/$name.native" $args 2> "$work/err" > /dev/null < /dev/null
      kernel "$work/err" >> "$work/$name.native.$th"
    done
  done
  n1=$(median < "$work/$name.native.1") nk=$(median < "$work/$name.native.$k")
  printf '%-8s %5s %-9s %-7s %12s %14s\n' "$name" - native 1 "$n1" -
  printf '%-8s %5s %-9s %-7s %12s %14s\n' "$name" - native "$k" "$nk" -
  awk -v a="$n1" -v b="$nk" -v n="$name" -v k="$k" 'BEGIN { printf "%-8s       native    speedup of %d threads over 1 (gcc -fopenmp, this machine now): %.2fx\n", n, k, a / b }'
  "$cape_cc" -O2 "$root/$src" -o "$work/$name.single" || exit 1
  "$cape_cc" --model=mt -O2 "$root/$src" -o "$work/$name.mt" || exit 1
  for n in $node_counts; do
    for t in $trackers; do
      for r in $(seq "$runs"); do
        for model in single mt; do
          flags=(--tracker "$t" --log calls:info)
          [ "$model" = mt ] && flags+=(--threads-per-node "$k")
          out=$work/out err=$work/err
          timeout 600 "$cape" run -n "$n" "${flags[@]}" -- "$work/$name.$model" $args < /dev/null > "$out" 2> "$err"
          st=$?
          if [ $st != 0 ] || ! cmp -s "$out" "$work/$name.expected"; then
            echo "bench-mt: $name $model on $n nodes ($t): status $st or output differs from gcc -fopenmp" >&2
            head -5 "$err" >&2
            continue
          fi
          echo "$(kernel "$err") $(computing "$err")" >> "$work/$name.$n.$t.$model"
        done
      done
      for model in single mt; do
        f=$work/$name.$n.$t.$model
        [ -s "$f" ] || continue
        ks=$(cut -d' ' -f1 "$f" | median)
        cs=$(cut -d' ' -f2 "$f" | grep -v '^$' | median)
        printf '%-8s %5s %-9s %-7s %12s %14s\n' "$name" "$n" "$t" "$model$([ $model = mt ] && echo "x$k")" "$ks" "$cs"
        eval "k_$model=\$ks c_$model=\$cs"
        echo "$ks" > "$work/kernel.$name.$n.$t.$model"
      done
      awk -v a="${k_single:-nan}" -v b="${k_mt:-nan}" -v c="${c_single:-nan}" -v d="${c_mt:-nan}" -v n="$name" -v nn="$n" -v t="$t" \
        'BEGIN { printf "%-8s %5s %-9s speedup of mt over single: kernel %.2fx, compute phase %s\n", n, nn, t, a / b,
                 (d > 0 ? sprintf("%.2fx", c / d) : "n/a (one node has no windows)") }'
      unset k_single k_mt c_single c_mt
    done
    # The external monitor against the paper's in-process way (issue 13: within 5% on the
    # matrix product), per model: kernel time of each external tracker over inproc's.
    for model in single mt; do
      ki=$(cat "$work/kernel.$name.$n.inproc.$model" 2>/dev/null) || continue
      for t in $trackers; do
        [ "$t" = inproc ] && continue
        ke=$(cat "$work/kernel.$name.$n.$t.$model" 2>/dev/null) || continue
        awk -v e="$ke" -v i="$ki" -v n="$name" -v nn="$n" -v t="$t" -v m="$model" \
          'BEGIN { printf "%-8s %5s %-9s %-7s external over inproc: %.2fx the kernel time\n", n, nn, t, m, e / i }'
      done
    done
  done
done <<< "$table"
echo "(--tracker inproc: the paper's in-process way: every fault still stops at the monitor, ptrace reports every signal)"

#!/usr/bin/env bash
# End-to-end benchmark (issue 14): whole `cape run -n 3` jobs beside their MPI versions
# (bench/e2e/), on this machine's local nodes. Each program times its own kernel on rank 0
# (stderr: "bench: seconds S regions R [total T] [mpi-bytes B]"); runs are interleaved
# (MPI, cape uffd, cape mprotect, MPI, ...) and the medians compared: ratios within one run
# of this script, never absolute figures (the machine is shared and noisy). Every output is
# compared with gcc -fopenmp's. Bytes per region: cape's master's payload traffic (sent +
# received: in a star every byte crosses the master) over the job's regions; MPI's: what the
# algorithm moves per region (halo rows, the gathered vector), computed by the program.
#
#   scripts/bench-e2e.sh [BUILD_DIR]       (default build-bench; `make bench` runs it)
#   BENCH_E2E=quick|full   sizes (quick: reduced, default; full: the issue's sizes)
#   BENCH_RUNS=N           runs of each (default 3 quick, 5 full)
#   BENCH_ONLY="empty jacobi"   some programs only (empty jacobi heat3d matvec gradient mamult dot)
#   BENCH_TRACKERS="uffd mprotect"
#   BENCH_SYNC="eager lazy"  a column per tracker and sync: eager (--sync eager), lazy (--sync
#                          lazy, docs/monitor.md "Lazy synchronisation", and uffd-lazy's bytes
#                          per region); BENCH_SYNC=lazy skips the eager columns
#   BENCH_NODES=3
#   BENCH_BASELINE=DIR     also run an earlier build (its cape and cape-cc) with each tracker
#                          (and each lazy column), in the same interleaved runs: before/after
#                          ratios of one run
set -uo pipefail
build=${1:-build-bench}
root=$(cd "$(dirname "$0")/.." && pwd)
case $build in /*) ;; *) build=$root/$build ;; esac
mode=${BENCH_E2E:-quick}
case $mode in quick) runs=${BENCH_RUNS:-3} ;; full) runs=${BENCH_RUNS:-5} ;;
  *) echo "bench-e2e: BENCH_E2E must be quick or full, not '$mode'" >&2; exit 2 ;; esac
trackers=${BENCH_TRACKERS:-uffd mprotect}
syncs=${BENCH_SYNC:-eager lazy}
nodes=${BENCH_NODES:-3}
only=${BENCH_ONLY:-empty jacobi heat3d matvec gradient mamult dot}
cape=$build/cli/cape
cape_cc=$build/translator/cape-cc
baseline=${BENCH_BASELINE:-}
if [ -n "$baseline" ]; then baseline=$(cd "$baseline" && pwd) || exit 1; fi
for t in "$cape" "$cape_cc" ${baseline:+"$baseline/cli/cape" "$baseline/translator/cape-cc"}; do
  [ -x "$t" ] || { echo "bench-e2e: $t is missing: build first (make bench)" >&2; exit 1; }
done
# The cape configurations run: "label tracker build sync".
variants=()
case " $syncs " in *" eager "*) for t in $trackers; do
  [ -n "$baseline" ] && variants+=("base-$t $t $baseline eager")
  variants+=("$t $t $build eager")
done ;; esac
case " $syncs " in *" lazy "*) for t in $trackers; do
  [ -n "$baseline" ] && variants+=("base-$t-lazy $t $baseline lazy")
  variants+=("$t-lazy $t $build lazy")
done ;; esac
command -v mpicc >/dev/null && command -v mpirun >/dev/null ||
  { echo "bench-e2e: mpicc/mpirun missing: scripts/install-deps.sh installs Open MPI" >&2; exit 1; }
mpirun=(mpirun --oversubscribe --bind-to none -np "$nodes")
[ "$(id -u)" = 0 ] && mpirun+=(--allow-run-as-root)

work=$(mktemp -d "${TMPDIR:-/tmp}/cape-bench-e2e.XXXXXX")
trap 'rm -rf "$work"' EXIT

# name | cape source | MPI source | quick args | full args
table="
empty|bench/e2e/empty.c|bench/e2e/empty_mpi.c|200|1000
jacobi|bench/e2e/jacobi.c|bench/e2e/jacobi_mpi.c|500 20|2000 100
heat3d|bench/e2e/heat3d.c|bench/e2e/heat3d_mpi.c|64 20|160 100
matvec|bench/e2e/matvec.c|bench/e2e/matvec_mpi.c|1024 10|4096 10
gradient|bench/e2e/gradient.c|bench/e2e/gradient_mpi.c|100000 50|100000 200
mamult|paper-repro/mamult.c|bench/e2e/mamult_mpi.c|600|1600
dot|bench/e2e/dot.c|bench/e2e/dot_mpi.c|30000 200|100000 1000
"

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) printf "%.10g\n", v[(NR + 1) / 2]; else printf "%.10g\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# The kernel's seconds from a program's stderr (mamult.c prints "mamult: compute S s").
seconds_of() { sed -n -e 's/^bench: seconds \([0-9.]*\).*/\1/p' -e 's/^mamult: compute \([0-9.]*\) s$/\1/p' "$1" | head -1; }
field_of() { sed -n "s/^bench: .* $2 \\([0-9]*\\).*/\\1/p" "$1" | head -1; }
# The master's traffic line: "[cape traffic rank 0 pid PID] info: sent A bytes in F frames, received B bytes in G frames".
traffic_of() { sed -n 's/^\[cape traffic rank 0 pid [0-9]*\] info: sent \([0-9]*\) bytes in [0-9]* frames, received \([0-9]*\) bytes.*/\1 \2/p' "$1" | awk '{ print $1 + $2 }' | head -1; }

echo "cape end-to-end: $nodes local nodes, $mode sizes, medians of $runs interleaved runs; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-9s %-10s %10s' program args "MPI"
for v in "${variants[@]}"; do read -r label _ _ <<<"$v"; printf ' %24s' "cape $label (x MPI)"; done
printf ' %14s %14s %14s  %s\n' "cape B/region" "lazy B/region" "MPI B/region" output

status=0
while IFS='|' read -r name src mpisrc qargs fargs; do
  [ -n "$name" ] || continue
  case " $only " in *" $name "*) ;; *) continue ;; esac
  args=$qargs; [ "$mode" = full ] && args=$fargs
  read -r -a argv <<<"$args"
  d=$work/$name; mkdir -p "$d"
  built=1
  gcc -O2 -fopenmp "$root/$src" -o "$d/native" -lm 2>"$d/cc.err" || built=0
  mpicc -O2 "$root/$mpisrc" -o "$d/mpi" -lm 2>>"$d/cc.err" || built=0
  for v in "${variants[@]}"; do
    read -r label _ b _ <<<"$v"
    exe=$d/prog.cur; [ "$b" = "$build" ] || exe=$d/prog.base
    [ -x "$exe" ] || "$b/translator/cape-cc" -O2 "$root/$src" -o "$exe" -lm 2>>"$d/cc.err" || built=0
  done
  if [ $built = 0 ]; then
    echo "$name: build failed:"; cat "$d/cc.err"; status=1; continue
  fi
  OMP_NUM_THREADS=$nodes "$d/native" "${argv[@]}" </dev/null >"$d/native.out" 2>/dev/null
  # The stencils: the kernel alone on one thread, for the share of run time that is not
  # the node's part of the computation (below).
  case $name in jacobi | heat3d)
    for ((i = 1; i <= runs; i++)); do
      OMP_NUM_THREADS=1 "$d/native" "${argv[@]}" </dev/null >/dev/null 2>"$d/seq.err"
      seconds_of "$d/seq.err" >>"$d/seq.s"
    done ;;
  esac
  ok=ok
  for ((i = 1; i <= runs; i++)); do
    "${mpirun[@]}" "$d/mpi" "${argv[@]}" </dev/null >"$d/mpi.out" 2>"$d/mpi.err"
    seconds_of "$d/mpi.err" >>"$d/mpi.s"
    cmp -s "$d/native.out" "$d/mpi.out" || ok="MPI-DIFFERS"
    for v in "${variants[@]}"; do
      read -r t tracker b sync <<<"$v"
      sflag=(--sync "$sync")  # explicit: the default is lazy since session 9 (the baseline's was eager)
      exe=$d/prog.cur; [ "$b" = "$build" ] || exe=$d/prog.base
      (cd "$d" && "$b/cli/cape" run -n "$nodes" --tracker "$tracker" "${sflag[@]}" --output-dir "$d/logs" --log traffic:info -- \
        "$exe" "${argv[@]}" </dev/null >"$d/cape.$t.out" 2>"$d/cape.$t.err")
      rc=$?
      if [ $rc -ne 0 ] || ! cmp -s "$d/native.out" "$d/cape.$t.out"; then
        ok="cape-$t-DIFFERS(status $rc)"
        [ -e "$d/fail.txt" ] || tail -5 "$d/cape.$t.err" >"$d/fail.txt"
      fi
      seconds_of "$d/cape.$t.err" >>"$d/cape.$t.s"
      total=$(field_of "$d/cape.$t.err" total); [ -n "$total" ] || total=$(field_of "$d/cape.$t.err" regions)
      [ -n "$total" ] || total=1
      b=$(traffic_of "$d/cape.$t.err"); [ -n "$b" ] && awk -v b="$b" -v r="$total" 'BEGIN { printf "%.0f\n", b / r }' >>"$d/cape.$t.b"
    done
  done
  mpi=$(median <"$d/mpi.s")
  printf '%-9s %-10s %10s' "$name" "${args// /x}" "$(awk -v s="$mpi" 'BEGIN { printf "%.4f s", s }')"
  for v in "${variants[@]}"; do
    read -r t _ _ <<<"$v"
    c=$(median <"$d/cape.$t.s")
    printf ' %24s' "$(awk -v c="$c" -v m="$mpi" 'BEGIN { printf "%.4f s (%.1fx)", c, (m > 0 ? c / m : 0) }')"
  done
  first=${trackers%% *}
  cb=$( [ -s "$d/cape.$first.b" ] && median <"$d/cape.$first.b" || echo "?")
  [ -s "$d/cape.base-$first.b" ] && cb="$(median <"$d/cape.base-$first.b")->$cb"
  lb=$( [ -s "$d/cape.$first-lazy.b" ] && median <"$d/cape.$first-lazy.b" || echo "-")
  [ -s "$d/cape.base-$first-lazy.b" ] && lb="$(median <"$d/cape.base-$first-lazy.b")->$lb"
  mb=$(field_of "$d/mpi.err" mpi-bytes)
  printf ' %14s %14s %14s  %s\n' "$cb" "$lb" "${mb:-?}" "$ok"
  if [ "$name" = empty ]; then
    regions=$(field_of "$d/mpi.err" regions)
    printf '  empty region latency:  MPI_Barrier+MPI_Bcast %.1f us' "$(awk -v s="$mpi" -v r="$regions" 'BEGIN { print s / r * 1e6 }')"
    for v in "${variants[@]}"; do
      read -r t _ _ <<<"$v"
      printf ',  cape %s %.1f us' "$t" "$(awk -v s="$(median <"$d/cape.$t.s")" -v r="$regions" 'BEGIN { print s / r * 1e6 }')"
    done
    echo
  fi
  if [ -s "$d/seq.s" ]; then
    # Checkpoint/communication share of run time (issue 14): 1 - (T_1 / P) / T, T_1 the
    # kernel on one thread natively, P = min(nodes, CPUs) the parallelism the machine gives,
    # T the kernel's time in the job. MPI's share is its halo exchange plus its imbalance.
    seq=$(median <"$d/seq.s"); par=$(( nodes < $(nproc) ? nodes : $(nproc) ))
    share() { awk -v s="$seq" -v p="$par" -v t="$1" 'BEGIN { v = t > 0 ? 1 - s / p / t : 0; if (v < 0) v = 0; printf "%.0f%%", v * 100 }'; }
    printf '  %s share of run time not computing (1 - T_1thread/%d/T; T_1thread %.4f s):  MPI %s' "$name" "$par" "$seq" "$(share "$mpi")"
    for v in "${variants[@]}"; do
      read -r t _ _ <<<"$v"
      printf ',  cape %s %s' "$t" "$(share "$(median <"$d/cape.$t.s")")"
    done
    echo
  fi
  [ -e "$d/fail.txt" ] && sed 's/^/  | /' "$d/fail.txt"
  [ "$ok" = ok ] || status=1
done <<<"$table"
exit $status

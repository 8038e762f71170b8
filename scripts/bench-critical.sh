#!/usr/bin/env bash
# Critical sections across nodes (docs/critical.md): the cost of one entry on 3 local nodes,
# uncontended (the master's local path; a slave's entries: with lock leases, the first asks
# the master's lock service and the others re-enter the lease; the first entry alone, and
# one that takes the lock from another slave's lease, have their own lines) and contended
# (every node entering at once), and a slave's first entry of a lock in the job (no lease to
# renew: `never`), beside an MPI send/receive round trip between two of 3
# ranks in the same run: over shared memory (Open MPI's default here) and over TCP
# on loopback (cape's transport). The first-entry, taken and never lines are each the median
# of their 20 entries in a run (since session 11; the mean before, which one 20 ms stall in 20
# entries on a loaded VM moved by 1 ms). Medians of interleaved runs; ratios within one run, never
# absolute figures (the machine is shared and noisy). bench/critical/.
#
#   scripts/bench-critical.sh [BUILD_DIR]   (default build-bench; `make bench` runs it)
#   BENCH_RUNS=N (default 3)  BENCH_ENTRIES=N (default 200)  BENCH_NODES=3
#   BENCH_BASELINE=DIR: another build (e.g. main's) run in the same rounds, interleaved: a
#   before/after table of the same run (its cape-cc builds its own copy of the program).
#   BENCH_EAGER=0: no `--sync eager` run (by default each round also runs the build under
#   --sync eager, the default being lazy: a lazy/eager table of the same rounds).
#   BENCH_ALT="VAR=VALUE ...": the build also runs with that environment in the same rounds
#   (e.g. CAPE_LOCK_SEND_NOW=0, the old path; CAPE_LOCK_SPIN_US=100): a default/alt table.
#   BENCH_CPU=1: each job under `perf stat -e task-clock` (the CPU of every process of the
#   job, ms): a table of the job CPU per side (wall-time ratios are noise on a loaded VM).
set -uo pipefail
build=${1:-build-bench}
root=$(cd "$(dirname "$0")/.." && pwd)
case $build in /*) ;; *) build=$root/$build ;; esac
runs=${BENCH_RUNS:-3}
entries=${BENCH_ENTRIES:-200}
nodes=${BENCH_NODES:-3}
cape=$build/cli/cape
cape_cc=$build/translator/cape-cc
base=${BENCH_BASELINE:-}
eager=${BENCH_EAGER:-1}; [ "$eager" = 0 ] && eager=
alt=${BENCH_ALT:-}
cpu=${BENCH_CPU:-0}; [ "$cpu" = 0 ] && cpu=
[ -z "$cpu" ] || command -v perf >/dev/null || { echo "bench-critical: BENCH_CPU=1 needs perf" >&2; exit 1; }
for t in "$cape" "$cape_cc" ${base:+"$base/cli/cape" "$base/translator/cape-cc"}; do
  [ -x "$t" ] || { echo "bench-critical: $t is missing: build first (make bench)" >&2; exit 1; }
done
command -v mpicc >/dev/null && command -v mpirun >/dev/null ||
  { echo "bench-critical: mpicc/mpirun missing: scripts/install-deps.sh installs Open MPI" >&2; exit 1; }
mpirun=(mpirun --oversubscribe --bind-to none -np "$nodes")
[ "$(id -u)" = 0 ] && mpirun+=(--allow-run-as-root)
work=$(mktemp -d "${TMPDIR:-/tmp}/cape-bench-critical.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
"$cape_cc" -O2 "$root/bench/critical/critical.c" -o crit 2>cc.err || { cat cc.err; exit 1; }
[ -z "$base" ] || "$base/translator/cape-cc" -O2 "$root/bench/critical/critical.c" -o crit.base 2>>cc.err || { cat cc.err; exit 1; }
gcc -O2 -fopenmp "$root/bench/critical/critical.c" -o native 2>>cc.err || { cat cc.err; exit 1; }
mpicc -O2 "$root/bench/critical/pingpong_mpi.c" -o pingpong 2>>cc.err || { cat cc.err; exit 1; }
OMP_NUM_THREADS=$nodes ./native "$entries" >native.out 2>/dev/null

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
field() { sed -n "s/^bench: .*$2 \\([0-9.]*\\).*/\\1/p" "$1" | head -1; }
status=0
for ((i = 1; i <= runs; i++)); do
  "${mpirun[@]}" ./pingpong 2000 </dev/null >/dev/null 2>mpi.err && field mpi.err roundtrip >>rt.shm
  "${mpirun[@]}" --mca btl tcp,self ./pingpong 2000 </dev/null >/dev/null 2>mpi.err && field mpi.err roundtrip >>rt.tcp
  for side in ${base:+base} new ${eager:+eager} ${alt:+alt}; do
    if [ "$side" = base ]; then c_bin=$base/cli/cape prog=./crit; else c_bin=$cape prog=./crit; fi
    [ "$side" = base ] && prog=./crit.base
    sync=(); [ "$side" = eager ] && sync=(--sync eager)
    envs=(); [ "$side" = alt ] && read -r -a envs <<<"$alt"
    perf=(); [ -n "$cpu" ] && perf=(perf stat -x, -e task-clock -o "cpu.txt" --)
    env "${envs[@]}" "${perf[@]}" "$c_bin" run -n "$nodes" "${sync[@]}" -- "$prog" "$entries" </dev/null >cape.out 2>cape.err || { status=1; tail -3 cape.err; }
    [ -z "$cpu" ] || awk -F, '$3 == "task-clock" { print $1 }' cpu.txt >>"cpu.$side"
    cmp -s native.out cape.out || { echo "bench-critical: cape's total differs from gcc -fopenmp's ($side)"; status=1; }
    for f in uncontended-master:u0 uncontended-slave:u1 contended:c first-slave:f1 taken-slave:t1 never-slave:n1; do
      field cape.err "${f%%:*}" >>"${f#*:}.$side"
    done
  done
done
shm=$(median <rt.shm) tcp=$(median <rt.tcp) u0=$(median <u0.new) u1=$(median <u1.new) c=$(median <c.new)
f1=$(median <f1.new) t1=$(median <t1.new) n1=$(median <n1.new)
echo "critical entry on $nodes local nodes, $entries entries, medians of $runs interleaved runs; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
awk -v shm="$shm" -v tcp="$tcp" -v u0="$u0" -v u1="$u1" -v c="$c" -v f1="$f1" -v t1="$t1" -v n1="$n1" 'BEGIN {
  printf "%-44s %10s %14s %14s\n", "", "us", "x MPI rt shm", "x MPI rt tcp"
  printf "%-44s %10.1f %14s %14s\n", "MPI send/receive round trip, shared memory", shm, "1.0", ""
  printf "%-44s %10.1f %14s %14s\n", "MPI send/receive round trip, TCP loopback", tcp, "", "1.0"
  printf "%-44s %10.1f %14.1f %14.1f\n", "critical entry, uncontended, master (local)", u0, u0 / shm, u0 / tcp
  printf "%-44s %10.1f %14.1f %14.1f\n", "critical entry, uncontended, slave", u1, u1 / shm, u1 / tcp
  printf "%-44s %10.1f %14.1f %14.1f\n", "  slave, first entry of a region (lock free)", f1, f1 / shm, f1 / tcp
  printf "%-44s %10.1f %14.1f %14.1f\n", "  slave, entry while another slave leases it", t1, t1 / shm, t1 / tcp
  printf "%-44s %10.1f %14.1f %14.1f\n", "  slave, first entry of a lock in the job", n1, n1 / shm, n1 / tcp
  printf "%-44s %10.1f %14.1f %14.1f\n", "critical entry, contended (" '"$nodes"' " nodes at once)", c, c / shm, c / tcp
}'
if [ -n "$base" ]; then
  echo "before ($base) and after ($build), the same rounds:"
  printf '%-44s %10s %10s %8s %9s %9s\n' "" "before us" "after us" "after/" "before" "after"
  printf '%-44s %10s %10s %8s %9s %9s\n' "" "" "" "before" "x rt tcp" "x rt tcp"
  for row in "u0:critical entry, uncontended, master (local)" "u1:critical entry, uncontended, slave" \
             "f1:  slave, first entry of a region (lock free)" "t1:  slave, entry while another slave leases it" \
             "n1:  slave, first entry of a lock in the job" "c:critical entry, contended ($nodes nodes at once)"; do
    k=${row%%:*}
    awk -v label="${row#*:}" -v b="$(median <"$k.base")" -v a="$(median <"$k.new")" -v tcp="$tcp" \
      'BEGIN { printf "%-44s %10.1f %10.1f %8.3f %9.2f %9.2f\n", label, b, a, a / b, b / tcp, a / tcp }'
  done
fi
if [ -n "$eager" ]; then
  echo "the default sync (lazy) and --sync eager, the same build and rounds:"
  printf '%-44s %10s %10s %8s\n' "" "lazy us" "eager us" "lazy/"
  printf '%-44s %10s %10s %8s\n' "" "" "" "eager"
  for row in "u0:critical entry, uncontended, master (local)" "u1:critical entry, uncontended, slave" \
             "f1:  slave, first entry of a region (lock free)" "t1:  slave, entry while another slave leases it" \
             "n1:  slave, first entry of a lock in the job" "c:critical entry, contended ($nodes nodes at once)"; do
    k=${row%%:*}
    awk -v label="${row#*:}" -v l="$(median <"$k.new")" -v e="$(median <"$k.eager")" \
      'BEGIN { printf "%-44s %10.1f %10.1f %8.3f\n", label, l, e, l / e }'
  done
fi
if [ -n "$alt" ]; then
  echo "the build as it is and with $alt, the same rounds:"
  printf '%-44s %10s %10s %8s %9s %9s\n' "" "default us" "alt us" "alt/" "default" "alt"
  printf '%-44s %10s %10s %8s %9s %9s\n' "" "" "" "default" "x rt tcp" "x rt tcp"
  for row in "u0:critical entry, uncontended, master (local)" "u1:critical entry, uncontended, slave" \
             "f1:  slave, first entry of a region (lock free)" "t1:  slave, entry while another slave leases it" \
             "n1:  slave, first entry of a lock in the job" "c:critical entry, contended ($nodes nodes at once)"; do
    k=${row%%:*}
    awk -v label="${row#*:}" -v d="$(median <"$k.new")" -v a="$(median <"$k.alt")" -v tcp="$tcp" \
      'BEGIN { printf "%-44s %10.1f %10.1f %8.3f %9.2f %9.2f\n", label, d, a, a / d, d / tcp, a / tcp }'
  done
fi
if [ -n "$cpu" ]; then
  echo "job CPU (perf task-clock of cape run and every node, ms), medians:"
  for side in ${base:+base} new ${eager:+eager} ${alt:+alt}; do
    printf '  %-6s %10.1f  (runs: %s)\n' "$side" "$(median <"cpu.$side")" "$(tr '\n' ' ' <"cpu.$side")"
  done
fi
exit $status

#!/usr/bin/env bash
# --sync=lazy with more nodes than CPUs: the slaves' programs may run at a lower priority than
# the master's, and the slaves' runtime calls may stay off the master's CPU (tests/lazy;
# docs/monitor.md, "Session 15: the master's serial chain, the final checksum"). bench/e2e/jacobi.c
# 1000 x 4 on 3 nodes gives gcc -fopenmp's output in every case below, and:
#  - CAPE_LAZY_SLAVE_NICE=5 / 12: each slave's monitor read back from the kernel that its
#    program runs at nice +5 / +12 (its own + N; `monitor:info`), the master's program is not niced;
#  - by default (0), on 2 nodes (a CPU each) with =5, and under --sync=eager with =5: no slave niced;
#  - CAPE_LAZY_SLAVE_CPUS=1: the slaves' calls on a CPU other than the master's (`monitor:debug`
#    "runtime calls on CPU N"); by default slave 2's on the master's (by rank);
#  - a bad value of either is refused before any node starts, naming the variable.
# Skipped (77) on a host with 3 CPUs or more, or with one. Not timed.
#   slave_nice_paths.sh CAPE_CC CAPE SRC
set -uo pipefail
cc=$1 cape=$2 src=$3
unset CAPE_LAZY_SLAVE_NICE CAPE_LAZY_SLAVE_CPUS CAPE_SYNC CAPE_PIN
cpus=$(nproc)
[ "$cpus" -eq 2 ] || { echo "SKIP: $cpus CPUs (needs 2: more nodes than CPUs, more than one CPU)"; exit 77; }
for fd in $(ls /proc/$$/fd); do [ "$fd" -gt 2 ] && eval "exec $fd>&-"; done 2>/dev/null
work=$(mktemp -d "${TMPDIR:-/tmp}/cape-lazy-nice.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
gcc -O2 -fopenmp "$src" -o native || exit 1
OMP_NUM_THREADS=3 ./native 1000 4 > expected3 2>/dev/null || exit 1
OMP_NUM_THREADS=2 ./native 1000 4 > expected2 2>/dev/null || exit 1
"$cc" -O2 "$src" -o prog || exit 1
base=$(nice)  # the nice the nodes start with
fail=0
# job NAME NODES EXPECTED-NICE-OF-SLAVES(or "none") [env/run options...]
job() {
  local name=$1 n=$2 want=$3; shift 3
  rm -rf logs
  if ! env "$@" timeout 200 "$cape" run -n "$n" --output-dir logs --log monitor:debug ./prog 1000 4 \
      > "actual.$name" 2> "err.$name"; then
    echo "FAIL: $name: the job failed"; tail -20 "err.$name"; fail=1; return
  fi
  cmp -s "expected$n" "actual.$name" || { echo "FAIL: $name: the output differs from gcc -fopenmp's"; diff "expected$n" "actual.$name"; fail=1; }
  if grep -q "the program runs at nice" "err.$name"; then echo "FAIL: $name: the master's program was niced"; fail=1; fi
  for r in $(seq 1 $((n - 1))); do
    local line
    line=$(grep -o "the program runs at nice -\?[0-9]*" "logs/node.$r.log")
    if [ "$want" = none ]; then
      [ -z "$line" ] || { echo "FAIL: $name: slave $r: '$line', expected no change"; fail=1; }
    elif [ "$line" != "the program runs at nice $want" ]; then
      echo "FAIL: $name: slave $r: '${line:-no nice line}', expected nice $want"; fail=1
    fi
  done
}
job default 3 none CAPE_SYNC=lazy
job five 3 $(( base + 5 > 19 ? 19 : base + 5 )) CAPE_SYNC=lazy CAPE_LAZY_SLAVE_NICE=5
job twelve 3 $(( base + 12 > 19 ? 19 : base + 12 )) CAPE_SYNC=lazy CAPE_LAZY_SLAVE_NICE=12
job cpu_each 2 none CAPE_SYNC=lazy CAPE_LAZY_SLAVE_NICE=5
job eager 3 none CAPE_SYNC=eager CAPE_LAZY_SLAVE_NICE=5
# Which CPU each node's calls use: the master's (rank 0) is its first allowed CPU.
calls_cpu() { grep -ho "runtime calls on CPU [0-9]*" "$1" | head -1 | awk '{print $NF}'; }
job cpus 3 none CAPE_SYNC=lazy CAPE_LAZY_SLAVE_CPUS=1
m=$(calls_cpu err.cpus); s1=$(calls_cpu logs/node.1.log); s2=$(calls_cpu logs/node.2.log)
if [ -z "$m" ] || [ -z "$s1" ] || [ -z "$s2" ] || [ "$s1" = "$m" ] || [ "$s2" = "$m" ]; then
  echo "FAIL: CAPE_LAZY_SLAVE_CPUS=1: calls on CPUs master '$m', slaves '$s1' '$s2' (expected the slaves off the master's)"; fail=1
fi
job by_rank 3 none CAPE_SYNC=lazy
m=$(calls_cpu err.by_rank); s2=$(calls_cpu logs/node.2.log)
if [ -z "$m" ] || [ "$s2" != "$m" ]; then
  echo "FAIL: by default: slave 2's calls on CPU '$s2', the master's on '$m' (expected by rank: the same)"; fail=1
fi
for bad in yes 20 -1 ''; do
  if CAPE_LAZY_SLAVE_NICE=$bad timeout 100 "$cape" run -n 3 --sync lazy ./prog 100 2 > /dev/null 2> err.bad; then
    echo "FAIL: CAPE_LAZY_SLAVE_NICE='$bad' was accepted"; fail=1
  elif ! grep -q "CAPE_LAZY_SLAVE_NICE='$bad': give 0" err.bad; then
    echo "FAIL: CAPE_LAZY_SLAVE_NICE='$bad': no message naming the variable"; cat err.bad; fail=1
  fi
done
if CAPE_LAZY_SLAVE_CPUS=2 timeout 100 "$cape" run -n 3 --sync lazy ./prog 100 2 > /dev/null 2> err.bad; then
  echo "FAIL: CAPE_LAZY_SLAVE_CPUS=2 was accepted"; fail=1
elif ! grep -q "CAPE_LAZY_SLAVE_CPUS='2': give 1" err.bad; then
  echo "FAIL: CAPE_LAZY_SLAVE_CPUS=2: no message naming the variable"; cat err.bad; fail=1
fi
[ $fail = 0 ] && echo "PASS: slaves niced and moved only when asked, with more nodes than CPUs, under lazy; outputs equal to gcc's"
exit $fail

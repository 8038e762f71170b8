#!/usr/bin/env bash
# --sync=lazy with more nodes than CPUs: the slaves' programs run at a lower priority than the
# master's (tests/lazy; docs/monitor.md, "Session 15: the slaves' programs at a lower priority").
# bench/e2e/jacobi.c 1000 x 4 on 3 nodes gives gcc -fopenmp's output, and each slave's monitor
# read back from the kernel that its program runs at nice 5 (its own nice + 5; `monitor:info`),
# the master's program at its monitor's; with CAPE_LAZY_SLAVE_NICE=0 or =12, or on 2 nodes
# (a CPU each), or under --sync=eager: the same output and nice as asked (none, 12, none, none);
# a bad value is refused before any node starts, naming the variable. Skipped (77) on a host
# with 3 CPUs or more. Not timed.
#   slave_nice_paths.sh CAPE_CC CAPE SRC
set -uo pipefail
cc=$1 cape=$2 src=$3
unset CAPE_LAZY_SLAVE_NICE CAPE_SYNC
cpus=$(nproc)
[ "$cpus" -lt 3 ] || { echo "SKIP: $cpus CPUs (needs fewer than 3: more nodes than CPUs)"; exit 77; }
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
  if ! env "$@" timeout 200 "$cape" run -n "$n" --output-dir logs --log monitor:info ./prog 1000 4 \
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
job default 3 $(( base + 5 > 19 ? 19 : base + 5 )) CAPE_SYNC=lazy
job off 3 none CAPE_SYNC=lazy CAPE_LAZY_SLAVE_NICE=0
job twelve 3 $(( base + 12 > 19 ? 19 : base + 12 )) CAPE_SYNC=lazy CAPE_LAZY_SLAVE_NICE=12
[ "$cpus" -ge 2 ] && job cpu_each 2 none CAPE_SYNC=lazy
job eager 3 none CAPE_SYNC=eager
for bad in yes 20 -1 ''; do
  if CAPE_LAZY_SLAVE_NICE=$bad timeout 100 "$cape" run -n 3 --sync lazy ./prog 100 2 > /dev/null 2> err.bad; then
    echo "FAIL: CAPE_LAZY_SLAVE_NICE='$bad' was accepted"; fail=1
  elif ! grep -q "CAPE_LAZY_SLAVE_NICE='$bad': give 0" err.bad; then
    echo "FAIL: CAPE_LAZY_SLAVE_NICE='$bad': no message naming the variable"; cat err.bad; fail=1
  fi
done
[ $fail = 0 ] && echo "PASS: slaves niced only with more nodes than CPUs under lazy; outputs equal to gcc's"
exit $fail

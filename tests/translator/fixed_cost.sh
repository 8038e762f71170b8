#!/usr/bin/env bash
# The fixed cost of a region (issue 14, session 13): each cut has a switch that turns it off;
# with it on, the job makes fewer system calls of the kind it cut per region than with it off,
# and the output is gcc -fopenmp's either way. A program of an empty `parallel for` and one
# with clause calls (reductions of a local and a global, private, firstprivate, lastprivate:
# values the monitor writes between the digest and start()) per iteration. Counts of perf's
# syscall tracepoints over the whole job, the difference between 40 and 10 iterations (system
# calls, not times); the lazy master's broadcasts made once from `--log traffic:info`, its
# tracked-set computations from `--log calls:info`.
#   fixed_cost.sh CAPE_CC CAPE NODES
set -euo pipefail
cc=$1 cape=$2 n=$3
if [ ! -x "$cape" ]; then echo "SKIP: $cape not built" >&2; exit 77; fi
if ! perf stat -x, -e syscalls:sys_enter_ioctl -o /dev/null true 2>/dev/null; then
  echo "SKIP: perf cannot count system calls here" >&2
  exit 77
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/cape-fixed-cost.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
cat > prog.c <<'C'
#include <stdio.h>
#include <stdlib.h>
long g[512];
long gsum;
int main(int argc, char **argv) {
  int regions = atoi(argv[1]), a = 3, last = -1, tmp = 0;
  long acc = 0;
  for (int i = 0; i < 512; i++) g[i] = i * 7 % 13;
  for (int r = 0; r < regions; r++) {
#pragma omp parallel for
    for (int i = 0; i < 3; i++) {
    }
    long s = 0;
#pragma omp parallel for reduction(+: s, gsum) private(tmp) firstprivate(a) lastprivate(last)
    for (int i = 0; i < 512; i++) {
      tmp = a + i;
      last = tmp + r;
      s += g[i] * tmp;
      gsum += i % 5;
    }
    acc += s + last;
  }
  printf("%ld %ld %d\n", acc, gsum, last);
  return 0;
}
C
"$cc" -O2 prog.c -o prog
gcc -fopenmp -O2 prog.c -o native
status=0
# run ENV REGIONS: the job's ioctl and process_vm_readv counts ("I P"); its output checked
run() {
  local envs=$1 r=$2
  rm -rf logs
  env $envs perf stat -x, -o stat -e syscalls:sys_enter_ioctl,syscalls:sys_enter_process_vm_readv -- \
    "$cape" run -n "$n" --log traffic:info,calls:info --output-dir logs -- ./prog "$r" > out 2> err || { cat err logs/* >&2; exit 1; }
  ./native "$r" > expected
  if ! cmp -s out expected; then
    echo "FAIL: $envs, $r iterations: output differs from gcc -fopenmp's: $(cat out) against $(cat expected)" >&2
    echo "$envs $r" >> failed  # (run() is called in a subshell)
  fi
  # the master's tracked-set asks and computations ("missing" on a build without them)
  local tr
  tr=$(cat err logs/* 2>/dev/null | sed -n 's/.*rank 0: tracked set: \([0-9]*\) asks, \([0-9]*\) computed.*/\1 \2/p' | head -1)
  echo "$(grep -E 'sys_enter_ioctl' stat | cut -d, -f1) $(grep -E 'sys_enter_process_vm_readv' stat | cut -d, -f1) ${tr:-missing missing}"
}
per() {  # per ENV: "ioctl pvr" per iteration (an empty region and a clause region), the
  local a b once  # master's broadcasts made once in the 40 iterations' job, and its tracked-set
  a=($(run "$1" 10)) b=($(run "$1" 40))  # asks and computations per iteration (x100)
  once=$(cat err logs/* 2>/dev/null | sed -n 's/.*rank 0: .*(\([0-9]*\) broadcasts made once for every slave).*/\1/p' | head -1)
  local asks=-1 computed=-1
  if [ "${a[2]}" != missing ] && [ "${b[2]}" != missing ]; then
    asks=$(( (b[2] - a[2]) * 100 / 30 )) computed=$(( (b[3] - a[3]) * 100 / 30 ))
  fi
  echo "$(( (b[0] - a[0]) / 30 )) $(( (b[1] - a[1]) / 30 )) ${once:-missing} $asks $computed"
}
on=($(per X=1)) once_on=${on[2]}
echo "all on: ${on[0]} PAGEMAP_SCAN/ioctl, ${on[1]} process_vm_readv per iteration; master: $once_on broadcasts made once, tracked set asked ${on[3]}/100 and computed ${on[4]}/100 times per iteration"
check() {  # check SWITCH INDEX KIND
  local off
  off=($(per "$1=0"))
  echo "$1=0: ${off[0]} ioctl, ${off[1]} process_vm_readv per iteration"
  if [ "${on[$2]}" -ge "${off[$2]}" ]; then
    echo "FAIL: $3 per iteration ${on[$2]} with the cut, ${off[$2]} with $1=0: no fewer" >&2
    status=1
  fi
}
check CAPE_UFFD_ONE_SCAN 0 ioctl
check CAPE_START_REUSES_REFRESH 0 ioctl
check CAPE_SITE_FROM_BEGIN 1 process_vm_readv
# The master's tracked set kept while the maps are the same: computed fewer times than asked,
# and every time with CAPE_TRACKED_KEPT=0.
off=($(per CAPE_TRACKED_KEPT=0))
echo "CAPE_TRACKED_KEPT=0: tracked set asked ${off[3]}/100 and computed ${off[4]}/100 times per iteration"
if ! [ "${on[4]}" -ge 0 ] || [ "${on[4]}" -ge "${on[3]}" ]; then
  echo "FAIL: the tracked set was computed ${on[4]}/100 times per iteration for ${on[3]}/100 asks (-1: not reported)" >&2
  status=1
fi
if [ "${off[4]}" != "${off[3]}" ]; then
  echo "FAIL: CAPE_TRACKED_KEPT=0 computed the tracked set ${off[4]}/100 times per iteration for ${off[3]}/100 asks" >&2
  status=1
fi
if [ "$n" -ge 3 ]; then
  # 40 empty regions at least (the clause regions' too when every slave's list is the same)
  if ! [ "$once_on" -ge 40 ] 2>/dev/null; then
    echo "FAIL: the master made $once_on broadcasts once for every slave in 40 iterations (at least 40 expected)" >&2
    status=1
  fi
  off=($(per CAPE_LAZY_BROADCAST_ONCE=0))
  echo "CAPE_LAZY_BROADCAST_ONCE=0: ${off[2]} broadcasts made once"
  if [ "${off[2]}" != 0 ]; then echo "FAIL: CAPE_LAZY_BROADCAST_ONCE=0 still made ${off[2]}" >&2; status=1; fi
fi
if [ -s failed ]; then status=1; fi
exit $status

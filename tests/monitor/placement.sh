#!/usr/bin/env bash
# CPU placement (docs/monitor.md, "CPU placement"): where a node's program may run while it
# computes, under each CAPE_PIN mode and by default, both trackers, 3 nodes. The program
# prints how many CPUs it may use before, inside (each iteration of a parallel for) and
# after a region. calls: all the CPUs it was given (it floats between runtime calls);
# 1: one; 0: all. The default: 1 when the host has a CPU per node, else as calls.
#   placement.sh CAPE_CC CAPE
set -uo pipefail
cc=$1 cape=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/cape-placement.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
cat > p.c <<'C'
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
int cpus[3];
static int count(void) {
  cpu_set_t s;
  CPU_ZERO(&s);
  return sched_getaffinity(0, sizeof s, &s) ? -1 : CPU_COUNT(&s);
}
int main(void) {
  int before = count();
#pragma omp parallel for
  for (int i = 0; i < 3; i++) cpus[i] = count();
  int after = count();
  printf("%d %d %d %d %d\n", before, cpus[0], cpus[1], cpus[2], after);
  return 0;
}
C
"$cc" -O1 p.c -o p || exit 1
n=$(nproc)
default=$n
[ "$n" -ge 3 ] && default=1
fail=0
for t in uffd mprotect; do
  for mode in calls 1 0 default; do
    case $mode in calls | 0) want=$n ;; 1) want=1 ;; default) want=$default ;; esac
    expect="$want $want $want $want $want"
    if [ $mode = default ]; then
      env -u CAPE_PIN "$cape" run -n 3 --tracker $t ./p > out 2> err
    else
      CAPE_PIN=$mode "$cape" run -n 3 --tracker $t ./p > out 2> err
    fi
    rc=$?
    if [ $rc != 0 ] || [ "$(cat out)" != "$expect" ]; then
      echo "FAIL: --tracker $t CAPE_PIN=$mode: status $rc, printed '$(cat out)', expected '$expect'"
      cat err
      fail=1
    fi
  done
done
# A program that binds its main thread itself keeps its mask across runtime calls (calls mode
# gives back the mask the thread had, not the one the node started with).
cat > own.c <<'C'
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
int sum;
static int count(void) {
  cpu_set_t s;
  CPU_ZERO(&s);
  return sched_getaffinity(0, sizeof s, &s) ? -1 : CPU_COUNT(&s);
}
int main(void) {
  cpu_set_t one;
  CPU_ZERO(&one);
  sched_getaffinity(0, sizeof one, &one);
  for (int c = 0; c < CPU_SETSIZE; c++)
    if (CPU_ISSET(c, &one)) {
      CPU_ZERO(&one);
      CPU_SET(c, &one);
      break;
    }
  sched_setaffinity(0, sizeof one, &one);
  for (int r = 0; r < 3; r++) {
#pragma omp parallel for reduction(+ : sum)
    for (int i = 0; i < 3; i++) sum += i;
  }
  printf("%d %d\n", sum, count());
  return 0;
}
C
"$cc" -O1 own.c -o own || exit 1
for t in uffd mprotect; do
  CAPE_PIN=calls "$cape" run -n 3 --tracker $t ./own > out 2> err
  rc=$?
  if [ $rc != 0 ] || [ "$(cat out)" != "9 1" ]; then
    echo "FAIL: own mask, --tracker $t CAPE_PIN=calls: status $rc, printed '$(cat out)', expected '9 1'"
    cat err
    fail=1
  fi
done
exit $fail

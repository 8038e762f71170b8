#!/usr/bin/env bash
# --sync=lazy's refusals (tests/lazy): what it cannot do is said before any node starts, with
# what to do instead, never run silently wrong.   refuse.sh CAPE_CC CAPE
set -uo pipefail
cc=$1 cape=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/cape-lazy-refuse.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
printf '#include <stdio.h>\nint a[100];\nint main(void) {\n#pragma omp parallel for\n  for (int i = 0; i < 100; i++) a[i] = i;\n  printf("%%d\\n", a[99]);\n  return 0;\n}\n' > p.c
"$cc" -O1 p.c -o p || exit 1
fail=0
for t in full inproc; do
  "$cape" run -n 2 --sync lazy --tracker $t ./p > out 2> err
  rc=$?
  if [ $rc != 1 ] || [ -s out ] || ! grep -q "^cape: --sync=lazy needs --tracker uffd (the default) or mprotect, not $t: .*run with --tracker uffd or --sync=eager" err; then
    echo "FAIL: --tracker $t: status $rc"; cat out err; fail=1
  fi
done
"$cape" run -n 2 --sync sometimes ./p > out 2> err
rc=$?
if [ $rc != 2 ] || ! grep -q -- "--sync: sometimes not in {eager,lazy}" err; then echo "FAIL: bad --sync value: status $rc"; cat err; fail=1; fi
# And the lazy job itself runs and says the same as the eager one.
"$cape" run -n 2 --sync lazy ./p > lazy.out 2> err || { echo "FAIL: lazy run"; cat err; fail=1; }
"$cape" run -n 2 --sync eager ./p > eager.out 2> err || { echo "FAIL: eager run"; cat err; fail=1; }
cmp -s lazy.out eager.out && [ "$(cat lazy.out)" = 99 ] || { echo "FAIL: outputs differ"; fail=1; }
# CAPE_SYNC sets the default (cli/command.h, choose_sync): lazy runs lazily (its traffic line
# says so), --sync overrides it, a tracker that cannot be lazy falls back to eager, and a
# value that is neither is refused before any node starts.
lazy_line='^\[cape traffic rank 0 .*\] info: rank 0: --sync=lazy: '
CAPE_SYNC=lazy "$cape" run -n 2 --log traffic:info ./p > out 2> err
[ $? = 0 ] && [ "$(cat out)" = 99 ] && grep -q "$lazy_line" err || { echo "FAIL: CAPE_SYNC=lazy"; cat out err; fail=1; }
for how in "--sync eager" "--tracker full" "--tracker inproc"; do
  # shellcheck disable=SC2086
  CAPE_SYNC=lazy "$cape" run -n 2 --log traffic:info $how ./p > out 2> err
  [ $? = 0 ] && [ "$(cat out)" = 99 ] && ! grep -q "$lazy_line" err || { echo "FAIL: CAPE_SYNC=lazy $how"; cat out err; fail=1; }
done
CAPE_SYNC=eager "$cape" run -n 2 --log traffic:info ./p > out 2> err
[ $? = 0 ] && ! grep -q "$lazy_line" err || { echo "FAIL: CAPE_SYNC=eager"; cat out err; fail=1; }
CAPE_SYNC=sometimes "$cape" run -n 2 ./p > out 2> err
rc=$?
if [ $rc != 1 ] || [ -s out ] || ! grep -q "^cape: CAPE_SYNC='sometimes' is not eager or lazy" err; then
  echo "FAIL: bad CAPE_SYNC: status $rc"; cat out err; fail=1
fi
exit $fail

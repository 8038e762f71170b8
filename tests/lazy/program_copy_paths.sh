#!/usr/bin/env bash
# --sync=lazy, the publishing copy made by the program (tests/lazy; docs/monitor.md, "Session
# 12"): programs/publish_mix.c on 3 nodes gives gcc -fopenmp's output with the default
# threshold AND the program copied published pages on the master and on a slave (the nodes'
# --sync=lazy traffic lines); with CAPE_LAZY_PROGRAM_COPY=0 the same output and no page
# copied by the program; a value that is not a number is refused with a message naming the
# variable. Not timed.
#   program_copy_paths.sh CAPE_CC CAPE SRC TRACKER
set -uo pipefail
cc=$1 cape=$2 src=$3 tracker=$4
unset CAPE_LAZY_PROGRAM_COPY
. "$(dirname "$0")/paths_job.sh" publish 3 traffic:info
copied='sync=lazy: .*, [1-9][0-9]* published pages copied by the program in [1-9][0-9]* calls'
grep -q "$copied" err || { echo "FAIL: the master's program copied no published page"; fail=1; }
grep -q "$copied" logs/node.1.log || { echo "FAIL: slave 1's program copied no published page"; fail=1; }
[ $fail = 0 ] || grep -h "sync=lazy" err logs/*.log
# Off: the monitor copies every page, and the output is the same.
rm -rf logs
CAPE_LAZY_PROGRAM_COPY=0 timeout 200 "$cape" run -n 3 --sync lazy --tracker "$tracker" --output-dir logs \
  --log traffic:info ./prog > actual.off 2> err.off || { echo "FAIL: the job with CAPE_LAZY_PROGRAM_COPY=0 failed"; tail -20 err.off; exit 1; }
cmp -s expected actual.off || { echo "FAIL: CAPE_LAZY_PROGRAM_COPY=0: the output differs from gcc -fopenmp's"; diff expected actual.off; fail=1; }
if grep -h "sync=lazy" err.off logs/*.log | grep -v ', 0 published pages copied by the program in 0 calls' | grep -q .; then
  echo "FAIL: CAPE_LAZY_PROGRAM_COPY=0 and a program copied published pages"; grep -h "sync=lazy" err.off logs/*.log; fail=1
fi
# Bad input: a clear error, the job does not run.
rm -rf logs
if CAPE_LAZY_PROGRAM_COPY=lots timeout 100 "$cape" run -n 3 --sync lazy --tracker "$tracker" --output-dir logs \
    ./prog > /dev/null 2> err.bad; then
  echo "FAIL: CAPE_LAZY_PROGRAM_COPY=lots was accepted"; fail=1
elif ! grep -q "CAPE_LAZY_PROGRAM_COPY='lots': give 0" err.bad; then
  echo "FAIL: CAPE_LAZY_PROGRAM_COPY=lots: no message naming the variable"; cat err.bad; fail=1
fi
exit $fail

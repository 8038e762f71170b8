#!/usr/bin/env bash
# Trap-free re-entry under --sync=lazy (docs/critical.md, "Under --sync=lazy"): programs/
# crit_lazy_pages.c on 3 nodes gives gcc -fopenmp's output AND the last slave, which alone
# takes lock `solo`, entered bodies without a trap ("N entries without a trap", its
# --log calls:info line) while it fetched dropped pages and left kept pages writable. CAPE_LOCK_TRAP_FREE=0 must give the
# same output with no such entry (the switch works; the path is not taken by accident). Not timed.
#   trapfree_paths.sh CAPE_CC CAPE SRC TRACKER
set -uo pipefail
cc=$1 cape=$2 src=$3 tracker=$4
. "$(dirname "$0")/paths_job.sh" trapfree 3 calls:info,traffic:info
grep -q " [1-9][0-9]* entries without a trap" logs/node.2.log ||
  { echo "FAIL: slave 2 entered no body without a trap"; fail=1; }
grep -q "sync=lazy: [0-9]* pages invalidated, [1-9][0-9]* fetched" logs/node.2.log ||
  { echo "FAIL: slave 2 fetched no page"; fail=1; }
grep -q "sync=lazy: .*, [1-9][0-9]* kept pages left writable" logs/node.2.log ||
  { echo "FAIL: slave 2 left no kept page writable"; fail=1; }
CAPE_LOCK_TRAP_FREE=0 timeout 200 "$cape" run -n 3 --sync lazy --tracker "$tracker" --output-dir logs0 --log calls:info \
  ./prog > actual0 2> err0 || { echo "FAIL: the job failed with CAPE_LOCK_TRAP_FREE=0"; tail -20 err0; exit 1; }
cmp -s expected actual0 || { echo "FAIL: CAPE_LOCK_TRAP_FREE=0: the output differs"; diff expected actual0; fail=1; }
grep -q " 0 entries without a trap" logs0/node.2.log ||
  { echo "FAIL: CAPE_LOCK_TRAP_FREE=0 still entered bodies without a trap"; fail=1; }
[ $fail = 0 ] || grep -h "without a trap\|sync=lazy" logs/*.log logs0/*.log
exit $fail

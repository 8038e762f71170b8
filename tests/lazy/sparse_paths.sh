#!/usr/bin/env bash
# --sync=lazy, sparse writes (tests/lazy): programs/sparse.c on 3 nodes gives gcc -fopenmp's
# output AND no node fetches the 2 x 1024 pages that each of its 10 regions changes by one
# word: they travel as words, from the master with the merge (monitor/lazy.cpp, broadcast())
# and from the slaves in their parts (outgoing()). Before, each was invalidated and fetched
# whole: 1,061 and 1,374 requests per slave (11 with the master's rule alone; now 0). Counts
# from the traffic lines, not timed.
#   sparse_paths.sh CAPE_CC CAPE SRC TRACKER
set -uo pipefail
cc=$1 cape=$2 src=$3 tracker=$4
. "$(dirname "$0")/paths_job.sh" sparse 3 traffic:info
for r in 0 1 2; do
  log=logs/node.$r.log; [ $r = 0 ] && log=err
  n=$(sed -n 's/.*--sync=lazy: [0-9]* pages invalidated, [0-9]* fetched in \([0-9]*\) requests.*/\1/p' "$log")
  if [ -z "$n" ] || [ "$n" -gt 10 ]; then echo "FAIL: node $r made ${n:-?} page requests (at most 10 expected)"; fail=1; fi
done
[ $fail = 0 ] || grep -h "sync=lazy" err logs/*.log
exit $fail

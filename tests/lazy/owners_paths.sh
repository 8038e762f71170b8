#!/usr/bin/env bash
# --sync=lazy, who serves a page (tests/lazy): programs/owners.c on 4 nodes gives gcc
# -fopenmp's output AND took every path of the page service: a slave served pages to
# another slave through the master ("for node 2" in a slave's log), a slave served the
# master ("for node 0"), slaves kept pages and the master fetched back pages two nodes
# wrote to merge them (the nodes' --sync=lazy traffic lines). Not timed.
#   owners_paths.sh CAPE_CC CAPE SRC TRACKER
set -uo pipefail
cc=$1 cape=$2 src=$3 tracker=$4
. "$(dirname "$0")/paths_job.sh" owners 4 net:debug,traffic:info
grep -q "page(s) from 0x[0-9a-f]* for node [1-3]$" logs/node.*.log ||
  { echo "FAIL: no slave served a page to another slave"; fail=1; }
grep -q "page(s) from 0x[0-9a-f]* for node 0$" logs/node.*.log ||
  { echo "FAIL: no slave served a page to the master"; fail=1; }
grep -q "sync=lazy: .*, [1-9][0-9]* pages kept" logs/node.1.log ||
  { echo "FAIL: slave 1 kept no page"; fail=1; }
grep -q "sync=lazy: .*, [1-9][0-9]* fetched to merge" err ||
  { echo "FAIL: the master fetched no page back to merge it"; fail=1; }
[ $fail = 0 ] || { grep -h "sync=lazy" err logs/*.log; }
exit $fail

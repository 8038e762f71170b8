#!/usr/bin/env bash
# --sync=lazy, pages left writable in a window (tests/lazy): programs/opened.c on 3 nodes
# gives gcc -fopenmp's output AND the nodes opened pages (their --sync=lazy traffic lines:
# "N kept pages left writable", the master's and a slave's), among them pages another node
# wrote too (uffd: the master merged its own kept pages with another node's words). Not
# timed. (mprotect: the program runs with `nokernel`, see opened.c.)
#   opened_paths.sh CAPE_CC CAPE SRC TRACKER
set -uo pipefail
cc=$1 cape=$2 src=$3 tracker=$4
prog_args=; [ "$tracker" = mprotect ] && prog_args=nokernel
. "$(dirname "$0")/paths_job.sh" opened 3 traffic:info
grep -q "sync=lazy: .*, [1-9][0-9]* kept pages left writable" err ||
  { echo "FAIL: the master left no kept page writable"; fail=1; }
grep -q "sync=lazy: .*, [1-9][0-9]* kept pages left writable" logs/node.1.log ||
  { echo "FAIL: slave 1 left no kept page writable"; fail=1; }
if [ "$tracker" = uffd ]; then
  grep -q "sync=lazy: .*, [1-9][0-9]* own kept pages merged" err ||
    { echo "FAIL: the master merged none of its kept pages with another node's words"; fail=1; }
fi
[ $fail = 0 ] || { grep -h "sync=lazy" err logs/*.log; }
exit $fail

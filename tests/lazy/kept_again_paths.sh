#!/usr/bin/env bash
# --sync=lazy, pages kept again without being read (tests/lazy): programs/kept_again.c on 3
# nodes gives gcc -fopenmp's output AND took the paths it is there for (the nodes' --sync=lazy
# traffic lines): create() skipped written pages on the master and on a slave, the master
# merged its own kept pages with another node's words, and (uffd) a tracker made a stale
# copy good from the node's page service before diffing the page again. Not timed.
#   kept_again_paths.sh CAPE_CC CAPE SRC TRACKER
set -uo pipefail
cc=$1 cape=$2 src=$3 tracker=$4
. "$(dirname "$0")/paths_job.sh" kept 3 traffic:info
grep -q "sync=lazy: .*; [1-9][0-9]* written pages not read" err ||
  { echo "FAIL: the master's create() read every page it wrote"; fail=1; }
grep -q "sync=lazy: .*; [1-9][0-9]* written pages not read" logs/node.1.log ||
  { echo "FAIL: slave 1's create() read every page it wrote"; fail=1; }
grep -q "sync=lazy: .*, [1-9][0-9]* own kept pages merged" err ||
  { echo "FAIL: the master merged none of its kept pages with another node's words"; fail=1; }
if [ "$tracker" = uffd ]; then
  grep -q "sync=lazy: .*, [1-9][0-9]* originals from the page service" err logs/node.1.log ||
    { echo "FAIL: no tracker took a page's original from its page service"; fail=1; }
fi
[ $fail = 0 ] || { grep -h "sync=lazy" err logs/*.log; }
exit $fail

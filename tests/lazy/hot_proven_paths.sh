#!/usr/bin/env bash
# --sync=lazy, a node's working set is what it surely read (tests/lazy; docs/monitor.md, "What a
# sweep costs and what travels, session 14"): programs/halo_ahead.c on 3 nodes gives gcc
# -fopenmp's output by default and with CAPE_LAZY_HOT_PROVEN=0 (every fetched page joins the working
# set, as before), and the master's broadcasts carry fewer bytes by default (the pages its
# fetches read ahead and nobody read no longer travel at every sweep); a bad value is refused
# with a message naming the variable. Bytes, not time.
#   hot_proven_paths.sh CAPE_CC CAPE SRC TRACKER
set -uo pipefail
cc=$1 cape=$2 src=$3 tracker=$4
unset CAPE_LAZY_HOT_PROVEN
. "$(dirname "$0")/paths_job.sh" hot_proven 3 traffic:info
eager() { sed -n 's/.*rank 0: --sync=lazy: .* \([0-9][0-9]*\) bytes sent eagerly.*/\1/p' "$1" | head -1; }
on=$(eager err)
rm -rf logs
CAPE_LAZY_HOT_PROVEN=0 timeout 200 "$cape" run -n 3 --sync lazy --tracker "$tracker" --output-dir logs \
  --log traffic:info ./prog > actual.off 2> err.off || { echo "FAIL: the job with CAPE_LAZY_HOT_PROVEN=0 failed"; tail -20 err.off; exit 1; }
cmp -s expected actual.off || { echo "FAIL: CAPE_LAZY_HOT_PROVEN=0: the output differs from gcc -fopenmp's"; diff expected actual.off; fail=1; }
off=$(eager err.off)
echo "the master's broadcasts: $on bytes by default, $off with CAPE_LAZY_HOT_PROVEN=0"
if [ -z "$on" ] || [ -z "$off" ]; then
  echo "FAIL: no --sync=lazy traffic line from the master"; fail=1
elif [ "$on" -ge "$off" ]; then
  echo "FAIL: pages read ahead and never read still travel (the broadcasts are not smaller by default)"; fail=1
fi
rm -rf logs
if CAPE_LAZY_HOT_PROVEN=some timeout 100 "$cape" run -n 3 --sync lazy --tracker "$tracker" --output-dir logs \
    ./prog > /dev/null 2> err.bad; then
  echo "FAIL: CAPE_LAZY_HOT_PROVEN=some was accepted"; fail=1
elif ! grep -q "CAPE_LAZY_HOT_PROVEN='some': give 1" err.bad; then
  echo "FAIL: CAPE_LAZY_HOT_PROVEN=some: no message naming the variable"; cat err.bad; fail=1
fi
exit $fail

#!/usr/bin/env bash
# A slave's lock release that another node waits for goes out at once on the monitor's thread,
# not from the heartbeat thread (docs/critical.md, "Session 12"), against gcc -fopenmp:
# programs/crit_handoff.c (contended locks, a lease asked back inside its body, an ordered loop)
# - on 2, 3 and 4 nodes, both checkpoint models: the output is gcc's, and the slaves sent
#   releases at once (--log calls:info: "N lock releases sent at once (awaited)", logs/node.R.log);
# - CAPE_LOCK_SEND_NOW=0 (3 nodes): gcc's output, none sent at once, some by the heartbeat thread;
# - CAPE_LOCK_SPIN_US=200 (3 nodes): gcc's output, the slaves' grants counted as caught while
#   polling without sleeping or after sleeping; CAPE_LOCK_SPIN_US=abc: a clear error.
#   send_now.sh CAPE_CC CAPE PROGRAMS_DIR
set -uo pipefail
cc=$1 cape=$2 dir=$3
[ -x "$cape" ] || { echo "SKIP: $cape not built"; exit 77; }
work=$(mktemp -d "${TMPDIR:-/tmp}/cape-send-now.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
fail=0
p=crit_handoff
# job TAG NODES [ENV=VALUE...]: ./prog.MODEL on NODES nodes (MODEL from the tag's first part)
job() {
  local tag=$1 n=$2 model=${1%%.*}
  shift 2
  env "$@" timeout 200 "$cape" run -n "$n" --output-dir "logs.$tag" --log calls:info "./prog.$model" \
    > "out.$tag" 2> "err.$tag" || { echo "FAIL: $tag: the job failed"; tail -20 "err.$tag"; fail=1; }
  cmp -s "expected.$n" "out.$tag" ||
    { echo "FAIL: $tag: the output differs from gcc -fopenmp's"; diff "expected.$n" "out.$tag"; fail=1; }
}
# count TAG WHAT: the slaves' figure before WHAT, summed
count() {
  grep -ho "[0-9]* $2" logs."$1"/node.*.log 2>/dev/null | awk '{ s += $1 } END { print s + 0 }'
}
gcc -O2 -fopenmp "$dir/$p.c" -o native || exit 1
for n in 2 3 4; do OMP_NUM_THREADS=$n ./native > "expected.$n" 2>/dev/null || exit 1; done
for m in dickpt tickpt; do "$cc" -O2 --ckpt=$m "$dir/$p.c" -o "prog.$m" || exit 1; done
for m in dickpt tickpt; do
  for n in 2 3 4; do
    job "$m.$n" "$n"
    now=$(count "$m.$n" "lock releases sent at once")
    echo "$m on $n nodes: $now releases sent at once, $(count "$m.$n" "sent by the heartbeat thread") by the heartbeat thread"
    [ "$now" -gt 0 ] || { echo "FAIL: $m on $n nodes: no slave sent an awaited release at once"; fail=1; }
  done
done
job dickpt.old 3 CAPE_LOCK_SEND_NOW=0
now=$(count dickpt.old "lock releases sent at once") later=$(count dickpt.old "sent by the heartbeat thread")
echo "CAPE_LOCK_SEND_NOW=0: $now sent at once, $later by the heartbeat thread"
[ "$now" = 0 ] && [ "$later" -gt 0 ] ||
  { echo "FAIL: CAPE_LOCK_SEND_NOW=0 should send every small release from the heartbeat thread"; fail=1; }
job tickpt.spin 3 CAPE_LOCK_SPIN_US=200
spun=$(count tickpt.spin "grants caught while polling without sleeping") slept=$(count tickpt.spin "after sleeping")
echo "CAPE_LOCK_SPIN_US=200: $spun grants caught spinning, $slept after sleeping"
[ $((spun + slept)) -gt 0 ] || { echo "FAIL: CAPE_LOCK_SPIN_US=200: no grant counted"; fail=1; }
CAPE_LOCK_SPIN_US=abc timeout 60 "$cape" run -n 2 ./prog.dickpt > out.bad 2> err.bad &&
  { echo "FAIL: CAPE_LOCK_SPIN_US=abc was accepted"; fail=1; }
grep -q "CAPE_LOCK_SPIN_US='abc': give a number of microseconds" err.bad ||
  { echo "FAIL: CAPE_LOCK_SPIN_US=abc: no clear error"; cat err.bad; fail=1; }
exit $fail

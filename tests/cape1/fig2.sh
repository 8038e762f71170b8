#!/bin/bash
# 003 Fig. 2 (CAPE-1) end to end: a hand-written parallel-sections template with complete
# checkpoints: the master and two processes restarted from its checkpoint compute a band of
# a matrix product each; the master continues from the merged checkpoint and checks the
# product. Prints the sizes of the complete checkpoints and deltas.
# Usage: fig2.sh CAPE FIG2
set -u
for fd in $(ls /proc/$$/fd); do [ "$fd" -gt 2 ] && eval "exec $fd>&-" 2>/dev/null; done
CAPE=$1 FIG2=$2
dir=$(mktemp -d "${TMPDIR:-/tmp}/cape1f.XXXXXX")
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; tail -n 5 "$dir/run.out" "$dir/run.err"; exit 1; }
cd "$dir" || exit 1
CAPE_LOG=monitor:info "$CAPE" monitor -- "$FIG2" 120 > run.out 2> run.err || fail "the Fig. 2 run failed"
grep -q "EXIT-SUCCESS" run.out || fail "the product is wrong"
[ "$(grep -c EXIT-SUCCESS run.out)" = 1 ] || fail "more than one process went past the construct"
cat run.out
for f in original after0 after1 after2 delta0 delta1 delta2 target; do
  [ -f "$f" ] || fail "no $f"
  printf '%-9s %9d bytes  ' "$f" "$(stat -c %s "$f")"; "$CAPE" ckpt stat "$f" | head -1 | sed 's/^[^:]*: //'
done
grep -E "diff\(|create\(" run.err | sed 's/^\[[^]]*\] //' | head -12
echo PASS

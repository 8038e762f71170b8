#!/bin/bash
# Experiment 2 of the papers (003_45ed75503520c8f4.txt Fig. 4-5: CAPE with complete vs
# incremental checkpoints): one matrix product split in three sections, run
#   CAPE-1: 003 Fig. 2 by hand (tests/cape1/programs/fig2.c) under `cape monitor`: complete
#           checkpoints, two processes restarted from the master's, deltas by diff, merge;
#   CAPE-2: the same product as OpenMP (matmul_sections.c) through cape-cc and `cape run -n 3`
#           with --keep-checkpoints: discontinuous incremental checkpoints;
#   CAPE-1 generated: the same OpenMP program through `cape-cc --model=cape1` on `cape run -n
#           3`: the master's complete checkpoint sent to each slave node, deltas sent back
#           (bytes from the monitors' info lines).
# Prints each checkpoint's size and, for CAPE-1, the monitor's create/diff times, and both
# runs' wall times (one run each: a report, not a test). Usage:
#   complete_vs_incremental.sh BUILD_DIR [N...]     (default N: 150 300 600)
set -eu
BUILD=$(cd "$1" && pwd); shift
SIZES=${*:-150 300 600}
CAPE=$BUILD/cli/cape FIG2=$BUILD/tests/cape1/cape1_fig2 CC=$BUILD/translator/cape-cc
here=$(cd "$(dirname "$0")" && pwd)
for fd in $(ls /proc/$$/fd); do [ "$fd" -gt 2 ] && eval "exec $fd>&-" 2>/dev/null; done
work=$(mktemp -d "${TMPDIR:-/tmp}/cape1x.XXXXXX")
trap 'rm -rf "$work"' EXIT
"$CC" -O2 "$here/matmul_sections.c" -o "$work/mm_cape2"
"$CC" --model=cape1 -O2 "$here/matmul_sections.c" -o "$work/mm_cape1"
now() { date +%s.%N; }
size() { stat -c %s "$1"; }
echo "| N | model | checkpoint | bytes | create/diff ms |"
echo "|---|---|---|---|---|"
for n in $SIZES; do
  d1=$work/c1_$n; mkdir -p "$d1"; cd "$d1"
  t0=$(now)
  CAPE_LOG=monitor:info "$CAPE" monitor -- "$FIG2" "$n" > out 2> log
  t1=$(now)
  grep -q EXIT-SUCCESS out
  for f in original after0 after1 after2 delta0 delta1 delta2 target; do
    ms=$(grep -E "(create|diff)\((original, )?$f\)" log | sed -E 's/.* in ([0-9.]+) ms.*/\1/' | head -1)
    [ -z "$ms" ] && ms=$(grep -E "\-> $f:" log | sed -E 's/.* in ([0-9.]+) ms.*/\1/' | head -1)
    echo "| $n | CAPE-1 | $f | $(size "$f") | ${ms:--} |"
  done
  c1_total=$(( $(size original) * 3 + $(size delta0) + $(size delta1) + $(size delta2) ))
  d2=$work/c2_$n; mkdir -p "$d2/ck"; cd "$d2"
  t2=$(now)
  "$CAPE" run -n 3 --keep-checkpoints ck -- "$work/mm_cape2" "$n" > out 2> log
  t3=$(now)
  c2_total=0
  for f in ck/*.dickpt; do
    echo "| $n | CAPE-2 | $(basename "$f") | $(size "$f") | - |"
    c2_total=$((c2_total + $(size "$f")))
  done
  d3=$work/c3_$n; mkdir -p "$d3/tmp"; cd "$d3"
  t4=$(now)
  TMPDIR=$d3/tmp "$CAPE" run -n 3 --log monitor:info -- "$work/mm_cape1" "$n" > out 2> log
  t5=$(now)
  sent=$(grep -E "restart_on\(.*[0-9]+ bytes sent" log | grep -v "restart_on(, " | sed -E 's/.*: ([0-9]+) bytes sent/\1/' | paste -sd+ | bc)
  back=$(cat cape-logs/node.*.log | grep -E "diff\(" | sed -E 's/.*: ([0-9]+) bytes in.*/\1/' | paste -sd+ | bc)
  echo "| $n | CAPE-1 | wall $(echo "$t1 - $t0" | bc) s (cape monitor, parts as local processes); written: original x3 (made, copied, read by 2 restarts) + 3 deltas = $c1_total bytes | | |"
  echo "| $n | CAPE-1 generated | wall $(echo "$t5 - $t4" | bc) s (cape run -n 3); complete checkpoints sent to the slaves: $sent bytes of memory, deltas back: $back bytes; $(cat out) | | |"
  echo "| $n | CAPE-2 | wall $(echo "$t3 - $t2" | bc) s (cape run -n 3); all checkpoints kept: $c2_total bytes; $(cat out) | | |"
done

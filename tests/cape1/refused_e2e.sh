#!/bin/bash
# A program `cape-cc --model=cape1` cannot run right must be refused with a message, never run
# to a wrong result: under `cape run -n 2` and `cape monitor` with 2 parts, a non-zero exit
# status and PATTERN (grep -E) in what cape printed (stderr, or a node's log).
# Usage: refused_e2e.sh CAPE CAPE_CC PROGRAM.c PATTERN
set -u
for fd in $(ls /proc/$$/fd); do [ "$fd" -gt 2 ] && eval "exec $fd>&-" 2>/dev/null; done
CAPE=$1 CC=$2 SRC=$3 PATTERN=$4
dir=$(mktemp -d "${TMPDIR:-/tmp}/cape1r.XXXXXX")
trap 'rm -rf "$dir"' EXIT
"$CC" --model=cape1 -O2 "$SRC" -o "$dir/cape1" -lm 2> "$dir/cc.err" || { echo "FAIL: cape-cc"; cat "$dir/cc.err"; exit 1; }
fail=0
(cd "$dir" && timeout 120 "$CAPE" run -n 2 -- "$dir/cape1" < /dev/null > "$dir/run.out" 2> "$dir/run.err")
rc=$?
if [ $rc = 0 ] || [ $rc = 124 ]; then echo "FAIL: cape run -n 2: exit status $rc"; fail=1; fi
cat "$dir"/cape-logs/* >> "$dir/run.err" 2>/dev/null
grep -Eq "$PATTERN" "$dir/run.err" || { echo "FAIL: cape run -n 2: no message matching '$PATTERN':"; tail -5 "$dir/run.err"; fail=1; }
CAPE1_PARTS=2 TMPDIR=$dir timeout 120 "$CAPE" monitor -- "$dir/cape1" < /dev/null > "$dir/mon.out" 2> "$dir/mon.err"
rc=$?
if [ $rc = 0 ] || [ $rc = 124 ]; then echo "FAIL: cape monitor: exit status $rc"; fail=1; fi
grep -Eq "$PATTERN" "$dir/mon.err" || { echo "FAIL: cape monitor: no message matching '$PATTERN':"; tail -5 "$dir/mon.err"; fail=1; }
[ $fail = 0 ] || exit 1
echo "PASS: refused with '$(grep -Eo "$PATTERN" "$dir/run.err" | head -1)' under cape run and cape monitor"

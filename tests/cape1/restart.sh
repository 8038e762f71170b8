#!/bin/bash
# CAPE-1 end to end: a program checkpointed from outside mid-computation (cape checkpoint)
# and restarted in a new process (cape restart) finishes with the output of an uninterrupted
# run; the original goes on undisturbed; another binary's restart, a corrupt file and a
# truncated one are refused with a clear message.
# Usage: restart.sh CAPE VICTIM OTHER_VICTIM REFUSALS
set -u
# Only the standard streams: a complete checkpoint refuses what it cannot reopen (pipes).
for fd in $(ls /proc/$$/fd); do [ "$fd" -gt 2 ] && eval "exec $fd>&-" 2>/dev/null; done
CAPE=$1 VICTIM=$2 OTHER=$3 REFUSALS=$4
dir=$(mktemp -d "${TMPDIR:-/tmp}/cape1.XXXXXX")
pid=0  # a program still running (0: none; never `kill 0`, which is the whole process group)
trap '[ "$pid" -gt 0 ] && kill "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; for f in "$dir"/*.out "$dir"/*.err; do echo "--- $f"; tail -5 "$f"; done; exit 1; }

head -c 65536 /dev/urandom > "$dir/data"
"$VICTIM" "$dir/data" > "$dir/full.out" 2>/dev/null || fail "the uninterrupted run failed"
grep -q EXIT-SUCCESS "$dir/full.out" || fail "the uninterrupted run did not finish"

for round in 1 2 3; do
  "$VICTIM" "$dir/data" > "$dir/orig.out" 2> "$dir/orig.err" &
  pid=$!
  for _ in $(seq 200); do grep -q ready "$dir/orig.err" 2>/dev/null && break; sleep 0.05; done
  sleep 0.$((round * 2))
  "$CAPE" checkpoint "$pid" "$dir/ck.dickpt" > "$dir/checkpoint.out" 2>&1 || fail "cape checkpoint failed"
  cat "$dir/checkpoint.out"
  wait "$pid" || fail "the checkpointed program failed after the checkpoint"
  pid=0
  cmp -s "$dir/orig.out" "$dir/full.out" || fail "the checkpointed program's output differs from an uninterrupted run"

  "$CAPE" restart "$dir/ck.dickpt" > "$dir/restart.out" 2> "$dir/restart.err" || fail "cape restart failed (round $round)"
  grep -q EXIT-SUCCESS "$dir/restart.out" || fail "the restarted program did not finish"
  [ "$(grep result "$dir/restart.out")" = "$(grep result "$dir/full.out")" ] || fail "the restarted program's result differs"
  # What it printed is the end of the uninterrupted run's output (the beginning was flushed
  # before the checkpoint, or is printed again from the stdio buffer the checkpoint holds).
  python3 -c 'import sys; a=open(sys.argv[1],"rb").read(); b=open(sys.argv[2],"rb").read(); sys.exit(0 if b.endswith(a) else 1)' \
    "$dir/restart.out" "$dir/full.out" || fail "the restarted program's output is not the end of the uninterrupted run's"
  echo "round $round: restarted output $(wc -l < "$dir/restart.out") lines, result $(grep -o 'result [0-9a-f]*' "$dir/restart.out")"
done

# A restart in another directory with the descriptor's file elsewhere would fail; the cwd is restored.
"$CAPE" ckpt stat "$dir/ck.dickpt" || fail "cape ckpt stat cannot read a complete checkpoint"
"$CAPE" ckpt dump "$dir/ck.dickpt" | head -20 > "$dir/dump.out" || fail "cape ckpt dump cannot read a complete checkpoint"
grep -q "complete" "$dir/dump.out" || fail "dump does not say complete"
grep -q "executable" "$dir/dump.out" || fail "dump does not show the process section"

# Another binary.
if "$CAPE" restart "$dir/ck.dickpt" -- "$OTHER" > "$dir/other.out" 2> "$dir/other.err"; then fail "another binary was accepted"; fi
grep -q "build id" "$dir/other.err" || fail "the refusal does not name the build id: $(cat "$dir/other.err")"
grep -q "result" "$dir/other.out" && fail "the other binary ran"
echo "another binary: $(cat "$dir/other.err")"

# A corrupt file (one byte flipped in the middle) and a truncated one.
size=$(stat -c %s "$dir/ck.dickpt")
cp "$dir/ck.dickpt" "$dir/bad.dickpt"
printf '\xff' | dd of="$dir/bad.dickpt" bs=1 seek=$((size / 2)) conv=notrunc status=none
if "$CAPE" restart "$dir/bad.dickpt" > "$dir/bad.out" 2> "$dir/bad.err"; then fail "a corrupt checkpoint was accepted"; fi
grep -q "checksum mismatch" "$dir/bad.err" || fail "corrupt: $(cat "$dir/bad.err")"
echo "corrupt: $(cat "$dir/bad.err")"
head -c $((size - 1000)) "$dir/ck.dickpt" > "$dir/short.dickpt"
if "$CAPE" restart "$dir/short.dickpt" > /dev/null 2> "$dir/short.err"; then fail "a truncated checkpoint was accepted"; fi
grep -q "short.dickpt" "$dir/short.err" || fail "truncated: $(cat "$dir/short.err")"
echo "truncated: $(cat "$dir/short.err")"
# What a complete checkpoint cannot hold: refused when it is taken, with what to do; the
# program goes on undisturbed.
for what in threads pipe write shared alarm altstack child; do
  "$REFUSALS" "$what" "$dir/written" 2> "$dir/refuse.err" &
  pid=$!
  for _ in $(seq 200); do grep -q ready "$dir/refuse.err" 2>/dev/null && break; sleep 0.05; done
  if "$CAPE" checkpoint "$pid" "$dir/refused.dickpt" > /dev/null 2> "$dir/refuse.msg"; then fail "a program with $what was checkpointed"; fi
  case $what in
    threads) want="threads: complete checkpoints (CAPE-1) hold one thread only" ;;
    pipe) want="open on pipe:" ;;
    write) want="for writing" ;;
    shared) want="shared mapping" ;;
    alarm) want="alarm set (ITIMER_REAL)" ;;
    altstack) want="alternate signal stack" ;;
    child) want="child processes" ;;
  esac
  grep -q "$want" "$dir/refuse.msg" || fail "$what: $(cat "$dir/refuse.msg")"
  [ -e "$dir/refused.dickpt" ] && fail "$what: a file was written"
  kill -0 "$pid" 2>/dev/null || fail "$what: the program did not survive the refused checkpoint"
  kill $(cat "/proc/$pid/task/$pid/children" 2>/dev/null) "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
  pid=0
  echo "refused ($what): $(cat "$dir/refuse.msg")"
done
# A delta is not a process.
"$CAPE" ckpt diff "$dir/ck.dickpt" "$dir/ck.dickpt" -o "$dir/delta.dickpt" > /dev/null 2>&1 || fail "cape ckpt diff of a complete checkpoint failed"
if "$CAPE" restart "$dir/delta.dickpt" > /dev/null 2> "$dir/delta.err"; then fail "a delta was restarted"; fi
grep -q "complete checkpoint" "$dir/delta.err" || fail "delta: $(cat "$dir/delta.err")"
echo "delta: $(cat "$dir/delta.err")"
echo PASS

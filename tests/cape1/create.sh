#!/bin/bash
# CAPE-1 under the monitor: create(file) returns 1 after saving and 0 in the process
# restarted from the file, which finishes with the uninterrupted run's result; `cape monitor
# --checkpoint-every` checkpoints a running program that `cape restart` finishes; create()
# inside a parallel region's window is refused.
# Usage: create.sh CAPE CREATE_VICTIM RESTART_VICTIM
set -u
# Only the standard streams: a complete checkpoint refuses what it cannot reopen (pipes).
for fd in $(ls /proc/$$/fd); do [ "$fd" -gt 2 ] && eval "exec $fd>&-" 2>/dev/null; done
CAPE=$1 VICTIM=$2 LONG=$3
dir=$(mktemp -d "${TMPDIR:-/tmp}/cape1c.XXXXXX")
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; for f in "$dir"/*.out "$dir"/*.err; do echo "--- $f"; tail -5 "$f"; done; exit 1; }

"$CAPE" monitor -- "$VICTIM" "$dir/c.ckpt" > "$dir/first.out" 2> "$dir/first.err" || fail "the monitored run failed"
grep -q "create returned 1" "$dir/first.out" || fail "create() did not return 1 after saving"
grep -q EXIT-SUCCESS "$dir/first.out" || fail "the monitored run did not finish"
"$CAPE" ckpt stat "$dir/c.ckpt" | tee "$dir/stat.out"
"$CAPE" restart "$dir/c.ckpt" > "$dir/second.out" 2> "$dir/second.err" || fail "cape restart of create()'s file failed"
grep -q "create returned 0" "$dir/second.out" || fail "create() did not return 0 in the restarted process"
grep -q "phase 1" "$dir/second.out" && fail "the restarted process ran phase 1 again"
[ "$(grep result "$dir/second.out")" = "$(grep result "$dir/first.out")" ] || fail "the restarted result differs"
echo "create: $(grep result "$dir/first.out") both ways"

# create() inside a parallel region's window: refused, nothing written.
if "$CAPE" monitor -- "$VICTIM" "$dir/w.ckpt" in-window > "$dir/window.out" 2> "$dir/window.err"; then fail "create() in a window was accepted"; fi
grep -q "inside a parallel region" "$dir/window.err" || fail "window refusal: $(cat "$dir/window.err")"
[ -e "$dir/w.ckpt" ] && fail "a file was written for create() in a window"
echo "in a window: $(head -1 "$dir/window.err")"

# Periodic checkpoints of a program that knows nothing of cape.
head -c 65536 /dev/urandom > "$dir/data"
"$LONG" "$dir/data" > "$dir/full.out" 2>/dev/null || fail "the uninterrupted run failed"
"$CAPE" monitor --checkpoint-every 0.3 --checkpoint-file "$dir/p.ckpt" -- "$LONG" "$dir/data" > "$dir/periodic.out" 2> "$dir/periodic.err" &
mon=$!
# The first tick's checkpoint (early in the run: most of the work is still ahead of it).
for _ in $(seq 400); do [ -f "$dir/p.ckpt" ] && break; sleep 0.01; done
cp "$dir/p.ckpt" "$dir/first.ckpt" 2>/dev/null
wait "$mon" || fail "the run with --checkpoint-every failed"
[ -f "$dir/first.ckpt" ] || fail "no periodic checkpoint appeared"
cmp -s "$dir/periodic.out" "$dir/full.out" || fail "periodic checkpoints changed the program's output"
[ -f "$dir/p.ckpt" ] || fail "no periodic checkpoint was written"
"$CAPE" restart "$dir/p.ckpt" > "$dir/prestart.out" 2> "$dir/prestart.err" || fail "cape restart of a periodic checkpoint failed"
[ "$(grep result "$dir/prestart.out")" = "$(grep result "$dir/full.out")" ] || fail "the periodic restart's result differs"
echo "periodic: restarted output $(wc -l < "$dir/prestart.out") lines, $(grep -o 'result [0-9a-f]*' "$dir/prestart.out")"

# Fault tolerance across restarts: the first tick's checkpoint restarted with periodic
# checkpoints on, and the restarted run's own checkpoint restarted again.
"$CAPE" restart --checkpoint-every 0.2 --checkpoint-file "$dir/p2.ckpt" "$dir/first.ckpt" > "$dir/p2run.out" 2> "$dir/p2run.err" \
  || fail "cape restart --checkpoint-every failed"
[ "$(grep result "$dir/p2run.out")" = "$(grep result "$dir/full.out")" ] || fail "the restart with --checkpoint-every gave another result"
[ -f "$dir/p2.ckpt" ] || fail "the restarted run made no periodic checkpoint"
"$CAPE" restart "$dir/p2.ckpt" > "$dir/p3.out" 2> "$dir/p3.err" || fail "cape restart of the restarted run's checkpoint failed"
[ "$(grep result "$dir/p3.out")" = "$(grep result "$dir/full.out")" ] || fail "the second-generation restart's result differs"
echo "restart of a restart: first tick -> $(wc -l < "$dir/p2run.out") lines, its tick -> $(wc -l < "$dir/p3.out") lines, $(grep -o 'result [0-9a-f]*' "$dir/p3.out")"
echo PASS

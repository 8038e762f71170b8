#!/bin/bash
# `cape run --checkpoint-every`: the master's program is checkpointed (complete, CAPE-1) while
# the job runs; `cape restart` of the last checkpoint finishes with the job's result; a bad
# value is refused before anything starts.
# Usage: run_every.sh CAPE RESTART_VICTIM
set -u
# Only the standard streams: a complete checkpoint refuses what it cannot reopen (pipes).
for fd in $(ls /proc/$$/fd); do [ "$fd" -gt 2 ] && eval "exec $fd>&-" 2>/dev/null; done
CAPE=$1 LONG=$2
dir=$(mktemp -d "${TMPDIR:-/tmp}/cape1r.XXXXXX")
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; for f in "$dir"/*.out "$dir"/*.err "$dir"/cape-logs/*; do [ -f "$f" ] && { echo "--- $f"; tail -5 "$f"; }; done; exit 1; }
cd "$dir" || exit 1

head -c 65536 /dev/urandom > data
"$LONG" data > full.out 2>/dev/null || fail "the uninterrupted run failed"
"$CAPE" run -n 2 --any-program --checkpoint-every 0.3 --checkpoint-file job.ckpt -- "$LONG" data > run.out 2> run.err \
  || fail "cape run --checkpoint-every failed"
[ "$(grep result run.out)" = "$(grep result full.out)" ] || fail "periodic checkpoints changed the job's result"
[ -f job.ckpt ] || fail "no checkpoint of the master's program was written"
"$CAPE" ckpt stat job.ckpt > stat.out 2>&1 || fail "cape ckpt stat cannot read the checkpoint"
"$CAPE" restart job.ckpt > restart.out 2> restart.err || fail "cape restart of the job's checkpoint failed"
[ "$(grep result restart.out)" = "$(grep result full.out)" ] || fail "the restart's result differs"
echo "cape run -n 2 --checkpoint-every 0.3: $(stat -c %s job.ckpt) bytes; restarted: $(grep -o 'result [0-9a-f]*' restart.out)"

"$CAPE" run -n 2 --any-program --checkpoint-every 0 -- "$LONG" data > bad.out 2> bad.err && fail "--checkpoint-every 0 was accepted"
grep -q "checkpoint-every.*seconds above 0" bad.err || fail "--checkpoint-every 0: the message does not say what is wrong"
echo "refused: $(head -1 bad.err)"
echo PASS

#!/usr/bin/env bash
# `make demo`'s script (issue 17): it works, its output is short (under 40 lines) and says
# what the issue asks: the results compared, what moved between the nodes, why cape is slower
# on one machine, and the commands to run it by hand.
#   demo.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd)
out=$(mktemp "${TMPDIR:-/tmp}/cape-demo-test.XXXXXX")
trap 'rm -f "$out"' EXIT
fail() { echo "FAIL: $*" >&2; cat "$out" >&2; exit 1; }
"$src/scripts/demo.sh" "$build" > "$out" 2>&1 || fail "the demo exited with status $?"
lines=$(wc -l < "$out")
[ "$lines" -lt 40 ] || fail "the demo printed $lines lines (40 at most)"
for want in "demo: results MATCH, byte for byte" "What moved between the nodes" "'before' checkpoints" \
            "'after' checkpoints" "Why cape is slower on one machine" "Run it again by hand" "cape run -n 3 ./mamult 600"; do
  grep -qF -- "$want" "$out" || fail "the demo does not say: $want"
done
grep -q '^mamult n=600 ' "$out" || fail "no result line"
echo "ok: make demo's script, $lines lines"

#!/usr/bin/env bash
# Error test: cape-translate must fail on FILE and print the diagnostic written in its first
# line as `/* expect: LINE:COL: error: TEXT */` (TEXT may be a prefix of the message).
set -uo pipefail
tr=$1 file=$2 extra=${3:-}
want=$(sed -n '1s|^/\* expect: \(.*\) \*/$|\1|p' "$file")
[ -n "$want" ] || { echo "no expect line in $file" >&2; exit 2; }
dir=$(dirname "$file") base=$(basename "$file")
out=$(cd "$dir" && "$tr" $extra "$base" -o /dev/null 2>&1)
rc=$?
echo "$out"
[ $rc -ne 0 ] || { echo "FAIL: exit status 0" >&2; exit 1; }
grep -qF -- "$base:$want" <<<"$out" || { echo "FAIL: expected '$base:$want'" >&2; exit 1; }
echo "ok"

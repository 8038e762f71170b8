#!/usr/bin/env bash
# Diagnostics are bounded whatever the input (issue 12): 3000 duplicate clauses, a long
# malformed file, thousands of unclosed regions. Each gives a failing status and at most
# 64 KB of messages; a duplicate clause is reported once.
#   bounded.sh CAPE_TRANSLATE
set -euo pipefail
tr=$1
work=$(mktemp -d "${TMPDIR:-/tmp}/cape-bounded.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }
check() {  # FILE MAX_BYTES
  local st=0
  timeout 60 "$tr" "$1" -o /dev/null 2> "$1.err" || st=$?
  [ "$st" = 1 ] || fail "$1: exit status $st (want 1)"
  local n; n=$(wc -c < "$1.err")
  [ "$n" -le "$2" ] || fail "$1: $n bytes of diagnostics (at most $2)"
  echo "$1: $n bytes of diagnostics, $(wc -l < "$1.err") lines"
}
{
  echo 'int a[10]; int main(void) { int i;'
  printf '#pragma omp parallel for'; for _ in $(seq 3000); do printf ' private(i) nowait schedule(static)'; done; echo
  echo 'for (i = 0; i < 10; i++) a[i] = i; return 0; }'
} > dup.c
check dup.c 4096
[ "$(grep -c "appears twice in 'private'" dup.c.err)" = 1 ] || fail "private(i) not reported once"
[ "$(grep -c "'nowait' is not valid" dup.c.err)" = 1 ] || fail "nowait not reported once"
[ "$(grep -c "'schedule' may appear once" dup.c.err)" = 1 ] || fail "schedule not reported once"
# ~400 KB of pragmas and brackets that do not pair.
for _ in $(seq 4000); do
  printf '#pragma omp parallel for private(x) nowait nowait\n{ ( for (i = 0; i < n; i++) ] x; #pragma omp critical\n} } "s\n#pragma omp sections\n#pragma omp section\n'
done > junk.c
check junk.c 65536
{ echo 'int main(void) {'; for _ in $(seq 20000); do printf '#pragma omp parallel\n{\n'; done; } > open.c
check open.c 4096
grep -q "^open.c:40001:1: error: '{' is never closed" open.c.err || fail "$(head -3 open.c.err)"
echo ok

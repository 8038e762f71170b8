#!/usr/bin/env bash
# `cape run --check-races` and locks (docs/critical.md): words written under a critical
# section, an atomic or a lock are not races (each holder's writes carry their own stamp), in
# both models; the same total written without the critical section still is one (the check
# is on).
#   races.sh CAPE_CC CAPE PROGRAMS_DIR
set -euo pipefail
cc=$1 cape=$2 dir=$3
if [ ! -x "$cape" ]; then echo "SKIP: $cape not built" >&2; exit 77; fi
work=$(mktemp -d "${TMPDIR:-/tmp}/cape-races.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }
for m in dickpt tickpt; do
  for p in crit_sum lock_counter atomic_ticket; do
    "$cc" -O1 --ckpt=$m "$dir/$p.c" -o $p 2> cc.err || { cat cc.err >&2; fail "cape-cc $p"; }
    timeout 120 "$cape" run -n 3 --check-races -- ./$p > out 2> err || { cat err >&2; fail "$p ($m) failed"; }
    if grep -i "race" err >&2; then fail "$p ($m): a word written under a lock reported as a race"; fi
  done
  # The control: the critical section left out, nodes write different totals.
  sed 's/#pragma omp critical//' "$dir/crit_sum.c" > racy.c
  "$cc" -O1 --ckpt=$m racy.c -o racy 2> cc.err || { cat cc.err >&2; fail "cape-cc racy.c"; }
  timeout 120 "$cape" run -n 3 --check-races -- ./racy > out 2> err || true
  grep -q "race" err || { cat err >&2; fail "racy.c ($m): no race reported without the critical section"; }
done
echo "ok: no races reported under locks; the unlocked control is reported"

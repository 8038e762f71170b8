#!/usr/bin/env bash
# Session 14: a plain `parallel` region whose team cannot follow omp_set_num_threads /
# OMP_NUM_THREADS (a directive inside an `if` of the region; --model=mt; a shrunk team whose
# region calls a function with a barrier) must stop the program with a message naming the
# region's file:line and what to do, and a failing status: never print a wrong answer.
# And the same region where the team asked for is every node still agrees with gcc -fopenmp.
#   team_refuse.sh CAPE_CC CAPE DIR
set -uo pipefail
cc=$1 cape=$2 dir=$3
if [ ! -x "$cape" ]; then echo "SKIP: $cape not built" >&2; exit 77; fi
work=$(mktemp -d "${TMPDIR:-/tmp}/cape-team-refuse.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

# refuses NAME WHERE HINT N [ENV...] -- CAPE_RUN_FLAGS...: the run must fail, print HINT and
# the region's WHERE on stderr, and nothing on stdout after the region ("cnt").
refuses() {
  local name=$1 where=$2 hint=$3 n=$4; shift 4
  local envs=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
  shift
  local status=0
  env "${envs[@]}" timeout -k 10 120 "$cape" run -n "$n" "$@" -- "./$name" > "$name.out" 2> "$name.err" || status=$?
  if [ "$status" = 0 ]; then fail "$name on $n nodes ${envs[*]}: exit status 0"; cat "$name.out" "$name.err" >&2; return; fi
  if ! grep -q "$where" "$name.err" || ! grep -q "$hint" "$name.err"; then
    fail "$name on $n nodes ${envs[*]}: no message naming $where with '$hint' (status $status)"; cat "$name.err" >&2; return
  fi
  if grep -q "cnt" "$name.out"; then fail "$name: printed a result"; cat "$name.out" >&2; return; fi
  echo "ok: $name on $n nodes ${envs[*]} stops (status $status): $(grep -m1 "$where" "$name.err")"
}

"$cc" -O1 -Wall -fopenmp -DSET=2 "$dir/in_if.c" -o in_if 2> cc.err || { cat cc.err >&2; exit 1; }
"$cc" -O1 -Wall -fopenmp --ckpt=tickpt -DSET=2 "$dir/in_if.c" -o in_if_tickpt 2>> cc.err || { cat cc.err >&2; exit 1; }
"$cc" -O1 -Wall -fopenmp "$dir/in_if.c" -o in_if_env 2>> cc.err || { cat cc.err >&2; exit 1; }
"$cc" -O1 -Wall -fopenmp "$dir/orphan.c" -o orphan 2>> cc.err || { cat cc.err >&2; exit 1; }
"$cc" -O1 -Wall -fopenmp --model=mt "$dir/mt.c" -o mt 2>> cc.err || { cat cc.err >&2; exit 1; }
"$cc" -O1 -Wall -fopenmp --model=cape1 "$dir/mt.c" -o cape1 2>> cc.err || { cat cc.err >&2; exit 1; }
if [ -s cc.err ]; then cat cc.err >&2; fail "cape-cc printed warnings without -v"; fi
# -v: the translator says which region cannot shrink, where.
"$cc" -v -O1 -fopenmp -DSET=2 "$dir/in_if.c" -o /dev/null 2> v.err
grep -q "in_if.c:17:.*note: 'omp for' inside a statement of a 'parallel' region" v.err ||
  { cat v.err >&2; fail "cape-cc -v: no note at in_if.c:17"; }

refuses in_if "in_if.c:13" "move its directives to the top" 3 --
refuses in_if_tickpt "in_if.c:13" "cape run -n 2" 4 --
refuses in_if_env "in_if.c:13" "OMP_NUM_THREADS asks for 2" 3 OMP_NUM_THREADS=2 --
refuses orphan "orphan.c:15" "a function this parallel region calls" 3 --
refuses mt "mt.c:8" "threads-per-node" 2 -- --threads-per-node 2
mkdir -p tmp
refuses cape1 "mt.c:8" "model=cape1 gives a plain region every part" 3 TMPDIR="$work/tmp" --

# The same regions where the team asked for is every node: the answer gcc gives.
gcc -O1 -fopenmp -DSET=2 "$dir/in_if.c" -o native
OMP_NUM_THREADS=2 ./native > expected
status=0
timeout -k 10 120 "$cape" run -n 2 -- ./in_if > actual 2> run.err || status=$?
if [ "$status" != 0 ] || ! cmp -s expected actual; then
  fail "in_if on 2 nodes (status $status)"; cat expected actual run.err >&2
else
  echo "ok: in_if on 2 nodes agrees with gcc: $(cat actual)"
fi
[ "$fails" = 0 ] || { echo "FAIL: $fails check(s)" >&2; exit 1; }
echo "ok: team_refuse"

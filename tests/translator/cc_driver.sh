#!/usr/bin/env bash
# cape-cc as a drop-in compiler: separate compile and link, --keep, -v, --model, errors with
# the user's file and line (through #line), translation errors fail the build.
#   cc_driver.sh CAPE_CC TESTS_TRANSLATOR_DIR
set -euo pipefail
cc=$1 here=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/cape-cc-test.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }

cp "$here/golden/parallel_for.c" main.c
cat > helper.h <<'H'
int helper(int);
H
cat > helper.c <<'H'
#include "helper.h"
int helper(int x) {
  int s = 0;
#pragma omp parallel for
  for (int i = 0; i < x; i++) s += 0;
  return x + s;
}
H
# Separate compilation: objects named as gcc names them, then a link step.
"$cc" -fopenmp -O2 -c main.c
"$cc" -fopenmp -O2 -c helper.c -o sub.o
[ -f main.o ] && [ -f sub.o ] || fail "objects not where gcc puts them"
"$cc" -fopenmp main.o sub.o -o prog
[ -x prog ] || fail "no program linked"
nm prog | grep ' T cape_master' > /dev/null || fail "libcape not linked"
nm prog | grep ' T omp_get_thread_num' > /dev/null || fail "libcape_cc not linked"

# --keep and -v
"$cc" --keep -v -c main.c 2> v.err
[ -f main.cape.c ] || fail "--keep did not keep main.cape.c"
grep -q 'cape_cc_fork' main.cape.c || fail "kept file is not a translation"
grep -q '^cape-cc: .*gcc' v.err || fail "-v did not show the compiler command"

# --model
# --model=mt (issue 13): a parallel for compiles and links (with libgomp); what the
# two-level model does not translate yet is refused at its place.
"$cc" --model=mt main.c -o prog_mt
nm prog_mt | grep ' U GOMP_parallel' > /dev/null || fail "--model=mt: no OpenMP threads in the program"
# critical and ordered compile under mt (issue 18: the node's threads are excluded by the
# monitor; ordered turns are polled, docs/critical.md, "Threads of a node").
printf 'int main(void) {\n  int x = 0;\n#pragma omp parallel\n  {\n#pragma omp critical\n  x++;\n  }\n  return x;\n}\n' > region.c
"$cc" --model=mt -c region.c 2> m.err || fail "--model=mt refused a critical section: $(cat m.err)"
printf 'int a[8];\nint main(void) {\n#pragma omp parallel for ordered\n  for (int i = 0; i < 8; i++) {\n#pragma omp ordered\n    a[i] = i;\n  }\n  return a[7];\n}\n' > ord.c
"$cc" --model=mt -c ord.c 2> m.err || fail "--model=mt refused an ordered block: $(cat m.err)"
if "$cc" --model=bad -c main.c 2> m.err; then fail "--model=bad accepted"; fi
"$cc" --model=single -c main.c

# A C error in the user's code is reported at the user's file and line.
cat > bad.c <<'B'
int a[10];
int main(void) {
#pragma omp parallel for
  for (int i = 0; i < 10; i++)
    a[i] = undeclared_thing;
  return 0;
}
B
if "$cc" -c bad.c 2> bad.err; then fail "bad.c compiled"; fi
grep -q '^bad.c:5:[0-9]*: error: .undeclared_thing' bad.err || fail "gcc error not at bad.c:5: $(cat bad.err)"

# A translation error fails with the translator's message and no compile.
cp "$here/errors/task.c" .
if "$cc" -c task.c 2> task.err; then fail "task.c compiled"; fi
grep -q "task.c:5:15: error: 'omp task' is not supported by CAPE" task.err || fail "$(cat task.err)"
[ ! -f task.o ] || fail "object made despite the error"

# schedule(dynamic) is run as static: one line says so without -v, every place under -v.
cat > dyn.c <<'D'
int a[10];
int main(void) {
#pragma omp parallel for schedule(dynamic, 2)
  for (int i = 0; i < 10; i++) a[i] = i;
  return 0;
}
D
"$cc" -c dyn.c 2> dyn.err
[ "$(wc -l < dyn.err)" = 1 ] || fail "not one line without -v: $(cat dyn.err)"
grep -q '^dyn.c:3:[0-9]*: note: schedule(dynamic) is run as schedule(static, 2)' dyn.err || fail "$(cat dyn.err)"
"$cc" -v -c dyn.c 2> dyn.err
grep -q 'note: schedule(dynamic) is run as schedule(static, 2)' dyn.err || fail "$(cat dyn.err)"

# reduction(op: v) of a type no reduction combines: the C compiler says so where the
# variable is named in the pragma (issue 6).
cat > rtype.c <<'R'
struct pt { int x, y; };
int main(void) {
  struct pt p = {0, 0};
  double f = 1;
#pragma omp parallel for reduction(+: p)
  for (int i = 0; i < 10; i++) p.x += i;
#pragma omp parallel for reduction(^: f)
  for (int i = 0; i < 10; i++) f += i;
  return p.x + (int)f;
}
R
if "$cc" -c rtype.c 2> rtype.err; then fail "rtype.c compiled"; fi
grep -q 'rtype.c:5:39: error: .*reduction(+: p): p must have an arithmetic type' rtype.err || fail "$(cat rtype.err)"
grep -q 'rtype.c:7:39: error: .*reduction(^: f): f must have an integer type' rtype.err || fail "$(cat rtype.err)"

# --ckpt: the model the program tells its monitor at the start of main.
"$cc" --keep --ckpt=tickpt -c main.c
grep -q 'cape_set_ckpt_model(CAPE_CKPT_TICKPT)' main.cape.c || fail "--ckpt=tickpt not in main"
"$cc" --keep -c main.c
grep -q 'cape_set_ckpt_model(CAPE_CKPT_DICKPT)' main.cape.c || fail "dickpt is not the default"
if "$cc" --ckpt=sometimes -c main.c 2> ck.err; then fail "--ckpt=sometimes accepted"; fi
grep -q "unknown checkpoint model 'sometimes'" ck.err || fail "$(cat ck.err)"

# No OpenMP: the same program gcc makes.
cp "$here/../omp/noomp.c" .
gcc -O1 noomp.c -o native
"$cc" -O1 noomp.c -o capecc
# (it makes no runtime call, so it runs without a monitor)
cmp <(./native a b) <(./capecc a b) || fail "noomp output differs"
echo ok

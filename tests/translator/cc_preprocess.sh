#!/usr/bin/env bash
# cape-cc's preprocessing and its command line (issue 12): no input files, --version, -show,
# -E, -MD, --keep (readable and compiled translations), -pedantic, positions in headers,
# cape-translate's modes, SIGINT.
#   cc_preprocess.sh CAPE_CC CAPE_TRANSLATE TESTS_TRANSLATOR_DIR
set -euo pipefail
cc=$1 tr=$2 here=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/cape-cc-pp.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }

# No input file: gcc's words, a failing status, and no link of cape's libraries alone.
if "$cc" 2> none.err; then fail "no input accepted"; fi
grep -q 'no input files' none.err || fail "$(cat none.err)"
if "$cc" -O2 -Wall -o x 2> none.err; then fail "no input accepted"; fi
grep -q 'no input files' none.err || fail "$(cat none.err)"

# --version: cape's and the compiler's.
"$cc" --version > ver.out
grep -q '^cape-cc (cape [0-9.]*)' ver.out || fail "$(cat ver.out)"
grep -qF "$(gcc --version | head -1)" ver.out || fail "gcc's version missing: $(cat ver.out)"

cp "$here/programs/ifdef_openmp.c" repro.c
# -show / --showme: the commands, nothing run, nothing made.
mkdir t
TMPDIR=$work/t "$cc" -show -O1 -DX=1 repro.c -o prog > show.out
[ ! -e prog ] || fail "-show linked a program"
[ -z "$(ls t)" ] || fail "-show made files in TMPDIR: $(ls t)"
[ "$(wc -l < show.out)" = 3 ] || fail "-show printed $(cat show.out)"
grep -q -- '-E .*-fopenmp -O1 -DX=1 repro.c -o ' show.out || fail "no preprocessing command: $(cat show.out)"
grep -q '^cape-translate --preprocessed --name repro.c ' show.out || fail "$(cat show.out)"
tail -1 show.out | grep -q -- '-Wl,-z,now' || fail "no link command: $(cat show.out)"
tail -1 show.out | grep -q -- '-DX=1' && fail "a -D reached the compile of the translation"
"$cc" --showme -c repro.c | grep -q -- ' -c ' || fail "--showme"

# The repro builds (and the translation compiled is the preprocessed one).
"$cc" -O1 --keep repro.c -o prog 2> keep.err
[ -x prog ] || fail "repro not built"
[ ! -s keep.err ] || fail "warnings: $(cat keep.err)"
# --keep: the readable translation keeps the user's text; the compiled one is expanded.
grep -q '^#include <stdio.h>' repro.cape.c || fail "repro.cape.c is not the readable translation"
grep -q '^#ifdef _OPENMP' repro.cape.c || fail "repro.cape.c lost the #ifdef"
grep -q '^#endif' repro.cape.c || fail "repro.cape.c lost the #endif"
grep -q 'extern int printf' repro.cape.pp.c || fail "repro.cape.pp.c is not preprocessed"
grep -q 'cape_cc_fork' repro.cape.pp.c || fail "repro.cape.pp.c is not a translation"

# -E: the unit as cape-cc sees it (cape's omp.h, _OPENMP from -fopenmp).
printf '#include <omp.h>\n#ifdef _OPENMP\nint have_openmp = _OPENMP;\n#endif\n' > e.c
"$cc" -E e.c > e.out
grep -q 'have_openmp = 20' e.out || fail "-E: no _OPENMP"
grep -q 'cape/omp/omp.h' e.out || fail "-E: not cape's omp.h"

# -MD: the dependencies name the user's files, in the file gcc would write.
mkdir inc
cp "$here/programs/inc/params.h" inc/
cp "$here/programs/defines.c" .
"$cc" -MD -DN=10 -Iinc -c defines.c -o obj.o
[ -f obj.o ] && [ -f obj.d ] || fail "-MD: $(ls)"
grep -q '^obj.o: defines.c' obj.d || fail "-MD target: $(cat obj.d)"
grep -q 'inc/params.h' obj.d || fail "-MD: header missing: $(cat obj.d)"
grep -q "cape-cc\." obj.d && fail "-MD names the temporary file: $(cat obj.d)"
# -include and -U reach the preprocessing.
printf '#define EXTRA 42\n' > extra.h
"$cc" -DN=10 -include extra.h -Iinc defines.c -o d1
"$cc" -DN=10 -DEXTRA=1 -UEXTRA -Iinc defines.c -o d2
nm d1 > /dev/null && nm d2 > /dev/null

# Errors point at the user's file and line: in a header, and gcc's own.
mkdir hdr
cat > hdr/k.h <<'H'
static void k(int *a) {
  int i;
#pragma omp parallel for ordered(1)
  for (i = 0; i < 4; i++) a[i] = i;
}
H
printf '#include "k.h"\nint main(void) { int a[4]; k(a); return a[1]; }\n' > useh.c
if "$cc" -Ihdr -c useh.c 2> h.err; then fail "ordered(1) accepted"; fi
grep -q '^hdr/k.h:3:[0-9]*: error: ' h.err || fail "not at hdr/k.h:3: $(cat h.err)"
printf '#include <stdio.h>\n#define TWICE(x) ((x) * 2)\nint main(void) {\n  return TWICE(missing);\n}\n' > g.c
if "$cc" -c g.c 2> g.err; then fail "g.c compiled"; fi
grep -q '^g.c:4:[0-9]*: error: .missing' g.err || fail "gcc error not at g.c:4: $(cat g.err)"

# -pedantic: the translation's line markers cost no warning.
"$cc" -std=c99 -pedantic -Wall -Wextra -O1 -c repro.c -o p.o 2> ped.err
[ ! -s ped.err ] || fail "-pedantic warnings: $(head -5 ped.err)"

# TICKPT registers a region's parameters; one declared `T x[]` is a pointer, and the
# registration must not make gcc warn (-Wsizeof-array-argument, issue 12: NPB CG).
cat > arrparam.c <<'A'
static void scale(double x[], int n, double f) {
  int i;
#pragma omp parallel for
  for (i = 0; i < n; i++) x[i] *= f;
}
int main(void) { double a[4] = {1, 2, 3, 4}; scale(a, 4, 2.0); return (int)a[0]; }
A
"$cc" --ckpt=tickpt -Wall -Wextra -O1 -c arrparam.c 2> ap.err
[ ! -s ap.err ] || fail "warnings: $(cat ap.err)"

# cape-translate: the readable mode by default, -E as cape-cc does.
"$tr" repro.c -o r.c
grep -q '^#include <stdio.h>' r.c || fail "cape-translate is not readable by default"
gcc -fsyntax-only -D_OPENMP -I"$here/../../translator/include" -I"$here/../../runtime/include" r.c \
  || fail "readable translation does not compile"
"$tr" -E -DN=10 -Iinc defines.c -o dpp.c
grep -q 'double v\[10\]' dpp.c || fail "cape-translate -E did not preprocess"
if "$tr" -DN=10 defines.c -o x.c 2> t.err; then fail "-D without -E accepted"; fi
grep -q 'give -E too' t.err || fail "$(cat t.err)"

# SIGINT: the compiler started is stopped and the temporary directory removed.
cat > slowcc <<'S'
#!/bin/sh
echo $$ > "$PIDFILE"
exec sleep 60
S
chmod +x slowcc
rm -rf t && mkdir t
PIDFILE=$work/cc.pid TMPDIR=$work/t CC=$work/slowcc "$cc" -c repro.c &
ccpid=$!
for _ in $(seq 100); do [ -s cc.pid ] && break; sleep 0.1; done
[ -s cc.pid ] || fail "the compiler did not start"
[ -n "$(ls t)" ] || fail "no temporary directory while compiling"
kill -INT $ccpid
st=0; wait $ccpid || st=$?
[ "$st" = 130 ] || fail "cape-cc exit status $st after SIGINT (want 130)"
sleep 0.2
if kill -0 "$(cat cc.pid)" 2> /dev/null; then kill "$(cat cc.pid)"; fail "the compiler survived SIGINT"; fi
[ -z "$(ls t)" ] || fail "temporary directory left: $(ls t)"
echo ok

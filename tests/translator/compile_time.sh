#!/usr/bin/env bash
# Compile time of cape-cc against gcc -fopenmp on a generated 50,000-line OpenMP file
# (issue 12: within 1.5x). Prints the times and their ratio, measured in one run; asserts
# nothing about time (a benchmark, not a test).
#   compile_time.sh CAPE_CC [LINES] [OPT]
set -euo pipefail
cc=$1 lines=${2:-50000} opt=${3:--O1}
work=$(mktemp -d "${TMPDIR:-/tmp}/cape-compile-time.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
# Functions of ~50 lines: a parallel for with a reduction, a region with a for, sections
# and a single, and plain serial code between.
awk -v lines="$lines" 'BEGIN {
  print "#include <stdio.h>\n#include <stdlib.h>\n#include <math.h>\n#define N 1000"
  print "static double A[N], B[N], C[N];"
  n = 5; f = 0
  while (n < lines - 20) {
    printf "double f%d(double x) {\n  int i, j; double s = 0, t = x;\n", f
    print "#pragma omp parallel for reduction(+: s) schedule(static, 4)"
    print "  for (i = 0; i < N; i++) {\n    A[i] = B[i] * x + i;\n    s += A[i] * 0.5;\n  }"
    print "#pragma omp parallel private(j)\n  {"
    print "#pragma omp for\n    for (i = 0; i < N; i++) {\n      for (j = 0; j < 3; j++) C[i] += A[i] * j;\n    }"
    print "#pragma omp sections\n    {\n#pragma omp section\n      B[0] += 1;\n#pragma omp section\n      B[1] += 2;\n    }"
    print "#pragma omp single\n    C[2] = sqrt(fabs(C[2]));\n  }"
    print "  for (i = 0; i < 10; i++) {\n    t = t * 1.0001 + (double)i / (i + 1);\n    if (t > 1e6) t = fmod(t, 97.0);\n  }"
    print "  for (i = 0; i < N; i += 7) s += C[i] - B[i];"
    print "  if (s < 0) s = -s;\n  return s + t;\n}\n"
    n += 33; f++
  }
  printf "int main(void) {\n  double r = 0;\n"
  for (k = 0; k < f; k += 50) printf "  r += f%d(%d.0);\n", k, k
  print "  printf(\"%g\\n\", r);\n  return 0;\n}"
}' > big.c
cp big.c "${KEEP_BIG:-/dev/null}" 2>/dev/null || true
echo "big.c: $(wc -l < big.c) lines, $(grep -c '#pragma omp' big.c) directives"
# Wall time and CPU time (user + system, the compilers' processes included): the machine
# may be shared, and CPU time is what the other jobs do not change.
/usr/bin/time -f '%e %U %S' -o native.time gcc "$opt" -fopenmp -c big.c -o native.o
/usr/bin/time -f '%e %U %S' -o cape.time "$cc" "$opt" -fopenmp -c big.c -o cape.o 2> cc.err || { head -20 cc.err; exit 1; }
read -r gw gu gs < native.time
read -r kw ku ks < cape.time
awk -v gw="$gw" -v gc="$(echo "$gu + $gs" | bc)" -v kw="$kw" -v kc="$(echo "$ku + $ks" | bc)" -v o="$opt" 'BEGIN {
  printf "gcc -fopenmp %s: %.2f s wall, %.2f s CPU; cape-cc %s: %.2f s wall, %.2f s CPU; ratio %.2f (wall), %.2f (CPU)\n",
         o, gw, gc, o, kw, kc, kw / gw, kc / gc }'

/* Issue 10 case 3: locals a region shares, whose address the program never takes, so that at
 * -O2 gcc may keep them in callee-saved registers across the runtime calls. Every node must
 * see the value written inside the region (by `single`, `master`, a section, lastprivate,
 * a reduction) when the region ends. Each function is called a few times, inlined or not;
 * then a loop shows every node's view of the results (each node writes its share of `view`
 * from its own locals). */
#include <stdio.h>

static int in_single(int k) {       /* the program */
  int x = 0;
#pragma omp parallel
  {
#pragma omp single
    x = 42 + k;
  }
  return x;
}

__attribute__((noinline)) static long in_master(long k) {
  long y = -1;
  double d = 0.5;
#pragma omp parallel
  {
#pragma omp master
    {
      y = k * 1000 + 7;
      d = (double)k / 4;
    }
  }
  return y + (long)(d * 100);
}

__attribute__((noinline)) static double in_sections(double v) {
  double a = 0, b = 0;
  int count = 0;
#pragma omp parallel sections
  {
#pragma omp section
    a = v * 2;
#pragma omp section
    b = v * 3;
#pragma omp section
    count = 3;
  }
  return a + b + count;
}

static const int table[40] = {5, 8, 13, 21, 34};

__attribute__((noinline)) static const int *pointer_in_single(int k) {
  const int *p = NULL;
#pragma omp parallel
  {
#pragma omp single
    p = table + k;
  }
  return p;
}

__attribute__((noinline)) static int last_and_sum(int n) {
  int last = -1, s = 0;
#pragma omp parallel for lastprivate(last) reduction(+ : s)
  for (int i = 0; i < n; i++) {
    last = i * 2;
    s += i;
  }
  return last * 100000 + s;
}

/* A caller whose own local lives across a call that runs a region. */
__attribute__((noinline)) static int nested_caller(int k) {
  int mine = k * 3;
  int got = in_single(k);
  return mine + got;
}

int main(void) {
  long r[6] = {0};
  for (int k = 0; k < 3; k++) {
    r[0] += in_single(k);
    r[1] += in_master(k + 1);
    r[2] += (long)in_sections(k + 0.25);
    r[3] += *pointer_in_single(k);
    r[4] += last_and_sum(50 + k);
    r[5] += nested_caller(k);
  }
  long view[48];
#pragma omp parallel for schedule(static)
  for (int i = 0; i < 48; i++) view[i] = r[i % 6];
  for (int i = 0; i < 48; i++) printf("view[%d] = %ld\n", i, view[i]);
  int bad = 0;
  for (int i = 0; i < 48; i++) bad += view[i] != r[i % 6];
  return bad;
}

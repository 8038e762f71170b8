/* firstprivate: every thread's copy starts from the value before the construct, and the
 * original is unchanged afterwards; private copies never travel (on `parallel for`,
 * `parallel`, `for`, `sections`, `single`). */
#include <omp.h>
#include <stdio.h>

#define N 60
int a[N], b[N], c[8], d[8];

int main(void) {
  int base = 100, step = 3, off = 5, tag = 9, from = 1000, mark = 7;
#pragma omp parallel for firstprivate(base, step)
  for (int i = 0; i < N; i++) {
    a[i] = base + i;
    base += step;  /* the thread's own copy moves on */
  }
#pragma omp parallel firstprivate(off) private(tag)
  {
    int t = omp_get_thread_num();
    off += t;
    tag = t * 10;
    /* On worksharing constructs firstprivate takes variables shared in the region. */
#pragma omp for firstprivate(from)
    for (int i = 0; i < N; i++) {
      b[i] = from + off + i;
      from += 2;
    }
#pragma omp sections firstprivate(mark)
    {
#pragma omp section
      c[0] = mark + 1;
#pragma omp section
      c[1] = mark * 2;  /* one thread may run both sections: no writes to mark */
    }
#pragma omp single firstprivate(from)
    c[2] = from++;
    d[t] = off * 100 + tag;
  }
  int seed = 11;
#pragma omp parallel sections firstprivate(seed)
  {
#pragma omp section
    c[3] = seed * 2;
#pragma omp section
    c[4] = seed * 3;
  }
  printf("sections %d %d seed %d\n", c[3], c[4], seed);
  /* a[i] depends on how many iterations the thread ran before i: not printed per element
   * (the schedule is the same natively and on CAPE, so the sums agree). */
  long sa = 0, sb = 0;
  for (int i = 0; i < N; i++) sa += a[i], sb += b[i];
  printf("base %d step %d off %d tag %d from %d mark %d\n", base, step, off, tag, from, mark);
  printf("sa %ld sb %ld c %d %d %d d %d %d %d\n", sa, sb, c[0], c[1], c[2], d[0], d[1], d[2]);
  return 0;
}

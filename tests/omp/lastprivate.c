/* lastprivate: the variable takes the value of the sequentially last iteration (or the
 * lexically last section) whichever node ran it. With schedule(static) on 3 threads the
 * last iteration is thread 2's (a slave); with schedule(static, 7) over 100 iterations the
 * last chunk (98, 99) is chunk 14, thread 14 % 3 = 2; with 2 threads, thread 0's (the
 * master). Also: the loop variable itself, firstprivate and lastprivate together, a `for`
 * and `sections` inside a region. (A loop without iterations is left out: gcc then copies
 * its uninitialised private copy back.) */
#include <omp.h>
#include <stdio.h>

#define N 100
int a[N];

int main(void) {
  int i, last = -1, who = -1, sq = 0;
  double x = 0.5;
#pragma omp parallel for lastprivate(last, who)
  for (i = 0; i < N; i++) {
    a[i] = i;
    last = i * 3;
    who = omp_get_thread_num();
  }
  printf("static: last %d who %d\n", last, who);

#pragma omp parallel for schedule(static, 7) lastprivate(i, sq)
  for (i = 0; i < N; i++) sq = i * i;
  printf("chunked: i %d sq %d\n", i, sq);

#pragma omp parallel for firstprivate(x) lastprivate(x)
  for (int k = 0; k < N; k++) x += k;  /* each thread from 0.5; the last thread's sum */
  printf("first+last: x %.1f\n", x);

  int inner = 0, sec = 0;
#pragma omp parallel
  {
#pragma omp for lastprivate(inner)
    for (int k = 10; k > 0; k -= 2) inner = k;  /* the last iteration is k = 2 */
#pragma omp sections lastprivate(sec)
    {
#pragma omp section
      sec = 1;
#pragma omp section
      sec = 2;
#pragma omp section
      sec = 3;
#pragma omp section
      sec = 4;
    }
  }
  printf("region: inner %d sec %d\n", inner, sec);

  int psec = 0;
#pragma omp parallel sections lastprivate(psec)
  {
#pragma omp section
    psec = 10;
#pragma omp section
    psec = 20;
  }
  long s = 0;
  for (int k = 0; k < N; k++) s += a[k];
  printf("parallel sections: psec %d sum %ld\n", psec, s);
  return 0;
}

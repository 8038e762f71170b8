/* sections with firstprivate/lastprivate (a thread may run several sections,
 * so they only read their firstprivate copy), single copyprivate, master then
 * barrier, and a parallel sections with more sections than threads. */
#include <omp.h>
#include <stdio.h>
int data[400];
int main(void) {
  int seed = 7, last = -1, got = 0, lastsec = 0;
  double scale = 1.5;
  int flags[8] = {0};
#pragma omp parallel firstprivate(scale)
  {
#pragma omp sections firstprivate(seed) lastprivate(last)
    {
#pragma omp section
      { int sd = seed + 1; last = sd * 10; for (int i = 0; i < 100; i++) data[i] = sd + i; }
#pragma omp section
      { int sd = seed + 2; last = sd * 10; for (int i = 100; i < 200; i++) data[i] = sd + i; }
#pragma omp section
      { int sd = seed + 3; last = sd * 10; for (int i = 200; i < 400; i++) data[i] = sd * i; }
    }
    int mine;
#pragma omp single copyprivate(mine)
    mine = data[123] + data[321];
    if (mine != data[123] + data[321]) printf("thread %d copyprivate wrong: %d\n", omp_get_thread_num(), mine);
#pragma omp master
    got = mine * 2;
#pragma omp barrier
    scale += got;
#pragma omp single
    printf("single sees got %d scale %.6g\n", got, scale);
  }
#pragma omp parallel sections lastprivate(lastsec)
  {
#pragma omp section
    { flags[0] = 1; lastsec = 1; }
#pragma omp section
    { flags[1] = 2; lastsec = 2; }
#pragma omp section
    { flags[2] = 3; lastsec = 3; }
#pragma omp section
    { flags[3] = 4; lastsec = 4; }
#pragma omp section
    { flags[4] = 5; lastsec = 5; }
  }
  long s = 0; for (int i = 0; i < 400; i++) s += data[i];
  printf("seed %d last %d got %d s %ld lastsec %d flags %d%d%d%d%d scale %.6g\n", seed, last, got, s, lastsec,
         flags[0], flags[1], flags[2], flags[3], flags[4], scale);
  return 0;
}

/* The common idiom: partial sums sized by omp_get_max_threads() (malloc'd),
 * each thread accumulating in partial[tid] inside a for, combined under
 * single; atomic counter; critical append; omp_in_parallel; if(false) region. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#define N 20000
int list[N];
int main(void) {
  int mt = omp_get_max_threads();
  double *partial = calloc(mt, sizeof *partial);
  long *hits = calloc(mt, sizeof *hits);
  int count = 0, nlist = 0;
  double total = 0;
  int inpar = -1, serial_team = -1;
#pragma omp parallel
  {
    int tid = omp_get_thread_num();
#pragma omp for schedule(dynamic, 4)
    for (int i = 0; i < N; i++) {
      partial[tid] += (i % 64) * 0.125;
      if (i % 1000 == 0) hits[tid]++;
      if (i % 777 == 0) {
#pragma omp atomic
        count++;
      }
      if (i % 2500 == 0) {
#pragma omp critical(append)
        list[nlist++] = i;
      }
    }
#pragma omp single
    {
      for (int k = 0; k < omp_get_num_threads(); k++) total += partial[k];
      inpar = omp_in_parallel();
    }
  }
#pragma omp parallel if(0)
  serial_team = omp_get_num_threads() * 10 + omp_in_parallel();
  long h = 0; for (int k = 0; k < mt; k++) h += hits[k];
  long ls = 0; for (int k = 0; k < nlist; k++) ls += list[k];
  printf("total %.6g count %d nlist %d ls %ld hits %ld inpar %d serial %d\n", total, count, nlist, ls, h, inpar, serial_team);
  free(partial); free(hits);
  return 0;
}

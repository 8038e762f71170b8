/* Written, closed, read back and used in a region, then a result file: one node truncating
 * the file while another read it failed about half the runs on 3 local nodes. */
#include <stdio.h>
#include <stdlib.h>

#define N 1000
static double v[N];

int main(void) {
  FILE *f = fopen("numbers.txt", "w");
  if (!f) { perror("numbers.txt"); return 1; }
  for (int i = 0; i < N; i++) fprintf(f, "%d\n", (i * 37) % 1001);
  fclose(f);
  f = fopen("numbers.txt", "r");
  if (!f) { perror("numbers.txt"); return 1; }
  for (int i = 0; i < N; i++)
    if (fscanf(f, "%lf", &v[i]) != 1) { fprintf(stderr, "numbers.txt: short at %d\n", i); return 1; }
  fclose(f);
  double sum = 0;
#pragma omp parallel for reduction(+ : sum)
  for (int i = 0; i < N; i++) sum += v[i] * v[i];
  f = fopen("result.txt", "w");
  if (!f) { perror("result.txt"); return 1; }
  fprintf(f, "sum of squares %.1f\n", sum);
  fclose(f);
  printf("fileio %.1f\n", sum);
  return 0;
}

/* nn reading its records from a text file it wrote first (as Rodinia's reads its list), with the
   nearest found by a min reduction on a packed key. */
#include <stdio.h>
#include <stdlib.h>
#define N 4000
int main(void) {
  FILE *f = fopen("records.txt", "w");
  if (!f) { perror("records.txt"); return 1; }
  unsigned s = 5;
  for (int i = 0; i < N; i++) { s = s * 1103515245u + 12345u; fprintf(f, "%d %d\n", (int)((s >> 8) % 1800) - 900, (int)((s >> 4) % 3600) - 1800); }
  fclose(f);
  int *lat = malloc(sizeof(int) * N), *lon = malloc(sizeof(int) * N), n = 0;
  f = fopen("records.txt", "r");
  while (n < N && fscanf(f, "%d %d", &lat[n], &lon[n]) == 2) n++;
  fclose(f);
  long best = -1;
  long key = 1L << 62;
#pragma omp parallel for reduction(min:key)
  for (int i = 0; i < n; i++) {
    long d = (long)(lat[i] - 300) * (lat[i] - 300) + (long)(lon[i] + 700) * (lon[i] + 700);
    long k = d * 10000 + i;
    if (k < key) key = k;
  }
  best = key % 10000;
  printf("read %d records; nearest %ld at (%d, %d), squared distance %ld\n", n, best, lat[best], lon[best], key / 10000);
  return 0;
}

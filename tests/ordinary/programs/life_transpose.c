/* Game of life on a torus (two boards swapped between generations) and a blocked transpose
   with collapse(2). */
#include <stdio.h>
#include <stdlib.h>
#define L 128
#define GENS 16
#define TN 300
#define BS 32
static unsigned char b1[L][L], b2[L][L];
static int m[TN][TN], mt[TN][TN];
int main(void) {
  unsigned s = 424242;
  for (int i = 0; i < L; i++) for (int j = 0; j < L; j++) { s = s * 1103515245u + 12345u; b1[i][j] = (s >> 16) % 3 == 0; }
  unsigned char (*cur)[L] = b1, (*nxt)[L] = b2;
  for (int g = 0; g < GENS; g++) {
    int alive = 0;
#pragma omp parallel for reduction(+:alive)
    for (int i = 0; i < L; i++)
      for (int j = 0; j < L; j++) {
        int n = 0;
        for (int di = -1; di <= 1; di++)
          for (int dj = -1; dj <= 1; dj++)
            if (di || dj) n += cur[(i + di + L) % L][(j + dj + L) % L];
        nxt[i][j] = n == 3 || (n == 2 && cur[i][j]);
        alive += nxt[i][j];
      }
    unsigned char (*t)[L] = cur; cur = nxt; nxt = t;
    if (g % 4 == 3) printf("life generation %d: %d alive\n", g + 1, alive);
  }
  for (int i = 0; i < TN; i++) for (int j = 0; j < TN; j++) m[i][j] = i * 1000 + j;
#pragma omp parallel for collapse(2)
  for (int ib = 0; ib < TN; ib += BS)
    for (int jb = 0; jb < TN; jb += BS)
      for (int i = ib; i < ib + BS && i < TN; i++)
        for (int j = jb; j < jb + BS && j < TN; j++) mt[j][i] = m[i][j];
  long bad = 0, chk = 0;
  for (int i = 0; i < TN; i++) for (int j = 0; j < TN; j++) { bad += mt[i][j] != j * 1000 + i; chk += (long)mt[i][j] * ((i + 2 * j) % 5); }
  printf("transpose wrong %ld checksum %ld\n", bad, chk);
  return 0;
}

/* Mandelbrot with schedule(dynamic): the image is written as a PGM file (argv[1], default
   mandel.pgm), read back, and its checksum printed. */
#include <stdio.h>
#include <stdlib.h>
#define W 240
#define H 160
#define MAXIT 200
static unsigned char img[H][W];
int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : "mandel.pgm";
  long inside = 0;
#pragma omp parallel for schedule(dynamic) reduction(+:inside)
  for (int y = 0; y < H; y++)
    for (int x = 0; x < W; x++) {
      double cr = -2.2 + 3.0 * x / W, ci = -1.2 + 2.4 * y / H, zr = 0, zi = 0;
      int it = 0;
      while (it < MAXIT && zr * zr + zi * zi < 4.0) { double t = zr * zr - zi * zi + cr; zi = 2 * zr * zi + ci; zr = t; it++; }
      img[y][x] = (unsigned char)(it == MAXIT ? 0 : 255 - it);
      inside += it == MAXIT;
    }
  FILE *f = fopen(path, "wb");
  if (!f) { perror(path); return 1; }
  fprintf(f, "P5\n%d %d\n255\n", W, H);
  fwrite(img, 1, sizeof img, f);
  fclose(f);
  f = fopen(path, "rb");
  if (!f) { perror(path); return 1; }
  unsigned long sum = 0, pos = 0; int c;
  while ((c = fgetc(f)) != EOF) sum = sum * 31 + (unsigned)c + pos++;
  fclose(f);
  printf("mandel %s: %lu bytes, checksum %lu, %ld points inside\n", path, pos, sum, inside);
  return 0;
}

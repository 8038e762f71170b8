/* Structs of arrays reached through pointers (malloc'd and static), a
 * function pointer chosen before the region, a struct array written per element. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
typedef struct { int n; double *x; double *y; int tag[64]; } soa_t;
typedef struct { double re, im; short k; char c; } cell_t;
static double lin(double v) { return 2 * v + 1; }
static double quad(double v) { return v * v - 3; }
static cell_t cells[777];
static void step(soa_t *s, double (*f)(double)) {
#pragma omp parallel for
  for (int i = 0; i < s->n; i++) s->y[i] = f(s->x[i]);
}
int main(void) {
  soa_t *s = malloc(sizeof *s);
  s->n = 4000;
  s->x = malloc(s->n * sizeof(double));
  s->y = calloc(s->n, sizeof(double));
  for (int i = 0; i < s->n; i++) s->x[i] = (i % 50) * 0.5;
  double (*f)(double) = s->n > 100 ? quad : lin;
  step(s, f);
  step(s, lin);
  soa_t *p = s;
#pragma omp parallel
  {
#pragma omp for
    for (int k = 0; k < 64; k++) p->tag[k] = k * k;
#pragma omp for
    for (int i = 0; i < 777; i++) { cells[i].re = i * 0.5; cells[i].im = -i; cells[i].k = (short)(i % 300); cells[i].c = 'a' + i % 26; }
  }
  double sy = 0; for (int i = 0; i < s->n; i++) sy += s->y[i];
  long st = 0; for (int k = 0; k < 64; k++) st += s->tag[k];
  double cr = 0; long ck = 0; int cc = 0;
  for (int i = 0; i < 777; i++) { cr += cells[i].re + cells[i].im; ck += cells[i].k; cc += cells[i].c; }
  printf("sy %.6g st %ld cr %.6g ck %ld cc %d\n", sy, st, cr, ck, cc);
  free(s->x); free(s->y); free(s);
  return 0;
}

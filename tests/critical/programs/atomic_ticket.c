/* A ticket counter with `atomic capture`: every thread takes tickets; each ticket is taken
 * once. Also the structured capture form, and atomic read and write. */
#include <omp.h>
#include <stdio.h>

int next_ticket;
int taken[64];
int flag;

int main(void) {
  int counter = 0;
#pragma omp parallel
  {
    for (int k = 0; k < 3; k++) {
      int my;
#pragma omp atomic capture
      my = next_ticket++;
      taken[my] += 1;
      int old;
#pragma omp atomic capture
      {
        old = counter;
        counter += 2;
      }
      (void)old;
    }
#pragma omp atomic write
    flag = 7;
  }
  int ok = 1;
  for (int i = 0; i < next_ticket; i++) ok = ok && taken[i] == 1;
  int seen;
#pragma omp parallel
  {
    int v;
#pragma omp atomic read
    v = flag;
    if (v != 7) printf("a thread read %d\n", v);
#pragma omp single
    seen = v;
  }
  printf("tickets %d all once %d counter %d flag %d\n", next_ticket, ok, counter, seen);
  return 0;
}

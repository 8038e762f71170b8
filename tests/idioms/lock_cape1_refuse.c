//@ refuse: 'omp_set_lock' is not supported by --model=cape1
/* The lock API under --model=cape1 (no lock service between its parts'
 * processes): refused at the call's file:line:col, as critical is. */
#include <omp.h>
#include <stdio.h>
int main(void) {
  omp_lock_t lk;
  omp_init_lock(&lk);
  long counter = 0;
#pragma omp parallel for
  for (int i = 0; i < 100; i++) {
    omp_set_lock(&lk);
    counter += i;
    omp_unset_lock(&lk);
  }
  omp_destroy_lock(&lk);
  printf("counter %ld\n", counter);
  return 0;
}

/* expect: 5:3: error: 'omp_init_lock' is not supported by CAPE: locks need shared memory */
#include <omp.h>
int main(void) {
  omp_lock_t l;
  omp_init_lock(&l);
  return 0;
}

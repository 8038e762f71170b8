/* Printing in `parallel for` loop bodies: many lines (stdout and stderr) and long lines,
 * each printed whole by one printf call. Sorted, they must equal gcc -fopenmp's. */
#include <stdio.h>
#include <omp.h>

#define MANY 3000
#define LONG_MAX_LEN 100000
static char text[LONG_MAX_LEN + 64];

int main(void) {
  for (int i = 0; i < LONG_MAX_LEN + 63; i++) text[i] = (char)('a' + (i * 7 + i / 26) % 26);
#pragma omp parallel for schedule(static)
  for (int i = 0; i < MANY; i++) {
    printf("iteration %d on thread %d: %ld\n", i, omp_get_thread_num(), (long)i * i % 1009);
    if (i % 10 == 0) fprintf(stderr, "stderr iteration %d\n", i);
  }
  printf("many lines done\n");
  /* Lines of 1 byte to 100000 bytes. */
  static const int len[] = {0, 1, 79, 80, 81, 1023, 1024, 4095, 4096, 4097, 8191, 65536, LONG_MAX_LEN};
  const int nlen = (int)(sizeof len / sizeof len[0]);
#pragma omp parallel for schedule(static, 1)
  for (int i = 0; i < nlen; i++) {
    printf("long %d (%d bytes): %.*s|\n", i, len[i], len[i], text + i);
    /* stderr is unbuffered: glibc writes a line longer than its 8 KiB staging buffer in
     * pieces that other threads' lines may split, natively too. */
    if (len[i] <= 4097) fprintf(stderr, "stderr long %d: %.*s|\n", i, len[i], text + 2 * i);
  }
  printf("long lines done\n");
  return 0;
}

/* Issue 10 case 5: standard input read by the sequential part, before and between regions.
 * The numbers are read in batches of up to 50000 (the first batch with scanf, the others
 * with fgets), each batch processed by a `parallel for` on every node; the output shows what
 * each node's share saw. With `seq 1 K | prog` every node must read the same numbers. */
#include <stdio.h>
#include <stdlib.h>

#define BATCH 50000
static long v[BATCH], w[BATCH];

static int read_batch(int first) {
  int n = 0;
  char line[64];
  if (first) {
    while (n < 30 && scanf("%ld", &v[n]) == 1) n++;
    return n;
  }
  while (n < BATCH && fgets(line, sizeof line, stdin)) v[n++] = atol(line);
  return n;
}

int main(void) {
  long count = 0, total = 0;
  int batches = 0;
  for (;;) {
    int n = read_batch(batches == 0);
    if (batches == 0) {   /* scanf leaves the newline after the last number */
      int c = getchar();
      if (c != '\n' && c != EOF) ungetc(c, stdin);
    }
    printf("batch %d: %d numbers, first %ld, last %ld\n", batches, n, n ? v[0] : -1, n ? v[n - 1] : -1);
#pragma omp parallel for schedule(static)
    for (int i = 0; i < n; i++) w[i] = v[i] * 3 + i % 7;
    long s = 0;
    for (int i = 0; i < n; i++) s += w[i];
    printf("batch %d: sum %ld\n", batches, s);
    count += n;
    total += s;
    batches++;
    if (n < (batches == 1 ? 30 : BATCH)) break;
  }
  printf("read %ld numbers in %d batches, total %ld\n", count, batches, total);
  return 0;
}

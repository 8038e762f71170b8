/* Critical bodies whose writes cape-cc names (docs/critical.md, "Bodies with known writes":
 * no capture at the entry, the exit looks at the targets' pages only), beside data written
 * outside any lock on the same pages, a bit-field, writes through pointers, an if/else, a
 * shared local, and bodies of one lock of which only some have known writes. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

struct flags {
  unsigned seen : 5;
  unsigned odd : 3;
  long sum;
};
struct node {
  long val;
  struct node *next;
};

long total;
int beside[16]; /* written outside any lock, on total's page */
struct flags fl;
long hist[8];
long big_a, big_b, count_n, calls;
struct node n1, n2;
struct node holder = {0, &n1}, *via = &holder;

static long twice(long v) { return 2 * v; }

int main(void) {
  long *cell = malloc(4 * sizeof *cell);
  struct node *nodes = calloc(64, sizeof *nodes);
  for (int i = 0; i < 4; i++) cell[i] = 0;
  long local_total = 0;
#pragma omp parallel
  {
    int t = omp_get_thread_num();
    for (int k = 0; k < 40; k++) {
      beside[t % 16] = k;
#pragma omp critical
      total += k + t;
      beside[(t + 8) % 16] = k + 1;
#pragma omp critical
      {
        fl.seen++;
        if (k % 2) fl.odd = (fl.odd + 1) & 7;
        fl.sum += k;
      }
#pragma omp critical
      total += twice(t); /* a call: captured as before, same lock */
#pragma omp critical(h)
      hist[(k + t) % 8] += 1;
#pragma omp critical(h)
      if (k % 3 == 0)
        big_a += k;
      else
        big_b -= k;
#pragma omp critical(p)
      *cell += 2;
#pragma omp critical(p)
      cell[1 + k % 3] += t;
#pragma omp critical(l)
      local_total += 1;
      struct node *nd = &nodes[k];
#pragma omp critical(n)
      {
        nd->val += t + 1;
        count_n++;
      }
#pragma omp critical(v)
      {
        holder.next = k % 2 ? &n2 : &n1; /* moves where the next line writes: captured whole */
        via->next->val += 1;
      }
#pragma omp critical(c)
      {
        beside[calls % 16] += 0; /* its index is written in the body: captured as before */
        calls++;
      }
    }
  }
  long nsum = 0;
  for (int k = 0; k < 64; k++) nsum += nodes[k].val * (k + 1);
  printf("total %ld seen %u odd %u sum %ld\n", total, fl.seen, fl.odd, fl.sum);
  printf("hist %ld %ld %ld %ld %ld %ld %ld %ld\n", hist[0], hist[1], hist[2], hist[3], hist[4], hist[5], hist[6],
         hist[7]);
  printf("a %ld b %ld cell %ld %ld %ld %ld\n", big_a, big_b, cell[0], cell[1], cell[2], cell[3]);
  printf("local %ld nodes %ld count %ld calls %ld\n", local_total, nsum, count_n, calls);
  printf("n1 %ld n2 %ld\n", n1.val, n2.val);
  free(cell);
  free(nodes);
  return 0;
}

/* A shared linked list: every thread allocates nodes and pushes them under critical (the
 * grant carries the other nodes' allocations: their heap memory and the head pointer). */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

struct item {
  int value;
  struct item *next;
};
struct item *head;

int main(void) {
#pragma omp parallel
  {
    int t = omp_get_thread_num();
    for (int k = 0; k < 5; k++) {
      struct item *it = malloc(sizeof *it);
      it->value = 100 * t + k;
#pragma omp critical
      {
        it->next = head;
        head = it;
      }
    }
  }
  long sum = 0;
  int n = 0;
  for (struct item *p = head; p; p = p->next) sum += p->value, n++;
  printf("items %d sum %ld\n", n, sum);
  while (head) {
    struct item *next = head->next;
    free(head);
    head = next;
  }
  return 0;
}

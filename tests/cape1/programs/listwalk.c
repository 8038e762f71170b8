/* The lead's reproducer (session 14): a list built with malloc in `single`, then a `for` over it
 * in the same region. Under --model=cape1 the other parts died with SIGSEGV at a cape heap
 * address: the arena's growth (mprotect) was not carried (docs/cape1.md). */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
struct node { int key; double val; struct node *next; char name[16]; };
struct node *head = 0;
int main(void) {
  struct node **arr = 0; int n = 0;
#pragma omp parallel
  {
#pragma omp single
    {
      for (int i = 0; i < 500; i++) {
        struct node *p = malloc(sizeof *p);
        p->key = i; p->val = 0; p->next = head; snprintf(p->name, sizeof p->name, "n%03d", i); head = p;
      }
      arr = malloc(500 * sizeof *arr);
      for (struct node *p = head; p; p = p->next) arr[n++] = p;
    }
#pragma omp for
    for (int i = 0; i < n; i++) { arr[i]->val = arr[i]->key * 1.5; arr[i]->name[0] = 'N'; }
  }
  double s = 0; int caps = 0;
  for (struct node *p = head; p; p = p->next) { s += p->val; caps += p->name[0] == 'N'; }
  printf("n %d s %.2f caps %d first %s last %s\n", n, s, caps, head->name, arr[n-1]->name);
  return 0;
}

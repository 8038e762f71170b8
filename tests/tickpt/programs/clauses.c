/* threadprivate, copyin, copyprivate and default(none), with values the test knows (the
 * OpenMP program would be, with 3 threads and a static schedule):
 *
 *   static int tp = 5;  #pragma omp threadprivate(tp)
 *   #pragma omp parallel for                      // region 1: each copy counts its iterations
 *   for (i = 0; i < N; i++) { a[i] = i; tp += t+1; } // thread t's copy: 5 + (t+1) N/3
 *   #pragma omp parallel for copyin(tp)           // region 2: every copy starts from the master's
 *   for (i = 0; i < N; i++) b[i] = tp;            //   so every b[i] = 5 + N/3, and every
 *                                                 //   copy is 5 + N/3 afterwards
 *   #pragma omp parallel for default(none) shared(c) copyprivate-like(x)
 *   for (i = 0; i < N; i++) { c[i] = i + 1; scratch = 1000 + thread; if (i == 0) x = 77; }
 *
 * Region 3's `scratch` is not listed under default(none) (under OpenMP it would be a local
 * of the region): it never travels, so the master keeps its own 1000. `x` is written by the
 * node running iteration 0 only and is registered copyprivate: it travels to every node.
   * Prints "node=.. tp1=.. tp=.. a_sum=.. b_ok=.. c_sum=.. x=.. scratch=..". Argument: tickpt|dickpt. */
#include <stdio.h>
#include "template.h"

#define N 999
static int tp = 5;
static long a[N], b[N], c[N];
static int x, scratch = 7;

static void clauses1(void) { cape_set_shared(a, sizeof a); }
static void body1(int lo, int hi) {
  for (int i = lo; i < hi; ++i) {
    a[i] = i;
    tp += cape_node_id() + 1;
  }
}
static void clauses2(void) {
  cape_set_copyin(&tp, sizeof tp);
  cape_set_shared(b, sizeof b);
}
static void body2(int lo, int hi) {
  for (int i = lo; i < hi; ++i) b[i] = tp;
}
static void clauses3(void) {
  cape_set_default_none();
  cape_set_shared(c, sizeof c);
  cape_set_copyprivate(&x, sizeof x);
}
static void body3(int lo, int hi) {
  for (int i = lo; i < hi; ++i) {
    c[i] = i + 1;
    scratch = 1000 + cape_node_id();
    if (i == 0) x = 77;
  }
}

int main(int argc, char **argv) {
  tpl_model(argc, argv);
  cape_set_threadprivate(&tp, sizeof tp); /* 002 Fig. 6: at the declaration, once */
  tpl_for(N, clauses1, body1, 0);
  int tp1 = tp; /* this node's own copy */
  tpl_for(N, clauses2, body2, 0);
  int b_ok = 0;
  for (int i = 0; i < N; ++i) b_ok += b[i] == 5 + N / cape_num_nodes();
  tpl_for(N, clauses3, body3, 0);
  long c_sum = 0, a_sum = 0;
  for (int i = 0; i < N; ++i) c_sum += c[i], a_sum += a[i];
  printf("node=%d tp1=%d tp=%d a_sum=%ld b_ok=%d c_sum=%ld x=%d scratch=%d\n", cape_node_id(), tp1, tp, a_sum, b_ok,
         c_sum, x, scratch);
  return 0;
}

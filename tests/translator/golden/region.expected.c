/* Translated by cape-translate from region.c: OpenMP directives became CAPE runtime calls (docs/translator.md). */
#include <cape/cc.h>
#line 1 "region.c"
#include <omp.h>
int a[100], who[8];
void f(int n) {
{ /* cape: #pragma omp parallel (region.c:4), every node runs the region; writes meet at barriers and at its end */
  __typeof__(n) cape_pv_5_n;
  CAPE_CC_SAVE(cape_pv_5_n, n);
  static __thread __typeof__(n) cape_pt_5_n __attribute__((unused)); /* for barriers */
  if (cape_cc_fork(0, 1, CAPE_CC_WHOLE_TEAM | CAPE_CC_DEFER_BEGIN | CAPE_CC_SHRINK, "region.c:4")) {
    CAPE_CC_THREADPRIVATES(); /* every file's threadprivate variables */
    cape_set_private((void *)&n, sizeof(__typeof__(n)));
    cape_cc_private((void *)&n, &cape_pv_5_n, sizeof(__typeof__(n)));
    cape_start();
  }
#line 5 "region.c"
  {
  if (cape_cc_tid() < 0) goto cape_skip_5_1; /* outside the team */
#line 6 "region.c"
    n = omp_get_thread_num();
cape_skip_5_1:;
#line 7 "region.c"
{ /* cape: #pragma omp for (region.c:7), this thread's share of the static schedule */
  int cape_lb_1 = (99), cape_ub_1 = (0);
  long long cape_st_1 = -(2);
  int i = cape_lb_1;
  unsigned long long cape_n_1 = cape_st_1 < 0 && cape_lb_1 >= cape_ub_1 ? ((unsigned long long)cape_lb_1 - (unsigned long long)cape_ub_1) / (unsigned long long)-cape_st_1 + 1 : 0;
  static __thread __typeof__(i) cape_pv_1_i;
  CAPE_CC_SAVE(cape_pv_1_i, i);
  static __thread cape_share_t cape_sh_1;
  static __thread unsigned long long cape_b_1, cape_k_1;
  cape_cc_share(&cape_sh_1, cape_n_1, 0, cape_cc_tid());
  /* Fig. 3 line 17: D, on this node's chunks */
  for (cape_b_1 = cape_sh_1.lo; cape_b_1 < cape_sh_1.hi; cape_b_1 += cape_sh_1.stride)
    for (cape_k_1 = cape_b_1; cape_k_1 < cape_sh_1.hi && cape_k_1 - cape_b_1 < cape_sh_1.chunk; ++cape_k_1) {
      i = (__typeof__(i))((unsigned long long)cape_lb_1 + cape_k_1 * (unsigned long long)cape_st_1);
#line 8 "region.c"
                                     a[i] = i;
    }
  CAPE_CC_RESTORE(i, cape_pv_1_i);
  cape_b_1 = cape_k_1 = 0;
  cape_sh_1 = (cape_share_t){0, 0, 0, 0};
}
#line 9 "region.c"
{ /* cape: #pragma omp single (region.c:9), run by thread 0 */
  if (cape_cc_tid() == 0) {
#line 10 "region.c"
    who[0] = n;
  }
  if (cape_cc_distributed()) { /* barrier: the region's private variables stay out of the checkpoint */
    CAPE_CC_SAVE(cape_pt_5_n, n); CAPE_CC_RESTORE(n, cape_pv_5_n);
    { cape_defer_next(); cape_create("after"); } /* Fig. 3 lines 6, 18: this node's part */
    cape_cc_barrier();                   /* the exchange: lines 7-12, 19-23 */
    CAPE_CC_RESTORE(n, cape_pt_5_n);
    CAPE_CC_THREADPRIVATES(); /* every file's threadprivate variables */
    cape_start();
  }
}
#line 11 "region.c"
{ /* cape: #pragma omp master (region.c:11) */
  if (cape_cc_tid() == 0) {
#line 12 "region.c"
    who[1] = 1;
  }
}
#line 13 "region.c"
  if (cape_cc_distributed()) { /* barrier: the region's private variables stay out of the checkpoint */
    CAPE_CC_SAVE(cape_pt_5_n, n); CAPE_CC_RESTORE(n, cape_pv_5_n);
    { cape_defer_next(); cape_create("after"); } /* Fig. 3 lines 6, 18: this node's part */
    cape_cc_barrier();                   /* the exchange: lines 7-12, 19-23 */
    CAPE_CC_RESTORE(n, cape_pt_5_n);
    CAPE_CC_THREADPRIVATES(); /* every file's threadprivate variables */
    cape_start();
  }
#line 14 "region.c"
  }
  CAPE_CC_RESTORE(n, cape_pv_5_n);
  if (cape_cc_distributed())
    { cape_cc_tp_out(); cape_defer_next(); cape_create("after"); } /* Fig. 3 lines 6, 18: this node's part */
  cape_cc_end(0); /* lines 7-12, 19-25; 0 = last_parallel(), decided when translating */
}
#line 14 "region.c"

}

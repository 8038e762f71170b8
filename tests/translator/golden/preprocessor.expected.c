/* Translated by cape-translate from preprocessor.c: OpenMP directives became CAPE runtime calls (docs/translator.md). */
#include <cape/cc.h>
/* The `before` checkpoints of 001_3036025dc34c4021.txt Fig. 3 carry these. */
static cape_share_t cape_desc[CAPE_CC_MAX_NODES] __attribute__((unused));
#line 1 "preprocessor.c"
#include <stdio.h>
int a[10];
int main(void) { cape_set_ckpt_model(CAPE_CKPT_DICKPT);
  int s = 0;
#ifdef NATIVE
  /* a comment before the pragma */
{ /* cape: #pragma omp parallel for (preprocessor.c:7), 001_3036025dc34c4021.txt Fig. 3 by chunks */
#line 7 "preprocessor.c"
                                      _Static_assert(CAPE_CC_TYPE(s) != 0, "reduction(+: s): s must have an arithmetic type (char, short, int, long, long long, signed or unsigned, float or double)");
  int cape_lb_1 = (0), cape_ub_1 = (10);
  long long cape_st_1 = 1;
  int i = cape_lb_1;
  unsigned long long cape_n_1 = cape_st_1 > 0 && cape_lb_1 < cape_ub_1 ? ((unsigned long long)cape_ub_1 - (unsigned long long)cape_lb_1 - 1) / (unsigned long long)cape_st_1 + 1 : 0;
  __typeof__(i) cape_pv_1_i;
  CAPE_CC_SAVE(cape_pv_1_i, i);
  static __thread cape_share_t cape_sh_1;
  static __thread unsigned long long cape_b_1, cape_k_1;
  if (cape_cc_fork_loop(0, 1, CAPE_CC_DEFER_BEGIN, "preprocessor.c:7", cape_n_1, 0)) {
    CAPE_CC_THREADPRIVATES(); /* every file's threadprivate variables */
    cape_reduction((void *)&s, sizeof(s), CAPE_RED_ADD, CAPE_CC_TYPE(s));
    cape_start_own_share();                 /* Fig. 3 lines 2, 16 */
    cape_cc_own_share(&cape_sh_1, cape_n_1, 0);    /* line 3: this node's share, dealt here */
  } else {
    cape_cc_share(&cape_sh_1, cape_n_1, 0, 0); /* serial: every iteration */
  }
  /* Fig. 3 line 17: D, on this node's chunks */
  for (cape_b_1 = cape_sh_1.lo; cape_b_1 < cape_sh_1.hi; cape_b_1 += cape_sh_1.stride)
    for (cape_k_1 = cape_b_1; cape_k_1 < cape_sh_1.hi && cape_k_1 - cape_b_1 < cape_sh_1.chunk; ++cape_k_1) {
      i = (__typeof__(i))((unsigned long long)cape_lb_1 + cape_k_1 * (unsigned long long)cape_st_1);
#line 8 "preprocessor.c"
                               s += a[i] = i;
    }
  CAPE_CC_RESTORE(i, cape_pv_1_i);
  cape_b_1 = cape_k_1 = 0;
  cape_sh_1 = (cape_share_t){0, 0, 0, 0};
  if (cape_cc_distributed())
    { cape_cc_tp_out(); cape_defer_next(); cape_create("after"); } /* Fig. 3 lines 6, 18: this node's part */
  cape_cc_end(1); /* lines 7-12, 19-25; 1 = last_parallel(), decided when translating */
}
#line 8 "preprocessor.c"

#else
  for (int i = 0; i < 10; i++) s += a[i] = 2 * i;
#endif
  printf("%d %d\n", a[9], s);
  return 0;
}

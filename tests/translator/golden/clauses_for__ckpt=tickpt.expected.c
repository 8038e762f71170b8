/* Translated by cape-translate from clauses_for.c: OpenMP directives became CAPE runtime calls (docs/translator.md). */
#include <cape/cc.h>
/* The `before` checkpoints of 001_3036025dc34c4021.txt Fig. 3 carry these. */
static cape_share_t cape_desc[CAPE_CC_MAX_NODES] __attribute__((unused));
#line 1 "clauses_for.c"
#include <stdio.h>
#define N 100
double a[N], b[N];
int main(void) { cape_set_ckpt_model(CAPE_CKPT_TICKPT);
  int i, last = -1, k = 10;
  double s = 0.5, scale = 2.0, t;
{ /* cape: #pragma omp parallel for (clauses_for.c:7), 001_3036025dc34c4021.txt Fig. 3 by chunks */
#line 7 "clauses_for.c"
                                                                                                                        _Static_assert(CAPE_CC_TYPE(s) != 0, "reduction(+: s): s must have an arithmetic type (char, short, int, long, long long, signed or unsigned, float or double)");
  __typeof__(i) cape_lb_1 = (0), cape_ub_1 = (N);
  long long cape_st_1 = 1;
  unsigned long long cape_n_1 = cape_st_1 > 0 && cape_lb_1 < cape_ub_1 ? ((unsigned long long)cape_ub_1 - (unsigned long long)cape_lb_1 - 1) / (unsigned long long)cape_st_1 + 1 : 0;
  __typeof__(t) cape_pv_1_t;
  CAPE_CC_SAVE(cape_pv_1_t, t);
  __typeof__(scale) cape_pv_1_scale;
  CAPE_CC_SAVE(cape_pv_1_scale, scale);
  __typeof__(k) cape_pv_1_k;
  CAPE_CC_SAVE(cape_pv_1_k, k);
  __typeof__(i) cape_pv_1_i;
  CAPE_CC_SAVE(cape_pv_1_i, i);
  __typeof__(last) cape_pv_1_last;
  CAPE_CC_SAVE(cape_pv_1_last, last);
  static __thread cape_share_t cape_sh_1;
  static __thread unsigned long long cape_b_1, cape_k_1;
  if (cape_cc_fork_loop(0, 1, CAPE_CC_DEFER_BEGIN, "clauses_for.c:7", cape_n_1, 0)) {
    cape_cc_share_statics(); /* every translated file's static variables (TICKPT) */
    CAPE_CC_THREADPRIVATES(); /* every file's threadprivate variables */
    cape_set_default_none();
    cape_set_shared((void *)&a, sizeof(__typeof__(a)));
    cape_set_shared((void *)&b, sizeof(__typeof__(b)));
    cape_set_private((void *)&t, sizeof(__typeof__(t)));
    cape_set_firstprivate((void *)&scale, sizeof(__typeof__(scale)));
    cape_set_firstprivate((void *)&k, sizeof(__typeof__(k)));
    cape_set_lastprivate((void *)&i, sizeof(__typeof__(i)));
    cape_set_lastprivate((void *)&last, sizeof(__typeof__(last)));
    cape_reduction((void *)&s, sizeof(s), CAPE_RED_ADD, CAPE_CC_TYPE(s));
    cape_set_order((long)cape_cc_order(cape_n_1, 0));
    cape_start_own_share();                 /* Fig. 3 lines 2, 16 */
    cape_cc_own_share(&cape_sh_1, cape_n_1, 0);    /* line 3: this node's share, dealt here */
  } else {
    cape_cc_share(&cape_sh_1, cape_n_1, 0, 0); /* serial: every iteration */
  }
  /* Fig. 3 line 17: D, on this node's chunks */
  for (cape_b_1 = cape_sh_1.lo; cape_b_1 < cape_sh_1.hi; cape_b_1 += cape_sh_1.stride)
    for (cape_k_1 = cape_b_1; cape_k_1 < cape_sh_1.hi && cape_k_1 - cape_b_1 < cape_sh_1.chunk; ++cape_k_1) {
      i = (__typeof__(i))((unsigned long long)cape_lb_1 + cape_k_1 * (unsigned long long)cape_st_1);
#line 8 "clauses_for.c"
                          {
    t = scale * b[i] + k;
    a[i] = t;
    s += t;
    last = i;
  }
    }
  if (cape_cc_last(&cape_sh_1, cape_n_1)) { /* lastprivate: this node ran the last iteration */
    i = (__typeof__(i))((unsigned long long)cape_lb_1 + cape_n_1 * (unsigned long long)cape_st_1);
  } else {
    CAPE_CC_RESTORE(i, cape_pv_1_i);
    CAPE_CC_RESTORE(last, cape_pv_1_last);
  }
  CAPE_CC_RESTORE(t, cape_pv_1_t);
  CAPE_CC_RESTORE(scale, cape_pv_1_scale);
  CAPE_CC_RESTORE(k, cape_pv_1_k);
  cape_b_1 = cape_k_1 = 0;
  cape_sh_1 = (cape_share_t){0, 0, 0, 0};
  if (cape_cc_distributed())
    { cape_cc_tp_out(); cape_defer_next(); cape_create("after"); } /* Fig. 3 lines 6, 18: this node's part */
  cape_cc_end(1); /* lines 7-12, 19-25; 1 = last_parallel(), decided when translating */
}
#line 13 "clauses_for.c"

  printf("%f %d %d\n", s, i, last);
  return 0;
}

/* cape (TICKPT): this file's variables of static storage are shared (002_2c61c2cb27f62a9a.txt Sect. 3.1), registered before every region's cape_start() (docs/translator.md). */
static void cape_cc_statics(void) {
  cape_set_shared((void *)&a, sizeof(a));
  cape_set_shared((void *)&b, sizeof(b));
}
__attribute__((constructor)) static void cape_cc_statics_init(void) { cape_cc_add_statics(cape_cc_statics); }

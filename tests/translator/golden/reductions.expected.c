/* Translated by cape-translate from reductions.c: OpenMP directives became CAPE runtime calls (docs/translator.md). */
#include <cape/cc.h>
/* The `before` checkpoints of 001_3036025dc34c4021.txt Fig. 3 carry these. */
static cape_share_t cape_desc[CAPE_CC_MAX_NODES] __attribute__((unused));
#line 1 "reductions.c"
#include <stdio.h>
int main(void) { cape_set_ckpt_model(CAPE_CKPT_DICKPT);
  int add = 0, mul = 1, and_ = -1, or_ = 0, xor_ = 0, land = 1, lor = 0;
  long sub = 0;
  float mn = 1e9f;
  double mx = -1e9;
  unsigned char uc = 0;
{ /* cape: #pragma omp parallel for (reductions.c:8), 001_3036025dc34c4021.txt Fig. 3 by chunks */
#line 8 "reductions.c"
                                      _Static_assert(CAPE_CC_TYPE(add) != 0, "reduction(+: add): add must have an arithmetic type (char, short, int, long, long long, signed or unsigned, float or double)");
#line 8 "reductions.c"
                                                        _Static_assert(CAPE_CC_TYPE(mul) != 0, "reduction(*: mul): mul must have an arithmetic type (char, short, int, long, long long, signed or unsigned, float or double)");
#line 8 "reductions.c"
                                                                          _Static_assert(CAPE_CC_TYPE(sub) != 0, "reduction(-: sub): sub must have an arithmetic type (char, short, int, long, long long, signed or unsigned, float or double)");
#line 8 "reductions.c"
                                                                                            _Static_assert(CAPE_CC_IS_INTEGER(and_) != 0, "reduction(&: and_): and_ must have an integer type (char, short, int, long, long long, signed or unsigned)");
#line 8 "reductions.c"
                                                                                                               _Static_assert(CAPE_CC_IS_INTEGER(or_) != 0, "reduction(|: or_): or_ must have an integer type (char, short, int, long, long long, signed or unsigned)");
#line 8 "reductions.c"
                                                                                                                                 _Static_assert(CAPE_CC_IS_INTEGER(xor_) != 0, "reduction(^: xor_): xor_ must have an integer type (char, short, int, long, long long, signed or unsigned)");
#line 8 "reductions.c"
                                                                                                                                                     _Static_assert(CAPE_CC_TYPE(land) != 0, "reduction(&&: land): land must have an arithmetic type (char, short, int, long, long long, signed or unsigned, float or double)");
#line 8 "reductions.c"
                                                                                                                                                                         _Static_assert(CAPE_CC_TYPE(lor) != 0, "reduction(||: lor): lor must have an arithmetic type (char, short, int, long, long long, signed or unsigned, float or double)");
#line 8 "reductions.c"
                                                                                                                                                                                             _Static_assert(CAPE_CC_TYPE(mn) != 0, "reduction(min: mn): mn must have an arithmetic type (char, short, int, long, long long, signed or unsigned, float or double)");
#line 8 "reductions.c"
                                                                                                                                                                                                                _Static_assert(CAPE_CC_TYPE(mx) != 0, "reduction(max: mx): mx must have an arithmetic type (char, short, int, long, long long, signed or unsigned, float or double)");
#line 8 "reductions.c"
                                                                                                                                                                                                                    _Static_assert(CAPE_CC_TYPE(uc) != 0, "reduction(max: uc): uc must have an arithmetic type (char, short, int, long, long long, signed or unsigned, float or double)");
  int cape_lb_1 = (1), cape_ub_1 = (20);
  long long cape_st_1 = 1;
  int i = cape_lb_1;
  unsigned long long cape_n_1 = cape_st_1 > 0 && cape_lb_1 < cape_ub_1 ? ((unsigned long long)cape_ub_1 - (unsigned long long)cape_lb_1 - 1) / (unsigned long long)cape_st_1 + 1 : 0;
  __typeof__(i) cape_pv_1_i;
  CAPE_CC_SAVE(cape_pv_1_i, i);
  static __thread cape_share_t cape_sh_1;
  static __thread unsigned long long cape_b_1, cape_k_1;
  if (cape_cc_fork_loop(0, 1, CAPE_CC_DEFER_BEGIN, "reductions.c:8", cape_n_1, 0)) {
    CAPE_CC_THREADPRIVATES(); /* every file's threadprivate variables */
    cape_reduction((void *)&add, sizeof(add), CAPE_RED_ADD, CAPE_CC_TYPE(add));
    cape_reduction((void *)&mul, sizeof(mul), CAPE_RED_MUL, CAPE_CC_TYPE(mul));
    cape_reduction((void *)&sub, sizeof(sub), CAPE_RED_SUB, CAPE_CC_TYPE(sub));
    cape_reduction((void *)&and_, sizeof(and_), CAPE_RED_BAND, CAPE_CC_TYPE(and_));
    cape_reduction((void *)&or_, sizeof(or_), CAPE_RED_BOR, CAPE_CC_TYPE(or_));
    cape_reduction((void *)&xor_, sizeof(xor_), CAPE_RED_BXOR, CAPE_CC_TYPE(xor_));
    cape_reduction((void *)&land, sizeof(land), CAPE_RED_LAND, CAPE_CC_TYPE(land));
    cape_reduction((void *)&lor, sizeof(lor), CAPE_RED_LOR, CAPE_CC_TYPE(lor));
    cape_reduction((void *)&mn, sizeof(mn), CAPE_RED_MIN, CAPE_CC_TYPE(mn));
    cape_reduction((void *)&mx, sizeof(mx), CAPE_RED_MAX, CAPE_CC_TYPE(mx));
    cape_reduction((void *)&uc, sizeof(uc), CAPE_RED_MAX, CAPE_CC_TYPE(uc));
    cape_start_own_share();                 /* Fig. 3 lines 2, 16 */
    cape_cc_own_share(&cape_sh_1, cape_n_1, 0);    /* line 3: this node's share, dealt here */
  } else {
    cape_cc_share(&cape_sh_1, cape_n_1, 0, 0); /* serial: every iteration */
  }
  /* Fig. 3 line 17: D, on this node's chunks */
  for (cape_b_1 = cape_sh_1.lo; cape_b_1 < cape_sh_1.hi; cape_b_1 += cape_sh_1.stride)
    for (cape_k_1 = cape_b_1; cape_k_1 < cape_sh_1.hi && cape_k_1 - cape_b_1 < cape_sh_1.chunk; ++cape_k_1) {
      i = (__typeof__(i))((unsigned long long)cape_lb_1 + cape_k_1 * (unsigned long long)cape_st_1);
#line 9 "reductions.c"
                               {
    add += i; mul *= (i % 5 == 0) ? 2 : 1; sub -= i; and_ &= ~(1 << i); or_ |= 1 << i;
    xor_ ^= i; land = land && i; lor = lor || i == 7; if (i < mn) mn = i; if (i > mx) mx = i;
    if (i > uc) uc = (unsigned char)i;
  }
    }
  CAPE_CC_RESTORE(i, cape_pv_1_i);
  cape_b_1 = cape_k_1 = 0;
  cape_sh_1 = (cape_share_t){0, 0, 0, 0};
  if (cape_cc_distributed())
    { cape_cc_tp_out(); cape_defer_next(); cape_create("after"); } /* Fig. 3 lines 6, 18: this node's part */
  cape_cc_end(1); /* lines 7-12, 19-25; 1 = last_parallel(), decided when translating */
}
#line 13 "reductions.c"

  printf("%d %d %ld %d %d %d %d %d %g %g %d\n", add, mul, sub, and_, or_, xor_, land, lor, mn, mx, uc);
  return 0;
}

/* Translated by cape-translate from region_clauses.c: OpenMP directives became CAPE runtime calls (docs/translator.md). */
#include <cape/cc.h>
#line 1 "region_clauses.c"
#include <stdio.h>
static int counter;
/* cape: #pragma omp threadprivate(counter): each node keeps its own copy; cape_set_threadprivate() before every region's cape_start() (002_2c61c2cb27f62a9a.txt Fig. 6) */
CAPE_CC_TP_ENTRY(cape_tp_4_counter, counter);
#line 4 "region_clauses.c"
int a[64];
int main(void) { cape_set_ckpt_model(CAPE_CKPT_DICKPT);
  int x = 3, y = 0, last = 0, z = 0;
  long sum = 1;
  counter = 7;
{ /* cape: #pragma omp parallel (region_clauses.c:9), every node runs the region; writes meet at barriers and at its end */
#line 9 "region_clauses.c"
                                                                  _Static_assert(CAPE_CC_TYPE(sum) != 0, "reduction(+: sum): sum must have an arithmetic type (char, short, int, long, long long, signed or unsigned, float or double)");
  CAPE_CC_IN_MEMORY(y);
  CAPE_CC_IN_MEMORY(last);
  CAPE_CC_IN_MEMORY(z);
  __typeof__(x) cape_pv_7_x;
  CAPE_CC_SAVE(cape_pv_7_x, x);
  static __thread __typeof__(x) cape_pt_7_x __attribute__((unused)); /* for barriers */
  static __thread __typeof__(sum) cape_ri_7_sum __attribute__((unused)), cape_rp_7_sum __attribute__((unused)); /* the identity, the partial result */
  if (cape_cc_fork(0, 1, CAPE_CC_WHOLE_TEAM | CAPE_CC_SHRINK, "region_clauses.c:9")) {
    /* copyin: the master's threadprivate values, to every node */
    static __thread __typeof__(counter) cape_ci_7_counter;
    if (cape_master()) {
      CAPE_CC_SAVE(cape_ci_7_counter, counter); CAPE_CC_FLIP(counter);
      cape_set_copyin((void *)&counter, sizeof(counter));
      cape_start();
      CAPE_CC_RESTORE(counter, cape_ci_7_counter);
      cape_create("copyin");
      cape_stop();
      cape_broadcast("copyin");
    } else {
      cape_receive("copyin");
      cape_inject("copyin");
    }
    CAPE_CC_THREADPRIVATES(); /* every file's threadprivate variables */
    cape_set_threadprivate((void *)&counter, sizeof(__typeof__(counter)));
    cape_set_firstprivate((void *)&x, sizeof(__typeof__(x)));
    cape_reduction((void *)&sum, sizeof(sum), CAPE_RED_ADD, CAPE_CC_TYPE(sum));
    cape_cc_private((void *)&x, &cape_pv_7_x, sizeof(__typeof__(x)));
    cape_start();
    CAPE_CC_SAVE(cape_ri_7_sum, sum); /* start() gave it the identity */
  }
#line 10 "region_clauses.c"
  {
  if (cape_cc_tid() < 0) goto cape_skip_7_1; /* outside the team */
#line 11 "region_clauses.c"
    int me = x + counter;
cape_skip_7_1:;
#line 12 "region_clauses.c"
{ /* cape: #pragma omp for (region_clauses.c:12), this thread's share of the static schedule */
#line 12 "region_clauses.c"
                               _Static_assert(CAPE_CC_TYPE(y) != 0, "reduction(max: y): y must have an arithmetic type (char, short, int, long, long long, signed or unsigned, float or double)");
  if (cape_cc_distributed()) { /* barrier: the region's private variables stay out of the checkpoint */
    CAPE_CC_SAVE(cape_rp_7_sum, sum); CAPE_CC_RESTORE(sum, cape_ri_7_sum);
    static __thread __typeof__(me) cape_lt_73_me;
    CAPE_CC_SAVE(cape_pt_7_x, x); CAPE_CC_RESTORE(x, cape_pv_7_x);
    CAPE_CC_SAVE(cape_lt_73_me, me); CAPE_CC_CLEAR(me);
    { cape_defer_next(); cape_create("after"); } /* Fig. 3 lines 6, 18: this node's part */
    cape_cc_barrier();                   /* the exchange: lines 7-12, 19-23 */
    CAPE_CC_RESTORE(x, cape_pt_7_x);
    CAPE_CC_RESTORE(me, cape_lt_73_me);
    CAPE_CC_THREADPRIVATES(); /* every file's threadprivate variables */
    cape_set_threadprivate((void *)&counter, sizeof(__typeof__(counter)));
    cape_reduction((void *)&sum, sizeof(sum), CAPE_RED_ADD, CAPE_CC_TYPE(sum));
    cape_reduction((void *)&y, sizeof(y), CAPE_RED_MAX, CAPE_CC_TYPE(y));
    cape_start();
    CAPE_CC_RESTORE(sum, cape_rp_7_sum); /* this thread's partial result */
  }
#line 13 "region_clauses.c"
  int cape_lb_2 = (0), cape_ub_2 = (64);
  long long cape_st_2 = 1;
  int i = cape_lb_2;
  unsigned long long cape_n_2 = cape_st_2 > 0 && cape_lb_2 < cape_ub_2 ? ((unsigned long long)cape_ub_2 - (unsigned long long)cape_lb_2 - 1) / (unsigned long long)cape_st_2 + 1 : 0;
  static __thread __typeof__(i) cape_pv_2_i;
  CAPE_CC_SAVE(cape_pv_2_i, i);
  static __thread __typeof__(last) cape_pv_2_last;
  CAPE_CC_SAVE(cape_pv_2_last, last);
  static __thread cape_share_t cape_sh_2;
  static __thread unsigned long long cape_b_2, cape_k_2;
  cape_cc_share(&cape_sh_2, cape_n_2, 0, cape_cc_tid());
  /* Fig. 3 line 17: D, on this node's chunks */
  for (cape_b_2 = cape_sh_2.lo; cape_b_2 < cape_sh_2.hi; cape_b_2 += cape_sh_2.stride)
    for (cape_k_2 = cape_b_2; cape_k_2 < cape_sh_2.hi && cape_k_2 - cape_b_2 < cape_sh_2.chunk; ++cape_k_2) {
      i = (__typeof__(i))((unsigned long long)cape_lb_2 + cape_k_2 * (unsigned long long)cape_st_2);
#line 13 "region_clauses.c"
                                 {
      a[i] = me + i;
      if (a[i] > y) y = a[i];
      last = i;
    }
    }
  if (!cape_cc_last(&cape_sh_2, cape_n_2)) { /* lastprivate: only the last iteration's node keeps its value */
    CAPE_CC_RESTORE(last, cape_pv_2_last);
  }
  CAPE_CC_RESTORE(i, cape_pv_2_i);
  cape_b_2 = cape_k_2 = 0;
  cape_sh_2 = (cape_share_t){0, 0, 0, 0};
  if (cape_cc_distributed()) { /* barrier: the region's private variables stay out of the checkpoint */
    CAPE_CC_SAVE(cape_rp_7_sum, sum); CAPE_CC_RESTORE(sum, cape_ri_7_sum);
    static __thread __typeof__(me) cape_lt_73_me;
    CAPE_CC_SAVE(cape_pt_7_x, x); CAPE_CC_RESTORE(x, cape_pv_7_x);
    CAPE_CC_SAVE(cape_lt_73_me, me); CAPE_CC_CLEAR(me);
    { cape_defer_next(); cape_create("after"); } /* Fig. 3 lines 6, 18: this node's part */
    cape_cc_barrier();                   /* the exchange: lines 7-12, 19-23 */
    CAPE_CC_RESTORE(x, cape_pt_7_x);
    CAPE_CC_RESTORE(me, cape_lt_73_me);
    CAPE_CC_THREADPRIVATES(); /* every file's threadprivate variables */
    cape_set_threadprivate((void *)&counter, sizeof(__typeof__(counter)));
    cape_reduction((void *)&sum, sizeof(sum), CAPE_RED_ADD, CAPE_CC_TYPE(sum));
    cape_start();
    CAPE_CC_RESTORE(sum, cape_rp_7_sum); /* this thread's partial result */
  }
}
#line 18 "region_clauses.c"
{ /* cape: #pragma omp sections (region_clauses.c:18), sections round robin over the team */
  static __thread __typeof__(z) cape_pv_5_z;
  CAPE_CC_SAVE(cape_pv_5_z, z);
  if (cape_cc_mine(0)) { /* section 0 */
#line 21 "region_clauses.c"
      z = 1;
  }
  if (cape_cc_mine(1)) { /* section 1 */
#line 23 "region_clauses.c"
      z = 2;
  }
  if (!cape_cc_mine(1)) { /* lastprivate: only the last iteration's node keeps its value */
    CAPE_CC_RESTORE(z, cape_pv_5_z);
  }
  if (cape_cc_distributed()) { /* barrier: the region's private variables stay out of the checkpoint */
    CAPE_CC_SAVE(cape_rp_7_sum, sum); CAPE_CC_RESTORE(sum, cape_ri_7_sum);
    static __thread __typeof__(me) cape_lt_131_me;
    CAPE_CC_SAVE(cape_pt_7_x, x); CAPE_CC_RESTORE(x, cape_pv_7_x);
    CAPE_CC_SAVE(cape_lt_131_me, me); CAPE_CC_CLEAR(me);
    { cape_defer_next(); cape_create("after"); } /* Fig. 3 lines 6, 18: this node's part */
    cape_cc_barrier();                   /* the exchange: lines 7-12, 19-23 */
    CAPE_CC_RESTORE(x, cape_pt_7_x);
    CAPE_CC_RESTORE(me, cape_lt_131_me);
    CAPE_CC_THREADPRIVATES(); /* every file's threadprivate variables */
    cape_set_threadprivate((void *)&counter, sizeof(__typeof__(counter)));
    cape_reduction((void *)&sum, sizeof(sum), CAPE_RED_ADD, CAPE_CC_TYPE(sum));
    cape_start();
    CAPE_CC_RESTORE(sum, cape_rp_7_sum); /* this thread's partial result */
  }
}
#line 25 "region_clauses.c"
{ /* cape: #pragma omp single (region_clauses.c:25), run by thread 0 */
  static __typeof__(me) cape_cp_6_me; /* copyprivate */
  if (cape_cc_tid() == 0) {
#line 26 "region_clauses.c"
    me = 42;
    CAPE_CC_SAVE(cape_cp_6_me, me);
  }
  if (cape_cc_distributed()) { /* barrier: the region's private variables stay out of the checkpoint */
    CAPE_CC_SAVE(cape_rp_7_sum, sum); CAPE_CC_RESTORE(sum, cape_ri_7_sum);
    static __thread __typeof__(me) cape_lt_154_me;
    CAPE_CC_SAVE(cape_pt_7_x, x); CAPE_CC_RESTORE(x, cape_pv_7_x);
    CAPE_CC_SAVE(cape_lt_154_me, me); CAPE_CC_CLEAR(me);
    { cape_defer_next(); cape_create("after"); } /* Fig. 3 lines 6, 18: this node's part */
    cape_cc_barrier();                   /* the exchange: lines 7-12, 19-23 */
    CAPE_CC_RESTORE(x, cape_pt_7_x);
    CAPE_CC_RESTORE(me, cape_lt_154_me);
    CAPE_CC_RESTORE(me, cape_cp_6_me); /* copyprivate */
    CAPE_CC_THREADPRIVATES(); /* every file's threadprivate variables */
    cape_set_threadprivate((void *)&counter, sizeof(__typeof__(counter)));
    cape_reduction((void *)&sum, sizeof(sum), CAPE_RED_ADD, CAPE_CC_TYPE(sum));
    cape_start();
    CAPE_CC_RESTORE(sum, cape_rp_7_sum); /* this thread's partial result */
  }
}
  if (cape_cc_tid() < 0) goto cape_skip_7_2; /* outside the team */
#line 27 "region_clauses.c"
    sum += me;
cape_skip_7_2:;
#line 28 "region_clauses.c"
  }
  CAPE_CC_RESTORE(x, cape_pv_7_x);
  if (cape_cc_distributed())
    { cape_cc_tp_out(); cape_defer_next(); cape_create("after"); } /* Fig. 3 lines 6, 18: this node's part */
  cape_cc_end(1); /* lines 7-12, 19-25; 1 = last_parallel(), decided when translating */
}
#line 28 "region_clauses.c"

  printf("%ld %d %d %d %d\n", sum, y, last, x, z);
  return 0;
}

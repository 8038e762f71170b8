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
  static __thread int cape_s_1;
  if (cape_cc_fork(0, 1, 0, "clauses_for.c:7")) {
    if (cape_master()) {                    /* Fig. 3 line 1 */
      cape_cc_share_statics(); /* every translated file's static variables (TICKPT) */
      cape_set_default_none();
      cape_set_shared((void *)&a, sizeof(__typeof__(a)));
      cape_set_shared((void *)&b, sizeof(__typeof__(b)));
      cape_set_private((void *)&t, sizeof(__typeof__(t)));
      cape_set_firstprivate((void *)&scale, sizeof(__typeof__(scale)));
      cape_set_firstprivate((void *)&k, sizeof(__typeof__(k)));
      cape_set_lastprivate((void *)&i, sizeof(__typeof__(i)));
      cape_set_lastprivate((void *)&last, sizeof(__typeof__(last)));
      cape_reduction((void *)&s, sizeof(s), CAPE_RED_ADD, CAPE_CC_TYPE(s));
      cape_set_shared(cape_desc, sizeof(cape_desc)); /* the `before` shares */
      cape_set_order((long)cape_cc_order(cape_n_1, 0));
      cape_start();                         /* line 2 */
      for (cape_s_1 = 1; cape_s_1 < cape_num_nodes(); ++cape_s_1) { /* line 3: a chunk per slave */
        cape_cc_share(&cape_desc[cape_s_1], cape_n_1, 0, cape_cc_thread_of_node(cape_s_1));
        cape_create("before");             /* line 4 */
        cape_send("before", cape_s_1);      /* line 5 */
      }
      cape_s_1 = 0;
      /* The slaves have their shares: clear them, so that this node's `after` clears them
         everywhere and every node holds the same memory again once the region is over. */
      __builtin_memset(cape_desc, 0, sizeof cape_desc);
      cape_cc_share(&cape_sh_1, cape_n_1, 0, cape_cc_thread_of_node(0)); /* the master's own share */
    } else {
      static __thread __typeof__(s) cape_rv_1_s;
      CAPE_CC_SAVE(cape_rv_1_s, s);
      cape_receive("before");              /* line 14 */
      cape_inject("before");               /* line 15 */
      CAPE_CC_RESTORE(s, cape_rv_1_s);
      cape_cc_share_statics(); /* every translated file's static variables (TICKPT) */
      cape_set_default_none();
      cape_set_shared((void *)&a, sizeof(__typeof__(a)));
      cape_set_shared((void *)&b, sizeof(__typeof__(b)));
      cape_set_private((void *)&t, sizeof(__typeof__(t)));
      cape_set_firstprivate((void *)&scale, sizeof(__typeof__(scale)));
      cape_set_firstprivate((void *)&k, sizeof(__typeof__(k)));
      cape_set_lastprivate((void *)&i, sizeof(__typeof__(i)));
      cape_set_lastprivate((void *)&last, sizeof(__typeof__(last)));
      cape_reduction((void *)&s, sizeof(s), CAPE_RED_ADD, CAPE_CC_TYPE(s));
      cape_set_shared(cape_desc, sizeof(cape_desc)); /* the `before` shares */
      cape_set_order((long)cape_cc_order(cape_n_1, 0));
      cape_start();                         /* line 16 */
      cape_sh_1 = cape_desc[cape_node_id()];
    }
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
  if (cape_cc_distributed()) {
    const int cape_last_1 = 1; /* last_parallel(), decided when translating (docs/translator.md) */
    if (cape_master()) {
      cape_create("after");                /* Fig. 3 line 6: the master's part */
      cape_stop();                          /* line 7 */
      cape_wait_for("after");              /* lines 8, 11: every slave's part merged into it */
      cape_inject("after");                /* line 9 */
      if (!cape_last_1)                         /* line 10: !last_parallel() */
        cape_broadcast("after");          /* line 12 */
    } else {
      cape_create("after");                /* line 18 */
      cape_stop();                          /* line 19 */
      cape_send("after", 0);               /* line 20 */
      if (!cape_last_1) {                       /* line 21 */
        cape_receive("after");            /* line 22 */
        cape_inject("after");             /* line 23 */
      } else {
        cape_cc_exit();                     /* line 25 */
      }
    }
  }
  cape_cc_join();
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

/* Translated by cape-translate from sections.c: OpenMP directives became CAPE runtime calls (docs/translator.md). */
#include <cape/cc.h>
#line 1 "sections.c"
void p1(void);
void p2(void);
void p3(void);
void run(void) {
{ /* cape: #pragma omp parallel sections (sections.c:5), 003_45ed75503520c8f4.txt Fig. 3 */
  if (cape_cc_fork(0, 1, 0, "sections.c:5")) {
    cape_start();
  }
  if (cape_cc_mine(0)) { /* section 0 */
#line 8 "sections.c"
    p1();
  }
  if (cape_cc_mine(1)) { /* section 1 */
#line 10 "sections.c"
    {
      p2();
      p3();
    }
  }
  if (cape_cc_distributed()) {
    const int cape_last_3 = 0; /* last_parallel(), decided when translating (docs/translator.md) */
    if (cape_master()) {
      cape_create("after");                /* Fig. 3 line 6: the master's part */
      cape_stop();                          /* line 7 */
      cape_wait_for("after");              /* lines 8, 11: every slave's part merged into it */
      cape_inject("after");                /* line 9 */
      if (!cape_last_3)                         /* line 10: !last_parallel() */
        cape_broadcast("after");          /* line 12 */
    } else {
      cape_create("after");                /* line 18 */
      cape_stop();                          /* line 19 */
      cape_send("after", 0);               /* line 20 */
      if (!cape_last_3) {                       /* line 21 */
        cape_receive("after");            /* line 22 */
        cape_inject("after");             /* line 23 */
      } else {
        cape_cc_exit();                     /* line 25 */
      }
    }
  }
  cape_cc_join();
}
#line 14 "sections.c"

}

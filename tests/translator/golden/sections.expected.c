/* Translated by cape-translate from sections.c: OpenMP directives became CAPE runtime calls (docs/translator.md). */
#include <cape/cc.h>
#line 1 "sections.c"
void p1(void);
void p2(void);
void p3(void);
void run(void) {
{ /* cape: #pragma omp parallel sections (sections.c:5), 003_45ed75503520c8f4.txt Fig. 3 */
  if (cape_cc_fork(0, 1, CAPE_CC_DEFER_BEGIN, "sections.c:5")) {
    CAPE_CC_THREADPRIVATES(); /* every file's threadprivate variables */
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
  if (cape_cc_distributed())
    { cape_cc_tp_out(); cape_defer_next(); cape_create("after"); } /* Fig. 3 lines 6, 18: this node's part */
  cape_cc_end(0); /* lines 7-12, 19-25; 0 = last_parallel(), decided when translating */
}
#line 14 "sections.c"

}

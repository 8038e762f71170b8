/* Translated by cape-translate from critical_writes.c: OpenMP directives became CAPE runtime calls (docs/translator.md). */
#include <cape/cc.h>
#line 1 "critical_writes.c"
/* Which critical bodies tell their writes (cape_critical_enter_writes: no capture at the entry,
 * docs/critical.md "Bodies with known writes") and which are captured whole. */
struct pt {
  unsigned flag : 1;
  long v;
  struct pt *next;
};
long total, best, where, hist[8], n, list[64];
struct pt one, *head;
long f(long);

void work(int t, long *out, struct pt *p, int i) {
{ /* cape: #pragma omp parallel (critical_writes.c:13), every node runs the region; writes meet at barriers and at its end */
  CAPE_CC_IN_MEMORY(t);
  CAPE_CC_IN_MEMORY(out);
  CAPE_CC_IN_MEMORY(p);
  CAPE_CC_IN_MEMORY(i);
  if (cape_cc_fork(0, 1, CAPE_CC_WHOLE_TEAM | CAPE_CC_DEFER_BEGIN | CAPE_CC_SHRINK, "critical_writes.c:13")) {
    CAPE_CC_THREADPRIVATES(); /* every file's threadprivate variables */
    cape_critical_shared((void *)&t, sizeof(__typeof__(t))); /* may be written under a lock */
    cape_critical_shared((void *)&out, sizeof(__typeof__(out))); /* may be written under a lock */
    cape_critical_shared((void *)&p, sizeof(__typeof__(p))); /* may be written under a lock */
    cape_critical_shared((void *)&i, sizeof(__typeof__(i))); /* may be written under a lock */
    cape_critical_shared((void *)0, 0); /* that is all of them */
    cape_start();
  }
#line 14 "critical_writes.c"
  {
  if (cape_cc_tid() < 0) goto cape_skip_20_1; /* outside the team */
#line 14 "critical_writes.c"

    /* known: a variable, an element, a bit-field (its struct), through pointers, an if/else */
{ /* cape: #pragma omp critical (critical_writes.c:16), the master's lock service orders the nodes (docs/critical.md) */
  if (cape_cc_distributed()) {
    struct cape_write cape_writes_1[] = {{(void *)&(total), sizeof(total)}, {0, 0}};
    cape_critical_enter_writes("", cape_writes_1);
  }
#line 17 "critical_writes.c"
    total += t;
  if (cape_cc_distributed()) cape_critical_exit("");
}
#line 18 "critical_writes.c"
{ /* cape: #pragma omp critical (critical_writes.c:18), the master's lock service orders the nodes (docs/critical.md) */
  if (cape_cc_distributed()) {
    struct cape_write cape_writes_2[] = {{(void *)&(hist [ t % 8 ]), sizeof(hist [ t % 8 ])}, {0, 0}};
    cape_critical_enter_writes("", cape_writes_2);
  }
#line 19 "critical_writes.c"
    hist[t % 8]++;
  if (cape_cc_distributed()) cape_critical_exit("");
}
#line 20 "critical_writes.c"
{ /* cape: #pragma omp critical (critical_writes.c:20), the master's lock service orders the nodes (docs/critical.md) */
  if (cape_cc_distributed()) {
    struct cape_write cape_writes_3[] = {{(void *)&(one), sizeof(one)}, {0, 0}};
    cape_critical_enter_writes("", cape_writes_3);
  }
#line 21 "critical_writes.c"
    one.flag = 1;
  if (cape_cc_distributed()) cape_critical_exit("");
}
#line 22 "critical_writes.c"
{ /* cape: #pragma omp critical (critical_writes.c:22), the master's lock service orders the nodes (docs/critical.md) */
  if (cape_cc_distributed()) {
    struct cape_write cape_writes_4[] = {{(void *)(out), sizeof(*(out))}, {0, 0}};
    cape_critical_enter_writes("", cape_writes_4);
  }
#line 23 "critical_writes.c"
    *out += t;
  if (cape_cc_distributed()) cape_critical_exit("");
}
#line 24 "critical_writes.c"
{ /* cape: #pragma omp critical (critical_writes.c:24), the master's lock service orders the nodes (docs/critical.md) */
  if (cape_cc_distributed()) {
    struct cape_write cape_writes_5[] = {{(void *)(p), sizeof(*(p))}, {(void *)&(head), sizeof(head)}, {0, 0}};
    cape_critical_enter_writes("", cape_writes_5);
  }
#line 25 "critical_writes.c"
    {
      p->next = head;
      head = p;
    }
  if (cape_cc_distributed()) cape_critical_exit("");
}
#line 29 "critical_writes.c"
{ /* cape: #pragma omp critical (critical_writes.c:29), the master's lock service orders the nodes (docs/critical.md) */
  if (cape_cc_distributed()) {
    struct cape_write cape_writes_6[] = {{(void *)&(best), sizeof(best)}, {(void *)&(where), sizeof(where)}, {0, 0}};
    cape_critical_enter_writes("", cape_writes_6);
  }
#line 30 "critical_writes.c"
    if (t < best || (t == best && i < where)) {
      best = t;
      where = i;
    } else
      ;
  if (cape_cc_distributed()) cape_critical_exit("");
}
#line 34 "critical_writes.c"

    /* captured whole: a call, an index the body writes, ++ inside, two writes through
     * pointers, a declaration, a nested construct */
{ /* cape: #pragma omp critical (critical_writes.c:37), the master's lock service orders the nodes (docs/critical.md) */
  if (cape_cc_distributed()) cape_critical_enter("");
#line 38 "critical_writes.c"
    total += f(t);
  if (cape_cc_distributed()) cape_critical_exit("");
}
#line 39 "critical_writes.c"
{ /* cape: #pragma omp critical (critical_writes.c:39), the master's lock service orders the nodes (docs/critical.md) */
  if (cape_cc_distributed()) cape_critical_enter("");
#line 40 "critical_writes.c"
    {
      list[n % 64] = t;
      n++;
    }
  if (cape_cc_distributed()) cape_critical_exit("");
}
#line 44 "critical_writes.c"
{ /* cape: #pragma omp critical (critical_writes.c:44), the master's lock service orders the nodes (docs/critical.md) */
  if (cape_cc_distributed()) cape_critical_enter("");
#line 45 "critical_writes.c"
    list[n++] = t;
  if (cape_cc_distributed()) cape_critical_exit("");
}
#line 46 "critical_writes.c"
{ /* cape: #pragma omp critical (critical_writes.c:46), the master's lock service orders the nodes (docs/critical.md) */
  if (cape_cc_distributed()) cape_critical_enter("");
#line 47 "critical_writes.c"
    {
      p->v = 1;
      out[1] = 2;
    }
  if (cape_cc_distributed()) cape_critical_exit("");
}
#line 50 "critical_writes.c"

    /* a plain target may be what a deeper address reads: captured whole; alone, known */
{ /* cape: #pragma omp critical (critical_writes.c:52), the master's lock service orders the nodes (docs/critical.md) */
  if (cape_cc_distributed()) cape_critical_enter("");
#line 53 "critical_writes.c"
    {
      one.next = p;
      head->next->v = 1;
    }
  if (cape_cc_distributed()) cape_critical_exit("");
}
#line 57 "critical_writes.c"
{ /* cape: #pragma omp critical (critical_writes.c:57), the master's lock service orders the nodes (docs/critical.md) */
  if (cape_cc_distributed()) {
    struct cape_write cape_writes_12[] = {{(void *)(head -> next), sizeof(*(head -> next))}, {0, 0}};
    cape_critical_enter_writes("", cape_writes_12);
  }
#line 58 "critical_writes.c"
    head->next->v = 2;
  if (cape_cc_distributed()) cape_critical_exit("");
}
#line 59 "critical_writes.c"
{ /* cape: #pragma omp critical (critical_writes.c:59), the master's lock service orders the nodes (docs/critical.md) */
  if (cape_cc_distributed()) {
    struct cape_write cape_writes_13[] = {{(void *)&(hist [ list [ i ] ]), sizeof(hist [ list [ i ] ])}, {0, 0}};
    cape_critical_enter_writes("", cape_writes_13);
  }
#line 60 "critical_writes.c"
    hist[list[i]] += 1;
  if (cape_cc_distributed()) cape_critical_exit("");
}
#line 61 "critical_writes.c"
{ /* cape: #pragma omp critical (critical_writes.c:61), the master's lock service orders the nodes (docs/critical.md) */
  if (cape_cc_distributed()) cape_critical_enter("");
#line 62 "critical_writes.c"
    {
      long k = t * 2;
      total += k;
    }
  if (cape_cc_distributed()) cape_critical_exit("");
}
#line 66 "critical_writes.c"
{ /* cape: #pragma omp critical (critical_writes.c:66), the master's lock service orders the nodes (docs/critical.md) */
  if (cape_cc_distributed()) cape_critical_enter("outer");
#line 67 "critical_writes.c"
    {
{ /* cape: #pragma omp critical (critical_writes.c:68), the master's lock service orders the nodes (docs/critical.md) */
  if (cape_cc_distributed()) {
    struct cape_write cape_writes_15[] = {{(void *)&(total), sizeof(total)}, {0, 0}};
    cape_critical_enter_writes("inner", cape_writes_15);
  }
#line 69 "critical_writes.c"
      total++;
  if (cape_cc_distributed()) cape_critical_exit("inner");
}
#line 70 "critical_writes.c"
    }
  if (cape_cc_distributed()) cape_critical_exit("outer");
}
#line 70 "critical_writes.c"

    /* atomics through the lock service: the location first (it names the lock), then the
     * statement's targets; `v = x++` is captured whole (++ inside an expression) */
    long v;
{ /* cape: #pragma omp atomic (critical_writes.c:74), the master's lock service, on the location (docs/critical.md) */
  static __thread void *cape_ax_17_loc;
  if (cape_cc_distributed()) {
    cape_ax_17_loc = (void *)&(hist[i % 8]);
    struct cape_write cape_writes_17[] = {{cape_ax_17_loc, sizeof(hist[i % 8])}, {(void *)&(hist [ i % 8 ]), sizeof(hist [ i % 8 ])}, {0, 0}};
    cape_critical_enter_writes("atomic", cape_writes_17);
  }
#line 75 "critical_writes.c"
    hist[i % 8] += 2;
  if (cape_cc_distributed()) cape_atomic_exit(cape_ax_17_loc);
}
#line 76 "critical_writes.c"
{ /* cape: #pragma omp atomic (critical_writes.c:76), the master's lock service, on the location (docs/critical.md) */
  static __thread void *cape_ax_18_loc;
  if (cape_cc_distributed()) {
    cape_ax_18_loc = (void *)&(best);
    struct cape_write cape_writes_18[] = {{cape_ax_18_loc, sizeof(best)}, {(void *)&(v), sizeof(v)}, {0, 0}};
    cape_critical_enter_writes("atomic", cape_writes_18);
  }
#line 77 "critical_writes.c"
    v = best;
  if (cape_cc_distributed()) cape_atomic_exit(cape_ax_18_loc);
}
#line 78 "critical_writes.c"
{ /* cape: #pragma omp atomic (critical_writes.c:78), the master's lock service, on the location (docs/critical.md) */
  static __thread void *cape_ax_19_loc;
  if (cape_cc_distributed()) { cape_ax_19_loc = (void *)&(n); cape_atomic_enter(cape_ax_19_loc); }
#line 79 "critical_writes.c"
    v = n++;
  if (cape_cc_distributed()) cape_atomic_exit(cape_ax_19_loc);
}
#line 80 "critical_writes.c"
    total += v;
cape_skip_20_1:;
#line 81 "critical_writes.c"
  }
  if (cape_cc_distributed())
    { cape_cc_tp_out(); cape_defer_next(); cape_create("after"); } /* Fig. 3 lines 6, 18: this node's part */
  cape_cc_end(0); /* lines 7-12, 19-25; 0 = last_parallel(), decided when translating */
}
#line 81 "critical_writes.c"

}

/* --tracker inproc: the multithreaded paper's in-process checkpointer (000_2e1115959baa0e7d.txt
 * Sect. 3.3: "directly locking each memory region using the mprotect function in the user-level
 * space"), the baseline the external monitor is compared with (docs/monitor.md, "Threads").
 * protocol.h has the protocol. Everything here runs in the program, with raw system calls:
 * the handler may interrupt anything, malloc included.
 *
 * Under cape every SIGSEGV still passes the monitor (ptrace reports every signal), which
 * delivers it: the fault costs a ptrace stop plus the handler. That is what the in-process way
 * costs under an external monitor, and what the bench measures.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "heap_internal.h" /* sys3, sys6 */
#include "heap_runtime.h"
#include "inproc.h"
#include "protocol.h"

#define HDR ((struct cape_inproc_header *)CAPE_INPROC_SCRATCH_ADDRESS)

/* The program's own SIGSEGV action, chained to by every thread, kept at the first window:
 * written inside a window, so never in tracked memory (the nodes' digests differed at the
 * next region's start): in the runtimes' heap, its address taken before main. */
struct kept {
  struct sigaction previous;
  int installed;
};
static struct kept *kept;
__attribute__((constructor(102))) static void inproc_init(void) {
  cape_runtime_heap_init();
  kept = cape_runtime_calloc(1, sizeof *kept);
}
#define previous (kept->previous)
#define installed (kept->installed)
static __thread int alt_ready;    /* this thread has its alternate signal stack */

static const struct cape_inproc_area *area_of(unsigned long a) {
  for (unsigned long i = 0; i < HDR->nareas; i++)
    if (a >= HDR->areas[i].start && a < HDR->areas[i].end) return &HDR->areas[i];
  return 0;
}

static void say(const char *s) {
  long r = sys3(SYS_write, 2, s, strlen(s));
  (void)r;
}

static void on_segv(int sig, siginfo_t *si, void *uc) {
  unsigned long a = (unsigned long)si->si_addr, page = a & ~4095UL;
  const struct cape_inproc_area *ar = si->si_code == SEGV_ACCERR ? area_of(a) : 0;
  if (ar) {
    /* One fault at a time, signals blocked (a handler faulting in here would wait for
     * itself): two threads faulting on one page both copy it, and the list's first copy
     * must be the one taken before the page became writable. */
    unsigned long all = ~0UL, old;
    sys6(SYS_rt_sigprocmask, SIG_BLOCK, (long)&all, (long)&old, 8, 0, 0);
    while (__atomic_exchange_n(&HDR->lock, 1, __ATOMIC_ACQUIRE)) sys3(SYS_sched_yield, 0, 0, 0);
    unsigned long i = __atomic_fetch_add(&HDR->count, 1, __ATOMIC_ACQ_REL);
    if (i >= CAPE_INPROC_MAX_PAGES) {
      say("cape: --tracker inproc: more than 16384 pages written in one window; use --tracker uffd\n");
      sys3(SYS_kill, sys3(SYS_getpid, 0, 0, 0), SIGKILL, 0);
    }
    memcpy((char *)CAPE_INPROC_SCRATCH_ADDRESS + CAPE_INPROC_ORIGINALS + i * 4096, (void *)page, 4096);
    __atomic_store_n(&HDR->pages[i], page, __ATOMIC_RELEASE);
    sys3(SYS_mprotect, page, 4096, ar->prot);
    __atomic_store_n(&HDR->lock, 0, __ATOMIC_RELEASE);
    sys6(SYS_rt_sigprocmask, SIG_SETMASK, (long)&old, 0, 8, 0, 0);
    return;
  }
  /* Not ours: the program's handler, or the default action (the fault comes again). */
  if (previous.sa_flags & SA_SIGINFO) return previous.sa_sigaction(sig, si, uc);
  if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) return previous.sa_handler(sig);
  signal(SIGSEGV, SIG_DFL);
}

/* The thread that makes the runtime calls writes its frames above the window's boundary,
 * which are protected: its signal frames go to an alternate stack (shared memory: never
 * tracked). Other threads' stacks are never protected. */
static void alt_stack(void) {
  if (alt_ready) return;
  long m = sys6(SYS_mmap, 0, 65536, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (m < 0 && m > -4096) return;
  stack_t st = {.ss_sp = (void *)m, .ss_size = 65536, .ss_flags = 0};
  if (sys3(SYS_sigaltstack, &st, 0, 0) == 0) alt_ready = 1;
}

void cape_inproc_arm(void) {
  if (!kept) { /* never silently untracked */
    say("cape: --tracker inproc: libcape could not keep its signal state (no runtimes' heap)\n");
    sys3(SYS_kill, sys3(SYS_getpid, 0, 0, 0), SIGABRT, 0);
  }
  alt_stack();
  /* At every window: a fault taken with SIGSEGV blocked makes the kernel reset the handler
   * (the monitor served it and the rest of that window). */
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_segv;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART | SA_NODEFER;
  sigaction(SIGSEGV, &sa, installed ? 0 : &previous);
  installed = 1;
  for (unsigned long i = 0; i < HDR->nareas; i++) {
    const struct cape_inproc_area *ar = &HDR->areas[i];
    sys3(SYS_mprotect, ar->start, ar->end - ar->start, ar->prot & ~(unsigned long)PROT_WRITE);
  }
}

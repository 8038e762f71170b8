/* libcape: the stub linked into CAPE programs (runtime/include/cape/cape.h).
 *
 * Each call checks that a tracer is attached, then traps with `int3` (src/protocol.h). The
 * monitor does the work while the program is stopped and answers in rax. The stub writes
 * nothing to static memory: what it keeps (the node's rank, stdio's buffers) is in TLS,
 * which is not tracked, so nothing it does shows up in a checkpoint; its stack frames lie
 * below the boundary it passes and are never tracked.
 *
 * Two more things make ordinary programs behave (docs/monitor.md "The heap and stdio"):
 * - the cape heap (heap_*.c) replaces malloc; cape_start() and cape_stop() tell it where the
 *   windows are;
 * - stdin and stdout get buffers in TLS instead of the heap, so a node's stdio buffers never
 *   travel in a checkpoint, and stdout and stderr are flushed before every trap, so the
 *   monitor can tell what a region printed from what the sequential part printed.
 */
#include "cape/cape.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "heap.h"
#include "heap_runtime.h"
#include "inproc.h"
#include "protocol.h"

/* Marks the executable (or libcape.so) as holding libcape: `cape run` refuses a program
 * without this section, for a program built by gcc -fopenmp (or without OpenMP) would run
 * whole on every node (cli/program_check.cpp). A section of its own survives `strip`.
 * Global: cape-cc links with `-u cape_libcape_marker`, so that a program with no directive
 * (which calls nothing of libcape) holds it too. */
#if defined(__has_attribute) && __has_attribute(retain)
#define CAPE_RETAIN __attribute__((retain))
#else
#define CAPE_RETAIN
#endif
__attribute__((used, section(".cape.libcape"))) CAPE_RETAIN const char cape_libcape_marker[] = "libcape";

/* `syscall; int3` at a known address: the monitor's remote syscalls run here. Right after
 * it, the resume stub (src/protocol.h, CAPE_RESUME_STUB_OFFSET): one syscall, its result
 * stored at -8(%rsp), then rax, rcx, r11, rdi, rsi, rdx popped and `iretq` back to where the
 * thread was (rip, cs, rflags, rsp, ss). The monitor points rsp at a frame in its own
 * scratch mapping, so this writes no program memory; it lets the mprotect tracker serve a
 * fault with one ptrace stop. Then the tag, which also names the scratch memfd. */
__asm__(
    ".text\n"
    ".globl cape_syscall_gadget\n"
    ".hidden cape_syscall_gadget\n"
    ".type cape_syscall_gadget,@function\n"
    "cape_syscall_gadget:\n"
    "  syscall\n"
    "  int3\n"
    "  ud2\n"
    "  .org cape_syscall_gadget + 5, 0xcc\n" /* CAPE_RESUME_STUB_OFFSET */
    "  syscall\n"
    "  movq %rax, -8(%rsp)\n"
    "  popq %rax\n"
    "  popq %rcx\n"
    "  popq %r11\n"
    "  popq %rdi\n"
    "  popq %rsi\n"
    "  popq %rdx\n"
    "  iretq\n"
    "  ud2\n"
    "  .org cape_syscall_gadget + 32, 0xcc\n" /* CAPE_RESUME_TAG_OFFSET */
    "  .asciz \"" CAPE_RESUME_TAG "\"\n"
    /* CAPE_COPY_GADGET_OFFSET: copies runs {src, len} listed at rdx (len 0 ends the list)
     * one after the other to rdi, then int3: the uffd tracker has the program copy its
     * written pages into the monitor's scratch mapping (faster than reading them). */
    "  .org cape_syscall_gadget + 48, 0xcc\n"
    "1:\n"
    "  movq 8(%rdx), %rcx\n"
    "  testq %rcx, %rcx\n"
    "  jz 2f\n"
    "  movq (%rdx), %rsi\n"
    "  rep movsb\n"
    "  addq $16, %rdx\n"
    "  jmp 1b\n"
    "  .org cape_syscall_gadget + 72, 0xcc\n" /* CAPE_COPY_TRAP_OFFSET */
    "2:\n"
    "  int3\n"
    "  ud2\n"
    "  .org cape_syscall_gadget + 80, 0xcc\n" /* CAPE_COPY_TAG_OFFSET */
    "  .asciz \"" CAPE_COPY_TAG "\"\n"
    /* CAPE_SYSLIST_GADGET_OFFSET: the syscalls listed at r12 as {nr, a1, a2, a3, result},
     * nr = -1 ending the list, each result stored in its entry; then int3. */
    "  .org cape_syscall_gadget + 96, 0xcc\n"
    "3:\n"
    "  movq (%r12), %rax\n"
    "  cmpq $-1, %rax\n"
    "  je 4f\n"
    "  movq 8(%r12), %rdi\n"
    "  movq 16(%r12), %rsi\n"
    "  movq 24(%r12), %rdx\n"
    "  syscall\n"
    "  movq %rax, 32(%r12)\n"
    "  addq $40, %r12\n"
    "  jmp 3b\n"
    "  .org cape_syscall_gadget + 136, 0xcc\n" /* CAPE_SYSLIST_TRAP_OFFSET */
    "4:\n"
    "  int3\n"
    "  ud2\n"
    "  .org cape_syscall_gadget + 144, 0xcc\n" /* CAPE_SYSLIST_TAG_OFFSET */
    "  .asciz \"" CAPE_SYSLIST_TAG "\"\n"
    /* CAPE_PUBLISH_GADGET_OFFSET: copies the runs listed at rdx as {dst, src, len} (len 0
     * ends the list), then int3: --sync=lazy's kept pages into the publishing arena. */
    "  .org cape_syscall_gadget + 160, 0xcc\n"
    "5:\n"
    "  movq 16(%rdx), %rcx\n"
    "  testq %rcx, %rcx\n"
    "  jz 6f\n"
    "  movq (%rdx), %rdi\n"
    "  movq 8(%rdx), %rsi\n"
    "  rep movsb\n"
    "  addq $24, %rdx\n"
    "  jmp 5b\n"
    "  .org cape_syscall_gadget + 192, 0xcc\n" /* CAPE_PUBLISH_TRAP_OFFSET */
    "6:\n"
    "  int3\n"
    "  ud2\n"
    "  .org cape_syscall_gadget + 200, 0xcc\n" /* CAPE_PUBLISH_TAG_OFFSET */
    "  .asciz \"" CAPE_PUBLISH_TAG "\"\n"
    ".size cape_syscall_gadget, .-cape_syscall_gadget\n");
extern const char cape_syscall_gadget[];

static long raw3(long nr, long a, long b, long c) {
  long ret;
  __asm__ volatile("syscall" : "=a"(ret) : "a"(nr), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
  return ret;
}

/* 1 when some process traces us (TracerPid in /proc/self/status is not 0). Raw syscalls
 * and a stack buffer: no errno, no static state. */
static int traced(void) {
  char buf[2048];
  long fd = raw3(SYS_open, (long)"/proc/self/status", 0 /* O_RDONLY */, 0);
  if (fd < 0) return 0;
  long n = raw3(SYS_read, fd, (long)buf, sizeof buf - 1);
  raw3(SYS_close, fd, 0, 0);
  /* EFAULT: the monitor's mprotect tracker has made this stack page read-only, and a
   * kernel write into it fails (../shared/KERNEL-FACTS.md): only a monitor does that. */
  if (n == -14 /* -EFAULT */) return 1;
  if (n <= 0) return 0;
  buf[n] = 0;
  static const char key[] = "TracerPid:";
  for (long i = 0; i + (long)sizeof key < n; i++) {
    int match = 1;
    for (unsigned k = 0; k + 1 < sizeof key; k++)
      if (buf[i + k] != key[k]) { match = 0; break; }
    if (!match) continue;
    const char* p = buf + i + sizeof key - 1;
    while (*p == ' ' || *p == '\t') p++;
    return *p >= '1' && *p <= '9';
  }
  return 0;
}

static void no_monitor(const char* call) {
  static const char a[] = "cape: ";
  static const char b[] =
      ": this program uses the CAPE runtime and must run under a CAPE monitor:\n"
      "  cape monitor -- PROGRAM ARGS     (one node)\n"
      "  cape run -n N PROGRAM ARGS       (a cluster)\n";
  unsigned len = 0;
  while (call[len]) len++;
  raw3(SYS_write, 2, (long)a, sizeof a - 1);
  raw3(SYS_write, 2, (long)call, len);
  raw3(SYS_write, 2, (long)b, sizeof b - 1);
  raw3(SYS_exit_group, 127, 0, 0);
}

/* stdio's buffers: per thread storage, never tracked (the main thread's static TLS is
 * excluded from the tracked set, docs/monitor.md). Without them glibc mallocs the buffers
 * on the first use, and a slave's buffer, written inside a region, would travel and
 * overwrite the master's. */
#define CAPE_STDIO_BUFFER 8192
static __thread char stdout_buffer[CAPE_STDIO_BUFFER] __attribute__((aligned(64)));
static __thread char stdin_buffer[CAPE_STDIO_BUFFER] __attribute__((aligned(64)));

/* Before main (priority 101: before the program's own constructors): the heap reserved,
 * stdio given its buffers, in glibc's modes: line buffered on a terminal (for stdin too: a
 * read from a line-buffered stream flushes stdout first, which prompts rely on), fully
 * buffered otherwise. A stream that already has a buffer (a library constructor used it)
 * keeps it, except stdout, which is flushed and switched. stderr stays unbuffered, as glibc
 * makes it (its one-byte buffer is inside the FILE, in libc's data). */
static void forked_child(void);
__attribute__((constructor(101))) static void cape_runtime_init(void) {
  cape_heap_init();
  cape_runtime_heap_init(); /* libgomp's and ld.so's blocks: out of the checkpoints */
  if (stdout->_IO_buf_base) fflush(stdout);
  setvbuf(stdout, stdout_buffer, isatty(1) ? _IOLBF : _IOFBF, sizeof stdout_buffer);
  if (!stdin->_IO_buf_base) setvbuf(stdin, stdin_buffer, isatty(0) ? _IOLBF : _IOFBF, sizeof stdin_buffer);
  /* (glibc keeps the handler in its own data, never tracked; every node registers it alike.) */
  if (!getenv("CAPE_FORK_DETACH") || getenv("CAPE_FORK_DETACH")[0] != '0') pthread_atfork(0, 0, forked_child);
}

/* Known traced: the check reads /proc/self/status (~20 us, issue 14), so it is made until it
 * succeeds once; a monitor never lets go of its program (PTRACE_O_EXITKILL), and a new
 * image (execve) starts with fresh TLS. */
static __thread int known_traced;

/* The deferred calls (protocol.h: r8, r9), in order; a deferred checkpoint name is copied
 * here, so that the caller's buffer may change before the next call (nnamed: the names
 * used). defer_next: the next deferrable call is deferred (cape_defer_next). */
static __thread struct cape_deferred_list deferred_list;
#define deferred_name deferred_list.names
static __thread int ndeferred, nnamed, defer_next;
static int defer(long op, const char* name, long a2, void* boundary);
static struct cape_deferred* deferred_slot(int i) {
  return i < CAPE_MAX_DEFERRED ? &deferred_list.calls[i] : &deferred_list.more[i - CAPE_MAX_DEFERRED];
}
/* The process that deferred the pending calls (a forked child inherits them, and must not
 * make its parent's calls at its exit), and whether this thread is the main one (only the
 * main thread defers clause calls: another might exit before its next runtime call). Asked
 * once per thread; 0 = not known yet. */
static __thread long self_pid;
static __thread int self_main;

/* A process the program forks (fork(): glibc runs forked_child in it) has no monitor: ptrace
 * follows the program's threads (PTRACE_O_TRACECLONE), not the processes it makes, so a trap
 * there would kill it with SIGTRAP; and what its thread inherited in TLS is its parent's (the
 * rank and size, the calls deferred, "the main thread": its clause calls were deferred onto a
 * trap that could never carry them). It runs as a program alone on one node: master, rank 0
 * of 1, a region a team of one with no window (cape_cc_fork), which computes what a gcc
 * -fopenmp child computes. A call that needs a monitor ends it with a message (status 127,
 * as a program started without one). CAPE_FORK_DETACH=0 turns this off (the old way). */
static __thread int detached;
static __thread int node_rank = -1, node_count;

/* The two-level model (cape.h, cape_mark_frame): the boundary of the runtime calls this
 * thread makes from deeper frames (a `parallel` region's barriers, run inside libgomp's
 * team), 0 = none. TLS: never tracked. */
static __thread char* marked_frame;

static void forked_child(void) {
  detached = 1;
  node_rank = 0;
  node_count = 1;
  ndeferred = nnamed = defer_next = 0; /* the parent's, which its own next trap carries */
  self_pid = 0;
}

int cape_alone(void) { return detached; }

/* A detached process's runtime call: a one-node job's answer, or the end (above). */
static long alone(const char* call, long op) {
  switch (op) {
    case CAPE_OP_MASTER: return 1;
    case CAPE_OP_NODE_ID: return 0;
    case CAPE_OP_NUM_NODES: return 1;
    case CAPE_OP_REGION_BEGIN: return 1; /* (one node: nothing to agree on) */
    case CAPE_OP_LAST_PARALLEL: return 0;
    case CAPE_OP_HELLO: return 0;
    /* Clause calls: they only tell a monitor what the region's window will do; none opens. */
    case CAPE_OP_SET_SHARED: case CAPE_OP_SET_PRIVATE: case CAPE_OP_SET_FIRSTPRIVATE:
    case CAPE_OP_SET_LASTPRIVATE: case CAPE_OP_SET_COPYIN: case CAPE_OP_SET_COPYPRIVATE:
    case CAPE_OP_SET_THREADPRIVATE: case CAPE_OP_SET_DEFAULT_NONE: case CAPE_OP_REDUCTION:
    case CAPE_OP_SET_CKPT_MODEL: case CAPE_OP_SET_ORDER: case CAPE_OP_CRITICAL_SHARED:
      return 0;
    default: break;
  }
  fprintf(stderr,
          "cape: %s in a process forked by the program (pid %ld): only the program itself runs under its "
          "node's monitor; a forked process runs its parallel regions alone, as one node, but cannot make "
          "this call (fork inside a parallel region, or a hand-written runtime call?)\n",
          call, raw3(SYS_getpid, 0, 0, 0));
  raw3(SYS_exit_group, 127, 0, 0);
  return 0;
}

/* noinline + frame address: `boundary` is the caller's stack pointer before the call,
 * the lowest address of the program's own frames. Output buffered so far is written
 * first (never fflush(NULL): other FILEs live in the tracked heap and are the program's). */
__attribute__((noinline)) static long trap(const char* call, long op, long a1, long a2,
                                           void* boundary) {
  fflush(stdout);
  fflush(stderr);
  if (detached) return alone(call, op);
  if (marked_frame && (char*)boundary < marked_frame) boundary = marked_frame;
  if (defer_next) {
    defer_next = 0;
    if (op == CAPE_OP_STOP || op == CAPE_OP_SEND || op == CAPE_OP_WAIT_FOR || op == CAPE_OP_INJECT ||
        op == CAPE_OP_CREATE)
      if (defer(op, (const char*)a1, a2, boundary)) return 0;
  }
  if (!known_traced) {
    if (!traced()) no_monitor(call);
    known_traced = 1;
  }
  /* Read and cleared before the register variables are set: nothing may run between
   * those and the asm (a TLS access uses rax). */
  long d_n = ndeferred ? (long)(CAPE_TRAP_MAGIC | (unsigned long)ndeferred) : 0;
  long d_at = (long)&deferred_list;
  ndeferred = nnamed = 0;
  register long rax __asm__("rax") = (long)(CAPE_TRAP_MAGIC | (unsigned long)op);
  register long rdi __asm__("rdi") = a1;
  register long rsi __asm__("rsi") = a2;
  register long rdx __asm__("rdx") = (long)boundary;
  register long rcx __asm__("rcx") = (long)cape_syscall_gadget;
  register long r8 __asm__("r8") = d_n;
  register long r9 __asm__("r9") = d_at;
  register long r10 __asm__("r10") = (long)CAPE_AFFINITY_ASK;
  __asm__ volatile("int3"
                   : "+r"(rax), "+r"(r10)
                   : "r"(rdi), "r"(rsi), "r"(rdx), "r"(rcx), "r"(r8), "r"(r9)
                   : "memory");
  long answer = rax;
  if (r10 != (long)CAPE_AFFINITY_ASK && r10 != 0) {
    /* The program computes next: free to run on any of these CPUs (protocol.h). */
    unsigned long cpus = (unsigned long)r10;
    raw3(SYS_sched_setaffinity, 0, sizeof cpus, (long)&cpus);
  }
  return answer;
}

/* A call that answers nothing and whose effect the program cannot see before its next
 * runtime call: deferred to that call's trap, which carries it (protocol.h). receive() is
 * always one (the translated code follows it with its inject); stop(), send(), wait_for(),
 * inject() and create() are one when the caller says so first (cape_defer_next: libcape_cc's
 * exchanges, which make their next call at once). stop() is not one on its own: it puts
 * private variables back and, under the mprotect tracker, unprotects the pages a read(2)
 * may write. 0 when it cannot be deferred (the list full, or a name too long to copy): the
 * caller traps now, carrying the others. A program that ends with calls deferred makes
 * them at its exit (cape_runtime_fini). */
static void know_self(void) {
  if (self_pid) return;
  self_pid = raw3(SYS_getpid, 0, 0, 0);
  self_main = raw3(SYS_gettid, 0, 0, 0) == self_pid ? 1 : -1;
}

static int defer_raw(long op, long a1, long a2, void* boundary) {
  if (ndeferred == CAPE_MAX_DEFERRED_CALLS) return 0;
  know_self();
  struct cape_deferred* d = deferred_slot(ndeferred);
  d->op = CAPE_TRAP_MAGIC | (unsigned long)op;
  d->a1 = (unsigned long)a1;
  d->a2 = (unsigned long)a2;
  d->boundary = (unsigned long)boundary;
  ndeferred++;
  return 1;
}

static int defer(long op, const char* name, long a2, void* boundary) {
  unsigned len = 0;
  if (name) {
    while (len < sizeof deferred_name[0] && name[len]) len++;
    if (nnamed == CAPE_MAX_DEFERRED || len == sizeof deferred_name[0]) return 0;
  }
  if (ndeferred == CAPE_MAX_DEFERRED_CALLS) return 0;
  if (name) {
    for (unsigned i = 0; i <= len; i++) deferred_name[nnamed][i] = name[i];
    name = deferred_name[nnamed++];
  }
  return defer_raw(op, (long)name, a2, boundary);
}

void cape_defer_next(void) { defer_next = 1; }

/* Deferred calls still pending when the program exits (exit() or main's return) are made
 * now, as they would have been: a receive() then blocks or fails the same way. (Not in a
 * forked child: they are its parent's, whose next call makes them.) */
__attribute__((destructor)) static void cape_runtime_fini(void) {
  if (ndeferred && raw3(SYS_getpid, 0, 0, 0) == self_pid)
    trap("cape_receive", CAPE_OP_HELLO, 0, 0, __builtin_frame_address(0));
}

/* A clause call (cape_set_*, cape_reduction, cape_set_order, cape_critical_shared): it
 * answers nothing, reads and writes nothing of the program's, and only tells the monitor
 * what the next region's start(), create() and merges do (002_2c61c2cb27f62a9a.txt Fig. 7:
 * the calls come before ckpt_start(), which copies DATA-0 of what they registered, Sect.
 * 4.3). So it rides on the thread's next trap (start()'s in the templates), which the
 * monitor serves after it, in order: a region's clause calls cost no stop of their own
 * (issue 14, session 11). The main thread only (its exit is the program's, whose
 * destructor makes what is still pending); with the list full, the call traps now,
 * carrying the others. */
static void clause_call(const char* call, long op, long a1, long a2, void* boundary) {
  know_self();
  if (self_main > 0 && !detached && defer_raw(op, a1, a2, boundary)) return;
  trap(call, op, a1, a2, boundary);
}

#define BOUNDARY ((char*)__builtin_frame_address(0) + 16)

/* This node's rank and the job's size, asked once (two traps) and kept in TLS: they never
 * change while the program runs, and the translated code asks at every region (issue 14:
 * 5 of a master's 17 traps per region). `call` names the caller when there is no monitor.
 * noinline: BOUNDARY is then this function's own frame, below its caller's. */
__attribute__((noinline)) static void know_ids(const char* call) {
  if (node_rank >= 0) return;
  node_count = (int)trap(call, CAPE_OP_NUM_NODES, 0, 0, BOUNDARY);
  node_rank = (int)trap(call, CAPE_OP_NODE_ID, 0, 0, BOUNDARY);
}

int cape_master(void) {
  know_ids(__func__);
  return node_rank == 0;
}
/* Every node calls start() with the same memory (docs/translator.md), so the heap's
 * deferred frees are settled before the trap, the same way everywhere; after it, this
 * node allocates from its own arena until stop(). */
/* noinline: BOUNDARY is the caller's stack pointer, as for a trap. */
__attribute__((noinline)) void cape_mark_frame(void) { marked_frame = BOUNDARY; }
void cape_unmark_frame(void) { marked_frame = 0; }

/* files.c (linked only into programs that open files): a region's window begins (1), ends
 * (0), or this process was restarted from a complete checkpoint (2). */
extern void cape_files_region(int what) __attribute__((weak));

static void start(const char* call, long flags, void* boundary) {
  know_ids(call);
  cape_heap_settle(node_count);
  if ((unsigned long)trap(call, CAPE_OP_START, flags, 0, boundary) == CAPE_INPROC_ARMED) cape_inproc_arm();
  cape_heap_enter(node_rank);
  if (cape_files_region) cape_files_region(1);
}
__attribute__((noinline)) void cape_start(void) { start(__func__, 0, BOUNDARY); }
__attribute__((noinline)) void cape_start_own_share(void) { start(__func__, CAPE_START_OWN_SHARE, BOUNDARY); }
void cape_stop(void) {
  trap(__func__, CAPE_OP_STOP, 0, 0, BOUNDARY);
  cape_heap_leave();
  if (cape_files_region) cape_files_region(0);
}
void cape_create(const char* ck) { trap(__func__, CAPE_OP_CREATE, (long)ck, 0, BOUNDARY); }
/* 0: this is a process restarted from `file`, perhaps as another node (CAPE-1's
 * restart_on): the ids kept in TLS are the checkpointed process's, asked again. */
int cape_create_complete(const char* file) {
  int saved = (int)trap(__func__, CAPE_OP_CREATE_COMPLETE, (long)file, (long)marked_frame, BOUNDARY);
  if (!saved) {
    node_rank = -1;
    if (cape_files_region) cape_files_region(2);
  }
  return saved;
}
void cape1_copy(const char* from, const char* to) { trap(__func__, CAPE_OP_C1_COPY, (long)from, (long)to, BOUNDARY); }
void cape1_diff(const char* original, const char* after, const char* delta) {
  const char* names[3] = {original, after, delta};
  trap(__func__, CAPE_OP_C1_DIFF, (long)names, 0, BOUNDARY);
}
void cape1_merge(const char* target, const char* delta) { trap(__func__, CAPE_OP_C1_MERGE, (long)target, (long)delta, BOUNDARY); }
void cape1_wait_for(const char* file) { trap(__func__, CAPE_OP_C1_WAIT_FOR, (long)file, 0, BOUNDARY); }
void cape1_restart_on(const char* file, int node) { trap(__func__, CAPE_OP_C1_RESTART_ON, (long)file, node, BOUNDARY); }
void cape1_restart(const char* file) {
  trap(__func__, CAPE_OP_C1_RESTART, (long)file, 0, BOUNDARY);
  __builtin_trap(); /* the monitor resumes the process from `file`, never here */
}
void cape1_send(const char* file, int node) { trap(__func__, CAPE_OP_C1_SEND, (long)file, node, BOUNDARY); }
void cape1_serve(void) { trap(__func__, CAPE_OP_C1_SERVE, 0, 0, BOUNDARY); }
void cape_inject(const char* ck) { trap(__func__, CAPE_OP_INJECT, (long)ck, 0, BOUNDARY); }
void cape_send(const char* ck, int node) {
  trap(__func__, CAPE_OP_SEND, (long)ck, node, BOUNDARY);
}
void cape_receive(const char* ck) {
  void* boundary = BOUNDARY;
  if (marked_frame && (char*)boundary < marked_frame) boundary = marked_frame;
  if (detached || !defer(CAPE_OP_RECEIVE, ck, 0, boundary)) trap(__func__, CAPE_OP_RECEIVE, (long)ck, 0, BOUNDARY);
}
void cape_wait_for(const char* ck) { trap(__func__, CAPE_OP_WAIT_FOR, (long)ck, 0, BOUNDARY); }
void cape_merge(const char* into, const char* from) {
  trap(__func__, CAPE_OP_MERGE, (long)into, (long)from, BOUNDARY);
}
void cape_broadcast(const char* ck) { trap(__func__, CAPE_OP_BROADCAST, (long)ck, 0, BOUNDARY); }
int cape_last_parallel(void) { return (int)trap(__func__, CAPE_OP_LAST_PARALLEL, 0, 0, BOUNDARY); }
int cape_node_id(void) {
  know_ids(__func__);
  return node_rank;
}
int cape_num_nodes(void) {
  know_ids(__func__);
  return node_count;
}
/* Deferred when the caller says so first (cape_defer_next: libcape_cc's fork, when nothing
 * the program writes before its cape_start() differs between nodes): the determinism check
 * then runs at the next trap, start()'s, before start() itself (issue 14: one stop fewer per
 * node per region). The answer, the job's size, is known here. */
static int region_begin(const char* call, const char* where, unsigned long long loop, void* boundary) {
  if (defer_next && !detached) {
    defer_next = 0;
    know_ids(call);
    /* The heap is settled here, where every node's memory is the same, rather than first in
     * start(): the digest is then taken on settled memory whichever trap carries it (a
     * slave's inject of `before`, or start()'s, where the master's clause calls no longer
     * trap: session 11), and start()'s settle finds nothing left to do. */
    cape_heap_settle(node_count);
    if (defer(CAPE_OP_REGION_BEGIN, where, (long)loop, boundary)) return node_count;
  }
  return (int)trap(call, CAPE_OP_REGION_BEGIN, (long)where, (long)loop, boundary);
}
__attribute__((noinline)) int cape_region_begin(const char* where) { return region_begin(__func__, where, 0, BOUNDARY); }
__attribute__((noinline)) int cape_region_begin_loop(const char* where, unsigned long long loop) {
  return region_begin(__func__, where, loop, BOUNDARY);
}

/* Data sharing: the monitor keeps the attribute table; nothing is stored here. */
#define ATTR(fn, OP) \
  void fn(void* addr, unsigned long size) { clause_call(__func__, OP, (long)addr, (long)size, BOUNDARY); }
ATTR(cape_set_shared, CAPE_OP_SET_SHARED)
ATTR(cape_set_private, CAPE_OP_SET_PRIVATE)
ATTR(cape_set_firstprivate, CAPE_OP_SET_FIRSTPRIVATE)
ATTR(cape_set_lastprivate, CAPE_OP_SET_LASTPRIVATE)
ATTR(cape_set_copyin, CAPE_OP_SET_COPYIN)
ATTR(cape_set_copyprivate, CAPE_OP_SET_COPYPRIVATE)
ATTR(cape_set_threadprivate, CAPE_OP_SET_THREADPRIVATE)
#undef ATTR
void cape_set_default_none(void) { clause_call(__func__, CAPE_OP_SET_DEFAULT_NONE, 0, 0, BOUNDARY); }
void cape_reduction(void* addr, unsigned long size, int op, int type) {
  unsigned long packed = size | ((unsigned long)(op & 0xff) << CAPE_RED_SIZE_BITS) |
                         ((unsigned long)(type & 0xff) << (CAPE_RED_SIZE_BITS + 8));
  clause_call(__func__, CAPE_OP_REDUCTION, (long)addr, (long)packed, BOUNDARY);
}
/* Trap-free re-entry of a leased lock (protocol.h, CAPE_LEASE_*; docs/critical.md). TLS only:
 * lease_ready once a critical exit said the page is mapped; lock_depth counts the locks this
 * thread holds (a body inside another lock always traps: the outer body's writes before it are
 * the outer lock's); lease_in is the slot of the body this thread runs without a trap. */
static __thread int lease_ready, lock_depth;
static __thread struct cape_lease_slot* lease_in;

static struct cape_lease_slot* lease_find(const char* name, const struct cape_write* w) {
  struct cape_lease_page* page = (struct cape_lease_page*)CAPE_LEASE_PAGE_ADDRESS;
  for (int i = 0; i < CAPE_LEASE_SLOTS; i++) {
    struct cape_lease_slot* s = &page->slots[i];
    if (s->key == (unsigned long)name && (s->addr == 0 || s->addr == (unsigned long)w[0].addr)) return s;
  }
  return 0;
}

/* The slot of `s` goes back (OPEN; or, when the monitor wants it, through the exit's trap). */
static void lease_leave(struct cape_lease_slot* s, void* boundary) {
  unsigned long inside = CAPE_LEASE_INSIDE;
  if (!__atomic_compare_exchange_n(&s->state, &inside, CAPE_LEASE_OPEN, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
    trap("cape_critical_exit", CAPE_OP_LEASE_EXIT, s - ((struct cape_lease_page*)CAPE_LEASE_PAGE_ADDRESS)->slots, 0,
         boundary);
}

/* 1: the body may run now, its targets logged (the slot's word INSIDE). */
static int lease_enter(const char* name, const struct cape_write* w, void* boundary) {
  if (!lease_ready || lock_depth) return 0;
  struct cape_lease_slot* s = lease_find(name, w);
  if (!s) return 0;
  unsigned long now = __atomic_load_n(&s->state, __ATOMIC_RELAXED);
  if (now != CAPE_LEASE_OPEN) {
    if ((now & 3) == CAPE_LEASE_INSIDE) __atomic_fetch_add(&s->taken, 1, __ATOMIC_RELAXED);
    return 0;
  }
  unsigned long open = CAPE_LEASE_OPEN;
  if (!__atomic_compare_exchange_n(&s->state, &open, CAPE_LEASE_INSIDE, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) return 0;
  /* (The monitor gives a slot to another lock only while it is FREE: another thread of the
   * node may have done that between the look-up and the CAS. Now it cannot change.) */
  if (!(s->key == (unsigned long)name && (s->addr == 0 || s->addr == (unsigned long)w[0].addr))) {
    lease_leave(s, boundary);
    return 0;
  }
  unsigned long n = s->count;
  for (const struct cape_write* x = w; x->addr || x->size; x++) {
    unsigned long k = 0;
    while (k < n && !(s->log[k].addr == (unsigned long)x->addr && s->log[k].size == x->size)) k++;
    if (k < n) continue;
    if (n == CAPE_LEASE_LOG) { /* no room: the ordinary trap, which reads the log */
      s->count = n;
      lease_leave(s, boundary);
      return 0;
    }
    s->log[n].addr = (unsigned long)x->addr;
    s->log[n].size = x->size;
    n++;
  }
  s->count = n;
  s->entries++;
  lease_in = s;
  return 1;
}

/* 1: the body was entered without a trap, and has been left. */
static int lease_exit(void* boundary) {
  struct cape_lease_slot* s = lease_in;
  if (!s || lock_depth) return 0;
  lease_in = 0;
  lease_leave(s, boundary);
  return 1;
}

static void lock_exit(long name, long x, void* boundary) {
  lock_depth--;
  if (lease_exit(boundary)) return;
  if (trap("cape_critical_exit", CAPE_OP_CRITICAL_EXIT, name, x, boundary) == (long)CAPE_LEASE_READY) lease_ready = 1;
}

void cape_critical_enter(const char* name) {
  lock_depth++;
  trap(__func__, CAPE_OP_CRITICAL_ENTER, (long)name, 0, BOUNDARY);
}
void cape_critical_enter_writes(const char* name, const struct cape_write* writes) {
  if (!lease_enter(name, writes, BOUNDARY)) {
    unsigned long r = (unsigned long)trap(__func__, CAPE_OP_CRITICAL_ENTER, (long)name,
                                          (long)((unsigned long)writes | CAPE_CRITICAL_WRITES_BIT), BOUNDARY);
    if (r >= CAPE_LEASE_ENTERED && r < CAPE_LEASE_ENTERED + CAPE_LEASE_SLOTS) { /* the exit is trap-free */
      lease_ready = 1;
      lease_in = &((struct cape_lease_page*)CAPE_LEASE_PAGE_ADDRESS)->slots[r - CAPE_LEASE_ENTERED];
    }
  }
  lock_depth++;
}
void cape_critical_exit(const char* name) { lock_exit((long)name, 0, BOUNDARY); }
void cape_atomic_enter(void* x) {
  lock_depth++;
  trap(__func__, CAPE_OP_CRITICAL_ENTER, (long)"atomic", (long)x, BOUNDARY);
}
void cape_atomic_exit(void* x) { lock_exit((long)"atomic", (long)x, BOUNDARY); }
void cape_lock_set(void* l) {
  lock_depth++;
  trap(__func__, CAPE_OP_CRITICAL_ENTER, (long)"lock", (long)l, BOUNDARY);
}
void cape_lock_unset(void* l) { lock_exit((long)"lock", (long)l, BOUNDARY); }
int cape_lock_test(void* l) {
  int in = (int)trap(__func__, CAPE_OP_CRITICAL_TRY, (long)"lock", (long)l, BOUNDARY);
  lock_depth += in != 0;
  return in;
}
void cape_ordered_enter(const char* name, unsigned long long iteration) {
  lock_depth++;
  trap(__func__, CAPE_OP_ORDERED_ENTER, (long)name, (long)iteration, BOUNDARY);
}
/* The iteration's top bit (never set: iterations count from 0) says "do not wait". */
int cape_ordered_try(const char* name, unsigned long long iteration) {
  int in = (int)trap(__func__, CAPE_OP_ORDERED_ENTER, (long)name, (long)(iteration | CAPE_ORDERED_TRY_BIT), BOUNDARY);
  lock_depth += in != 0;
  return in;
}
void cape_ordered_exit(const char* name) { lock_exit((long)name, 0, BOUNDARY); }
void cape_critical_shared(void* addr, unsigned long size) {
  clause_call(__func__, CAPE_OP_CRITICAL_SHARED, (long)addr, (long)size, BOUNDARY);
}
/* Not deferred: once per program, at main's start, where user code (a fork, say) runs before
 * the next runtime call. */
void cape_set_ckpt_model(int model) { trap(__func__, CAPE_OP_SET_CKPT_MODEL, model, 0, BOUNDARY); }
void cape_set_order(long order) { clause_call(__func__, CAPE_OP_SET_ORDER, order, 0, BOUNDARY); }

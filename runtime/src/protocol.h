/* The trap protocol between libcape (in the program) and the monitor (cape monitor/node).
 *
 * A runtime call executes `int3` with:
 *   rax = CAPE_TRAP_MAGIC | operation     rdi, rsi = the call's arguments
 *   rdx = the caller's frame boundary (lowest stack address that belongs to the program's
 *         own frames; everything below is libcape's and is never captured or injected)
 *   rcx = address of cape_syscall_gadget (`syscall; int3`), where the monitor runs
 *         remote syscalls (monitor/remote_syscall.h)
 *   r8  = CAPE_TRAP_MAGIC | n when n (1 .. CAPE_MAX_DEFERRED_CALLS) deferred calls ride on
 *         this trap, else 0; r9 = the address of their `struct cape_deferred_list` (libcape's
 *         TLS): a call whose effect the program cannot see before its next runtime call
 *         (receive; the clause calls; and stop, send, wait_for, inject, create, region_begin
 *         where libcape_cc makes another call right after them) makes no trap of its own and
 *         rides on the next one, which the monitor serves after them, in order (one trap, two
 *         ptrace stops, fewer each: issue 14)
 * The monitor answers by setting rax and resuming after the int3. Nothing is written
 * into program memory by the protocol. Shared by runtime/ and monitor/ (plain C header).
 */
#ifndef CAPE_PROTOCOL_H
#define CAPE_PROTOCOL_H

#define CAPE_TRAP_MAGIC 0x43415045ca000000ULL /* "CAPE" | 0xca in the upper bytes */
#define CAPE_TRAP_MAGIC_MASK 0xffffffffff000000ULL

/* r10 (issue 14, CPU placement): libcape sets it to CAPE_AFFINITY_ASK before the int3. A
 * monitor that keeps its program on its own CPU during runtime calls (each call's ptrace
 * stops then never wake another vCPU) and lets it float while it computes answers there the
 * mask of CPUs 0-63 the calling thread takes back (sched_setaffinity) when the call returns;
 * left as it was (or 0): nothing to do. A monitor writes r10 only when it reads the ask
 * (an older libcape keeps its own values there). */
#define CAPE_AFFINITY_ASK (CAPE_TRAP_MAGIC | 0xafULL)

/* A deferred call as the monitor reads it: op = CAPE_TRAP_MAGIC | operation, its two
 * arguments and its own frame boundary (as rdx would have been). */
#define CAPE_MAX_DEFERRED 4
struct cape_deferred {
  unsigned long long op, a1, a2, boundary;
};
/* r9 points at the calls of this list; a deferred call's checkpoint name is copied into
 * `names` (its a1 points there), so that the monitor reads the calls and their names with
 * one process_vm_readv (issue 14). Call i is calls[i] for i < CAPE_MAX_DEFERRED, then
 * more[i - CAPE_MAX_DEFERRED] (session 11: a region's clause calls, which carry no name, ride
 * on start()'s trap too); at most CAPE_MAX_DEFERRED of them have a name, in any places. A
 * libcape before session 11 defers at most CAPE_MAX_DEFERRED calls and has no `more`: the
 * same layout for them. */
#define CAPE_DEFERRED_NAME_BYTES 256
#define CAPE_MAX_DEFERRED_CALLS 128
struct cape_deferred_list {
  struct cape_deferred calls[CAPE_MAX_DEFERRED];
  char names[CAPE_MAX_DEFERRED][CAPE_DEFERRED_NAME_BYTES];
  struct cape_deferred more[CAPE_MAX_DEFERRED_CALLS - CAPE_MAX_DEFERRED];
};

/* start()'s first argument: CAPE_START_OWN_SHARE when the node runs its share at once (no
 * `before` is made in the window: the master's nodes dealt themselves their shares), else 0.
 * region_begin()'s second: a hash of the loop's trip count and chunk size (the nodes must
 * agree on it, as on their memory), else 0. */
#define CAPE_START_OWN_SHARE 1

/* After the gadget (libcape's cape.c): the resume stub, entered with rax/rdi/rsi/rdx = one
 * syscall and rsp = the address of a frame {rax, rcx, r11, rdi, rsi, rdx, rip, cs, rflags,
 * rsp, ss} in monitor-owned memory; the syscall's result goes to the word below the frame
 * (the monitor sets it to 1 first: 1 = not run yet, 0 or -errno = done). The tag at
 * CAPE_RESUME_TAG_OFFSET tells the monitor the stub is there (older libcape: it is not). */
#define CAPE_RESUME_STUB_OFFSET 5
#define CAPE_RESUME_TAG_OFFSET 32
#define CAPE_RESUME_TAG "cape-resume-1"
/* The copy gadget: rdx = a list of {source, length} pairs ending with a zero length,
 * rdi = the destination; the runs are copied back to back, then int3 (at
 * CAPE_COPY_TRAP_OFFSET, the rip after it is that + 1). Tagged like the resume stub. */
#define CAPE_COPY_GADGET_OFFSET 48
#define CAPE_COPY_TRAP_OFFSET 72
#define CAPE_COPY_TAG_OFFSET 80
#define CAPE_COPY_TAG "cape-copy-1"
/* The syscall list gadget: r12 = a list of {nr, a1, a2, a3, result} (five words each) ending
 * with nr = -1; each syscall is made in turn and its result stored in its entry, then int3
 * (at CAPE_SYSLIST_TRAP_OFFSET). The list lives in the monitor's scratch mapping: the
 * mprotect tracker changes the protection of many ranges with one ptrace stop instead of one
 * stop per call (issue 14). Tagged like the others. */
#define CAPE_SYSLIST_GADGET_OFFSET 96
#define CAPE_SYSLIST_TRAP_OFFSET 136
#define CAPE_SYSLIST_TAG_OFFSET 144
#define CAPE_SYSLIST_TAG "cape-syslist-1"
/* The publishing gadget (--sync=lazy, issue 14 session 12): rdx = a list of {destination,
 * source, length} triples ending with a zero length; each run is copied, then int3 (at
 * CAPE_PUBLISH_TRAP_OFFSET). The monitor runs it at the runtime call that publishes a node's
 * kept pages: the program copies them into the publishing arena (below), where the node's
 * page service serves them from (faster than the monitor reading them with
 * process_vm_readv). Tagged like the others; the tag also names the arena's memfd. */
#define CAPE_PUBLISH_GADGET_OFFSET 160
#define CAPE_PUBLISH_TRAP_OFFSET 192
#define CAPE_PUBLISH_TAG_OFFSET 200
#define CAPE_PUBLISH_TAG "cape-publish-1"
/* The publishing arena: a memfd the monitor maps MAP_SHARED at this address in the program
 * (MADV_DONTFORK: a forked child does not get it) and anywhere in its own process, never
 * tracked, never in a complete checkpoint (inside the scratch's 1 TiB). The gadget's lists
 * are in its first CAPE_PUBLISH_LIST_BYTES; the rest is 4096-byte slots, each holding one
 * version of one published page. */
#define CAPE_PUBLISH_ARENA_ADDRESS 0x102000000000ULL /* 16 TiB + 128 GiB */
#define CAPE_PUBLISH_ARENA_SPAN (64ULL << 30)       /* 64 GiB of address space, used as needed */
#define CAPE_PUBLISH_LIST_BYTES (256UL << 10)

enum cape_op {
  CAPE_OP_HELLO = 1, /* unused by the program; reserved for probing */
  CAPE_OP_MASTER,
  CAPE_OP_START,
  CAPE_OP_STOP,
  CAPE_OP_CREATE,
  CAPE_OP_INJECT,
  CAPE_OP_SEND,
  CAPE_OP_RECEIVE,
  CAPE_OP_WAIT_FOR,
  CAPE_OP_MERGE,
  CAPE_OP_BROADCAST,
  CAPE_OP_LAST_PARALLEL,
  CAPE_OP_NODE_ID,
  CAPE_OP_NUM_NODES,
  /* Data sharing (002_2c61c2cb27f62a9a.txt Table 2): rdi = address, rsi = size. */
  CAPE_OP_SET_SHARED,
  CAPE_OP_SET_PRIVATE,
  CAPE_OP_SET_FIRSTPRIVATE,
  CAPE_OP_SET_LASTPRIVATE,
  CAPE_OP_SET_COPYIN,
  CAPE_OP_SET_COPYPRIVATE,
  CAPE_OP_SET_THREADPRIVATE,
  CAPE_OP_SET_DEFAULT_NONE,
  /* rdi = address, rsi = size | op << 48 | type << 56 (CAPE_RED_SIZE_BITS). */
  CAPE_OP_REDUCTION,
  CAPE_OP_SET_CKPT_MODEL, /* rdi = model */
  CAPE_OP_SET_ORDER,      /* rdi = order */
  /* rdi = "file:line" of the region (or 0); answers the number of nodes. Every node's
   * memory must be the same here: the monitor digests it (the determinism check). */
  CAPE_OP_REGION_BEGIN,
  /* CAPE-1's create(file) (003_45ed75503520c8f4.txt Fig. 2): rdi = the file's name, rsi =
   * the frame marked by cape_mark_frame() (0 = none), recorded in the file: a region's
   * frames, whose writes CAPE-1's merge keeps (docs/cape1.md). The monitor saves a complete
   * checkpoint of the process and answers 1; a process restarted from the file resumes here
   * with 0. */
  CAPE_OP_CREATE_COMPLETE,
  /* The rest of 003 Fig. 2 on checkpoint files (docs/cape1.md): copy(rdi -> rsi),
   * diff(rdi = the address of {original, after, delta} names), merge(target rdi, delta rsi),
   * wait_for(rdi), restart_on(rdi = file, rsi = node) starts a new process from the file,
   * restart(rdi) makes this process continue from the file (the answer and every register
   * come from it). */
  CAPE_OP_C1_COPY,
  CAPE_OP_C1_DIFF,
  CAPE_OP_C1_MERGE,
  CAPE_OP_C1_WAIT_FOR,
  CAPE_OP_C1_RESTART_ON,
  CAPE_OP_C1_RESTART,
  /* On a slave node of `cape run` (docs/cape1.md): wait for the next checkpoint the master
   * sends with restart_on and continue as it (the answer and every register come from it);
   * answers 1 when the master's program ended instead (restart_on with rdi = 0). */
  CAPE_OP_C1_SERVE,
  /* Critical sections across nodes (docs/critical.md): rdi = the name (a C string), rsi = 0,
   * or for an atomic the location's address (one lock per location: "atomic@0x..."). */
  CAPE_OP_CRITICAL_ENTER,
  CAPE_OP_CRITICAL_EXIT,
  /* rdi = address, rsi = size: a local of the enclosing function that critical bodies and
   * lock holders may write (stack memory that travels with their writes), until the next
   * region begins. */
  CAPE_OP_CRITICAL_SHARED,
  /* As CAPE_OP_CRITICAL_ENTER without waiting (omp_test_lock): answers 1 when it holds the
   * lock now, 0 when another node does. */
  CAPE_OP_CRITICAL_TRY,
  /* `ordered` (docs/critical.md): rdi = the name, rsi = the loop's logical iteration; the
   * lock goes to iterations 0, 1, 2, ... in order. Left with CAPE_OP_CRITICAL_EXIT. */
  CAPE_OP_ORDERED_ENTER,
  /* CAPE-1 barriers (docs/cape1.md): send the checkpoint file rdi to node rsi, whose
   * cape1_wait_for(rdi) takes it (on `cape run`; alone, the file is already there). */
  CAPE_OP_C1_SEND,
  /* The exit of a body entered without a trap (CAPE_LEASE_*, below) when its slot's word said
   * the monitor wants it: rdi = the slot's index. */
  CAPE_OP_LEASE_EXIT,
  CAPE_OP_COUNT
};
/* CAPE_OP_CRITICAL_ENTER: rsi with this bit set points (the bit cleared) at every byte the
 * body can write, as the translator names them (cape_critical_enter_writes): {address, size}
 * pairs ending with {0, 0}, at most CAPE_CRITICAL_MAX_WRITES. The lock is named by rdi, and
 * for "atomic" by the first pair's address, as cape_atomic_enter names it. */
#define CAPE_CRITICAL_WRITES_BIT (1ULL << 63)
#define CAPE_CRITICAL_MAX_WRITES 16
/* CAPE_OP_ORDERED_ENTER: this bit of the iteration (a2) asks without waiting. */
#define CAPE_ORDERED_TRY_BIT (1ULL << 63)

#define CAPE_RED_SIZE_BITS 48

/* Trap-free re-entry of a leased lock (docs/critical.md, "Trap-free re-entry"). On a slave, a
 * lock whose lease the node keeps and whose body's writes the translator knows gets a slot in
 * a page the monitor maps at CAPE_LEASE_PAGE_ADDRESS (a memfd, MAP_SHARED in both processes,
 * never tracked). cape_critical_enter_writes finds the slot by its key (the name's address;
 * for "atomic" also the location, `addr`), takes it with a CAS OPEN -> INSIDE, logs the body's
 * targets (no duplicates) and runs the body without a trap; the exit puts OPEN back with a CAS,
 * or, when the word says WANTED (the monitor asked for the lease back, or another thread of the
 * node waits), traps with CAPE_OP_LEASE_EXIT. Any other state: the ordinary trap. The monitor
 * reads the logged targets' bytes (at its next trap, before any capture) as the lease's
 * writes. A critical exit's answer CAPE_LEASE_READY tells libcape the page is mapped. */
#define CAPE_LEASE_PAGE_ADDRESS 0x101000000000ULL /* 16 TiB + 64 GiB */
#define CAPE_LEASE_READY 0x4c45415345ULL        /* "LEASE" */
/* A trapped entry's answer CAPE_LEASE_ENTERED + slot: the body runs in that slot (INSIDE, its
 * targets logged by the monitor), so its exit is trap-free too (a lease's first entry). */
#define CAPE_LEASE_ENTERED 0x4c45415300ULL
#define CAPE_LEASE_SLOTS 16
#define CAPE_LEASE_LOG 64
#define CAPE_LEASE_FREE 0UL     /* no lease */
#define CAPE_LEASE_CLOSED 1UL   /* leased, but the monitor serves a call now (or a thread holds a lock) */
#define CAPE_LEASE_OPEN 2UL     /* leased: enter with a CAS */
#define CAPE_LEASE_INSIDE 3UL   /* a body runs */
#define CAPE_LEASE_WANTED 4UL   /* with INSIDE: the exit traps */
#define CAPE_LEASE_REVOKED 8UL  /* asked back: the log still to be read */
struct cape_lease_target {
  unsigned long addr, size;
};
struct cape_lease_slot {
  /* taken: entries that found a body of another thread inside (they trap; --model=mt) */
  unsigned long state, key, addr, count, entries, taken;
  struct cape_lease_target log[CAPE_LEASE_LOG];
};
struct cape_lease_page {
  struct cape_lease_slot slots[CAPE_LEASE_SLOTS];
};
#define CAPE_LEASE_PAGE_BYTES ((sizeof(struct cape_lease_page) + 4095) & ~4095UL)

/* The cape heap (runtime/src/heap_*.c; docs/monitor.md "The heap and stdio"): libcape's malloc
 * keeps every block and all of its state in arenas at fixed addresses, in tracked memory.
 * Arena 0 serves the sequential part, arena 1 + r node r inside its windows. Each arena is
 * one PROT_NONE reservation (MAP_NORESERVE) whose first `committed` bytes are made
 * PROT_READ|PROT_WRITE by mprotect as it grows: a single contiguous range from the arena's
 * start, never made smaller inside a window. The last CAPE_HEAP_GAP bytes of each span are
 * never mapped, so an arena's committed part never sits right above a PROT_NONE mapping (the
 * tracked set would take it for a thread stack behind its guard page). Node arenas are
 * reserved by the first cape_start(), for the job's node count, on every node alike. */
#define CAPE_HEAP_BASE 0x200000000000ULL        /* 32 TiB: arena 0 */
#define CAPE_HEAP_ARENA0_SPAN (8ULL << 40)      /* 8 TiB */
#define CAPE_HEAP_NODE_BASE (CAPE_HEAP_BASE + CAPE_HEAP_ARENA0_SPAN) /* 40 TiB: arena 1 */
#define CAPE_HEAP_NODE_SPAN (64ULL << 30)       /* 64 GiB per node arena */
#define CAPE_HEAP_MAX_NODES 256
#define CAPE_HEAP_END (CAPE_HEAP_NODE_BASE + CAPE_HEAP_MAX_NODES * CAPE_HEAP_NODE_SPAN) /* 56 TiB */
#define CAPE_HEAP_GAP (2ULL << 20)
/* Arena i's header lies at its start; these words are at fixed offsets from it. */
#define CAPE_HEAP_ARENA_MAGIC 0x70616568657061ULL /* "apeheap", xor the arena number */
#define CAPE_HEAP_OFF_MAGIC 0
#define CAPE_HEAP_OFF_COMMITTED_END 8 /* address where the committed part ends */
#define CAPE_HEAP_OFF_RESERVED_END 16 /* address where the reservation ends */

/* The runtimes' heap (runtime/src/heap_runtime.c): libgomp's and ld.so's blocks, in one
 * private reservation at 60 TiB (above the cape heap, far below the mmap area) that the
 * monitor leaves out of the tracked set (monitor/memory_map.cpp): never in a checkpoint. */
#define CAPE_RUNTIME_HEAP_BASE 0x3c0000000000ULL
#define CAPE_RUNTIME_HEAP_SPAN (4ULL << 30)

/* --tracker inproc (runtime/src/inproc.c, monitor/inproc_tracker.cpp): the multithreaded
 * paper's in-process way (000_2e1115959baa0e7d.txt Sect. 3.3), write protection and a SIGSEGV
 * handler inside the program. At start() the monitor writes the tracked areas into the
 * scratch (kScratchAddress, 16 TiB) and answers CAPE_INPROC_ARMED; libcape protects them and
 * handles the faults itself: the page's original goes to the scratch, its address on the
 * list, and the page is made writable. create() reads the list and protects the pages again
 * (remote mprotect); stop() makes the areas writable again. */
#define CAPE_INPROC_ARMED 0x494e50524f43ULL /* "INPROC" */
#define CAPE_INPROC_MAX_AREAS 1024
#define CAPE_INPROC_MAX_PAGES 16384 /* 64 MiB of originals per window */
struct cape_inproc_area {
  unsigned long start, end, prot, pad;
};
struct cape_inproc_header {
  unsigned long magic, nareas, count, lock; /* lock: 0 free, 1 held (a fault being served) */
  struct cape_inproc_area areas[CAPE_INPROC_MAX_AREAS];
  unsigned long pages[CAPE_INPROC_MAX_PAGES];
};
#define CAPE_INPROC_ORIGINALS ((sizeof(struct cape_inproc_header) + 4095) & ~4095UL)
#define CAPE_INPROC_SCRATCH_BYTES (CAPE_INPROC_ORIGINALS + (unsigned long)CAPE_INPROC_MAX_PAGES * 4096)
#define CAPE_INPROC_SCRATCH_ADDRESS 0x100000000000ULL

#endif /* CAPE_PROTOCOL_H */

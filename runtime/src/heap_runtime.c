/* The runtimes' heap: where the allocations of the OpenMP runtime (libgomp) and of the
 * dynamic loader (a new thread's DTV) go, out of every checkpoint (docs/monitor.md, "Threads").
 *
 * Why: with the two-level model (000_2e1115959baa0e7d.txt Fig. 5-6) every node runs its share
 * with libgomp threads. libgomp keeps its thread pool, teams, barriers and work shares in
 * blocks from malloc, and ld.so gives each new thread a DTV from calloc. In the cape heap
 * (tracked memory) those would travel in the window's checkpoint and be injected into the
 * other nodes, overwriting their own runtime's live state (another node's threads, barrier
 * counters in another phase), and the master's sequential-part digest would differ between
 * nodes. They are each node's private business, like a thread's stack or TLS.
 *
 * So malloc and friends look at their caller: a call from libgomp's or ld.so's code is
 * served here, from one private anonymous reservation at a fixed address
 * (CAPE_RUNTIME_HEAP_BASE; the monitor leaves that range out of the tracked set, and a fixed
 * address keeps every other mapping where it would be without it). Private, not shared: a
 * child of fork() must not share its runtimes' blocks with its parent. free, realloc and
 * malloc_usable_size tell the blocks apart by address.
 *
 * The allocator is small on purpose (these blocks are few and small): power-of-two size
 * classes from 32 bytes up with a free list each, carved from a bump pointer; one spin lock;
 * every block has a 16-byte header before it.
 */
#define _GNU_SOURCE
#include <link.h>
#include <malloc.h>
#include <string.h>
#include <sys/mman.h>

#include "heap_internal.h"
#include "heap_runtime.h"

#define CLASSES 32      /* 32 B << 0 .. 31: up to 64 GiB (the span is less) */
#define MIN_SHIFT 5
#define HEADER 16
#define MAGIC 0x72746870U /* "phtr" */
#define ALIGNED_CLASS 0xfeU

struct block_header {
  uint32_t magic;
  uint32_t cls;   /* size class, or ALIGNED_CLASS (the header of an aligned block's inside) */
  uint64_t size;  /* usable bytes; ALIGNED_CLASS: the address of the outer block */
};

struct runtime_heap {
  uint32_t lock;
  char *bump, *end;
  void *free_list[CLASSES];
};

/* libgomp's and ld.so's code: [lo, hi) pairs, found once before main (cape_runtime_heap_init,
 * from libcape's constructor). Written before main, the same on every node, and read only. */
static uintptr_t code_lo[2], code_hi[2];

/* Set by cape_runtime_heap_init before main, the same on every node, read only after: no
 * window ever writes it. Runtime callers are recognised only once it is set. */
static struct runtime_heap *the_heap;

static void reserve(void) {
  size_t span = CAPE_RUNTIME_HEAP_SPAN;
  long m;
  for (;;) {
    m = sys6(SYS_mmap, (long)CAPE_RUNTIME_HEAP_BASE, (long)span, PROT_READ | PROT_WRITE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
    if (m != -ENOMEM || span / 2 < (16UL << 20)) break;
    span /= 2;
  }
  if (m != (long)CAPE_RUNTIME_HEAP_BASE)
    cape_heap_fail("runtime heap", (void *)CAPE_RUNTIME_HEAP_BASE,
                   m == -EEXIST ? "the runtimes' heap's address range is already mapped (docs/monitor.md)"
                                : "cannot reserve the runtimes' heap's address range");
  the_heap = (struct runtime_heap *)m;
  the_heap->bump = (char *)m + ((sizeof(struct runtime_heap) + 63) & ~63UL); /* blocks after the header */
  the_heap->end = (char *)m + span;
}

static struct runtime_heap *heap(void) { return the_heap; }

static void take(struct runtime_heap *h) {
  while (__atomic_exchange_n(&h->lock, 1, __ATOMIC_ACQUIRE))
    while (__atomic_load_n(&h->lock, __ATOMIC_RELAXED)) sys3(SYS_sched_yield, 0, 0, 0);
}
static void drop(struct runtime_heap *h) { __atomic_store_n(&h->lock, 0, __ATOMIC_RELEASE); }

static int find_code(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  (void)data;
  const char *name = info->dlpi_name;
  int slot = -1;
  if (name && strstr(name, "/libgomp.so")) slot = 0;
  else if (name && (strstr(name, "/ld-linux") || strstr(name, "/ld.so"))) slot = 1;
  if (slot < 0) return 0;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *p = &info->dlpi_phdr[i];
    if (p->p_type != PT_LOAD || !(p->p_flags & PF_X)) continue;
    uintptr_t lo = info->dlpi_addr + p->p_vaddr, hi = lo + p->p_memsz;
    if (!code_lo[slot] || lo < code_lo[slot]) code_lo[slot] = lo;
    if (hi > code_hi[slot]) code_hi[slot] = hi;
  }
  return 0;
}

/* At the first allocator call after ld.so has bound malloc to ours (libgomp allocates in its
 * own constructor, before libcape's: its copy of the CPU affinity mask, which differs between
 * nodes pinned to different CPUs), or from libcape's constructor. */
static int init_state; /* 0 not yet, 1 under way (calls meanwhile are the program's), 2 done */

void cape_runtime_heap_init(void) {
  if (init_state) return;
  init_state = 1;
  reserve();
  dl_iterate_phdr(find_code, 0);
  init_state = 2;
}

int cape_runtime_heap_caller(const void *ret) {
  if (__builtin_expect(!init_state, 0)) cape_runtime_heap_init();
  uintptr_t a = (uintptr_t)ret;
  return (a - code_lo[0] < code_hi[0] - code_lo[0]) || (a - code_lo[1] < code_hi[1] - code_lo[1]);
}

static struct block_header *header_of(void *p) {
  struct block_header *b = (struct block_header *)((char *)p - HEADER);
  if (b->magic != MAGIC) cape_heap_fail("free", p, "not a block of the runtimes' heap");
  return b;
}

void *cape_runtime_malloc(size_t n) {
  if (n >= MAX_REQUEST) {
    errno = ENOMEM;
    return 0;
  }
  size_t total = n + HEADER;
  unsigned cls = 0;
  while (cls < CLASSES && ((size_t)1 << (cls + MIN_SHIFT)) < total) cls++;
  if (cls == CLASSES) {
    errno = ENOMEM;
    return 0;
  }
  struct block_header *b;
  {
    struct runtime_heap *h = heap();
    size_t sz = (size_t)1 << (cls + MIN_SHIFT);
    take(h);
    void *f = h->free_list[cls];
    if (f) {
      h->free_list[cls] = *(void **)((char *)f + HEADER);
      b = f;
    } else if ((size_t)(h->end - h->bump) >= sz) {
      b = (struct block_header *)h->bump;
      h->bump += sz;
    } else {
      drop(h);
      errno = ENOMEM;
      return 0;
    }
    drop(h);
    b->cls = cls;
    b->size = sz - HEADER;
  }
  b->magic = MAGIC;
  return (char *)b + HEADER;
}

void *cape_runtime_calloc(size_t n, size_t size) {
  size_t total;
  if (__builtin_mul_overflow(n, size, &total)) {
    errno = ENOMEM;
    return 0;
  }
  void *p = cape_runtime_malloc(total);
  if (p) memset(p, 0, total); /* freed blocks are reused: not known to be zeros */
  return p;
}

void *cape_runtime_aligned(size_t align, size_t n) {
  if (align <= HEADER) return cape_runtime_malloc(n);
  if (align & (align - 1) || align > (1UL << 30) || n >= MAX_REQUEST) {
    errno = align & (align - 1) ? EINVAL : ENOMEM;
    return 0;
  }
  char *outer = cape_runtime_malloc(n + align + HEADER);
  if (!outer) return 0;
  uintptr_t inner = ((uintptr_t)outer + HEADER + align - 1) & ~(uintptr_t)(align - 1);
  struct block_header *b = (struct block_header *)(inner - HEADER);
  b->magic = MAGIC;
  b->cls = ALIGNED_CLASS;
  b->size = (uint64_t)(uintptr_t)outer;
  return (void *)inner;
}

static size_t usable(void *p, struct block_header *b) {
  if (b->cls == ALIGNED_CLASS) {
    void *outer = (void *)(uintptr_t)b->size;
    return usable(outer, header_of(outer)) - (size_t)((char *)p - (char *)outer);
  }
  return b->size;
}

size_t cape_runtime_usable_size(void *p) { return usable(p, header_of(p)); }

void cape_runtime_free(void *p) {
  struct block_header *b = header_of(p);
  if (b->cls == ALIGNED_CLASS) return cape_runtime_free((void *)(uintptr_t)b->size);
  b->magic = 0; /* a second free is caught */
  if (b->cls >= CLASSES) cape_heap_fail("free", p, "corrupted runtimes' heap block");
  struct runtime_heap *h = heap();
  take(h);
  *(void **)p = h->free_list[b->cls];
  h->free_list[b->cls] = b;
  drop(h);
}

void *cape_runtime_realloc(void *p, size_t n) {
  if (!p) return cape_runtime_malloc(n);
  size_t old = cape_runtime_usable_size(p);
  if (n <= old && n > old / 2) return p;
  void *q = cape_runtime_malloc(n);
  if (!q) return 0;
  memcpy(q, p, old < n ? old : n);
  cape_runtime_free(p);
  return q;
}

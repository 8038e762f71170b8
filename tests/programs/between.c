/* Memory that changes between windows, in every way a tracker that keeps its copies from
 * one window to the next must notice (tests/monitor/monitor_test.cpp,
 * MonitorTrackers.ChangesBetweenWindows): five windows, each writing one word in every page
 * that changed since the previous one, each ending in a checkpoint "wN" that must hold
 * exactly those words (what every tracker gives, and `full` most simply). A stale copy of a
 * page shows up as extra words: every change between windows is to another word of the page.
 *
 * Between windows: the program's own writes; a kernel write (read(2) from a pipe); an
 * inject (outside any window); an area that grows (mprotect of a reserved PROT_NONE range,
 * as libcape's heap does), shrinks (PROT_NONE mapped over its top) and grows again; one
 * replaced by a fresh mapping at the same address; pages and a whole 2 MiB transparent huge
 * page dropped with MADV_DONTNEED; an area that leaves the tracked set (read-only) and comes
 * back; the heap grown by a large block, trimmed and grown again; the stack grown down.
 * And parts registered in different windows that the kernel has merged into one mapping.
 * Every mapping call is a raw syscall (libcape serves mmap itself). */
#include <cape/cape.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "expect.h"

#define PG 4096
#define W8(ck, tag, p, v) W(ck, tag, (p), unsigned long, (unsigned long)(v))

long data_words[8 * PG / sizeof(long)] = {1, 2, 3}; /* .data: 8 pages */
unsigned char bss_pages[8 * PG];                  /* .bss */
unsigned char q_page[PG] __attribute__((aligned(PG)));  /* written only by an inject */
unsigned char k_page[PG] __attribute__((aligned(PG)));  /* written only by read(2) */

static unsigned char* sys_mmap(void* at, size_t len, int prot, int flags) {
  long r = syscall(SYS_mmap, at, len, prot, flags | MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (r < 0 && r > -4096) {
    printf("mmap failed\n");
    exit(3);
  }
  return (unsigned char*)r;
}
static void sys(long r, const char* what) {
  if (r != 0) {
    printf("%s failed\n", what);
    exit(3);
  }
}

/* One word at `word` of every `step`-th page of [p, p + n pages). */
static void pages_step(const char* ck, const char* tag, unsigned char* p, long n, long step, int word,
                       unsigned long v) {
  for (long i = 0; i < n; i += step) W8(ck, tag, p + i * PG + word * 8, v + i);
}
static void each_page(const char* ck, const char* tag, unsigned char* p, long n, int word, unsigned long v) {
  pages_step(ck, tag, p, n, 1, word, v);
}
/* The same, untracked by the expect table (between windows). */
static void poke_pages(unsigned char* p, long n, int word, unsigned long v) {
  for (long i = 0; i < n; i++) ((volatile unsigned long*)(p + i * PG))[word] = v + i;
}

/* Deep stack use between windows: the stack's mapping grows down. */
__attribute__((noinline)) static unsigned long deep(int n) {
  volatile unsigned char big[256 * 1024];
  for (size_t i = 0; i < sizeof big; i += 512) big[i] = (unsigned char)(i + n);
  return big[n] + (n > 0 ? deep(n - 1) : 0);
}

int main(void) {
  expect_init();
  volatile unsigned long stack_word[8] = {0};
  unsigned char* dat = (unsigned char*)data_words;
  unsigned char* heap = malloc(16 * PG);
  memset(heap, 0x33, 16 * PG);
  /* The mappings at chosen places of a free range, with unmapped gaps between them: an
   * anonymous mapping right above a PROT_NONE one would pass for a thread stack (not tracked). */
  unsigned char* base = sys_mmap(NULL, 32 << 20, PROT_NONE, MAP_NORESERVE);
  sys(syscall(SYS_munmap, base, 32 << 20), "munmap");
  base = (unsigned char*)(((uintptr_t)base + (2 << 20) - 1) & ~(uintptr_t)((2 << 20) - 1));
  unsigned char* m = sys_mmap(base + 16 * PG, 16 * PG, PROT_READ | PROT_WRITE, MAP_FIXED);
  memset(m, 0x44, 16 * PG);
  /* A reserved range committed from its start, like a heap arena. */
  unsigned char* r = sys_mmap(base + 64 * PG, 64 * PG, PROT_NONE, MAP_NORESERVE | MAP_FIXED);
  sys(syscall(SYS_mprotect, r, 16 * PG, PROT_READ | PROT_WRITE), "mprotect");
  memset(r, 0x55, 16 * PG);
  unsigned char* d = sys_mmap(base + 160 * PG, 8 * PG, PROT_READ | PROT_WRITE, MAP_FIXED);
  memset(d, 0x77, 8 * PG);
  unsigned char* u = sys_mmap(base + 192 * PG, 4 * PG, PROT_READ | PROT_WRITE, MAP_FIXED);
  memset(u, 0x22, 4 * PG);
  /* 4 MiB, 2 MiB aligned: transparent huge pages where the kernel makes them. */
  unsigned char* t = sys_mmap(base + (4 << 20), 4 << 20, PROT_READ | PROT_WRITE, MAP_FIXED);
  madvise(t, 4 << 20, MADV_HUGEPAGE);
  memset(t, 0x66, 4 << 20);
  memset(bss_pages, 0x11, sizeof bss_pages);
  int pipefd[2];
  sys(pipe(pipefd), "pipe");

  /* w1: a word in every page of everything. */
  cape_start();
  each_page("w1", "data", dat, 8, 1, 0x1001);
  each_page("w1", "bss", bss_pages, 8, 1, 0x1101);
  each_page("w1", "heap", heap, 16, 1, 0x1201);
  each_page("w1", "mmap", m, 16, 1, 0x1301);
  each_page("w1", "arena", r, 16, 1, 0x1401);
  pages_step("w1", "thp", t, 1024, 16, 1, 0x1501);
  each_page("w1", "dontneed", d, 8, 1, 0x1601);
  each_page("w1", "remap", u, 4, 1, 0x1701);
  W8("w1", "inject", q_page + 40, 0xabcdef);
  W8("w1", "stack", &stack_word[0], 0x1801);
  cape_create("w1");
  ((volatile unsigned long*)q_page)[5] = 0;  /* back: w1 alone has it */
  cape_stop();

  /* Between w1 and w2. */
  poke_pages(dat, 8, 2, 0x2001);
  poke_pages(bss_pages, 8, 2, 0x2101);
  poke_pages(heap, 16, 2, 0x2201);
  poke_pages(m, 16, 2, 0x2301);
  sys(syscall(SYS_mprotect, r + 16 * PG, 16 * PG, PROT_READ | PROT_WRITE), "mprotect"); /* grows to 32 */
  poke_pages(r, 32, 2, 0x2401);
  sys(syscall(SYS_madvise, d + 2 * PG, 4 * PG, MADV_DONTNEED), "madvise");            /* zeros */
  sys(syscall(SYS_madvise, t + (2 << 20), 2 << 20, MADV_DONTNEED), "madvise");          /* a whole 2 MiB */
  sys_mmap(u, 4 * PG, PROT_READ | PROT_WRITE, MAP_FIXED);                  /* replaced: zeros */
  {
    static const unsigned char msg[64] = "through the kernel";
    if (write(pipefd[1], msg, sizeof msg) != sizeof msg || read(pipefd[0], k_page + 64, sizeof msg) != sizeof msg) {
      printf("pipe failed\n");
      return 3;
    }
  }
  unsigned char* big = malloc(6 << 20); /* the heap grows */
  for (long i = 0; i < (6 << 20); i += PG) big[i] = 0x5a;
  stack_word[1] = deep(8);
  stack_word[2] = 0x2801;

  /* w2: another word in every page that changed. */
  cape_start();
  each_page("w2", "data", dat, 8, 3, 0x3001);
  each_page("w2", "bss", bss_pages, 8, 3, 0x3101);
  each_page("w2", "heap", heap, 16, 3, 0x3201);
  each_page("w2", "mmap", m, 16, 3, 0x3301);
  each_page("w2", "arena", r, 32, 3, 0x3401);
  pages_step("w2", "thp", t + (2 << 20), 512, 16, 3, 0x3501);
  each_page("w2", "dontneed", d, 8, 3, 0x3601);
  each_page("w2", "remap", u, 4, 3, 0x3701);
  each_page("w2", "kernel", k_page, 1, 3, 0x3901);
  pages_step("w2", "big", big, (6 << 20) / PG, 64, 3, 0x3a01);
  W8("w2", "stack", &stack_word[3], 0x3801);
  cape_create("w2");
  cape_stop();

  /* Between w2 and w3. */
  cape_inject("w1"); /* q_page gets its word back (and w1's other words, unchanged) */
  sys_mmap(r + 8 * PG, 24 * PG, PROT_NONE, MAP_FIXED | MAP_NORESERVE); /* shrinks to 8 */
  sys(syscall(SYS_mprotect, r + 8 * PG, 16 * PG, PROT_READ | PROT_WRITE), "mprotect"); /* 24, zeros */
  sys(syscall(SYS_munmap, m + 12 * PG, 4 * PG), "munmap");                         /* loses its end */
  free(big);
  malloc_trim(0);                   /* the heap's top given back */
  unsigned char* big2 = malloc(3 << 20); /* and grown again */
  for (long i = 0; i < (3 << 20); i += PG) big2[i + 8] = 0x5b;

  /* w3. */
  cape_start();
  each_page("w3", "inject", q_page, 1, 4, 0x4001);
  each_page("w3", "arena", r, 24, 4, 0x4401);
  each_page("w3", "mmap", m, 12, 4, 0x4301);
  pages_step("w3", "big", big2, (3 << 20) / PG, 64, 4, 0x4a01);
  cape_create("w3");
  cape_stop();

  /* Between w3 and w4: u leaves the tracked set. */
  sys(syscall(SYS_mprotect, u, 4 * PG, PROT_READ), "mprotect");

  /* w4; a page written after the checkpoint (stale copy at stop()). */
  cape_start();
  each_page("w4", "data", dat, 8, 5, 0x5001);
  each_page("w4", "arena", r, 24, 5, 0x5401); /* its two parts, one mapping since w3 */
  cape_create("w4");
  ((volatile unsigned long*)bss_pages)[6] = 0x5102;
  cape_stop();

  /* Between w4 and w5: u comes back, written. */
  sys(syscall(SYS_mprotect, u, 4 * PG, PROT_READ | PROT_WRITE), "mprotect");
  poke_pages(u, 4, 6, 0x6701);

  /* w5. */
  cape_start();
  each_page("w5", "remap", u, 4, 7, 0x7701);
  each_page("w5", "bss", bss_pages, 1, 7, 0x7101);
  cape_create("w5");
  cape_stop();

  print_expects();
  printf("stack %lx\n", (unsigned long)stack_word);
  return 0;
}

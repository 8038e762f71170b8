/* The cape heap (runtime/src/heap_*.c) natively, without a monitor: this program is linked
 * with libcape's heap, so its malloc, libc's own allocations and its anonymous mmaps are
 * the cape heap's. Windows are entered with the heap's hidden hooks (cape_heap_settle /
 * enter / leave), as cape_start() and cape_stop() do after their traps; the traps themselves
 * are never run (libcape refuses to run them without a monitor).
 *
 *   heap_test CASE      (basic, aligned, libc, window, mmap, stress, threads, nodes, trim,
 *                        failures); exit 0 when every check holds
 *
 * `nodes` forks one process per node and exchanges what each changed in the heap the way
 * the monitor does (word diffs of the tracked memory, mapping growth replayed by mprotect),
 * so it checks the heap's contract without the monitor: nodes allocating at once never
 * write the same word, and after the exchange the heap is whole and every block valid.
 *
 * This file: main and the helpers (heap_test.h); the cases are in heap_*_test.c.
 */
#define _GNU_SOURCE
#include <string.h>

#include "heap_test.h"

int failures;

static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;
uint64_t rnd(void) {
  uint64_t x = rng_state;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return rng_state = x;
}

size_t random_size(void) {
  unsigned e = (unsigned)(rnd() % 20), f = (unsigned)(rnd() % 20), g = (unsigned)(rnd() % 20);
  if (f < e) e = f;
  if (g < e) e = g;
  size_t s = ((size_t)16 << e) + rnd() % ((size_t)16 << e);
  return s > (8u << 20) ? (8u << 20) : s;
}

/* A block's contents: every 8-byte word is tag ^ its index, so a moved or overwritten word
 * is seen; a tail shorter than a word holds the first bytes of its word (so any prefix of a
 * filled block holds the pattern of that length). */
static inline unsigned char tail_byte(uint64_t tag, size_t i) { return (unsigned char)((tag ^ (i / 8)) >> (8 * (i % 8))); }
void fill(void *p, size_t n, uint64_t tag) {
  uint64_t *w = p;
  size_t k;
  for (k = 0; k < n / 8; k++) w[k] = tag ^ k;
  for (size_t i = k * 8; i < n; i++) ((unsigned char *)p)[i] = tail_byte(tag, i);
}
int holds(const void *p, size_t n, uint64_t tag) {
  const uint64_t *w = p;
  size_t k;
  for (k = 0; k < n / 8; k++)
    if (w[k] != (tag ^ k)) return 0;
  for (size_t i = k * 8; i < n; i++)
    if (((const unsigned char *)p)[i] != tail_byte(tag, i)) return 0;
  return 1;
}
int zeros(const void *p, size_t n) {
  const unsigned char *c = p;
  for (size_t i = 0; i < n; i++)
    if (c[i]) return 0;
  return 1;
}

size_t opaque(size_t n) {
  volatile size_t v = n;
  return v;
}
void *opaque_ptr(void *p) {
  void *volatile v = p;
  return v;
}

struct cape_heap_stats stats(int arena) {
  struct cape_heap_stats s;
  REQUIRE(cape_heap_stats(arena, &s) == 0);
  return s;
}

int main(int argc, char **argv) {
  static const struct {
    const char *name;
    void (*fn)(void);
  } cases[] = {{"basic", test_basic},   {"aligned", test_aligned}, {"libc", test_libc},
               {"window", test_window}, {"mmap", test_mmap},       {"stress", test_stress},
               {"threads", test_threads}, {"nodes", test_nodes},   {"trim", test_trim},
               {"failures", test_failures}};
  if (argc != 2) {
    fprintf(stderr, "usage: heap_test CASE\n");
    return 2;
  }
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    if (strcmp(argv[1], cases[i].name) == 0) {
      cases[i].fn();
      if (failures) fprintf(stderr, "%s: %d checks failed\n", argv[1], failures);
      else printf("%s: ok\n", argv[1]);
      return failures ? 1 : 0;
    }
  fprintf(stderr, "heap_test: unknown case '%s'\n", argv[1]);
  return 2;
}

/* Helpers of the contract programs (issue 10): deterministic contents for a block of memory,
 * a count of the bytes that differ from them and a checksum, so that a block another node
 * allocated, filled or lost shows as a different number in the output compared with
 * gcc -fopenmp, not only as a crash. Plain C, no OpenMP: the same on every node. */
#ifndef CAPE_CONTRACT_H
#define CAPE_CONTRACT_H

#include <stddef.h>

static inline unsigned char pattern(unsigned seed, size_t i) {
  return (unsigned char)((seed * 2654435761u) ^ (unsigned)(i * 40503u) ^ (unsigned)(i >> 9));
}

/* Whole blocks: every byte. */
static inline void fill(void *p, size_t n, unsigned seed) {
  unsigned char *c = p;
  for (size_t i = 0; i < n; i++) c[i] = pattern(seed, i);
}

static inline size_t wrong(const void *p, size_t n, unsigned seed) {
  const unsigned char *c = p;
  size_t bad = 0;
  for (size_t i = 0; i < n; i++) bad += c[i] != pattern(seed, i);
  return bad;
}

static inline size_t nonzero(const void *p, size_t n) {
  const unsigned char *c = p;
  size_t bad = 0;
  for (size_t i = 0; i < n; i++) bad += c[i] != 0;
  return bad;
}

static inline unsigned long sum(const void *p, size_t n) {
  const unsigned char *c = p;
  unsigned long h = 1469598103934665603ul;
  for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * 1099511628211ul;
  return h;
}

#endif

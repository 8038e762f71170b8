/* The stress test: 200 regions, each allocating, reallocating and freeing blocks of
 * random sizes (16 B to 8 MiB, log-uniform, fixed seeds) in `single`, in `master` and in the
 * loop bodies on every node, linking them into shared lists; then every thread (every node)
 * walks every list and checks every block, and the sequential part prints what each thread
 * saw. Blocks are written sparsely (their first 256 and last 64 bytes and one byte in every
 * 64 KiB) so that 8 MiB blocks cost little to fill and check. Every random choice comes
 * from a generator whose state is shared data (single, master) or from the region and
 * iteration numbers (loop bodies), so gcc -fopenmp's run is deterministic. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <omp.h>

#define REGIONS 200
#define SLOTS 8
#define KEEP 4
#define MAXT 64

enum { K_MALLOC, K_CALLOC, K_MEMALIGN, K_ALIGNED, K_MMAP, NKIND };

struct ref {
  struct ref *next;
  unsigned char *data;
  size_t size;
  unsigned seed;
  int kind;
};

static struct ref *single_list, *master_list, *slot_list[SLOTS];
static unsigned long single_rng = 0x9e3779b97f4a7c15ul, master_rng = 0xd1b54a32d192ed03ul;
static long single_err, master_err, slot_err[SLOTS];
static unsigned long seen_sum[MAXT], seen_blocks[MAXT], seen_bad[MAXT], seen_bytes[MAXT];
static int team;

static unsigned long mix(unsigned long z) {   /* splitmix64's finaliser */
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ul;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebul;
  return z ^ (z >> 31);
}

static unsigned long step(unsigned long *s) {
  *s += 0x9e3779b97f4a7c15ul;
  return mix(*s);
}

static size_t random_size(unsigned long r) {
  int e = (int)(r % 20);                 /* 16 << 0 .. 16 << 19 = 8 MiB */
  size_t lo = (size_t)16 << e;
  size_t n = lo + (size_t)(r >> 8) % lo;
  return n > ((size_t)8 << 20) ? (size_t)8 << 20 : n;
}

static unsigned char pat(unsigned seed, size_t i) {
  return (unsigned char)mix(seed * 1000003ul + i);
}

/* The written positions of a block of n bytes: every byte up to 320, else the first 256,
 * the last 64 and every 64 KiB. */
static size_t next_pos(size_t i, size_t n) {
  if (n <= 320 || i + 1 < 256) return i + 1;
  if (i + 1 >= n - 64) return i + 1;
  size_t k = (i + 1 + 65535) / 65536 * 65536;
  return k < n - 64 ? k : n - 64;
}

static void write_block(unsigned char *p, size_t n, unsigned seed) {
  for (size_t i = 0; i < n; i = next_pos(i, n)) p[i] = pat(seed, i);
}

/* Bytes at the written positions (below `upto`) that differ from the pattern. */
static long check_block(const unsigned char *p, size_t n, unsigned seed, size_t upto) {
  long bad = 0;
  for (size_t i = 0; i < n && i < upto; i = next_pos(i, n)) bad += p[i] != pat(seed, i);
  return bad;
}

static long zero_block(const unsigned char *p, size_t n) {
  long bad = 0;
  for (size_t i = 0; i < n; i = next_pos(i, n)) bad += p[i] != 0;
  return bad;
}

static struct ref *new_block(unsigned long r, struct ref *next, long *err) {
  struct ref *b = malloc(sizeof *b);
  if (!b) { printf("malloc failed\n"); exit(2); }
  b->kind = (int)(r % NKIND);
  b->size = random_size(mix(r));
  b->seed = (unsigned)(r >> 32);
  void *p = NULL;
  switch (b->kind) {
    case K_MALLOC: p = malloc(b->size); break;
    case K_CALLOC: p = calloc(1, b->size); break;
    case K_MEMALIGN: if (posix_memalign(&p, 64, b->size)) p = NULL; break;
    case K_ALIGNED: p = aligned_alloc(32, (b->size + 31) / 32 * 32); break;
    case K_MMAP:
      p = mmap(NULL, b->size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) p = NULL;
      break;
  }
  if (!p) { printf("allocation of %zu bytes failed\n", b->size); exit(2); }
  b->data = p;
  if (b->kind == K_CALLOC || b->kind == K_MMAP) *err += zero_block(b->data, b->size);
  write_block(b->data, b->size, b->seed);
  b->next = next;
  return b;
}

static void free_block(struct ref *b) {
  if (b->kind == K_MMAP) munmap(b->data, b->size);
  else free(b->data);
  free(b);
}

/* realloc (a new mapping and a copy for mmap'd blocks), checking that the bytes are kept. */
static void resize_block(struct ref *b, unsigned long r, long *err) {
  size_t n = random_size(r);
  unsigned char *p;
  if (b->kind == K_MMAP) {
    p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) { printf("mmap of %zu bytes failed\n", n); exit(2); }
    memcpy(p, b->data, n < b->size ? n : b->size);
    munmap(b->data, b->size);
  } else {
    p = realloc(b->data, n);
    if (!p) { printf("realloc to %zu bytes failed\n", n); exit(2); }
  }
  *err += check_block(p, b->size, b->seed, n);
  b->data = p;
  b->size = n;
  b->seed = (unsigned)(r >> 32) ^ 0x5a5a5a5au;
  write_block(p, n, b->seed);
}

/* One list's turn: a new block at the head, a resize of one, the oldest beyond KEEP freed. */
static void churn(struct ref **list, unsigned long r1, unsigned long r2, unsigned long r3, long *err) {
  *list = new_block(r1, *list, err);
  int k = 0;
  for (struct ref *b = *list; b; b = b->next, k++)
    if (k == (int)(r2 % (KEEP + 1))) {
      resize_block(b, r3, err);
      break;
    }
  k = 0;
  for (struct ref **p = list; *p; k++) {
    if (k >= KEEP) {
      struct ref *dead = *p;
      *p = dead->next;
      free_block(dead);
    } else {
      p = &(*p)->next;
    }
  }
}

static void look(const struct ref *b, unsigned long *sum, unsigned long *blocks, unsigned long *bad, unsigned long *bytes) {
  for (; b; b = b->next) {
    *bad += (unsigned long)check_block(b->data, b->size, b->seed, b->size);
    *blocks += 1;
    *bytes += b->size;
    *sum = *sum * 1000003ul + b->size + b->data[0] + b->data[b->size - 1];
  }
}

int main(void) {
  unsigned long total = 0;
  for (int region = 0; region < REGIONS; region++) {
#pragma omp parallel
    {
#pragma omp single
      {
        team = omp_get_num_threads();
        churn(&single_list, step(&single_rng), step(&single_rng), step(&single_rng), &single_err);
      }
#pragma omp master
      churn(&master_list, step(&master_rng), step(&master_rng), step(&master_rng), &master_err);
#pragma omp barrier
#pragma omp for schedule(static)
      for (int i = 0; i < SLOTS; i++) {
        unsigned long r = mix((unsigned long)region * SLOTS + (unsigned long)i + 1);
        churn(&slot_list[i], r, mix(r + 1), mix(r + 2), &slot_err[i]);
      }
      int t = omp_get_thread_num();
      unsigned long s = 0, blocks = 0, bad = 0, bytes = 0;
      look(single_list, &s, &blocks, &bad, &bytes);
      look(master_list, &s, &blocks, &bad, &bytes);
      for (int i = 0; i < SLOTS; i++) look(slot_list[i], &s, &blocks, &bad, &bytes);
      seen_sum[t] = s;
      seen_blocks[t] = blocks;
      seen_bad[t] = bad;
      seen_bytes[t] = bytes;
    }
    for (int t = 0; t < team; t++) {
      printf("region %d, thread %d: %lu blocks, %lu bytes, %lu bad, checksum %lu\n", region, t,
             seen_blocks[t], seen_bytes[t], seen_bad[t], seen_sum[t]);
      total = total * 31 + seen_sum[t];
    }
    /* Every 20 regions the sequential part (every node alike) empties a loop list. */
    if (region % 20 == 19) {
      struct ref **l = &slot_list[region / 20 % SLOTS];
      while (*l) {
        struct ref *n = (*l)->next;
        free_block(*l);
        *l = n;
      }
    }
  }
  long err = single_err + master_err;
  for (int i = 0; i < SLOTS; i++) err += slot_err[i];
  printf("total %lu, errors %ld\n", total, err);
  return 0;
}

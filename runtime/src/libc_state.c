/* libc state a region may change on one node, moved into the program's tracked memory.
 *
 * glibc keeps rand()'s and random()'s state, drand48()'s and strtok()'s position in its own
 * .data, which the monitor does not track: a `single` or `master` calling rand() advanced
 * the sequence on one node only, and the next rand() of the sequential part gave each node
 * another value, which the program then used with no message (a stack local feeding a
 * parallel for: every slave computed with its own). These definitions keep the same state
 * in a heap block allocated before main (dynamic memory, which travels in a region's
 * checkpoint under both models: TICKPT ships no unregistered static data), so a region's
 * change travels like the program's own data, and the sequential part stays identical on
 * every node. The sequences are glibc's, value for value (its TYPE_3
 * additive generator and its 48-bit congruential one), so output equals gcc -fopenmp's.
 *
 * The object is taken from libcape.a only by a program that calls one of these. A program
 * that calls initstate() or setstate() gets glibc's generator from then on (its own state
 * buffer). CAPE_LIBC_STATE=0: glibc's functions throughout (the old way). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static struct libc_state {
  int mode;       /* 1: ours; 2: glibc's */
  int seeded;     /* random(): 0 until srandom() or the first call (glibc starts as srandom(1)) */
  int32_t state[31];
  int fptr, rptr; /* indices into state, glibc's fptr and rptr */
  int lock;       /* the two-level model's threads share one sequence, as glibc's lock does */
  unsigned short x48[3], old48[3];
  unsigned long long a48;
  unsigned short c48, init48;
  char *tok_pos;  /* strtok's position: a pointer into the caller's string (same on every node) */
} *S;             /* written before main only (every node alike) */

__attribute__((constructor)) static void libc_state_init(void) {
  if (S) return;
  S = calloc(1, sizeof *S);
  if (!S) abort();
  const char *s = getenv("CAPE_LIBC_STATE");
  S->mode = s && s[0] == '0' && !s[1] ? 2 : 1;
}
#define mode (S->mode)
#define seeded (S->seeded)
#define state (S->state)
#define fptr (S->fptr)
#define rptr (S->rptr)
#define lock (S->lock)
#define x48 (S->x48)
#define old48 (S->old48)
#define a48 (S->a48)
#define c48 (S->c48)
#define init48 (S->init48)
#define tok_pos (S->tok_pos)

static void *next(const char *name) {
  void *f = dlsym(RTLD_NEXT, name);
  if (!f) abort();
  return f;
}

static int ours(void) {
  if (!S) libc_state_init(); /* (a constructor that ran before ours) */
  return mode == 1;
}

static void take(void) {
  while (__atomic_exchange_n(&lock, 1, __ATOMIC_ACQUIRE)) __builtin_ia32_pause();
}
static void give(void) { __atomic_store_n(&lock, 0, __ATOMIC_RELEASE); }

/* glibc's random_r for TYPE_3 (degree 31, separation 3). */
static int32_t next_random(void) {
  uint32_t val = (uint32_t)(state[fptr] += (uint32_t)state[rptr]);
  if (++fptr >= 31) {
    fptr = 0;
    ++rptr;
  } else if (++rptr >= 31) {
    rptr = 0;
  }
  return (int32_t)(val >> 1);
}

/* glibc's srandom_r. */
static void seed_random(unsigned int seed) {
  if (seed == 0) seed = 1;
  state[0] = (int32_t)seed;
  int32_t word = (int32_t)seed;
  for (int i = 1; i < 31; ++i) {
    long hi = word / 127773, lo = word % 127773;
    word = (int32_t)(16807 * lo - 2836 * hi);
    if (word < 0) word += 2147483647;
    state[i] = word;
  }
  fptr = 3;
  rptr = 0;
  for (int k = 0; k < 310; ++k) (void)next_random();
  seeded = 1;
}

void srandom(unsigned int seed) {
  if (!ours()) {
    ((void (*)(unsigned int))next("srandom"))(seed);
    return;
  }
  take();
  seed_random(seed);
  give();
}

void srand(unsigned int seed) {
  if (!ours()) {
    ((void (*)(unsigned int))next("srand"))(seed);
    return;
  }
  srandom(seed);
}

long int random(void) {
  if (!ours()) return ((long int (*)(void))next("random"))();
  take();
  if (!seeded) seed_random(1);
  int32_t r = next_random();
  give();
  return r;
}

int rand(void) {
  if (!ours()) return ((int (*)(void))next("rand"))();
  return (int)random();
}

/* Another state buffer: glibc's generator from now on. */
char *initstate(unsigned int seed, char *buf, size_t n) {
  (void)ours();
  mode = 2;
  return ((char *(*)(unsigned int, char *, size_t))next("initstate"))(seed, buf, n);
}

char *setstate(char *buf) {
  (void)ours();
  mode = 2;
  return ((char *(*)(char *))next("setstate"))(buf);
}

/* drand48 and its kin on glibc's internal buffer: X' = a X + c mod 2^48. */

static void iterate48(void) {
  if (!init48) {
    a48 = 0x5deece66dULL;
    c48 = 0xb;
    init48 = 1;
  }
  uint64_t X = (uint64_t)x48[2] << 32 | (uint32_t)x48[1] << 16 | x48[0];
  uint64_t r = X * a48 + c48;
  x48[0] = (unsigned short)(r & 0xffff);
  x48[1] = (unsigned short)((r >> 16) & 0xffff);
  x48[2] = (unsigned short)((r >> 32) & 0xffff);
}

double drand48(void) {
  if (!ours()) return ((double (*)(void))next("drand48"))();
  take();
  iterate48();
  /* glibc's erand48_r: the 48 bits as the mantissa of a double in [1, 2), minus 1. */
  uint64_t bits = 0x3ffULL << 52 | (uint64_t)x48[2] << 36 | (uint64_t)x48[1] << 20 | (uint64_t)x48[0] << 4;
  give();
  double d;
  memcpy(&d, &bits, sizeof d);
  return d - 1.0;
}

long int lrand48(void) {
  if (!ours()) return ((long int (*)(void))next("lrand48"))();
  take();
  iterate48();
  long int r = (long int)x48[2] << 15 | x48[1] >> 1;
  give();
  return r;
}

long int mrand48(void) {
  if (!ours()) return ((long int (*)(void))next("mrand48"))();
  take();
  iterate48();
  long int r = (int32_t)((uint32_t)x48[2] << 16 | x48[1]);
  give();
  return r;
}

void srand48(long int seed) {
  if (!ours()) {
    ((void (*)(long int))next("srand48"))(seed);
    return;
  }
  take();
  x48[2] = (unsigned short)(seed >> 16);
  x48[1] = (unsigned short)(seed & 0xffff);
  x48[0] = 0x330e;
  a48 = 0x5deece66dULL;
  c48 = 0xb;
  init48 = 1;
  give();
}

unsigned short int *seed48(unsigned short int seed16v[3]) {
  if (!ours()) return ((unsigned short int *(*)(unsigned short int *))next("seed48"))(seed16v);
  take();
  memcpy(old48, x48, sizeof old48);
  x48[2] = seed16v[2];
  x48[1] = seed16v[1];
  x48[0] = seed16v[0];
  a48 = 0x5deece66dULL;
  c48 = 0xb;
  init48 = 1;
  give();
  return old48;
}

void lcong48(unsigned short int param[7]) {
  if (!ours()) {
    ((void (*)(unsigned short int *))next("lcong48"))(param);
    return;
  }
  take();
  memcpy(x48, param, sizeof x48);
  a48 = (uint64_t)param[5] << 32 | (uint32_t)param[4] << 16 | param[3];
  c48 = param[6];
  init48 = 1;
  give();
}


char *strtok(char *restrict s, const char *restrict delim) {
  if (!ours()) return ((char *(*)(char *, const char *))next("strtok"))(s, delim);
  return strtok_r(s, delim, &tok_pos);
}

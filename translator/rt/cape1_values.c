/* CAPE-1's values that a merge of writes cannot give (cape1_values.h, docs/cape1.md
 * "Regions"). Fig. 2 (003_45ed75503520c8f4.txt) merges the parts' writes; two parts'
 * partial results of one reduction are two values of one variable, which a merge would
 * call a conflict. So each part puts its partial result into a slot of its own (static
 * memory, merged as any write: each part writes only its slot) and its variable back; the
 * part that goes on combines original (+) slot 0 (+) ... (+) slot P-1, 002 Def. 4.4, in part
 * order. Threadprivate variables (002 Fig. 6) live in each part's process; between regions
 * each slave part's values wait in its slot and come back when it is restarted. */
#define _GNU_SOURCE
#include <cape/cape.h>
#include <cape/cape1_cc.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cape1_values.h"

#define MAX_VARS 128
#define ORIG_BYTES (64 * 1024)
#define SLOT_BYTES (4 << 20)

/* Slots: made before main (cape1_values_init, from cape1_cc_init's constructors: the same
 * address in every part, which all start from the master's image); each part writes its
 * own. Not static arrays: every program links this file, and 8 MiB of .bss that only
 * --model=cape1 uses made every region of a CAPE-2 program scan 2048 more page table
 * entries per tracker scan (issue 14: a quarter of an empty region's CPU). */
static unsigned char *red_slots;
static unsigned char *tp_slots;

void cape1_values_init(void) {
  if (red_slots) return;
  red_slots = calloc(2, SLOT_BYTES);
  if (!red_slots) {
    fprintf(stderr, "cape: --model=cape1: no memory for the parts' values\n");
    abort();
  }
  tp_slots = red_slots + SLOT_BYTES;
}

/* This region's registrations: TLS (every part registers the same ones, in the same order,
 * so the slot offsets agree). */
static __thread struct red {
  unsigned char *addr;
  unsigned long size, orig, slot; /* offsets into orig[] and red_slots */
  int op, type;
} reds[MAX_VARS];
static __thread int nreds;
static __thread unsigned long red_used, red_orig_used, orig_used;
static __thread unsigned char red_orig[ORIG_BYTES]; /* the reductions' values before the step */
static __thread unsigned char orig[ORIG_BYTES];     /* threadprivate: the master's, a part's own */

/* Threadprivate variables: where each one's slots are (static: the same in every part and
 * every region; written the same way by every part). */
static struct tp {
  unsigned char *addr;
  unsigned long size, slot; /* part k's copy at tp_slots + slot + k * size */
  unsigned char filled[CAPE1_MAX_PARTS];
} tps[MAX_VARS];
static int ntps;
static unsigned long tp_used;
/* This region's: TLS. */
static __thread int tp_here[MAX_VARS], ntp_here;
static __thread unsigned long tp_orig[MAX_VARS], tp_kept[MAX_VARS]; /* offsets into orig[] */
static __thread void *copyins[MAX_VARS];
static __thread int ncopyins;

static void too_many(const char *what) {
  fprintf(stderr, "cape: --model=cape1: %s (docs/cape1.md, \"Regions\")\n", what);
  abort();
}

static unsigned long take(unsigned long *used, unsigned long size) {
  if (size > ORIG_BYTES - *used) too_many("a region's reduction or threadprivate variables exceed 64 KiB");
  unsigned long at = *used;
  *used += (size + 15) & ~15UL;
  return at;
}

void cape1_values_begin(void) { nreds = ntp_here = ncopyins = 0, red_used = red_orig_used = orig_used = 0; }

/* ---- 002 Def. 4.4: identities and the operators, element by element ---- */

#define EACH_TYPE(X) \
  X(CAPE_T_INT8, int8_t, INT8_MIN, INT8_MAX) X(CAPE_T_UINT8, uint8_t, 0, UINT8_MAX) \
  X(CAPE_T_INT16, int16_t, INT16_MIN, INT16_MAX) X(CAPE_T_UINT16, uint16_t, 0, UINT16_MAX) \
  X(CAPE_T_INT32, int32_t, INT32_MIN, INT32_MAX) X(CAPE_T_UINT32, uint32_t, 0, UINT32_MAX) \
  X(CAPE_T_INT64, int64_t, INT64_MIN, INT64_MAX) X(CAPE_T_UINT64, uint64_t, 0, UINT64_MAX) \
  X(CAPE_T_FLOAT, float, -INFINITY, INFINITY) X(CAPE_T_DOUBLE, double, -INFINITY, INFINITY)

#define IS_FLOAT(T) ((T)0.5 != 0)

#define IDENTITY(code, T, lo, hi)                                      \
  case code: {                                                         \
    T v = 0;                                                           \
    if (op == CAPE_RED_MUL || op == CAPE_RED_LAND) v = 1;              \
    if (op == CAPE_RED_MIN) v = hi;                                    \
    if (op == CAPE_RED_MAX) v = lo;                                    \
    for (unsigned long i = 0; i < n; i++) memcpy(p + i * sizeof v, &v, sizeof v); \
    if (op == CAPE_RED_BAND && !IS_FLOAT(T)) memset(p, 0xff, n * sizeof v); \
    return sizeof v;                                                   \
  }

static unsigned long identity(unsigned char *p, unsigned long size, int op, int type) {
  unsigned long n = size;
  switch (type) {
#define N_OF(code, T, lo, hi) case code: n = size / sizeof(T); break;
    EACH_TYPE(N_OF)
#undef N_OF
    default: too_many("a reduction of an unknown type");
  }
  switch (type) { EACH_TYPE(IDENTITY) }
  return 0;
}

#define COMBINE(code, T, lo, hi)                                                   \
  case code:                                                                       \
    for (unsigned long i = 0; i + sizeof(T) <= size; i += sizeof(T)) {            \
      T a, b;                                                                      \
      memcpy(&a, into + i, sizeof a);                                              \
      memcpy(&b, from + i, sizeof b);                                              \
      switch (op) {                                                                \
        case CAPE_RED_ADD: case CAPE_RED_SUB: a = a + b; break;                    \
        case CAPE_RED_MUL: a = a * b; break;                                       \
        case CAPE_RED_LAND: a = a && b; break;                                     \
        case CAPE_RED_LOR: a = a || b; break;                                      \
        case CAPE_RED_MIN: a = b < a ? b : a; break;                               \
        case CAPE_RED_MAX: a = b > a ? b : a; break;                               \
        default: bits(&a, &b, sizeof a, op);                                       \
      }                                                                            \
      memcpy(into + i, &a, sizeof a);                                              \
    }                                                                              \
    return;

static void bits(void *a, const void *b, unsigned long n, int op) {
  unsigned char *x = a;
  const unsigned char *y = b;
  for (unsigned long i = 0; i < n; i++)
    x[i] = op == CAPE_RED_BAND ? x[i] & y[i] : op == CAPE_RED_BOR ? x[i] | y[i] : x[i] ^ y[i];
}

static void combine(unsigned char *into, const unsigned char *from, unsigned long size, int op, int type) {
  switch (type) { EACH_TYPE(COMBINE) }
}

/* ---- registrations (cape1_cc.h maps the translated code's calls here) ---- */

void cape1_cc_reduction(void *addr, unsigned long size, int op, int type) {
  if (cape1_cc_part() < 0) return; /* a serial region: the variable is its own result */
  if (nreds == MAX_VARS) too_many("more than 128 reduction variables in one region");
  unsigned long need = size * (unsigned long)cape1_cc_parts();
  if (need > SLOT_BYTES - red_used) too_many("the parts' partial results exceed 4 MiB");
  struct red *r = &reds[nreds++];
  r->addr = addr;
  r->size = size;
  r->op = op;
  r->type = type;
  r->slot = red_used;
  red_used += (need + 15) & ~15UL;
  r->orig = take(&red_orig_used, size);
  memcpy(red_orig + r->orig, addr, size);
  identity(r->addr, size, op, type); /* this part's private copy starts from the identity */
}

void cape1_cc_copyin(void *addr, unsigned long size) {
  (void)size;
  if (ncopyins == MAX_VARS) too_many("more than 128 copyin variables");
  copyins[ncopyins++] = addr;
}

void cape1_cc_threadprivate(void *addr, unsigned long size) {
  int me = cape1_cc_part();
  if (me < 0) return;
  for (int i = 0; i < ntp_here; i++)
    if (tps[tp_here[i]].addr == addr) return; /* registered again (a barrier) */
  int t = 0;
  while (t < ntps && tps[t].addr != addr) t++;
  if (t == ntps) { /* every part adds it the same way */
    if (ntps == MAX_VARS) too_many("more than 128 threadprivate variables");
    unsigned long need = size * (unsigned long)CAPE1_MAX_PARTS;
    if (need > SLOT_BYTES - tp_used) too_many("threadprivate variables exceed 4 MiB for 64 parts");
    tps[t].addr = addr;
    tps[t].size = size;
    tps[t].slot = tp_used;
    tp_used += (need + 15) & ~15UL;
    ntps++;
  }
  if (ntp_here == MAX_VARS) too_many("more than 128 threadprivate variables");
  int h = ntp_here++;
  tp_here[h] = t;
  tp_orig[h] = take(&orig_used, size);
  tp_kept[h] = take(&orig_used, size);
  memcpy(orig + tp_orig[h], addr, size); /* the master's value */
  int copied = 0;
  for (int i = 0; i < ncopyins; i++) copied |= copyins[i] == addr;
  /* A slave part's copy from its last region (the master's is the variable itself);
   * copyin: the master's value, which every part has. */
  if (me > 0 && !copied && tps[t].filled[me]) memcpy(addr, tp_slots + tps[t].slot + (unsigned long)me * size, size);
  /* Its first region: the initial value, not the master's after the sequential part's
   * writes (OpenMP; session 15: tests/idioms/tp_seq.c). */
  else if (me > 0 && !copied) (void)cape_cc_tp_initial(addr, size, addr);
}

void cape1_values_out(int me, int end) {
  for (int i = 0; i < nreds; i++) {
    struct red *r = &reds[i];
    memcpy(red_slots + r->slot + (unsigned long)me * r->size, r->addr, r->size);
    memcpy(r->addr, red_orig + r->orig, r->size);
  }
  for (int h = 0; h < ntp_here; h++) {
    struct tp *t = &tps[tp_here[h]];
    if (end) {
      if (me > 0) {
        memcpy(tp_slots + t->slot + (unsigned long)me * t->size, t->addr, t->size);
        t->filled[me] = 1;
        memcpy(t->addr, orig + tp_orig[h], t->size); /* the master's value stays */
      }
    } else {
      memcpy(orig + tp_kept[h], t->addr, t->size);
      memcpy(t->addr, orig + tp_orig[h], t->size);
    }
  }
}

void cape1_values_in(int me, int end) {
  (void)me;
  int parts = cape1_cc_parts();
  for (int i = 0; i < nreds; i++) {
    struct red *r = &reds[i];
    for (int k = 0; k < parts; k++)
      combine(r->addr, red_slots + r->slot + (unsigned long)k * r->size, r->size, r->op, r->type);
  }
  nreds = 0;
  red_used = red_orig_used = 0;
  if (end) {
    ntp_here = ncopyins = 0;
    orig_used = 0;
    return;
  }
  for (int h = 0; h < ntp_here; h++) memcpy(tps[tp_here[h]].addr, orig + tp_kept[h], tps[tp_here[h]].size);
}

/* Helpers for victim programs: they list what they write so that the test can compare it
 * with the checkpoint. The list lives in a MAP_SHARED mapping, which the monitor does not
 * track, and is printed after cape_stop() (printing writes the heap). */
#ifndef CAPE_TEST_EXPECT_H
#define CAPE_TEST_EXPECT_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

struct expect {
  const char* ck;   /* checkpoint it must be in */
  const char* tag;  /* data, bss, heap, mmap, stack */
  uintptr_t addr;
  unsigned len;
  unsigned char bytes[64];
  unsigned char old[64]; /* what was there before */
};
struct expect_table {
  int n;
  struct expect e[1024];
};
static struct expect_table* expects;

static void expect_init(void) {
  expects = mmap(NULL, sizeof *expects, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (expects == MAP_FAILED) {
    perror("mmap");
    _exit(2);
  }
}

/* Records what `len` bytes at `p` hold and are about to hold; returns where the value is kept. */
static const void* expect_bytes(const char* ck, const char* tag, const void* p, const void* v,
                                unsigned len) {
  struct expect* e = &expects->e[__atomic_fetch_add(&expects->n, 1, __ATOMIC_SEQ_CST)];
  e->ck = ck;
  e->tag = tag;
  e->addr = (uintptr_t)p;
  e->len = len;
  memcpy(e->bytes, v, len);
  memcpy(e->old, p, len);
  return e->bytes;
}

/* Writes `value` (of `type`) at `ptr` and lists it, with no other write of our own. */
#define W(ck, tag, ptr, type, value)                                                   \
  do {                                                                                 \
    type v_ = (value);                                                                 \
    *(volatile type*)(ptr) = *(const type*)expect_bytes(ck, tag, (const void*)(ptr), &v_, sizeof v_); \
  } while (0)

static void print_expects(void) {
  for (int i = 0; i < expects->n; i++) {
    struct expect* e = &expects->e[i];
    printf("expect %s %s %lx ", e->ck, e->tag, (unsigned long)e->addr);
    for (unsigned k = 0; k < e->len; k++) printf("%02x", e->bytes[k]);
    printf(" ");
    for (unsigned k = 0; k < e->len; k++) printf("%02x", e->old[k]);
    printf("\n");
  }
}

#endif

/* Helpers for victim programs: they print what they wrote, after cape_stop(), so that the
 * test can compare it with the checkpoint (printing allocates and writes the heap, so it
 * must happen outside the start()/stop() window). */
#ifndef CAPE_TEST_EXPECT_H
#define CAPE_TEST_EXPECT_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct expect {
  const char* ck;   /* checkpoint it must be in */
  const char* tag;  /* data, bss, heap, mmap, stack */
  uintptr_t addr;
  unsigned len;
  unsigned char bytes[64];
};

static struct expect expects[128];
static int n_expects;

/* Records (before the write happens) what `len` bytes at `p` will hold. */
static void expect_bytes(const char* ck, const char* tag, const void* p, const void* v, unsigned len) {
  struct expect* e = &expects[n_expects++];
  e->ck = ck;
  e->tag = tag;
  e->addr = (uintptr_t)p;
  e->len = len;
  memcpy(e->bytes, v, len);
}

static void print_expects(void) {
  for (int i = 0; i < n_expects; i++) {
    printf("expect %s %s %lx ", expects[i].ck, expects[i].tag, (unsigned long)expects[i].addr);
    for (unsigned k = 0; k < expects[i].len; k++) printf("%02x", expects[i].bytes[k]);
    printf("\n");
  }
}

#endif

/* Known write patterns in every part of the tracked set (tests/monitor/monitor_test.cpp).
 *   patterns produce   writes inside start()/stop(), creates "first" and "second", prints
 *                      what it wrote ("expect CK TAG ADDR HEX") and the untouched canaries
 *   patterns consume   maps the same memory, injects "first" then "second" (given with
 *                      --load), checks every byte and prints "consume ok"
 * Writes happen through volatile pointers so that they are exactly the ones listed. */
#include <cape/cape.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "expect.h"

long data_words[1024] = {1, 2, 3};         /* .data: 8 KiB, initialised */
unsigned char bss_bytes[3 * 4096 + 512];  /* .bss */
long canary_bss[512];                     /* never written in the window */

typedef unsigned char* ucp;

/* A mapping the kernel makes (libcape's mmap would serve this one from the cape heap): the
 * monitor must track anonymous mappings made inside a window. */
static unsigned char* kernel_mmap(size_t len) {
  return (unsigned char*)syscall(SYS_mmap, NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
}
static unsigned char* heap_block;
static unsigned char* map_block;

__attribute__((noinline)) static void writes_first(volatile unsigned char* stack_buf) {
  W("first", "data", &data_words[5], long, 0x1122334455667788L);
  W("first", "data", (char*)&data_words[700] + 3, unsigned char, 0xab); /* one byte */
  W("first", "bss", &bss_bytes[10], unsigned short, 0xbeef);
  /* straddles the page boundary inside .bss */
  W("first", "bss", &bss_bytes[4096 - ((uintptr_t)bss_bytes & 4095) - 4], unsigned long, 0x0102030405060708UL);
  W("first", "heap", heap_block + 100, int, 0x5a5a5a5a);
  W("first", "heap", heap_block + 20000, unsigned char, 0x77);
  W("first", "mmap", map_block + 4096 * 2 + 8, long, 0x7eadbeefL);
  W("first", "stack", stack_buf + 16, unsigned int, 0xcafef00d);
}

__attribute__((noinline)) static void writes_second(volatile unsigned char* stack_buf) {
  W("second", "data", &data_words[5], long, 0x0L);          /* back to zero: still a change */
  W("second", "bss", &bss_bytes[3 * 4096 + 100], unsigned char, 0x42);
  W("second", "mmap", map_block + 4096 * 5, unsigned char, 0x99);
  W("second", "stack", stack_buf + 40, unsigned char, 0x3c);
}

int main(int argc, char** argv) {
  int produce = argc > 1 && strcmp(argv[1], "produce") == 0;
  expect_init();
  volatile unsigned char stack_buf[64];
  for (int i = 0; i < 64; i++) stack_buf[i] = (unsigned char)i;
  heap_block = malloc(32768);
  memset(heap_block, 0, 32768);
  if (produce) {
    cape_start();
    W("first", "bss", &map_block, ucp, kernel_mmap(8 * 4096));
    writes_first(stack_buf);
    cape_create("first");
    writes_second(stack_buf);
    cape_create("second");
    cape_stop();
    print_expects();
    printf("canary %lx %lx\n", (unsigned long)canary_bss, (unsigned long)sizeof canary_bss);
    printf("stack %lx\n", (unsigned long)stack_buf);
    return 0;
  }
  /* consume: the same allocations in the same order land at the same addresses; "first"
   * also sets map_block, to the same value. */
  unsigned char* m = kernel_mmap(8 * 4096);
  cape_inject("first");
  cape_inject("second");
  int bad = 0;
  if (map_block != m) {
    printf("consume: map_block %p, mapped %p\n", (void*)map_block, (void*)m);
    return 1;
  }
#define CHECK(cond)                                          \
  if (!(cond)) {                                             \
    printf("consume: %s is wrong\n", #cond);                 \
    bad = 1;                                                 \
  }
  CHECK(data_words[5] == 0);
  CHECK(((unsigned char*)&data_words[700])[3] == 0xab);
  CHECK(*(unsigned short*)&bss_bytes[10] == 0xbeef);
  CHECK(bss_bytes[3 * 4096 + 100] == 0x42);
  CHECK(*(int*)(heap_block + 100) == 0x5a5a5a5a);
  CHECK(heap_block[20000] == 0x77);
  CHECK(*(long*)(map_block + 4096 * 2 + 8) == 0x7eadbeefL);
  CHECK(map_block[4096 * 5] == 0x99);
  CHECK(*(unsigned int*)(stack_buf + 16) == 0xcafef00d);
  CHECK(stack_buf[40] == 0x3c);
  CHECK(stack_buf[41] == 41);
  CHECK(data_words[0] == 1 && data_words[6] == 0);
  if (bad) return 1;
  printf("consume ok\n");
  return 0;
}

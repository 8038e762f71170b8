/* A big .bss of which the program touched a few pages before its first window
 * (tests/monitor/monitor_test.cpp, MonitorTrackers.BigBssFirstWindow): paper-repro/mamult.c's
 * shape, static arrays sized for the largest problem and a small one used. The `uffd`
 * tracker's first start() must read only the populated pages (it read the whole .bss: 96 MB
 * into fresh buffers for mamult, 270 ms a node). The window writes words in touched and in
 * never-touched pages; its checkpoint "w1" must hold exactly those; "w2" the same for 512 pages
 * (create() has the program copy that many). */
#include <cape/cape.h>
#include <stdint.h>

#include "expect.h"

#define PG 4096
#define BIG (64 << 20)
unsigned char big[BIG] __attribute__((aligned(PG)));

int main(void) {
  expect_init();
  for (int i = 0; i < 16; i++) big[(size_t)i * 64 * PG + 8] = (unsigned char)(i + 1);  /* 16 pages populated */
  cape_start();
  W("w1", "bss", &big[0 * 64 * PG + 16], unsigned long, 0x1111);           /* touched page */
  W("w1", "bss", &big[5 * 64 * PG + 24], unsigned long, 0x2222);           /* touched page */
  W("w1", "bss", &big[3 * PG + 40], unsigned long, 0x3333);                /* never touched */
  W("w1", "bss", &big[(size_t)BIG - PG + 8], unsigned long, 0x4444);       /* never touched */
  cape_create("w1");
  cape_stop();
  /* w2: a word in each of 512 pages (more than create() reads itself: the program copies them). */
  cape_start();
  for (int i = 0; i < 512; i++) W("w2", "bss", &big[(size_t)(1024 + i) * PG + 8 * (i % 500)], unsigned long, 0x5000 + i);
  cape_create("w2");
  cape_stop();
  print_expects();
  return 0;
}

/* A dense read-only input in a big .bss (tests/monitor/monitor_test.cpp,
 * MonitorTrackers.DenseInputLaterWrites): 3 pages of every 4 of 16 MiB written in the
 * sequential part (the shape of paper-repro/mamult.c's A and B when N < MAX_N: most pages of
 * each row), then mostly only read. The `uffd` tracker's first start() copies them (in small
 * pages, or in huge pages where a 2 MiB block of its copy is that full: CAPE_UFFD_DENSE_HUGE,
 * session 13). Windows w1..w5 write a few words: in
 * pages written only before w1, in a page the sequential part rewrites between w2 and w3, in
 * never-populated pages; each checkpoint must hold exactly its window's words (a wrong copy
 * shows as the whole page changed). */
#include <cape/cape.h>
#include <stdint.h>
#include <string.h>

#include "expect.h"

#define PG 4096
#define NPAGES 4096 /* 16 MiB */
unsigned char big[NPAGES * PG] __attribute__((aligned(PG)));

#define AT(page, off) (&big[(size_t)(page) * PG + (off)])

int main(void) {
  expect_init();
  for (int p = 0; p < NPAGES; p++)
    if (p % 4 != 3) memset(AT(p, 0), p % 251 + 1, PG);
  cape_start();
  W("w1", "bss", AT(1, 16), unsigned long, 0x1111);     /* populated */
  W("w1", "bss", AT(3, 40), unsigned long, 0x3333);     /* never populated */
  W("w1", "bss", AT(2001, 8), unsigned long, 0x2001);   /* populated, mid-input */
  cape_create("w1");
  cape_stop();
  cape_start();
  W("w2", "bss", AT(2, 0), unsigned long, 0x2222);
  cape_create("w2");
  cape_stop();
  memset(AT(1201, 0), 0x5a, PG);                        /* rewritten between windows */
  AT(2001, 0)[100] = 0x77;                              /* and a byte of a page w1 wrote */
  cape_start();
  W("w3", "bss", AT(4000, 24), unsigned long, 0x4000);
  cape_create("w3");
  cape_stop();
  cape_start();
  cape_create("w4");                                    /* nothing written */
  cape_stop();
  cape_start();
  W("w5", "bss", AT(1200, 32), unsigned long, 0x1200);  /* written once before w1, again now */
  W("w5", "bss", AT(1201, 48), unsigned long, 0x1201);  /* rewritten between w2 and w3 */
  W("w5", "bss", AT(2001, 96), unsigned long, 0x2002);  /* w1's page again */
  W("w5", "bss", AT(4095, 8), unsigned long, 0x4095);   /* never populated, last page */
  for (int p = 2500; p < 2600; p++) W("w5", "bss", AT(p, (p % 500) * 8), unsigned long, 0x9000 + p);
  cape_create("w5");
  cape_stop();
  print_expects();
  return 0;
}

/* Threads inside windows (issue 13): `threads_window MODE ROUNDS`. Each round is one
 * start()/create("wR")/stop() window in which 4 threads write interleaved words of shared
 * pages (thread t writes the words i with i % 4 == t, so every page is written by all four
 * at once), skipping the words with (i + round) % 5 == 0. MODE `pthread` creates and joins
 * the threads inside each window (thread start and exit under the monitor, ld.so's DTV
 * allocations); MODE `omp` (built with -fopenmp) uses a `parallel` region, so libgomp's pool
 * and teams live across windows. A 500 us interval timer sends SIGALRM all along, to
 * whichever thread. The test recomputes every word: round r writes (r + 1) << 32 | i.
 * Prints "words ADDR", "count N", "ticks K", "stack ADDR" and "ok" when memory is right. */
#include <cape/cape.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define THREADS 4
#define PAGES 16
#define COUNT (PAGES * 512)

static long words[COUNT] __attribute__((aligned(4096)));

/* Bookkeeping in a MAP_SHARED block: never tracked, so never in a checkpoint. */
struct book {
  long ticks;
  int round;
  pthread_t t[THREADS];
};
static struct book* book;

static void on_alarm(int sig) {
  (void)sig;
  __atomic_fetch_add(&book->ticks, 1, __ATOMIC_RELAXED);
}

static void write_share(int t, int round) {
  for (long i = t; i < COUNT; i += THREADS)
    if ((i + round) % 5 != 0) ((volatile long*)words)[i] = (long)(round + 1) << 32 | i;
}

static void* worker(void* arg) {
  write_share((int)(long)arg, book->round);
  return NULL;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "pthread";
  int rounds = argc > 2 ? atoi(argv[2]) : 20;
  book = mmap(NULL, sizeof *book, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (book == MAP_FAILED) return 2;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_alarm;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGALRM, &sa, NULL);
  struct itimerval it = {{0, 500}, {0, 500}};
  setitimer(ITIMER_REAL, &it, NULL);
  int omp = strcmp(mode, "omp") == 0;
#ifndef _OPENMP
  if (omp) {
    fprintf(stderr, "threads_window: built without -fopenmp\n");
    return 2;
  }
#endif
  char name[32];
  for (int r = 0; r < rounds; r++) {
    book->round = r;
    snprintf(name, sizeof name, "w%d", r);
    cape_start();
    if (omp) {
#ifdef _OPENMP
#pragma omp parallel num_threads(THREADS)
      write_share(omp_get_thread_num(), r);
#endif
    } else {
      for (long t = 0; t < THREADS; t++)
        if (pthread_create(&book->t[t], NULL, worker, (void*)t) != 0) return 2;
      for (int t = 0; t < THREADS; t++) pthread_join(book->t[t], NULL);
    }
    cape_create(name);
    cape_stop();
  }
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &off, NULL);
  int ok = 1;
  for (long i = 0; i < COUNT; i++) {
    int last = rounds - 1;
    while (last >= 0 && (i + last) % 5 == 0) last--;
    long want = last < 0 ? 0 : (long)(last + 1) << 32 | i;
    ok &= words[i] == want;
  }
  long here;
  printf("words %lx\ncount %d\nticks %ld\nstack %lx\n%s\n", (unsigned long)words, COUNT, book->ticks,
         (unsigned long)&here, ok ? "ok" : "bad");
  return ok ? 0 : 1;
}

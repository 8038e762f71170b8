/* What the cape heap aborts on, and its messages (heap_test.c runs it). */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "heap_test.h"

/* ---- failures: messages that name the cape heap, SIGABRT ---- */

static void expect_abort(const char *what, void (*action)(void), const char *message) {
  int p[2];
  REQUIRE(pipe(p) == 0);
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    dup2(p[1], 2);
    action();
    _exit(0);
  }
  close(p[1]);
  char buf[1024] = {0};
  size_t got = 0;
  ssize_t r;
  while (got < sizeof buf - 1 && (r = read(p[0], buf + got, sizeof buf - 1 - got)) > 0) got += (size_t)r;
  close(p[0]);
  int status;
  waitpid(pid, &status, 0);
  if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGABRT || !strstr(buf, message)) {
    fprintf(stderr, "%s: want SIGABRT and \"%s\", got status %#x and \"%s\"\n", what, message, status, buf);
    failures++;
  }
}

static void double_free(void) {
  void *p = malloc(100);
  void *q = malloc(100); /* so p is not merged into the top */
  free(p);
  free(p);
  free(q);
}
/* freed (onto a fast list) outside, then freed again inside a window: caught when deferred */
static void double_free_deferred(void) {
  void *p = malloc(100);
  free(p);
  cape_heap_settle(1);
  cape_heap_enter(0);
  free(opaque_ptr(p));
}
static void inner_pointer(void) { free(opaque_ptr((char *)malloc(100) + 32)); }
static void misaligned(void) { free(opaque_ptr((char *)malloc(100) + 4)); }
static void overrun(void) {
  char *p = malloc(100), *q = malloc(100);
  memset(p, 0x41, 200); /* over q's header */
  free(q);
}
static void realloc_foreign(void) {
  static char not_heap[64];
  if (realloc(opaque_ptr(not_heap), 100)) abort();
}
static void no_arena(void) { free(opaque_ptr((void *)(CAPE_HEAP_NODE_BASE + 200 * CAPE_HEAP_NODE_SPAN + 64))); }

void test_failures(void) {
  expect_abort("double free", double_free, "cape heap: free(0x");
  expect_abort("double free", double_free, "block not in use (freed twice?)");
  expect_abort("double free, the second deferred", double_free_deferred, "block not in use (freed twice?)");
  expect_abort("inner pointer", inner_pointer, "cape heap: free(0x");
  expect_abort("misaligned", misaligned, "not a block of the cape heap");
  expect_abort("overrun", overrun, "cape heap: free(0x");
  expect_abort("realloc of a foreign pointer", realloc_foreign, "cape heap: realloc(0x");
  expect_abort("no arena", no_arena, "no arena there");
  /* A pointer outside the cape heap's range is ignored by free. */
  static char not_heap[64];
  free(opaque_ptr(not_heap));
  /* Out of a node arena's space (64 GiB): NULL and ENOMEM. */
  cape_heap_settle(1);
  cape_heap_enter(0);
  errno = 0;
  CHECK(malloc(opaque((size_t)65 << 30)) == 0 && errno == ENOMEM);
  cape_heap_leave();
  cape_heap_check();
}

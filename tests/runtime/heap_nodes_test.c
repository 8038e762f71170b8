/* Several nodes (forked processes) allocating at once and exchanging their heap writes as
 * the monitor does (heap_test.c runs it). */
#define _GNU_SOURCE
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "heap_test.h"

/* ---- several nodes, exchanging their heap writes as the monitor does ---- */

#define NODES 3
#define NARENAS (NODES + 1)

/* Memory that is not the heap's: raw mmap, so the interposed mmap does not serve it. */
static void *raw_map(size_t n) {
  void *p = (void *)syscall(SYS_mmap, 0, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(p != MAP_FAILED);
  return p;
}

static int write_all(int fd, const void *p, size_t n) {
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w <= 0) return -1;
    p = (const char *)p + w;
    n -= (size_t)w;
  }
  return 0;
}
static int read_all(int fd, void *p, size_t n) {
  while (n) {
    ssize_t r = read(fd, p, n);
    if (r <= 0) return -1;
    p = (char *)p + r;
    n -= (size_t)r;
  }
  return 0;
}

/* What a window starts from: every arena's committed bytes. */
struct snapshot {
  char *copy[NARENAS];
  size_t len[NARENAS];
};

static void take(struct snapshot *s) {
  for (int i = 0; i < NARENAS; i++) {
    size_t c = stats(i).committed;
    if (c > s->len[i]) {
      if (s->copy[i]) munmap(s->copy[i], s->len[i]); /* a kernel mapping (outside the heap) */
      s->copy[i] = raw_map(c);
    }
    s->len[i] = c;
    memcpy(s->copy[i], (char *)stats(i).base, c);
  }
}

/* The changed words of every arena since `s`, to fd: {address, length} then the bytes, an
 * address of 0 at the end; each arena's committed size first. No allocator call in here:
 * this runs after the window, before the exchange, where the heap must not settle. */
static void send_changes(int fd, const struct snapshot *s) {
  for (int i = 0; i < NARENAS; i++) {
    struct cape_heap_stats st;
    cape_heap_stats(i, &st);
    uint64_t c = st.committed;
    write_all(fd, &c, 8);
  }
  for (int i = 0; i < NARENAS; i++) {
    struct cape_heap_stats st;
    cape_heap_stats(i, &st);
    const uint64_t *now = (const uint64_t *)st.base;
    size_t words = st.committed / 8;
    for (size_t w = 0; w < words;) {
      uint64_t was = w < s->len[i] / 8 ? ((const uint64_t *)s->copy[i])[w] : 0;
      if (now[w] == was) {
        w++;
        continue;
      }
      size_t e = w + 1;
      while (e < words && now[e] != (e < s->len[i] / 8 ? ((const uint64_t *)s->copy[i])[e] : 0)) e++;
      uint64_t hdr[2] = {(uint64_t)(uintptr_t)&now[w], (e - w) * 8};
      write_all(fd, hdr, 16);
      write_all(fd, &now[w], (e - w) * 8);
      w = e;
    }
  }
  uint64_t end[2] = {0, 0};
  write_all(fd, end, 16);
}

/* Applies a node's changes: its growth first (mprotect, as the monitor replays it), then the
 * words; a word both changed to different values is a conflict (two nodes wrote it). */
static long apply_changes(int fd, const struct snapshot *s, size_t *committed_now) {
  long conflicts = 0;
  for (int i = 0; i < NARENAS; i++) {
    uint64_t c;
    REQUIRE(read_all(fd, &c, 8) == 0);
    uintptr_t base = (uintptr_t)stats(i).base;
    if (c > committed_now[i]) {
      REQUIRE(mprotect((void *)(base + committed_now[i]), c - committed_now[i], PROT_READ | PROT_WRITE) == 0);
      committed_now[i] = c;
    }
  }
  static uint64_t buf[1 << 17];
  for (;;) {
    uint64_t hdr[2];
    REQUIRE(read_all(fd, hdr, 16) == 0);
    if (!hdr[0]) break;
    uint64_t *dst = (uint64_t *)(uintptr_t)hdr[0];
    for (uint64_t done = 0; done < hdr[1];) {
      size_t n = hdr[1] - done < sizeof buf ? hdr[1] - done : sizeof buf;
      REQUIRE(read_all(fd, buf, n) == 0);
      for (size_t k = 0; k < n / 8; k++) {
        uint64_t *w = dst + (done / 8) + k;
        int arena = (uintptr_t)w < CAPE_HEAP_NODE_BASE ? 0 : 1 + (int)(((uintptr_t)w - CAPE_HEAP_NODE_BASE) / CAPE_HEAP_NODE_SPAN);
        size_t off = (uintptr_t)w - (uintptr_t)stats(arena).base;
        uint64_t was = off < s->len[arena] ? *(uint64_t *)(s->copy[arena] + off) : 0;
        if (*w != was && *w != buf[k]) conflicts++;
        *w = buf[k];
      }
      done += n;
    }
  }
  return conflicts;
}

/* One block of a node's list: which node made it, in which round, and its size. */
struct item {
  struct item *next;
  int node, round;
  size_t n;
  uint64_t tag;
};

struct shared {
  struct item *list[NODES];    /* each node's list, written only by that node in a window */
  char *victims[NODES * 16];   /* arena 0 blocks that node (i % NODES) frees in a window */
  long made[NODES];            /* items each node has made */
};

static void node_work(struct shared *sh, int rank, int round) {
  uint64_t seed = (uint64_t)(rank + 1) * 7919 + (uint64_t)round * 104729;
  for (int k = 0; k < 40; k++) {
    seed ^= seed << 13, seed ^= seed >> 7, seed ^= seed << 17;
    size_t n = sizeof(struct item) + (seed % 7 == 0 ? (seed >> 8) % (1 << 20) : (seed >> 8) % 3000);
    struct item *it = (seed >> 5) % 3 ? malloc(n) : calloc(1, n);
    REQUIRE(it);
    it->node = rank;
    it->round = round;
    it->n = n;
    it->tag = seed;
    fill(it + 1, n - sizeof *it, seed);
    it->next = sh->list[rank];
    sh->list[rank] = it;
    sh->made[rank]++;
  }
  /* grow one of its items (its own arena: in place or moved, freed at once) */
  struct item *first = sh->list[rank];
  struct item *g = realloc(first, first->n + 5000);
  REQUIRE(g);
  fill(g + 1, g->n + 5000 - sizeof *g, g->tag ^ 1);
  g->n += 5000;
  g->tag ^= 1;
  sh->list[rank] = g;
  /* free this node's share of the arena-0 victims: deferred */
  for (int v = rank; v < NODES * 16; v += NODES)
    if (sh->victims[v] && (round + v) % 4 == 0) {
      free(sh->victims[v]);
      sh->victims[v] = 0;
    }
  /* drop every other item made two rounds ago (this node's own arena) */
  for (struct item **p = &sh->list[rank]; *p;) {
    if ((*p)->round == round - 2 && ((*p)->tag & 1)) {
      struct item *dead = *p;
      *p = dead->next;
      free(dead);
      sh->made[rank]--;
    } else {
      p = &(*p)->next;
    }
  }
}

void test_nodes(void) {
  cape_heap_settle(NODES);
  struct shared *sh = calloc(1, sizeof *sh);
  for (int v = 0; v < NODES * 16; v++) {
    sh->victims[v] = malloc(100 + (size_t)v * 37);
    fill(sh->victims[v], 100 + (size_t)v * 37, (uint64_t)v);
  }
  static struct snapshot snap;
  long conflicts = 0;
  for (int round = 0; round < 12; round++) {
    /* cape_start(): settled on every node alike, then the window */
    cape_heap_settle(NODES);
    take(&snap);
    size_t committed[NARENAS];
    for (int i = 0; i < NARENAS; i++) committed[i] = stats(i).committed;
    int fds[NODES];
    pid_t pids[NODES];
    for (int r = 1; r < NODES; r++) {
      int p[2];
      REQUIRE(pipe(p) == 0);
      pids[r] = fork();
      REQUIRE(pids[r] >= 0);
      if (pids[r] == 0) {
        close(p[0]);
        cape_heap_enter(r);
        node_work(sh, r, round);
        cape_heap_leave();
        send_changes(p[1], &snap);
        _exit(0);
      }
      close(p[1]);
      fds[r] = p[0];
    }
    cape_heap_enter(0);
    node_work(sh, 0, round);
    cape_heap_leave();
    for (int r = 1; r < NODES; r++) {
      conflicts += apply_changes(fds[r], &snap, committed);
      close(fds[r]);
      int status;
      REQUIRE(waitpid(pids[r], &status, 0) == pids[r]);
      CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    cape_heap_check();
    /* the sequential part: every list whole, every block intact */
    long seen[NODES] = {0};
    for (int r = 0; r < NODES; r++)
      for (struct item *it = sh->list[r]; it; it = it->next) {
        CHECK(it->node == r && cape_heap_arena_of(it) == r + 1);
        CHECK(holds(it + 1, it->n - sizeof *it, it->tag));
        seen[r]++;
      }
    for (int r = 0; r < NODES; r++) CHECK(seen[r] == sh->made[r]);
    for (int v = 0; v < NODES * 16; v++)
      if (sh->victims[v]) CHECK(holds(sh->victims[v], 100 + (size_t)v * 37, (uint64_t)v));
    /* an allocation in the sequential part settles the deferred frees */
    void *seq = malloc(64);
    for (int i = 1; i < NARENAS; i++) CHECK(stats(i).deferred == 0);
    free(seq);
    cape_heap_check();
  }
  CHECK(conflicts == 0);
  for (int r = 0; r < NODES; r++)
    while (sh->list[r]) {
      struct item *n = sh->list[r]->next;
      free(sh->list[r]);
      sh->list[r] = n;
    }
  for (int i = 1; i < NARENAS; i++) CHECK(stats(i).in_use == 0);
  cape_heap_check();
  if (conflicts) fprintf(stderr, "%ld words written by two nodes\n", conflicts);
}

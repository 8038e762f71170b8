/* The floor of an empty region's fixed cost on this machine (issue 14; docs/monitor.md, "Sixth
 * pass"): the cheapest exchange an empty `parallel for` region can make, measured three ways on
 * N local nodes (a star: node 0 the master), nothing else done:
 *
 *   spin     the programs exchange themselves (an in-process runtime) and poll for messages
 *            (non-blocking reads, sched_yield between), as MPI's ranks do.
 *   direct   the same, waiting in read() (asleep until the message wakes them): per region
 *            the master sends one small message to every slave and waits for one back from each.
 *   ptrace   cape's structure cut to the bone: each node's program runs under a ptrace monitor
 *            (pinned to one CPU with it, as cape places them) and stops once per region (int3);
 *            the monitors make that exchange over TCP and resume their programs. One stop and
 *            two messages per slave per region: no checkpoint, no tracking, no bookkeeping.
 *   handoff  ptrace, with each monitor's socket read by a reader thread that hands the message
 *            to the monitor's thread (a mutex and a condition variable), as net::Node does.
 *   ptrace-spin  ptrace, the monitors polling (their sockets and waitpid, sched_yield between)
 *            instead of sleeping: what a monitor that never sleeps would reach.
 *   ptrace-unix  ptrace, the monitors' star over Unix sockets instead of loopback TCP (nodes
 *            on one host).
 *   cape-shape-s9   handoff, with the stops and messages an empty region made in cape until
 *            session 9 (master: 4 stops, a `before` to each slave at the third, the slaves'
 *            parts awaited and the result sent at the fourth; a slave: 3 stops, the `before`
 *            awaited at the second, its part sent and the result awaited at the third) and no
 *            work at any.
 *   cape-shape   the same for cape's shape since session 10 (issue 14, "Seventh pass": the
 *            determinism check on start()'s stop, no `before`): 2 stops per node, nothing at
 *            the first; at the second the master awaits the parts and sends the result, a slave
 *            sends its part and awaits the result.
 *
 * `make bench` builds and runs it (build-bench/bench/floor/cape_bench_region_floor [REGIONS]
 * [NODES]); a benchmark, never a test. Prints microseconds per region (medians of 5
 * interleaved runs) for each way, and the CPU of the whole job per region (median). */
#define _GNU_SOURCE
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum mode { SPIN, DIRECT, PTRACE, HANDOFF, PTRACE_SPIN, PTRACE_UNIX, CAPE_SHAPE_S9, CAPE_SHAPE, NMODES };
static int spinning;
static int nodes = 3, regions = 2000;
static const int warmup = 50;

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static void die(const char* what) {
  perror(what);
  exit(2);
}

static void pin(int cpu) {
  cpu_set_t s;
  CPU_ZERO(&s);
  CPU_SET(cpu % sysconf(_SC_NPROCESSORS_ONLN), &s);
  if (sched_setaffinity(0, sizeof s, &s) != 0) die("sched_setaffinity");
}

static void nodelay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

static void send_byte(int fd, char c) {
  if (write(fd, &c, 1) != 1) die("write");
}

/* A connection's messages: read directly, or through a reader thread (HANDOFF). */
struct inbox {
  int fd;
  int handoff;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int count;
};

static void* reader(void* arg) {
  struct inbox* in = arg;
  for (;;) {
    char c;
    ssize_t n = read(in->fd, &c, 1);
    if (n <= 0) return NULL;
    pthread_mutex_lock(&in->mu);
    in->count++;
    pthread_cond_broadcast(&in->cv);
    pthread_mutex_unlock(&in->mu);
  }
}

static void inbox_init(struct inbox* in, int fd, int handoff, int cpu) {
  in->fd = fd;
  in->handoff = handoff;
  in->count = 0;
  pthread_mutex_init(&in->mu, NULL);
  pthread_cond_init(&in->cv, NULL);
  if (handoff) {
    pthread_t t;
    if (pthread_create(&t, NULL, reader, in) != 0) die("pthread_create");
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu % sysconf(_SC_NPROCESSORS_ONLN), &s);
    pthread_setaffinity_np(t, sizeof s, &s);
    pthread_detach(t);
  }
}

static void receive_byte(struct inbox* in) {
  if (!in->handoff) {
    char c;
    for (;;) {
      ssize_t n = recv(in->fd, &c, 1, spinning ? MSG_DONTWAIT : 0);
      if (n == 1) return;
      if (n < 0 && spinning) {
        sched_yield();
        continue;
      }
      die("read");
    }
  }
  pthread_mutex_lock(&in->mu);
  while (in->count == 0) pthread_cond_wait(&in->cv, &in->mu);
  in->count--;
  pthread_mutex_unlock(&in->mu);
}

/* The traced program of a node: stops once per region. */
static void program(long total) {
  if (ptrace(PTRACE_TRACEME, 0, 0, 0) != 0) die("PTRACE_TRACEME");
  raise(SIGSTOP);
  for (long r = 0; r < total; r++) __asm__ volatile("int3" ::: "memory");
  _exit(0);
}

/* One node: with a program under ptrace (PTRACE and after) or being the program (SPIN, DIRECT).
 * The master returns the microseconds per region. */
static double node(int rank, int* fds, enum mode m) {
  spinning = m == SPIN || m == PTRACE_SPIN;
  if (m != SPIN) pin(rank); /* (spinning ranks float, as mpirun --bind-to none leaves them) */
  else {
    cpu_set_t all;
    CPU_ZERO(&all);
    for (int c = 0; c < sysconf(_SC_NPROCESSORS_ONLN); c++) CPU_SET(c, &all);
    sched_setaffinity(0, sizeof all, &all);
  }
  int total = warmup + regions;
  int stops = m == CAPE_SHAPE_S9 ? (rank == 0 ? 4 : 3) : m == CAPE_SHAPE ? 2 : 1; /* per region */
  pid_t prog = 0;
  if (m >= PTRACE) {
    prog = fork();
    if (prog == 0) program((long)total * stops);
    int st;
    waitpid(prog, &st, 0); /* its SIGSTOP */
    ptrace(PTRACE_SETOPTIONS, prog, 0, PTRACE_O_EXITKILL);
    ptrace(PTRACE_CONT, prog, 0, 0);
  }
  struct inbox in[16];
  for (int i = 0; i < nodes; i++)
    if (fds[i] >= 0) inbox_init(&in[i], fds[i], m == HANDOFF || m == CAPE_SHAPE_S9 || m == CAPE_SHAPE, rank);
  double t0 = 0;
  for (int r = 0; r < total; r++) {
    if (r == warmup) t0 = now_us();
    for (int stop = 0; stop < stops; stop++) {
      if (prog) { /* the program's stop */
        int st;
        pid_t got;
        while ((got = waitpid(prog, &st, spinning ? WNOHANG : 0)) == 0) sched_yield();
        if (got != prog || !WIFSTOPPED(st)) die("waitpid");
      }
      if (m == CAPE_SHAPE) {
        if (rank == 0 && stop == 1) {
          for (int s = 1; s < nodes; s++) receive_byte(&in[s]);
          for (int s = 1; s < nodes; s++) send_byte(fds[s], 'a');
        }
        if (rank != 0 && stop == 1) {
          send_byte(fds[0], 'p');
          receive_byte(&in[0]);
        }
      } else if (m == CAPE_SHAPE_S9) {
        if (rank == 0 && stop == 2)
          for (int s = 1; s < nodes; s++) send_byte(fds[s], 'b');
        if (rank == 0 && stop == 3) {
          for (int s = 1; s < nodes; s++) receive_byte(&in[s]);
          for (int s = 1; s < nodes; s++) send_byte(fds[s], 'a');
        }
        if (rank != 0 && stop == 1) receive_byte(&in[0]);
        if (rank != 0 && stop == 2) {
          send_byte(fds[0], 'p');
          receive_byte(&in[0]);
        }
      } else if (rank == 0) {
        for (int s = 1; s < nodes; s++) send_byte(fds[s], 'g');
        for (int s = 1; s < nodes; s++) receive_byte(&in[s]);
      } else {
        receive_byte(&in[0]);
        send_byte(fds[0], 'd');
      }
      if (prog) ptrace(PTRACE_CONT, prog, 0, 0);
    }
  }
  double per = (now_us() - t0) / regions;
  if (prog) {
    int st;
    waitpid(prog, &st, 0);
  }
  return per;
}

static double run(enum mode m) {
  /* The star's connections over loopback TCP, made before the nodes fork. */
  int lfd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t len = sizeof a;
  if (bind(lfd, (struct sockaddr*)&a, sizeof a) || listen(lfd, 16) || getsockname(lfd, (struct sockaddr*)&a, &len))
    die("listen");
  int master_end[16], slave_end[16];
  for (int s = 1; s < nodes; s++) {
    if (m == PTRACE_UNIX) {
      int sv[2];
      if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) die("socketpair");
      master_end[s] = sv[0];
      slave_end[s] = sv[1];
      continue;
    }
    slave_end[s] = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(slave_end[s], (struct sockaddr*)&a, sizeof a)) die("connect");
    master_end[s] = accept(lfd, NULL, NULL);
    nodelay(slave_end[s]);
    nodelay(master_end[s]);
  }
  close(lfd);
  pid_t kids[16];
  for (int rank = 1; rank < nodes; rank++) {
    kids[rank] = fork();
    if (kids[rank] == 0) {
      int fds[16];
      for (int i = 0; i < nodes; i++) fds[i] = -1;
      fds[0] = slave_end[rank];
      node(rank, fds, m);
      _exit(0);
    }
  }
  int fds[16];
  fds[0] = -1;
  for (int s = 1; s < nodes; s++) fds[s] = master_end[s];
  double per = node(0, fds, m);
  for (int s = 1; s < nodes; s++) {
    close(master_end[s]);
    close(slave_end[s]);
    waitpid(kids[s], NULL, 0);
  }
  return per;
}

/* CPU of this process (the master node) and of every process it waited for (the slave nodes
 * and, through them, the programs), in microseconds: per region, the job's CPU beside its wall
 * (issue 14, session 14: on 2 vCPUs the region is CPU-bound). */
static double cpu_us(void) {
  struct rusage self, kids;
  getrusage(RUSAGE_SELF, &self);
  getrusage(RUSAGE_CHILDREN, &kids);
  return (self.ru_utime.tv_sec + self.ru_stime.tv_sec + kids.ru_utime.tv_sec + kids.ru_stime.tv_sec) * 1e6 +
         self.ru_utime.tv_usec + self.ru_stime.tv_usec + kids.ru_utime.tv_usec + kids.ru_stime.tv_usec;
}

static int cmp(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char** argv) {
  if (argc > 1) regions = atoi(argv[1]);
  if (argc > 2) nodes = atoi(argv[2]);
  if (regions < 1 || nodes < 2 || nodes > 16) {
    fprintf(stderr, "usage: region_floor [REGIONS >= 1] [NODES 2..16]\n");
    return 2;
  }
  const char* names[] = {"spin",        "direct",        "ptrace",    "handoff",
                         "ptrace-spin", "ptrace-unix",   "cape-shape-s9", "cape-shape"};
  double t[NMODES][5], c[NMODES][5];
  for (int i = 0; i < 5; i++) /* interleaved */
    for (int m = 0; m < NMODES; m++) {
      double c0 = cpu_us();
      t[m][i] = run((enum mode)m);
      c[m][i] = (cpu_us() - c0) / (regions + warmup);
    }
  printf("region floor: %d nodes, %d regions, %ld CPUs; us per region, median of 5 interleaved runs\n", nodes,
         regions, sysconf(_SC_NPROCESSORS_ONLN));
  for (int m = 0; m < NMODES; m++) {
    qsort(t[m], 5, sizeof(double), cmp);
    qsort(c[m], 5, sizeof(double), cmp);
    printf("  %-13s %8.1f   (min %.1f, max %.1f)   CPU %.1f\n", names[m], t[m][2], t[m][0], t[m][4], c[m][2]);
  }
  return 0;
}

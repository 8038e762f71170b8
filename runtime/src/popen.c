/* libcape's popen and pclose: the child's pid out of tracked memory.
 *
 * Why: glibc's popen mallocs its FILE (struct _IO_proc_file) and keeps the child's pid in it.
 * In a cape program that block is in the cape heap (tracked memory), and the pid differs
 * between nodes, before pclose and after (the freed block still holds it): the determinism
 * check stopped every program that called popen in its sequential part ("node N's memory
 * differs from the master's ... the heap"; docs/monitor.md, "What every node must agree on").
 *
 * So the executable defines popen and pclose (taken from libcape.a when the program calls
 * them): the stream is an ordinary fdopen'd FILE (the same on every node: its fd, its buffer,
 * what it read), and the pids are kept in the runtimes' heap (heap_runtime.c, never tracked
 * nor digested), in a list whose head was allocated there before main (the same address on
 * every node, as inproc.c's). The child is /bin/sh -c CMD from posix_spawn, as glibc's
 * (CLONE_VFORK: the monitor handles it as glibc's popen's); modes "r", "w" with "e"
 * (close-on-exec), any other mode is EINVAL; the child closes the other popen streams'
 * descriptors (POSIX). A stream pclose does not know (glibc's popen, called by a shared
 * library) goes to libc's pclose.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <spawn.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "heap_internal.h"
#include "heap_runtime.h"

extern char **environ;

struct popen_child {
  FILE *stream;
  pid_t pid;
  struct popen_child *next;
};

struct popen_list {
  uint32_t lock;
  struct popen_child *head;
};

/* Set before main, the same on every node (see above); the list itself is untracked. */
static struct popen_list *children;
__attribute__((constructor(102))) static void popen_init(void) {
  cape_runtime_heap_init();
  children = cape_runtime_calloc(1, sizeof *children);
}

static void take(void) {
  while (__atomic_exchange_n(&children->lock, 1, __ATOMIC_ACQUIRE))
    while (__atomic_load_n(&children->lock, __ATOMIC_RELAXED)) sched_yield();
}
static void give(void) { __atomic_store_n(&children->lock, 0, __ATOMIC_RELEASE); }

FILE *popen(const char *command, const char *mode) {
  int do_read = 0, do_write = 0, do_cloexec = 0;
  for (const char *m = mode; *m; m++) {
    if (*m == 'r') do_read = 1;
    else if (*m == 'w') do_write = 1;
    else if (*m == 'e') do_cloexec = 1;
    else do_read = do_write = 1; /* refused below */
  }
  if (do_read == do_write || !children) {
    errno = EINVAL;
    return NULL;
  }
  struct popen_child *c = cape_runtime_malloc(sizeof *c);
  if (!c) {
    errno = ENOMEM;
    return NULL;
  }
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    int e = errno;
    cape_runtime_free(c);
    errno = e;
    return NULL;
  }
  int parent_end = do_read ? fds[0] : fds[1], child_end = do_read ? fds[1] : fds[0];
  int child_std = do_read ? STDOUT_FILENO : STDIN_FILENO;
  FILE *f = fdopen(parent_end, do_read ? "r" : "w");
  if (!f) {
    int e = errno;
    close(fds[0]);
    close(fds[1]);
    cape_runtime_free(c);
    errno = e;
    return NULL;
  }
  posix_spawn_file_actions_t fa;
  int err = posix_spawn_file_actions_init(&fa);
  take(); /* other threads' popen streams must not reach this child */
  /* dup2 onto the standard fd clears its close-on-exec, also when child_end is that fd
   * already (glibc's posix_spawn does so for dup2(fd, fd)); both pipe ends close at exec */
  if (!err) err = posix_spawn_file_actions_adddup2(&fa, child_end, child_std);
  for (struct popen_child *p = children->head; p && !err; p = p->next) {
    int fd = fileno(p->stream);
    if (fd >= 0 && fd != child_std) err = posix_spawn_file_actions_addclose(&fa, fd);
  }
  char *const argv[] = {"sh", "-c", "--", (char *)command, NULL};
  if (!err) err = posix_spawn(&c->pid, "/bin/sh", &fa, NULL, argv, environ);
  if (!err) {
    c->stream = f;
    c->next = children->head;
    children->head = c;
  }
  give();
  posix_spawn_file_actions_destroy(&fa);
  close(child_end);
  if (err) {
    fclose(f);
    cape_runtime_free(c);
    errno = err;
    return NULL;
  }
  /* without "e" the program's other children inherit the stream's fd, as with glibc */
  if (!do_cloexec) fcntl(parent_end, F_SETFD, 0);
  /* "r" unbuffered: how a pipe's bytes arrive (one read or several) depends on timing, so a
   * buffer's bytes and read pointers would differ between nodes, open and after pclose (the
   * freed blocks keep them); one byte per read(2) ends every read in the same state */
  if (do_read) setvbuf(f, NULL, _IONBF, 0);
  return f;
}

int pclose(FILE *stream) {
  struct popen_child *c = NULL;
  if (children) {
    take();
    for (struct popen_child **p = &children->head; *p; p = &(*p)->next)
      if ((*p)->stream == stream) {
        c = *p;
        *p = c->next;
        break;
      }
    give();
  }
  if (!c) {
    int (*libc_pclose)(FILE *) = (int (*)(FILE *))dlsym(RTLD_NEXT, "pclose");
    if (libc_pclose) return libc_pclose(stream);
    errno = ECHILD;
    return -1;
  }
  pid_t pid = c->pid;
  cape_runtime_free(c);
  fclose(stream); /* flushes a "w" stream: the child sees its end of input */
  int status;
  pid_t r;
  do r = waitpid(pid, &status, 0);
  while (r == -1 && errno == EINTR);
  return r == -1 ? -1 : status;
}

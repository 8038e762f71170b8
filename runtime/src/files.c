/* libcape's file opens: a slave's sequential part writes its own private copies ("shadows").
 *
 * Why: every node runs the sequential part, so a file it writes was written by every node.
 * With a shared file system (NFS homes; always for `cape run`'s local nodes) a log appended
 * before the first region held one line per node, and a file written then read back failed
 * in about half the runs (one node truncating it while another read it). gcc -fopenmp writes
 * it once. Now (docs/monitor.md, "Files"):
 *
 * - master (rank 0): writes the real files, as before. Before it first changes a path in a
 *   sequential part (opens it for writing, renames, truncates or unlinks it), it saves what
 *   the path held ("the before image", or an "absent" mark) under
 *   DIR/node.0.files/{before,absent}/<absolute path>: a slave behind it still reads, and
 *   starts its copy from, what the master started from.
 * - slave (rank > 0), outside a parallel region: the first open of a regular file (or a
 *   missing one) for writing goes to DIR/node.RANK.files/<absolute path>, a copy of the before
 *   image (or of the real file while the master has not saved one), empty with O_TRUNC; from
 *   then on the path is this node's own: every open of it (reads too, inside regions too),
 *   unlink, remove, rename and truncate act on the shadow (a missing shadow is a deleted file).
 * - inside a region (between cape_start() and cape_stop()) nothing new is shadowed: a `single`
 *   on a slave writes the real file, once, as before.
 *
 * DIR is CAPE_FILES_DIR, which `cape node` sets (the same string on every node: the program's
 * environment must not differ) to its --output-dir made absolute. Unset (one node, `cape
 * monitor`), or CAPE_SLAVE_FILES=real: every call goes straight to libc, the old way.
 *
 * The memory contract: nothing here writes tracked memory. The state lives in the runtimes'
 * heap (its pointer set before main, the same on every node, as popen.c's list); paths are
 * built in stack buffers; no malloc (a block the master allocated and the slaves not would
 * differ in the determinism digest). A shadow is opened by the same libc call the master
 * makes (fopen: a FILE like the master's), and the helper descriptors are closed first, so it
 * gets the same descriptor number. Names are made absolute by text (cwd, `.`, `..`, `//`);
 * symbolic links are not followed. stat and access follow the opens; opendir, mkdir and the
 * rest see the real files.
 */
#define _GNU_SOURCE
#undef _FORTIFY_SOURCE /* its inline open() would clash with ours */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cape/cape.h"
#include "heap_runtime.h"

enum { MODE_UNKNOWN, MODE_OFF, MODE_SLAVE, MODE_MASTER };

/* A path this node took care of: on a slave, shadowed (its shadow is the file); on the master,
 * its before image saved (or not needed). `fd`: a slave's last descriptor opened for writing
 * on the shadow outside a region (-1: none), looked at when a region starts (warn_open). */
struct seen {
  struct seen *next, *hnext; /* all of them (newest first); the same hash bucket */
  int fd, warned;
  char path[];
};
#define SEEN_BUCKETS 1024 /* a program writing thousands of frames looks each up at once */

struct files_state {
  uint32_t lock;
  int mode;
  int rank;
  int in_region;
  struct seen *paths;
  struct seen *bucket[SEEN_BUCKETS];
  int watched; /* entries whose fd warn_open looks at */
  FILE *(*fopen)(const char *, const char *);
  FILE *(*fopen64)(const char *, const char *);
  FILE *(*freopen)(const char *, const char *, FILE *);
  FILE *(*freopen64)(const char *, const char *, FILE *);
  int (*remove)(const char *);
  char dir[PATH_MAX];
};

/* Set before main, the same on every node; what it points to is untracked. */
static struct files_state *fs;

__attribute__((constructor(103))) static void files_init(void) {
  cape_runtime_heap_init();
  struct files_state *s = cape_runtime_calloc(1, sizeof *s);
  if (!s) return;
  s->fopen = (FILE * (*)(const char *, const char *)) dlsym(RTLD_NEXT, "fopen");
  s->fopen64 = (FILE * (*)(const char *, const char *)) dlsym(RTLD_NEXT, "fopen64");
  s->freopen = (FILE * (*)(const char *, const char *, FILE *)) dlsym(RTLD_NEXT, "freopen");
  s->freopen64 = (FILE * (*)(const char *, const char *, FILE *)) dlsym(RTLD_NEXT, "freopen64");
  s->remove = (int (*)(const char *))dlsym(RTLD_NEXT, "remove");
  const char *dir = getenv("CAPE_FILES_DIR"), *how = getenv("CAPE_SLAVE_FILES");
  s->mode = MODE_UNKNOWN;
  /* (0 and 1 as every other switch of the project's: 0 the old way) */
  int real = how && (strcmp(how, "real") == 0 || strcmp(how, "0") == 0);
  if (how && *how && !real && strcmp(how, "shadow") != 0 && strcmp(how, "1") != 0) {
    /* Every node reads the same environment: each stops here, before main. */
    fprintf(stderr,
            "cape: CAPE_SLAVE_FILES='%s' is not 'shadow' or 1 (the default: the slaves' sequential part writes "
            "private copies, docs/monitor.md \"Files\") nor 'real' or 0 (every node writes the real files)\n",
            how);
    _exit(2);
  }
  if (!dir || !*dir || real) s->mode = MODE_OFF;
  else if (dir[0] == '/' && strlen(dir) < sizeof s->dir - 1) strcpy(s->dir, dir);
  else {
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd) ||
        snprintf(s->dir, sizeof s->dir, "%s/%s", cwd, dir) >= (int)sizeof s->dir)
      s->mode = MODE_OFF;
  }
  fs = s;
}

static void take(void) {
  while (__atomic_exchange_n(&fs->lock, 1, __ATOMIC_ACQUIRE))
    while (__atomic_load_n(&fs->lock, __ATOMIC_RELAXED)) sched_yield();
}
static void give(void) { __atomic_store_n(&fs->lock, 0, __ATOMIC_RELEASE); }

/* This node's part; the rank is asked (two traps, once) at the first call that needs it,
 * never under the lock. */
static int mode(void) {
  if (!fs) return MODE_OFF;
  int m = __atomic_load_n(&fs->mode, __ATOMIC_ACQUIRE);
  if (m != MODE_UNKNOWN) return m;
  int n = cape_num_nodes(), r = cape_node_id();
  m = n <= 1 ? MODE_OFF : r == 0 ? MODE_MASTER : MODE_SLAVE;
  fs->rank = r;
  __atomic_store_n(&fs->mode, m, __ATOMIC_RELEASE);
  return m;
}

static int in_region(void) { return __atomic_load_n(&fs->in_region, __ATOMIC_ACQUIRE); }

/* cape.c's hooks (weak there: this file is linked only into programs that open files).
 * 1: a region's window begins (after start()'s trap); 0: it ends; 2: this process was
 * restarted from a complete checkpoint (--model=cape1's parts: it runs one region's share
 * and is discarded, so its opens are region opens, real). */
static void warn_open(void);
void cape_files_region(int what) {
  if (!fs) return;
  if (what == 2) {
    __atomic_store_n(&fs->mode, MODE_OFF, __ATOMIC_RELEASE);
    return;
  }
  __atomic_store_n(&fs->in_region, what, __ATOMIC_RELEASE);
  if (what == 1 && __atomic_load_n(&fs->mode, __ATOMIC_ACQUIRE) == MODE_SLAVE) warn_open();
}

static long sys(long nr, long a, long b, long c, long d) { return syscall(nr, a, b, c, d); }
/* The file's own stat and access: raw (the program's, defined below, would re-enter). */
static int raw_stat(const char *p, struct stat *st) { return (int)sys(SYS_newfstatat, AT_FDCWD, (long)p, (long)st, 0); }
static int raw_exists(const char *p) { return sys(SYS_faccessat, AT_FDCWD, (long)p, F_OK, 0) == 0; }
static int raw_open(const char *p, int flags, int mode_bits) {
  return (int)sys(SYS_openat, AT_FDCWD, (long)p, flags | O_CLOEXEC, mode_bits);
}

/* `path` (relative to `dirfd`) made absolute by text into out; -1 when it cannot be. */
static int absolute(int dirfd, const char *path, char *out, size_t size) {
  char buf[PATH_MAX * 2];
  size_t n = 0;
  if (!path || !*path) return -1;
  if (path[0] != '/') {
    if (dirfd == AT_FDCWD) {
      if (!getcwd(buf, PATH_MAX)) return -1;
    } else {
      char link[64];
      snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
      ssize_t k = readlink(link, buf, PATH_MAX - 1);
      if (k <= 0 || buf[0] != '/') return -1;
      buf[k] = 0;
    }
    n = strlen(buf);
    buf[n++] = '/';
  }
  size_t len = strlen(path);
  if (n + len >= sizeof buf) return -1;
  memcpy(buf + n, path, len + 1);
  /* Components, with . and .. and empty ones resolved by text. */
  size_t o = 0;
  const char *p = buf;
  while (*p) {
    while (*p == '/') p++;
    const char *e = p;
    while (*e && *e != '/') e++;
    size_t c = (size_t)(e - p);
    if (c == 0 || (c == 1 && p[0] == '.')) {
    } else if (c == 2 && p[0] == '.' && p[1] == '.') {
      while (o > 0 && out[o - 1] != '/') o--;
      if (o > 0) o--;
    } else {
      if (o + 1 + c >= size) return -1;
      out[o++] = '/';
      memcpy(out + o, p, c);
      o += c;
    }
    p = e;
  }
  if (o == 0) return -1; /* "/" */
  out[o] = 0;
  return 0;
}

static int join(char *out, size_t size, const char *a, const char *b, const char *c) {
  return snprintf(out, size, "%s%s%s", a, b, c) < (int)size ? 0 : -1;
}
static int shadow_of(const char *abs, char *out, size_t size) {
  char root[64];
  snprintf(root, sizeof root, "/node.%d.files", fs->rank);
  return join(out, size, fs->dir, root, abs);
}

static int is_under(const char *abs, const char *dir) {
  size_t n = strlen(dir);
  return strncmp(abs, dir, n) == 0 && (abs[n] == '/' || abs[n] == 0);
}

/* mkdir -p of the directory holding `file`: the parent first (one call when it exists, the
 * usual case), its own parents only when it cannot be made. */
static void make_parents(const char *file) {
  char d[PATH_MAX];
  size_t n = strlen(file);
  if (n >= sizeof d) return;
  memcpy(d, file, n + 1);
  while (n > 0 && d[n - 1] != '/') n--;
  if (n <= 1) return;
  d[n - 1] = 0;
  long r = sys(SYS_mkdirat, AT_FDCWD, (long)d, 0755, 0);
  if (r == 0 || errno != ENOENT) return;
  make_parents(d);
  sys(SYS_mkdirat, AT_FDCWD, (long)d, 0755, 0);
}

/* Copies `from` to `to` (created with from's permission bits; `empty`: no content). 0, or -1
 * with errno (ENOENT: no `from`). */
static int copy_file(const char *from, const char *to, int empty) {
  int in = raw_open(from, O_RDONLY, 0);
  if (in < 0) return -1;
  struct stat st;
  if (fstat(in, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(in);
    errno = EINVAL;
    return -1;
  }
  make_parents(to);
  int out = raw_open(to, O_WRONLY | O_CREAT | O_TRUNC, st.st_mode & 07777);
  if (out < 0) {
    int e = errno;
    close(in);
    errno = e;
    return -1;
  }
  int err = 0;
  if (!empty) {
    char buf[16384];
    for (;;) {
      ssize_t r = read(in, buf, sizeof buf);
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) { err = errno; break; }
      if (r == 0) break;
      for (ssize_t w = 0; w < r;) {
        ssize_t k = write(out, buf + w, (size_t)(r - w));
        if (k < 0 && errno == EINTR) continue;
        if (k < 0) { err = errno; break; }
        w += k;
      }
      if (err) break;
    }
  }
  close(in);
  if (close(out) != 0 && !err) err = errno;
  if (err) {
    errno = err;
    return -1;
  }
  return 0;
}

static unsigned hash(const char *p) {
  unsigned h = 2166136261u; /* FNV-1a */
  while (*p) h = (h ^ (unsigned char)*p++) * 16777619u;
  return h % SEEN_BUCKETS;
}
static struct seen *find(const char *abs) {
  for (struct seen *s = fs->bucket[hash(abs)]; s; s = s->hnext)
    if (strcmp(s->path, abs) == 0) return s;
  return NULL;
}
static struct seen *add(const char *abs) {
  size_t n = strlen(abs) + 1;
  struct seen *s = cape_runtime_malloc(sizeof *s + n);
  if (!s) return NULL;
  s->fd = -1;
  s->warned = 0;
  memcpy(s->path, abs, n);
  unsigned h = hash(abs);
  s->hnext = fs->bucket[h];
  fs->bucket[h] = s;
  s->next = fs->paths;
  __atomic_store_n(&fs->paths, s, __ATOMIC_RELEASE);
  return s;
}

static void fail(const char *what, const char *path) {
  int e = errno;
  fprintf(stderr, "cape: node %d: %s %s: %s (CAPE_SLAVE_FILES=real: the old way)\n", fs->rank, what, path, strerror(e));
  errno = e;
}

/* The master, before it first changes `abs` in a sequential part: its before image, copied
 * aside and renamed into place (a slave never reads half of one), or an `absent` mark. Also
 * before a truncating open: a slave behind the master may still read what the file held
 * (or find it missing). Under the lock. */
static void master_before(const char *abs, const struct stat *now) {
  if (find(abs) || !add(abs)) return;
  char before[PATH_MAX], absent[PATH_MAX], tmp[PATH_MAX];
  if (join(before, sizeof before, fs->dir, "/node.0.files/before", abs) ||
      join(absent, sizeof absent, fs->dir, "/node.0.files/absent", abs) ||
      join(tmp, sizeof tmp, before, ".cape-tmp", ""))
    return;
  if (!now) {
    make_parents(absent);
    int fd = raw_open(absent, O_WRONLY | O_CREAT, 0644);
    if (fd >= 0) close(fd);
    else fail("cannot mark as absent", absent);
    return;
  }
  if (!S_ISREG(now->st_mode)) return;
  if (copy_file(abs, tmp, 0) != 0 || sys(SYS_renameat, AT_FDCWD, (long)tmp, AT_FDCWD, (long)before) != 0) {
    fail("cannot save the before image of", abs);
    sys(SYS_unlinkat, AT_FDCWD, (long)tmp, 0, 0);
  }
}

/* What the path held when the master first changed it, into `to` (or `to` removed: it did
 * not exist). Read from the master's before image or absent mark; while there is neither,
 * the master has not changed it yet: the real file is copied, and looked at again after (the
 * master saves its image before it changes the file). 0, or -1 with errno. */
static int slave_start_copy(const char *abs, const char *to, int empty) {
  char before[PATH_MAX], absent[PATH_MAX];
  if (join(before, sizeof before, fs->dir, "/node.0.files/before", abs) ||
      join(absent, sizeof absent, fs->dir, "/node.0.files/absent", abs)) {
    errno = ENAMETOOLONG;
    return -1;
  }
  for (int round = 0; round < 2; round++) {
    if (copy_file(before, to, empty) == 0) return 0;
    if (raw_exists(absent)) {
      sys(SYS_unlinkat, AT_FDCWD, (long)to, 0, 0);
      return 0;
    }
    if (round == 1) break;
    if (copy_file(abs, to, empty) != 0) {
      if (errno != ENOENT) return -1;
      sys(SYS_unlinkat, AT_FDCWD, (long)to, 0, 0);
    }
    if (!raw_exists(before) && !raw_exists(absent)) return 0;
  }
  return 0;
}

/* Whether `flags` change the file. */
static int writes(int flags) {
  return (flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC | O_APPEND));
}

/* The path a call must use for `path` (relative to dirfd): `path` itself (0) or `out` (1).
 * `change`: the call changes the file (an open for writing, unlink, rename, truncate);
 * `keeps`: what the file held matters to it. -1 with errno: a shadow could not be made (said
 * on stderr). */
static int route(int dirfd, const char *path, int change, int keeps, char *out, size_t size) {
  if (!fs || __atomic_load_n(&fs->mode, __ATOMIC_ACQUIRE) == MODE_OFF) return 0;
  int region = in_region();
  /* Inside a region the rank is not asked (no trap there): not known yet, nothing is shadowed
   * and the opens are real. Outside, asked first: the master's reads then cost nothing. */
  int m = region ? __atomic_load_n(&fs->mode, __ATOMIC_ACQUIRE) : mode();
  if (m == MODE_UNKNOWN || m == MODE_OFF || (m == MODE_MASTER && (!change || region))) return 0;
  char abs[PATH_MAX];
  if (absolute(dirfd, path, abs, sizeof abs) != 0 || is_under(abs, fs->dir)) return 0;
  if (strncmp(abs, "/dev/", 5) == 0 || strncmp(abs, "/proc/", 6) == 0 || strncmp(abs, "/sys/", 5) == 0) return 0;
  int r = 0;
  struct stat st;
  struct seen *found;
  take();
  if (m == MODE_MASTER) {
    if (!find(abs)) {
      int there = raw_stat(abs, &st) == 0;
      if (there ? S_ISREG(st.st_mode) : errno == ENOENT) master_before(abs, there ? &st : NULL);
    }
  } else if ((found = find(abs))) {
    r = shadow_of(abs, out, size) == 0 ? 1 : 0;
    if (r && region && change && !found->warned) {
      /* a loop body appending to a log the sequential part wrote: lost to the file */
      found->warned = 1;
      fprintf(stderr,
              "cape: node %d: warning: %s, which this node's sequential part wrote, is changed inside a parallel "
              "region: this node's changes go to its private copy %s, not to the file (docs/monitor.md \"Files\")\n",
              fs->rank, abs, out);
    }
  } else if (!region || !change) {
    int take_it = 0;
    if (change) {
      /* a regular file, or none yet; devices, fifos and directories stay real */
      take_it = raw_stat(abs, &st) != 0 ? errno == ENOENT : S_ISREG(st.st_mode);
    } else {
      /* a read of a path the master has changed already (it runs ahead): what it held then
       * (inside a region too: a mark made since can only be a later sequential part's) */
      char before[PATH_MAX], absent[PATH_MAX];
      take_it = join(before, sizeof before, fs->dir, "/node.0.files/before", abs) == 0 &&
                join(absent, sizeof absent, fs->dir, "/node.0.files/absent", abs) == 0 &&
                (raw_exists(before) || raw_exists(absent));
      keeps = 1;
    }
    if (!take_it) {
    } else if (shadow_of(abs, out, size) != 0) {
      errno = ENAMETOOLONG;
      fail("cannot make a private copy of", abs);
      r = -1;
    } else {
      make_parents(out);
      if (slave_start_copy(abs, out, !keeps) != 0) {
        fail("cannot make a private copy of", abs);
        r = -1;
      } else if (!add(abs)) {
        errno = ENOMEM;
        r = -1;
      } else {
        r = 1;
      }
    }
  }
  give();
  return r;
}

/* A slave's descriptor on a shadow, opened for writing outside a region: remembered, so that a
 * region starting with it still open can say that the node's writes inside go to its copy. */
static void remember(const char *shadow, int fd, int flags) {
  if (fd < 0 || (flags & O_ACCMODE) == O_RDONLY || mode() != MODE_SLAVE || in_region()) return;
  char root[PATH_MAX];
  if (shadow_of("", root, sizeof root) != 0 || strncmp(shadow, root, strlen(root)) != 0) return;
  const char *abs = shadow + strlen(root); /* (the shadow's name holds the path: no getcwd) */
  take();
  struct seen *s = find(abs);
  if (s) {
    fs->watched += s->fd < 0;
    s->fd = fd;
  }
  give();
}

static void warn_open(void) {
  if (!__atomic_load_n(&fs->watched, __ATOMIC_RELAXED)) return; /* the usual case: no syscall, no lock */
  take();
  for (struct seen *s = fs->paths; s && fs->watched; s = s->next) {
    if (s->fd < 0) continue;
    char link[64], now[PATH_MAX], shadow[PATH_MAX];
    snprintf(link, sizeof link, "/proc/self/fd/%d", s->fd);
    ssize_t k = readlink(link, now, sizeof now - 1);
    int flags = fcntl(s->fd, F_GETFL);
    if (k > 0) now[k] = 0;
    if (k <= 0 || flags < 0 || (flags & O_ACCMODE) == O_RDONLY || shadow_of(s->path, shadow, sizeof shadow) != 0 ||
        strcmp(now, shadow) != 0) {
      s->fd = -1;
      fs->watched--;
      continue;
    }
    if (!s->warned)
      fprintf(stderr,
              "cape: node %d: warning: %s is open for writing from the sequential part as a parallel region "
              "starts; what this node writes to it inside regions goes to its private copy %s, not to the "
              "file (docs/monitor.md \"Files\"): open it inside the region, or write from the master\n",
              fs->rank, s->path, shadow);
    s->warned = 1;
  }
  give();
}

static int open_mode_flags(const char *m) {
  int f;
  switch (m[0]) {
    case 'r': f = O_RDONLY; break;
    case 'w': f = O_WRONLY | O_CREAT | O_TRUNC; break;
    case 'a': f = O_WRONLY | O_CREAT | O_APPEND; break;
    default: return -1;
  }
  for (const char *p = m + 1; *p && *p != ','; p++)
    if (*p == '+') f = (f & ~O_ACCMODE) | O_RDWR;
  return f;
}

/* ---- the interposed calls ---- */

static int open_common(int dirfd, const char *path, int flags, mode_t mode_bits) {
  char shadow[PATH_MAX];
  int r = route(dirfd, path, writes(flags) ? 1 : 0, !(flags & O_TRUNC), shadow, sizeof shadow);
  if (r < 0) return -1;
  long fd = syscall(SYS_openat, r ? AT_FDCWD : dirfd, r ? shadow : path, flags, mode_bits);
  if (r && fd >= 0) remember(shadow, (int)fd, flags);
  return (int)fd;
}

static mode_t mode_arg(int flags, va_list ap) {
  return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? (mode_t)va_arg(ap, int) : 0;
}

int open(const char *path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t m = mode_arg(flags, ap);
  va_end(ap);
  return open_common(AT_FDCWD, path, flags, m);
}
int open64(const char *path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t m = mode_arg(flags, ap);
  va_end(ap);
  return open_common(AT_FDCWD, path, flags, m);
}
int openat(int dirfd, const char *path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t m = mode_arg(flags, ap);
  va_end(ap);
  return open_common(dirfd, path, flags, m);
}
int openat64(int dirfd, const char *path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t m = mode_arg(flags, ap);
  va_end(ap);
  return open_common(dirfd, path, flags, m);
}
/* _FORTIFY_SOURCE's checked forms (no mode: no O_CREAT). */
int __open_2(const char *path, int flags) { return open_common(AT_FDCWD, path, flags, 0); }
int __open64_2(const char *path, int flags) { return open_common(AT_FDCWD, path, flags, 0); }
int __openat_2(int dirfd, const char *path, int flags) { return open_common(dirfd, path, flags, 0); }
int __openat64_2(int dirfd, const char *path, int flags) { return open_common(dirfd, path, flags, 0); }
int creat(const char *path, mode_t m) { return open_common(AT_FDCWD, path, O_WRONLY | O_CREAT | O_TRUNC, m); }
int creat64(const char *path, mode_t m) { return open_common(AT_FDCWD, path, O_WRONLY | O_CREAT | O_TRUNC, m); }

static FILE *fopen_common(FILE *(*real)(const char *, const char *), const char *path, const char *m) {
  if (!real) {
    errno = ENOSYS;
    return NULL;
  }
  int flags = m ? open_mode_flags(m) : -1;
  if (flags < 0) return real(path, m); /* libc says EINVAL */
  char shadow[PATH_MAX];
  int r = route(AT_FDCWD, path, writes(flags) ? 1 : 0, !(flags & O_TRUNC), shadow, sizeof shadow);
  if (r < 0) return NULL;
  FILE *f = real(r ? shadow : path, m);
  if (r && f) remember(shadow, fileno(f), flags);
  return f;
}
FILE *fopen(const char *path, const char *m) {
  return fopen_common(fs ? fs->fopen : (FILE * (*)(const char *, const char *)) dlsym(RTLD_NEXT, "fopen"), path, m);
}
FILE *fopen64(const char *path, const char *m) {
  return fopen_common(fs ? fs->fopen64 : (FILE * (*)(const char *, const char *)) dlsym(RTLD_NEXT, "fopen64"), path, m);
}

static FILE *freopen_common(FILE *(*real)(const char *, const char *, FILE *), const char *path, const char *m,
                            FILE *stream) {
  if (!real) {
    errno = ENOSYS;
    return NULL;
  }
  int flags = m ? open_mode_flags(m) : -1;
  if (!path || flags < 0) return real(path, m, stream); /* a new mode for the same file; libc's EINVAL */
  char shadow[PATH_MAX];
  int r = route(AT_FDCWD, path, writes(flags) ? 1 : 0, !(flags & O_TRUNC), shadow, sizeof shadow);
  if (r < 0) return NULL;
  FILE *f = real(r ? shadow : path, m, stream);
  if (r && f) remember(shadow, fileno(f), flags);
  return f;
}
FILE *freopen(const char *path, const char *m, FILE *stream) {
  return freopen_common(fs ? fs->freopen : (FILE * (*)(const char *, const char *, FILE *)) dlsym(RTLD_NEXT, "freopen"),
                        path, m, stream);
}
FILE *freopen64(const char *path, const char *m, FILE *stream) {
  return freopen_common(
      fs ? fs->freopen64 : (FILE * (*)(const char *, const char *, FILE *)) dlsym(RTLD_NEXT, "freopen64"), path, m,
      stream);
}

/* unlink and remove of a slave's path outside a region: its shadow goes (a shadowed path with
 * no shadow is a deleted file on this node); the real file is the master's to delete. */
int unlink(const char *path) {
  char shadow[PATH_MAX];
  int r = route(AT_FDCWD, path, 1, 1, shadow, sizeof shadow);
  if (r < 0) return -1;
  return (int)syscall(SYS_unlinkat, AT_FDCWD, r ? shadow : path, 0);
}
int unlinkat(int dirfd, const char *path, int flags) {
  char shadow[PATH_MAX];
  int r = (flags & AT_REMOVEDIR) ? 0 : route(dirfd, path, 1, 1, shadow, sizeof shadow);
  if (r < 0) return -1;
  return (int)syscall(SYS_unlinkat, r ? AT_FDCWD : dirfd, r ? shadow : path, flags);
}
int remove(const char *path) {
  struct stat st;
  /* a directory: rmdir, on the real one (directories are never shadowed) */
  if (path && raw_stat(path, &st) == 0 && S_ISDIR(st.st_mode) && fs && fs->remove) return fs->remove(path);
  return unlink(path);
}

int rename(const char *from, const char *to) {
  char sf[PATH_MAX], st[PATH_MAX];
  int a = route(AT_FDCWD, from, 1, 1, sf, sizeof sf);
  if (a < 0) return -1;
  /* the target: its old content never matters (rename replaces it) */
  int b = route(AT_FDCWD, to, 1, 0, st, sizeof st);
  if (b < 0) return -1;
  if (a != b) {
    /* one side shadowed and not the other (inside a region): a region's rename of a file the
     * slave made its own moves its copy; of a real file onto a shadowed name, the real file */
    if (a && !b) {
      char abs[PATH_MAX];
      if (absolute(AT_FDCWD, to, abs, sizeof abs) == 0) {
        take();
        if (!find(abs)) add(abs);
        give();
        if (shadow_of(abs, st, sizeof st) == 0) b = 1;
      }
    }
  }
  if (b) make_parents(st);
  return (int)syscall(SYS_renameat, AT_FDCWD, a ? sf : from, AT_FDCWD, b ? st : to);
}

int truncate(const char *path, off_t length) {
  char shadow[PATH_MAX];
  int r = route(AT_FDCWD, path, 1, 1, shadow, sizeof shadow);
  if (r < 0) return -1;
  return (int)syscall(SYS_truncate, r ? shadow : path, length);
}
int truncate64(const char *path, off_t length) { return truncate(path, length); }

/* stat and access of a slave's path see what its opens see: its shadow, or what the master's
 * before image says (a slave behind the master asking whether a file exists yet). */
int stat(const char *path, struct stat *st) {
  char shadow[PATH_MAX];
  int r = route(AT_FDCWD, path, 0, 1, shadow, sizeof shadow);
  if (r < 0) return -1;
  return (int)syscall(SYS_newfstatat, AT_FDCWD, r ? shadow : path, st, 0);
}
int lstat(const char *path, struct stat *st) {
  char shadow[PATH_MAX];
  int r = route(AT_FDCWD, path, 0, 1, shadow, sizeof shadow);
  if (r < 0) return -1;
  return (int)syscall(SYS_newfstatat, AT_FDCWD, r ? shadow : path, st, AT_SYMLINK_NOFOLLOW);
}
int fstatat(int dirfd, const char *path, struct stat *st, int flags) {
  char shadow[PATH_MAX];
  int r = (flags & AT_EMPTY_PATH) ? 0 : route(dirfd, path, 0, 1, shadow, sizeof shadow);
  if (r < 0) return -1;
  return (int)syscall(SYS_newfstatat, r ? AT_FDCWD : dirfd, r ? shadow : path, st, flags);
}
int stat64(const char *path, struct stat64 *st) { return stat(path, (struct stat *)st); }
int lstat64(const char *path, struct stat64 *st) { return lstat(path, (struct stat *)st); }
int fstatat64(int dirfd, const char *path, struct stat64 *st, int flags) {
  return fstatat(dirfd, path, (struct stat *)st, flags);
}
int access(const char *path, int how) {
  char shadow[PATH_MAX];
  int r = route(AT_FDCWD, path, 0, 1, shadow, sizeof shadow);
  if (r < 0) return -1;
  return (int)syscall(SYS_faccessat, AT_FDCWD, r ? shadow : path, how);
}
int faccessat(int dirfd, const char *path, int how, int flags) {
  char shadow[PATH_MAX];
  int r = route(dirfd, path, 0, 1, shadow, sizeof shadow);
  if (r < 0) return -1;
  if (flags == 0) return (int)syscall(SYS_faccessat, r ? AT_FDCWD : dirfd, r ? shadow : path, how);
  return (int)syscall(SYS_faccessat2, r ? AT_FDCWD : dirfd, r ? shadow : path, how, flags);
}

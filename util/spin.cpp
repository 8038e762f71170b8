#include "util/spin.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

namespace cape::util {

namespace {
long now_ns() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000L + t.tv_nsec;
}
int loadavg_fd() {
  static const int fd = ::open("/proc/loadavg", O_RDONLY | O_CLOEXEC);  // (kept: pread is thread-safe)
  return fd;
}
// "0.52 0.58 0.59 2/108 12345": runnable tasks now / all tasks.
long runnable_now() {
  char b[128];
  ssize_t n = ::pread(loadavg_fd(), b, sizeof b - 1, 0);
  if (n <= 0) return -1;
  b[n] = '\0';
  const char* p = b;
  for (int field = 0; field < 3 && p; field++) {
    p = std::strchr(p, ' ');
    if (p) p++;
  }
  return p ? std::strtol(p, nullptr, 10) : -1;
}
}  // namespace

bool cpu_to_spare() {
  static const bool always = [] {
    const char* v = std::getenv("CAPE_SPIN_IDLE_ONLY");
    return v && std::strcmp(v, "0") == 0;
  }();
  if (always) return true;
  static const long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
  thread_local long checked_ns = 0;
  thread_local bool spare = false;
  const long now = now_ns();
  if (now - checked_ns < 16000) return spare;
  checked_ns = now;
  const long r = runnable_now();
  spare = r > 0 && cpus > 0 && r <= cpus;
  return spare;
}

}  // namespace cape::util

#include "util/spin.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "util/scoped_fd.h"

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

std::atomic<uint64_t> n_fit{0}, n_fit_own{0}, n_closed{0}, own_checks{0}, own_ns{0};

// The job's tasks on this host that the gate leaves out, their stat files kept open (a pread
// of one costs ~2 us here; opening it again each time would cost more).
struct OwnTasks {
  std::mutex mu;
  long found_ns = 0;  // when they were last listed (again every second: a thread not yet listed is counted, the safe side)
  bool programs = false;  // (listed with the programs)
  pid_t by = 0;           // (listed by this process: not a copy inherited through fork)
  std::vector<pid_t> tids;
  std::vector<ScopedFd> stat;
};

std::string text_of(const std::string& path, size_t max = 4096) {
  ScopedFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return {};
  std::string s(max, '\0');
  ssize_t n = ::read(fd.get(), s.data(), s.size());
  s.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return s;
}
std::string exe_of(pid_t pid) {
  char b[4096];
  ssize_t n = ::readlink(("/proc/" + std::to_string(pid) + "/exe").c_str(), b, sizeof b);
  return n > 0 ? std::string(b, static_cast<size_t>(n)) : std::string();
}
std::vector<pid_t> tids_of(pid_t pid) {
  std::vector<pid_t> out;
  DIR* d = ::opendir(("/proc/" + std::to_string(pid) + "/task").c_str());
  if (!d) return out;
  while (dirent* e = ::readdir(d))
    if (e->d_name[0] >= '0' && e->d_name[0] <= '9') out.push_back(static_cast<pid_t>(std::atol(e->d_name)));
  ::closedir(d);
  return out;
}
// The children every thread of `pid` started (/proc/PID/task/TID/children, CONFIG_PROC_CHILDREN).
std::vector<pid_t> children_of(pid_t pid) {
  std::vector<pid_t> out;
  for (pid_t t : tids_of(pid)) {
    std::string s = text_of("/proc/" + std::to_string(pid) + "/task/" + std::to_string(t) + "/children", 65536);
    for (const char* p = s.c_str(); *p;) {
      char* end;
      long v = std::strtol(p, &end, 10);
      if (end == p) break;
      out.push_back(static_cast<pid_t>(v));
      p = end;
    }
  }
  return out;
}

// This node's monitor and the other local nodes' (the other children of our parent that run
// our executable: `cape run`'s nodes, or an MPI daemon's ranks), with `programs` their
// programs too; every thread of each.
void list_own(OwnTasks& o, bool programs) {
  const pid_t self = ::getpid();
  std::vector<pid_t> procs = {self};
  const pid_t parent = ::getppid();
  if (parent > 1) {
    const std::string exe = exe_of(self);
    for (pid_t c : children_of(parent))
      if (c != self && !exe.empty() && exe_of(c) == exe) procs.push_back(c);
  }
  if (programs) {
    const size_t nodes = procs.size();
    for (size_t i = 0; i < nodes; i++)
      for (pid_t c : children_of(procs[i])) procs.push_back(c);
  }
  o.tids.clear();
  o.stat.clear();
  for (pid_t p : procs)
    for (pid_t t : tids_of(p)) {
      ScopedFd fd(::open(("/proc/" + std::to_string(p) + "/task/" + std::to_string(t) + "/stat").c_str(),
                         O_RDONLY | O_CLOEXEC));
      if (!fd.valid()) continue;
      o.tids.push_back(t);
      o.stat.push_back(std::move(fd));
    }
}

// 'R' (running or waiting for a CPU) in "TID (COMM) S ...". A task that ended reads as not.
bool running(int fd) {
  char b[96];
  ssize_t n = ::pread(fd, b, sizeof b - 1, 0);
  if (n <= 0) return false;
  b[n] = '\0';
  const char* p = std::strrchr(b, ')');
  return p && p[1] == ' ' && p[2] == 'R';
}

OwnTasks& own_tasks() {
  static OwnTasks* o = new OwnTasks;  // (never destroyed: a network thread may still spin at exit)
  return *o;
}

// How many of the job's left-out tasks other than the caller are runnable, counting until
// `enough` (a full count with enough < 0); `found` gets how many there are.
long own_runnable(bool programs, long enough, long* found) {
  OwnTasks& o = own_tasks();
  std::lock_guard<std::mutex> lk(o.mu);
  const long now = now_ns();
  if (o.found_ns == 0 || now - o.found_ns > 1'000'000'000L || o.programs != programs || o.by != ::getpid()) {
    list_own(o, programs);
    o.programs = programs;
    o.by = ::getpid();
    o.found_ns = now;
  }
  const pid_t me = static_cast<pid_t>(::syscall(SYS_gettid));
  if (found) *found = static_cast<long>(o.tids.size()) - 1;
  if (enough >= static_cast<long>(o.tids.size())) return 0;  // (cannot reach it: no reads)
  long r = 0;
  for (size_t i = 0; i < o.tids.size(); i++) {
    if (o.tids[i] == me || !running(o.stat[i].get())) continue;
    if (++r == enough) break;
  }
  return r;
}

SpinGate gate_of(const char* g, const char* idle_only) {
  if (idle_only && std::strcmp(idle_only, "0") == 0) return SpinGate::always;
  // loadavg stays the default: on a quiet host `own` opened the gate in a few checks only and the
  // first entry did not move (docs/critical.md, "Session 15", the lead's quiet rounds).
  if (!g || !*g || std::strcmp(g, "loadavg") == 0) return SpinGate::loadavg;
  if (std::strcmp(g, "own") == 0) return SpinGate::own;
  if (std::strcmp(g, "job") == 0) return SpinGate::job;
  throw std::invalid_argument(std::string("CAPE_SPIN_GATE='") + g +
                              "': give loadavg (the default: every runnable task counted), own (the job's monitor "
                              "threads here are not counted), or job (the programs not counted either)");
}
}  // namespace

SpinGate spin_gate_from_env() { return gate_of(std::getenv("CAPE_SPIN_GATE"), std::getenv("CAPE_SPIN_IDLE_ONLY")); }

bool cpu_to_spare() {
  static const SpinGate gate = [] {
    try {
      return spin_gate_from_env();
    } catch (const std::invalid_argument&) {
      return SpinGate::loadavg;  // (`cape node` refuses such a value before any spin)
    }
  }();
  if (gate == SpinGate::always) return true;
  static const long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
  thread_local long checked_ns = 0;
  thread_local bool spare = false;
  const long now = now_ns();
  if (now - checked_ns < 16000) return spare;
  checked_ns = now;
  const long r = runnable_now();
  if (r <= 0 || cpus <= 0) return spare = false;
  if (r <= cpus) {
    n_fit++;
    return spare = true;
  }
  // Too many runnable: are enough of them the job's own (left out) for the rest to fit?
  const long need = r - cpus;
  spare = false;
  // Once other tasks alone were seen to fill the CPUs, the job's tasks are not read again for
  // 10 ms (under a parallel build that reading, ~13 us for 3 nodes' ~25 threads, would come
  // with every wait).
  static std::atomic<long> others_busy_until{0};
  if (gate != SpinGate::loadavg && now >= others_busy_until.load(std::memory_order_relaxed)) {
    const long own = own_runnable(gate == SpinGate::job, need, nullptr);  // (all of them read when too few)
    spare = own >= need;
    if (!spare && r - 1 - own >= cpus) others_busy_until.store(now + 10'000'000L, std::memory_order_relaxed);
    own_checks++;
    own_ns += static_cast<uint64_t>(now_ns() - now);
  }
  (spare ? n_fit_own : n_closed)++;
  return spare;
}

SpinGateStats spin_gate_stats() { return {n_fit.load(), n_fit_own.load(), n_closed.load(), own_checks.load(), own_ns.load()}; }

SpinGateReading spin_gate_read(SpinGate gate) {
  SpinGateReading out;
  out.runnable = runnable_now();
  out.own_runnable = own_runnable(gate == SpinGate::job, -1, &out.own_tasks);
  return out;
}

}  // namespace cape::util

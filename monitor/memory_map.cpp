#include "monitor/memory_map.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <string_view>

#include "monitor/maps_signal.h"
#include "protocol.h"
#include "util/error.h"
#include "util/scoped_fd.h"

namespace cape::monitor {

namespace {

// One line of /proc/PID/maps: "start-end perms offset major:minor inode   path". Parsed by
// hand: sscanf took most of a read's time (issue 14: the monitor reads the maps several
// times per region).
bool parse_map_line(std::string_view line, Mapping& m) {
  size_t i = 0;
  auto hex = [&](uint64_t& v) {
    size_t from = i;
    v = 0;
    for (; i < line.size(); i++) {
      char c = line[i];
      int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
      if (d < 0) break;
      v = v << 4 | static_cast<uint64_t>(d);
    }
    return i > from;
  };
  auto skip = [&](char c) {
    if (i >= line.size() || line[i] != c) return false;
    i++;
    return true;
  };
  uint64_t dev = 0, inode = 0;
  if (!hex(m.start) || !skip('-') || !hex(m.end) || !skip(' ') || line.size() < i + 5) return false;
  m.read = line[i] == 'r';
  m.write = line[i + 1] == 'w';
  m.exec = line[i + 2] == 'x';
  m.shared = line[i + 3] == 's';
  i += 4;
  if (!skip(' ') || !hex(m.offset) || !skip(' ') || !hex(dev) || !skip(':') || !hex(dev) || !skip(' ')) return false;
  for (; i < line.size() && line[i] >= '0' && line[i] <= '9'; i++) inode = inode * 10 + static_cast<uint64_t>(line[i] - '0');
  while (i < line.size() && line[i] == ' ') i++;
  m.path.assign(line.substr(i));
  return true;
}

}  // namespace

namespace {
std::atomic<uint64_t> g_maps_generation{1};
struct MapsCache {
  pid_t for_pid = 0;          // maps_cache_for
  const MapsSignal* signal = nullptr;
  pid_t pid = 0;              // whose maps `maps` are
  uint64_t generation = 0;    // g_maps_generation when they were read
  uint64_t signal_gen = 0;    // the signal's generation then (0: never matches)
  bool untrusted_read = false;  // read while the signal did not vouch (the old rule holds)
  std::vector<Mapping> maps;
  uint64_t stamp = 0;         // from g_maps_stamps when `maps` were read (cached_maps)
  util::ScopedFd fd;          // for_pid's /proc/PID/maps, kept open (an open costs as much as a read)
};
thread_local MapsCache t_maps;
std::atomic<uint64_t> g_maps_stamps{0};  // (unique across threads: each has its own cache)
std::vector<Mapping> read_maps_now(pid_t pid);
}  // namespace

void maps_cache_for(pid_t pid, const MapsSignal* signal) {
  if (t_maps.for_pid == pid && t_maps.signal == signal) return;
  if (t_maps.for_pid != pid) t_maps.fd.reset();
  t_maps.for_pid = pid;
  t_maps.signal = signal;
  t_maps.pid = 0;
}

void maps_may_change() { g_maps_generation.fetch_add(1, std::memory_order_acq_rel); }

void maps_check_stack(uint64_t sp) {
  if (t_maps.pid == 0) return;
  for (const Mapping& m : t_maps.maps)
    if (sp >= m.start && sp < m.end) return;
  t_maps.pid = 0;  // below the stack the maps knew: it grew
}

bool maps_signal_vouches(pid_t pid) {
  return pid != 0 && t_maps.for_pid == pid && t_maps.signal && t_maps.signal->trusted();
}

MapsEpoch maps_epoch(pid_t pid) {
  const MapsSignal* sig = t_maps.signal;
  if (!maps_signal_vouches(pid)) return {};
  // The count first: a call counted after it leaves the epoch unknown (not quiet) or larger.
  uint64_t g = sig->generation();
  if (!sig->quiet() || !sig->trusted()) return {};
  return {g, g_maps_generation.load(std::memory_order_acquire)};
}

std::vector<Mapping> read_maps(pid_t pid) {
  if (const std::vector<Mapping>* m = cached_maps(pid, nullptr)) return *m;
  return read_maps_now(pid);
}

const std::vector<Mapping>* cached_maps(pid_t pid, uint64_t* stamp) {
  if (pid == 0 || pid != t_maps.for_pid) return nullptr;
  const MapsSignal* sig = t_maps.signal;
  uint64_t g = g_maps_generation.load(std::memory_order_acquire);
  bool valid = t_maps.pid == pid && t_maps.generation == g;
  if (valid && sig) valid = t_maps.signal_gen == sig->generation() && (t_maps.untrusted_read || sig->quiet());
  if (!valid) {
    // What the signal says before the read: a call counted after it makes the next read again.
    uint64_t sg = sig ? sig->generation() : 0;
    bool trusted = sig && sig->trusted(), quiet = sig && sig->quiet();
    t_maps.maps = read_maps_now(pid);
    t_maps.pid = pid;
    t_maps.generation = g;
    t_maps.untrusted_read = !trusted;
    t_maps.signal_gen = trusted && !quiet ? 0 : sg;
    t_maps.stamp = g_maps_stamps.fetch_add(1, std::memory_order_relaxed) + 1;
  }
  if (stamp) *stamp = t_maps.stamp;
  return &t_maps.maps;
}

namespace {
std::vector<Mapping> read_maps_now(pid_t pid) {
  std::string path = "/proc/" + std::to_string(pid) + "/maps";
  // The cached program's file stays open and is read again from offset 0; the open file
  // holds the address space it was opened on, so a program that has called execve reads as
  // empty there: opened again then (a live program always has mappings).
  bool keep = pid != 0 && pid == t_maps.for_pid;
  util::ScopedFd own;
  static thread_local std::string text;
  for (int attempt = 0; attempt < 2; ++attempt) {
    util::ScopedFd& fd = keep ? t_maps.fd : own;
    if (!fd.valid() || attempt > 0) {
      fd.reset(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
      if (!fd.valid()) throw UserError("cannot read " + path + ": " + std::strerror(errno));
    }
    // The whole file first (seq_file hands out a page or so per read), then the lines.
    if (::lseek(fd.get(), 0, SEEK_SET) != 0) throw UserError("cannot read " + path + ": " + std::strerror(errno));
    text.clear();
    for (;;) {
      size_t have = text.size();
      text.resize(have + 65536);
      ssize_t n = ::read(fd.get(), text.data() + have, 65536);
      if (n < 0 && errno == EINTR) {
        text.resize(have);
        continue;
      }
      if (n < 0) throw UserError("cannot read " + path + ": " + std::strerror(errno));
      text.resize(have + static_cast<size_t>(n));
      if (n == 0) break;
    }
    if (!text.empty() || !keep) break;
  }
  std::vector<Mapping> out;
  std::string_view all(text);
  while (!all.empty()) {
    size_t nl = all.find('\n');
    std::string_view line = all.substr(0, nl);
    all.remove_prefix(nl == std::string_view::npos ? all.size() : nl + 1);
    Mapping m;
    if (parse_map_line(line, m)) out.push_back(std::move(m));
  }
  return out;
}
}  // namespace

const char* to_string(Area::Kind k) {
  switch (k) {
    case Area::data: return "data";
    case Area::bss: return "bss";
    case Area::heap: return "heap";
    case Area::stack: return "stack";
    case Area::anon: return "anon";
  }
  return "?";
}

std::vector<Area> tracked_set(const std::vector<Mapping>& maps, const std::string& exe,
                                uint64_t stack_boundary, uint64_t tls, uint64_t tls_low) {
  std::vector<Area> out;
  // The main stack's VMA split by a tracker that protects part of it (uffd registration or
  // mprotect of some pages): the kernel names only the piece holding the initial stack
  // pointer "[stack]"; the adjacent anonymous pieces are the stack too, read-only ones
  // included (the mprotect tracker's protected pages: a writable piece beyond one was taken
  // for a mapping of its own, and the job failed with "another node made ... anon rw-, but
  // ... is [stack] on this node").
  std::vector<bool> stack_part(maps.size(), false);
  auto rw_private_anon = [&](size_t k) {
    return maps[k].path.empty() && maps[k].read && !maps[k].shared;
  };
  for (size_t i = 0; i < maps.size(); i++) {
    if (maps[i].path != "[stack]") continue;
    stack_part[i] = true;
    for (size_t k = i; k > 0 && maps[k - 1].end == maps[k].start && rw_private_anon(k - 1); k--) stack_part[k - 1] = true;
    for (size_t k = i; k + 1 < maps.size() && maps[k].end == maps[k + 1].start && rw_private_anon(k + 1); k++)
      stack_part[k + 1] = true;
  }
  // Anonymous private piece i follows, through readable private anonymous pieces only, a
  // private mapping of the executable.
  auto continues_exe = [&](size_t i) {
    if (exe.empty()) return false;
    for (size_t k = i; k > 0 && maps[k - 1].end == maps[k].start; k--) {
      const Mapping& p = maps[k - 1];
      if (p.shared) return false;
      if (!p.path.empty()) return p.path == exe;
      if (!p.read) return false;  // a guard page: not the .bss
    }
    return false;
  };
  for (size_t i = 0; i < maps.size(); i++) {
    const Mapping& m = maps[i];
    if (!m.read || !m.write || m.shared) continue;
    int prot = PROT_READ | PROT_WRITE | (m.exec ? PROT_EXEC : 0);
    const Mapping* prev = i > 0 && maps[i - 1].end == m.start ? &maps[i - 1] : nullptr;
    if (!exe.empty() && m.path == exe) {
      out.push_back({m.start, m.end, prot, Area::data});
    } else if (m.path == "[heap]") {
      out.push_back({m.start, m.end, prot, Area::heap});
    } else if (stack_part[i]) {
      if (stack_boundary >= m.end) continue;  // wholly below the boundary: the runtime's frames
      uint64_t s = stack_boundary > m.start ? stack_boundary : m.start;
      out.push_back({s, m.end, prot, Area::stack});
    } else if (m.path == "[stack]") {
      uint64_t s = stack_boundary > m.start && stack_boundary < m.end ? stack_boundary : m.start;
      out.push_back({s, m.end, prot, Area::stack});
    } else if (m.path.empty()) {
      if (m.start >= CAPE_RUNTIME_HEAP_BASE && m.end <= CAPE_RUNTIME_HEAP_BASE + CAPE_RUNTIME_HEAP_SPAN) {
        // libcape's runtimes' heap (libgomp's and ld.so's blocks): each node's own, never tracked.
      } else if (prev && !prev->path.empty() && prev->path[0] == '/' && prev->write && !prev->shared) {
        // Anonymous continuation of a file mapping: that file's .bss.
        if (prev->path == exe) out.push_back({m.start, m.end, prot, Area::bss});
      } else if (continues_exe(i)) {
        // The executable's .bss still, split by the mprotect tracker's read-only pages (its
        // .data or the .bss pages before this piece). Taken for plain anonymous memory, each
        // piece made writable again was a mapping change: a critical section's release
        // carried it, and the node injecting the grant replayed it as an mprotect that
        // opened the page behind the tracker's back (writes under the lock lost).
        out.push_back({m.start, m.end, prot, Area::bss});
      } else if (prev && prev->path.empty() && !prev->read && !prev->write && !prev->exec) {
        // A PROT_NONE guard page right below: a thread stack (glibc), not tracked.
      } else {
        out.push_back({m.start, m.end, prot, Area::anon});
      }
    }
  }
  if (tls == 0) return out;
  uint64_t lo = (tls & ~uint64_t{4095}) - 4096;
  const uint64_t hi = (tls & ~uint64_t{4095}) + 2 * 4096;
  if (tls_low != 0 && tls_low < tls && tls - tls_low < (uint64_t{1} << 20)) lo = tls_low & ~uint64_t{4095};
  std::vector<Area> cut;
  for (const Area& r : out) {
    if (r.end <= lo || r.start >= hi) {
      cut.push_back(r);
      continue;
    }
    if (r.start < lo) cut.push_back({r.start, lo, r.prot, r.kind});
    if (r.end > hi) cut.push_back({hi, r.end, r.prot, r.kind});
  }
  return cut;
}

uint64_t load_base(const std::vector<Mapping>& maps, const std::string& exe) {
  for (const Mapping& m : maps)
    if (m.path == exe) return m.start;
  return 0;
}

IntervalSet spans_of(const std::vector<Area>& areas) {
  std::vector<IntervalSet::Interval> v;
  v.reserve(areas.size());
  for (const Area& r : areas) v.emplace_back(r.start, r.end);
  return IntervalSet::of(std::move(v));
}

std::vector<Area> restrict_areas(const std::vector<Area>& areas, const IntervalSet& cover) {
  std::vector<Area> out;
  for (const Area& r : areas)
    for (auto [s, e] : cover) {
      uint64_t lo = std::max(r.start, s), hi = std::min(r.end, e);
      if (lo >= hi) continue;
      Area x = r;
      x.start = lo;
      x.end = hi;
      out.push_back(x);
    }
  return out;
}

}  // namespace cape::monitor

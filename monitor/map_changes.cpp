#include "monitor/map_changes.h"

#include <sys/mman.h>
#include <sys/syscall.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "monitor/remote_syscall.h"
#include "util/error.h"

namespace cape::monitor {

using ckpt::MapChange;

namespace {

void push_joined(std::vector<MapChange>& out, MapChange x) {
  if (x.start >= x.end) return;
  if (!out.empty() && out.back().end == x.start && out.back().same_state(x))
    out.back().end = x.end;
  else
    out.push_back(x);
}

bool private_anon(const Mapping& m) { return !m.shared && (m.path.empty() || m.path == "[heap]"); }

uint8_t prot_of(const Mapping& m) {
  return static_cast<uint8_t>((m.read ? PROT_READ : 0) | (m.write ? PROT_WRITE : 0) | (m.exec ? PROT_EXEC : 0));
}

// Calls f(lo, hi, mapping or nullptr) for each piece of [s, e): the parts `maps` covers, one
// mapping at a time, and the gaps between them.
template <class F>
void pieces(const std::vector<Mapping>& maps, uint64_t s, uint64_t e, F&& f) {
  uint64_t cur = s;
  for (const Mapping& m : maps) {
    if (m.end <= cur) continue;
    if (m.start >= e) break;
    if (m.start > cur) f(cur, m.start, static_cast<const Mapping*>(nullptr));
    uint64_t hi = std::min(e, m.end);
    f(std::max(cur, m.start), hi, &m);
    cur = hi;
  }
  if (cur < e) f(cur, e, static_cast<const Mapping*>(nullptr));
}

std::string range(uint64_t s, uint64_t e) { return ckpt::hex_address(s) + "-" + ckpt::hex_address(e); }

std::string what_is(const Mapping& m) {
  if (m.shared) return "a shared mapping" + (m.path.empty() ? std::string() : " of " + m.path);
  if (m.path.empty()) return "anonymous memory";
  return m.path;
}

}  // namespace

std::vector<MapChange> anon_state(const std::vector<Area>& tracked) {
  std::vector<MapChange> out;
  out.reserve(tracked.size());
  for (const Area& r : tracked) {
    if (r.kind != Area::heap && r.kind != Area::anon) continue;
    push_joined(out, {r.start, r.end, r.kind == Area::heap ? MapChange::What::heap : MapChange::What::anon,
                      static_cast<uint8_t>(r.prot & 7)});
  }
  return out;
}

std::vector<MapChange> map_changes(const std::vector<MapChange>& before, const std::vector<MapChange>& after,
                                   const std::vector<Mapping>& maps_now) {
  std::vector<MapChange> all;
  // Appeared or changed: the parts of `after` that `before` does not hold in the same state.
  for (const MapChange& a : after) {
    uint64_t cur = a.start;
    for (const MapChange& b : before) {
      if (b.end <= cur || !b.same_state(a)) continue;
      if (b.start >= a.end) break;
      if (b.start > cur) all.push_back({cur, b.start, a.what, a.prot});
      cur = std::max(cur, std::min(a.end, b.end));
    }
    if (cur < a.end) all.push_back({cur, a.end, a.what, a.prot});
  }
  // Left: the parts of `before` that `after` does not hold at all and that are no longer
  // private anonymous memory. (Still mapped but not writable: the mprotect tracker's
  // protection, or the program's own, which is not replayed: docs/monitor.md.)
  for (const MapChange& b : before) {
    uint64_t cur = b.start;
    auto gone = [&](uint64_t s, uint64_t e) {
      pieces(maps_now, s, e, [&](uint64_t lo, uint64_t hi, const Mapping* m) {
        if (!m || !private_anon(*m)) all.push_back({lo, hi, MapChange::What::unmapped, 0});
      });
    };
    for (const MapChange& a : after) {
      if (a.end <= cur) continue;
      if (a.start >= b.end) break;
      if (a.start > cur) gone(cur, a.start);
      cur = std::max(cur, std::min(b.end, a.end));
    }
    if (cur < b.end) gone(cur, b.end);
  }
  std::sort(all.begin(), all.end(), [](const MapChange& x, const MapChange& y) { return x.start < y.start; });
  std::vector<MapChange> out;
  for (const MapChange& x : all) push_joined(out, x);
  return out;
}

std::vector<MapChange> apply_changes(const std::vector<MapChange>& state, const std::vector<MapChange>& changes) {
  std::vector<MapChange> out;
  out.reserve(state.size() + changes.size());
  for (const MapChange& x : ckpt::overlay_mappings(state, changes))
    if (x.what != MapChange::What::unmapped) out.push_back(x);
  return out;
}

std::string describe(const MapOp& op) {
  switch (op.kind) {
    case MapOp::mprotect: return "mprotect(" + range(op.start, op.end) + ", " + ckpt::prot_string(static_cast<uint8_t>(op.prot)) + ")";
    case MapOp::mmap: return "mmap(" + range(op.start, op.end) + ", " + ckpt::prot_string(static_cast<uint8_t>(op.prot)) + ")";
    case MapOp::munmap: return "munmap(" + range(op.start, op.end) + ")";
    case MapOp::brk: return "brk(" + ckpt::hex_address(op.end) + ")";
  }
  return "?";
}

std::vector<MapOp> plan_replay(const std::vector<MapChange>& changes, const std::vector<Mapping>& local,
                               const std::string& what) {
  std::vector<MapOp> ops;
  auto add = [&](MapOp op) {
    if (!ops.empty() && ops.back().kind == op.kind && ops.back().prot == op.prot && ops.back().end == op.start &&
        op.kind != MapOp::brk)
      ops.back().end = op.end;
    else
      ops.push_back(op);
  };
  const Mapping* heap = nullptr;
  for (const Mapping& m : local)
    if (m.path == "[heap]") heap = &m;
  auto refuse = [&](const MapChange& c, uint64_t lo, uint64_t hi, const std::string& here) {
    throw UserError(what + ": another node made " + range(c.start, c.end) + " " + ckpt::to_string(c.what) + " " +
                    ckpt::prot_string(c.prot) + ", but " + range(lo, hi) + " is " + here +
                    " on this node: the nodes' memory maps differ (docs/monitor.md, \"Mapping changes\")");
  };
  for (const MapChange& c : changes) {
    pieces(local, c.start, c.end, [&](uint64_t lo, uint64_t hi, const Mapping* m) {
      if (m && !private_anon(*m)) refuse(c, lo, hi, what_is(*m));
      if (c.what == MapChange::What::unmapped) {
        if (!m) return;
        if (m == heap && hi == m->end && lo > m->start)
          add({MapOp::brk, lo, lo, 0});  // the heap's top went: move the break down
        else
          add({MapOp::munmap, lo, hi, 0});
        return;
      }
      if (m) {
        if (prot_of(*m) != c.prot) add({MapOp::mprotect, lo, hi, c.prot});
        return;
      }
      // Nothing here yet: the brk heap grows from its end; anything else is mapped in place.
      if (c.what == MapChange::What::heap) {
        if (heap ? lo != heap->end : false) refuse(c, lo, hi, "not at the end of this node's brk heap");
        if (c.prot != (PROT_READ | PROT_WRITE)) refuse(c, lo, hi, "a brk heap that can only grow read-write");
        add({MapOp::brk, lo, hi, 0});
        return;
      }
      add({MapOp::mmap, lo, hi, c.prot});
    });
  }
  return ops;
}

void run_replay(AutoRemoteSyscalls& remote, const std::vector<MapOp>& ops, const std::string& what) {
  for (const MapOp& op : ops) {
    long len = static_cast<long>(op.end - op.start);
    long r = 0;
    bool ok = false;
    switch (op.kind) {
      case MapOp::mprotect:
        r = remote.syscall(SYS_mprotect, static_cast<long>(op.start), len, op.prot);
        ok = r == 0;
        break;
      case MapOp::mmap:
        r = remote.syscall(SYS_mmap, static_cast<long>(op.start), len, op.prot,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
        ok = r == static_cast<long>(op.start);
        if (!ok && r >= 0) remote.syscall(SYS_munmap, r, len);  // a kernel without NOREPLACE put it elsewhere
        break;
      case MapOp::munmap:
        r = remote.syscall(SYS_munmap, static_cast<long>(op.start), len);
        ok = r == 0;
        break;
      case MapOp::brk:
        r = remote.syscall(SYS_brk, static_cast<long>(op.end));
        ok = static_cast<uint64_t>(r) >= op.end && (op.start == op.end ? static_cast<uint64_t>(r) == op.end : true);
        break;
    }
    if (!ok)
      throw UserError(what + ": cannot replay another node's mapping change here: " + describe(op) + " returned " +
                      (r < 0 ? std::string(std::strerror(static_cast<int>(-r))) : ckpt::hex_address(static_cast<uint64_t>(r))));
  }
}

#ifndef MADV_DONTNEED_LOCKED
#define MADV_DONTNEED_LOCKED 24
#endif
#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP 4
#endif

std::vector<std::pair<uint64_t, uint64_t>> dropped_by(long nr, const uint64_t (&a)[6],
                                                      const std::function<uint64_t()>& brk_end) {
  constexpr uint64_t page = 4096;
  auto up = [](uint64_t x) { return (x + page - 1) & ~(page - 1); };
  std::vector<std::pair<uint64_t, uint64_t>> out;
  auto add = [&](uint64_t s, uint64_t len) {
    if (s % page == 0 && len > 0 && s + up(len) > s) out.emplace_back(s, s + up(len));
  };
  switch (nr) {
    case SYS_munmap: add(a[0], a[1]); break;
    case SYS_mmap:
      if ((a[3] & MAP_FIXED) && !(a[3] & MAP_FIXED_NOREPLACE)) add(a[0], a[1]);
      break;
    case SYS_mremap:
      if (a[2] == 0) break;  // refused
      if (a[3] & MREMAP_FIXED) add(a[4], a[2]);
      add(a[0], a[1]);  // (old_len 0: a shared mapping duplicated, nothing dropped)
      break;
    case SYS_madvise:
      if (a[2] == MADV_DONTNEED || a[2] == MADV_FREE || a[2] == MADV_REMOVE || a[2] == MADV_DONTNEED_LOCKED)
        add(a[0], a[1]);
      break;
    case SYS_brk:
      if (a[0]) {
        uint64_t end = brk_end();
        if (end > up(a[0])) add(up(a[0]), end - up(a[0]));
      }
      break;
    default: break;
  }
  return out;
}

uint64_t program_brk_end(pid_t pid) {
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  std::string line;
  uint64_t end = 0;
  while (std::getline(maps, line))
    if (line.size() > 6 && line.compare(line.size() - 6, 6, "[heap]") == 0) {
      size_t dash = line.find('-'), sp = line.find(' ');
      if (dash == std::string::npos || sp == std::string::npos || sp < dash) continue;
      end = std::max<uint64_t>(end, std::stoull(line.substr(dash + 1, sp - dash - 1), nullptr, 16));
    }
  return end;
}

}  // namespace cape::monitor

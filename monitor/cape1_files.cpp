#include "monitor/cape1_files.h"

#include <elf.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <thread>

#include "ckpt/format.h"
#include "ckpt/ops.h"
#include "ckpt/process_image.h"
#include "injector/injector.h"
#include "monitor/complete.h"
#include "monitor/dirty_tracker.h"  // kScratchAddress
#include "monitor/exchange.h"
#include "monitor/restart.h"
#include "monitor/memory_map.h"
#include "monitor/remote_syscall.h"
#include "protocol.h"  // CAPE_HEAP_*
#include "util/error.h"
#include "util/log.h"
#include "util/wait_status.h"

namespace cape::monitor {
namespace {

ckpt::Checkpoint read_complete(const std::string& path, const char* what) {
  ckpt::Checkpoint c = ckpt::read_file(path);  // ckpt::Error names the file
  if (c.process.empty())
    throw UserError(std::string(what) + ": " + path + " is not a checkpoint of a whole process (create()'s or cape checkpoint's)");
  return c;
}

constexpr const char* kOriginal = "cape1:original";  // the mailbox of restart_on's checkpoints

// The mailbox of a file sent between nodes: its name without the directory. A slave node keeps
// its own files in a directory of its own (translator/rt/cape1_cc.c), so that nodes sharing
// one file system never write each other's files.
std::string mailbox(const std::string& file) {
  size_t slash = file.rfind('/');
  return "cape1:" + (slash == std::string::npos ? file : file.substr(slash + 1));
}

bool switched_off(const char* name) {
  const char* e = std::getenv(name);
  return e && std::string(e) == "0";
}

// CAPE1_MAP_CHANGES=0: merge() carries no protection change (the old way: memory a part made
// accessible is then refused by name when another part's merge meets its bytes).
bool carry_map_changes() {
  static const bool on = !switched_off("CAPE1_MAP_CHANGES");
  return on;
}

using PM = ckpt::ProcessMapping;
bool anon_private(const PM& m) { return m.what == PM::What::anon && !m.shared; }

std::string prot_name(int prot) {
  std::string s;
  s += prot & 1 ? 'r' : '-';
  s += prot & 2 ? 'w' : '-';
  s += prot & 4 ? 'x' : '-';
  return s;
}

std::string range_name(uint64_t s, uint64_t e) { return ckpt::hex_address(s) + "-" + ckpt::hex_address(e); }

// A protection change of anonymous memory one side made since the base: [start, end) was
// `was` in the base and is `now`.
struct ProtChange {
  uint64_t start, end;
  uint8_t was, now;
};

std::vector<ProtChange> prot_changes(const std::vector<PM>& base, const std::vector<PM>& side) {
  std::vector<ProtChange> out;
  for (const PM& m : side) {
    if (!anon_private(m)) continue;
    for (const PM& b : base) {
      if (!anon_private(b) || b.end <= m.start || b.start >= m.end || b.prot == m.prot) continue;
      out.push_back({std::max(b.start, m.start), std::min(b.end, m.end), b.prot, m.prot});
    }
  }
  std::sort(out.begin(), out.end(), [](const ProtChange& a, const ProtChange& b) { return a.start < b.start; });
  return out;
}

// The mappings `into` with the protection changes `other` made since `base` (three-way, as the
// memory: a range `into` still has as in the base takes other's protection; one it changed the
// same way is no conflict; one it changed otherwise is refused). Why: memory allocated inside a
// region by one part (the cape heap grows by mprotect of its reservation) must be accessible in
// the others, which see its bytes and the allocator's header saying it is committed.
std::vector<PM> merge_protections(const std::vector<PM>& into, const std::vector<PM>& base,
                                  const std::vector<PM>& other, const std::string& what) {
  std::vector<ProtChange> changes = prot_changes(base, other);
  if (changes.empty()) return into;
  std::vector<PM> out;
  std::vector<uint64_t> covered(changes.size(), 0);
  for (const PM& m : into) {
    if (!anon_private(m)) {
      out.push_back(m);
      continue;
    }
    // Cut m at every change boundary inside it; each piece is in one change or in none.
    std::vector<uint64_t> cuts{m.start, m.end};
    for (const ProtChange& c : changes) {
      if (c.start > m.start && c.start < m.end) cuts.push_back(c.start);
      if (c.end > m.start && c.end < m.end) cuts.push_back(c.end);
    }
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    for (size_t i = 0; i + 1 < cuts.size(); ++i) {
      PM piece = m;
      piece.start = cuts[i];
      piece.end = cuts[i + 1];
      piece.offset = m.offset + (piece.start - m.start);
      for (size_t k = 0; k < changes.size(); ++k) {
        const ProtChange& c = changes[k];
        if (piece.start < c.start || piece.end > c.end) continue;
        covered[k] += piece.end - piece.start;
        if (piece.prot == c.was)
          piece.prot = c.now;
        else if (piece.prot != c.now)
          throw UserError(what + ": two parts of the region changed the protection of " +
                          range_name(piece.start, piece.end) + " differently (" + prot_name(c.was) + " -> " +
                          prot_name(piece.prot) + " and " + prot_name(c.now) + ")");
      }
      out.push_back(piece);
    }
  }
  for (size_t k = 0; k < changes.size(); ++k)
    if (covered[k] != changes[k].end - changes[k].start)
      throw UserError(what + ": a part of the region made " + range_name(changes[k].start, changes[k].end) + " " +
                      prot_name(changes[k].now) + ", which another part has not mapped as anonymous memory any more "
                      "(munmap or mmap inside the region: CAPE-1's merge carries protection changes only)");
  return out;
}

// The mapping of `maps` (sorted) that holds `address`, or nullptr.
const PM* mapping_at(const std::vector<PM>& maps, uint64_t address) {
  auto it = std::upper_bound(maps.begin(), maps.end(), address, [](uint64_t a, const PM& m) { return a < m.start; });
  if (it == maps.begin()) return nullptr;
  --it;
  return address < it->end ? &*it : nullptr;
}

// Another part's bytes the merge keeps must land where the target's process can use them:
// silently written into memory it cannot access (or has not mapped), they become a SIGSEGV
// far from the cause (docs/cape1.md, "Memory allocated inside a region").
void check_landing(const ckpt::Checkpoint& kept, const std::vector<PM>& target_maps, const std::vector<PM>& source_maps,
                   const std::string& what) {
  for (const ckpt::Run& r : kept.runs) {
    for (uint64_t a = r.address; a < r.end();) {
      const PM* t = mapping_at(target_maps, a);
      const PM* s = mapping_at(source_maps, a);
      if (!t)
        throw UserError(what + ": another part of the region wrote " + ckpt::hex_address(a) +
                        ", which this part has not mapped (mmap inside the region: CAPE-1's merge does not carry "
                        "new mappings)");
      if (t->prot == 0 && s && s->prot != 0)
        throw UserError(what + ": another part of the region wrote " + ckpt::hex_address(a) + " in " +
                        range_name(t->start, t->end) + ", which it made " + prot_name(s->prot) +
                        " and this part has " + prot_name(t->prot) +
                        " (memory allocated inside the region: the heap grew in one part; CAPE1_MAP_CHANGES=0 "
                        "leaves such changes out)");
      a = std::min(r.end(), t->end);
    }
  }
}

// Memory `older` holds and `newer` does not, where newer's process has readable private
// anonymous memory, reads as zeros there now (a complete checkpoint stores populated pages
// only: the cape heap gave its top back, by mapping it afresh, and grew again). ckpt::diff
// leaves such memory out (it may be unmapped); the delta must write the zeros, or the other
// parts keep the old bytes (calloc'd memory that is not zero: found by bigheap.c).
// CAPE1_DROPPED_ZEROS=0: left out (the old way).
ckpt::Checkpoint with_dropped_zeros(ckpt::Checkpoint d, const ckpt::Checkpoint& older, const ckpt::Checkpoint& newer,
                                   const std::vector<PM>& maps) {
  static const bool on = !switched_off("CAPE1_DROPPED_ZEROS");
  if (!on) return d;
  std::vector<std::pair<uint64_t, uint64_t>> held;  // what newer stores, in order
  for (const ckpt::Run& r : newer.runs)
    newer.for_each_piece(r, [&](uint64_t a, std::span<const uint8_t> b) {
      if (!held.empty() && held.back().second == a)
        held.back().second = a + b.size();
      else
        held.emplace_back(a, a + b.size());
    });
  static const uint8_t zeros[ckpt::Differ::kBlock] = {};
  ckpt::Checkpoint z = d.header();
  {
    ckpt::Differ zd(z, d.timestamp);
    size_t h = 0;
    auto compare = [&](uint64_t a, std::span<const uint8_t> old) {  // old's piece at a: no newer byte there
      for (const PM& m : maps) {
        if (!anon_private(m) || !(m.prot & 1) || m.end <= a || m.start >= a + old.size()) continue;
        uint64_t s = std::max(a, m.start), e = std::min(a + old.size(), m.end);
        while (s < e) {  // (in pieces within one 4 KiB block each, as Differ cuts them)
          uint64_t n = std::min<uint64_t>(e - s, ckpt::Differ::kBlock - s % ckpt::Differ::kBlock);
          zd.add(s, old.subspan(s - a, n), {zeros, n});
          s += n;
        }
      }
    };
    for (const ckpt::Run& r : older.runs)
      older.for_each_piece(r, [&](uint64_t a, std::span<const uint8_t> b) {
        uint64_t pos = a, end = a + b.size();
        while (h < held.size() && held[h].second <= pos) ++h;
        for (size_t k = h; pos < end && k < held.size() && held[k].first < end; ++k) {
          if (held[k].first > pos) compare(pos, b.subspan(pos - a, held[k].first - pos));
          pos = std::max(pos, held[k].second);
        }
        if (pos < end) compare(pos, b.subspan(pos - a, end - pos));
      });
    zd.finish();
  }
  if (z.runs.empty()) return d;
  ckpt::Checkpoint out = d.header();
  size_t i = 0, j = 0;
  while (i < d.runs.size() || j < z.runs.size()) {
    if (j == z.runs.size() || (i < d.runs.size() && d.runs[i].address < z.runs[j].address))
      out.append_from(d, d.runs[i++]);
    else
      out.append_from(z, z.runs[j++]);
  }
  CAPE_LOG_AT(debug, "monitor") << "diff: " << z.memory_bytes() << " bytes of memory the newer checkpoint no longer holds, "
                                << "written as zeros";
  return out;
}

// The process's anonymous private memory gets the protection `recorded` says (merge() put the
// other parts' changes there), before the checkpoint's bytes are written: memory that becomes
// inaccessible is mapped afresh (its pages dropped, as the cape heap gives back its top),
// memory that becomes accessible keeps what it holds.
void set_protections(pid_t pid, pid_t tid, uint64_t gadget, const std::vector<PM>& recorded, const std::string& file) {
  std::vector<ProtChange> todo;
  for (const Mapping& l : read_maps(pid)) {
    if (l.shared || (!l.path.empty() && l.path.rfind("[anon:", 0) != 0)) continue;
    uint8_t live = static_cast<uint8_t>((l.read ? 1 : 0) | (l.write ? 2 : 0) | (l.exec ? 4 : 0));
    for (const PM& m : recorded) {
      if (!anon_private(m) || m.end <= l.start || m.start >= l.end || m.prot == live) continue;
      todo.push_back({std::max(l.start, m.start), std::min(l.end, m.end), live, m.prot});
    }
  }
  if (todo.empty()) return;
  if (!gadget) throw UserError("restart(" + file + "): the protection of its memory changed, and libcape's gadget is unknown");
  AutoRemoteSyscalls remote(pid, tid, gadget);
  for (const ProtChange& c : todo) {
    long len = static_cast<long>(c.end - c.start);
    long r = c.now == 0 ? remote.syscall(SYS_mmap, static_cast<long>(c.start), len, PROT_NONE,
                                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0)
                        : remote.syscall(SYS_mprotect, static_cast<long>(c.start), len, c.now);
    if (r < 0 || (c.now == 0 && static_cast<uint64_t>(r) != c.start))
      throw UserError("restart(" + file + "): making " + range_name(c.start, c.end) + " " + prot_name(c.now) +
                      " failed: " + std::strerror(r < 0 ? static_cast<int>(-r) : EINVAL));
    CAPE_LOG_AT(debug, "monitor") << "restart(" << file << "): " << range_name(c.start, c.end) << " "
                                  << prot_name(c.was) << " -> " << prot_name(c.now);
  }
  remote.restore();
}

}  // namespace

bool Cape1Files::in_region() const {
  static const bool on = !switched_off("CAPE1_REGION_OUTPUT");
  return on && in_region_;
}

bool Cape1Files::distributed() const { return ex_ && ex_->size() > 1; }

std::optional<user_regs_struct> Cape1Files::serve(pid_t pid, pid_t tid) {
  if (!distributed()) throw UserError("cape1_serve(): only a slave node of `cape run` serves the master's checkpoints");
  ckpt::Checkpoint c = ex_->receive(kOriginal);
  CAPE_LOG_AT(info, "monitor") << "serve: " << (c.process.empty() ? std::string("the end") : std::to_string(c.memory_bytes()) + " bytes");
  in_region_ = !c.process.empty();  // a part of a region from here (to its next serve: the slave prints nothing else)
  if (c.process.empty()) return std::nullopt;  // the end
  user_regs_struct r = restart_in_place(pid, tid, c, {kScratchAddress, kScratchAddress + (uint64_t{1} << 40)});
  original_ = std::move(c);
  return r;
}

void Cape1Files::copy(const std::string& from, const std::string& to) {
  // A slave node copies the checkpoint the master sent when it is not a file here.
  struct stat st;
  if (distributed() && original_ && ::stat(from.c_str(), &st) != 0) return ckpt::write_file(*original_, to);
  ckpt::Checkpoint c = ckpt::read_file(from);
  ckpt::write_file(c, to);
}

void Cape1Files::send(const std::string& file, int node) {
  sent_ = true;
  if (!distributed()) return;  // alone: the parts share this host's files
  if (node <= 0 || node >= ex_->size())
    throw UserError("cape1_send(" + file + ", " + std::to_string(node) + "): the job has nodes 1 to " +
                    std::to_string(ex_->size() - 1));
  ckpt::Checkpoint c = ckpt::read_file(file);
  c.name = mailbox(file);  // the node's wait_for(file) takes it
  ex_->send(c, node);
}

void Cape1Files::diff(const std::string& original, const std::string& after, const std::string& delta) {
  auto t0 = std::chrono::steady_clock::now();
  // A slave node diffs against the checkpoint the master sent (its file is on the master).
  ckpt::Checkpoint o;
  struct stat st;
  if (distributed() && original_ && ::stat(original.c_str(), &st) != 0)
    o = *original_;
  else
    o = read_complete(original, "diff");
  ckpt::Checkpoint a = read_complete(after, "diff");
  if (o.kind != ckpt::Kind::complete || a.kind != ckpt::Kind::complete)
    throw UserError("diff(" + original + ", " + after + "): both must be complete checkpoints");
  ckpt::Checkpoint d = with_dropped_zeros(ckpt::diff(o, a), o, a, ckpt::decode_process(a.process).mappings);
  for (ckpt::Run& r : d.runs) r.timestamp = 1;  // later than the original's bytes (timestamp 0)
  d.process = a.process;
  d.registers = a.registers;
  d.name = "diff:" + original;  // merge() reads the base of its three-way rule from it
  last_original_ = original;
  if (distributed() && ex_->rank() != 0) {
    // A barrier of a region merges it into this part's own target too (docs/cape1.md).
    ckpt::write_file(d, delta);
    d.name = mailbox(delta);  // to the master, whose wait_for(delta) takes it
    ex_->send(d, 0);
  } else {
    ckpt::write_file(d, delta);
  }
  CAPE_LOG_AT(info, "monitor") << "diff(" << original << ", " << after << ") -> " << delta << ": "
                               << d.memory_bytes() << " bytes in "
                               << std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count()
                               << " ms";
}

void Cape1Files::merge(const std::string& target, const std::string& delta) {
  ckpt::Checkpoint t = read_complete(target, "merge");
  ckpt::Checkpoint d = read_complete(delta, "merge");
  if (t.kind != ckpt::Kind::complete || d.kind != ckpt::Kind::delta)
    throw UserError("merge(" + target + ", " + delta + "): a complete checkpoint and a delta (diff()'s) are needed");
  // A delta of another process (a section restarted from `original`) brings its changes
  // of shared memory only: its stack and the pages of its thread block (libcape's and libc's
  // per-process state, as CAPE-2 never tracks them: docs/monitor.md) are its own, and the
  // target keeps its registers and process section. The target's own process (the master's
  // delta) brings everything.
  const std::string base_path = d.name;
  ckpt::ProcessImage tp = ckpt::decode_process(t.process), dp = ckpt::decode_process(d.process);
  bool same = tp.pid == dp.pid;
  std::optional<ckpt::Checkpoint> base;
  if (base_path.rfind("diff:", 0) == 0) {
    try {
      base = ckpt::read_file(base_path.substr(5));
    } catch (const ckpt::Error&) {
      // (no base: every differing byte is a conflict)
    }
  }
  const std::string what = "merge(" + target + ", " + delta + ")";
  // The protection changes of anonymous memory the delta's process made since the base go
  // into the target's memory map (restart() applies it). The target's own process's delta:
  // its map, with what the target took from the others' deltas before it.
  std::vector<PM> maps = same ? dp.mappings : tp.mappings;
  if (carry_map_changes() && base && !base->process.empty()) {
    const std::vector<PM> base_maps = ckpt::decode_process(base->process).mappings;
    maps = same ? merge_protections(dp.mappings, base_maps, tp.mappings, what)
                : merge_protections(tp.mappings, base_maps, dp.mappings, what);
  }
  if (!same) {
    std::vector<std::pair<uint64_t, uint64_t>> own;
    // Its stack below the region's frames (recorded by a translated region's create(),
    // cape_mark_frame): the frames above are the region's function's and its callers', where
    // shared locals live, which travel as in CAPE-2 (docs/cape1.md, "Regions").
    for (const ckpt::ProcessMapping& pm : dp.mappings)
      if (pm.what == ckpt::ProcessMapping::What::stack) {
        bool marked = dp.frame_boundary > pm.start && dp.frame_boundary <= pm.end;
        own.emplace_back(pm.start, marked ? dp.frame_boundary : pm.end);
      }
    if (dp.thread_block_high) own.emplace_back(dp.thread_block_low, dp.thread_block_high);
    ckpt::Checkpoint kept;
    kept.kind = d.kind;
    kept.timestamp = d.timestamp;
    for (const ckpt::Run& r : d.runs) {
      // The run's pieces outside every own range.
      std::vector<std::pair<uint64_t, uint64_t>> pieces{{r.address, r.end()}};
      for (auto [s, e] : own) {
        std::vector<std::pair<uint64_t, uint64_t>> next;
        for (auto [ps, pe] : pieces) {
          if (pe <= s || ps >= e) {
            next.emplace_back(ps, pe);
            continue;
          }
          if (ps < s) next.emplace_back(ps, s);
          if (pe > e) next.emplace_back(e, pe);
        }
        pieces = std::move(next);
      }
      std::sort(pieces.begin(), pieces.end());
      for (auto [ps, pe] : pieces) kept.append_from(d, r, ps, pe);
    }
    check_landing(kept, maps, dp.mappings, what);
    kept.registers = t.registers;
    kept.process = t.process;
    d = std::move(kept);
  }
  // Three-way (docs/dickpt-format.md, "Merge"): a byte that one side still holds as in the
  // original is no conflict, the other side wrote it; so word-granular runs of two parts
  // that wrote neighbouring bytes merge exactly.
  ckpt::MergeOptions mo;
  if (base)
    mo.read_base = [&](uint64_t address, std::span<uint8_t> out) {
      for (size_t i = 0; i < out.size(); ++i) {
        const uint8_t* b = base->at(address + i);
        out[i] = b ? *b : 0;
      }
    };
  ckpt::MergeResult m = ckpt::merge(t, d, mo);
  for (const ckpt::Conflict& c : m.conflicts) {
    // The master's own delta, merged last, wins over what the sections left in its frames;
    // two parts' values of one stack word (a region's frames: a dead local, a spill slot)
    // keep the later delta's, as CAPE-2's merge keeps one node's (docs/cape1.md).
    bool in_stack = false;
    for (const ckpt::ProcessMapping& pm : dp.mappings)
      in_stack |= pm.what == ckpt::ProcessMapping::What::stack && c.address >= pm.start && c.address + c.length <= pm.end;
    if (!in_stack) {
      // Every CAPE-1 part allocates from the cape heap's arena 0 (no windows, no node arenas).
      if (c.address >= CAPE_HEAP_BASE && c.address < CAPE_HEAP_BASE + CAPE_HEAP_ARENA0_SPAN)
        throw UserError("merge(" + target + ", " + delta + "): " + std::to_string(c.length) + " bytes at " +
                        ckpt::hex_address(c.address) +
                        " in the heap were written differently by two parts of the region: under CAPE-1 two "
                        "parts that allocate or free memory between the same barriers change the allocator's "
                        "state differently (allocate and free in a `single` or `master`, or outside the "
                        "region), or the parts wrote one heap word differently (a Bernstein violation)");
      throw UserError("merge(" + target + ", " + delta + "): " + std::to_string(c.length) + " bytes at " +
                      ckpt::hex_address(c.address) +
                      " were written differently by two parts of the region (a Bernstein violation, a FILE "
                      "two parts wrote, or neighbouring bytes of one word, which CAPE-1's merge cannot tell "
                      "apart)");
    }
  }
  m.merged.kind = ckpt::Kind::complete;
  m.merged.name = t.name;
  m.merged.registers = same ? d.registers : t.registers;
  ckpt::ProcessImage mp = same ? std::move(dp) : std::move(tp);
  mp.mappings = std::move(maps);
  m.merged.process = ckpt::encode_process(mp);
  ckpt::write_file(m.merged, target);
}

void Cape1Files::wait_for(const std::string& file) {
  if (distributed()) {
    struct stat st;
    if (::stat(file.c_str(), &st) == 0) return;
    ckpt::Checkpoint c = ex_->receive(mailbox(file));
    // A delta made against the original this node diffed last (Fig. 2: the master's own
    // diff comes before its wait_for): the base of merge()'s three-way rule.
    c.name = "diff:" + last_original_;
    return ckpt::write_file(c, file);
  }
  for (;;) {
    struct stat st;
    if (::stat(file.c_str(), &st) == 0) return;
    bool alive = false;
    for (auto it = started_.begin(); it != started_.end();) {
      int status = 0;
      pid_t r = ::waitpid(*it, &status, WNOHANG);
      if (r == 0) {
        alive = true;
        ++it;
        continue;
      }
      if (r == *it && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
        // The others may be waiting for this process's files, and the master for theirs:
        // the job ends here (it used to wait for ever once one part had failed).
        pid_t failed = *it;
        started_.erase(it);
        throw UserError("wait_for(" + file + "): the process restarted as a part of the region (pid " +
                        std::to_string(failed) + ") " + WaitStatus{status}.describe() + " (its message above)");
      }
      it = started_.erase(it);
    }
    // A part restarted beside the master's monitor (rank > 0) waits for the master's files.
    if (!alive && rank_ == 0 && ::stat(file.c_str(), &st) != 0)
      throw UserError("wait_for(" + file + "): it does not exist and no process restarted by restart_on() is left to make it");
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
}

void Cape1Files::restart_on(const std::string& file, int node) {
  if (distributed()) {
    if (node <= 0 || node >= ex_->size())
      throw UserError("restart_on(" + file + ", " + std::to_string(node) + "): the job has nodes 1 to " +
                      std::to_string(ex_->size() - 1) + " to restart on");
    ckpt::Checkpoint c;
    if (!file.empty()) c = ckpt::read_file(file);
    else c.kind = ckpt::Kind::delta;  // no process: the end
    c.name = kOriginal;
    CAPE_LOG_AT(info, "monitor") << "restart_on(" << file << ", " << node << "): " << c.memory_bytes()
                                 << " bytes sent";
    return ex_->send(c, node);
  }
  if (file.empty()) return;  // the end: nothing to tell a local process
  std::string cape(4096, '\0');
  ssize_t n = ::readlink("/proc/self/exe", cape.data(), cape.size());
  if (n <= 0) fail_errno("readlink /proc/self/exe");
  cape.resize(static_cast<size_t>(n));
  std::string rank = std::to_string(node);
  pid_t pid = ::fork();
  if (pid < 0) fail_errno("fork");
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    const char* argv[] = {cape.c_str(), "restart", "--rank", rank.c_str(), file.c_str(), nullptr};
    ::execv(argv[0], const_cast<char**>(argv));
    ::_exit(127);
  }
  started_.push_back(pid);
}

user_regs_struct Cape1Files::restart(pid_t pid, pid_t tid, uint64_t gadget, const std::string& file) {
  ckpt::Checkpoint t = read_complete(file, "restart");
  ckpt::ProcessImage p = ckpt::decode_process(t.process);
  std::vector<uint8_t> id = read_build_id("/proc/" + std::to_string(pid) + "/exe");
  if (id != p.build_id)
    throw UserError("restart(" + file + "): made from another executable (build id " + hex(p.build_id) + ", this one " +
                    hex(id) + ")");
  if (!t.registers || t.registers->bytes.size() != sizeof(user_regs_struct))
    throw UserError("restart(" + file + "): no register set");
  set_protections(pid, tid, gadget, p.mappings, file);
  std::vector<injector::Range> allowed;
  for (const Mapping& m : read_maps(pid)) allowed.push_back({m.start, m.end});
  injector::check_inside(t, allowed, "restart(\"" + file + "\") (memory this process has not mapped: a part of the "
                                                            "region allocated it elsewhere)");
  injector::write_checkpoint(pid, t);
  if (!p.xstate.empty() && p.xstate.size() != sizeof(user_fpregs_struct)) {
    iovec iov{p.xstate.data(), p.xstate.size()};
    if (::ptrace(PTRACE_SETREGSET, tid, reinterpret_cast<void*>(NT_X86_XSTATE), &iov) != 0) fail_errno("PTRACE_SETREGSET");
  }
  user_regs_struct r;
  std::memcpy(&r, t.registers->bytes.data(), sizeof r);
  if (rank_ == 0 && !sent_) in_region_ = false;  // the master's join: its sequential part goes on
  return r;
}

}  // namespace cape::monitor

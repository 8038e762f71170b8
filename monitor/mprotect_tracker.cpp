// `mprotect`, the faithful CAPE-2 tracker (003_45ed75503520c8f4.txt Sect. III.A and V):
// start() write-protects the tracked set with syscalls run inside the tracee; the first
// write to a page raises SIGSEGV, seen here as a ptrace signal-stop; the monitor copies the
// page, makes it writable again and resumes the thread without the signal.
//
// One ptrace stop per fault (docs/monitor.md has the numbers): instead of a second stop for
// a remote mprotect, the thread is resumed at libcape's resume stub (runtime/src/protocol.h)
// with rax/rdi/rsi/rdx = mprotect(page, len, prot) and rsp = a frame holding the registers
// it had at the fault. The stub runs the syscall, stores its result below the frame, pops
// the registers and `iretq`s back to the faulting instruction, which now succeeds. The
// frames live in a small MAP_SHARED memfd mapping (the "scratch"), mapped at a fixed
// address in the tracee (so the program's own mappings land where they would without it;
// shared mappings are never tracked) and in the monitor, which fills frames with plain
// stores. Without the stub (an older libcape) or the scratch, each fault costs two stops.
//
// Neighbours: when a thread faults on the page right after the run it had unprotected
// last, or a few pages after it (up to mprotect_ahead / 4: the pages between are
// taken too, which is cheaper than splitting a VMA per page), the next pages of the same
// area are copied and unprotected with it, twice as many each time up to
// TrackerOptions::mprotect_ahead (default 16; 1 = never). Their originals are copied first, so a page
// that is then not written is only reported unchanged.
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

#include "monitor/interval_set.h"
#include "monitor/remote_syscall.h"
#include "monitor/trackers.h"
#include "protocol.h"
#include "util/error.h"
#include "util/log.h"

namespace cape::monitor {
namespace {

constexpr uint64_t kSlots = 256, kSlotBytes = 16384;  // room below a frame for a signal frame
// After the frames: the syscall list (mprotect_all), kListEntries of 5 words and the end.
constexpr uint64_t kListOffset = kSlots * kSlotBytes, kListEntries = 1023;
constexpr uint64_t kScratchBytes = kListOffset + (kListEntries + 1) * 40;
constexpr uint32_t kBlockPages = 1024;  // arena block: 4 MiB
constexpr uint64_t kStubBytes = 16;     // the resume stub: syscall ... iretq (cape.c)
constexpr size_t kMaxHotPages = 64;     // pages start() keeps writable (MprotectTracker::written_)

// The stub's view: status, then what it pops (protocol.h).
struct Frame {
  uint64_t status;  // 1 = syscall not run yet, else its result
  uint64_t rax, rcx, r11, rdi, rsi, rdx, rip, cs, rflags, rsp, ss;
};

void remote_mprotect(const StoppedThread& t, uint64_t start, uint64_t len, int prot) {
  AutoRemoteSyscalls remote(t.tracee.pid(), t.tid, t.gadget);
  long r = remote.syscall(SYS_mprotect, static_cast<long>(start), static_cast<long>(len), prot);
  if (r < 0) {
    errno = static_cast<int>(-r);
    fail_errno("mprotect in the tracee");
  }
  remote.restore();
}

}  // namespace

struct MprotectTracker::Slot {
  Frame* frame = nullptr;     // in the scratch; nullptr = no stub for this thread
  uint64_t frame_remote = 0;  // the tracee's address of frame->rax (its rsp in the stub)
  uint64_t page = 0, n = 0;   // the run last unprotected through the stub
  int prot = 0;
  uint64_t run_end = 0, run_len = 0;  // for neighbours
  uint64_t status() const { return __atomic_load_n(&frame->status, __ATOMIC_ACQUIRE); }
  bool in_flight() const { return frame && status() == 1; }
  bool maybe_in_stub = false;  // sent through the stub and not seen outside it since
  uint64_t index = 0;          // its frame's number in the scratch (kSlots: none)
};

void MprotectTracker::thread_exited(pid_t tid) {
  auto it = slots_.find(tid);
  if (it == slots_.end()) return;
  if (it->second->index < kSlots) free_frames_.push_back(it->second->index);
  slots_.erase(it);
}

MprotectTracker::MprotectTracker(const TrackerOptions& o)
    : max_ahead_(std::clamp<uint64_t>(o.mprotect_ahead, 1, 256)), use_stub_(o.mprotect_one_stop) {}

MprotectTracker::~MprotectTracker() = default;

const Area* MprotectTracker::area_of(uint64_t a) const {
  auto it = std::upper_bound(areas_.begin(), areas_.end(), a,
                             [](uint64_t x, const Area& r) { return x < r.start; });
  if (it == areas_.begin()) return nullptr;
  --it;
  return it->contains(a) ? &*it : nullptr;
}

void MprotectTracker::setup_scratch(const StoppedThread& t) {
  scratch_tried_ = true;
  std::string why = "the one-stop way is off";
  if (use_stub_) {
    if (!has_gadget(t, CAPE_RESUME_TAG_OFFSET, CAPE_RESUME_TAG))
      why = "libcape has no resume stub";
    else
      scratch_ = Scratch::map(t, t.gadget + CAPE_RESUME_TAG_OFFSET, kScratchBytes, false, &why);
  }
  if (!scratch_) {
    CAPE_LOG_AT(info, "monitor") << "mprotect tracker: two stops per fault (" << why << ")";
    return;
  }
  stub_ = t.gadget + CAPE_RESUME_STUB_OFFSET;
  syslist_ = has_gadget(t, CAPE_SYSLIST_TAG_OFFSET, CAPE_SYSLIST_TAG);
}

std::vector<long> MprotectTracker::mprotect_all(const StoppedThread& t, const std::vector<Protect>& calls) {
  std::vector<long> res(calls.size());
  if (calls.empty()) return res;
  AutoRemoteSyscalls remote(t.tracee.pid(), t.tid, t.gadget);
  if (!syslist_) {
    for (size_t i = 0; i < calls.size(); i++)
      res[i] = remote.syscall(SYS_mprotect, static_cast<long>(calls[i].start), static_cast<long>(calls[i].len),
                              calls[i].prot);
  } else {
    // The program reads the list from the scratch and writes each result there.
    uint64_t* list = reinterpret_cast<uint64_t*>(scratch_->local() + kListOffset);
    for (size_t i = 0; i < calls.size(); i += kListEntries) {
      size_t n = std::min<size_t>(kListEntries, calls.size() - i);
      for (size_t k = 0; k < n; k++) {
        const Protect& c = calls[i + k];
        uint64_t* e = list + 5 * k;
        e[0] = SYS_mprotect, e[1] = c.start, e[2] = c.len, e[3] = static_cast<uint64_t>(c.prot);
        __atomic_store_n(&e[4], static_cast<uint64_t>(-EINTR), __ATOMIC_RELAXED);  // (not run)
      }
      __atomic_store_n(&list[5 * n], ~uint64_t{0}, __ATOMIC_RELEASE);
      remote.call(t.gadget + CAPE_SYSLIST_GADGET_OFFSET, t.gadget + CAPE_SYSLIST_TRAP_OFFSET + 1,
                  [&](user_regs_struct& r) { r.r12 = scratch_->remote() + kListOffset; });
      for (size_t k = 0; k < n; k++)
        res[i + k] = static_cast<long>(__atomic_load_n(&list[5 * k + 4], __ATOMIC_ACQUIRE));
    }
  }
  remote.restore();
  return res;
}

MprotectTracker::Slot* MprotectTracker::slot_for(pid_t tid) {
  auto it = slots_.find(tid);
  if (it != slots_.end()) return it->second.get();
  auto s = std::make_unique<Slot>();
  // A multithreaded program may start and end many threads: an exited thread's frame is
  // used again (thread_exited), so only kSlots threads alive at once get the one-stop way.
  uint64_t i = kSlots;
  if (!free_frames_.empty()) {
    i = free_frames_.back();
    free_frames_.pop_back();
  } else if (frames_used_ < kSlots) {
    i = frames_used_++;
  }
  s->index = i;
  if (scratch_ && i < kSlots) {
    // The frame at the top of the slot; a signal frame pushed in the stub stays below it.
    uint64_t off = i * kSlotBytes + kSlotBytes - 128;
    s->frame = reinterpret_cast<Frame*>(scratch_->local() + off);
    s->frame_remote = scratch_->remote() + off + offsetof(Frame, rax);
  }
  return slots_.emplace(tid, std::move(s)).first->second.get();
}

uint8_t* MprotectTracker::copy_of(uint64_t page) {
  uint32_t i = originals_.at(page);
  return arena_[i / kBlockPages].data() + uint64_t{i % kBlockPages} * kPageSize;
}

uint64_t MprotectTracker::copy_originals(const StoppedThread& t, uint64_t page, uint64_t n) {
  // A run is copied with one read into consecutive arena pages of one block.
  if (n > kBlockPages) throw std::logic_error("mprotect tracker: a run of originals longer than an arena block");
  if (used_ % kBlockPages + n > kBlockPages) used_ = (used_ / kBlockPages + 1) * kBlockPages;
  uint32_t block = used_ / kBlockPages;
  while (arena_.size() <= block)
    arena_.emplace_back(uint64_t{kBlockPages} * kPageSize);
  uint8_t* dst = arena_[block].data() + uint64_t{used_ % kBlockPages} * kPageSize;
  uint64_t got = t.tracee.read_bytes_fallible(page, {dst, n * kPageSize}) / kPageSize;
  if (got == 0) t.tracee.read_bytes(page, {dst, kPageSize});  // throws with the address
  for (uint64_t i = 0; i < got; i++) originals_.emplace(page + i * kPageSize, used_++);
  return got;
}

void MprotectTracker::unprotect(const StoppedThread& t, Slot* s, uint64_t page, uint64_t n, int prot) {
  if (!s || !s->frame) {
    remote_mprotect(t, page, n * kPageSize, prot);
    return;
  }
  user_regs_struct regs = Tracee::get_regs(t.tid);
  Frame* f = s->frame;
  f->rax = regs.rax, f->rcx = regs.rcx, f->r11 = regs.r11;
  f->rdi = regs.rdi, f->rsi = regs.rsi, f->rdx = regs.rdx;
  f->rip = regs.rip, f->cs = regs.cs, f->rflags = regs.eflags, f->rsp = regs.rsp, f->ss = regs.ss;
  __atomic_store_n(&f->status, uint64_t{1}, __ATOMIC_RELEASE);
  s->page = page, s->n = n, s->prot = prot;
  s->maybe_in_stub = true;
  regs.rip = stub_;
  regs.rsp = s->frame_remote;
  regs.rax = SYS_mprotect;
  regs.rdi = page;
  regs.rsi = n * kPageSize;
  regs.rdx = static_cast<unsigned long long>(prot);
  Tracee::set_regs(t.tid, regs);
  ++one_stop_faults;
}

bool MprotectTracker::on_fault(const StoppedThread& t, const siginfo_t& info) {
  if (info.si_code != SEGV_ACCERR) return false;
  take_dropped(t);
  uint64_t addr = reinterpret_cast<uint64_t>(info.si_addr);
  const Area* r = area_of(addr);
  if (!r) return open_moved(t, addr);  // a tracked mapping the program moved in the window?
  uint64_t page = page_down(addr);
  Slot* s = slot_for(t.tid);
  auto it = originals_.lower_bound(page);
  if (it != originals_.end() && it->first == page) {
    // Already copied: another thread was served first (its unprotect may still be on its
    // way), or this thread's own unprotect failed. Unprotect again (it is idempotent).
    if (s->frame && page >= s->page && page < s->page + s->n * kPageSize &&
        static_cast<int64_t>(s->status()) < 0) {
      errno = static_cast<int>(-static_cast<int64_t>(s->status()));
      fail_errno("mprotect in the tracee");
    }
    unprotect(t, s, page, 1, r->prot);
    return true;
  }
  ++faults;
  uint64_t first = page, n = 1;
  // Just after (or a few pages after) the run this thread unprotected last: unprotect the
  // gap too (a few copies are cheaper than splitting a VMA) and pages ahead.
  uint64_t gap_max = (max_ahead_ / 4) * kPageSize;
  if (max_ahead_ > 1 && s->run_end && page >= s->run_end && page - s->run_end <= gap_max &&
      area_of(s->run_end) == r) {
    auto gap = originals_.lower_bound(s->run_end);
    if (gap == it) first = s->run_end;  // nothing copied in between
    if (first == s->run_end) {
      n = (page - first) / kPageSize + std::min(max_ahead_, s->run_len * 2);
      n = std::min(n, (page_up(r->end) - first) / kPageSize);  // this area only
      if (it != originals_.end()) n = std::min(n, (it->first - first) / kPageSize);  // not copied yet
    }
  }
  n = copy_originals(t, first, n);
  if (first + n * kPageSize <= page) {  // memory ended before the faulting page: just it
    first = page;
    n = copy_originals(t, page, 1);
  }
  pages_ahead += n - 1;
  s->run_end = first + n * kPageSize;
  s->run_len = n;
  unprotect(t, s, first, n, r->prot);
  return true;
}

bool MprotectTracker::finish_stub_by_hand(const StoppedThread& t, Slot& s) {
  s.maybe_in_stub = false;
  user_regs_struct regs = Tracee::get_regs(t.tid);
  if (regs.rip < stub_ || regs.rip >= stub_ + kStubBytes) return false;
  ++finished_by_hand;
  long result = static_cast<long>(s.status());
  if (result == 1) {  // right before or right after the `syscall`
    if (regs.rip == stub_ + 2) result = static_cast<long>(regs.rax);
  }
  const Frame& f = *s.frame;
  user_regs_struct back = regs;
  back.rax = f.rax, back.rcx = f.rcx, back.r11 = f.r11, back.rdi = f.rdi, back.rsi = f.rsi;
  back.rdx = f.rdx, back.rip = f.rip, back.cs = f.cs, back.eflags = f.rflags, back.rsp = f.rsp;
  back.ss = f.ss;
  Tracee::set_regs(t.tid, back);
  if (result == 1) {  // not run yet: run it here
    remote_mprotect(t, s.page, s.n * kPageSize, s.prot);
    result = 0;
  }
  __atomic_store_n(&s.frame->status, static_cast<uint64_t>(result), __ATOMIC_RELEASE);
  if (result < 0) {
    errno = static_cast<int>(-result);
    fail_errno("mprotect in the tracee");
  }
  return true;
}

void MprotectTracker::before_drop(long nr, uint64_t start, uint64_t end) {
  (void)nr;
  std::lock_guard lk(drop_mu_);
  if (!pid_) return;
  std::vector<uint8_t> buf;
  for (const Area& r : areas_) {
    uint64_t lo = std::max(page_down(r.start), start), hi = std::min(page_up(r.end), end);
    if (lo >= hi) continue;
    // (Read-only, not written yet: what they hold is their original. Those written already
    // have theirs; take_dropped() keeps the older one.)
    buf.resize(hi - lo);
    iovec local{buf.data(), buf.size()}, remote{reinterpret_cast<void*>(lo), buf.size()};
    ssize_t got = ::process_vm_readv(pid_, &local, 1, &remote, 1, 0);
    if (got != static_cast<ssize_t>(buf.size())) {  // part unmapped already: page by page
      for (uint64_t p = lo; p < hi; p += kPageSize) {
        local = {buf.data() + (p - lo), kPageSize};
        remote = {reinterpret_cast<void*>(p), kPageSize};
        if (::process_vm_readv(pid_, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(kPageSize))
          dropped_.try_emplace(p, buf.begin() + (p - lo), buf.begin() + (p - lo) + kPageSize);
      }
      continue;
    }
    for (uint64_t p = lo; p < hi; p += kPageSize)
      dropped_.try_emplace(p, buf.begin() + (p - lo), buf.begin() + (p - lo) + kPageSize);
  }
}

namespace {
// How many mappings of /proc/PID/maps meet [s, e) (read directly: the maps cache belongs to
// the monitor's thread).
size_t mappings_over(pid_t pid, uint64_t s, uint64_t e) {
  std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
  std::string line;
  size_t n = 0;
  while (std::getline(maps, line)) {
    size_t dash = line.find('-'), sp = line.find(' ');
    if (dash == std::string::npos || sp == std::string::npos || sp < dash) continue;
    uint64_t a = std::stoull(line.substr(0, dash), nullptr, 16), b = std::stoull(line.substr(dash + 1, sp - dash - 1), nullptr, 16);
    if (a < e && s < b) n++;
  }
  return n;
}
}  // namespace

void MprotectTracker::before_mapping_call(long nr, const uint64_t (&a)[6]) {
  std::lock_guard lk(drop_mu_);
  if (!pid_) return;
  auto len = [](uint64_t n) { return (n + kPageSize - 1) & ~(kPageSize - 1); };
  switch (nr) {
    case SYS_mmap:
      if (!(a[2] & PROT_WRITE)) {
        if (a[3] & (MAP_FIXED | MAP_FIXED_NOREPLACE))
          own_ro_ = own_ro_.unite(IntervalSet::of({{a[0], a[0] + len(a[1])}}));
        else
          foreign_moved_ = true;  // read-only somewhere: a moved mapping could not be told from it
      }
      return;
    case SYS_mprotect:
      if (!(a[2] & PROT_WRITE)) own_ro_ = own_ro_.unite(IntervalSet::of({{page_down(a[0]), a[0] + len(a[1])}}));
      return;
    case SYS_mremap: {
      uint64_t from = a[0], old_len = len(a[1]);
      if (from % kPageSize || old_len == 0 || a[2] == 0) return;
      const Area* r = nullptr;
      for (const Area& x : areas_)
        if (x.start < from + old_len && from < x.end) r = &x;
      if (!r) {
        foreign_moved_ = true;
        return;
      }
      // The kernel moves one mapping only. This tracker's protection splits a mapping
      // where the window wrote pages (writable) among others (read-only): EFAULT, where
      // the program, untracked, would have moved it.
      if (mappings_over(pid_, from, from + old_len) > 1)
        throw UserError("the program's mremap of " + ckpt::hex_address(from) + "-" + ckpt::hex_address(from + old_len) +
                        " inside a parallel region, after the region wrote part of it, cannot be followed by "
                        "--tracker mprotect: its write protection splits the mapping, and the kernel moves one "
                        "mapping only (the call would fail with EFAULT); run with --tracker uffd (the default)");
      moved_++;
      moved_prot_ = r->prot;
      return;
    }
    default: return;
  }
}

bool MprotectTracker::open_moved(const StoppedThread& t, uint64_t addr) {
  IntervalSet own;
  int prot;
  {
    std::lock_guard lk(drop_mu_);
    if (!moved_) return false;
    if (foreign_moved_) {
      if (addr) return false;  // (the fault is delivered: the program's own read-only memory?)
      throw UserError("the program moved tracked memory with mremap inside a parallel region, and made other "
                      "read-only memory there too: --tracker mprotect cannot tell which is which (its "
                      "protection moves with a mapping); run with --tracker uffd (the default)");
    }
    own = own_ro_;
    prot = moved_prot_;
  }
  // Read-only private memory that is not tracked, was not read-only at start() and was not
  // made read-only by the program since: moved from the tracked set, protection and all.
  std::vector<IntervalSet::Interval> tracked;
  for (const Area& r : areas_) tracked.emplace_back(page_down(r.start), page_up(r.end));
  IntervalSet keep = IntervalSet::of(std::move(tracked)).unite(own).unite(ro_at_start_);
  std::vector<Protect> calls;
  bool hit = false;
  for (const Mapping& m : read_maps(t.tracee.pid())) {
    if (m.shared || !(m.path.empty() || m.path == "[heap]") || m.write || !m.read) continue;
    for (auto [x, y] : IntervalSet::of({{m.start, m.end}}).minus(keep)) {
      calls.push_back({x, y - x, prot});
      hit = hit || (addr >= x && addr < y);
    }
  }
  for (long r : mprotect_all(t, calls))
    if (r < 0) {
      errno = static_cast<int>(-r);
      fail_errno("mprotect in the tracee (memory the program moved)");
    }
  if (!calls.empty()) maps_may_change();
  std::lock_guard lk(drop_mu_);
  moved_ = 0;
  return hit;
}

void MprotectTracker::settle(const StoppedThread& t) { open_moved(t, 0); }

void MprotectTracker::take_dropped(const StoppedThread& t) {
  std::map<uint64_t, std::vector<uint8_t>> got;
  {
    std::lock_guard lk(drop_mu_);
    if (dropped_.empty()) return;
    got.swap(dropped_);
  }
  (void)t;
  for (auto& [page, bytes] : got) {
    if (originals_.count(page)) continue;  // written before the call: its original is older
    if (used_ % kBlockPages + 1 > kBlockPages) used_ = (used_ / kBlockPages + 1) * kBlockPages;
    uint32_t block = used_ / kBlockPages;
    while (arena_.size() <= block) arena_.emplace_back(uint64_t{kBlockPages} * kPageSize);
    std::memcpy(arena_[block].data() + uint64_t{used_ % kBlockPages} * kPageSize, bytes.data(), kPageSize);
    originals_.emplace(page, used_++);
  }
}

void MprotectTracker::before_write(const StoppedThread& t, uint64_t start, uint64_t end) {
  take_dropped(t);
  // A signal about to be delivered to a thread still inside the stub: finish the stub here
  // so that the handler runs on the program's stack, and open that stack. (Once the thread
  // is seen outside the stub, e.g. at a runtime call, its registers are not read again.)
  auto sit = slots_.find(t.tid);
  if (sit != slots_.end() && sit->second->maybe_in_stub && finish_stub_by_hand(t, *sit->second)) {
    uint64_t sp = sit->second->frame->rsp;
    before_write(t, sp > 32768 ? sp - 32768 : 0, sp);
  }
  // Pages in flight (another thread of the program between its fault and the stub's
  // unprotect, collect() above) have their original but are read-only still: opened here too,
  // or a grant injected there is refused (crit_known.c under --model=mt, docs/critical.md).
  std::vector<IntervalSet::Interval> flying;
  for (auto& [tid, s] : slots_)
    if (s->in_flight()) flying.emplace_back(s->page, s->page + s->n * kPageSize);
  const IntervalSet in_flight = IntervalSet::of(std::move(flying));
  std::vector<std::pair<uint64_t, uint64_t>> runs;  // [page, n) copied, to unprotect
  for (uint64_t p = page_down(start); p < end; p += kPageSize) {
    const Area* r = area_of(p);
    if (!r || (originals_.count(p) && !in_flight.contains(p))) continue;
    if (!originals_.count(p)) copy_originals(t, p, 1);
    if (!runs.empty() && runs.back().first + runs.back().second * kPageSize == p &&
        area_of(runs.back().first) == r)
      runs.back().second++;
    else
      runs.emplace_back(p, 1);
  }
  if (runs.empty()) return;
  std::vector<Protect> calls;
  for (auto [p, n] : runs) calls.push_back({p, n * kPageSize, area_of(p)->prot});
  for (long res : mprotect_all(t, calls))
    if (res < 0) {
      errno = static_cast<int>(-res);
      fail_errno("mprotect in the tracee");
    }
}

void MprotectTracker::collect(const StoppedThread& t, const PageVisitor& visit) {
  // Pages the program dropped (munmap, mmap over them, ...) in the window: written pages,
  // read again (those unmapped now are passed over, those mapped again read as they are).
  take_dropped(t);
  // Pages whose unprotect is still on its way (a thread between its fault and the stub's
  // syscall: only when the program races with its own runtime call): re-protecting them now
  // would be undone by that syscall, so they stay writable and listed, with what they hold
  // now as their original.
  std::vector<IntervalSet::Interval> flying;
  for (auto& [tid, s] : slots_)
    if (s->in_flight()) flying.emplace_back(s->page, s->page + s->n * kPageSize);
  // A one-thread program's written pages, when a few, stay writable the same way: the
  // window writes them again (the master's share after its create("before"), the next
  // create), and each fault would be a stop. (Under --sync=lazy too: a page written here is
  // here; start() copies again after the inject that may invalidate it.)
  if (!originals_.empty() && originals_.size() <= kMaxHotPages && t.tracee.one_thread())
    for (auto& [page, index] : originals_) flying.emplace_back(page, page + kPageSize);
  const IntervalSet in_flight = IntervalSet::of(std::move(flying));
  std::vector<std::pair<uint64_t, std::vector<uint8_t>>> keep;

  constexpr uint64_t kChunk = 64;  // pages read at once (stays in the cache)
  std::vector<uint8_t> cur(kChunk * kPageSize);
  std::vector<std::pair<uint64_t, uint64_t>> protect;  // [first, end) to protect again
  // Up to kChunk written pages at a time (neighbours or not) with one process_vm_readv.
  std::vector<uint64_t> pages;
  std::vector<iovec> remote_iov;
  std::vector<bool> ok;
  // The written pages are protected again first, then read: another thread of the program
  // (the two-level model) writing one meanwhile faults and waits for this monitor, so what is
  // read is what the next fault copies as the original. (Read first, a write between the
  // read and the protection was in neither this checkpoint nor the next.)
  for (auto& [page, index] : originals_) {
    if (in_flight.contains(page)) continue;
    if (!protect.empty() && protect.back().second == page && area_of(page) == area_of(protect.back().first))
      protect.back().second += kPageSize;
    else
      protect.emplace_back(page, page + kPageSize);
  }
  // Protect the written pages again (the kernel merges the VMAs back): one syscall per run
  // of neighbours, or, when an area has many runs, one over the span from its first to its
  // last run (the pages between are read-only already), around pages still in flight. A
  // span that meets memory unmapped by the program meanwhile (ENOMEM) is done run by run.
  if (!protect.empty()) {
    auto check = [](long res) {
      if (res < 0 && res != -ENOMEM) {  // ENOMEM: unmapped by the program meanwhile
        errno = static_cast<int>(-res);
        fail_errno("mprotect in the tracee");
      }
    };
    constexpr size_t kManyRuns = 4;
    std::vector<Protect> calls;
    std::vector<std::pair<size_t, size_t>> span_runs;  // per call: the runs [i, j) a span covers ({0, 0}: a run)
    for (size_t i = 0; i < protect.size();) {
      const Area* r = area_of(protect[i].first);
      int ro = r->prot & ~PROT_WRITE;
      size_t j = i;
      while (j < protect.size() && area_of(protect[j].first) == r) j++;
      if (j - i < kManyRuns) {
        for (size_t k = i; k < j; k++) {
          calls.push_back({protect[k].first, protect[k].second - protect[k].first, ro});
          span_runs.emplace_back(0, 0);
        }
        i = j;
        continue;
      }
      // The span [protect[i].first, protect[j-1].second) minus the pages in flight.
      for (auto [x, y] : IntervalSet::of({{protect[i].first, protect[j - 1].second}}).minus(in_flight)) {
        calls.push_back({x, y - x, ro});
        span_runs.emplace_back(i, j);
      }
      i = j;
    }
    std::vector<long> res = mprotect_all(t, calls);
    std::vector<Protect> again;  // spans that met unmapped memory: run by run
    for (size_t c = 0; c < calls.size(); c++) {
      auto [i, j] = span_runs[c];
      if (res[c] != -ENOMEM || i == j) {
        check(res[c]);
        continue;
      }
      uint64_t x = calls[c].start, y = x + calls[c].len;
      for (size_t k = i; k < j; k++)
        if (protect[k].first < y && protect[k].second > x) {
          uint64_t a = std::max(x, protect[k].first), b = std::min(y, protect[k].second);
          again.push_back({a, b - a, calls[c].prot});
        }
    }
    for (long r : mprotect_all(t, again)) check(r);
  }
  for (auto& [page, index] : originals_) written_.push_back(page);
  auto it = originals_.begin();
  // collect_skipping(): pages kept whole by the node are protected again (above), not read.
  auto skipped = [&](uint64_t page) {
    if (!skip_ || in_flight.contains(page) || !skip_->contains(page) || !skip_->contains(page + kPageSize - 1))
      return false;
    skipped_->push_back(page);
    ++pages_skipped;
    if (keep_skipped_) {
      const uint8_t* o = copy_of(page);
      skipped_originals_.insert_or_assign(page, std::vector<uint8_t>(o, o + kPageSize));
    }
    return true;
  };
  while (it != originals_.end()) {
    pages.clear();
    remote_iov.clear();
    for (; it != originals_.end() && pages.size() < kChunk; ++it) {
      if (skipped(it->first)) continue;
      pages.push_back(it->first);
      if (!remote_iov.empty() &&
          reinterpret_cast<uint64_t>(remote_iov.back().iov_base) + remote_iov.back().iov_len == it->first)
        remote_iov.back().iov_len += kPageSize;
      else
        remote_iov.push_back({reinterpret_cast<void*>(it->first), kPageSize});
    }
    iovec local{cur.data(), pages.size() * kPageSize};
    ssize_t got = ::process_vm_readv(t.tracee.pid(), &local, 1, remote_iov.data(), remote_iov.size(), 0);
    ok.assign(pages.size(), true);
    if (got != static_cast<ssize_t>(pages.size() * kPageSize))  // some unmapped since: page by page
      for (size_t i = 0; i < pages.size(); i++)
        ok[i] = t.tracee.read_bytes_fallible(pages[i], {cur.data() + i * kPageSize, kPageSize}) == kPageSize;
    for (size_t i = 0; i < pages.size(); i++) {
      uint64_t page = pages[i];
      if (!ok[i]) continue;  // unmapped since
      ++pages_visited;
      std::span<const uint8_t> c(cur.data() + i * kPageSize, kPageSize);
      visit(page, {copy_of(page), kPageSize}, c);
      if (in_flight.contains(page)) keep.emplace_back(page, std::vector<uint8_t>(c.begin(), c.end()));
    }
  }
  originals_.clear();
  used_ = 0;
  for (auto& [page, bytes] : keep) {
    if (used_ % kBlockPages + 1 > kBlockPages) used_ = (used_ / kBlockPages + 1) * kBlockPages;
    uint32_t block = used_ / kBlockPages;
    std::memcpy(arena_[block].data() + uint64_t{used_ % kBlockPages} * kPageSize, bytes.data(), kPageSize);
    originals_.emplace(page, used_++);
  }
  for (auto& [tid, s] : slots_) s->run_end = 0;
}

void MprotectTracker::collect_skipping(const StoppedThread& t, const IntervalSet& skip, std::vector<uint64_t>& skipped,
                                       bool keep_originals, const PageVisitor& visit) {
  skip_ = &skip;
  skipped_ = &skipped;
  keep_skipped_ = keep_originals;
  struct Reset {
    MprotectTracker& m;
    ~Reset() { m.skip_ = nullptr, m.skipped_ = nullptr; }
  } reset{*this};
  collect(t, visit);
}

bool MprotectTracker::original(uint64_t page, std::span<uint8_t> out) {
  auto it = skipped_originals_.find(page);
  if (it == skipped_originals_.end() || out.size() != kPageSize) return false;
  std::memcpy(out.data(), it->second.data(), kPageSize);
  return true;
}

void MprotectTracker::start(const StoppedThread& t, const std::vector<Area>& areas) {
  if (!scratch_tried_) setup_scratch(t);
  skipped_originals_.clear();
  {
    std::lock_guard lk(drop_mu_);
    areas_ = areas;
    pid_ = t.tracee.pid();
    dropped_.clear();  // (a call between windows: every node made it)
    moved_ = 0;
    foreign_moved_ = false;
    own_ro_ = IntervalSet();
  }
  {
    std::vector<IntervalSet::Interval> ro;
    for (const Mapping& m : read_maps(t.tracee.pid()))
      if (!m.shared && (m.path.empty() || m.path == "[heap]") && m.read && !m.write) ro.emplace_back(m.start, m.end);
    ro_at_start_ = IntervalSet::of(std::move(ro));
  }
  originals_.clear();
  used_ = 0;
  for (auto& [tid, s] : slots_) s->run_end = 0;
  // The pages written in the last window are likely written again (a region's loop
  // variables, libcape_cc's state, the stack around the calls): their originals are copied
  // now and they stay writable, so that writing them costs no fault (an empty region: ~5
  // per node, each a stop). A few only, and not in a program with other threads (one could
  // write a page while it is copied) nor, under --sync=lazy, a page not here (copying it
  // would fetch it): those stay protected. (Lazy invalidates pages only at an inject after
  // the window's collect(), and start() copies again: a page kept writable is never dropped
  // inside a window. Without this an empty region under lazy made ~5 more stops.)
  std::vector<uint64_t> hot = std::exchange(written_, {});
  std::sort(hot.begin(), hot.end());
  hot.erase(std::unique(hot.begin(), hot.end()), hot.end());
  if (lazy_)
    hot.erase(std::remove_if(hot.begin(), hot.end(), [this](uint64_t p) { return not_here_.contains(p); }), hot.end());
  std::vector<IntervalSet::Interval> open;
  if (!hot.empty() && hot.size() <= kMaxHotPages && t.tracee.one_thread()) {
    for (size_t i = 0; i < hot.size();) {
      const Area* r = area_of(hot[i]);
      size_t j = i + 1;
      while (j < hot.size() && hot[j] == hot[j - 1] + kPageSize && area_of(hot[j]) == r) j++;
      // (Not in the program's own anonymous mappings, which it may move with mremap: a page
      // left writable splits the mapping, and the kernel moves one mapping only. The cape
      // heap's arenas are the program's malloc, never moved.)
      bool movable = r && r->kind == Area::anon && !(hot[i] >= CAPE_HEAP_BASE && hot[i] < CAPE_HEAP_END);
      if (r && !movable && (r->prot & PROT_WRITE) && hot[i] >= r->start && hot[j - 1] + kPageSize <= r->end) {
        uint64_t got = copy_originals(t, hot[i], j - i);
        open.emplace_back(hot[i], hot[i] + got * kPageSize);
      }
      i = j;
    }
  }
  const IntervalSet writable = IntervalSet::of(std::move(open));
  std::vector<Protect> calls;
  for (const Area& r : areas_)
    for (auto [x, y] : IntervalSet::of({{r.start, r.end}}).minus(writable)) calls.push_back({x, y - x, r.prot & ~PROT_WRITE});
  std::vector<long> res = mprotect_all(t, calls);
  for (long r : res)
    if (r < 0) {
      errno = static_cast<int>(-r);
      fail_errno("mprotect in the tracee");
    }
}

// --sync=lazy (DirtyTracker::open_until_collect): like start()'s few hot pages, by the
// thousand: each run of pages inside one writable area is copied (its originals, what its
// first fault would copy) and unprotected; collect() finds them among the written pages.
// Not with other threads (one could write a page while it is copied), not invalid pages.
uint64_t MprotectTracker::open_until_collect(const StoppedThread& t, const IntervalSet& pages) {
  if (!lazy_ || pages.empty() || !t.tracee.one_thread()) return 0;
  std::vector<Protect> calls;
  uint64_t n = 0;
  auto flush = [&](uint64_t first, uint64_t end) {
    // In pieces: copy_originals() puts a run into one arena block (kBlockPages at most).
    for (uint64_t p = first; p < end;) {
      uint64_t want = std::min<uint64_t>((end - p) / kPageSize, 256);
      uint64_t got = copy_originals(t, p, want);
      calls.push_back({p, got * kPageSize, area_of(p)->prot});
      n += got;
      if (got < want) break;  // memory ends there
      p += got * kPageSize;
    }
  };
  for (auto [s, e] : pages.minus(not_here_)) {
    uint64_t first = s;
    for (uint64_t p = s; p < e; p += kPageSize) {
      const Area* r = area_of(p);
      bool ok = r && (r->prot & PROT_WRITE) && p + kPageSize <= r->end && !originals_.count(p);
      if (ok && p > first && area_of(first) != r) flush(first, p), first = p;
      if (!ok) flush(first, p), first = p + kPageSize;
    }
    flush(first, e);
  }
  for (long r : mprotect_all(t, calls))
    if (r < 0) n = 0;  // (a page left protected faults and finds its original copied already)
  pages_opened += n;
  return n;
}

void MprotectTracker::stop(const StoppedThread& t) {
  // Give the program its protections back, mapping by mapping (some may be gone).
  std::vector<Mapping> maps = read_maps(t.tracee.pid());
  std::vector<Protect> calls;
  for (const Area& r : areas_) {
    for (const Mapping& m : maps) {
      uint64_t s = std::max(r.start, m.start), e = std::min(r.end, m.end);
      if (s < e) calls.push_back({s, e - s, r.prot});
    }
  }
  for (long res : mprotect_all(t, calls))
    if (res < 0) CAPE_LOG_AT(warn, "monitor") << "mprotect back failed: " << strerror(static_cast<int>(-res));
  {
    std::lock_guard lk(drop_mu_);
    areas_.clear();
    dropped_.clear();
  }
  originals_.clear();
  used_ = 0;
  CAPE_LOG_AT(debug, "monitor") << "mprotect tracker: " << faults << " faults, " << one_stop_faults
                                << " through the stub, " << pages_ahead << " neighbours, "
                                << finished_by_hand << " stubs finished by hand";
}

}  // namespace cape::monitor

#include "monitor/inproc_tracker.h"

#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>

#include "monitor/remote_syscall.h"
#include "protocol.h"
#include "util/error.h"
#include "util/log.h"

namespace cape::monitor {
namespace {

cape_inproc_header* header(Scratch& s) { return reinterpret_cast<cape_inproc_header*>(s.local()); }

// [start, end) to `prot` in the program, by a syscall run in the stopped thread.
void remote_protect(AutoRemoteSyscalls& remote, uint64_t start, uint64_t end, int prot) {
  long r = remote.syscall(SYS_mprotect, static_cast<long>(start), static_cast<long>(end - start), prot);
  if (r < 0) {
    errno = static_cast<int>(-r);
    fail_errno("mprotect in the program (--tracker inproc)");
  }
}

}  // namespace

void InprocTracker::start(const StoppedThread& t, const std::vector<Area>& areas) {
  static_assert(CAPE_INPROC_SCRATCH_ADDRESS == kScratchAddress, "protocol.h and dirty_tracker.h agree");
  if (!scratch_) {
    std::string why;
    if (!has_gadget(t, CAPE_RESUME_TAG_OFFSET, CAPE_RESUME_TAG))
      throw UserError("--tracker inproc: the program's libcape is too old (no tag for the scratch)");
    scratch_ = Scratch::map(t, t.gadget + CAPE_RESUME_TAG_OFFSET, CAPE_INPROC_SCRATCH_BYTES, false, &why);
    if (!scratch_) throw UserError("--tracker inproc: " + why);
  }
  // Whole pages; the stack's first one (the boundary's, shared with the runtime call's
  // frames) is compared with a copy instead.
  areas_.clear();
  boundary_page_ = 0;
  // The tracked set's stack is whole here; the program can protect only what lies above the
  // start() call's frame boundary (rdx of its trap): signal frames are written below the
  // stack pointer, and a frame on a protected page kills the program.
  uint64_t boundary = Tracee::get_regs(t.tid).rdx;
  for (const Area& whole : areas) {
    Area a = whole;
    if (a.kind == Area::stack && boundary > a.start) a.start = std::min(boundary, a.end);
    if (a.start >= a.end) continue;
    Area p = a;
    if (a.start & (kPageSize - 1)) {
      boundary_page_ = page_down(a.start);
      boundary_copy_.assign(kPageSize, 0);
      if (t.tracee.read_bytes_fallible(boundary_page_, {boundary_copy_.data(), kPageSize}) != kPageSize)
        boundary_page_ = 0;
    }
    p.start = page_up(a.start);
    p.end = page_up(a.end);
    if (!areas_.empty() && areas_.back().end > p.start) p.start = areas_.back().end;
    if (p.start < p.end) areas_.push_back(p);
  }
  if (areas_.size() > CAPE_INPROC_MAX_AREAS)
    throw UserError("--tracker inproc: more than " + std::to_string(CAPE_INPROC_MAX_AREAS) +
                    " tracked areas; use --tracker uffd");
  for (const Area& a : areas_)
    CAPE_LOG_AT(debug, "monitor") << "inproc: area " << std::hex << a.start << "-" << a.end << " " << to_string(a.kind);
  cape_inproc_header* h = header(*scratch_);
  h->nareas = areas_.size();
  for (size_t i = 0; i < areas_.size(); i++)
    h->areas[i] = {areas_[i].start, areas_[i].end, static_cast<unsigned long>(areas_[i].prot), 0};
  __atomic_store_n(&h->count, 0, __ATOMIC_RELEASE);
  __atomic_store_n(&h->lock, 0, __ATOMIC_RELEASE);
  h->magic = CAPE_INPROC_ARMED;
  handler_lost_ = false;  // libcape installs it again when it arms
}

bool InprocTracker::on_fault(const StoppedThread& t, const siginfo_t& info) {
  uint64_t a = reinterpret_cast<uint64_t>(info.si_addr);
  auto area = std::find_if(areas_.begin(), areas_.end(), [&](const Area& r) { return r.contains(a); });
  if (!scratch_ || info.si_code != SEGV_ACCERR || area == areas_.end()) return false;
  if (!handler_lost_) {
    uint64_t blocked = 0;
    if (::ptrace(PTRACE_GETSIGMASK, t.tid, sizeof blocked, &blocked) != 0) fail_errno("PTRACE_GETSIGMASK");
    if (!(blocked & (uint64_t{1} << (SIGSEGV - 1)))) return false;  // the program's handler runs
    handler_lost_ = true;
  }
  cape_inproc_header* h = header(*scratch_);
  uint64_t page = page_down(a);
  // The program's handler serves others' faults meanwhile: its lock (runtime/src/inproc.c).
  while (__atomic_exchange_n(&h->lock, 1, __ATOMIC_ACQUIRE)) sched_yield();
  struct Unlock {
    cape_inproc_header* h;
    ~Unlock() { __atomic_store_n(&h->lock, 0, __ATOMIC_RELEASE); }
  } unlock{h};
  uint64_t i = __atomic_fetch_add(&h->count, 1, __ATOMIC_ACQ_REL);
  if (i >= CAPE_INPROC_MAX_PAGES) throw UserError("--tracker inproc: more than 16384 pages written in one window; use --tracker uffd");
  t.tracee.read_bytes(page, {scratch_->local() + CAPE_INPROC_ORIGINALS + i * kPageSize, kPageSize});
  __atomic_store_n(&h->pages[i], page, __ATOMIC_RELEASE);
  AutoRemoteSyscalls remote(t.tracee.pid(), t.tid, t.gadget);
  remote_protect(remote, page, page + kPageSize, area->prot);
  remote.restore();
  return true;
}

long InprocTracker::start_answer() const { return static_cast<long>(CAPE_INPROC_ARMED); }

void InprocTracker::collect(const StoppedThread& t, const PageVisitor& visit) {
  cape_inproc_header* h = header(*scratch_);
  uint64_t n = std::min<uint64_t>(__atomic_load_n(&h->count, __ATOMIC_ACQUIRE), CAPE_INPROC_MAX_PAGES);
  std::vector<std::pair<uint64_t, uint64_t>> pages;  // (page, index of its first original)
  std::set<uint64_t> seen;
  for (uint64_t i = 0; i < n; i++) {
    uint64_t p = __atomic_load_n(&h->pages[i], __ATOMIC_ACQUIRE);
    if (p && seen.insert(p).second) pages.emplace_back(p, i);  // two threads raced: the first copy
  }
  constexpr uint64_t kBoundary = ~uint64_t{0};  // the boundary page: its copy is the original
  if (boundary_page_ && !seen.count(boundary_page_)) pages.emplace_back(boundary_page_, kBoundary);
  std::sort(pages.begin(), pages.end());  // the visitor wants address order
  std::vector<uint8_t> cur(kPageSize);
  for (auto [page, i] : pages) {
    if (t.tracee.read_bytes_fallible(page, {cur.data(), kPageSize}) != kPageSize) continue;  // unmapped since
    const uint8_t* orig = i == kBoundary ? boundary_copy_.data() : scratch_->local() + CAPE_INPROC_ORIGINALS + i * kPageSize;
    if (i == kBoundary && std::memcmp(orig, cur.data(), kPageSize) == 0) continue;
    ++pages_visited;
    visit(page, {orig, kPageSize}, {cur.data(), kPageSize});
    if (i == kBoundary) boundary_copy_ = cur;
  }
  std::erase_if(pages, [](const auto& p) { return p.second == kBoundary; });
  faults += pages.size();
  // The next create() holds what is written from now: protect the pages again, one call per
  // run of neighbours in one area.
  AutoRemoteSyscalls remote(t.tracee.pid(), t.tid, t.gadget);
  for (size_t k = 0; k < pages.size();) {
    uint64_t s = pages[k].first, e = s + kPageSize;
    auto area = std::find_if(areas_.begin(), areas_.end(), [&](const Area& a) { return a.contains(s); });
    size_t j = k + 1;
    while (j < pages.size() && pages[j].first == e && area != areas_.end() && area->contains(e)) e += kPageSize, ++j;
    if (area != areas_.end()) remote_protect(remote, s, e, area->prot & ~PROT_WRITE);
    k = j;
  }
  remote.restore();
  __atomic_store_n(&h->count, 0, __ATOMIC_RELEASE);
}

void InprocTracker::stop(const StoppedThread& t) {
  if (!scratch_) return;
  cape_inproc_header* h = header(*scratch_);
  h->nareas = 0;  // a fault from now on is not a tracking fault
  AutoRemoteSyscalls remote(t.tracee.pid(), t.tid, t.gadget);
  for (const Area& a : areas_) remote_protect(remote, a.start, a.end, a.prot);
  remote.restore();
  __atomic_store_n(&h->count, 0, __ATOMIC_RELEASE);
  areas_.clear();
}

}  // namespace cape::monitor

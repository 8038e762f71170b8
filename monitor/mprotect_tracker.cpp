// `mprotect`, the faithful CAPE-2 tracker (003_45ed75503520c8f4.txt Sect. III.A): start()
// write-protects the tracked set with syscalls run inside the tracee; the first write to a
// page raises SIGSEGV, seen here as a ptrace signal-stop; the monitor copies the page,
// makes it writable with one more remote mprotect and resumes without the signal.
// Cost per page: two ptrace stops (the fault, the remote syscall's int3).
#include <sys/mman.h>
#include <sys/syscall.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "monitor/remote_syscall.h"
#include "monitor/trackers.h"
#include "util/log.h"

namespace cape::monitor {
namespace {
void remote_mprotect(const StoppedThread& t, uint64_t start, uint64_t len, int prot) {
  AutoRemoteSyscalls remote(t.tracee.pid(), t.tid, t.gadget);
  long r = remote.syscall(SYS_mprotect, static_cast<long>(start), static_cast<long>(len), prot);
  if (r < 0) {
    errno = static_cast<int>(-r);
    fail_errno("mprotect in the tracee");
  }
}
}  // namespace

const Region* MprotectTracker::region_of(uint64_t a) const {
  auto it = std::upper_bound(regions_.begin(), regions_.end(), a,
                             [](uint64_t x, const Region& r) { return x < r.start; });
  if (it == regions_.begin()) return nullptr;
  --it;
  return it->contains(a) ? &*it : nullptr;
}

void MprotectTracker::start(const StoppedThread& t, const std::vector<Region>& regions) {
  regions_ = regions;
  originals_.clear();
  for (const Region& r : regions_) remote_mprotect(t, r.start, r.size(), r.prot & ~PROT_WRITE);
}

void MprotectTracker::unprotect(const StoppedThread& t, uint64_t page, uint64_t n, int prot) {
  for (uint64_t i = 0; i < n; i++) {
    std::vector<uint8_t> copy(kPageSize);
    t.tracee.read_bytes(page + i * kPageSize, copy);
    originals_.emplace(page + i * kPageSize, std::move(copy));
  }
  remote_mprotect(t, page, n * kPageSize, prot);
}

bool MprotectTracker::on_fault(const StoppedThread& t, const siginfo_t& info) {
  if (info.si_code != SEGV_ACCERR) return false;
  uint64_t addr = reinterpret_cast<uint64_t>(info.si_addr);
  const Region* r = region_of(addr);
  if (!r) return false;
  uint64_t page = page_down(addr);
  // Another thread may have faulted on this page and been served first: its copy is the
  // original, this fault is stale (KERNEL-FACTS.md, multithreaded tracee).
  if (originals_.count(page)) return true;
  ++faults;
  unprotect(t, page, 1, r->prot);
  return true;
}

void MprotectTracker::before_write(const StoppedThread& t, uint64_t start, uint64_t end) {
  for (uint64_t p = page_down(start); p < end; p += kPageSize) {
    const Region* r = region_of(p);
    if (!r || originals_.count(p)) continue;
    unprotect(t, p, 1, r->prot);
  }
}

void MprotectTracker::collect(const StoppedThread& t, const PageVisitor& visit) {
  std::vector<uint8_t> cur(kPageSize);
  for (auto& [page, original] : originals_) {
    if (t.tracee.read_bytes_fallible(page, cur) != kPageSize) continue;  // unmapped since
    ++pages_visited;
    visit(page, original, cur);
  }
  // Protect the written pages again, one syscall per run of neighbours (the kernel merges
  // the VMAs back).
  AutoRemoteSyscalls remote(t.tracee.pid(), t.tid, t.gadget);
  auto it = originals_.begin();
  while (it != originals_.end()) {
    uint64_t first = it->first, end = first + kPageSize;
    const Region* r = region_of(first);
    ++it;
    while (it != originals_.end() && it->first == end && region_of(end) == r) {
      end += kPageSize;
      ++it;
    }
    long res = remote.syscall(SYS_mprotect, static_cast<long>(first),
                              static_cast<long>(end - first), r->prot & ~PROT_WRITE);
    if (res < 0 && res != -ENOMEM) {  // ENOMEM: unmapped by the program meanwhile
      errno = static_cast<int>(-res);
      fail_errno("mprotect in the tracee");
    }
  }
  originals_.clear();
}

void MprotectTracker::stop(const StoppedThread& t) {
  // Give the program its protections back, mapping by mapping (some may be gone).
  std::vector<Mapping> maps = read_maps(t.tracee.pid());
  AutoRemoteSyscalls remote(t.tracee.pid(), t.tid, t.gadget);
  for (const Region& r : regions_) {
    for (const Mapping& m : maps) {
      uint64_t s = std::max(r.start, m.start), e = std::min(r.end, m.end);
      if (s >= e) continue;
      long res = remote.syscall(SYS_mprotect, static_cast<long>(s), static_cast<long>(e - s), r.prot);
      if (res < 0) CAPE_LOG_AT(warn, "monitor") << "mprotect back failed: " << strerror(static_cast<int>(-res));
    }
  }
  regions_.clear();
  originals_.clear();
}

}  // namespace cape::monitor

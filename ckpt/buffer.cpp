#include "ckpt/buffer.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>

namespace cape::ckpt::buffer_pool {
namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kPlainOnly = true;  // let ASan see every block
#else
constexpr bool kPlainOnly = false;
#endif

constexpr size_t kMaxPooledBlocks = 16;
constexpr size_t kHotBytes = size_t{128} << 20;

// Sizes are rounded to 64 KiB below a huge page and to huge pages above.
size_t round_up(size_t n) {
  size_t unit = n >= kHugeBlock ? kHugeBlock : size_t{64} << 10;
  return (n + unit - 1) / unit * unit;
}

// Huge pages for big blocks: CAPE_POOL_HUGE=0 or 1 (A/B, docs/monitor.md "First copy in small
// pages": on a VM whose balloon reports free memory, a fresh huge page is memory the host
// must back again).
bool huge_blocks() {
  static const bool on = [] {
    const char* e = std::getenv("CAPE_POOL_HUGE");
    return !(e && std::string(e) == "0");
  }();
  return on;
}

// Maps `size` bytes; a huge-page multiple is aligned to a huge page (so THP can back all of
// it) and asks for huge pages.
void* map_block(size_t size) {
  size_t align = size >= kHugeBlock ? kHugeBlock : 0;
  size_t span = size + align;
  void* p = ::mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::bad_alloc();
  if (!align) return p;
  auto at = reinterpret_cast<uintptr_t>(p);
  uintptr_t aligned = (at + align - 1) & ~(uintptr_t{align} - 1);
  if (aligned > at) ::munmap(p, aligned - at);
  if (size_t tail = at + span - (aligned + size)) ::munmap(reinterpret_cast<void*>(aligned + size), tail);
  if (huge_blocks()) ::madvise(reinterpret_cast<void*>(aligned), size, MADV_HUGEPAGE);  // a hint: fine if refused
  return reinterpret_cast<void*>(aligned);
}

struct Pool {
  std::mutex mu;
  std::map<void*, size_t> live;          // big blocks handed out: address -> mapped size
  std::multimap<size_t, void*> free_;    // big blocks kept for reuse: mapped size -> address
  size_t pooled = 0;
  size_t limit;

  Pool() {
    // At most 512 MiB or an eighth of the machine's memory, of which all but kHotBytes is
    // marked MADV_FREE (reclaimable).
    long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
    size_t ram = pages > 0 && page > 0 ? size_t(pages) * size_t(page) : size_t{4} << 30;
    limit = std::min(size_t{512} << 20, ram / 8);
  }
};

Pool& pool() {
  static Pool* p = new Pool;  // never destroyed: blocks may be freed by static destructors
  return *p;
}

}  // namespace

void* allocate(size_t bytes) {
  if (kPlainOnly || bytes < kPooledBlock) return ::operator new(bytes);
  size_t want = round_up(bytes);
  Pool& p = pool();
  {
    std::lock_guard lk(p.mu);
    // Best fit, and not more than twice the need: a 64 MiB block kept for the next 64 MiB
    // checkpoint is not spent on a 1 MiB one.
    auto it = p.free_.lower_bound(want);
    if (it != p.free_.end() && it->first <= 2 * want) {
      void* block = it->second;
      p.pooled -= it->first;
      p.live.emplace(block, it->first);
      p.free_.erase(it);
      return block;
    }
  }
  void* block = map_block(want);
  std::lock_guard lk(p.mu);
  p.live.emplace(block, want);
  return block;
}

void deallocate(void* block, size_t bytes) noexcept {
  if (!block) return;
  if (kPlainOnly || bytes < kPooledBlock) return ::operator delete(block);
  Pool& p = pool();
  size_t size;
  {
    std::lock_guard lk(p.mu);
    auto it = p.live.find(block);
    if (it == p.live.end()) std::terminate();  // not ours: a bug, never silently leak or corrupt
    size = it->second;
    p.live.erase(it);
    if (p.pooled + size <= p.limit && p.free_.size() < kMaxPooledBlocks) {
      // The first kHotBytes are kept as they are, as malloc keeps its heap; past that a block
      // is marked MADV_FREE: reclaimable under pressure, rewritten without faults otherwise.
      // (The madvise costs 0.2-0.5 ms per 64 MiB, 5-8% of a diff of that size.)
      if (p.pooled + size > kHotBytes) ::madvise(block, size, MADV_FREE);
      p.free_.emplace(size, block);
      p.pooled += size;
      return;
    }
  }
  ::munmap(block, size);
}

size_t pooled_bytes() {
  std::lock_guard lk(pool().mu);
  return pool().pooled;
}

size_t pool_limit() { return pool().limit; }

}  // namespace cape::ckpt::buffer_pool

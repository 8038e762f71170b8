// ckpt::Bytes: the byte buffer of checkpoints and of the frames that carry them.
//
// A std::vector<uint8_t> whose allocator does two things the standard one does not:
//
//  - resize() does not zero the new bytes (default-initialisation). Every user of a Bytes
//    overwrites what it grows (a diff's output, a frame read from a socket), and zeroing
//    64 MiB first is a pass over memory as long as the work itself.
//  - Big blocks (>= kPooledBlock) come from mmap (with MADV_HUGEPAGE from kHugeBlock up;
//    CAPE_POOL_HUGE=0: small pages, A/B)
//    and go back to a small process-wide pool when freed: the first 128 MiB as they are,
//    more marked MADV_FREE (the kernel may reclaim them under pressure), past the pool's
//    limit unmapped. On the VMs cape is built on a first touch of fresh memory costs
//    10-12 us per 4 KiB page (64 MiB: ~190 ms, against a 3.5 ms memcpy), 2 MiB huge pages
//    cut that ~20x, and a reused block costs nothing (docs/dickpt-format.md, "Memory").
//    A node makes and receives checkpoints of similar sizes region after region, so the
//    pool turns nearly every big allocation into a reuse.
//
// Under AddressSanitizer every block comes from operator new, so ASan sees them all.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <utility>
#include <vector>

namespace cape::ckpt {

namespace buffer_pool {
inline constexpr size_t kPooledBlock = size_t{128} << 10;  // where glibc would mmap too
inline constexpr size_t kHugeBlock = size_t{2} << 20;      // one x86_64 huge page
void* allocate(size_t bytes);                         // throws std::bad_alloc
void deallocate(void* p, size_t bytes) noexcept;
// Pooled bytes kept for reuse now, and the bound (tests and benchmarks print them).
size_t pooled_bytes();
size_t pool_limit();
}  // namespace buffer_pool

template <class T>
struct BufferAllocator {
  using value_type = T;
  BufferAllocator() = default;
  template <class U>
  BufferAllocator(const BufferAllocator<U>&) noexcept {}

  T* allocate(size_t n) {
    if (n > SIZE_MAX / sizeof(T)) throw std::bad_alloc();
    return static_cast<T*>(buffer_pool::allocate(n * sizeof(T)));
  }
  void deallocate(T* p, size_t n) noexcept { buffer_pool::deallocate(p, n * sizeof(T)); }

  // Value-less construction leaves the bytes as they are (no zero fill on resize()).
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }

  template <class U>
  bool operator==(const BufferAllocator<U>&) const noexcept {
    return true;
  }
};

using Bytes = std::vector<uint8_t, BufferAllocator<uint8_t>>;

}  // namespace cape::ckpt

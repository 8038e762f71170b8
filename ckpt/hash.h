// XXH3-64, the checksum of DICKPT files and of frames, at the speed of the CPU it runs on.
//
// Debian's libxxhash is built for baseline x86-64 (SSE2): 17 GB/s on this machine kind, as
// slow as a kernel copy, and a checkpoint transfer hashes everything twice (sender and
// receiver). The AVX2 build of the same code runs at ~48 GB/s in cache; it is compiled
// from the xxhash header in hash_avx2.c (-mavx2, every function static: nothing of it can
// be linked into code that runs on other CPUs) and picked at run time. Both give the same
// values: XXH3's result does not depend on the vector unit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace cape::ckpt {

uint64_t hash64(std::span<const uint8_t> bytes);

// Streaming: update() in pieces, digest() equals hash64() of the concatenation.
class Hasher {
 public:
  Hasher();
  ~Hasher();
  Hasher(const Hasher&) = delete;
  Hasher& operator=(const Hasher&) = delete;
  void update(const void* data, size_t size);
  uint64_t digest() const;

 private:
  void* state_;
};

}  // namespace cape::ckpt

#include "ckpt/word_scan.h"

#include <immintrin.h>

#include <cstring>

namespace cape::ckpt::word_scan {
namespace {

uint64_t load64(const uint8_t* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

// The counts of a filled bitmap. Always inlined, so that it is compiled for its caller's
// target: with the popcnt instruction inside the AVX2 versions, a libgcc call elsewhere.
__attribute__((always_inline)) inline Changes count(const uint64_t* bitmap, size_t n) {
  Changes c;
  uint64_t carry = 0;  // the last word of the previous group changed
  for (size_t g = 0; g * 64 < n; ++g) {
    c.words += static_cast<unsigned>(__builtin_popcountll(bitmap[g]));
    c.runs += static_cast<unsigned>(__builtin_popcountll(bitmap[g] & ~((bitmap[g] << 1) | carry)));
    carry = bitmap[g] >> 63;
  }
  return c;
}

Changes changed_scalar(const uint8_t* old, const uint8_t* cur, size_t n, uint64_t* bitmap) {
  for (size_t g = 0; g * 64 < n; ++g) {
    uint64_t m = 0;
    size_t end = n - g * 64 < 64 ? n - g * 64 : 64;
    for (size_t i = 0; i < end; ++i) {
      size_t at = 8 * (g * 64 + i);
      m |= uint64_t{load64(old + at) != load64(cur + at)} << i;
    }
    bitmap[g] = m;
  }
  return count(bitmap, n);
}

size_t pack_scalar(const uint8_t* cur, size_t n, const uint64_t* bitmap, uint8_t* out) {
  size_t k = 0;
  for (size_t i = 0; i < n; ++i) {
    // Branch-free: store every word, advance only past the marked ones.
    std::memcpy(out + 8 * k, cur + 8 * i, 8);
    k += (bitmap[i / 64] >> (i % 64)) & 1;
  }
  return 8 * k;
}

// For each 4-bit mask of words to keep, the 32-bit lanes that bring them to the front.
struct PackTable {
  alignas(32) uint32_t lanes[16][8];
};
constexpr PackTable make_pack_table() {
  PackTable t{};
  for (int m = 0; m < 16; ++m) {
    int k = 0;
    for (int i = 0; i < 4; ++i)
      if (m >> i & 1) {
        t.lanes[m][2 * k] = uint32_t(2 * i);
        t.lanes[m][2 * k + 1] = uint32_t(2 * i + 1);
        ++k;
      }
    for (; k < 4; ++k) t.lanes[m][2 * k] = 0, t.lanes[m][2 * k + 1] = 1;
  }
  return t;
}
constexpr PackTable kPack = make_pack_table();

__attribute__((target("avx2,popcnt"))) Changes changed_avx2(const uint8_t* old, const uint8_t* cur, size_t n,
                                                             uint64_t* bitmap) {
  for (size_t g = 0; g * 64 < n; ++g) {
    const size_t base = 64 * g, end = n - base < 64 ? n - base : 64, vec = end & ~size_t{3};
    uint64_t m = 0;  // in a register: no store-to-load chain through bitmap[]
    for (size_t i = 0; i < vec; i += 4) {
      __m256i eq = _mm256_cmpeq_epi64(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(old + 8 * (base + i))),
                                      _mm256_loadu_si256(reinterpret_cast<const __m256i*>(cur + 8 * (base + i))));
      m |= uint64_t{~static_cast<unsigned>(_mm256_movemask_pd(_mm256_castsi256_pd(eq))) & 15u} << i;
    }
    for (size_t i = vec; i < end; ++i)
      m |= uint64_t{load64(old + 8 * (base + i)) != load64(cur + 8 * (base + i))} << i;
    bitmap[g] = m;
  }
  return count(bitmap, n);
}

// Few words marked: visit the set bits instead of every group of words. (Inlined for its
// caller's target, as count() is.)
__attribute__((always_inline)) inline size_t pack_sparse(const uint8_t* cur, size_t n, const uint64_t* bitmap, uint8_t* out) {
  uint8_t* w = out;
  for (size_t g = 0; g * 64 < n; ++g)
    for (uint64_t m = bitmap[g]; m != 0; m &= m - 1) {
      std::memcpy(w, cur + 8 * (64 * g + static_cast<size_t>(__builtin_ctzll(m))), 8);
      w += 8;
    }
  return static_cast<size_t>(w - out);
}

// Below this many marked words out of a block, pack_sparse() is faster.
constexpr unsigned kSparseWords = 48;

__attribute__((target("avx2,popcnt"))) size_t pack_avx2(const uint8_t* cur, size_t n, const uint64_t* bitmap,
                                                         uint8_t* out) {
  if (count(bitmap, n).words < kSparseWords) return pack_sparse(cur, n, bitmap, out);
  uint8_t* w = out;
  const size_t vec = n & ~size_t{3};
  for (size_t i = 0; i < vec; i += 4) {
    unsigned m = static_cast<unsigned>(bitmap[i / 64] >> (i % 64)) & 15u;
    if (m == 0) continue;
    __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(cur + 8 * i));
    __m256i lanes = _mm256_load_si256(reinterpret_cast<const __m256i*>(kPack.lanes[m]));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(w), _mm256_permutevar8x32_epi32(v, lanes));
    w += 8 * __builtin_popcount(m);
  }
  for (size_t i = vec; i < n; ++i)
    if ((bitmap[i / 64] >> (i % 64)) & 1) {
      std::memcpy(w, cur + 8 * i, 8);
      w += 8;
    }
  return static_cast<size_t>(w - out);
}

__attribute__((target("avx2,popcnt"))) Changes scan_and_pack_avx2(const uint8_t* old, const uint8_t* cur, size_t n,
                                                                   uint64_t* bitmap, uint8_t* out) {
  uint8_t* w = out;
  for (size_t g = 0; g * 64 < n; ++g) {
    const size_t base = 64 * g, end = n - base < 64 ? n - base : 64, vec = end & ~size_t{3};
    uint64_t m = 0;
    for (size_t i = 0; i < vec; i += 4) {
      __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(cur + 8 * (base + i)));
      __m256i eq = _mm256_cmpeq_epi64(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(old + 8 * (base + i))), v);
      unsigned ne = ~static_cast<unsigned>(_mm256_movemask_pd(_mm256_castsi256_pd(eq))) & 15u;
      __m256i lanes = _mm256_load_si256(reinterpret_cast<const __m256i*>(kPack.lanes[ne]));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(w), _mm256_permutevar8x32_epi32(v, lanes));
      w += 8 * __builtin_popcount(ne);
      m |= uint64_t{ne} << i;
    }
    for (size_t i = vec; i < end; ++i) {
      uint64_t v = load64(cur + 8 * (base + i));
      bool ne = load64(old + 8 * (base + i)) != v;
      std::memcpy(w, &v, 8);
      w += 8 * ne;
      m |= uint64_t{ne} << i;
    }
    bitmap[g] = m;
  }
  return count(bitmap, n);
}

}  // namespace

Isa best_isa() {
  static const Isa best = [] {
    __builtin_cpu_init();  // may run before libgcc's own constructor
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt") ? Isa::avx2 : Isa::portable;
  }();
  return best;
}

Changes changed_words(Isa isa, const uint8_t* old, const uint8_t* cur, size_t n, uint64_t* bitmap) {
  switch (isa) {
    case Isa::avx2: return changed_avx2(old, cur, n, bitmap);
    case Isa::portable: break;
  }
  return changed_scalar(old, cur, n, bitmap);
}

size_t pack_words(Isa isa, const uint8_t* cur, size_t n, const uint64_t* bitmap, uint8_t* out) {
  switch (isa) {
    case Isa::avx2: return pack_avx2(cur, n, bitmap, out);
    case Isa::portable: break;
  }
  return pack_scalar(cur, n, bitmap, out);
}

Changes scan_and_pack(Isa isa, const uint8_t* old, const uint8_t* cur, size_t n, uint64_t* bitmap, uint8_t* out) {
  if (isa == Isa::avx2) return scan_and_pack_avx2(old, cur, n, bitmap, out);
  Changes c = changed_scalar(old, cur, n, bitmap);
  pack_scalar(cur, n, bitmap, out);
  return c;
}

Changes changed_words(const uint8_t* old, const uint8_t* cur, size_t n, uint64_t* bitmap) {
  return changed_words(best_isa(), old, cur, n, bitmap);
}

Changes scan_and_pack(const uint8_t* old, const uint8_t* cur, size_t n, uint64_t* bitmap, uint8_t* out) {
  return scan_and_pack(best_isa(), old, cur, n, bitmap, out);
}

size_t pack_words(const uint8_t* cur, size_t n, const uint64_t* bitmap, uint8_t* out) {
  return pack_words(best_isa(), cur, n, bitmap, out);
}

}  // namespace cape::ckpt::word_scan

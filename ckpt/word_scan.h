// The inner loops of a diff, over up to one 4 KiB block (512 words) at a time:
//
//   changed_words(old, cur, n, bitmap)         bit i of bitmap = word i of cur differs from old
//   pack_words(cur, n, bitmap, out)            copies the words whose bit is set, in order
//   scan_and_pack(old, cur, n, bitmap, out)    both in one pass (for runs of dense blocks)
//
// Each has an AVX2 version (4 words per compare, a compress through a permutation table;
// few marked words are copied bit by bit) picked at run time where the CPU has it, and a
// branch-free scalar one. On this machine kind, a whole diff of 64 MiB (docs/dickpt-format.md)
// takes 4.2-6.9 ms with AVX2 against 11.5-12 ms scalar, memcpy of 64 MiB ~3.4 ms. An AVX-512
// version was measured slower (7.3-8.9 ms: 64-byte loads split cache lines on inputs that
// are not 64-byte aligned) and not kept.
#pragma once

#include <cstddef>
#include <cstdint>

namespace cape::ckpt::word_scan {

inline constexpr size_t kBlockWords = 512;
// pack_words() may write this many bytes past the last packed word.
inline constexpr size_t kPackSlack = 32;

enum class Isa { portable, avx2 };
Isa best_isa();  // the best this CPU runs; what the calls without an Isa use

struct Changes {
  unsigned words = 0;  // changed words
  unsigned runs = 0;   // stretches of consecutive changed words
};

// `n` <= kBlockWords words at `old` and `cur` (any alignment). Fills bitmap[0 .. (n+63)/64)
// (bits past n are 0) and counts what changed.
Changes changed_words(const uint8_t* old, const uint8_t* cur, size_t n, uint64_t* bitmap);
Changes changed_words(Isa isa, const uint8_t* old, const uint8_t* cur, size_t n, uint64_t* bitmap);

// Copies the words of `cur` marked in `bitmap` (n <= kBlockWords) to `out`, back to back.
// Returns the bytes written; `out` needs kPackSlack bytes of room past them.
size_t pack_words(const uint8_t* cur, size_t n, const uint64_t* bitmap, uint8_t* out);
size_t pack_words(Isa isa, const uint8_t* cur, size_t n, const uint64_t* bitmap, uint8_t* out);

// changed_words() and pack_words() in one pass: the changed words are packed to `out`
// (which needs 8 n + kPackSlack bytes) whatever the counts turn out to be. One read of
// `cur` instead of two where most blocks are dense; wasted packing where they are not.
Changes scan_and_pack(const uint8_t* old, const uint8_t* cur, size_t n, uint64_t* bitmap, uint8_t* out);
Changes scan_and_pack(Isa isa, const uint8_t* old, const uint8_t* cur, size_t n, uint64_t* bitmap, uint8_t* out);

// The portable versions, whatever the CPU (tests check both give the same results).
Changes changed_words_scalar(const uint8_t* old, const uint8_t* cur, size_t n, uint64_t* bitmap);
size_t pack_words_scalar(const uint8_t* cur, size_t n, const uint64_t* bitmap, uint8_t* out);

}  // namespace cape::ckpt::word_scan

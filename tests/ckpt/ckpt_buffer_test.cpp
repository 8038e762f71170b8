// The checksum (ckpt/hash.h) and the buffer pool behind ckpt::Bytes.
#include <gtest/gtest.h>

#include <random>

#include "ckpt/format.h"
#include "ckpt/hash.h"
#include "ckpt_test_util.h"

#include <xxhash.h>

namespace cape::ckpt::test {
namespace {

// ---- the checksum ----------------------------------------------------------------------

// The AVX2 build (where the CPU has it) gives the library's values, one shot or in pieces.
TEST(Hash, SameValuesAsLibxxhashWholeAndStreamed) {
  std::mt19937_64 rng(13);
  for (size_t n : {size_t{0}, size_t{1}, size_t{16}, size_t{17}, size_t{240}, size_t{241}, size_t{1024},
                   size_t{4096} + 3, size_t{1} << 20}) {
    Bytes b = random_bytes(rng, n);
    uint64_t want = XXH3_64bits(b.data(), b.size());
    EXPECT_EQ(hash64(b), want) << n;
    Hasher h;
    for (size_t at = 0; at < n;) {
      size_t take = std::min(n - at, 1 + rng() % 5000);
      h.update(b.data() + at, take);
      at += take;
    }
    EXPECT_EQ(h.digest(), want) << n;
  }
}

// ---- the buffer pool ------------------------------------------------------------------

TEST(Buffer, BigBlocksAreReusedAndGrowingDoesNotZero) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "under ASan every block comes from operator new";
#else
  const uint8_t* first;
  {
    Bytes a(8 << 20, 0x5a);
    first = a.data();
  }
  EXPECT_GE(buffer_pool::pooled_bytes(), size_t{8} << 20);
  Bytes b;
  b.resize(7 << 20);  // best fit: the same block, its old bytes still there (no zero fill)
  EXPECT_EQ(b.data(), first);
  EXPECT_EQ(b[12345], 0x5a);
  Bytes small(1 << 20);  // not a big block: not from the pool
  EXPECT_NE(small.data(), first);
  EXPECT_LE(buffer_pool::pooled_bytes(), buffer_pool::pool_limit());
#endif
}

}  // namespace
}  // namespace cape::ckpt::test

// ckpt::reduction_identity: for every operator and element type, reduce(identity, x) == x
// (the property that lets every node start a reduction variable from it), and the values
// OpenMP names for a few of them.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "ckpt/ops.h"

namespace cape::ckpt {
namespace {

template <class T>
std::vector<uint8_t> bytes_of(const std::vector<T>& v) {
  std::vector<uint8_t> b(v.size() * sizeof(T));
  std::memcpy(b.data(), v.data(), b.size());
  return b;
}

template <class T>
std::vector<T> values_of(const std::vector<uint8_t>& b) {
  std::vector<T> v(b.size() / sizeof(T));
  std::memcpy(v.data(), b.data(), b.size());
  return v;
}

// Values an operator may meet: logical operators see 0 and 1 (C's && and || yield those).
template <class T>
std::vector<T> samples(ReduceOp op, std::mt19937_64& rng) {
  if (op == ReduceOp::land || op == ReduceOp::lor) return {T(0), T(1), T(1), T(0)};
  std::vector<T> v = {T(0), T(1), std::numeric_limits<T>::lowest(), std::numeric_limits<T>::max()};
  for (int i = 0; i < 12; i++) {
    if constexpr (std::is_floating_point_v<T>)
      v.push_back(static_cast<T>(std::uniform_real_distribution<double>(-1e6, 1e6)(rng)));
    else
      v.push_back(static_cast<T>(rng()));
  }
  return v;
}

template <class T>
void expect_identity(ElemType type, std::mt19937_64& rng) {
  for (ReduceOp op : {ReduceOp::add, ReduceOp::sub, ReduceOp::mul, ReduceOp::band, ReduceOp::bor,
                      ReduceOp::bxor, ReduceOp::land, ReduceOp::lor, ReduceOp::min, ReduceOp::max}) {
    if (std::is_floating_point_v<T> && (op == ReduceOp::band || op == ReduceOp::bor || op == ReduceOp::bxor))
      continue;  // no bitwise reductions of floating types (check_reduction refuses them)
    Reduction r{op, type};
    std::vector<T> x = samples<T>(op, rng);
    std::vector<uint8_t> acc = reduction_identity(r, x.size() * sizeof(T));
    ASSERT_EQ(acc.size(), x.size() * sizeof(T));
    reduce(r, acc, bytes_of(x));
    EXPECT_EQ(values_of<T>(acc), x) << to_string(op) << " " << to_string(type);
  }
}

TEST(ReductionIdentity, LeavesEveryValueUnchanged) {
  std::mt19937_64 rng(5);
  expect_identity<int8_t>(ElemType::i8, rng);
  expect_identity<uint8_t>(ElemType::u8, rng);
  expect_identity<int16_t>(ElemType::i16, rng);
  expect_identity<uint16_t>(ElemType::u16, rng);
  expect_identity<int32_t>(ElemType::i32, rng);
  expect_identity<uint32_t>(ElemType::u32, rng);
  expect_identity<int64_t>(ElemType::i64, rng);
  expect_identity<uint64_t>(ElemType::u64, rng);
  expect_identity<float>(ElemType::f32, rng);
  expect_identity<double>(ElemType::f64, rng);
}

TEST(ReductionIdentity, TheValuesOpenMPNames) {
  EXPECT_EQ(values_of<int32_t>(reduction_identity({ReduceOp::add, ElemType::i32}, 8)), (std::vector<int32_t>{0, 0}));
  EXPECT_EQ(values_of<int32_t>(reduction_identity({ReduceOp::mul, ElemType::i32}, 4))[0], 1);
  EXPECT_EQ(values_of<uint16_t>(reduction_identity({ReduceOp::band, ElemType::u16}, 2))[0], 0xffff);
  EXPECT_EQ(values_of<int64_t>(reduction_identity({ReduceOp::min, ElemType::i64}, 8))[0],
            std::numeric_limits<int64_t>::max());
  EXPECT_EQ(values_of<int8_t>(reduction_identity({ReduceOp::max, ElemType::i8}, 1))[0], -128);
  double d = values_of<double>(reduction_identity({ReduceOp::max, ElemType::f64}, 8))[0];
  EXPECT_TRUE(std::isinf(d) && d < 0);
  float f = values_of<float>(reduction_identity({ReduceOp::min, ElemType::f32}, 4))[0];
  EXPECT_TRUE(std::isinf(f) && f > 0);
}

}  // namespace
}  // namespace cape::ckpt

// Helpers the checkpoint tests share (ckpt_*_test.cpp): random images and changes, a sample
// delta, and checks of the reader's error messages.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "ckpt/format.h"

namespace cape::ckpt::test {

using File = std::vector<uint8_t>;  // serialize()'s output; checkpoints hold ckpt::Bytes

inline Bytes random_bytes(std::mt19937_64& rng, size_t n) {
  Bytes b(n);
  for (auto& x : b) x = static_cast<uint8_t>(rng());
  return b;
}

// A complete image of `regions` (address, bytes).
inline Checkpoint image_of(std::vector<std::pair<uint64_t, Bytes>> regions) {
  Checkpoint c;
  c.kind = Kind::complete;
  for (auto& [addr, bytes] : regions) c.append(addr, bytes, 0);
  return c;
}

// `base` with a fraction `rate` of its bytes changed (whole words or single bytes).
inline Bytes mutate(std::mt19937_64& rng, Bytes base, double rate) {
  std::bernoulli_distribution pick(rate);
  for (size_t i = 0; i < base.size(); ++i)
    if (pick(rng)) base[i] = static_cast<uint8_t>(base[i] + 1 + rng() % 255);
  return base;
}

inline Checkpoint sample_delta() {
  Checkpoint c;
  c.kind = Kind::delta;
  c.node = 2;
  c.sequence = 7;
  c.timestamp = 42;
  c.load_base = 0x555555554000;
  c.name = "after";
  c.registers = Registers{Arch::x86_64, std::vector<uint8_t>(216, 0xab)};
  Bytes a = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  c.append(0x1000, a, 42);
  Bytes r(16, 0);
  int64_t v[2] = {5, -3};
  std::memcpy(r.data(), v, 16);
  c.append(0x2000, r, 43, {ReduceOp::add, ElemType::i64});
  c.append(0x3001, Bytes{0xff}, 42);
  return c;
}

// Expects parse() to fail with a message holding `needle`.
inline void expect_parse_error(std::span<const uint8_t> bytes, const std::string& needle, bool checksum = true) {
  try {
    parse(bytes, {checksum});
    ADD_FAILURE() << "parsed without error; expected: " << needle;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << "message: " << e.what();
  }
}

// Rewrites a field; the tests that use it parse without the checksum to reach the
// structural checks behind it.
inline File patch(File f, size_t at, uint64_t value, size_t width) {
  std::memcpy(f.data() + at, &value, width);
  return f;
}

}  // namespace cape::ckpt::test

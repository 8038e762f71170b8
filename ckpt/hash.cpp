#include "ckpt/hash.h"

#include <xxhash.h>

#include <new>

#include "ckpt/hash_avx2.h"

namespace cape::ckpt {
namespace {

bool have_avx2() {
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2");
  }();
  return yes;
}

}  // namespace

uint64_t hash64(std::span<const uint8_t> bytes) {
  return have_avx2() ? cape_xxh3_avx2(bytes.data(), bytes.size()) : XXH3_64bits(bytes.data(), bytes.size());
}

Hasher::Hasher() {
  if (have_avx2()) {
    state_ = cape_xxh3_avx2_create();
  } else {
    XXH3_state_t* s = XXH3_createState();
    if (s) XXH3_64bits_reset(s);
    state_ = s;
  }
  if (!state_) throw std::bad_alloc();
}

Hasher::~Hasher() {
  if (have_avx2())
    cape_xxh3_avx2_free(state_);
  else
    XXH3_freeState(static_cast<XXH3_state_t*>(state_));
}

void Hasher::update(const void* data, size_t size) {
  if (have_avx2())
    cape_xxh3_avx2_update(state_, data, size);
  else
    XXH3_64bits_update(static_cast<XXH3_state_t*>(state_), data, size);
}

uint64_t Hasher::digest() const {
  return have_avx2() ? cape_xxh3_avx2_digest(state_) : XXH3_64bits_digest(static_cast<const XXH3_state_t*>(state_));
}

}  // namespace cape::ckpt

/* XXH3-64 compiled for AVX2 (this file alone is built with -mavx2; see hash.h). With
 * XXH_INLINE_ALL every xxhash function is static to this file, so none of its AVX2 code
 * can be shared with code that runs on CPUs without AVX2. */
#define XXH_INLINE_ALL
#include <stdlib.h>
#include <xxhash.h>

#include "ckpt/hash_avx2.h"

uint64_t cape_xxh3_avx2(const void* data, size_t size) { return XXH3_64bits(data, size); }

void* cape_xxh3_avx2_create(void) {
  XXH3_state_t* s = XXH3_createState();
  if (s) XXH3_64bits_reset(s);
  return s;
}

void cape_xxh3_avx2_free(void* state) { XXH3_freeState((XXH3_state_t*)state); }

void cape_xxh3_avx2_update(void* state, const void* data, size_t size) {
  XXH3_64bits_update((XXH3_state_t*)state, data, size);
}

uint64_t cape_xxh3_avx2_digest(const void* state) { return XXH3_64bits_digest((const XXH3_state_t*)state); }

/* The AVX2 build of XXH3 (hash_avx2.c): call only where the CPU has AVX2. */
#pragma once

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

uint64_t cape_xxh3_avx2(const void* data, size_t size);
void* cape_xxh3_avx2_create(void);  /* reset; NULL when out of memory */
void cape_xxh3_avx2_free(void* state);
void cape_xxh3_avx2_update(void* state, const void* data, size_t size);
uint64_t cape_xxh3_avx2_digest(const void* state);

#ifdef __cplusplus
}
#endif

// DICKPT files: the binary encoding of a Checkpoint (docs/dickpt-format.md is the spec).
//
//   +--------------------------------------------------------------+  offset
//   | magic "\x89DICKPT\n" | version u16 | kind u8 | flags u8      |  0
//   | node u32 | sequence u64 | timestamp u64 | load_base u64      |  12
//   | run_count u64 | name_len u32 | reg_arch u16 | reg_len u16    |  40
//   | payload_bytes u64                                            |  56
//   +--------------------------------------------------------------+  64
//   | name (name_len bytes, zero-padded to 8)                      |
//   | registers (reg_len bytes, zero-padded to 8), if flags & 1    |
//   +--------------------------------------------------------------+
//   | run: address u64 | length u64 | timestamp u64 |              |
//   |      op u8 | type u8 | 6 zero bytes | data, zero-padded to 8 |  x run_count
//   +--------------------------------------------------------------+
//   | XXH3-64 of every byte before it (u64)                        |
//   +--------------------------------------------------------------+
//
// All integers little-endian. The reader checks every count, length and offset against
// the buffer before it touches data and never allocates more than the buffer's size.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ckpt/checkpoint.h"

namespace cape::ckpt {

inline constexpr uint16_t kFormatVersion = 1;
inline constexpr uint8_t kMagic[8] = {0x89, 'D', 'I', 'C', 'K', 'P', 'T', '\n'};
inline constexpr size_t kHeaderSize = 64;
inline constexpr size_t kRunHeaderSize = 32;
inline constexpr size_t kTrailerSize = 8;
inline constexpr uint32_t kMaxNameLength = 4096;
inline constexpr uint16_t kMaxRegisterLength = 4096;

std::vector<uint8_t> serialize(const Checkpoint& c);

struct ParseOptions {
  bool verify_checksum = true;  // off only for the fuzzer, to reach the structural checks
};
// Throws Error with what is wrong and where (byte offset).
Checkpoint parse(std::span<const uint8_t> file, ParseOptions options = {});

// Writes atomically (temporary file + rename) so a crash never leaves half a checkpoint.
// Errors name the path.
void write_file(const Checkpoint& c, const std::string& path);
Checkpoint read_file(const std::string& path);

}  // namespace cape::ckpt

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
//   | mapping changes, if flags & 2 (version 3): count u32 | 0 u32 |
//   |   then start u64 | end u64 | kind u8 | prot u8 | 6 zero bytes |  x count
//   | process section, if flags & 4 (version 4, complete kind):    |
//   |   length u64 | records (ckpt/process_image.h)                |
//   +--------------------------------------------------------------+
//   | run table: address u64 | length u64 | timestamp u64 |        |
//   |            op u8 | type u8 | flags u8 | 5 zero bytes         |  x run_count
//   +--------------------------------------------------------------+
//   | data: every run's stored bytes, back to back in run order    |  payload_bytes
//   |       (plain: the memory; masked: word bitmap + set words)   |
//   | zero padding to a multiple of 8                              |
//   +--------------------------------------------------------------+
//   | XXH3-64 of every byte before it (u64)                        |
//   +--------------------------------------------------------------+
//
// All integers little-endian. Version 2 added masked runs (run flag 1), version 3 mapping
// changes (header flag 2), version 4 the process section of a complete checkpoint of a
// whole process (header flag 4); a file is written with the oldest version that holds it, so a
// checkpoint without either is version 1, which every cape reads. The data block is laid out as
// Checkpoint::bytes is in memory, so a checkpoint is sent without copying its data
// (serialize_parts) and a received buffer becomes a Checkpoint as it is (parse of an
// owned buffer).
// The reader checks every count, length and offset against the buffer before it touches
// data and never allocates more than the buffer's size.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ckpt/checkpoint.h"

namespace cape::ckpt {

inline constexpr uint16_t kFormatVersion = 4;  // the newest this cape reads and writes
inline constexpr uint8_t kMagic[8] = {0x89, 'D', 'I', 'C', 'K', 'P', 'T', '\n'};
inline constexpr size_t kHeaderSize = 64;
inline constexpr size_t kRunHeaderSize = 32;
inline constexpr size_t kTrailerSize = 8;
inline constexpr uint32_t kMaxNameLength = 4096;
inline constexpr uint16_t kMaxRegisterLength = 4096;

// The file in three pieces, for writev/sendmsg without copying the run data: `prefix`
// (header, name, registers, run table), `data` (the runs' bytes: a view of the
// Checkpoint's own buffer, which must outlive the parts), `suffix` (padding and checksum).
struct SerializedParts {
  std::vector<uint8_t> prefix;
  std::span<const uint8_t> data;
  std::vector<uint8_t> suffix;
  std::vector<uint8_t> compacted;  // holds `data` when the checkpoint's bytes were not in run order
  size_t size() const { return prefix.size() + data.size() + suffix.size(); }
};
struct SerializeOptions {
  // Off: the trailer's checksum is written as 0. For transports that check the bytes
  // themselves (a frame's payload hash covers the file), so the data is hashed once.
  bool checksum = true;
};
SerializedParts serialize_parts(const Checkpoint& c, SerializeOptions options = {});
std::vector<uint8_t> serialize(const Checkpoint& c);  // the three parts in one buffer
// The version serialize() writes for `c`: 4 with a process section, 3 with mapping changes, else 2 with a masked run, else 1.
uint16_t format_version(const Checkpoint& c);

struct ParseOptions {
  bool verify_checksum = true;  // off only for the fuzzer, to reach the structural checks
};
// Throws Error with what is wrong and where (byte offset).
Checkpoint parse(std::span<const uint8_t> file, ParseOptions options = {});
// The same, taking ownership of `buffer`, whose file starts at `offset`: the buffer becomes
// the Checkpoint's bytes as it is, runs pointing at their data inside it (nothing copied).
Checkpoint parse(Bytes&& buffer, size_t offset, ParseOptions options = {});

// Checks a file's first kHeaderSize bytes: magic, version, and that the sizes it declares
// (name, registers, run table, payload, mapping table) add up to `file_size`. parse() and
// read_file() call it before they hash or read the rest, so a huge or garbage file is
// refused at once. Throws Error.
void check_header(std::span<const uint8_t> first_bytes, uint64_t file_size);

// Writes atomically (temporary file + rename) so a crash never leaves half a checkpoint.
// Errors name the path.
void write_file(const Checkpoint& c, const std::string& path);
// Reads and parses `path`, refusing what is not a regular file (a FIFO does not block) and
// reading nothing past the header of a file whose size does not match it. Errors name the path.
Checkpoint read_file(const std::string& path);

}  // namespace cape::ckpt

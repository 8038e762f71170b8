#include "ckpt/format.h"

#include "ckpt/hash.h"
#include "ckpt/process_image.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <optional>

namespace cape::ckpt {
namespace {

constexpr uint8_t kFlagRegisters = 1;
constexpr uint8_t kFlagMappings = 2;  // version 3: a mapping-change table follows the registers
constexpr size_t kMappingEntrySize = 24;
constexpr uint8_t kFlagProcess = 4;  // version 4: a process section follows the mapping changes
constexpr uint64_t kMaxProcessSection = 64 << 20;

size_t pad8(size_t n) { return (n + 7) & ~size_t{7}; }

// Little-endian stores and loads (x86_64 is little-endian; memcpy keeps them alignment-safe).
template <class T>
void put(std::vector<uint8_t>& out, size_t at, T v) {
  static_assert(std::endian::native == std::endian::little, "cape targets little-endian machines");
  std::memcpy(out.data() + at, &v, sizeof v);
}

template <class T>
T get(std::span<const uint8_t> in, size_t at) {
  T v;
  std::memcpy(&v, in.data() + at, sizeof v);
  return v;
}

std::string at_offset(size_t off) { return " (at byte " + std::to_string(off) + ")"; }

// Where the runs' stored bytes lie in run order, back to back, in `bytes`: then they are
// the file's data block as they are. Returns that block, or nothing.
std::optional<std::span<const uint8_t>> data_in_run_order(const Checkpoint& c) {
  if (c.runs.empty()) return std::span<const uint8_t>();
  uint64_t start = c.runs.front().offset, at = start;
  for (const Run& r : c.runs) {
    if (r.offset != at) return std::nullopt;
    at += r.stored();
  }
  return std::span<const uint8_t>(c.bytes.data() + start, at - start);
}

constexpr uint8_t kRunMasked = 1;

}  // namespace

uint16_t format_version(const Checkpoint& c) {
  if (!c.process.empty()) return 4;
  if (!c.mappings.empty()) return 3;
  for (const Run& r : c.runs)
    if (r.masked()) return 2;
  return 1;
}

SerializedParts serialize_parts(const Checkpoint& c, SerializeOptions options) {
  check_invariants(c);
  if (c.name.size() > kMaxNameLength) throw Error("checkpoint name longer than 4096 bytes");
  if (c.registers && c.registers->bytes.size() > kMaxRegisterLength)
    throw Error("register set larger than 4096 bytes");
  if (c.registers && c.registers->bytes.empty()) throw Error("an empty register set (no registers: leave it out)");

  SerializedParts parts;
  if (auto block = data_in_run_order(c)) {
    parts.data = *block;
  } else {
    for (const Run& r : c.runs) parts.compacted.insert(parts.compacted.end(), c.data(r).begin(), c.data(r).end());
    parts.data = parts.compacted;
  }

  if (c.mappings.size() > UINT32_MAX) throw Error("too many mapping changes");
  if (!c.process.empty() && c.kind == Kind::merged) throw Error("a process section in a merged checkpoint");
  if (c.process.size() % 8 || c.process.size() > kMaxProcessSection) throw Error("a process section of a bad size");
  size_t map_bytes = c.mappings.empty() ? 0 : 8 + c.mappings.size() * kMappingEntrySize;
  size_t process_bytes = c.process.empty() ? 0 : 8 + c.process.size();
  size_t prefix = kHeaderSize + pad8(c.name.size()) + (c.registers ? pad8(c.registers->bytes.size()) : 0) +
                  map_bytes + process_bytes + c.runs.size() * kRunHeaderSize;
  std::vector<uint8_t>& out = parts.prefix;
  out.assign(prefix, 0);  // zero fill gives the padding and reserved bytes
  std::memcpy(out.data(), kMagic, sizeof kMagic);
  put<uint16_t>(out, 8, format_version(c));
  put<uint8_t>(out, 10, static_cast<uint8_t>(c.kind));
  put<uint8_t>(out, 11, static_cast<uint8_t>((c.registers ? kFlagRegisters : 0) | (map_bytes ? kFlagMappings : 0) |
                                             (process_bytes ? kFlagProcess : 0)));
  put<uint32_t>(out, 12, c.node);
  put<uint64_t>(out, 16, c.sequence);
  put<uint64_t>(out, 24, c.timestamp);
  put<uint64_t>(out, 32, c.load_base);
  put<uint64_t>(out, 40, c.runs.size());
  put<uint32_t>(out, 48, static_cast<uint32_t>(c.name.size()));
  put<uint16_t>(out, 52, static_cast<uint16_t>(c.registers ? c.registers->arch : Arch::none));
  put<uint16_t>(out, 54, static_cast<uint16_t>(c.registers ? c.registers->bytes.size() : 0));
  put<uint64_t>(out, 56, parts.data.size());

  size_t at = kHeaderSize;
  if (!c.name.empty()) std::memcpy(out.data() + at, c.name.data(), c.name.size());
  at += pad8(c.name.size());
  if (c.registers) {
    std::memcpy(out.data() + at, c.registers->bytes.data(), c.registers->bytes.size());  // not empty
    at += pad8(c.registers->bytes.size());
  }
  if (map_bytes) {
    put<uint32_t>(out, at, static_cast<uint32_t>(c.mappings.size()));
    at += 8;
    for (const MapChange& m : c.mappings) {
      put<uint64_t>(out, at, m.start);
      put<uint64_t>(out, at + 8, m.end);
      put<uint8_t>(out, at + 16, static_cast<uint8_t>(m.what));
      put<uint8_t>(out, at + 17, m.prot);
      at += kMappingEntrySize;
    }
  }
  if (process_bytes) {
    put<uint64_t>(out, at, c.process.size());
    std::memcpy(out.data() + at + 8, c.process.data(), c.process.size());
    at += process_bytes;
  }
  for (const Run& r : c.runs) {
    put<uint64_t>(out, at, r.address);
    put<uint64_t>(out, at + 8, r.length);
    put<uint64_t>(out, at + 16, r.timestamp);
    put<uint8_t>(out, at + 24, static_cast<uint8_t>(r.reduction.op));
    put<uint8_t>(out, at + 25, static_cast<uint8_t>(r.reduction.type));
    put<uint8_t>(out, at + 26, r.masked() ? kRunMasked : 0);
    at += kRunHeaderSize;
  }

  parts.suffix.assign(pad8(parts.data.size()) - parts.data.size() + kTrailerSize, 0);
  if (!options.checksum) return parts;
  Hasher h;
  h.update(parts.prefix.data(), parts.prefix.size());
  h.update(parts.data.data(), parts.data.size());
  h.update(parts.suffix.data(), parts.suffix.size() - kTrailerSize);
  uint64_t sum = h.digest();
  put<uint64_t>(parts.suffix, parts.suffix.size() - kTrailerSize, sum);
  return parts;
}

std::vector<uint8_t> serialize(const Checkpoint& c) {
  SerializedParts p = serialize_parts(c);
  std::vector<uint8_t> out;
  out.reserve(p.size());
  out.insert(out.end(), p.prefix.begin(), p.prefix.end());
  out.insert(out.end(), p.data.begin(), p.data.end());
  out.insert(out.end(), p.suffix.begin(), p.suffix.end());
  return out;
}

namespace {

// The file size the 64-byte header declares, checked against `file_size`. Throws Error when
// they disagree. The mapping table's entry count is in the body, so with the mappings flag
// the rest must be an 8-byte count plus whole 24-byte entries.
void check_declared_size(std::span<const uint8_t> h, uint64_t file_size) {
  auto flags = get<uint8_t>(h, 11);
  auto run_count = get<uint64_t>(h, 40);
  auto name_len = get<uint32_t>(h, 48);
  auto reg_len = get<uint16_t>(h, 54);
  auto payload = get<uint64_t>(h, 56);
  // Each term is bounded by the file size before they are added, so nothing overflows.
  if (name_len > kMaxNameLength) throw Error("name length " + std::to_string(name_len) + " exceeds 4096" + at_offset(48));
  if (run_count > file_size / kRunHeaderSize)
    throw Error("run count " + std::to_string(run_count) + " cannot fit in a file of " + std::to_string(file_size) +
                " bytes" + at_offset(40));
  if (payload > file_size)
    throw Error("payload size " + std::to_string(payload) + " exceeds the file's " + std::to_string(file_size) +
                " bytes" + at_offset(56));
  uint64_t fixed = kHeaderSize + pad8(name_len) + ((flags & kFlagRegisters) ? pad8(reg_len) : 0) +
                   run_count * kRunHeaderSize + pad8(payload) + kTrailerSize;
  if (fixed > file_size)
    throw Error("truncated: the header declares " + std::to_string(fixed) + " bytes at least, the file has " +
                std::to_string(file_size));
  uint64_t rest = file_size - fixed;
  if (flags & kFlagProcess) {
    // Its size (and the mapping table's) is in the body: parse() checks them exactly.
    uint64_t least = ((flags & kFlagMappings) ? 8 + kMappingEntrySize : 0) + 8;
    if (rest < least || rest % 8 != 0)
      throw Error("the file's size (" + std::to_string(file_size) + " bytes) does not match its header and " +
                  "its mapping and process tables (" + std::to_string(rest) + " bytes left for them)");
  } else if (flags & kFlagMappings) {
    if (rest < 8 + kMappingEntrySize || (rest - 8) % kMappingEntrySize != 0)
      throw Error("the file's size (" + std::to_string(file_size) + " bytes) does not match its header and " +
                  "a mapping table (" + std::to_string(rest) + " bytes left for it)");
  } else if (rest != 0) {
    throw Error("the file is " + std::to_string(file_size) + " bytes but its header declares " +
                std::to_string(fixed));
  }
}

// Checks everything but the data block's contents and fills all of `c` but its bytes.
// Returns where the data block starts.
size_t parse_layout(std::span<const uint8_t> in, ParseOptions options, Checkpoint& c) {
  if (in.size() < kHeaderSize + kTrailerSize)
    throw Error("truncated: " + std::to_string(in.size()) + " bytes is shorter than the " +
                std::to_string(kHeaderSize + kTrailerSize) + "-byte minimum of a DICKPT file");
  // A huge or garbage file is refused from its first 64 bytes, before anything is hashed.
  check_header(in.first(kHeaderSize), in.size());
  auto version = get<uint16_t>(in, 8);

  size_t body = in.size() - kTrailerSize;
  if (options.verify_checksum) {
    uint64_t want = get<uint64_t>(in, body);
    uint64_t have = hash64(in.first(body));
    if (want != have) throw Error("checksum mismatch: the file is corrupt or truncated");
  }

  auto kind = get<uint8_t>(in, 10);
  if (kind < 1 || kind > 3) throw Error("unknown checkpoint kind " + std::to_string(kind) + at_offset(10));
  c.kind = static_cast<Kind>(kind);
  auto flags = get<uint8_t>(in, 11);
  if (flags & ~(kFlagRegisters | kFlagMappings | kFlagProcess))
    throw Error("unknown header flags " + std::to_string(flags) + at_offset(11));
  if ((flags & kFlagMappings) && version < 3)
    throw Error("mapping changes in a version " + std::to_string(version) + " file" + at_offset(11));
  if ((flags & kFlagProcess) && (version < 4 || kind == static_cast<uint8_t>(Kind::merged)))
    throw Error("a process section in a version " + std::to_string(version) + " " +
                to_string(static_cast<Kind>(kind)) + " file (complete checkpoints and their deltas of version 4 only)" +
                at_offset(11));
  c.node = get<uint32_t>(in, 12);
  c.sequence = get<uint64_t>(in, 16);
  c.timestamp = get<uint64_t>(in, 24);
  c.load_base = get<uint64_t>(in, 32);
  auto run_count = get<uint64_t>(in, 40);
  auto name_len = get<uint32_t>(in, 48);
  auto reg_arch = get<uint16_t>(in, 52);
  auto reg_len = get<uint16_t>(in, 54);
  auto payload = get<uint64_t>(in, 56);

  size_t at = kHeaderSize;
  auto remaining = [&] { return body - at; };

  if (pad8(name_len) > remaining()) throw Error("truncated in the name" + at_offset(at));
  c.name.assign(reinterpret_cast<const char*>(in.data() + at), name_len);
  at += pad8(name_len);

  if (flags & kFlagRegisters) {
    if (reg_arch != static_cast<uint16_t>(Arch::x86_64))
      throw Error("unknown register architecture " + std::to_string(reg_arch) + at_offset(52));
    if (reg_len == 0) throw Error("the registers flag is set with an empty register set" + at_offset(54));
    if (pad8(reg_len) > remaining()) throw Error("truncated in the registers" + at_offset(at));
    c.registers = Registers{Arch::x86_64, {in.begin() + at, in.begin() + at + reg_len}};
    at += pad8(reg_len);
  } else if (reg_arch != 0 || reg_len != 0) {
    throw Error("register fields set without the registers flag" + at_offset(52));
  }

  if (flags & kFlagMappings) {
    if (8 > remaining()) throw Error("truncated in the mapping changes" + at_offset(at));
    auto count = get<uint32_t>(in, at);
    if (get<uint32_t>(in, at + 4) != 0) throw Error("nonzero reserved bytes after the mapping count" + at_offset(at + 4));
    at += 8;
    if (count == 0) throw Error("the mappings flag is set with no mapping change" + at_offset(at - 8));
    if (count > remaining() / kMappingEntrySize)
      throw Error("mapping change count " + std::to_string(count) + " cannot fit in the file" + at_offset(at - 8));
    c.mappings.reserve(count);
    for (uint32_t i = 0; i < count; ++i) {
      MapChange m;
      m.start = get<uint64_t>(in, at);
      m.end = get<uint64_t>(in, at + 8);
      m.what = static_cast<MapChange::What>(get<uint8_t>(in, at + 16));
      m.prot = get<uint8_t>(in, at + 17);
      for (size_t k = 18; k < kMappingEntrySize; ++k)
        if (in[at + k] != 0) throw Error("mapping change " + std::to_string(i) + " has nonzero reserved bytes" + at_offset(at + k));
      c.mappings.push_back(m);
      at += kMappingEntrySize;
    }
    try {
      check_mappings(c.mappings);
    } catch (const Error& e) {
      throw Error(std::string(e.what()) + at_offset(at - count * kMappingEntrySize));
    }
  }

  if (flags & kFlagProcess) {
    if (8 > remaining()) throw Error("truncated in the process section" + at_offset(at));
    auto length = get<uint64_t>(in, at);
    if (length == 0 || length % 8 || length > kMaxProcessSection || length > remaining() - 8)
      throw Error("process section of " + std::to_string(length) + " bytes does not fit the file" + at_offset(at));
    c.process.assign(in.begin() + at + 8, in.begin() + at + 8 + length);
    try {
      decode_process(c.process);
    } catch (const Error& e) {
      throw Error(std::string(e.what()) + at_offset(at + 8));
    }
    at += 8 + length;
  }

  // The table's size is bounded by what is left of the file, and the payload by the file
  // size: nothing is allocated from an unchecked number.
  if (run_count > remaining() / kRunHeaderSize)
    throw Error("run count " + std::to_string(run_count) + " cannot fit in a file of " +
                std::to_string(in.size()) + " bytes" + at_offset(40));
  if (payload > remaining()) throw Error("payload size " + std::to_string(payload) + " exceeds the file" + at_offset(56));
  c.runs.reserve(run_count);

  // Masked runs' sizes come from their bitmaps, in the data block after the table.
  const size_t data_at = at + run_count * kRunHeaderSize;
  if (payload > body - data_at)
    throw Error("payload size " + std::to_string(payload) + " exceeds the file after the run table" + at_offset(56));
  uint64_t prev_end = 0, offset = 0;
  for (uint64_t i = 0; i < run_count; ++i) {
    std::string where = "run " + std::to_string(i);
    Run r;
    r.address = get<uint64_t>(in, at);
    r.length = get<uint64_t>(in, at + 8);
    r.timestamp = get<uint64_t>(in, at + 16);
    r.reduction.op = static_cast<ReduceOp>(get<uint8_t>(in, at + 24));
    r.reduction.type = static_cast<ElemType>(get<uint8_t>(in, at + 25));
    uint8_t run_flags = get<uint8_t>(in, at + 26);
    if (run_flags & ~kRunMasked) throw Error(where + " has unknown flags " + std::to_string(run_flags) + at_offset(at + 26));
    if (run_flags && version < 2) throw Error(where + " is masked in a version 1 file" + at_offset(at + 26));
    for (size_t k = 27; k < kRunHeaderSize; ++k)
      if (in[at + k] != 0) throw Error(where + " has nonzero reserved bytes" + at_offset(at + k));
    if (r.length == 0) throw Error(where + " is empty" + at_offset(at));
    if (r.address + r.length < r.address) throw Error(where + " wraps around the address space" + at_offset(at));
    if (i > 0 && r.address < prev_end)
      throw Error(where + " overlaps or precedes the run before it (runs must be sorted)" + at_offset(at));
    uint64_t stored = r.length;
    if (run_flags & kRunMasked) {
      if (r.length > kMaxMaskedLength || r.length % kWordSize != 0)
        throw Error(where + " is masked over " + std::to_string(r.length) + " bytes (whole words, at most " +
                    std::to_string(kMaxMaskedLength) + ")" + at_offset(at + 8));
      uint64_t nbitmap = mask_bytes(r.length);
      if (nbitmap > payload - offset) throw Error(where + "'s bitmap runs past the payload" + at_offset(at + 8));
      uint64_t set = 0;
      for (uint64_t k = 0; k < nbitmap; k += 8)
        set += static_cast<uint64_t>(__builtin_popcountll(get<uint64_t>(in, data_at + offset + k)));
      r.masked_words = static_cast<uint32_t>(set);  // <= 512
      stored = nbitmap + kWordSize * set;
      if (stored > payload - offset) throw Error(where + "'s words run past the payload" + at_offset(at + 8));
      try {
        check_masked(r, in.subspan(data_at + offset, stored));
      } catch (const Error& e) {
        throw Error(where + ": " + e.what() + at_offset(data_at + offset));
      }
    } else {
      if (r.length > payload - offset)
        throw Error(where + " length " + std::to_string(r.length) + " runs past the payload the header declares" +
                    at_offset(at + 8));
      try {
        check_reduction(r.reduction, r.length);
      } catch (const Error& e) {
        throw Error(where + ": " + e.what() + at_offset(at + 24));
      }
    }
    r.offset = offset;
    offset += stored;
    prev_end = r.end();
    c.runs.push_back(r);
    at += kRunHeaderSize;
  }
  if (offset != payload)
    throw Error("payload size " + std::to_string(payload) + " in the header does not match the runs' " +
                std::to_string(offset) + " bytes");
  if (remaining() != pad8(payload))
    throw Error("the data block should be " + std::to_string(pad8(payload)) + " bytes but " +
                std::to_string(remaining()) + " are left" + at_offset(at));
  for (size_t k = at + payload; k < body; ++k)
    if (in[k] != 0) throw Error("nonzero padding after the data" + at_offset(k));
  return at;
}

}  // namespace

void check_header(std::span<const uint8_t> h, uint64_t file_size) {
  if (h.size() < kHeaderSize || file_size < kHeaderSize + kTrailerSize)
    throw Error("truncated: " + std::to_string(file_size) + " bytes is shorter than the " +
                std::to_string(kHeaderSize + kTrailerSize) + "-byte minimum of a DICKPT file");
  if (std::memcmp(h.data(), kMagic, sizeof kMagic) != 0) throw Error("not a DICKPT checkpoint (bad magic)");
  auto version = get<uint16_t>(h, 8);
  if (version < 1 || version > kFormatVersion)
    throw Error("unsupported DICKPT version " + std::to_string(version) + "; this cape reads versions 1 to " +
                std::to_string(kFormatVersion));
  check_declared_size(h, file_size);
}

Checkpoint parse(std::span<const uint8_t> in, ParseOptions options) {
  Checkpoint c;
  size_t data = parse_layout(in, options, c);
  uint64_t payload = c.data_bytes();
  c.bytes.assign(in.begin() + static_cast<std::ptrdiff_t>(data), in.begin() + static_cast<std::ptrdiff_t>(data + payload));
  return c;
}

Checkpoint parse(Bytes&& buffer, size_t offset, ParseOptions options) {
  if (offset > buffer.size()) throw Error("checkpoint offset past the end of its buffer");
  Checkpoint c;
  size_t data = offset + parse_layout(std::span<const uint8_t>(buffer).subspan(offset), options, c);
  for (Run& r : c.runs) r.offset += data;
  c.bytes = std::move(buffer);
  return c;
}

void write_file(const Checkpoint& c, const std::string& path) {
  std::vector<uint8_t> bytes = serialize(c);
  // A fresh temporary name made with O_EXCL (mkostemp): a file or symlink planted under any
  // name is never opened, so nothing outside is truncated. Mode 0600: a checkpoint holds the
  // program's memory. rename() then replaces `path` itself (a symlink there is replaced, not
  // followed).
  std::string tmp = path + ".tmp.XXXXXX";
  int fd = ::mkostemp(tmp.data(), O_CLOEXEC);
  if (fd < 0) throw Error(path + ": cannot create a temporary file beside it: " + std::strerror(errno));
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int e = n < 0 ? errno : ENOSPC;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw Error(path + ": write failed: " + std::strerror(e));
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0 || ::rename(tmp.c_str(), path.c_str()) != 0) {
    int e = errno;
    ::unlink(tmp.c_str());
    throw Error(path + ": cannot save: " + std::strerror(e));
  }
}

Checkpoint read_file(const std::string& path) {
  // O_NONBLOCK: a FIFO (or a device) would block open() until a writer came; it is refused
  // below instead. Nothing is read before the header says how big the file must be.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw Error(path + ": cannot open: " + std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st;
  if (::fstat(fd, &st) != 0) throw Error(path + ": cannot stat: " + std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    throw Error(path + ": not a regular file (" +
                (S_ISDIR(st.st_mode) ? "a directory" : S_ISFIFO(st.st_mode) ? "a FIFO" : S_ISSOCK(st.st_mode) ? "a socket" : "a device") +
                "); give a checkpoint file");
  uint64_t size = static_cast<uint64_t>(st.st_size);
  auto read_at = [&](uint8_t* to, size_t n, uint64_t off) {
    size_t done = 0;
    while (done < n) {
      ssize_t r = ::pread(fd, to + done, n - done, static_cast<off_t>(off + done));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) throw Error(path + ": read failed: " + std::strerror(errno));
      if (r == 0) throw Error(path + ": truncated while being read (" + std::to_string(off + done) + " of " +
                              std::to_string(size) + " bytes)");
      done += static_cast<size_t>(r);
    }
  };
  try {
    uint8_t header[kHeaderSize] = {};
    read_at(header, std::min<uint64_t>(size, kHeaderSize), 0);
    check_header({header, kHeaderSize}, size);
    Bytes bytes;
    try {
      bytes.resize(static_cast<size_t>(size));
    } catch (const std::bad_alloc&) {
      throw Error("cannot allocate " + std::to_string(size) + " bytes to read it");
    }
    read_at(bytes.data(), bytes.size(), 0);
    Checkpoint c = parse(std::move(bytes), 0);
    // Keep only the data block, moved to the front in place (as parse() of a span would
    // copy it out): the bytes are the runs' data, whatever the reader.
    if (!c.runs.empty()) {
      uint64_t start = c.runs.front().offset, end = c.runs.back().offset + c.runs.back().stored();
      std::memmove(c.bytes.data(), c.bytes.data() + start, end - start);
      c.bytes.resize(end - start);  // (no shrink_to_fit: that would copy it all again)
      for (Run& r : c.runs) r.offset -= start;
    } else {
      c.bytes.clear();
    }
    return c;
  } catch (const Error& e) {
    std::string what = e.what();
    if (what.rfind(path + ":", 0) == 0) throw;
    throw Error(path + ": " + what);
  }
}

}  // namespace cape::ckpt

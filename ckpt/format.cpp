#include "ckpt/format.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <bit>
#include <cerrno>
#include <cstring>

namespace cape::ckpt {
namespace {

constexpr uint8_t kFlagRegisters = 1;

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

}  // namespace

std::vector<uint8_t> serialize(const Checkpoint& c) {
  check_invariants(c);
  if (c.name.size() > kMaxNameLength) throw Error("checkpoint name longer than 4096 bytes");
  if (c.registers && c.registers->bytes.size() > kMaxRegisterLength)
    throw Error("register set larger than 4096 bytes");

  size_t size = kHeaderSize + pad8(c.name.size());
  if (c.registers) size += pad8(c.registers->bytes.size());
  for (const Run& r : c.runs) size += kRunHeaderSize + pad8(r.length);
  size += kTrailerSize;

  std::vector<uint8_t> out(size, 0);  // zero fill gives the padding and reserved bytes
  std::memcpy(out.data(), kMagic, sizeof kMagic);
  put<uint16_t>(out, 8, kFormatVersion);
  put<uint8_t>(out, 10, static_cast<uint8_t>(c.kind));
  put<uint8_t>(out, 11, c.registers ? kFlagRegisters : 0);
  put<uint32_t>(out, 12, c.node);
  put<uint64_t>(out, 16, c.sequence);
  put<uint64_t>(out, 24, c.timestamp);
  put<uint64_t>(out, 32, c.load_base);
  put<uint64_t>(out, 40, c.runs.size());
  put<uint32_t>(out, 48, static_cast<uint32_t>(c.name.size()));
  put<uint16_t>(out, 52, static_cast<uint16_t>(c.registers ? c.registers->arch : Arch::none));
  put<uint16_t>(out, 54, static_cast<uint16_t>(c.registers ? c.registers->bytes.size() : 0));
  put<uint64_t>(out, 56, c.payload_bytes());

  size_t at = kHeaderSize;
  std::memcpy(out.data() + at, c.name.data(), c.name.size());
  at += pad8(c.name.size());
  if (c.registers) {
    std::memcpy(out.data() + at, c.registers->bytes.data(), c.registers->bytes.size());
    at += pad8(c.registers->bytes.size());
  }
  for (const Run& r : c.runs) {
    put<uint64_t>(out, at, r.address);
    put<uint64_t>(out, at + 8, r.length);
    put<uint64_t>(out, at + 16, r.timestamp);
    put<uint8_t>(out, at + 24, static_cast<uint8_t>(r.reduction.op));
    put<uint8_t>(out, at + 25, static_cast<uint8_t>(r.reduction.type));
    at += kRunHeaderSize;
    std::memcpy(out.data() + at, c.bytes.data() + r.offset, r.length);
    at += pad8(r.length);
  }
  put<uint64_t>(out, at, XXH3_64bits(out.data(), at));
  return out;
}

Checkpoint parse(std::span<const uint8_t> in, ParseOptions options) {
  if (in.size() < kHeaderSize + kTrailerSize)
    throw Error("truncated: " + std::to_string(in.size()) + " bytes is shorter than the " +
                std::to_string(kHeaderSize + kTrailerSize) + "-byte minimum of a DICKPT file");
  if (std::memcmp(in.data(), kMagic, sizeof kMagic) != 0)
    throw Error("not a DICKPT checkpoint (bad magic)");
  auto version = get<uint16_t>(in, 8);
  if (version != kFormatVersion)
    throw Error("unsupported DICKPT version " + std::to_string(version) + "; this cape reads version " +
                std::to_string(kFormatVersion));

  size_t body = in.size() - kTrailerSize;
  if (options.verify_checksum) {
    uint64_t want = get<uint64_t>(in, body);
    uint64_t have = XXH3_64bits(in.data(), body);
    if (want != have) throw Error("checksum mismatch: the file is corrupt or truncated");
  }

  Checkpoint c;
  auto kind = get<uint8_t>(in, 10);
  if (kind < 1 || kind > 3) throw Error("unknown checkpoint kind " + std::to_string(kind) + at_offset(10));
  c.kind = static_cast<Kind>(kind);
  auto flags = get<uint8_t>(in, 11);
  if (flags & ~kFlagRegisters) throw Error("unknown header flags " + std::to_string(flags) + at_offset(11));
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

  if (name_len > kMaxNameLength) throw Error("name length " + std::to_string(name_len) + " exceeds 4096" + at_offset(48));
  if (pad8(name_len) > remaining()) throw Error("truncated in the name" + at_offset(at));
  c.name.assign(reinterpret_cast<const char*>(in.data() + at), name_len);
  at += pad8(name_len);

  if (flags & kFlagRegisters) {
    if (reg_arch != static_cast<uint16_t>(Arch::x86_64))
      throw Error("unknown register architecture " + std::to_string(reg_arch) + at_offset(52));
    if (pad8(reg_len) > remaining()) throw Error("truncated in the registers" + at_offset(at));
    c.registers = Registers{Arch::x86_64, {in.begin() + at, in.begin() + at + reg_len}};
    at += pad8(reg_len);
  } else if (reg_arch != 0 || reg_len != 0) {
    throw Error("register fields set without the registers flag" + at_offset(52));
  }

  // Each run takes at least its header, so the count is bounded by what is left; the
  // payload is bounded by the file size. Nothing is allocated from an unchecked number.
  if (run_count > remaining() / kRunHeaderSize)
    throw Error("run count " + std::to_string(run_count) + " cannot fit in a file of " +
                std::to_string(in.size()) + " bytes" + at_offset(40));
  if (payload > remaining()) throw Error("payload size " + std::to_string(payload) + " exceeds the file" + at_offset(56));
  c.runs.reserve(run_count);
  c.bytes.reserve(payload);

  uint64_t prev_end = 0;
  for (uint64_t i = 0; i < run_count; ++i) {
    std::string where = "run " + std::to_string(i);
    if (remaining() < kRunHeaderSize) throw Error("truncated in " + where + "'s header" + at_offset(at));
    Run r;
    r.address = get<uint64_t>(in, at);
    r.length = get<uint64_t>(in, at + 8);
    r.timestamp = get<uint64_t>(in, at + 16);
    r.reduction.op = static_cast<ReduceOp>(get<uint8_t>(in, at + 24));
    r.reduction.type = static_cast<ElemType>(get<uint8_t>(in, at + 25));
    for (size_t k = 26; k < kRunHeaderSize; ++k)
      if (in[at + k] != 0) throw Error(where + " has nonzero reserved bytes" + at_offset(at + k));
    size_t header_at = at;
    at += kRunHeaderSize;
    if (r.length == 0) throw Error(where + " is empty" + at_offset(header_at));
    if (r.length > remaining() || pad8(r.length) > remaining())
      throw Error(where + " length " + std::to_string(r.length) + " runs past the end of the file" + at_offset(header_at));
    if (r.address + r.length < r.address) throw Error(where + " wraps around the address space" + at_offset(header_at));
    if (i > 0 && r.address < prev_end) throw Error(where + " overlaps or precedes the run before it (runs must be sorted)" + at_offset(header_at));
    try {
      check_reduction(r.reduction, r.length);
    } catch (const Error& e) {
      throw Error(where + ": " + e.what() + at_offset(header_at + 24));
    }
    if (c.bytes.size() + r.length > payload)
      throw Error(where + " goes beyond the payload size the header declares" + at_offset(header_at));
    r.offset = c.bytes.size();
    c.bytes.insert(c.bytes.end(), in.begin() + at, in.begin() + at + r.length);
    at += pad8(r.length);
    prev_end = r.end();
    c.runs.push_back(r);
  }
  if (c.bytes.size() != payload)
    throw Error("payload size " + std::to_string(payload) + " in the header does not match the runs' " +
                std::to_string(c.bytes.size()) + " bytes");
  if (at != body) throw Error(std::to_string(body - at) + " unexpected bytes after the last run" + at_offset(at));
  return c;
}

void write_file(const Checkpoint& c, const std::string& path) {
  std::vector<uint8_t> bytes = serialize(c);
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw Error(path + ": cannot create: " + std::strerror(errno));
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int e = errno;
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
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(path + ": cannot open: " + std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    throw Error(path + ": not a regular file");
  }
  std::vector<uint8_t> bytes(static_cast<size_t>(st.st_size));
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  bytes.resize(done);
  try {
    return parse(bytes);
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
}

}  // namespace cape::ckpt

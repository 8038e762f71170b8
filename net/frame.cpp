#include "net/frame.h"

#include "ckpt/hash.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <memory>

namespace cape::net {
namespace {

using Clock = std::chrono::steady_clock;

void put_u32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
void put_u64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
uint32_t get_u32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t{p[i]} << (8 * i);
  return v;
}
uint64_t get_u64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t{p[i]} << (8 * i);
  return v;
}

// Waits until `fd` is ready for `events` or `timeout` passes. Returns 1 ready, 0 timeout,
// -1 error (errno set). EINTR restarts with the remaining time.
int wait_fd(int fd, short events, std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() < 0) left = std::chrono::milliseconds(0);
    pollfd p{fd, events, 0};
    int r = ::poll(&p, 1, static_cast<int>(left.count()));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return r;
    return 1;  // readable, writable, or an error/hangup the next read/write will report
  }
}

// Reads exactly n bytes. `started` says whether a frame is under way (EOF is then
// truncation). Feeds the bytes into `hash` when given.
IoResult read_exact(int fd, uint8_t* buf, size_t n, std::chrono::milliseconds silence,
                    bool started, ckpt::Hasher* hash, const Deadline& deadline) {
  size_t done = 0;
  while (done < n) {
    ssize_t r = ::read(fd, buf + done, std::min<size_t>(n - done, size_t{1} << 20));
    if (r > 0) {
      if (hash) hash->update(buf + done, static_cast<size_t>(r));
      done += static_cast<size_t>(r);
      started = true;
      continue;
    }
    if (r == 0) {
      if (!started) return {IoStatus::eof, 0, {}};
      return {IoStatus::bad_frame, 0, "truncated frame (connection closed after " +
                                          std::to_string(done) + " of " + std::to_string(n) +
                                          " bytes)"};
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) return {IoStatus::error, errno, {}};
    std::chrono::milliseconds wait = silence;
    if (deadline) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now());
      if (left.count() <= 0) return {IoStatus::timeout, 0, {}};
      wait = std::min(wait, left);
    }
    int w = wait_fd(fd, POLLIN, wait);
    if (w < 0) return {IoStatus::error, errno, {}};
    if (w == 0) return {IoStatus::timeout, 0, {}};
  }
  return {};
}

uint64_t header_hash(const uint8_t* h) { return ckpt::hash64({h, 16}); }

}  // namespace

const char* to_string(FrameType t) {
  switch (t) {
    case FrameType::challenge: return "challenge";
    case FrameType::auth: return "auth";
    case FrameType::auth_ok: return "auth_ok";
    case FrameType::refused: return "refused";
    case FrameType::checkpoint: return "checkpoint";
    case FrameType::heartbeat: return "heartbeat";
    case FrameType::region: return "region";
    case FrameType::exited: return "exited";
    case FrameType::abort: return "abort";
    case FrameType::shutdown: return "shutdown";
    case FrameType::node_failed: return "node_failed";
    case FrameType::output: return "output";
    case FrameType::input: return "input";
    case FrameType::state: return "state";
  }
  return "unknown";
}

std::string IoResult::describe() const {
  switch (status) {
    case IoStatus::ok: return "ok";
    case IoStatus::eof: return "connection closed";
    case IoStatus::timeout: return "timed out";
    case IoStatus::error: return std::string("socket error: ") + strerror(err);
    case IoStatus::bad_frame: return "bad frame: " + what;
  }
  return "?";
}

void encode_header(const FrameHeader& h, uint8_t out[kFrameHeaderSize]) {
  put_u32(out, kFrameMagic);
  out[4] = kProtocolVersion;
  out[5] = static_cast<uint8_t>(h.type);
  out[6] = out[7] = 0;
  put_u64(out + 8, h.length);
  put_u64(out + 16, header_hash(out));
}

std::string decode_header(const uint8_t in[kFrameHeaderSize], uint64_t max_payload,
                          FrameHeader& out) {
  if (get_u32(in) != kFrameMagic) return "bad magic (not a cape peer?)";
  if (in[4] != kProtocolVersion)
    return "protocol version " + std::to_string(in[4]) + ", this cape speaks " +
           std::to_string(kProtocolVersion) + " (run the same cape on every node)";
  if (get_u64(in + 16) != header_hash(in)) return "header checksum mismatch";
  if (in[6] != 0 || in[7] != 0) return "reserved header bytes are not zero";
  uint8_t t = in[5];
  if (t < static_cast<uint8_t>(FrameType::challenge) ||
      t > static_cast<uint8_t>(FrameType::state))
    return "unknown frame type " + std::to_string(t);
  uint64_t len = get_u64(in + 8);
  if (len > max_payload)
    return "payload length " + std::to_string(len) + " exceeds the limit " +
           std::to_string(max_payload);
  out.type = static_cast<FrameType>(t);
  out.length = len;
  return {};
}

IoResult read_frame(int fd, Frame& out, uint64_t max_payload, std::chrono::milliseconds silence,
                    Deadline deadline) {
  uint8_t hdr[kFrameHeaderSize];
  IoResult r = read_exact(fd, hdr, sizeof hdr, silence, false, nullptr, deadline);
  if (!r.ok()) return r;
  FrameHeader h;
  std::string bad = decode_header(hdr, max_payload, h);
  if (!bad.empty()) return {IoStatus::bad_frame, 0, bad};
  out.type = h.type;
  out.payload.resize(h.length);  // no zero fill (ckpt::Bytes)
  ckpt::Hasher hash;
  r = read_exact(fd, out.payload.data(), h.length, silence, true, &hash, deadline);
  if (!r.ok()) return r;
  uint8_t trailer[kFrameTrailerSize];
  r = read_exact(fd, trailer, sizeof trailer, silence, true, nullptr, deadline);
  if (!r.ok()) return r;
  if (hash.digest() != get_u64(trailer))
    return {IoStatus::bad_frame, 0, std::string("payload checksum mismatch in a ") +
                                        to_string(h.type) + " frame of " +
                                        std::to_string(h.length) + " bytes"};
  return {};
}

namespace {

// A frame on its way out: header, payload parts, trailer, as one byte sequence that is
// hashed ahead of the fastest destination and cut into iovecs for any range of it.
class OutgoingFrame {
 public:
  OutgoingFrame(FrameType type, std::span<const iovec> parts) {
    FrameHeader h;
    h.type = type;
    for (const iovec& v : parts) h.length += v.iov_len;
    encode_header(h, header_);
    segments_.push_back({header_, sizeof header_});
    for (const iovec& v : parts)
      if (v.iov_len) segments_.push_back(v);
    segments_.push_back({trailer_, sizeof trailer_});
    payload_ = h.length;
    if (payload_ == 0) put_u64(trailer_, hash_.digest());
  }

  uint64_t size() const { return kFrameHeaderSize + payload_ + kFrameTrailerSize; }

  // How far a destination may be sent: the hashed part of the payload, or everything once
  // it is all hashed (the trailer then holds the digest). Hashes more first when `pos` is
  // close to that point.
  uint64_t ready_up_to(uint64_t pos) {
    while (hashed_ < payload_ && kFrameHeaderSize + hashed_ - pos < kHashAhead) hash_step();
    return hashed_ == payload_ ? size() : kFrameHeaderSize + hashed_;
  }

  // The iovecs of bytes [from, to), at most `max` of them.
  size_t iovecs(uint64_t from, uint64_t to, iovec* out, size_t max) const {
    size_t n = 0;
    uint64_t at = 0;
    for (const iovec& s : segments_) {
      uint64_t end = at + s.iov_len;
      if (end > from && at < to && n < max) {
        uint64_t a = std::max(from, at), b = std::min(to, end);
        out[n++] = {static_cast<uint8_t*>(s.iov_base) + (a - at), static_cast<size_t>(b - a)};
      }
      at = end;
    }
    return n;
  }

 private:
  static constexpr uint64_t kHashStep = uint64_t{1} << 20;
  static constexpr uint64_t kHashAhead = uint64_t{4} << 20;

  void hash_step() {
    uint64_t goal = std::min(payload_, hashed_ + kHashStep);
    while (hashed_ < goal) {
      const iovec& s = segments_[next_part_];
      size_t take = static_cast<size_t>(std::min<uint64_t>(s.iov_len - part_offset_, goal - hashed_));
      hash_.update(static_cast<const uint8_t*>(s.iov_base) + part_offset_, take);
      hashed_ += take;
      part_offset_ += take;
      if (part_offset_ == s.iov_len) ++next_part_, part_offset_ = 0;
    }
    if (hashed_ == payload_) put_u64(trailer_, hash_.digest());
  }

  uint8_t header_[kFrameHeaderSize];
  uint8_t trailer_[kFrameTrailerSize] = {};
  std::vector<iovec> segments_;
  uint64_t payload_ = 0, hashed_ = 0;
  size_t next_part_ = 1, part_offset_ = 0;  // where hashing goes on (segments_[1..] are the parts)
  ckpt::Hasher hash_;
};

// One destination of a (multi-)write.
struct Cursor {
  int fd;
  uint64_t pos = 0;  // bytes of the frame sent
  IoResult result;
  bool done = false;
};

}  // namespace

std::vector<IoResult> write_frame_to_all(std::span<const int> fds, FrameType type,
                                         std::span<const iovec> parts,
                                         std::chrono::milliseconds stall) {
  OutgoingFrame frame(type, parts);
  std::vector<Cursor> cursors;
  cursors.reserve(fds.size());
  for (int fd : fds) cursors.push_back(Cursor{fd, 0, {}, false});

  auto last_progress = Clock::now();
  for (;;) {
    bool progressed = false;
    size_t pending = 0;
    for (Cursor& c : cursors) {
      if (c.done) continue;
      // sendmsg rather than writev: MSG_NOSIGNAL turns a closed peer into EPIPE, not SIGPIPE.
      iovec iov[16];  // header, a few parts, trailer
      msghdr m{};
      m.msg_iov = iov;
      m.msg_iovlen = frame.iovecs(c.pos, frame.ready_up_to(c.pos), iov, std::size(iov));
      ssize_t w = ::sendmsg(c.fd, &m, MSG_NOSIGNAL);
      if (w > 0) {
        c.pos += static_cast<uint64_t>(w);
        c.done = c.pos == frame.size();
        progressed = true;
      } else if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        c.result = {errno == EPIPE || errno == ECONNRESET ? IoStatus::eof : IoStatus::error,
                    errno, {}};
        c.done = true;
      }
      if (!c.done) ++pending;
    }
    if (pending == 0) break;
    auto now = Clock::now();
    if (progressed) last_progress = now;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(last_progress + stall - now);
    if (left.count() <= 0) {
      for (Cursor& c : cursors)
        if (!c.done) {
          c.result = {IoStatus::timeout, 0, {}};
          c.done = true;
        }
      break;
    }
    // Sleep until some unfinished socket can take more bytes.
    std::vector<pollfd> pfds;
    for (Cursor& c : cursors)
      if (!c.done) pfds.push_back({c.fd, POLLOUT, 0});
    int r = ::poll(pfds.data(), pfds.size(), static_cast<int>(left.count()));
    if (r < 0 && errno != EINTR) {
      int e = errno;
      for (Cursor& c : cursors)
        if (!c.done) {
          c.result = {IoStatus::error, e, {}};
          c.done = true;
        }
      break;
    }
  }
  std::vector<IoResult> out;
  out.reserve(cursors.size());
  for (Cursor& c : cursors) out.push_back(std::move(c.result));
  return out;
}

IoResult write_frame(int fd, FrameType type, std::span<const iovec> parts,
                     std::chrono::milliseconds stall) {
  return write_frame_to_all(std::span<const int>(&fd, 1), type, parts, stall)[0];
}

void PayloadWriter::u32(uint32_t v) {
  uint8_t b[4];
  put_u32(b, v);
  buf_.insert(buf_.end(), b, b + 4);
}
void PayloadWriter::u64(uint64_t v) {
  uint8_t b[8];
  put_u64(b, v);
  buf_.insert(buf_.end(), b, b + 8);
}
void PayloadWriter::str(const std::string& s) {
  u32(static_cast<uint32_t>(s.size()));
  buf_.insert(buf_.end(), s.begin(), s.end());
}

std::span<const uint8_t> PayloadReader::bytes(size_t n) {
  if (failed_ || p_.size() - pos_ < n) {
    failed_ = true;
    return {};
  }
  auto s = p_.subspan(pos_, n);
  pos_ += n;
  return s;
}
uint8_t PayloadReader::u8() {
  auto b = bytes(1);
  return b.empty() ? 0 : b[0];
}
uint32_t PayloadReader::u32() {
  auto b = bytes(4);
  return b.empty() ? 0 : get_u32(b.data());
}
uint64_t PayloadReader::u64() {
  auto b = bytes(8);
  return b.empty() ? 0 : get_u64(b.data());
}
std::string PayloadReader::str(size_t max_len) {
  uint32_t n = u32();
  if (n > max_len) {
    failed_ = true;
    return {};
  }
  auto b = bytes(n);
  return std::string(b.begin(), b.end());
}
std::span<const uint8_t> PayloadReader::rest() {
  auto s = p_.subspan(pos_);
  pos_ = p_.size();
  return s;
}

}  // namespace cape::net

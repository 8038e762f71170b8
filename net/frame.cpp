#include "net/frame.h"

#include "ckpt/hash.h"

#include <errno.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>

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

// The AEAD of one frame (frame.h): the nonce is the stream and the sequence number.
// Associated data first (the header, then the payload unless it is encrypted), then the
// payload to encrypt or decrypt in place, then the tag. Authenticated only: ChaCha20-Poly1305
// with everything as associated data, i.e. a Poly1305 tag (8 GB/s here, GMAC 5.5 GB/s: the
// checkpoint transfer stays near raw TCP); encrypted: AES-256-GCM (AES-NI).
// The ciphers fetched once: OpenSSL 3 looks a legacy EVP_chacha20_poly1305() up in its
// provider store at every EVP_*Init_ex (name compares, parameter lists: ~1.5 us a frame,
// issue 14); an explicitly fetched one is used as it is.
const EVP_CIPHER* frame_cipher(bool encrypt) {
  static EVP_CIPHER* const chacha = EVP_CIPHER_fetch(nullptr, "ChaCha20-Poly1305", nullptr);
  static EVP_CIPHER* const aes = EVP_CIPHER_fetch(nullptr, "AES-256-GCM", nullptr);
  if (encrypt) return aes ? aes : EVP_aes_256_gcm();
  return chacha ? chacha : EVP_chacha20_poly1305();
}

// Each thread keeps the contexts of the last few (key, cipher, direction) it used: a frame
// then only sets its nonce (EVP_*Init_ex with the key left out, which restarts the AEAD),
// instead of making a context, setting the key and freeing it (issue 14, session 14: ~1 us
// of OpenSSL 3's bookkeeping per frame, 15 frames sealed or opened per empty region on 3
// nodes). CAPE_AEAD_KEPT=0: a fresh context per frame, as before.
bool aead_kept() {
  static const bool on = [] {
    const char* e = std::getenv("CAPE_AEAD_KEPT");
    return !(e && std::string(e) == "0");
  }();
  return on;
}

struct KeptContext {
  EVP_CIPHER_CTX* ctx = nullptr;
  const EVP_CIPHER* cipher = nullptr;
  bool sealing = false;
  bool busy = false;  // a Gcm of this thread holds it (never shared by two at once)
  FrameKey key{};
};

struct KeptContexts {
  static constexpr size_t kSlots = 6;  // a slave: 2 streams; the master: 2 per slave + broadcast
  KeptContext slot[kSlots];
  size_t next = 0;  // the slot to take over when none matches (round robin)
  ~KeptContexts() {
    for (KeptContext& k : slot) {
      EVP_CIPHER_CTX_free(k.ctx);  // (cleanses the key schedule)
      OPENSSL_cleanse(k.key.data(), k.key.size());
    }
  }
  // A context set up for (key, cipher, direction), its nonce still to set; nullptr when every
  // slot is busy (the caller makes its own).
  KeptContext* take(const FrameKey& key, const EVP_CIPHER* cipher, bool sealing, bool& keyed) {
    for (KeptContext& k : slot)
      if (k.ctx && !k.busy && k.cipher == cipher && k.sealing == sealing && CRYPTO_memcmp(k.key.data(), key.data(), key.size()) == 0) {
        k.busy = true;
        keyed = true;
        return &k;
      }
    for (size_t i = 0; i < kSlots; ++i) {
      KeptContext& k = slot[(next + i) % kSlots];
      if (k.busy) continue;
      next = (next + i + 1) % kSlots;
      if (!k.ctx) k.ctx = EVP_CIPHER_CTX_new();
      if (!k.ctx) return nullptr;
      k.cipher = cipher;
      k.sealing = sealing;
      k.key = key;
      k.busy = true;
      keyed = false;
      return &k;
    }
    return nullptr;
  }
};

class Gcm {
 public:
  Gcm(const FrameKey& key, uint32_t stream, uint64_t seq, bool sealing, bool encrypt) : sealing_(sealing) {
    const EVP_CIPHER* cipher = frame_cipher(encrypt);
    uint8_t iv[12];
    for (int i = 0; i < 4; ++i) iv[i] = static_cast<uint8_t>(stream >> (8 * i));
    for (int i = 0; i < 8; ++i) iv[4 + i] = static_cast<uint8_t>(seq >> (8 * i));
    bool keyed = false;
    if (aead_kept()) {
      thread_local KeptContexts kept;
      kept_ = kept.take(key, cipher, sealing, keyed);
    }
    ctx_ = kept_ ? kept_->ctx : EVP_CIPHER_CTX_new();
    const EVP_CIPHER* c = keyed ? nullptr : cipher;
    const uint8_t* k = keyed ? nullptr : key.data();
    ok_ = ctx_ != nullptr && (sealing ? EVP_EncryptInit_ex(ctx_, c, nullptr, k, iv)
                                      : EVP_DecryptInit_ex(ctx_, c, nullptr, k, iv)) == 1;
    if (!ok_ && kept_) kept_->cipher = nullptr;  // never matched again: set up afresh next time
  }
  ~Gcm() {
    if (kept_)
      kept_->busy = false;
    else
      EVP_CIPHER_CTX_free(ctx_);
  }
  Gcm(const Gcm&) = delete;
  Gcm& operator=(const Gcm&) = delete;

  void aad(const uint8_t* p, size_t n) { update(nullptr, p, n); }
  void crypt(const uint8_t* in, uint8_t* out, size_t n) { update(out, in, n); }
  void tag(uint8_t out[16]) {
    int len = 0;
    uint8_t none[16];
    ok_ = ok_ && EVP_EncryptFinal_ex(ctx_, none, &len) == 1 &&
          EVP_CIPHER_CTX_ctrl(ctx_, EVP_CTRL_AEAD_GET_TAG, 16, out) == 1;
    if (!ok_) std::fill(out, out + 16, 0);  // never verifies: the reader refuses the frame
  }
  bool verify(const uint8_t tag[16]) {
    int len = 0;
    uint8_t none[16];
    return ok_ && EVP_CIPHER_CTX_ctrl(ctx_, EVP_CTRL_AEAD_SET_TAG, 16, const_cast<uint8_t*>(tag)) == 1 &&
           EVP_DecryptFinal_ex(ctx_, none, &len) == 1;
  }

 private:
  void update(uint8_t* out, const uint8_t* in, size_t n) {
    // In steps an int can count.
    while (ok_ && n > 0) {
      int step = static_cast<int>(std::min<size_t>(n, size_t{1} << 30)), len = 0;
      ok_ = (sealing_ ? EVP_EncryptUpdate(ctx_, out, &len, in, step) : EVP_DecryptUpdate(ctx_, out, &len, in, step)) ==
            1;
      in += step;
      if (out) out += step;
      n -= static_cast<size_t>(step);
    }
  }
  KeptContext* kept_ = nullptr;
  EVP_CIPHER_CTX* ctx_ = nullptr;
  bool sealing_;
  bool ok_ = false;
};

// Reads exactly n bytes. `started` says whether a frame is under way (EOF is then
// truncation). Hands each piece read to `consume` when given (checksum, tag, decryption).
IoResult read_exact(int fd, uint8_t* buf, size_t n, std::chrono::milliseconds silence, bool started,
                    const std::function<void(uint8_t*, size_t)>& consume, const Deadline& deadline,
                    ReadBuffer* rb, bool wait_for_start = true) {
  size_t done = 0;
  // What was read ahead first; then, for what is left when it is small, a read of whatever
  // has arrived into the buffer.
  auto take_buffered = [&] {
    size_t take = std::min(n - done, rb->end - rb->at);
    if (take == 0) return;
    std::memcpy(buf + done, rb->bytes.data() + rb->at, take);
    rb->at += take;
    if (consume) consume(buf + done, take);
    done += take;
    started = true;
  };
  if (rb) take_buffered();
  while (done < n) {
    bool ahead = rb && n - done < ReadBuffer::kSize;
    if (ahead && rb->bytes.size() < ReadBuffer::kSize) rb->bytes.resize(ReadBuffer::kSize);
    // In pieces that stay in cache for `consume` (checksum, tag, decryption) right after.
    ssize_t r = ahead ? ::read(fd, rb->bytes.data(), ReadBuffer::kSize)
                      : ::read(fd, buf + done, std::min<size_t>(n - done, size_t{256} << 10));
    if (r > 0 && ahead) {
      rb->at = 0;
      rb->end = static_cast<size_t>(r);
      take_buffered();
      continue;
    }
    if (r > 0) {
      if (consume) consume(buf + done, static_cast<size_t>(r));
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
    if (!started && !wait_for_start) return {IoStatus::nothing, 0, {}};
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

uint64_t header_hash(const uint8_t* h) { return ckpt::hash64({h, 24}); }

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
    case FrameType::lock_request: return "lock_request";
    case FrameType::lock_grant: return "lock_grant";
    case FrameType::lock_release: return "lock_release";
    case FrameType::page_request: return "page_request";
    case FrameType::page_data: return "page_data";
    case FrameType::lock_revoke: return "lock_revoke";
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
    case IoStatus::nothing: return "nothing to read yet";
  }
  return "?";
}

void encode_header(const FrameHeader& h, uint8_t out[kFrameHeaderSize]) {
  put_u32(out, kFrameMagic);
  out[4] = kProtocolVersion;
  out[5] = static_cast<uint8_t>(h.type);
  out[6] = h.flags;
  out[7] = 0;
  put_u64(out + 8, h.length);
  put_u64(out + 16, h.seq);
  put_u64(out + 24, header_hash(out));
}

std::string decode_header(const uint8_t in[kFrameHeaderSize], uint64_t max_payload,
                          FrameHeader& out) {
  if (get_u32(in) != kFrameMagic) return "bad magic (not a cape peer?)";
  if (in[4] != kProtocolVersion)
    return "protocol version " + std::to_string(in[4]) + ", this cape speaks " +
           std::to_string(kProtocolVersion) + " (run the same cape on every node)";
  if (get_u64(in + 24) != header_hash(in)) return "header checksum mismatch";
  if (in[7] != 0) return "reserved header byte is not zero";
  if (in[6] & ~(kFlagBroadcast | kFlagEncrypted)) return "unknown header flags " + std::to_string(in[6]);
  uint8_t t = in[5];
  if (t < static_cast<uint8_t>(FrameType::challenge) ||
      t > static_cast<uint8_t>(FrameType::lock_revoke))
    return "unknown frame type " + std::to_string(t);
  uint64_t len = get_u64(in + 8);
  if (len > max_payload)
    return "payload length " + std::to_string(len) + " exceeds the limit " +
           std::to_string(max_payload);
  out.type = static_cast<FrameType>(t);
  out.length = len;
  out.flags = in[6];
  out.seq = get_u64(in + 16);
  return {};
}

IoResult read_frame(int fd, Frame& out, uint64_t max_payload, std::chrono::milliseconds silence,
                    Deadline deadline, const Unseal& unseal, ReadBuffer* buffer, bool wait_for_start) {
  uint8_t hdr[kFrameHeaderSize];
  IoResult r = read_exact(fd, hdr, sizeof hdr, silence, false, nullptr, deadline, buffer, wait_for_start);
  if (!r.ok()) return r;
  FrameHeader h;
  std::string bad = decode_header(hdr, max_payload, h);
  if (!bad.empty()) return {IoStatus::bad_frame, 0, bad};
  auto refuse = [&](const std::string& why) {
    return IoResult{IoStatus::bad_frame, 0, why + " (" + to_string(h.type) + " frame of " + std::to_string(h.length) +
                                                " bytes)"};
  };
  bool broadcast = h.flags & kFlagBroadcast;
  // In place, and the checksum's state only for an unsealed frame: each is a heap
  // allocation otherwise, at every frame (issue 14, session 14).
  std::optional<Gcm> gcm;
  if (unseal.key) {
    // Checked before the payload is read: a frame out of sequence is refused at once.
    if (bool(h.flags & kFlagEncrypted) != unseal.encrypt)
      return refuse(unseal.encrypt ? "an unencrypted frame in an encrypted job" : "an encrypted frame");
    if (broadcast ? !unseal.last_broadcast || h.seq <= *unseal.last_broadcast : h.seq != *unseal.last_seq + 1)
      return refuse("unauthenticated frame: sequence number " + std::to_string(h.seq) + " out of order");
    gcm.emplace(*unseal.key, broadcast ? kBroadcastStream : unseal.stream, h.seq, false, unseal.encrypt);
    gcm->aad(hdr, sizeof hdr);
  } else if (h.flags != 0 || h.seq != 0) {
    return refuse("a sealed frame before the handshake's keys");
  }
  out.type = h.type;
  out.payload.resize(h.length);  // no zero fill (ckpt::Bytes)
  std::optional<ckpt::Hasher> hash;
  if (!gcm) hash.emplace();
  std::function<void(uint8_t*, size_t)> consume;
  if (!gcm)
    consume = [&](uint8_t* p, size_t n) { hash->update(p, n); };
  else if (unseal.encrypt)
    consume = [&](uint8_t* p, size_t n) { gcm->crypt(p, p, n); };
  else
    consume = [&](uint8_t* p, size_t n) { gcm->aad(p, n); };
  r = read_exact(fd, out.payload.data(), h.length, silence, true, consume, deadline, buffer);
  if (!r.ok()) return r;
  uint8_t trailer[kFrameTrailerSize];
  r = read_exact(fd, trailer, sizeof trailer, silence, true, nullptr, deadline, buffer);
  if (!r.ok()) return r;
  if (gcm) {
    if (!gcm->verify(trailer)) return refuse("unauthenticated frame: its tag does not match (altered, or not from the job)");
    *(broadcast ? unseal.last_broadcast : unseal.last_seq) = h.seq;
    return {};
  }
  bool zeros = std::all_of(trailer + 8, trailer + 16, [](uint8_t b) { return b == 0; });
  if (hash->digest() != get_u64(trailer) || !zeros)
    return {IoStatus::bad_frame, 0, std::string("payload checksum mismatch in a ") +
                                        to_string(h.type) + " frame of " +
                                        std::to_string(h.length) + " bytes"};
  return {};
}

namespace {

// A frame on its way out: header, payload parts, trailer, as one byte sequence that is
// sealed (checksummed, authenticated, or encrypted into a buffer of its own) ahead of the
// fastest destination and cut into iovecs for any range of it.
class OutgoingFrame {
 public:
  OutgoingFrame(FrameType type, std::span<const iovec> parts, const Seal& seal, std::span<const uint8_t> before = {})
      : before_(before.size()) {
    parts_.reserve(parts.size());
    segments_.reserve(parts.size() + 4);
    if (!before.empty()) segments_.push_back({const_cast<uint8_t*>(before.data()), before.size()});
    FrameHeader h;
    h.type = type;
    for (const iovec& v : parts) h.length += v.iov_len;
    if (seal.key) {
      h.seq = seal.seq;
      h.flags = static_cast<uint8_t>((seal.stream == kBroadcastStream ? kFlagBroadcast : 0) |
                                     (seal.encrypt ? kFlagEncrypted : 0));
    }
    encode_header(h, header_);
    payload_ = h.length;
    for (const iovec& v : parts)
      if (v.iov_len) parts_.push_back(v);
    segments_.push_back({header_, sizeof header_});
    if (seal.key) {
      gcm_.emplace(*seal.key, seal.stream, seal.seq, true, seal.encrypt);
      gcm_->aad(header_, sizeof header_);
    } else {
      hash_.emplace();
    }
    if (seal.key && seal.encrypt) {
      // The ciphertext is sent from a buffer of its own: the parts are the program's data.
      cipher_.resize(payload_);
      if (payload_) segments_.push_back({cipher_.data(), cipher_.size()});
    } else {
      segments_.insert(segments_.end(), parts_.begin(), parts_.end());
    }
    segments_.push_back({trailer_, sizeof trailer_});
    if (payload_ == 0) finish();
  }

  uint64_t size() const { return before_ + kFrameHeaderSize + payload_ + kFrameTrailerSize; }
  void seal_all() {
    while (sealed_ < payload_) seal_step();
  }

  // How far a destination may be sent: the sealed part of the payload, or everything once
  // it is all sealed (the trailer then holds the tag). Seals more first when `pos` is close
  // to that point.
  uint64_t ready_up_to(uint64_t pos) {
    while (sealed_ < payload_ && before_ + kFrameHeaderSize + sealed_ - pos < kSealAhead) seal_step();
    return sealed_ == payload_ ? size() : before_ + kFrameHeaderSize + sealed_;
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
  // Sealed a little ahead of the socket, so that the bytes are still in cache when the
  // kernel copies them.
  static constexpr uint64_t kSealStep = uint64_t{256} << 10;
  static constexpr uint64_t kSealAhead = uint64_t{1} << 20;

  void seal_step() {
    uint64_t goal = std::min(payload_, sealed_ + kSealStep);
    while (sealed_ < goal) {
      const iovec& s = parts_[next_part_];
      size_t take = static_cast<size_t>(std::min<uint64_t>(s.iov_len - part_offset_, goal - sealed_));
      const uint8_t* p = static_cast<const uint8_t*>(s.iov_base) + part_offset_;
      if (!gcm_)
        hash_->update(p, take);
      else if (!cipher_.empty())
        gcm_->crypt(p, cipher_.data() + sealed_, take);
      else
        gcm_->aad(p, take);
      sealed_ += take;
      part_offset_ += take;
      if (part_offset_ == s.iov_len) ++next_part_, part_offset_ = 0;
    }
    if (sealed_ == payload_) finish();
  }

  void finish() {
    if (gcm_)
      gcm_->tag(trailer_);
    else
      put_u64(trailer_, hash_->digest());
  }

  uint64_t before_;  // the frames sent ahead of this one (write_frame's `before`)
  uint8_t header_[kFrameHeaderSize];
  uint8_t trailer_[kFrameTrailerSize] = {};
  std::vector<iovec> parts_;     // the payload as given (the non-empty parts)
  std::vector<iovec> segments_;  // what is sent: header, payload (or cipher_), trailer
  uint64_t payload_ = 0, sealed_ = 0;
  size_t next_part_ = 0, part_offset_ = 0;  // where sealing goes on in parts_
  std::optional<ckpt::Hasher> hash_;  // unsealed frames (the handshake's)
  std::optional<Gcm> gcm_;
  Buffer cipher_;
};

// One destination of a (multi-)write.
struct Cursor {
  int fd;
  uint64_t pos = 0;  // bytes of the frame sent
  IoResult result;
  bool done = false;
};

}  // namespace

namespace {
// Writes the frame to every cursor's socket, advancing each as it can take bytes.
void write_to_cursors(OutgoingFrame& frame, std::span<Cursor> cursors, std::chrono::milliseconds stall) {
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
}
}  // namespace

std::vector<IoResult> write_frame_to_all(std::span<const int> fds, FrameType type,
                                         std::span<const iovec> parts,
                                         std::chrono::milliseconds stall, const Seal& seal,
                                         std::span<const uint8_t> before) {
  OutgoingFrame frame(type, parts, seal, before);
  std::vector<Cursor> cursors;
  cursors.reserve(fds.size());
  for (int fd : fds) cursors.push_back(Cursor{fd, 0, {}, false});
  write_to_cursors(frame, cursors, stall);
  std::vector<IoResult> out;
  out.reserve(cursors.size());
  for (Cursor& c : cursors) out.push_back(std::move(c.result));
  return out;
}

IoResult write_frame(int fd, FrameType type, std::span<const iovec> parts,
                     std::chrono::milliseconds stall, const Seal& seal, std::span<const uint8_t> before) {
  // One socket: no vectors (every frame a node sends but the master's broadcasts).
  OutgoingFrame frame(type, parts, seal, before);
  Cursor c{fd, 0, {}, false};
  write_to_cursors(frame, {&c, 1}, stall);
  return std::move(c.result);
}

std::vector<uint8_t> encode_frame(FrameType type, std::span<const iovec> parts, const Seal& seal) {
  std::vector<uint8_t> out;
  encode_frame_into(out, type, parts, seal);
  return out;
}

void encode_frame_into(std::vector<uint8_t>& out, FrameType type, std::span<const iovec> parts, const Seal& seal) {
  OutgoingFrame frame(type, parts, seal);
  frame.seal_all();
  out.reserve(out.size() + frame.size());
  for (uint64_t at = 0; at < frame.size();) {
    iovec v[16];
    size_t n = frame.iovecs(at, frame.size(), v, std::size(v));
    for (size_t i = 0; i < n; ++i) {
      const uint8_t* b = static_cast<const uint8_t*>(v[i].iov_base);
      out.insert(out.end(), b, b + v[i].iov_len);
      at += v[i].iov_len;
    }
  }
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
  buf_.reserve(buf_.size() + 4 + s.size());  // (one allocation, not one per doubling)
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

// Frames: good ones round-trip; short, huge, corrupted or unknown ones are refused with a
// clear reason and never crash or allocate the claimed length.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>
#include <thread>

#include "net/frame.h"
#include "net/socket.h"
#include "util/scoped_fd.h"

namespace cape::net {
namespace {

using namespace std::chrono_literals;

struct Pair {
  util::ScopedFd a, b;
  Pair() {
    int sv[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    a.reset(sv[0]);
    b.reset(sv[1]);
    set_nonblocking(a.get());
    set_nonblocking(b.get());
  }
};

// The pair is non-blocking: when the reader lags (a loaded machine), a write finds the
// socket's buffer full (EAGAIN) and waits until it can go on.
void write_raw(int fd, const std::vector<uint8_t>& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t w = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd pfd{fd, POLLOUT, 0};
      ASSERT_GE(::poll(&pfd, 1, 10000), 1) << "the reader took no bytes for 10 s";
      continue;
    }
    ASSERT_GT(w, 0) << strerror(errno);
    done += static_cast<size_t>(w);
  }
}

std::vector<uint8_t> encoded(FrameType t, const std::vector<uint8_t>& payload, const Seal& seal = {}) {
  Pair p;
  iovec v{const_cast<uint8_t*>(payload.data()), payload.size()};
  IoResult w = write_frame(p.a.get(), t, {&v, 1}, 1s, seal);
  EXPECT_TRUE(w.ok()) << w.describe();
  std::vector<uint8_t> out(kFrameHeaderSize + payload.size() + kFrameTrailerSize);
  size_t got = 0;
  while (got < out.size()) {
    ssize_t r = ::read(p.b.get(), out.data() + got, out.size() - got);
    EXPECT_GT(r, 0);
    if (r <= 0) break;
    got += static_cast<size_t>(r);
  }
  return out;
}

TEST(Frame, RoundTrip) {
  Pair p;
  std::vector<uint8_t> a{1, 2, 3}, b(100000, 7);
  iovec v[2] = {{a.data(), a.size()}, {b.data(), b.size()}};
  std::thread writer([&] { EXPECT_TRUE(write_frame(p.a.get(), FrameType::checkpoint, v, 2s).ok()); });
  Frame f;
  IoResult r = read_frame(p.b.get(), f, kDefaultMaxPayload, 2s);
  writer.join();
  ASSERT_TRUE(r.ok()) << r.describe();
  EXPECT_EQ(f.type, FrameType::checkpoint);
  ASSERT_EQ(f.payload.size(), a.size() + b.size());
  EXPECT_EQ(f.payload[0], 1);
  EXPECT_EQ(f.payload.back(), 7);
}

TEST(Frame, EmptyPayloadAndEofAtBoundary) {
  Pair p;
  ASSERT_TRUE(write_frame(p.a.get(), FrameType::heartbeat, {}, 1s).ok());
  p.a.reset();
  Frame f;
  ASSERT_TRUE(read_frame(p.b.get(), f, 16, 1s).ok());
  EXPECT_EQ(f.type, FrameType::heartbeat);
  EXPECT_EQ(read_frame(p.b.get(), f, 16, 1s).status, IoStatus::eof);
}

IoResult feed(const std::vector<uint8_t>& bytes, uint64_t max = kDefaultMaxPayload) {
  Pair p;
  write_raw(p.a.get(), bytes);
  p.a.reset();  // EOF after the bytes
  Frame f;
  return read_frame(p.b.get(), f, max, 1s);
}

TEST(Frame, ShortFramesAtEveryLength) {
  std::vector<uint8_t> good = encoded(FrameType::region, {'a', 'b', 'c', 'd', 'e'});
  for (size_t n = 1; n < good.size(); ++n) {
    IoResult r = feed(std::vector<uint8_t>(good.begin(), good.begin() + n));
    EXPECT_EQ(r.status, IoStatus::bad_frame) << "length " << n;
    EXPECT_NE(r.what.find("truncated"), std::string::npos) << r.what;
  }
  EXPECT_TRUE(feed(good).ok());
}

TEST(Frame, HugeLengthRefusedBeforeAllocation) {
  // A well-formed header claiming 2^62 bytes: refused by the limit, not by a bad_alloc.
  FrameHeader h{FrameType::checkpoint, uint64_t{1} << 62, 0, 0};
  std::vector<uint8_t> hdr(kFrameHeaderSize);
  encode_header(h, hdr.data());
  IoResult r = feed(hdr);
  EXPECT_EQ(r.status, IoStatus::bad_frame);
  EXPECT_NE(r.what.find("exceeds the limit"), std::string::npos) << r.what;
  // The handshake limit is small: an unauthenticated peer cannot make us allocate.
  std::vector<uint8_t> big = encoded(FrameType::auth, std::vector<uint8_t>(5000, 1));
  r = feed(big, kHandshakeMaxPayload);
  EXPECT_EQ(r.status, IoStatus::bad_frame);
}

TEST(Frame, EveryFlippedBitIsCaught) {
  std::vector<uint8_t> good = encoded(FrameType::checkpoint, {9, 8, 7, 6, 5, 4, 3, 2, 1});
  for (size_t byte = 0; byte < good.size(); ++byte)
    for (int bit = 0; bit < 8; ++bit) {
      auto bad = good;
      bad[byte] ^= static_cast<uint8_t>(1u << bit);
      IoResult r = feed(bad);
      EXPECT_EQ(r.status, IoStatus::bad_frame) << "byte " << byte << " bit " << bit;
    }
}

TEST(Frame, PayloadChecksumMismatchNamed) {
  std::vector<uint8_t> good = encoded(FrameType::checkpoint, {1, 2, 3, 4});
  good.back() ^= 0xff;
  IoResult r = feed(good);
  EXPECT_EQ(r.status, IoStatus::bad_frame);
  EXPECT_NE(r.what.find("payload checksum"), std::string::npos) << r.what;
}

TEST(Frame, AnOlderProtocolIsNamed) {
  std::vector<uint8_t> good = encoded(FrameType::heartbeat, {});
  good[4] = 1;  // version 1: the payload hash was in the header
  IoResult r = feed(good);
  EXPECT_EQ(r.status, IoStatus::bad_frame);
  std::string want = "protocol version 1, this cape speaks " + std::to_string(kProtocolVersion);
  EXPECT_NE(r.what.find(want), std::string::npos) << r.what;
}

// Many parts and a payload far larger than the hashing steps: the bytes and the trailer
// arrive right, to two readers at once.
TEST(Frame, LargeMultiPartFrameToTwoReaders) {
  Pair p, q;
  std::vector<std::vector<uint8_t>> parts;
  std::vector<iovec> v;
  std::mt19937_64 rng(3);
  for (size_t n : {size_t{1}, size_t{0}, size_t{3} << 20, size_t{777}, size_t{9} << 20}) {
    parts.emplace_back(n);
    for (auto& b : parts.back()) b = static_cast<uint8_t>(rng());
  }
  for (auto& b : parts) v.push_back({b.data(), b.size()});
  int fds[2] = {p.a.get(), q.a.get()};
  std::vector<IoResult> w;
  std::thread writer([&] { w = write_frame_to_all(fds, FrameType::checkpoint, v, 5s); });
  Frame f1, f2;
  std::thread other([&] { EXPECT_TRUE(read_frame(q.b.get(), f2, kDefaultMaxPayload, 5s).ok()); });
  IoResult r = read_frame(p.b.get(), f1, kDefaultMaxPayload, 5s);
  writer.join();
  other.join();
  ASSERT_TRUE(r.ok()) << r.describe();
  ASSERT_EQ(w.size(), 2u);
  EXPECT_TRUE(w[0].ok() && w[1].ok());
  size_t at = 0;
  for (auto& b : parts) {
    ASSERT_TRUE(std::equal(b.begin(), b.end(), f1.payload.begin() + static_cast<std::ptrdiff_t>(at)));
    at += b.size();
  }
  EXPECT_EQ(f1.payload.size(), at);
  EXPECT_TRUE(std::equal(f1.payload.begin(), f1.payload.end(), f2.payload.begin(), f2.payload.end()));
}

TEST(Frame, RandomGarbageNeverAccepted) {
  std::mt19937_64 rng(42);
  for (int i = 0; i < 2000; ++i) {
    std::vector<uint8_t> junk(rng() % 100);
    for (auto& b : junk) b = static_cast<uint8_t>(rng());
    IoResult r = feed(junk);
    EXPECT_FALSE(r.ok());
  }
}

TEST(Frame, SilenceIsATimeout) {
  Pair p;
  Frame f;
  auto t0 = std::chrono::steady_clock::now();
  IoResult r = read_frame(p.b.get(), f, 16, 200ms);
  EXPECT_EQ(r.status, IoStatus::timeout);
  EXPECT_GE(std::chrono::steady_clock::now() - t0, 190ms);
}

TEST(Frame, WriteToClosedPeerIsAnError) {
  Pair p;
  p.b.reset();
  std::vector<uint8_t> data(1 << 20);
  iovec v{data.data(), data.size()};
  IoResult r = write_frame(p.a.get(), FrameType::checkpoint, {&v, 1}, 1s);
  EXPECT_FALSE(r.ok());
}

TEST(Frame, PayloadReaderStopsAtTheEnd) {
  PayloadWriter w;
  w.str("hello");
  w.u64(7);
  PayloadReader in(w.buffer());
  EXPECT_EQ(in.str(), "hello");
  EXPECT_EQ(in.u64(), 7u);
  EXPECT_TRUE(in.at_end());
  EXPECT_EQ(in.u32(), 0u);
  EXPECT_TRUE(in.failed());
  std::vector<uint8_t> lying{0xff, 0xff, 0xff, 0x7f, 'x'};
  PayloadReader l(lying);
  EXPECT_EQ(l.str(), "");
  EXPECT_TRUE(l.failed());
}

TEST(Address, Parse) {
  EXPECT_EQ(parse_host_port("127.0.0.1:80").port, 80);
  EXPECT_EQ(parse_host_port("[::1]:9").host, "::1");
  EXPECT_THROW(parse_host_port("nohost"), std::exception);
  EXPECT_THROW(parse_host_port("h:99999"), std::exception);
  EXPECT_THROW(parse_host_port("h:"), std::exception);
}

// Issue 16, item 4: frames after the handshake are sealed (AES-256-GCM). What the reader
// accepts, and all it refuses: any flipped bit, a replay, a frame of another stream or key,
// an unsealed frame, a broadcast where none is expected.
std::vector<IoResult> feed_all(const std::vector<std::vector<uint8_t>>& frames, const Unseal& unseal,
                               std::vector<Frame>* got = nullptr, ReadBuffer* buffer = nullptr) {
  Pair p;
  for (const auto& f : frames) write_raw(p.a.get(), f);
  p.a.reset();
  std::vector<IoResult> out;
  for (size_t i = 0; i < frames.size(); ++i) {
    Frame f;
    out.push_back(read_frame(p.b.get(), f, kDefaultMaxPayload, 1s, std::nullopt, unseal, buffer));
    if (got) got->push_back(std::move(f));
    if (!out.back().ok()) break;
  }
  return out;
}

TEST(Frame, SealedFramesAreAuthenticatedAndOptionallyEncrypted) {
  FrameKey key{}, other{};
  key[0] = 1;
  other[0] = 2;
  std::vector<uint8_t> payload(300);
  for (size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<uint8_t>(i * 7);
  for (bool encrypt : {false, true}) {
    SCOPED_TRACE(encrypt ? "encrypted" : "authenticated");
    std::vector<uint8_t> one = encoded(FrameType::checkpoint, payload, {&key, 3, 1, encrypt});
    std::vector<uint8_t> two = encoded(FrameType::region, {'r'}, {&key, 3, 2, encrypt});
    // In the clear or not on the wire.
    bool clear = std::equal(payload.begin(), payload.end(), one.begin() + kFrameHeaderSize);
    EXPECT_EQ(clear, !encrypt);
    uint64_t last = 0;
    std::vector<Frame> got;
    std::vector<IoResult> r = feed_all({one, two}, {&key, 3, &last, nullptr, encrypt}, &got);
    ASSERT_EQ(r.size(), 2u);
    EXPECT_TRUE(r[0].ok()) << r[0].describe();
    EXPECT_TRUE(r[1].ok()) << r[1].describe();
    EXPECT_EQ(last, 2u);
    EXPECT_EQ(std::vector<uint8_t>(got[0].payload.begin(), got[0].payload.end()), payload);
    EXPECT_EQ(got[1].type, FrameType::region);
    auto refused = [&](const std::vector<std::vector<uint8_t>>& frames, Unseal u, const std::string& why) {
      // Read frame by frame and through a connection's read-ahead buffer alike.
      for (bool buffered : {false, true}) {
        ReadBuffer ahead;
        Unseal v = u;
        uint64_t seq = *u.last_seq, bseq = u.last_broadcast ? *u.last_broadcast : 0;
        v.last_seq = &seq;
        if (u.last_broadcast) v.last_broadcast = &bseq;
        std::vector<IoResult> res = feed_all(frames, v, nullptr, buffered ? &ahead : nullptr);
        ASSERT_FALSE(res.empty());
        EXPECT_EQ(res.back().status, IoStatus::bad_frame) << why;
        EXPECT_NE(res.back().what.find(why), std::string::npos) << res.back().what;
      }
    };
    uint64_t l0 = 0, l1 = 0;
    refused({one, one}, {&key, 3, &l0, nullptr, encrypt}, "sequence number 1 out of order");     // replayed
    refused({two}, {&key, 3, &l1, nullptr, encrypt}, "sequence number 2 out of order");          // one dropped
    uint64_t l2 = 0, l3 = 0, l4 = 0;
    refused({one}, {&key, 4, &l2, nullptr, encrypt}, "tag does not match");                      // another stream
    refused({one}, {&other, 3, &l3, nullptr, encrypt}, "tag does not match");                    // another key
    refused({one}, {&key, 3, &l4, nullptr, !encrypt}, encrypt ? "an encrypted frame" : "an unencrypted frame");
    // Unsealed frames (what anyone can make) are refused once keys are in use.
    uint64_t l5 = 0;
    refused({encoded(FrameType::checkpoint, payload)}, {&key, 3, &l5, nullptr, encrypt},
            encrypt ? "an unencrypted frame in an encrypted job" : "out of order");
    // Every flipped bit.
    for (size_t byte = 0; byte < one.size(); byte += (byte < 40 || byte + 20 > one.size()) ? 1 : 37)
      for (int bit = 0; bit < 8; ++bit) {
        auto bad = one;
        bad[byte] ^= static_cast<uint8_t>(1u << bit);
        uint64_t l = 0;
        std::vector<IoResult> res = feed_all({bad}, {&key, 3, &l, nullptr, encrypt});
        EXPECT_EQ(res.back().status, IoStatus::bad_frame) << "byte " << byte << " bit " << bit;
        EXPECT_EQ(l, 0u);
      }
    // Broadcasts: numbered on their own stream, accepted only where expected, never twice.
    std::vector<uint8_t> b5 = encoded(FrameType::checkpoint, payload, {&key, kBroadcastStream, 5, encrypt});
    std::vector<uint8_t> b7 = encoded(FrameType::checkpoint, payload, {&key, kBroadcastStream, 7, encrypt});
    uint64_t ul = 0, bl = 0;
    r = feed_all({b5, one, b7}, {&key, 3, &ul, &bl, encrypt});
    ASSERT_EQ(r.size(), 3u);
    for (const IoResult& x : r) EXPECT_TRUE(x.ok()) << x.describe();
    EXPECT_EQ(bl, 7u);
    EXPECT_EQ(ul, 1u);
    uint64_t ul2 = 0, bl2 = 0, ul3 = 0;
    refused({b7, b5}, {&key, 3, &ul2, &bl2, encrypt}, "sequence number 5 out of order");
    refused({b5}, {&key, 3, &ul3, nullptr, encrypt}, "out of order");  // the master expects none
  }
}

// Issue 14, session 14: each thread keeps its AEAD contexts per (key, cipher, direction)
// (CAPE_AEAD_KEPT): more keys than it keeps, used in turn, sealing and opening interleaved,
// authenticated and encrypted: every frame opens under its own key and stream only.
TEST(Frame, KeptCipherContextsNeverMixKeys) {
  constexpr int kKeys = 10;
  std::vector<FrameKey> keys(kKeys);
  for (int k = 0; k < kKeys; ++k) keys[k].fill(static_cast<uint8_t>(k + 1));
  std::vector<uint8_t> payload(100, 0x5a);
  std::vector<uint64_t> last(2 * kKeys, 0);
  for (int round = 0; round < 3; ++round)
    for (int k = 0; k < kKeys; ++k)
      for (bool encrypt : {false, true}) {
        SCOPED_TRACE("key " + std::to_string(k) + (encrypt ? " encrypted" : " authenticated") + " round " +
                     std::to_string(round));
        uint64_t& seq = last[2 * k + encrypt];
        std::vector<uint8_t> f = encoded(FrameType::checkpoint, payload, {&keys[k], 3, seq + 1, encrypt});
        uint64_t wrong = seq;
        std::vector<IoResult> bad = feed_all({f}, {&keys[(k + 1) % kKeys], 3, &wrong, nullptr, encrypt});
        ASSERT_EQ(bad.size(), 1u);
        EXPECT_EQ(bad[0].status, IoStatus::bad_frame);
        std::vector<Frame> got;
        std::vector<IoResult> r = feed_all({f}, {&keys[k], 3, &seq, nullptr, encrypt}, &got);
        ASSERT_EQ(r.size(), 1u);
        EXPECT_TRUE(r[0].ok()) << r[0].describe();
        EXPECT_EQ(seq, static_cast<uint64_t>(round + 1));
        ASSERT_EQ(got.size(), 1u);
        EXPECT_EQ(std::vector<uint8_t>(got[0].payload.begin(), got[0].payload.end()), payload);
      }
}

// Issue 14: a slave's small frames ride ahead of its part in one write, and the reader takes
// frames that arrived together from its read-ahead buffer; large payloads still go straight
// into the frame. Sealed and not, whole and trickled byte by byte.
TEST(Frame, SmallFramesRideAheadAndAreReadTogether) {
  FrameKey key{};
  key[0] = 9;
  std::vector<uint8_t> big(3 * ReadBuffer::kSize + 123), small{'s', 't'};
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<uint8_t>(i * 13 + 1);
  for (bool sealed : {false, true})
    for (bool trickle : {false, true}) {
      SCOPED_TRACE(std::string(sealed ? "sealed" : "checksummed") + (trickle ? ", trickled" : ""));
      auto seal = [&](uint64_t seq) { return sealed ? Seal{&key, 3, seq, false} : Seal{}; };
      iovec r{const_cast<char*>("region 1"), 8}, st{small.data(), small.size()};
      std::vector<uint8_t> before = encode_frame(FrameType::region, {&r, 1}, seal(1));
      std::vector<uint8_t> two = encode_frame(FrameType::state, {&st, 1}, seal(2));
      before.insert(before.end(), two.begin(), two.end());
      Pair w;  // the bytes one write_frame() puts on the wire
      std::vector<uint8_t> wire;
      std::thread drain([&] {
        uint8_t b[65536];
        for (;;) {
          ssize_t n = ::read(w.b.get(), b, sizeof b);
          if (n == 0) break;
          if (n > 0) {
            wire.insert(wire.end(), b, b + n);
          } else {
            std::this_thread::sleep_for(1ms);
          }
        }
      });
      iovec v = {big.data(), big.size()};
      ASSERT_TRUE(write_frame(w.a.get(), FrameType::checkpoint, {&v, 1}, 2s, seal(3), before).ok());
      std::vector<uint8_t> after = encode_frame(FrameType::heartbeat, {}, seal(4));
      write_raw(w.a.get(), after);
      w.a.reset();
      drain.join();
      Pair p;
      std::thread writer([&] {
        if (!trickle) return write_raw(p.a.get(), wire);
        for (size_t i = 0; i < wire.size(); i += 977) {
          write_raw(p.a.get(), std::vector<uint8_t>(wire.begin() + i, wire.begin() + std::min(wire.size(), i + 977)));
          if (i % (977 * 64) == 0) std::this_thread::sleep_for(1ms);
        }
      });
      uint64_t last = 0;
      Unseal u = sealed ? Unseal{&key, 3, &last, nullptr, false} : Unseal{};
      ReadBuffer ahead;
      std::vector<Frame> got(4);
      for (Frame& f : got) {
        IoResult res = read_frame(p.b.get(), f, kDefaultMaxPayload, 2s, std::nullopt, u, &ahead);
        ASSERT_TRUE(res.ok()) << res.describe();
      }
      writer.join();
      EXPECT_EQ(got[0].type, FrameType::region);
      EXPECT_EQ(std::string(got[0].payload.begin(), got[0].payload.end()), "region 1");
      EXPECT_EQ(got[1].type, FrameType::state);
      EXPECT_EQ(std::vector<uint8_t>(got[1].payload.begin(), got[1].payload.end()), small);
      EXPECT_EQ(got[2].type, FrameType::checkpoint);
      EXPECT_TRUE(std::equal(big.begin(), big.end(), got[2].payload.begin(), got[2].payload.end()));
      EXPECT_EQ(got[3].type, FrameType::heartbeat);
      if (sealed) {
        EXPECT_EQ(last, 4u);
      }
      p.a.reset();
      Frame end;
      EXPECT_EQ(read_frame(p.b.get(), end, kDefaultMaxPayload, 1s, std::nullopt, u, &ahead).status, IoStatus::eof);
    }
}

}  // namespace
}  // namespace cape::net

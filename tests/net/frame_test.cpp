// Frames: good ones round-trip; short, huge, corrupted or unknown ones are refused with a
// clear reason and never crash or allocate the claimed length.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

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

void write_raw(int fd, const std::vector<uint8_t>& bytes) {
  size_t done = 0;
  while (done < bytes.size()) {
    ssize_t w = ::write(fd, bytes.data() + done, bytes.size() - done);
    ASSERT_GT(w, 0);
    done += static_cast<size_t>(w);
  }
}

std::vector<uint8_t> encoded(FrameType t, const std::vector<uint8_t>& payload) {
  Pair p;
  iovec v{const_cast<uint8_t*>(payload.data()), payload.size()};
  IoResult w = write_frame(p.a.get(), t, {&v, 1}, 1s);
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
  FrameHeader h{FrameType::checkpoint, uint64_t{1} << 62};
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
  EXPECT_NE(r.what.find("protocol version 1, this cape speaks 2"), std::string::npos) << r.what;
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

}  // namespace
}  // namespace cape::net

// The join handshake (net/handshake.h) over a socketpair, each end on its own thread: a slave
// with the secret joins and both ends learn who is who; every refusal reaches the slave with
// its reason; a master without the secret, or one that does not speak the protocol, is
// refused by the slave.
#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <future>
#include <thread>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "net/frame.h"
#include "net/handshake.h"
#include "util/error.h"
#include "util/scoped_fd.h"

namespace cape::net {
namespace {

using namespace std::chrono_literals;

struct Pair {
  util::ScopedFd master, slave;
  Pair() {
    int sv[2];
    EXPECT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, sv), 0);
    master.reset(sv[0]);
    slave.reset(sv[1]);
  }
};

struct Outcome {
  std::optional<Joiner> joined;   // the master's view
  std::string slave_error;        // "" = the slave joined
};

// One handshake: the master of a `size`-node job with `master_secret`, the slave `me` with
// `slave_secret`; `may_join` as the Node passes it.
Outcome handshake(const Secret& master_secret, int size, const Secret& slave_secret, SlaveId me,
                  std::function<std::string(int)> may_join = [](int) { return std::string(); }) {
  Pair p;
  auto slave = std::async(std::launch::async, [&] {
    try {
      join_master(p.slave.get(), "socketpair", slave_secret, me, 2000ms);
      return std::string();
    } catch (const UserError& e) {
      return std::string(e.what());
    }
  });
  Outcome o;
  o.joined = accept_slave(p.master.get(), "socketpair", master_secret, size, 2000ms, may_join, "job A");
  o.slave_error = slave.get();
  return o;
}

TEST(Handshake, ASlaveWithTheSecretJoins) {
  Secret s = Secret::generate();
  Outcome o = handshake(s, 3, s, {2, 3, "slave-host", "job A"});
  EXPECT_EQ(o.slave_error, "");
  ASSERT_TRUE(o.joined);
  EXPECT_EQ(o.joined->rank, 2);
  EXPECT_EQ(o.joined->host, "slave-host");
  EXPECT_EQ(o.joined->pid, ::getpid());
}

TEST(Handshake, RefusalsReachTheSlaveWithTheirReason) {
  Secret s = Secret::generate();
  // `already`: what may_join says (the Node's "already joined").
  auto expect_refused = [&](const Secret& slave_secret, int rank, int size, const std::string& already,
                            const std::string& why) {
    Outcome o = handshake(s, 3, slave_secret, {rank, size, "intruder", "job A"}, [&](int) { return already; });
    EXPECT_FALSE(o.joined) << why;
    EXPECT_EQ(o.slave_error, "the master at socketpair refused rank " + std::to_string(rank) + ": " + why);
  };
  expect_refused(Secret::from_string("not the job secret at all"), 1, 3, "",
                 "wrong job secret (claimed rank 1 on intruder)");
  expect_refused(s, 1, 4, "", "job size mismatch: it says 4, the master 3");
  expect_refused(s, 3, 3, "", "bad rank 3");
  expect_refused(s, 0, 3, "", "bad rank 0");
  expect_refused(s, 1, 3, "rank 1 has already joined", "rank 1 has already joined");
}

// Issue 16, item 3: a node of another job that holds the same secret (a shared secret file)
// is refused up front, told why.
TEST(Handshake, ANodeOfAnotherJobIsRefused) {
  Secret s = Secret::generate();
  Outcome o = handshake(s, 3, s, {1, 3, "elsewhere", "job B, program ./other"});
  EXPECT_FALSE(o.joined);
  EXPECT_EQ(o.slave_error,
            "the master at socketpair refused rank 1: it belongs to another job (job B, program ./other; this job: "
            "job A)");
}

// Issue 16, item 5: what a peer says about itself is escaped before the master keeps or logs
// it: a newline cannot forge a "cape:" line, an escape sequence cannot reach the terminal.
TEST(Handshake, APeersHostNameIsEscaped) {
  Secret s = Secret::generate();
  Outcome o = handshake(s, 3, s, {1, 3, "evil\ncape: forged\x1b[31m red", "job A"});
  ASSERT_TRUE(o.joined) << o.slave_error;
  EXPECT_EQ(o.joined->host, "evil\\x0acape: forged\\x1b[31m red");
}

// Issue 16, item 1: the handshake has one deadline, however the peer paces its bytes: a
// peer sending a byte every 100 ms is dropped after the 500 ms timeout, not after the whole
// frame (which it would take ~5 s to send).
TEST(Handshake, APeerTricklingBytesIsDroppedAtTheDeadline) {
  Pair p;
  std::atomic<bool> stop{false};
  std::thread trickle([&] {
    uint8_t hdr[kFrameHeaderSize];
    encode_header({FrameType::auth, 20, 0, 0}, hdr);
    for (size_t i = 0; i < sizeof hdr && !stop; ++i) {
      if (::write(p.slave.get(), hdr + i, 1) != 1) break;
      std::this_thread::sleep_for(100ms);
    }
    for (int i = 0; i < 30 && !stop; ++i) {
      if (::write(p.slave.get(), "x", 1) != 1) break;
      std::this_thread::sleep_for(100ms);
    }
  });
  auto start = std::chrono::steady_clock::now();
  std::optional<Joiner> j = accept_slave(p.master.get(), "socketpair", Secret::generate(), 2, 500ms,
                                         [](int) { return std::string(); });
  auto took = std::chrono::steady_clock::now() - start;
  stop = true;
  trickle.join();
  EXPECT_FALSE(j);
  EXPECT_GE(took, 450ms);
  EXPECT_LT(took, 1500ms);
}

TEST(Handshake, TheSlaveRefusesAMasterWithoutTheSecret) {
  // An impostor on the master's port: it cannot check the slave's proof, so it says auth_ok
  // with a proof made from its own secret.
  Secret s = Secret::generate();
  Secret impostor = Secret::from_string("impostor secret 0123456789");
  Pair p;
  auto slave = std::async(std::launch::async, [&] {
    try {
      join_master(p.slave.get(), "socketpair", s, {1, 2, "h", ""}, 2000ms);
      return std::string();
    } catch (const UserError& e) {
      return std::string(e.what());
    }
  });
  PayloadWriter w;
  w.bytes(random_nonce());
  w.bytes(random_nonce());  // job nonce
  w.u8(0);                  // flags
  iovec v{w.buffer().data(), w.buffer().size()};
  ASSERT_TRUE(write_frame(p.master.get(), FrameType::challenge, {&v, 1}, 2000ms).ok());
  Frame f;
  ASSERT_TRUE(read_frame(p.master.get(), f, kHandshakeMaxPayload, 2000ms).ok());
  EXPECT_EQ(f.type, FrameType::auth);
  Mac fake = master_proof(impostor, random_nonce(), random_nonce(), 1);
  iovec pv{fake.data(), fake.size()};
  ASSERT_TRUE(write_frame(p.master.get(), FrameType::auth_ok, {&pv, 1}, 2000ms).ok());
  EXPECT_EQ(slave.get(), "the peer at socketpair does not hold the job secret");
}

TEST(Handshake, TheSlaveRefusesAPeerThatDoesNotSpeakTheProtocol) {
  Pair p;
  auto slave = std::async(std::launch::async, [&] {
    try {
      join_master(p.slave.get(), "socketpair", Secret::generate(), {1, 2, "h", ""}, 2000ms);
      return std::string();
    } catch (const UserError& e) {
      return std::string(e.what());
    }
  });
  iovec v{const_cast<char*>("hello"), 5};
  ASSERT_TRUE(write_frame(p.master.get(), FrameType::heartbeat, {&v, 1}, 2000ms).ok());
  EXPECT_EQ(slave.get(), "the peer at socketpair does not speak the cape protocol");
}

TEST(Handshake, ASilentSlaveIsDroppedWithinTheBound) {
  Pair p;
  auto start = std::chrono::steady_clock::now();
  std::optional<Joiner> j = accept_slave(p.master.get(), "socketpair", Secret::generate(), 2, 300ms,
                                         [](int) { return std::string(); });
  EXPECT_FALSE(j);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
}

}  // namespace
}  // namespace cape::net

// A loaded machine must only make a job slower (issue 16, item 13): joins and endings of
// connections whose far end is slow.
// Load is made deterministic here: a reader thread that does not run for a while is a
// reader blocked in one of the Node's callbacks (on_output on the master, on_input on a
// slave), which run on the connection's reader thread; a master slow to answer a join is
// one whose may_join callback takes its time.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

#include "ckpt/checkpoint.h"
#include "net/handshake.h"
#include "net/node.h"
#include "net/socket.h"

namespace cape::net {
namespace {

using namespace std::chrono_literals;

// A gate a callback waits at until the test opens it.
class Gate {
 public:
  void wait() {
    std::unique_lock lk(mu_);
    cv_.wait(lk, [&] { return open_; });
  }
  void open() {
    {
      std::lock_guard lk(mu_);
      open_ = true;
    }
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

NodeOptions options(int rank, uint16_t port, const Secret& s) {
  NodeOptions o;
  o.rank = rank;
  o.size = 2;
  o.master = {"127.0.0.1", port};
  o.secret = s;
  o.label = "test";
  o.heartbeat = 50ms;
  o.timeout = 4000ms;
  o.connect_timeout = 10s;
  return o;
}

// The master's listening socket with a small receive buffer (accepted sockets inherit it):
// a slave's bytes then wait in the slave's send queue while the master reads nothing.
int small_window_listener() {
  util::ScopedFd l(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  int rcv = 4096;
  EXPECT_EQ(::setsockopt(l.get(), SOL_SOCKET, SO_RCVBUF, &rcv, sizeof rcv), 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(::bind(l.get(), reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  EXPECT_EQ(::listen(l.get(), 16), 0);
  return l.release();
}

// The last region of a job: a slave sends its part and its exit report and its node ends
// while the master has not read them yet (its reader starved on a loaded machine), and
// while the master's heartbeats wait unread on the slave (its reader starved too). A
// socket closed with unread bytes is reset by the kernel, and a reset drops whatever the
// closing end had not sent yet: the master read a truncated checkpoint and failed the job
// with "node 1 (...): socket error: Connection reset by peer in parallel region 1". A node
// now closes only once the far end has everything it sent (or the bound passed).
TEST(UnderLoad, ASlavesLastBytesReachABusyMasterBeforeItsNodeCloses) {
  Secret s = Secret::generate();
  Gate master_reader, slave_reader;
  std::atomic<bool> output_seen{false}, input_seen{false};
  NodeOptions mo = options(0, 0, s);
  mo.listen_fd = small_window_listener();
  mo.on_output = [&](int, Stream, uint64_t, std::string_view) {
    output_seen = true;
    master_reader.wait();
  };
  Node master(std::move(mo));
  std::atomic<bool> slave_closing{false};
  std::string slave_error;
  std::thread slave([&] {
    try {
      NodeOptions so = options(1, master.port(), s);
      so.on_input = [&](std::string_view, bool) {
        input_seen = true;
        slave_reader.wait();
      };
      auto node = std::make_unique<Node>(std::move(so));
      node->start();
      while (!input_seen) std::this_thread::sleep_for(1ms);  // its reader is now stuck
      node->set_region("parallel region 1");
      node->send_output(Stream::out, 1, "a line\n");
      while (!output_seen) std::this_thread::sleep_for(1ms);  // the master's reader too
      ckpt::Checkpoint part;
      part.name = "after";
      std::vector<uint8_t> bytes(12 << 10);
      for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 7);
      part.append(0x10000, bytes, 1);
      node->send(part, 0);
      node->program_exited(0, true);
      slave_closing = true;
      node.reset();
    } catch (const std::exception& e) {
      slave_error = e.what();
    }
  });
  master.start();
  master.broadcast_input("x", false);
  while (!slave_closing) std::this_thread::sleep_for(1ms);
  std::this_thread::sleep_for(300ms);  // master heartbeats pile up unread on the slave
  slave_reader.open();
  std::this_thread::sleep_for(300ms);  // the slave's node ends meanwhile
  master_reader.open();
  slave.join();
  EXPECT_EQ(slave_error, "");
  ckpt::Checkpoint got = master.receive("after");
  ASSERT_EQ(got.runs.size(), 1u);
  std::span<const uint8_t> data = got.data(got.runs[0]);
  ASSERT_EQ(data.size(), size_t{12} << 10);
  for (size_t i = 0; i < data.size(); ++i) ASSERT_EQ(data[i], static_cast<uint8_t>(i * 7)) << i;
  master.program_exited(0);
  EXPECT_EQ(master.failure().value_or(""), "");
}

// A slave's handshake used to have its own deadline of `timeout` from its connect. A master
// that accepted late (loaded: the connection waited in the listen queue) and answered just
// after that deadline had the slave joined, while the slave had hung up to try again: the
// master's reader then found the connection closed ("vanished") and the slave's next try
// was refused ("rank 1 has already joined"). The master bounds its own side; the slave now
// waits for its answer until the join deadline.
TEST(UnderLoad, ASlaveWaitsForAMasterSlowToAnswerItsJoin) {
  Secret s = Secret::generate();
  util::ScopedFd l = listen_tcp("127.0.0.1", 0);
  NodeOptions so = options(1, local_port(l.get()), s);
  so.timeout = 500ms;
  so.connect_timeout = 4s;
  std::string slave_error;
  std::atomic<bool> joined{false}, done{false};
  std::thread slave([&] {
    try {
      Node node(std::move(so));
      node.start();
      joined = true;
      while (!done) std::this_thread::sleep_for(5ms);
      node.program_exited(0);
    } catch (const std::exception& e) {
      slave_error = e.what();
    }
  });
  // The master: accepts after the slave's `timeout` has passed, answers later still.
  std::this_thread::sleep_for(300ms);
  util::ScopedFd fd(::accept4(l.get(), nullptr, nullptr, SOCK_CLOEXEC));
  ASSERT_TRUE(fd.valid());
  set_nonblocking(fd.get());
  std::optional<Joiner> j = accept_slave(fd.get(), "test", s, 2, 4s, [](int) {
    std::this_thread::sleep_for(400ms);
    return std::string();
  });
  ASSERT_TRUE(j);
  // The slave is on this connection (not gone to try again): its heartbeats arrive.
  uint64_t seq = 0;
  Frame f;
  IoResult r = read_frame(fd.get(), f, kDefaultMaxPayload, 2s, std::nullopt,
                          Unseal{&j->keys.recv, j->keys.recv_stream, &seq, nullptr, false});
  EXPECT_TRUE(r.ok()) << r.describe();
  EXPECT_EQ(f.type, FrameType::heartbeat);
  done = true;
  slave.join();
  EXPECT_EQ(slave_error, "");
  EXPECT_TRUE(joined);
}

// The other side of the join: a slave slow to authenticate (a loaded machine) within the
// master's bound used to be refused ("no valid authentication (timed out)"), which ends its
// join for good (join_master throws UserError on a refusal). It is now dropped: it sees the
// connection close, which join_master reports as HandshakeLost, and the node tries again.
TEST(UnderLoad, ASlaveTooSlowForTheMastersBoundIsDroppedNotRefused) {
  int sv[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  util::ScopedFd master_end(sv[0]), slave_end(sv[1]);
  set_nonblocking(master_end.get());
  set_nonblocking(slave_end.get());
  std::optional<Joiner> j = accept_slave(master_end.get(), "test", Secret::generate(), 2, 300ms,
                                         [](int) { return std::string(); });
  EXPECT_FALSE(j);
  master_end.reset();  // as the master's handshake thread does when it gives up
  Frame f;
  IoResult r = read_frame(slave_end.get(), f, kHandshakeMaxPayload, 1s);
  ASSERT_TRUE(r.ok()) << r.describe();
  EXPECT_EQ(f.type, FrameType::challenge);
  r = read_frame(slave_end.get(), f, kHandshakeMaxPayload, 1s);
  EXPECT_EQ(r.status, IoStatus::eof) << (r.ok() ? std::string("a ") + to_string(f.type) + " frame" : r.describe());
}

}  // namespace
}  // namespace cape::net

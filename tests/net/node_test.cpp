// The node star on loopback, one thread per node: the parallel-for template of
// 001_3036025dc34c4021.txt Fig. 3 with checkpoints of known content, early arrivals, name
// reuse across regions, wrong secrets, and every way a peer can fail.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <set>
#include <future>
#include <optional>
#include <thread>

#include "ckpt/format.h"
#include "ckpt/ops.h"
#include "net/handshake.h"
#include "net/node.h"
#include "net/socket.h"
#include "util/error.h"

namespace cape::net {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

struct Failures {
  std::mutex mu;
  std::vector<std::pair<std::string, bool>> seen;
  void add(const std::string& m, bool report) {
    std::lock_guard lk(mu);
    seen.emplace_back(m, report);
  }
  size_t size() {
    std::lock_guard lk(mu);
    return seen.size();
  }
};

NodeOptions options(int rank, int size, uint16_t port, const Secret& s, Failures* f = nullptr) {
  NodeOptions o;
  o.rank = rank;
  o.size = size;
  o.master = {"127.0.0.1", port};
  o.secret = s;
  o.label = "test";
  o.heartbeat = 100ms;
  o.timeout = 1000ms;
  o.connect_timeout = 10s;
  if (f) o.on_failure = [f](const std::string& m, bool report) { f->add(m, report); };
  return o;
}

ckpt::Checkpoint make_ck(const std::string& name, uint64_t address, uint64_t value,
                         uint64_t timestamp = 1, size_t words = 1) {
  ckpt::Checkpoint ck;
  ck.name = name;
  std::vector<uint64_t> v(words, value);
  ck.append(address, {reinterpret_cast<const uint8_t*>(v.data()), v.size() * 8}, timestamp);
  return ck;
}

uint64_t word_at(const ckpt::Checkpoint& ck, uint64_t address) {
  const uint8_t* p = ck.at(address);
  EXPECT_NE(p, nullptr) << std::hex << address;
  if (!p) return 0;
  uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

// Fig. 3, twice (names reused), with N nodes: before_i -> slave i, after_i back, merged,
// final broadcast. Every value is known, so the merged and broadcast content is checked.
void run_template(int n, int regions) {
  Secret s = Secret::generate();
  Node master(options(0, n, 0, s));
  std::vector<std::future<void>> slaves;
  for (int r = 1; r < n; ++r)
    slaves.push_back(std::async(std::launch::async, [&, r] {
      Node node(options(r, n, master.port(), s));
      node.start();
      for (int reg = 0; reg < regions; ++reg) {
        node.set_region("region " + std::to_string(reg));
        ckpt::Checkpoint before = node.receive("before");
        EXPECT_EQ(word_at(before, 0x1000), uint64_t(100 * reg + r));  // my chunk's index
        node.send(make_ck("after", 0x2000 + 8 * r, 1000 * reg + r), 0);
        ckpt::Checkpoint fin = node.receive("final");
        for (int k = 1; k < n; ++k) EXPECT_EQ(word_at(fin, 0x2000 + 8 * k), uint64_t(1000 * reg + k));
      }
      node.program_exited(0);  // W_EXITCODE(0, 0)
    }));
  master.start();
  for (int reg = 0; reg < regions; ++reg) {
    master.set_region("region " + std::to_string(reg));
    for (int r = 1; r < n; ++r) master.send(make_ck("before", 0x1000, 100 * reg + r), r);
    ckpt::Checkpoint merged;
    merged.name = "after";
    std::set<int> from;
    master.wait_for("after", [&](ckpt::Checkpoint&& part, int f) {
      EXPECT_TRUE(from.insert(f).second);
      EXPECT_EQ(word_at(part, 0x2000 + 8 * f), uint64_t(1000 * reg + f));
      merged = ckpt::merge(merged, part).merged;
    });
    EXPECT_EQ(from.size(), size_t(n - 1));
    merged.name = "final";
    master.broadcast(merged);
  }
  for (auto& f : slaves) f.get();
  master.program_exited(0);
  EXPECT_FALSE(master.failure());
}

TEST(Node, ThreeNodeTemplateTwoRegions) { run_template(3, 2); }
TEST(Node, FourNodeTemplateThreeRegions) { run_template(4, 3); }

// A one-node job: its master has no peer at all. What it sends itself it receives; asking
// for anything else fails at once, saying why (it once read a peer past the end).
TEST(Node, OneNodeMasterReceivesOnlyWhatItSentItself) {
  Secret s = Secret::generate();
  Node master(options(0, 1, 0, s));
  master.start();
  master.send(make_ck("self", 0x10, 7), 0);
  EXPECT_EQ(word_at(master.receive("self"), 0x10), 7u);
  try {
    master.receive("before");
    ADD_FAILURE() << "receive returned";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("waiting for checkpoint 'before': the job has one node"), std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(master.failure());
  master.program_exited(0);
}

TEST(Node, EarlyArrivalsWaitInTheirQueueInOrder) {
  Secret s = Secret::generate();
  Node master(options(0, 3, 0, s));
  std::promise<void> sent;
  std::vector<std::thread> slaves;
  std::atomic<int> sent_count{0};
  std::promise<void> done;
  auto done_f = done.get_future().share();
  for (int r = 1; r < 3; ++r)
    slaves.emplace_back([&, r] {
      Node node(options(r, 3, master.port(), s));
      node.start();
      // Two regions' parts, both named "after", sent before the master asks for either.
      node.send(make_ck("after", 0x3000 + 8 * r, 10 + r), 0);
      node.send(make_ck("after", 0x3000 + 8 * r, 20 + r), 0);
      node.send(make_ck("other", 0x4000, 5), 0);
      if (++sent_count == 2) sent.set_value();
      done_f.wait();
      node.program_exited(0);
    });
  master.start();
  sent.get_future().wait();
  for (int region = 1; region <= 2; ++region) {
    int parts = 0;
    master.wait_for("after", [&](ckpt::Checkpoint&& part, int from) {
      EXPECT_EQ(word_at(part, 0x3000 + 8 * from), uint64_t(10 * region + from));
      ++parts;
    });
    EXPECT_EQ(parts, 2);
  }
  EXPECT_EQ(word_at(master.receive("other"), 0x4000), 5u);
  EXPECT_EQ(word_at(master.receive("other"), 0x4000), 5u);
  done.set_value();
  for (auto& t : slaves) t.join();
  master.program_exited(0);
}

// A slave's small lock release leaves from the heartbeat thread while its program runs on
// (net/node_locks.cpp). It must go out at once, not at the next heartbeat (here 30 s away),
// and before the slave's next frame: its next request for the lock, then its part.
TEST(Node, LockReleaseGoesOutAtOnceAndBeforeTheNextRequest) {
  Secret s = Secret::generate();
  NodeOptions mo = options(0, 2, 0, s);
  mo.heartbeat = 30s;
  mo.timeout = 60s;
  Node master(mo);
  std::promise<void> released;
  auto slave = std::async(std::launch::async, [&] {
    NodeOptions so = options(1, 2, master.port(), s);
    so.heartbeat = 30s;
    so.timeout = 60s;
    so.lock_lease = false;  // every entry asks (the lease's re-entry sends nothing)
    Node node(so);
    node.start();
    ckpt::Checkpoint g = node.lock_acquire("L", 1);
    EXPECT_EQ(g.timestamp, 1u);
    ckpt::Checkpoint w1 = make_ck("L", 0x5000, 7, 1);
    w1.timestamp = 1;  // the acquisition's stamp (Criticals::exit)
    node.lock_release("L", w1);
    // At once again: the release still waiting would come after this request.
    ckpt::Checkpoint again = node.lock_acquire("L", 1);
    EXPECT_EQ(again.timestamp, 2u);
    EXPECT_TRUE(again.runs.empty());  // its own write: nothing from other holders
    ckpt::Checkpoint w2 = make_ck("L", 0x5000, 8, 2);
    w2.timestamp = 2;
    node.lock_release("L", w2);
    released.set_value();
    ckpt::Checkpoint fin = node.receive("final");
    node.program_exited(0);
  });
  master.start();
  released.get_future().wait();
  auto t0 = Clock::now();
  ckpt::Checkpoint g = master.lock_acquire("L", 1);
  EXPECT_LT(Clock::now() - t0, 20s);  // not the heartbeat's 30 s
  EXPECT_EQ(g.timestamp, 3u);
  EXPECT_EQ(word_at(g, 0x5000), 8u);
  master.lock_release("L", ckpt::Checkpoint{});
  master.broadcast(make_ck("final", 0x6000, 1));
  slave.get();
  master.program_exited(0);
  EXPECT_FALSE(master.failure());
}

// Lock leases (docs/critical.md): a slave re-enters a lock nobody asked for without a frame,
// with its lease's stamp; the master asking for it gets it back with the lease's last writes,
// at once when the slave is outside its body, at the body's exit when inside.
TEST(Node, ALeaseIsKeptUntilAskedBackWithItsWrites) {
  Secret s = Secret::generate();
  NodeOptions mo = options(0, 2, 0, s);
  mo.heartbeat = 30s;
  mo.timeout = 60s;
  Node master(mo);
  std::promise<void> idle, inside, asked;
  auto slave = std::async(std::launch::async, [&] {
    NodeOptions so = options(1, 2, master.port(), s);
    so.heartbeat = 30s;
    so.timeout = 60s;
    Node node(so);
    node.start();
    ckpt::Checkpoint g = node.lock_acquire("L", 1);
    EXPECT_EQ(g.timestamp, 1u);
    ckpt::Checkpoint w1 = make_ck("L", 0x5000, 7, 1);
    w1.timestamp = 1;
    node.lock_release("L", w1);
    ckpt::Checkpoint again = node.lock_acquire("L", 1);  // the lease: same stamp, nothing to carry
    EXPECT_EQ(again.timestamp, 1u);
    EXPECT_TRUE(again.runs.empty());
    ckpt::Checkpoint w2 = make_ck("L", 0x5000, 8, 1);
    w2.timestamp = 1;
    node.lock_release("L", w2);
    idle.set_value();  // the master takes it back while this node is outside
    asked.get_future().wait();
    ckpt::Checkpoint third = node.lock_acquire("L", 1);  // asks again: the master had it
    EXPECT_EQ(third.timestamp, 3u);
    EXPECT_EQ(word_at(third, 0x5000), 9u);
    inside.set_value();  // the master asks while this node is inside
    std::this_thread::sleep_for(200ms);
    ckpt::Checkpoint w3 = make_ck("L", 0x5000, 10, 3);
    w3.timestamp = 3;
    node.lock_release("L", w3);
    ckpt::Checkpoint fin = node.receive("final");
    node.program_exited(0);
  });
  master.start();
  idle.get_future().wait();
  auto t0 = Clock::now();
  ckpt::Checkpoint g = master.lock_acquire("L", 1);
  EXPECT_LT(Clock::now() - t0, 20s);  // given back at once, not at a heartbeat
  EXPECT_EQ(g.timestamp, 2u);
  EXPECT_EQ(word_at(g, 0x5000), 8u);  // the lease's last write
  master.lock_release("L", make_ck("L", 0x5000, 9, 2));
  asked.set_value();
  inside.get_future().wait();
  ckpt::Checkpoint g2 = master.lock_acquire("L", 1);  // waits for the slave's exit
  EXPECT_EQ(g2.timestamp, 4u);
  EXPECT_EQ(word_at(g2, 0x5000), 10u);
  master.lock_release("L", ckpt::Checkpoint{});
  master.broadcast(make_ck("final", 0x6000, 1));
  slave.get();
  master.program_exited(0);
  EXPECT_FALSE(master.failure());
}

// Renewals (docs/critical.md): a lease used in window 1 and never asked back is kept into
// the slave's window 2 (its part's release says so; the master's answer comes before window
// 2's first frame): re-entered there with stamp 1 and no frame; the master asking takes it.
TEST(Node, AnUncontendedLeaseIsKeptIntoTheNextWindow) {
  Secret s = Secret::generate();
  NodeOptions mo = options(0, 2, 0, s);
  mo.heartbeat = 30s;
  mo.timeout = 60s;
  Node master(mo);
  std::promise<void> used;
  auto slave = std::async(std::launch::async, [&] {
    NodeOptions so = options(1, 2, master.port(), s);
    so.heartbeat = 30s;
    so.timeout = 60s;
    Node node(so);
    node.start();
    EXPECT_EQ(node.lock_acquire("L", 1).timestamp, 1u);
    node.lock_release("L", make_ck("L", 0x5000, 7, 1));
    node.send(make_ck("after", 0x3000, 1), 0);  // window 1 ends: kept into window 2
    ckpt::Checkpoint next = node.receive("next");
    EXPECT_EQ(node.lock_lease_stamp("L", 2), 1u);
    ckpt::Checkpoint g = node.lock_acquire("L", 2);
    EXPECT_EQ(g.timestamp, 1u);
    EXPECT_TRUE(g.runs.empty());
    ckpt::Checkpoint w = make_ck("L", 0x5000, 8, 1);
    w.timestamp = 1;
    node.lock_release("L", w);
    used.set_value();
    ckpt::Checkpoint fin = node.receive("final");
    node.program_exited(0);
  });
  master.start();
  master.wait_for("after", [](ckpt::Checkpoint&&, int) {});
  master.broadcast(make_ck("next", 0x6000, 1));
  used.get_future().wait();
  ckpt::Checkpoint g = master.lock_acquire("L", 2);  // asked back from the renewed lease
  EXPECT_EQ(g.timestamp, 2u);
  EXPECT_EQ(word_at(g, 0x5000), 8u);
  master.lock_release("L", ckpt::Checkpoint{});
  master.broadcast(make_ck("final", 0x6000, 2));
  slave.get();
  master.program_exited(0);
  EXPECT_FALSE(master.failure());
}

TEST(Node, LargeCheckpointArrivesIntact) {
  Secret s = Secret::generate();
  Node master(options(0, 2, 0, s));
  auto slave = std::async(std::launch::async, [&] {
    Node node(options(1, 2, master.port(), s));
    node.start();
    ckpt::Checkpoint big = node.receive("big");
    EXPECT_EQ(big.memory_bytes(), 64u << 20);
    EXPECT_EQ(word_at(big, 0x100000 + (32u << 20)), 0x0123456789abcdefu);
    node.program_exited(0);
  });
  master.start();
  master.send(make_ck("big", 0x100000, 0x0123456789abcdef, 1, (64u << 20) / 8), 1);
  slave.get();
  master.program_exited(0);
}

TEST(Node, WrongSecretIsRefusedAndTheJobGoesOn) {
  Secret s = Secret::generate();
  Node master(options(0, 2, 0, s));
  std::thread intruder_and_slave([&] {
    Node intruder(options(1, 2, master.port(), Secret::from_string("not the job secret at all")));
    try {
      intruder.start();
      ADD_FAILURE() << "an intruder joined";
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find("refused"), std::string::npos) << e.what();
    }
    Node node(options(1, 2, master.port(), s));
    node.start();
    node.send(make_ck("after", 0x10, 77), 0);
    node.program_exited(0);
  });
  master.start();
  int parts = 0;
  master.wait_for("after", [&](ckpt::Checkpoint&& part, int) {
    EXPECT_EQ(word_at(part, 0x10), 77u);
    ++parts;
  });
  EXPECT_EQ(parts, 1);
  intruder_and_slave.join();
  master.program_exited(0);
}

// Issue 14, session 14: the master's local Unix socket (net/socket.h) is a second door, not a
// weaker one. Its name comes from the secret, so a stranger finds only the TCP port; and even
// someone who knows the name (here the test, which holds the secret) must prove the secret
// there: a handshake with another secret is refused and the job goes on (over that socket).
// The local Unix socket needs an 8 MiB send buffer (net/socket.cpp): root forces it, others
// get it only within net.core.wmem_max. A host that allows neither runs local nodes over TCP.
bool unix_buffer_allowed() {
  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) return false;
  bool ok = widen_unix_buffer(sv[0]);
  ::close(sv[0]);
  ::close(sv[1]);
  return ok;
}

TEST(Node, TheLocalUnixSocketRefusesAWrongSecret) {
  if (!unix_buffer_allowed()) GTEST_SKIP() << "this host allows no 8 MiB Unix send buffer (net.core.wmem_max)";
  Secret s = Secret::generate();
  Node master(options(0, 2, 0, s));
  std::string name = local_unix_name(s, master.port());
  std::thread intruder_and_slave([&] {
    util::ScopedFd fd = connect_local_unix(name);
    ASSERT_TRUE(fd.valid()) << "no local Unix socket: " << strerror(errno);
    set_nonblocking(fd.get());
    try {
      (void)join_master(fd.get(), "unix", Secret::from_string("not the job secret at all"), {1, 2, "intruder", ""},
                        2000ms);
      ADD_FAILURE() << "an intruder joined over the Unix socket";
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find("refused"), std::string::npos) << e.what();
    }
    // A stranger (another secret) derives another name: nobody listens there.
    EXPECT_FALSE(connect_local_unix(local_unix_name(Secret::from_string("not the job secret at all"), master.port()))
                     .valid());
    Node node(options(1, 2, master.port(), s));
    node.start();
    node.send(make_ck("after", 0x10, 77), 0);
    node.program_exited(0);
  });
  master.start();
  int parts = 0;
  master.wait_for("after", [&](ckpt::Checkpoint&& part, int) {
    EXPECT_EQ(word_at(part, 0x10), 77u);
    ++parts;
  });
  EXPECT_EQ(parts, 1);
  intruder_and_slave.join();
  master.program_exited(0);
}

// Both ways carry a job: over the Unix socket (the default) and over TCP alone (local_unix
// false on both ends, CAPE_LOCAL_UNIX=0), and a master without one still takes a slave that
// would use it (over TCP).
TEST(Node, LocalUnixOnOffAndMixed) {
  if (!unix_buffer_allowed()) GTEST_SKIP() << "this host allows no 8 MiB Unix send buffer (net.core.wmem_max)";
  for (auto [master_unix, slave_unix] : {std::pair{true, true}, {false, false}, {false, true}, {true, false}}) {
    Secret s = Secret::generate();
    NodeOptions mo = options(0, 2, 0, s);
    mo.local_unix = master_unix;
    Node master(std::move(mo));
    EXPECT_EQ(connect_local_unix(local_unix_name(s, master.port())).valid(), master_unix);
    std::thread slave([&] {
      NodeOptions so = options(1, 2, master.port(), s);
      so.local_unix = slave_unix;
      Node node(std::move(so));
      node.start();
      node.send(make_ck("after", 0x10, 5), 0);
      ckpt::Checkpoint back = node.receive("result");
      EXPECT_EQ(word_at(back, 0x20), 6u);
      node.program_exited(0);
    });
    master.start();
    master.wait_for("after", [&](ckpt::Checkpoint&& part, int) { EXPECT_EQ(word_at(part, 0x10), 5u); });
    master.broadcast(make_ck("result", 0x20, 6));
    slave.join();
    master.program_exited(0);
  }
}

TEST(Node, SlaveRefusesAMasterWithoutTheSecret) {
  NodeOptions o = options(0, 2, 0, Secret::from_string("impostor secret 0123456789"));
  o.connect_timeout = 500ms;
  Node impostor(std::move(o));
  std::thread t([&] {
    try {
      impostor.start();
    } catch (const UserError&) {
    }
  });
  Node node(options(1, 2, impostor.port(), Secret::generate()));
  EXPECT_THROW(node.start(), UserError);
  t.join();
}

// A slave's program is killed: the master's wait_for throws the one message naming the node,
// the signal and the region; the other slave hears of it through an abort and stops.
TEST(Node, SlaveProgramKilledEndsTheJobWithOneMessage) {
  Secret s = Secret::generate();
  Failures mf, sf;
  Node master(options(0, 3, 0, s, &mf));
  std::thread killed([&] {
    Node node(options(1, 3, master.port(), s));
    node.start();
    node.set_region("parallel region at prog.c:12");
    node.receive("before");
    node.program_exited(SIGKILL);  // a wait status: killed by signal 9
  });
  std::string other_msg;
  std::optional<int> other_code;
  std::thread other([&] {
    Node node(options(2, 3, master.port(), s, &sf));
    node.start();
    try {
      // The abort may overtake the master's "before" frame on this node (the failure is
      // seen before the mailbox): either receive then ends with the job's message.
      node.receive("before");
      node.receive("final");
      ADD_FAILURE() << "receive returned";
    } catch (const UserError& e) {
      other_msg = e.what();
    }
    other_code = node.failure_exit_code();
  });
  master.start();
  master.set_region("parallel region at prog.c:12");
  auto t0 = Clock::now();
  try {
    // Node 1 may receive, report its end and fail the job before the master sends to node 2:
    // that send then throws the job's message (it aborted the test binary ~1 run in 30).
    master.send(make_ck("before", 0x1000, 1), 1);
    master.send(make_ck("before", 0x1000, 2), 2);
    master.wait_for("after", [](ckpt::Checkpoint&&, int) {});
    ADD_FAILURE() << "wait_for returned";
  } catch (const UserError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("node 1"), std::string::npos) << m;
    EXPECT_NE(m.find("killed by signal 9"), std::string::npos) << m;
    EXPECT_NE(m.find("prog.c:12"), std::string::npos) << m;
    EXPECT_NE(m.find("(job exit status 137)"), std::string::npos) << m;
  }
  EXPECT_LT(Clock::now() - t0, 2s);
  killed.join();
  other.join();
  EXPECT_EQ(other_msg, *master.failure());
  // Every node exits with the killed program's status (the abort carries it).
  EXPECT_EQ(master.failure_exit_code(), 137);
  EXPECT_EQ(other_code, 137);
  // on_failure runs on the master's reader thread after the failure is recorded (and the
  // abort sent): a moment after the waiters have seen it.
  for (int i = 0; i < 200 && mf.size() == 0; ++i) std::this_thread::sleep_for(10ms);
  ASSERT_EQ(mf.size(), 1u);
  EXPECT_TRUE(mf.seen[0].second);   // the master reports
  ASSERT_EQ(sf.size(), 1u);
  EXPECT_FALSE(sf.seen[0].second);  // the slave stays quiet
}

// A slave whose monitor fails (not its program) says so before it goes: the master names
// it with the reason, not as vanished, and every node gets its status.
TEST(Node, SlaveNodeFailureIsReportedNotVanished) {
  Secret s = Secret::generate();
  Node master(options(0, 3, 0, s));
  std::thread failing([&] {
    Node node(options(1, 3, master.port(), s));
    node.start();
    node.set_region("parallel region 1 (start() at prog.c:7)");
    node.receive("before");
    node.node_failed(3, "its monitor failed with status 3");
  });
  std::optional<int> other_code;
  std::thread other([&] {
    Node node(options(2, 3, master.port(), s));
    node.start();
    // Node 1 may fail before the master sends to node 2: then "before" never comes.
    try {
      node.receive("before");
      node.receive("final");
      ADD_FAILURE() << "node 2 was not told of the failure";
    } catch (const UserError&) {
    }
    other_code = node.failure_exit_code();
  });
  master.start();
  try {
    // The failure may already be known at the second send (node 1 fails as soon as it has
    // its part): every master call from then on throws it.
    master.send(make_ck("before", 0x1000, 1), 1);
    master.send(make_ck("before", 0x1000, 2), 2);
    master.wait_for("after", [](ckpt::Checkpoint&&, int) {});
    ADD_FAILURE() << "wait_for returned";
  } catch (const UserError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("node 1 (test"), std::string::npos) << m;
    EXPECT_NE(m.find("its monitor failed with status 3"), std::string::npos) << m;
    EXPECT_NE(m.find("prog.c:7"), std::string::npos) << m;
    EXPECT_NE(m.find("(job exit status 3)"), std::string::npos) << m;
    EXPECT_EQ(m.find("vanished"), std::string::npos) << m;
  }
  failing.join();
  other.join();
  EXPECT_EQ(master.failure_exit_code(), 3);
  EXPECT_EQ(other_code, 3);
}

TEST(Node, VanishedSlaveIsNamedWithinTheBound) {
  Secret s = Secret::generate();
  Node master(options(0, 2, 0, s));
  std::promise<void> started;
  std::thread t([&] {
    auto node = std::make_unique<Node>(options(1, 2, master.port(), s));
    node->start();
    node->set_region("loop at x.c:3");
    started.get_future().wait();
    node.reset();  // gone without an exit report, like a killed node
  });
  master.start();
  started.set_value();
  auto t0 = Clock::now();
  try {
    master.receive("after");
    ADD_FAILURE();
  } catch (const UserError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("node 1"), std::string::npos) << m;
    EXPECT_NE(m.find("vanished"), std::string::npos) << m;
    EXPECT_NE(m.find("(job exit status 1)"), std::string::npos) << m;
  }
  EXPECT_LT(Clock::now() - t0, 2s);
  EXPECT_EQ(master.failure_exit_code(), 1);  // no program status known
  t.join();
}

// A peer that joins properly and then says nothing (a stopped process, a cut link) is
// found by the heartbeat timeout.
TEST(Node, SilentSlaveTimesOut) {
  Secret s = Secret::generate();
  Node master(options(0, 2, 0, s));
  std::promise<void> done;
  std::thread t([&] {
    util::ScopedFd fd = connect_tcp({"127.0.0.1", master.port()}, 5s);
    set_nonblocking(fd.get());
    Frame f;
    ASSERT_TRUE(read_frame(fd.get(), f, kHandshakeMaxPayload, 5s).ok());
    ASSERT_EQ(f.payload.size(), 65u);  // nonce, job nonce, flags
    Nonce nm;
    std::copy(f.payload.begin(), f.payload.begin() + 32, nm.begin());
    std::vector<uint8_t> context(f.payload.begin() + 32, f.payload.end());
    Nonce ns = random_nonce();
    PayloadWriter w;
    w.i32(1);
    w.i32(2);
    w.i32(4242);
    w.str("mute");
    w.str("");  // the job's identity (options() gives none)
    w.bytes(ns);
    w.bytes(slave_proof(s, nm, ns, 1, 2, "", context));
    iovec v{w.buffer().data(), w.buffer().size()};
    ASSERT_TRUE(write_frame(fd.get(), FrameType::auth, {&v, 1}, 5s).ok());
    ASSERT_TRUE(read_frame(fd.get(), f, kHandshakeMaxPayload, 5s).ok());
    EXPECT_EQ(f.type, FrameType::auth_ok);
    done.get_future().wait();  // joined, then silent: no heartbeats
  });
  master.start();
  auto t0 = Clock::now();
  try {
    master.receive("after");
    ADD_FAILURE();
  } catch (const UserError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("node 1 (mute, pid 4242)"), std::string::npos) << m;
    EXPECT_NE(m.find("stopped answering"), std::string::npos) << m;
  }
  auto took = Clock::now() - t0;
  EXPECT_GE(took, 900ms);
  EXPECT_LT(took, 2500ms);
  done.set_value();
  t.join();
}

TEST(Node, LostMasterIsReportedBySlaveOne) {
  Secret s = Secret::generate();
  Failures f1, f2;
  auto master = std::make_unique<Node>(options(0, 3, 0, s));
  uint16_t port = master->port();
  std::promise<void> ready1, ready2;
  std::string m1, m2;
  std::thread a([&] {
    Node node(options(1, 3, port, s, &f1));
    node.start();
    ready1.set_value();
    try { node.receive("final"); } catch (const UserError& e) { m1 = e.what(); }
  });
  std::thread b([&] {
    Node node(options(2, 3, port, s, &f2));
    node.start();
    ready2.set_value();
    try { node.receive("final"); } catch (const UserError& e) { m2 = e.what(); }
  });
  master->start();
  ready1.get_future().wait();
  ready2.get_future().wait();
  master.reset();
  a.join();
  b.join();
  EXPECT_NE(m1.find("node 0 (the master"), std::string::npos) << m1;
  EXPECT_NE(m2.find("vanished"), std::string::npos) << m2;
  ASSERT_EQ(f1.size(), 1u);
  ASSERT_EQ(f2.size(), 1u);
  EXPECT_TRUE(f1.seen[0].second);
  EXPECT_FALSE(f2.seen[0].second);
}

TEST(Node, MissingSlaveFailsStartNamingTheRank) {
  Secret s = Secret::generate();
  NodeOptions o = options(0, 3, 0, s);
  o.connect_timeout = 500ms;
  Node master(std::move(o));
  std::promise<void> over;
  std::thread t([&] {
    Node node(options(1, 3, master.port(), s));
    node.start();
    over.get_future().wait();  // stay joined while the master gives up on rank 2
  });
  try {
    master.start();
    ADD_FAILURE();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("missing rank(s) 2"), std::string::npos) << e.what();
  }
  over.set_value();
  t.join();
}

// Issue 16, item 1: strangers on the master's port (two that connect and say nothing, one
// that sends a byte every 200 ms) do not hold up the slaves' joins: handshakes run at once,
// each within the timeout. (One at a time, the idle ones held the port 3 s each, longer than
// the slaves wait for their challenge, and the trickling one for as long as it liked.)
TEST(Node, StrangersOnThePortDoNotHoldUpTheJoin) {
  Secret s = Secret::generate();
  NodeOptions mo = options(0, 3, 0, s);
  mo.timeout = 3000ms;
  Node master(std::move(mo));
  std::vector<util::ScopedFd> strangers;
  for (int i = 0; i < 3; ++i) strangers.push_back(connect_tcp({"127.0.0.1", master.port()}, 5s));
  std::atomic<bool> stop{false};
  std::thread trickle([&] {
    while (!stop) {
      if (::send(strangers[2].get(), "x", 1, MSG_NOSIGNAL) != 1) break;
      std::this_thread::sleep_for(200ms);
    }
  });
  auto t0 = Clock::now();
  std::vector<std::future<std::string>> slaves;
  for (int r = 1; r < 3; ++r)
    slaves.push_back(std::async(std::launch::async, [&, r] {
      NodeOptions o = options(r, 3, master.port(), s);
      o.timeout = 3000ms;
      try {
        Node node(std::move(o));
        node.start();
        node.program_exited(0);
        return std::string();
      } catch (const UserError& e) {
        return std::string(e.what());
      }
    }));
  master.start();
  auto took = Clock::now() - t0;
  EXPECT_LT(took, 1500ms);
  master.program_exited(0);
  for (auto& f : slaves) EXPECT_EQ(f.get(), "");
  // The trickling stranger is dropped at the handshake's deadline, not left to go on.
  char buf[256];
  auto t1 = Clock::now();
  set_nonblocking(strangers[2].get());
  for (;;) {
    ssize_t r = ::recv(strangers[2].get(), buf, sizeof buf, 0);
    if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK) || Clock::now() - t1 > 10s) break;
    if (r < 0) std::this_thread::sleep_for(20ms);
  }
  EXPECT_LT(Clock::now() - t0, 5s) << "the trickling stranger was held past the handshake's deadline";
  stop = true;
  trickle.join();
}

// Issue 16, item 4: someone on the path (a proxy between slave 1 and the master) lets the
// handshake through, then replaces the master's checkpoint by a forged one with a valid
// checksum, all that one can make without the secret. (Frames used to carry only checksums:
// a forged checkpoint wrote any tracked memory of a slave.) The slave refuses it: the job
// fails naming the frame, and the forged value never reaches receive().
TEST(Node, AForgedCheckpointOnThePathIsRefused) {
  Secret s = Secret::generate();
  Node master(options(0, 2, 0, s));
  util::ScopedFd lst = listen_tcp("127.0.0.1", 0);
  uint16_t proxy_port = local_port(lst.get());
  util::ScopedFd to_slave, to_master;
  std::atomic<int> forged{0};
  std::thread proxy([&] {
    to_slave.reset(::accept4(lst.get(), nullptr, nullptr, SOCK_CLOEXEC));
    to_master = connect_tcp({"127.0.0.1", master.port()}, 5s);
    int a = to_slave.get(), b = to_master.get();
    auto read_all = [](int fd, uint8_t* p, size_t n) {
      for (size_t done = 0; done < n;) {
        ssize_t r = ::read(fd, p + done, n - done);
        if (r <= 0) return false;
        done += static_cast<size_t>(r);
      }
      return true;
    };
    auto write_all = [](int fd, const uint8_t* p, size_t n) {
      for (size_t done = 0; done < n;) {
        ssize_t r = ::send(fd, p + done, n - done, MSG_NOSIGNAL);
        if (r <= 0) return;
        done += static_cast<size_t>(r);
      }
    };
    std::thread up([&] {  // slave -> master, as it is
      uint8_t buf[65536];
      for (ssize_t r; (r = ::read(a, buf, sizeof buf)) > 0;) write_all(b, buf, static_cast<size_t>(r));
      ::shutdown(b, SHUT_WR);
    });
    // master -> slave, frame by frame: checkpoints are replaced.
    for (;;) {
      std::vector<uint8_t> frame(kFrameHeaderSize);
      if (!read_all(b, frame.data(), kFrameHeaderSize)) break;
      uint64_t len;
      std::memcpy(&len, frame.data() + 8, 8);
      frame.resize(kFrameHeaderSize + len + kFrameTrailerSize);
      if (!read_all(b, frame.data() + kFrameHeaderSize, len + kFrameTrailerSize)) break;
      if (frame[5] != static_cast<uint8_t>(FrameType::checkpoint)) {
        write_all(a, frame.data(), frame.size());
        continue;
      }
      PayloadWriter w;
      w.str("before");
      std::vector<uint8_t> body = ckpt::serialize(make_ck("before", 0x1000, 0x1234));
      iovec v[2] = {{w.buffer().data(), w.buffer().size()}, {body.data(), body.size()}};
      (void)write_frame(a, FrameType::checkpoint, v, 2s);
      ++forged;
    }
    ::shutdown(a, SHUT_WR);
    up.join();
  });
  std::string error;
  std::thread slave_thread([&] {
    try {
      Node slave(options(1, 2, proxy_port, s));
      slave.start();
      ckpt::Checkpoint ck = slave.receive("before");
      error = "received a checkpoint holding " + std::to_string(word_at(ck, 0x1000));
    } catch (const UserError& e) {
      error = e.what();
    }
  });
  master.start();
  master.send(make_ck("before", 0x1000, 7), 1);
  slave_thread.join();
  EXPECT_EQ(forged.load(), 1);
  EXPECT_NE(error.find("node 0 (the master"), std::string::npos) << error;
  EXPECT_NE(error.find("unauthenticated frame"), std::string::npos) << error;
  ::shutdown(to_slave.get(), SHUT_RDWR);
  ::shutdown(to_master.get(), SHUT_RDWR);
  proxy.join();
}

// Issue 16, item 13: a slave's connection is reset after its exit report (a node that
// closes with bytes unread, the master's last heartbeats: the kernel resets the connection
// instead of closing it; on a loaded machine those bytes are more likely). The master used
// to read "Connection reset by peer" after the report and fail the job ("node 1 (...):
// socket error: Connection reset by peer in parallel region 1"); the report said all there
// was to say. (Here the slave is the test: it joins, reports its exit, and resets the
// connection with SO_LINGER 0, as a close with unread bytes does.)
// A slave that ends its program holding a lease the master asked back (by hand here: a real
// slave gives its leases back before its part) fails the job naming the lock: the master
// would otherwise wait for it forever. (Node::revoke leaves a holder whose connection closed
// to the end of that connection: its release may still be unread there, CI's
// critical.trackers "sending a lock_revoke frame ...: connection closed".)
TEST(Node, ASlaveEndingWithALeaseOthersWaitForFailsTheJob) {
  Secret s = Secret::generate();
  Failures f;
  NodeOptions mo = options(0, 2, 0, s, &f);
  mo.heartbeat = 30s;
  mo.timeout = 60s;
  Node master(mo);
  std::promise<void> leased;
  std::thread slave([&] {
    util::ScopedFd fd = connect_tcp({"127.0.0.1", master.port()}, 5s);
    set_nonblocking(fd.get());
    FrameKeys keys = join_master(fd.get(), "test", s, {1, 2, "test", ""}, 5s);
    uint64_t seq = 0, last = 0, last_broadcast = 0;
    auto send = [&](FrameType t, const std::vector<uint8_t>& payload) {
      iovec v{const_cast<uint8_t*>(payload.data()), payload.size()};
      ASSERT_TRUE(write_frame(fd.get(), t, {&v, 1}, 5s, Seal{&keys.send, keys.send_stream, ++seq, false}).ok());
    };
    auto until = [&](FrameType t) {
      for (Frame fr; read_frame(fd.get(), fr, kDefaultMaxPayload, 20s, std::nullopt,
                                Unseal{&keys.recv, keys.recv_stream, &last, &last_broadcast, false}).ok();)
        if (fr.type == t) return true;
      return false;
    };
    PayloadWriter ask;
    ask.str("L");
    ask.u64(1);      // window 1
    ask.u8(2);       // wait, a lease
    ask.u64(~0ull);  // no ticket
    send(FrameType::lock_request, ask.buffer());
    ASSERT_TRUE(until(FrameType::lock_grant));
    leased.set_value();
    ASSERT_TRUE(until(FrameType::lock_revoke));  // the master's program asks for it
    PayloadWriter exited;
    exited.i32(0);
    exited.str("");
    exited.u8(0);  // outside a window
    send(FrameType::exited, exited.buffer());
    fd.reset();
  });
  master.start();
  leased.get_future().wait();
  std::promise<std::string> got;
  std::thread program([&] {
    try {
      master.lock_acquire("L", 1);
      got.set_value("granted");
    } catch (const UserError& e) {
      got.set_value(e.what());
    }
  });
  auto answer = got.get_future();
  if (answer.wait_for(30s) != std::future_status::ready) {
    std::fprintf(stderr, "FAIL: the master still waits for lock 'L' after its holder left the job\n");
    std::_Exit(1);  // (its thread cannot be stopped)
  }
  std::string m = answer.get();
  EXPECT_NE(m.find("node 1 (test"), std::string::npos) << m;
  EXPECT_NE(m.find("left the job holding lock 'L', which another node waits for"), std::string::npos) << m;
  program.join();
  slave.join();
  EXPECT_EQ(f.size(), 1u);
}

// The race behind CI's critical.trackers failure, made certain: the lease's holder has sent
// its release (half of it read) and can no longer read, so the master's revoke finds its
// connection closed (a Unix socket shut for reading: EPIPE, as after a slave's exit) while
// the release is still unread. The revoke must leave it to that connection: the release moves
// the lock on to the master's program. (On 30e7187 the job failed: "sending a lock_revoke
// frame to node 1 (...): connection closed".)
TEST(Node, ARevokeFindingItsHolderClosedWaitsForTheReleaseOnTheWay) {
  if (!unix_buffer_allowed()) GTEST_SKIP() << "this host allows no 8 MiB Unix send buffer (net.core.wmem_max)";
  Secret s = Secret::generate();
  Failures f;
  NodeOptions mo = options(0, 2, 0, s, &f);
  mo.heartbeat = 30s;
  mo.timeout = 60s;
  Node master(mo);
  std::promise<void> leased, half_sent, asked;
  std::thread slave([&] {
    util::ScopedFd fd = connect_local_unix(local_unix_name(s, master.port()));
    ASSERT_TRUE(fd.valid()) << "no local Unix socket: " << strerror(errno);
    set_nonblocking(fd.get());
    FrameKeys keys = join_master(fd.get(), "test", s, {1, 2, "test", ""}, 5s);
    uint64_t seq = 0, last = 0, last_broadcast = 0;
    auto frame = [&](FrameType t, const std::vector<uint8_t>& payload) {
      iovec v{const_cast<uint8_t*>(payload.data()), payload.size()};
      return encode_frame(t, {&v, 1}, Seal{&keys.send, keys.send_stream, ++seq, false});
    };
    auto put = [&](const uint8_t* p, size_t n) {
      while (n > 0) {
        ssize_t w = ::send(fd.get(), p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EAGAIN) continue;
        ASSERT_GT(w, 0) << strerror(errno);
        p += w;
        n -= static_cast<size_t>(w);
      }
    };
    PayloadWriter ask;
    ask.str("L");
    ask.u64(1);      // window 1
    ask.u8(2);       // wait, a lease
    ask.u64(~0ull);  // no ticket
    std::vector<uint8_t> a = frame(FrameType::lock_request, ask.buffer());
    put(a.data(), a.size());
    for (Frame fr; read_frame(fd.get(), fr, kDefaultMaxPayload, 20s, std::nullopt,
                              Unseal{&keys.recv, keys.recv_stream, &last, &last_broadcast, false}).ok();)
      if (fr.type == FrameType::lock_grant) break;
    leased.set_value();
    // The release of the lease (its writes: 0x5000 = 7), the first half now.
    PayloadWriter rel;
    rel.str("L");
    ckpt::Checkpoint w = make_ck("L", 0x5000, 7, 1);
    w.timestamp = 1;
    rel.bytes(ckpt::serialize(w));
    std::vector<uint8_t> r = frame(FrameType::lock_release, rel.buffer());
    put(r.data(), r.size() / 2);
    ASSERT_EQ(::shutdown(fd.get(), SHUT_RD), 0);  // the master's sends fail from now on
    half_sent.set_value();
    asked.get_future().wait();
    put(r.data() + r.size() / 2, r.size() - r.size() / 2);
    PayloadWriter exited;
    exited.i32(0);
    exited.str("");
    exited.u8(0);
    std::vector<uint8_t> e = frame(FrameType::exited, exited.buffer());
    put(e.data(), e.size());
    fd.reset();
  });
  master.start();
  leased.get_future().wait();
  half_sent.get_future().wait();
  std::promise<std::string> got;
  std::thread program([&] {
    try {
      ckpt::Checkpoint g = master.lock_acquire("L", 1);
      got.set_value("granted " + std::to_string(word_at(g, 0x5000)));
      master.lock_release("L", ckpt::Checkpoint{});
    } catch (const UserError& e) {
      got.set_value(e.what());
    }
  });
  // (The revoke has been sent, and failed, once the master's program waits in line: a
  // moment later, not observable from here; the release's rest follows it.)
  std::this_thread::sleep_for(300ms);
  asked.set_value();
  auto answer = got.get_future();
  ASSERT_EQ(answer.wait_for(30s), std::future_status::ready);
  EXPECT_EQ(answer.get(), "granted 7");
  program.join();
  slave.join();
  EXPECT_EQ(master.failure().value_or(""), "");
  EXPECT_EQ(f.size(), 0u);
  master.program_exited(0);
}

TEST(Node, AResetAfterTheExitReportIsNoFailure) {
  Secret s = Secret::generate();
  Failures f;
  Node master(options(0, 2, 0, s, &f));
  std::thread slave([&] {
    util::ScopedFd fd = connect_tcp({"127.0.0.1", master.port()}, 5s);
    set_nonblocking(fd.get());
    FrameKeys keys = join_master(fd.get(), "test", s, {1, 2, "test", ""}, 5s);
    uint64_t seq = 0;
    auto send = [&](FrameType t, const std::vector<uint8_t>& payload) {
      iovec v{const_cast<uint8_t*>(payload.data()), payload.size()};
      ASSERT_TRUE(write_frame(fd.get(), t, {&v, 1}, 5s, Seal{&keys.send, keys.send_stream, ++seq, false}).ok());
    };
    PayloadWriter region;
    region.str("parallel region 1");
    send(FrameType::region, region.buffer());
    PayloadWriter exited;
    exited.i32(0);
    exited.str("parallel region 1");
    exited.u8(0);
    send(FrameType::exited, exited.buffer());
    std::this_thread::sleep_for(300ms);  // the master has read the report; its heartbeats go unread
    linger l{1, 0};
    ASSERT_EQ(::setsockopt(fd.get(), SOL_SOCKET, SO_LINGER, &l, sizeof l), 0);
    fd.reset();  // RST
  });
  master.start();
  slave.join();
  std::this_thread::sleep_for(200ms);  // the reset has arrived
  master.program_exited(0);
  EXPECT_EQ(master.failure().value_or(""), "");
  EXPECT_EQ(f.size(), 0u);
}

}  // namespace
}  // namespace cape::net

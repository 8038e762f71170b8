// The waiting monitor reads its own sockets (net/node_wait.cpp): whatever arrives while a
// node waits in receive/wait_for/fetch_pages is handled as its reader thread would (heartbeats
// keep a slow peer alive, a page request is answered, a relayed one passed on, frames read
// ahead are not left behind), with the reader threads doing it all instead
// (NodeOptions::waiter_reads false, CAPE_WAITER_READS=0), sealed and encrypted.
#include <gtest/gtest.h>

#include <cstring>
#include <future>
#include <thread>

#include "ckpt/checkpoint.h"
#include "net/node.h"

namespace cape::net {
namespace {

using namespace std::chrono_literals;

struct Way {
  bool waiter_reads;
  bool encrypt;
};

class Waiter : public ::testing::TestWithParam<Way> {};

NodeOptions opts(int rank, int size, uint16_t port, const Secret& s, Way way) {
  NodeOptions o;
  o.rank = rank;
  o.size = size;
  o.master = {"127.0.0.1", port};
  o.secret = s;
  o.label = "test";
  o.heartbeat = 100ms;
  o.timeout = 2000ms;  // a loaded machine stalls a thread now and then
  o.connect_timeout = 10s;
  o.encrypt = way.encrypt;
  o.waiter_reads = way.waiter_reads;
  o.on_failure = [](const std::string& m, bool) { ADD_FAILURE() << "the job failed: " << m; };
  return o;
}

ckpt::Checkpoint ck(const std::string& name, uint64_t address, uint64_t value) {
  ckpt::Checkpoint c;
  c.name = name;
  c.append(address, {reinterpret_cast<const uint8_t*>(&value), 8}, 1);
  return c;
}

uint64_t word(const ckpt::Checkpoint& c, uint64_t address) {
  const uint8_t* p = c.at(address);
  EXPECT_NE(p, nullptr);
  uint64_t v = 0;
  if (p) std::memcpy(&v, p, 8);
  return v;
}

// Slave 1 publishes pages and waits (receive) while slave 2, after a silence longer than the
// timeout (heartbeats only: every waiter reads them), fetches them through the master, which
// waits (wait_for) meanwhile: the request and the answer are read and relayed by waiting
// nodes. Then many regions of small frames back and forth (frames read together).
TEST_P(Waiter, WaitingNodesServePagesHeartbeatsAndFrames) {
  Secret s = Secret::generate();
  Node master(opts(0, 3, 0, s, GetParam()));
  std::vector<uint8_t> pages(2 * 4096);
  for (size_t i = 0; i < pages.size(); ++i) pages[i] = static_cast<uint8_t>(i * 7 + 3);
  constexpr int kRegions = 60;
  auto slave = [&](int r) {
    Node n(opts(r, 3, master.port(), s, GetParam()));
    n.start();
    if (r == 1) {
      n.publish_pages(0x10000, 2, pages.data(), 1);
      n.send(ck("done", 0x100, 1), 0);
    } else {
      std::this_thread::sleep_for(2500ms);  // > timeout: the others wait on heartbeats
      std::vector<uint8_t> out(2 * 4096);
      n.fetch_pages(0x10000, 2, out.data(), 1, 1);
      EXPECT_EQ(out, pages);
      n.send(ck("done", 0x100, 2), 0);
    }
    EXPECT_EQ(word(n.receive("go"), 0x200), 7u);
    for (int reg = 0; reg < kRegions; ++reg) {
      EXPECT_EQ(word(n.receive("before"), 0x300), uint64_t(100 * reg + r));
      n.set_region("region " + std::to_string(reg));
      n.report_state(reg, {uint8_t(reg), uint8_t(r)});  // rides ahead of the part
      n.send(ck("after", 0x400 + 8 * r, 1000 * reg + r), 0);
      EXPECT_EQ(word(n.receive("final"), 0x400 + 8 * (3 - r)), uint64_t(1000 * reg + 3 - r));
    }
    n.program_exited(0);
  };
  auto s1 = std::async(std::launch::async, slave, 1);
  auto s2 = std::async(std::launch::async, slave, 2);
  master.start();
  try {
    int parts = 0;
    master.wait_for("done", [&](ckpt::Checkpoint&& part, int from) {
      EXPECT_EQ(word(part, 0x100), uint64_t(from));
      ++parts;
    });
    EXPECT_EQ(parts, 2);
    // Slave 2 surely read the page it asked for first; the second counts once a next request
    // continues the first (--sync=lazy's working set, util/proven_reads.h).
    EXPECT_EQ(master.fetched_pages(2), std::vector<uint64_t>{0x10000});
    master.broadcast(ck("go", 0x200, 7));
    for (int reg = 0; reg < kRegions; ++reg) {
      for (int r = 1; r < 3; ++r) master.send(ck("before", 0x300, 100 * reg + r), r);
      uint64_t got[3] = {};
      master.wait_for("after", [&](ckpt::Checkpoint&& part, int from) {
        got[from] = word(part, 0x400 + 8 * from);
        EXPECT_EQ(got[from], uint64_t(1000 * reg + from));
      });
      auto states = master.states(reg);
      EXPECT_EQ(states.size(), 2u) << "region " << reg;  // read with the parts, before them
      ckpt::Checkpoint merged;
      merged.name = "final";
      merged.append(0x400 + 8, {reinterpret_cast<const uint8_t*>(&got[1]), 16}, 1);
      master.broadcast(merged);
    }
  } catch (const std::exception& e) {
    ADD_FAILURE() << e.what();
    master.node_failed(1, "the test failed");  // the slaves stop waiting
  }
  for (auto* f : {&s1, &s2}) try {
      f->get();
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what();
    }
  master.program_exited(0);
  EXPECT_FALSE(master.failure());
}

// Slaves waiting (reading their socket themselves) for longer than the silence bound while
// the master does no network call at all: heartbeats both ways keep everyone alive.
TEST_P(Waiter, LongWaitsOnBothSidesAreNotSilence) {
  Secret s = Secret::generate();
  Node master(opts(0, 3, 0, s, GetParam()));
  auto slave = [&](int r) {
    Node n(opts(r, 3, master.port(), s, GetParam()));
    n.start();
    n.set_region("region 1");
    EXPECT_EQ(word(n.receive("final"), 0x200), 9u);
    n.program_exited(0);
  };
  auto s1 = std::async(std::launch::async, slave, 1);
  auto s2 = std::async(std::launch::async, slave, 2);
  master.start();
  std::this_thread::sleep_for(5000ms);  // 2.5 x the bound, no call
  master.broadcast(ck("final", 0x200, 9));
  for (auto* f : {&s1, &s2}) try {
      f->get();
    } catch (const std::exception& e) {
      ADD_FAILURE() << e.what();
    }
  master.program_exited(0);
  EXPECT_FALSE(master.failure());
}

INSTANTIATE_TEST_SUITE_P(Ways, Waiter,
                         ::testing::Values(Way{true, false}, Way{true, true}, Way{false, false}, Way{false, true}),
                         [](const auto& i) {
                           return std::string(i.param.waiter_reads ? "WaiterReads" : "ReadersRead") +
                                  (i.param.encrypt ? "Encrypted" : "Sealed");
                         });

}  // namespace
}  // namespace cape::net

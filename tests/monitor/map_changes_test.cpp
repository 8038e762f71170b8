// Mapping changes (monitor/map_changes.h): what create() records from two states of the
// tracked anonymous memory, and the calls inject() plans to make another node's map agree.
// The calls themselves run in real programs in the multi-node tests (tests/contract).
#include <sys/mman.h>

#include <gtest/gtest.h>

#include "monitor/map_changes.h"
#include "util/error.h"

namespace cape::monitor {
namespace {

using ckpt::MapChange;
constexpr uint8_t RW = PROT_READ | PROT_WRITE;
constexpr uint64_t H = 0x200000000000;  // libcape's heap (docs/monitor.md)

MapChange anon(uint64_t s, uint64_t e, uint8_t prot = RW) { return {s, e, MapChange::What::anon, prot}; }
MapChange heap(uint64_t s, uint64_t e) { return {s, e, MapChange::What::heap, RW}; }
MapChange gone(uint64_t s, uint64_t e) { return {s, e, MapChange::What::unmapped, 0}; }

Mapping map(uint64_t s, uint64_t e, const char* perms, std::string path = "") {
  Mapping m;
  m.start = s;
  m.end = e;
  m.read = perms[0] == 'r';
  m.write = perms[1] == 'w';
  m.exec = perms[2] == 'x';
  m.shared = perms[3] == 's';
  m.path = std::move(path);
  return m;
}

TEST(MapChanges, AnonStateKeepsHeapAndAnonymousPiecesJoined) {
  std::vector<Area> tracked = {{0x555555557000, 0x555555558000, RW, Area::data},
                                 {0x555555558000, 0x555555559000, RW, Area::bss},
                                 {0x555555559000, 0x55555557a000, RW, Area::heap},
                                 {H, H + 0x10000, RW, Area::anon},
                                 {H + 0x10000, H + 0x20000, RW, Area::anon},
                                 {0x7ffffffde000, 0x7ffffffff000, RW, Area::stack}};
  std::vector<MapChange> want = {heap(0x555555559000, 0x55555557a000), anon(H, H + 0x20000)};
  EXPECT_EQ(anon_state(tracked), want);
}

TEST(MapChanges, GrowthIsTheNewPartOnly) {
  std::vector<MapChange> before = {anon(H, H + 0x10000)};
  std::vector<MapChange> after = {anon(H, H + 0x30000)};
  std::vector<MapChange> want = {anon(H + 0x10000, H + 0x30000)};
  EXPECT_EQ(map_changes(before, after, {}), want);
  EXPECT_TRUE(map_changes(after, after, {}).empty());
}

TEST(MapChanges, WhatLeftIsUnmappedOrStillThere) {
  std::vector<MapChange> before = {anon(H, H + 0x30000), anon(0x7ffff0000000, 0x7ffff0002000)};
  std::vector<MapChange> after = {anon(H, H + 0x10000)};
  // Pages made read-only (the mprotect tracker's, or the program's own) are no change; the
  // other mapping was unmapped.
  std::vector<Mapping> now = {map(H, H + 0x10000, "rw-p"), map(H + 0x10000, H + 0x1000000, "r--p")};
  std::vector<MapChange> want = {gone(0x7ffff0000000, 0x7ffff0002000)};
  std::vector<MapChange> changes = map_changes(before, after, now);
  EXPECT_EQ(changes, want);
  // The state after them keeps the read-only pages as they were.
  std::vector<MapChange> state = {anon(H, H + 0x30000)};
  EXPECT_EQ(apply_changes(before, changes), state);
}

TEST(MapChanges, ProtectionChangesAreChanges) {
  std::vector<MapChange> before = {anon(H, H + 0x10000)};
  std::vector<MapChange> after = {anon(H, H + 0x4000), anon(H + 0x4000, H + 0x10000, PROT_READ | PROT_WRITE | PROT_EXEC)};
  std::vector<MapChange> want = {anon(H + 0x4000, H + 0x10000, 7)};
  EXPECT_EQ(map_changes(before, after, {}), want);
}

TEST(MapChanges, ReplayProtectsReservedRangesAndMapsFreeOnes) {
  std::vector<Mapping> local = {map(H, H + 0x10000, "rw-p"), map(H + 0x10000, H + 0x100000000, "---p")};
  std::vector<MapChange> changes = {anon(H + 0x10000, H + 0x30000), anon(0x300000000000, 0x300000002000)};
  std::vector<MapOp> want = {{MapOp::mprotect, H + 0x10000, H + 0x30000, RW},
                             {MapOp::mmap, 0x300000000000, 0x300000002000, RW}};
  EXPECT_EQ(plan_replay(changes, local, "inject(\"after\")"), want);
  // Already so here (the node that made the change, or a second injection): nothing.
  std::vector<Mapping> done = {map(H, H + 0x30000, "rw-p"), map(0x300000000000, 0x300000002000, "rw-p")};
  EXPECT_TRUE(plan_replay(changes, done, "x").empty());
}

TEST(MapChanges, ReplayOfUnmappingAndOfTheBrkHeap) {
  std::vector<Mapping> local = {map(0x555555559000, 0x55555557a000, "rw-p", "[heap]"),
                                map(0x7ffff0000000, 0x7ffff0004000, "rw-p")};
  std::vector<MapChange> changes = {heap(0x55555557a000, 0x55555559b000), gone(0x7ffff0000000, 0x7ffff0002000)};
  std::vector<MapOp> want = {{MapOp::brk, 0x55555557a000, 0x55555559b000, 0},
                             {MapOp::munmap, 0x7ffff0000000, 0x7ffff0002000, 0}};
  EXPECT_EQ(plan_replay(changes, local, "x"), want);
  // The heap's top went on the other node: the break moves down.
  std::vector<MapOp> down = {{MapOp::brk, 0x555555570000, 0x555555570000, 0}};
  EXPECT_EQ(plan_replay({gone(0x555555570000, 0x55555557a000)}, local, "x"), down);
}

TEST(MapChanges, ReplayRefusesFilesSharedMemoryAndAHeapThatDoesNotContinue) {
  std::vector<Mapping> local = {map(H, H + 0x1000, "rw-p", "/tmp/data"), map(H + 0x1000, H + 0x2000, "rw-s"),
                                map(0x555555559000, 0x55555557a000, "rw-p", "[heap]")};
  try {
    plan_replay({anon(H, H + 0x1000)}, local, "inject(\"after\")");
    FAIL() << "no error";
  } catch (const UserError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("inject(\"after\"): another node made 0x200000000000-0x200000001000 anon rw-, but "
                     "0x200000000000-0x200000001000 is /tmp/data on this node"),
              std::string::npos)
        << m;
  }
  EXPECT_THROW(plan_replay({gone(H + 0x1000, H + 0x2000)}, local, "x"), UserError);
  EXPECT_THROW(plan_replay({heap(0x555555600000, 0x555555700000)}, local, "x"), UserError);
}

// The executable's .bss split by the mprotect tracker (its .data page and some .bss pages
// made read-only): every writable piece is still the .bss, so the tracked anonymous memory
// does not change with the tracker's protections. It did: a piece written again was an
// "anon" mapping that appeared, a critical section's release carried it, and the node that
// injected the grant replayed it as an mprotect that opened the page untracked (writes
// under a lock lost under --tracker mprotect, issue 18).
TEST(MapChanges, TheBssSplitByTheTrackerStaysTheBss) {
  const std::string exe = "/tmp/prog";
  auto kinds = [&](const std::vector<Mapping>& maps) {
    std::vector<std::pair<uint64_t, Area::Kind>> out;
    for (const Area& a : tracked_set(maps, exe, 0, 0)) out.emplace_back(a.start, a.kind);
    return out;
  };
  std::vector<Mapping> whole = {map(0x555555554000, 0x555555556000, "r--p", exe),
                                map(0x555555556000, 0x555555557000, "rw-p", exe),
                                map(0x555555557000, 0x55555555b000, "rw-p")};
  using K = std::vector<std::pair<uint64_t, Area::Kind>>;
  EXPECT_EQ(kinds(whole), (K{{0x555555556000, Area::data}, {0x555555557000, Area::bss}}));
  std::vector<Mapping> split = {map(0x555555554000, 0x555555556000, "r--p", exe),
                                map(0x555555556000, 0x555555557000, "r--p", exe),
                                map(0x555555557000, 0x555555558000, "rw-p"),
                                map(0x555555558000, 0x555555559000, "r--p"),
                                map(0x555555559000, 0x55555555b000, "rw-p")};
  EXPECT_EQ(kinds(split), (K{{0x555555557000, Area::bss}, {0x555555559000, Area::bss}}));
  std::vector<Area> tracked = tracked_set(split, exe, 0, 0);
  EXPECT_TRUE(anon_state(tracked).empty());
  // Behind a guard page or another file: not the executable's.
  std::vector<Mapping> other = {map(0x7ffff7000000, 0x7ffff7001000, "r--p", "/lib/x.so"),
                                map(0x7ffff7001000, 0x7ffff7002000, "rw-p"),
                                map(0x7ffff7002000, 0x7ffff7003000, "---p"),
                                map(0x7ffff7003000, 0x7ffff7004000, "rw-p")};
  EXPECT_EQ(kinds(other), (K{{0x7ffff7001000, Area::anon}}));
}

}  // namespace
}  // namespace cape::monitor

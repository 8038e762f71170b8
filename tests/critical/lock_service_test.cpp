// The lock service's bookkeeping (net/lock_service.h) and the checkpoint overlays it and the
// monitor use (ckpt/overlay.h): grants in the order asked, each carrying exactly what other
// holders wrote since the new holder last released the lock.
#include <gtest/gtest.h>

#include <stdexcept>

#include "ckpt/overlay.h"
#include "net/lock_service.h"

using cape::ckpt::Checkpoint;
using cape::net::LockService;

namespace {
Checkpoint writes(uint64_t stamp, std::initializer_list<std::pair<uint64_t, uint8_t>> bytes) {
  Checkpoint c;
  c.timestamp = stamp;
  for (auto [a, v] : bytes) {
    uint8_t b[1] = {v};
    c.append(a, b, stamp);
  }
  return c;
}
uint8_t at(const Checkpoint& c, uint64_t a) {
  const uint8_t* p = c.at(a);
  return p ? *p : 0;
}
}  // namespace

TEST(Overlay, LaterBytesWinWhateverTheirTimestamp) {
  Checkpoint under = writes(9, {{100, 1}, {101, 2}, {200, 3}});
  Checkpoint over = writes(1, {{101, 7}, {300, 8}});
  Checkpoint o = cape::ckpt::overlay(under, over);
  EXPECT_EQ(at(o, 100), 1);
  EXPECT_EQ(at(o, 101), 7);
  EXPECT_EQ(at(o, 200), 3);
  EXPECT_EQ(at(o, 300), 8);
  EXPECT_EQ(o.find(101)->timestamp, 1u);
  EXPECT_EQ(o.find(100)->timestamp, 9u);
}

TEST(Overlay, NewerThanAndRestamped) {
  Checkpoint c = cape::ckpt::overlay(writes(3, {{10, 1}}), writes(5, {{20, 2}}));
  Checkpoint n = cape::ckpt::newer_than(c, 4);
  EXPECT_EQ(n.runs.size(), 1u);
  EXPECT_EQ(at(n, 20), 2);
  Checkpoint r = cape::ckpt::restamped(c, 42);
  for (auto& run : r.runs) EXPECT_EQ(run.timestamp, 42u);
}

TEST(LockService, GrantsInOrderWithOthersWrites) {
  LockService s;
  ASSERT_TRUE(s.request("sum", 0, 1));
  EXPECT_FALSE(s.request("sum", 2, 1));
  EXPECT_FALSE(s.request("sum", 1, 1));
  Checkpoint g0 = s.grant("sum", 0);
  EXPECT_EQ(g0.timestamp, 1u);
  EXPECT_TRUE(g0.runs.empty());
  EXPECT_EQ(s.release("sum", 0, writes(101, {{64, 10}})), 2);  // in the order asked
  Checkpoint g2 = s.grant("sum", 2);
  EXPECT_EQ(g2.timestamp, 2u);
  EXPECT_EQ(at(g2, 64), 10);
  EXPECT_EQ(s.release("sum", 2, writes(102, {{64, 20}, {65, 1}})), 1);
  Checkpoint g1 = s.grant("sum", 1);
  EXPECT_EQ(at(g1, 64), 20);
  EXPECT_EQ(at(g1, 65), 1);
  EXPECT_EQ(s.release("sum", 1, writes(103, {{65, 2}})), -1);
  // Node 2 again: only what others wrote since its release (stamp 102).
  ASSERT_TRUE(s.request("sum", 2, 1));
  Checkpoint again = s.grant("sum", 2);
  EXPECT_EQ(again.runs.size(), 1u);
  EXPECT_EQ(at(again, 65), 2);
  EXPECT_EQ(again.timestamp, 4u);
}

TEST(LockService, NamesAreIndependentAndRegionsStartAfresh) {
  LockService s;
  ASSERT_TRUE(s.request("a", 1, 1));
  ASSERT_TRUE(s.request("b", 2, 1));  // another name: not in line behind "a"
  s.grant("a", 1);
  s.grant("b", 2);
  s.release("a", 1, writes(101, {{8, 1}}));
  s.release("b", 2, writes(102, {{16, 1}}));
  ASSERT_TRUE(s.request("a", 3, 2));  // region 2: region 1's writes reached every node
  Checkpoint g = s.grant("a", 3);
  EXPECT_TRUE(g.runs.empty());
  EXPECT_EQ(g.timestamp, 1u);
}

TEST(LockService, MisuseIsRefused) {
  LockService s;
  ASSERT_TRUE(s.request("a", 1, 1));
  EXPECT_THROW(s.request("a", 1, 1), std::logic_error);  // would wait for itself
  EXPECT_THROW(s.release("a", 2, Checkpoint{}), std::logic_error);
}

TEST(LockService, TicketsGoInOrderWhoeverAsksFirst) {
  LockService s;
  EXPECT_FALSE(s.request("ordered:1", 2, 1, true, 2));  // iteration 2 before 0 and 1: waits
  EXPECT_FALSE(s.request("ordered:1", 1, 1, true, 1));
  ASSERT_TRUE(s.request("ordered:1", 0, 1, true, 0));
  s.grant("ordered:1", 0);
  EXPECT_EQ(s.release("ordered:1", 0, writes(101, {{8, 1}})), 1);  // ticket 1, not the first in line
  s.grant("ordered:1", 1);
  EXPECT_EQ(s.release("ordered:1", 1, writes(102, {{8, 2}})), 2);
  Checkpoint g = s.grant("ordered:1", 2);
  EXPECT_EQ(at(g, 8), 2);
  EXPECT_EQ(s.release("ordered:1", 2, Checkpoint{}), -1);
  EXPECT_THROW(s.request("ordered:1", 1, 1, true, 1), std::logic_error);  // a ticket that has passed
}

TEST(LockService, TestLockDoesNotWait) {
  LockService s;
  ASSERT_TRUE(s.request("lock@0x10", 1, 1));
  EXPECT_FALSE(s.request("lock@0x10", 2, 1, /*wait=*/false));
  s.grant("lock@0x10", 1);
  EXPECT_EQ(s.release("lock@0x10", 1, Checkpoint{}), -1);  // node 2 is not in line
  EXPECT_TRUE(s.request("lock@0x10", 2, 1, false));
}

// Leases (docs/critical.md, "Lock leases"): a holder that asked for one keeps the lock
// while nobody asks (its node re-enters without a frame); the first asker gets its holder
// named, once, and the lock moves on at the holder's release, which carries the lease's writes.
TEST(LockService, ALeaseStaysUntilAnotherNodeAsksAndIsAskedBackOnce) {
  LockService s;
  ASSERT_TRUE(s.request("sum", 1, 1, true, -1, /*lease=*/true));
  EXPECT_EQ(s.grant("sum", 1).timestamp, 1u);
  EXPECT_TRUE(s.leased_by("sum", 1));
  int revoke = -2;
  EXPECT_FALSE(s.request("sum", 2, 1, true, -1, true, &revoke));
  EXPECT_EQ(revoke, 1);
  EXPECT_FALSE(s.request("sum", 0, 1, true, -1, false, &revoke));
  EXPECT_EQ(revoke, -1);  // asked back already
  // The lease's bodies' writes, laid over each other on the node, under its stamp.
  EXPECT_EQ(s.release("sum", 1, writes(1, {{64, 2}})), 2);
  Checkpoint g2 = s.grant("sum", 2);
  EXPECT_EQ(g2.timestamp, 2u);
  EXPECT_EQ(at(g2, 64), 2);
  EXPECT_FALSE(s.leased_by("sum", 2));  // node 0 waits behind it: a plain grant
  EXPECT_EQ(s.release("sum", 2, writes(2, {{64, 3}})), 0);
  EXPECT_EQ(at(s.grant("sum", 0), 64), 3);
  EXPECT_FALSE(s.leased_by("sum", 0));
  EXPECT_EQ(s.release("sum", 0, writes(3, {{64, 4}})), -1);
  // Node 1 again, a lease again: only what others wrote since its release.
  ASSERT_TRUE(s.request("sum", 1, 1, true, -1, true));
  Checkpoint again = s.grant("sum", 1);
  EXPECT_EQ(at(again, 64), 4);
  EXPECT_EQ(again.timestamp, 4u);
  EXPECT_TRUE(s.leased_by("sum", 1));
}

// The master's own program keeps leases too (session 10): a slave's request asks it back
// (rank 0, served in-process by Node::revoke_own), and a lease granted to the master from the
// line that a slave asked for before the master took it up is seen as asked back.
TEST(LockService, TheMastersLeaseIsAskedBackLikeASlaves) {
  LockService s;
  ASSERT_TRUE(s.request("m", 0, 1, true, -1, /*lease=*/true));
  EXPECT_EQ(s.grant("m", 0).timestamp, 1u);
  EXPECT_TRUE(s.leased_by("m", 0));
  EXPECT_FALSE(s.asked_back("m"));
  int revoke = -2;
  EXPECT_FALSE(s.request("m", 1, 1, true, -1, true, &revoke));
  EXPECT_EQ(revoke, 0);
  EXPECT_TRUE(s.asked_back("m"));
  EXPECT_EQ(s.release("m", 0, writes(1, {{8, 5}})), 1);
  Checkpoint g = s.grant("m", 1);
  EXPECT_EQ(at(g, 8), 5);
  EXPECT_EQ(g.timestamp, 2u);
  // The master waits in line for node 1's lease of "n", gets it as a lease, node 2 asks at once.
  ASSERT_TRUE(s.request("n", 1, 1, true, -1, true));
  s.grant("n", 1);
  EXPECT_FALSE(s.request("n", 0, 1, true, -1, true, &revoke));
  EXPECT_EQ(revoke, 1);
  EXPECT_EQ(s.release("n", 1, writes(3, {{16, 6}})), 0);
  EXPECT_TRUE(s.leased_by("n", 0));
  EXPECT_FALSE(s.asked_back("n"));
  EXPECT_FALSE(s.request("n", 2, 1, true, -1, true, &revoke));
  EXPECT_EQ(revoke, 0);
  EXPECT_TRUE(s.asked_back("n"));  // Node::lock_acquire takes this grant as a plain one
  EXPECT_EQ(at(s.grant("n", 0), 16), 6);
  EXPECT_EQ(s.release("n", 0, writes(4, {{16, 7}})), 2);
  EXPECT_EQ(at(s.grant("n", 2), 16), 7);
}

TEST(LockService, ANewRegionEndsTheLeases) {
  LockService s;
  ASSERT_TRUE(s.request("a", 1, 1, true, -1, true));
  s.grant("a", 1);
  int revoke = -2;
  EXPECT_TRUE(s.request("a", 2, 2, true, -1, true, &revoke));  // region 2: node 1's lease is gone
  EXPECT_EQ(revoke, -1);
  EXPECT_TRUE(s.grant("a", 2).runs.empty());
}

TEST(LockService, TestLockAsksALeaseBack) {
  LockService s;
  ASSERT_TRUE(s.request("lock@0x10", 1, 1, true, -1, true));
  s.grant("lock@0x10", 1);
  int revoke = -1;
  EXPECT_FALSE(s.request("lock@0x10", 2, 1, /*wait=*/false, -1, true, &revoke));  // busy now
  EXPECT_EQ(revoke, 1);                                                         // but asked back
  EXPECT_EQ(s.release("lock@0x10", 1, Checkpoint{}), -1);  // node 2 is not in line
  EXPECT_TRUE(s.request("lock@0x10", 2, 1, false, -1, true));
}

TEST(LockService, ALockAskedBackTwiceInARegionIsNoLongerLeased) {
  LockService s;
  for (int round = 0; round < LockService::kLeaseRevokes; round++) {
    ASSERT_TRUE(s.request("c", 1, 1, true, -1, true));
    s.grant("c", 1);
    EXPECT_TRUE(s.leased_by("c", 1));
    int revoke = -1;
    EXPECT_FALSE(s.request("c", 2, 1, true, -1, true, &revoke));
    EXPECT_EQ(revoke, 1);
    EXPECT_EQ(s.release("c", 1, Checkpoint{}), 2);
    s.grant("c", 2);
    EXPECT_EQ(s.release("c", 2, Checkpoint{}), -1);
  }
  ASSERT_TRUE(s.request("c", 1, 1, true, -1, true));
  s.grant("c", 1);
  EXPECT_FALSE(s.leased_by("c", 1));  // contended: plain grants for the rest of the region
  EXPECT_EQ(s.release("c", 1, Checkpoint{}), -1);
  ASSERT_TRUE(s.request("c", 1, 2, true, -1, true));  // a new region: leases again
  s.grant("c", 1);
  EXPECT_TRUE(s.leased_by("c", 1));
}

// Contention over (the other nodes left the loop): after kQuietReleases releases in a row with
// nobody in line, the lone user left gets leases again (bench-critical's contended line: the
// last node's 200 entries were all plain round trips).
TEST(LockService, ALockLeftAloneAfterContentionIsLeasedAgain) {
  LockService s;
  for (int round = 0; round < LockService::kLeaseRevokes; round++) {
    ASSERT_TRUE(s.request("c", 1, 1, true, -1, true));
    s.grant("c", 1);
    int revoke = -1;
    EXPECT_FALSE(s.request("c", 2, 1, true, -1, true, &revoke));
    EXPECT_EQ(revoke, 1);
    EXPECT_EQ(s.release("c", 1, Checkpoint{}), 2);  // somebody in line: the count starts over
    s.grant("c", 2);
    EXPECT_EQ(s.release("c", 2, Checkpoint{}), -1);  // the first quiet one
  }
  // Node 2 alone now: plain grants while the quiet releases add up, then a lease.
  for (int k = 1; k < LockService::kQuietReleases; k++) {
    ASSERT_TRUE(s.request("c", 2, 1, true, -1, true));
    s.grant("c", 2);
    EXPECT_FALSE(s.leased_by("c", 2)) << k;
    EXPECT_EQ(s.release("c", 2, Checkpoint{}), -1);
  }
  ASSERT_TRUE(s.request("c", 2, 1, true, -1, true));
  s.grant("c", 2);
  EXPECT_TRUE(s.leased_by("c", 2));
  // Contended again: asked back, and the count starts over.
  int revoke = -1;
  EXPECT_FALSE(s.request("c", 1, 1, true, -1, true, &revoke));
  EXPECT_EQ(revoke, 2);
}

TEST(LockService, OrderedTicketsAreNeverLeased) {
  LockService s;
  ASSERT_TRUE(s.request("ordered:1", 1, 1, true, 0, /*lease=*/true));
  EXPECT_FALSE(s.leased_by("ordered:1", 1));
}

// Renewals (docs/critical.md, "Lock leases"): an uncontended lease kept into the holder's next
// window is its own there with stamp 1 (the window's grants start at 2); asked back there, it
// goes as any lease; a lease asked for (or waited for) is never renewed, and a renewal is
// cancelled when somebody still in the older window asks for the lock.
namespace {
bool renew(LockService& s, const char* name, int rank, uint64_t next, int* next_holder) {
  uint64_t token = 0;
  return s.release_renew(name, rank, Checkpoint{}, next, next_holder, &token) &&
         s.confirm_renewal(name, rank, next, token);
}
}  // namespace

TEST(LockService, AnUncontendedLeaseIsKeptIntoTheNextWindowWithStampOne) {
  LockService s;
  ASSERT_TRUE(s.request("c", 1, 1, true, -1, true));
  EXPECT_EQ(s.grant("c", 1).timestamp, 1u);
  int next = -2;
  EXPECT_TRUE(renew(s, "c", 1, 2, &next));
  EXPECT_EQ(next, -1);
  EXPECT_FALSE(s.held_by("c", 1));  // not before window 2
  // Window 2: another node asks: node 1 holds it (a lease), asked back.
  int revoke = -1;
  EXPECT_FALSE(s.request("c", 2, 2, true, -1, true, &revoke));
  EXPECT_EQ(revoke, 1);
  EXPECT_TRUE(s.leased_by("c", 1));
  EXPECT_EQ(s.release("c", 1, Checkpoint{}), 2);
  EXPECT_EQ(s.grant("c", 2).timestamp, 2u);  // after the renewed lease's stamp 1
}

TEST(LockService, ARenewedLeaseGoingBackUnusedStartsItsWindow) {
  LockService s;
  ASSERT_TRUE(s.request("c", 1, 1, true, -1, true));
  s.grant("c", 1);
  int next = -2;
  ASSERT_TRUE(renew(s, "c", 1, 2, &next));
  // Nothing else asked in window 2; node 1 gives it back at its end, and may renew again.
  EXPECT_TRUE(renew(s, "c", 1, 3, &next));
  EXPECT_EQ(s.region(), 2u);
  ASSERT_TRUE(s.request("x", 2, 3));  // window 3 begins: node 1 holds "c" again
  EXPECT_TRUE(s.leased_by("c", 1));
  EXPECT_EQ(s.release("c", 1, Checkpoint{}), -1);
}

TEST(LockService, ALeaseAskedForIsNotRenewed) {
  LockService s;
  ASSERT_TRUE(s.request("c", 1, 1, true, -1, true));
  s.grant("c", 1);
  int revoke = -1;
  EXPECT_FALSE(s.request("c", 2, 1, true, -1, true, &revoke));
  int next = -2;
  EXPECT_FALSE(renew(s, "c", 1, 2, &next));  // node 2 waits: a plain release
  EXPECT_EQ(next, 2);
  s.grant("c", 2);
  EXPECT_EQ(s.release("c", 2, Checkpoint{}), -1);
  ASSERT_TRUE(s.request("c", 3, 2));  // window 2: nobody holds it
  EXPECT_EQ(s.grant("c", 3).timestamp, 1u);
  // Nor a plain (not leased) grant, nor one for another window than the next.
  EXPECT_EQ(s.release("c", 3, Checkpoint{}), -1);
  ASSERT_TRUE(s.request("d", 1, 2));
  s.grant("d", 1);
  EXPECT_FALSE(renew(s, "d", 1, 3, &next));
  ASSERT_TRUE(s.request("e", 1, 2, true, -1, true));
  s.grant("e", 1);
  EXPECT_FALSE(renew(s, "e", 1, 4, &next));
}

// crit_threads.c: node 2 kept the lock into window 2 while the master and node 1 were still in
// window 1 and took it there: both would have held it in window 2.
TEST(LockService, ARenewalIsCancelledWhenTheOlderWindowStillAsks) {
  LockService s;
  ASSERT_TRUE(s.request("c", 2, 1, true, -1, true));
  s.grant("c", 2);
  int next = -2;
  ASSERT_TRUE(renew(s, "c", 2, 2, &next));
  int revoke = -1;
  ASSERT_TRUE(s.request("c", 0, 1, true, -1, false, &revoke));  // the master, still in window 1
  EXPECT_EQ(revoke, 2);                                         // node 2 is asked to give it back
  s.grant("c", 0);
  EXPECT_EQ(s.release("c", 0, Checkpoint{}), -1);
  ASSERT_TRUE(s.request("c", 1, 1, true, -1, true));
  s.grant("c", 1);
  EXPECT_EQ(s.release("c", 2, Checkpoint{}), -1);  // node 2's answer ends the cancellation only
  EXPECT_TRUE(s.leased_by("c", 1));
  ASSERT_TRUE(renew(s, "c", 1, 2, &next));
  ASSERT_TRUE(s.request("x", 0, 2));
  EXPECT_TRUE(s.leased_by("c", 1));  // node 1's renewal, not node 2's
  // Asked for between the release and the confirmation: cancelled too.
  uint64_t token = 0;
  ASSERT_TRUE(s.release_renew("c", 1, Checkpoint{}, 3, &next, &token));
  ASSERT_TRUE(s.request("c", 2, 2));
  EXPECT_FALSE(s.confirm_renewal("c", 1, 3, token));
  s.grant("c", 2);
  EXPECT_EQ(s.release("c", 1, Checkpoint{}), -1);  // node 1's answer to its revoke
  EXPECT_EQ(s.release("c", 2, Checkpoint{}), -1);
}

TEST(Overlay, AMaskedRunsUnmarkedWordsHoldTheOtherSidesBytes) {
  // `over` has a masked run over a page with words 0, 2, 4, 6 set; `under` writes word 3.
  Checkpoint over;
  over.timestamp = 2;
  std::vector<uint8_t> bitmap(8, 0), words(4 * 8, 0xbb);
  bitmap[0] = 0x55;  // words 0, 2, 4, 6
  over.append_masked(4096, 7 * 8, bitmap, words, 2);
  Checkpoint under = writes(1, {{4096 + 3 * 8, 0xaa}});
  Checkpoint o = cape::ckpt::overlay(under, over);
  EXPECT_EQ(at(o, 4096 + 3 * 8), 0xaa);
  EXPECT_EQ(at(o, 4096), 0xbb);
  EXPECT_EQ(at(o, 4096 + 6 * 8), 0xbb);
  for (size_t i = 1; i < o.runs.size(); ++i) EXPECT_LE(o.runs[i - 1].end(), o.runs[i].address);
}

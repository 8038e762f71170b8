// IntervalSet against a model that keeps one bool per address, on small random sets (fixed
// seed), and the edge cases the monitor depends on: touching intervals join, the top of the
// address space, clip's choice of one interval.
#include <array>
#include <random>

#include <gtest/gtest.h>

#include "monitor/interval_set.h"

namespace cape::monitor {
namespace {

constexpr uint64_t kSpace = 64;
using Model = std::array<bool, kSpace>;

Model model_of(const std::vector<IntervalSet::Interval>& v) {
  Model m{};
  for (auto [s, e] : v)
    for (uint64_t a = s; a < e; a++) m[a] = true;
  return m;
}

// The set's intervals are sorted, non-empty, and neither overlap nor touch.
void expect_canonical(const IntervalSet& set) {
  for (size_t i = 0; i < set.size(); i++) {
    EXPECT_LT(set[i].first, set[i].second);
    if (i > 0) {
      EXPECT_LT(set[i - 1].second, set[i].first);
    }
  }
}

Model model_of(const IntervalSet& set) { return model_of(std::vector<IntervalSet::Interval>(set.begin(), set.end())); }

std::vector<IntervalSet::Interval> random_intervals(std::mt19937& rng) {
  std::vector<IntervalSet::Interval> v(rng() % 6);
  for (auto& [s, e] : v) {
    s = rng() % kSpace;
    e = std::min<uint64_t>(kSpace, s + rng() % 12);  // some empty
  }
  return v;
}

TEST(IntervalSet, AgreesWithAModelOnRandomSets) {
  std::mt19937 rng(11);
  for (int round = 0; round < 2000; round++) {
    auto va = random_intervals(rng), vb = random_intervals(rng);
    IntervalSet a = IntervalSet::of(va), b = IntervalSet::of(vb);
    Model ma = model_of(va), mb = model_of(vb);
    expect_canonical(a);
    ASSERT_EQ(model_of(a), ma) << round;

    IntervalSet u = a.unite(b), d = a.minus(b);
    expect_canonical(u);
    expect_canonical(d);
    Model mu = model_of(u), md = model_of(d);
    for (uint64_t x = 0; x < kSpace; x++) {
      ASSERT_EQ(mu[x], ma[x] || mb[x]) << round << " at " << x;
      ASSERT_EQ(md[x], ma[x] && !mb[x]) << round << " at " << x;
      ASSERT_EQ(a.contains(x), ma[x]) << round << " at " << x;
    }
    uint64_t s = rng() % kSpace, e = s + 1 + rng() % 8;
    bool meets = false;
    for (uint64_t x = s; x < std::min(e, kSpace); x++) meets = meets || ma[x];
    ASSERT_EQ(a.overlaps(s, e), meets) << round;
    // covers: every address of [s, e) in the set (its intervals never touch, so in one).
    bool all = e <= kSpace;
    for (uint64_t x = s; x < std::min(e, kSpace); x++) all = all && ma[x];
    ASSERT_EQ(a.covers(s, e), all) << round << " [" << s << ", " << e << ")";
    ASSERT_TRUE(a.covers(s, s));
    auto it = a.first_ending_after(s);
    ASSERT_TRUE(it == a.end() || it->second > s);
    ASSERT_TRUE(it == a.begin() || std::prev(it)->second <= s);
  }
}

TEST(IntervalSet, TouchingIntervalsJoin) {
  IntervalSet s = IntervalSet::of({{8, 16}, {0, 8}, {16, 16}, {20, 24}});
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0], (IntervalSet::Interval{0, 16}));
  EXPECT_EQ(s[1], (IntervalSet::Interval{20, 24}));
}

TEST(IntervalSet, EverythingMinusAFewRanges) {
  IntervalSet priv = IntervalSet::of({{0x1000, 0x1008}, {0x2000, 0x2010}});
  IntervalSet rest = IntervalSet::everything().minus(priv);
  ASSERT_EQ(rest.size(), 3u);
  EXPECT_EQ(rest[0], (IntervalSet::Interval{0, 0x1000}));
  EXPECT_EQ(rest[1], (IntervalSet::Interval{0x1008, 0x2000}));
  EXPECT_EQ(rest[2].first, 0x2010u);
  EXPECT_EQ(rest[2].second, UINT64_MAX);
  EXPECT_FALSE(rest.overlaps(0x1000, 0x1008));
  EXPECT_TRUE(rest.overlaps(0x1000, 0x1009));
  EXPECT_TRUE(rest.contains(UINT64_MAX - 1));
}

TEST(IntervalSet, ClipTakesThePieceOfThePagesArea) {
  // The stack from its boundary up: a page cut from below.
  IntervalSet set = IntervalSet::of({{0x1000, 0x3000}, {0x7f10, 0x9000}});
  EXPECT_EQ(set.clip(0x1000, 0x2000), (IntervalSet::Interval{0x1000, 0x2000}));
  EXPECT_EQ(set.clip(0x7000, 0x8000), (IntervalSet::Interval{0x7f10, 0x8000}));
  EXPECT_EQ(set.clip(0x4000, 0x5000), (IntervalSet::Interval{0, 0}));
  EXPECT_EQ(set.clip(0x0000, 0x1000), (IntervalSet::Interval{0, 0}));
  EXPECT_EQ(IntervalSet().clip(0x1000, 0x2000), (IntervalSet::Interval{0, 0}));
}

}  // namespace
}  // namespace cape::monitor

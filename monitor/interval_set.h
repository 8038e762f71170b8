// A set of addresses kept as sorted, disjoint [start, end) intervals that do not touch: what
// the monitor computes with (the tracked set, the data-sharing table's ranges, where an
// injected checkpoint may write, the mprotect tracker's pages in flight).
//
//   IntervalSet priv = IntervalSet::of({{a, a + 8}, {b, b + 16}});   // any order, may overlap
//   IntervalSet travel = IntervalSet::everything().minus(priv);
//   if (travel.overlaps(x, x + 8)) ...
//   for (auto [s, e] : travel) ...
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace cape::monitor {

class IntervalSet {
 public:
  using Interval = std::pair<uint64_t, uint64_t>;  // [first, second)

  IntervalSet() = default;
  // Sorts and joins overlapping or touching intervals; drops empty ones.
  static IntervalSet of(std::vector<Interval> intervals);
  // [0, 2^64 - 1): every address.
  static IntervalSet everything();

  IntervalSet unite(const IntervalSet& other) const;
  IntervalSet minus(const IntervalSet& other) const;
  bool contains(uint64_t a) const { return overlaps(a, a + 1); }
  bool overlaps(uint64_t start, uint64_t end) const;  // [start, end) meets the set
  bool covers(uint64_t start, uint64_t end) const;    // [start, end) lies in one interval
  // The part of [start, end) inside the last interval that begins before `end` ({0, 0} if
  // none): for a page, the piece of the one area it belongs to (a page meets at most one,
  // except at the stack boundary, which cuts only from below).
  Interval clip(uint64_t start, uint64_t end) const;

  bool empty() const { return v_.empty(); }
  size_t size() const { return v_.size(); }
  const Interval& operator[](size_t i) const { return v_[i]; }
  std::vector<Interval>::const_iterator begin() const { return v_.begin(); }
  std::vector<Interval>::const_iterator end() const { return v_.end(); }
  // The first interval that ends after `a` (end() if none).
  std::vector<Interval>::const_iterator first_ending_after(uint64_t a) const;
  bool operator==(const IntervalSet& o) const = default;

 private:
  std::vector<Interval> v_;
};

}  // namespace cape::monitor

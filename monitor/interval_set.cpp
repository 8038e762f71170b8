#include "monitor/interval_set.h"

#include <algorithm>
#include <limits>

namespace cape::monitor {

namespace {
// The first interval starting after `x`.
auto starting_after(const std::vector<IntervalSet::Interval>& v, uint64_t x) {
  return std::upper_bound(v.begin(), v.end(), x,
                          [](uint64_t a, const IntervalSet::Interval& iv) { return a < iv.first; });
}
}  // namespace

// Joined in the given vector's own storage, and the results of unite() and minus() sized
// ahead: the monitor computes with these sets at every call, and their vectors grown push by
// push were a few hundred allocations per empty region on 3 nodes (issue 14, session 14).
IntervalSet IntervalSet::of(std::vector<Interval> intervals) {
  std::sort(intervals.begin(), intervals.end());
  size_t n = 0;  // intervals[0, n) is the result so far; n <= i
  for (size_t i = 0; i < intervals.size(); ++i) {
    auto [s, e] = intervals[i];
    if (s >= e) continue;
    if (n > 0 && s <= intervals[n - 1].second)
      intervals[n - 1].second = std::max(intervals[n - 1].second, e);
    else
      intervals[n++] = {s, e};
  }
  intervals.resize(n);
  IntervalSet out;
  out.v_ = std::move(intervals);
  return out;
}

IntervalSet IntervalSet::everything() {
  IntervalSet out;
  out.v_.emplace_back(0, std::numeric_limits<uint64_t>::max());
  return out;
}

IntervalSet IntervalSet::unite(const IntervalSet& other) const {
  if (other.v_.empty()) return *this;
  if (v_.empty()) return other;
  std::vector<Interval> v;
  v.reserve(v_.size() + other.v_.size());
  v.insert(v.end(), v_.begin(), v_.end());
  v.insert(v.end(), other.v_.begin(), other.v_.end());
  return of(std::move(v));
}

IntervalSet IntervalSet::minus(const IntervalSet& b) const {
  if (b.v_.empty() || v_.empty()) return *this;
  IntervalSet out;
  out.v_.reserve(v_.size() + b.v_.size());  // each interval of b cuts at most one in two
  size_t j = 0;
  for (auto [s, e] : v_) {
    while (j < b.v_.size() && b.v_[j].second <= s) j++;
    uint64_t cur = s;
    for (size_t k = j; k < b.v_.size() && b.v_[k].first < e; k++) {
      if (b.v_[k].first > cur) out.v_.emplace_back(cur, b.v_[k].first);
      cur = std::max(cur, b.v_[k].second);
    }
    if (cur < e) out.v_.emplace_back(cur, e);
  }
  return out;
}

bool IntervalSet::overlaps(uint64_t start, uint64_t end) const {
  auto it = starting_after(v_, start);
  if (it != v_.begin() && std::prev(it)->second > start) return true;
  return it != v_.end() && it->first < end;
}

bool IntervalSet::covers(uint64_t start, uint64_t end) const {
  if (start >= end) return true;
  auto it = first_ending_after(start);
  return it != v_.end() && it->first <= start && it->second >= end;
}

IntervalSet::Interval IntervalSet::clip(uint64_t start, uint64_t end) const {
  auto it = starting_after(v_, end - 1);
  if (it == v_.begin()) return {0, 0};
  --it;
  uint64_t lo = std::max(start, it->first), hi = std::min(end, it->second);
  return lo < hi ? Interval{lo, hi} : Interval{0, 0};
}

std::vector<IntervalSet::Interval>::const_iterator IntervalSet::first_ending_after(uint64_t a) const {
  auto it = starting_after(v_, a);
  if (it != v_.begin() && std::prev(it)->second > a) --it;
  return it;
}

}  // namespace cape::monitor

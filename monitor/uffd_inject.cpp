// `uffd` tracker, its side of inject() and take_changes() (split from uffd_tracker.cpp):
// the copies take the injected bytes so the next start() need not read them again, and
// take_changes() reports what was written since the last call from the written marks.
#include <algorithm>
#include <cstring>
#include <string>

#include "monitor/interval_set.h"
#include "monitor/trackers.h"

namespace cape::monitor {

// The pages of `c` whose copy is good now (in a segment, not written since the last scan,
// not a hole, here under --sync=lazy) take its bytes after the write, and their written
// marks (the write's own) are cleared again: the next start() does not read them. Only with
// one thread: another thread's write between the peek here and after_inject()'s scan would
// be lost (its mark cleared, its bytes in no copy).
IntervalSet UffdTracker::before_inject(const StoppedThread& t, const ckpt::Checkpoint& c) {
  vouch_ = false;
  refreshed_.reset();  // (the next start() must find what this writes: start_after_refresh)
  if (!keep_ || !uffd_.valid() || segs_.empty() || c.runs.empty()) return {};
  std::vector<IntervalSet::Interval> pages, have;
  for (const ckpt::Run& r : c.runs) {
    uint64_t s = page_down(r.address), e = page_up(r.end());
    if (!pages.empty() && pages.back().second >= s)
      pages.back().second = std::max(pages.back().second, e);
    else
      pages.emplace_back(s, e);
  }
  IntervalSet all = IntervalSet::of(std::move(pages));
  // A few pages: the next start() reads them back beside what it reads anyway, for less than
  // the refresh's three scans cost here (issue 14: an empty region's injects, 15 of its 35
  // PAGEMAP_SCANs on 3 nodes).
  constexpr uint64_t kFewPages = 4;
  uint64_t n = 0;
  for (auto [s, e] : all) n += (e - s) / kPageSize;
  if (n <= kFewPages) return {};
  for (auto& [key, g] : segs_) have.emplace_back(g.start, g.end);
  IntervalSet want =
      all.minus(all.minus(IntervalSet::of(std::move(have)))).minus(not_here_).minus(stale_).minus(unconfirmed_);
  if (want.empty() || !t.tracee.one_thread()) return {};
  std::vector<IntervalSet::Interval> out;
  std::vector<Span> spans;
  std::vector<Span> holes;
  if (registered_known(want) &&
      (scan_both_wanted() ? scan_hull_both(want, false, spans, holes)
                          : scan_hull(want, Scan::written_peek, spans) && scan_hull(want, Scan::holes, spans))) {
    spans.insert(spans.end(), holes.begin(), holes.end());
    for (const Span& x : spans) out.emplace_back(x.start, x.end);
    return want.minus(IntervalSet::of(std::move(out)));
  }
  for (auto [s, e] : want) {
    spans.clear();
    if (!scan(s, e, Scan::written_peek, spans) || !scan(s, e, Scan::holes, spans)) {
      out.emplace_back(s, e);
      continue;
    }
    for (const Span& x : spans) out.emplace_back(x.start, x.end);
  }
  return want.minus(IntervalSet::of(std::move(out)));
}

void UffdTracker::after_inject(const StoppedThread& t, const ckpt::Checkpoint& c, const IntervalSet& pages) {
  (void)t;
  refreshed_.reset();
  for (const ckpt::Run& r : c.runs) {
    if (!pages.overlaps(r.address, r.end())) continue;
    c.for_each_piece(r, [&](uint64_t a, std::span<const uint8_t> bytes) {
      const uint64_t end = a + bytes.size();
      for (auto it = pages.first_ending_after(a); it != pages.end() && it->first < end; ++it) {
        uint64_t lo = std::max(a, it->first), hi = std::min(end, it->second);
        while (lo < hi) {  // segment by segment
          auto sg = segs_.upper_bound(lo);
          Seg& g = std::prev(sg)->second;  // before_inject() kept only pages inside one
          uint64_t piece_end = std::min(hi, g.end);
          std::memcpy(g.at(lo), bytes.data() + (lo - a), piece_end - lo);
          g.touched = std::max<size_t>(g.touched, g.off + (page_up(piece_end) - g.start));
          inject_bytes_taken += piece_end - lo;
          lo = piece_end;
        }
      }
    });
  }
  // The write marked them: clear the marks (and protect them again).
  std::vector<Span> spans;
  if (!registered_known(pages) || !scan_hull(pages, Scan::written, spans))
    for (auto [s, e] : pages) scan(s, e, Scan::written, spans);
  cleared_ = cleared_.unite(pages);  // changed, for take_changes()
}

// Written marks are cleared only by start()'s and collect()'s scans, which add what they
// cleared to cleared_; so what was written since the previous call is cleared_ and what is
// marked now. Holes (pages dropped, MADV_DONTNEED) count as changed. An area with a part not
// registered (mapped since) is not covered. Only while the registration is kept (keep_).
std::optional<DirtyTracker::Changes> UffdTracker::take_changes(const StoppedThread& t,
                                                               const std::vector<Area>& areas) {
  (void)t;
  refreshed_.reset();
  if (!keep_ || !uffd_.valid()) return std::nullopt;
  std::vector<IntervalSet::Interval> changed, covered;
  std::vector<Span> spans;
  const IntervalSet all = spans_of(areas);
  std::vector<Span> holes;
  if (registered_known(all) &&
      (scan_both_wanted() ? scan_hull_both(all, false, spans, holes)
                          : scan_hull(all, Scan::written_peek, spans) && scan_hull(all, Scan::holes, spans))) {
    spans.insert(spans.end(), holes.begin(), holes.end());
    for (const Span& x : spans) changed.emplace_back(x.start, x.end);
    Changes c{cleared_.unite(IntervalSet::of(std::move(changed))), all};
    cleared_ = IntervalSet();
    return c;
  }
  spans.clear();
  for (const Area& a : areas) {
    spans.clear();
    if (!scan(a.start, a.end, Scan::written_peek, spans) || !scan(a.start, a.end, Scan::holes, spans)) continue;
    covered.emplace_back(a.start, a.end);
    for (const Span& x : spans) changed.emplace_back(x.start, x.end);
  }
  Changes c{cleared_.unite(IntervalSet::of(std::move(changed))), IntervalSet::of(std::move(covered))};
  cleared_ = IntervalSet();
  return c;
}


// start()'s refresh, then take_changes()'s answer without its two scans: start() read (or
// zeroed) every page written, dropped or new since its last scan and added them to cleared_,
// so cleared_ is all that changed in what the copies cover.
std::optional<DirtyTracker::Changes> UffdTracker::refresh_for_digest(const StoppedThread& t,
                                                                     const std::vector<Area>& track,
                                                                     const std::vector<Area>& areas) {
  if (!keep_) return std::nullopt;
  start(t, track);
  refreshed_ = spans_of(track);  // (start_after_refresh)
  std::vector<IntervalSet::Interval> copies;
  for (auto& [key, g] : segs_) copies.emplace_back(g.start, g.end);
  const IntervalSet all = spans_of(areas);
  Changes c{cleared_, all.minus(all.minus(IntervalSet::of(std::move(copies))))};
  cleared_ = IntervalSet();
  unvouched_ = stale_.unite(unconfirmed_).unite(not_here_);
  vouch_ = true;
  return c;
}

void UffdTracker::start_after_refresh(const IntervalSet& written) {
  if (refreshed_) reuse_ = written;
}

UffdTracker::CopyRun UffdTracker::copy_run(uint64_t a, uint64_t len) const {
  if (!vouch_) return {nullptr, len};
  auto it = segs_.upper_bound(a);
  if (it == segs_.begin() || std::prev(it)->second.end <= a)  // before the next copy: none
    return {nullptr, it == segs_.end() ? len : std::min(len, it->second.start - a)};
  const Seg& g = std::prev(it)->second;
  uint64_t n = std::min(len, g.end - a);
  auto u = unvouched_.first_ending_after(a);
  if (u != unvouched_.end() && u->first <= a) return {nullptr, std::min(n, u->second - a)};
  if (u != unvouched_.end() && u->first < a + n) n = u->first - a;
  auto z = zeroed_.first_ending_after(a);
  if (z != zeroed_.end() && z->first <= a) return {nullptr, std::min(n, z->second - a), true};
  if (z != zeroed_.end() && z->first < a + n) n = z->first - a;
  const size_t b = g.off + (a - g.start);  // (touched: from the buffer's start)
  if (b >= g.touched) return {nullptr, n, true};
  return {g.at(a), std::min<uint64_t>(n, g.touched - b)};
}

}  // namespace cape::monitor

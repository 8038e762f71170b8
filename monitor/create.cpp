#include "monitor/create.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "ckpt/format.h"
#include "ckpt/ops.h"
#include "monitor/ckpt_ranges.h"
#include "monitor/map_changes.h"
#include "util/log.h"

namespace cape::monitor {

ckpt::Checkpoint create(const StoppedThread& st, Window& window, const AddressSpace& as,
                        const DataSharing& sharing, CreateSide side, uint64_t boundary) {
  // What may be captured now: the tracked set with the runtime's frames cut off (after the
  // tracker gave back what its protection made of the program's own calls).
  window.tracker().settle(st);
  const std::vector<Mapping>& maps = window.maps_for_create(as.pid(), side.reuse_maps);
  std::vector<Area> areas_now = as.tracked(maps, boundary, window.maps_stamp());
  // 0. Memory mapped, grown or unmapped since start() or the last create() (the heap grew
  //    inside the region): said in the checkpoint, so a node that injects it maps it first.
  std::vector<ckpt::MapChange> map_changed = map_changes(window.map_state(), anon_state(areas_now), maps);
  window.map_state() = apply_changes(window.map_state(), map_changed);
  if (sharing.model() == CkptModel::tickpt) areas_now = restrict_areas(areas_now, sharing.tickpt_cover(areas_now));
  IntervalSet now = spans_of(areas_now);
  for (auto [s, e] : now)
    CAPE_LOG_AT(debug, "monitor") << "tracked " << ckpt::hex_address(s) << "-" << ckpt::hex_address(e);
  const uint64_t ts = region_timestamp(window.region());
  auto& base_pages = window.base_pages();
  // The pages the tracker reports: also those of start()'s set still mapped but read-only in
  // the maps just read. The mprotect tracker's own protection does that: with the node's
  // other threads running (cape-cc --model=mt), a thread sent through the resume stub may
  // unprotect its page and write it between the maps read above and collect() below; that
  // page was read-only in the maps, and its write, reported by collect(), was dropped here
  // while the tracker took the page as seen: lost (a heap list built under a lock came out
  // wrong, docs/critical.md "Threads of a node").
  IntervalSet reported = now;
  std::vector<Area> travel_areas = areas_now;  // (TICKPT: what counts as dynamic memory)
  if (window.tracker().kind() == TrackerKind::mprotect) {
    std::vector<Area> start_areas;  // (not the stack: what the others may inject is its writable part)
    for (const Area& a : window.at_start())
      if (a.kind != Area::stack) start_areas.push_back(a);
    if (sharing.model() == CkptModel::tickpt)
      start_areas = restrict_areas(start_areas, sharing.tickpt_cover(start_areas));
    std::vector<IntervalSet::Interval> mapped;
    for (const Mapping& m : maps) mapped.emplace_back(m.start, m.end);
    IntervalSet unmapped = IntervalSet::everything().minus(IntervalSet::of(std::move(mapped)));
    reported = now.unite(spans_of(start_areas).minus(unmapped));
    // The heap and anonymous memory the tracker keeps read-only are dynamic memory too
    // (TICKPT): pages the program dropped in the window (DirtyTracker::before_drop) and did
    // not write again are read-only still, and their zeros travel.
    for (const Area& a : start_areas)
      if (a.kind == Area::heap || a.kind == Area::anon)
        for (auto [x, y] : IntervalSet::of({{a.start, a.end}}).minus(unmapped)) {
          Area piece = a;
          piece.start = x, piece.end = y;
          travel_areas.push_back(piece);
        }
  }

  IntervalSet travels = sharing.travels(travel_areas, side.rank == 0);
  if (!side.with_stack)
    for (const Area& a : areas_now)
      if (a.kind == Area::stack) travels = travels.minus(IntervalSet::of({{a.start, a.end}}));

  // 1. Pages of start()'s set, from the tracker.
  ckpt::Checkpoint tracked;
  ckpt::Differ tracked_diff(tracked, ts);
  std::vector<IntervalSet::Interval> same;  // unchanged bytes in the words of side.exact_in
  PageVisitor visit = [&](uint64_t page, std::span<const uint8_t> orig, std::span<const uint8_t> cur) {
    auto [lo, hi] = reported.clip(page, page + kPageSize);
    if (lo == hi) return;
    // (Only a master with slaves merges against them: alone, no copy per page.)
    if (side.keep_base && orig.size() == kPageSize) base_pages.try_emplace(page, orig.begin(), orig.end());
    tracked_diff.add(lo, orig.subspan(lo - page, hi - lo), cur.subspan(lo - page, hi - lo));
    if (!side.exact_in) return;
    auto keep_same = [&](uint64_t x, uint64_t n) {
      if (!same.empty() && same.back().second == x)
        same.back().second += n;
      else
        same.emplace_back(x, x + n);
    };
    const uint64_t lim = page + std::min(orig.size(), cur.size());
    for (auto it = side.exact_in->first_ending_after(lo & ~uint64_t{7}); it != side.exact_in->end() && it->first < hi;
         ++it) {
      uint64_t up = it->second > hi ? hi : (it->second + 7) & ~uint64_t{7};  // (everything() ends at 2^64-1)
      uint64_t a = std::max(it->first & ~uint64_t{7}, lo), b = std::min({up, hi, lim});
      for (uint64_t x = a; x < b;) {
        if ((x & 7) == 0 && x + 8 <= b && std::memcmp(&orig[x - page], &cur[x - page], 8) == 0) {
          keep_same(x, 8);  // a whole word unchanged
          x += 8;
          continue;
        }
        if (orig[x - page] == cur[x - page]) keep_same(x, 1);
        x++;
      }
    }
  };
  // --sync=lazy: the written pages wholly inside `undiffed`, `reported` and `travels` are not
  // diffed, nor even read (the tracker skips them): their addresses go to undiffed_out.
  IntervalSet skip;
  if (side.undiffed && !side.only && !side.exact_in) {
    IntervalSet in = side.undiffed->minus(side.undiffed->minus(reported));
    in = in.minus(in.minus(travels));
    std::vector<IntervalSet::Interval> whole;
    for (auto [s, e] : in)
      if (page_up(s) < page_down(e)) whole.emplace_back(page_up(s), page_down(e));
    skip = IntervalSet::of(std::move(whole));
  }
  if (!skip.empty()) {
    size_t before = side.undiffed_out->size();
    window.tracker().collect_skipping(st, skip, *side.undiffed_out, side.keep_base, visit);
    if (side.keep_base) {  // the master merges against DATA-0: the tracker's originals (Window::read_base)
      std::vector<IntervalSet::Interval> pages;
      for (size_t i = before; i < side.undiffed_out->size(); i++)
        pages.emplace_back((*side.undiffed_out)[i], (*side.undiffed_out)[i] + kPageSize);
      window.note_skipped(IntervalSet::of(std::move(pages)));
    }
  } else if (!side.only)
    window.tracker().collect(st, visit);
  else if (!window.tracker().collect_only(st, *side.only, visit))
    throw std::logic_error("create(): the tracker cannot collect only some pages");
  tracked_diff.finish();
  if (!same.empty()) tracked = clip_to(std::move(tracked), IntervalSet::everything().minus(IntervalSet::of(std::move(same))));

  // 2. Memory that start() did not see.
  ckpt::Checkpoint fresh;
  ckpt::Differ fresh_diff(fresh, ts);
  std::vector<uint8_t> cur(kPageSize);
  auto& seen = window.fresh_pages();
  IntervalSet unseen = now.minus(spans_of(window.at_start()));
  if (side.only) unseen = unseen.minus(IntervalSet::everything().minus(*side.only));
  for (auto [s, e] : unseen) {
    for (uint64_t page = page_down(s); page < e; page += kPageSize) {
      if (st.tracee.read_bytes_fallible(page, cur) != kPageSize) continue;
      uint64_t lo = std::max(page, s), hi = std::min(page + kPageSize, e);
      std::span<const uint8_t> c(cur.data() + (lo - page), hi - lo);
      auto it = seen.find(page);
      if (it == seen.end()) {
        fresh_diff.add_against_zero(lo, c);
        if (side.keep_base) base_pages.try_emplace(page, kPageSize, uint8_t{0});  // new memory: zeros
        seen.emplace(page, cur);
      } else {
        fresh_diff.add(lo, std::span<const uint8_t>(it->second).subspan(lo - page, hi - lo), c);
        it->second = cur;
      }
    }
  }
  fresh_diff.finish();

  // 3. Data sharing (002 Sect. 4.3). (Moved, not copied, where nothing is cut or added.)
  ckpt::Checkpoint kept = clip_to(joined(std::move(tracked), std::move(fresh)), travels);
  ckpt::Checkpoint out = joined(std::move(kept), sharing.saved_values(st.tracee, ts, side.rank));
  out.kind = ckpt::Kind::delta;
  out.timestamp = ts;
  out.mappings = std::move(map_changed);
  return out;
}

}  // namespace cape::monitor

#include "ckpt/overlay.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace cape::ckpt {

Checkpoint overlay(const Checkpoint& under, const Checkpoint& over) {
  // The memory `over` writes, as sorted disjoint [lo, hi) pieces (a masked run's set words).
  std::vector<std::pair<uint64_t, uint64_t>> cover;
  for (const Run& r : over.runs)
    over.for_each_piece(r, [&](uint64_t a, std::span<const uint8_t> b) {
      if (!cover.empty() && cover.back().second == a)
        cover.back().second += b.size();
      else
        cover.emplace_back(a, a + b.size());
    });
  // What stays of `under`: its runs minus the cover.
  Checkpoint kept;
  size_t k = 0;
  for (const Run& r : under.runs) {
    while (k < cover.size() && cover[k].second <= r.address) ++k;
    uint64_t pos = r.address;
    for (size_t j = k; pos < r.end(); ++j) {
      if (j == cover.size() || cover[j].first >= r.end()) {
        kept.append_from(under, r, pos, r.end());
        break;
      }
      if (cover[j].first > pos) kept.append_from(under, r, pos, cover[j].first);
      pos = std::max(pos, cover[j].second);
    }
  }
  Checkpoint out = over.header();
  out.mappings = overlay_mappings(under.mappings, over.mappings);
  // Joined piece by piece: a masked run's span may hold the other side's bytes in its
  // unmarked words, so whole runs cannot simply be put in address order.
  struct Piece {
    uint64_t address;
    std::span<const uint8_t> bytes;
    uint64_t timestamp;
    Reduction reduction;
  };
  std::vector<Piece> pieces;
  for (const Checkpoint* c : {static_cast<const Checkpoint*>(&kept), &over})
    for (const Run& r : c->runs)
      c->for_each_piece(r, [&](uint64_t a, std::span<const uint8_t> b) {
        pieces.push_back({a, b, r.timestamp, r.reduction});
      });
  std::sort(pieces.begin(), pieces.end(), [](const Piece& a, const Piece& b) { return a.address < b.address; });
  for (const Piece& p : pieces) out.append(p.address, p.bytes, p.timestamp, p.reduction);
  return out;
}

Checkpoint newer_than(const Checkpoint& c, uint64_t stamp) {
  Checkpoint out = c.header();
  for (const Run& r : c.runs)
    if (r.timestamp > stamp) out.append_from(c, r);
  return out;
}

Checkpoint restamped(const Checkpoint& c, uint64_t stamp) {
  Checkpoint out = c.header();
  for (const Run& r : c.runs)
    c.for_each_piece(r, [&](uint64_t a, std::span<const uint8_t> b) { out.append(a, b, stamp, r.reduction); });
  return out;
}

}  // namespace cape::ckpt

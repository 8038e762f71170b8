#include "monitor/races.h"

#include <set>

#include "ckpt/format.h"
#include "util/log.h"

namespace cape::monitor {

std::vector<ckpt::Conflict> possible_races(const std::vector<ckpt::Conflict>& conflicts, const DataSharing& sharing,
                                           const AddressSpace& as) {
  if (conflicts.empty()) return {};
  IntervalSet priv = sharing.private_ranges(as, 0);
  std::vector<IntervalSet::Interval> stack_v;
  for (const Area& r : as.tracked(0))
    if (r.kind == Area::stack) stack_v.emplace_back(r.start, r.end);
  IntervalSet stack = IntervalSet::of(std::move(stack_v));
  IntervalSet registered = sharing.registered();
  std::vector<ckpt::Conflict> out;
  for (const ckpt::Conflict& c : conflicts) {
    if (priv.overlaps(c.address, c.address + c.length)) continue;
    // Unregistered stack words (compiler temporaries, the region body's locals) travel but are
    // dead after the region: no race, in both models when TICKPT's stack travels too.
    if ((sharing.model() == CkptModel::dickpt || tickpt_stack()) && stack.overlaps(c.address, c.address + c.length) &&
        !registered.overlaps(c.address, c.address + c.length))
      continue;
    out.push_back(c);
  }
  return out;
}

void RaceReport::add(const std::vector<ckpt::Conflict>& races, int from, uint64_t region, Places& places,
                     const AddressSpace& as) {
  if (region != region_) {
    region_ = region;
    counted_ = false;
    named_.clear();
  }
  if (races.empty()) return;
  const ckpt::SymbolTable& symbols = places.symbols(as);
  std::vector<Area> areas = as.tracked(0);
  for (const ckpt::Conflict& c : races) {
    const ckpt::Symbol* sym = symbols.find(c.address);
    std::string what;
    if (sym) {
      what = sym->name;
      if (sym->size > 8 || c.address != sym->address) {
        what += '+';  // (not `"+" + to_string()`: gcc 12 -O3 warns -Wrestrict, breaking make bench)
        what += std::to_string(c.address - sym->address);
      }
    } else {
      const char* kind = "memory";
      for (const Area& r : areas)
        if (r.contains(c.address)) kind = to_string(r.kind);
      what = std::string(kind) + " " + ckpt::hex_address(c.address);
    }
    nodes_.insert(from);
    if (named_.insert(sym ? sym->name : what).second) pending_.push_back(what);  // one name per variable
  }
}

void RaceReport::say(const std::string& region_label, bool check_races) {
  if (pending_.empty()) {
    nodes_.clear();
    return;
  }
  if (!counted_) ++regions_, counted_ = true;
  std::string vars;
  const size_t shown = 5;
  for (size_t i = 0; i < pending_.size() && i < shown; ++i) vars += (i ? ", `" : "`") + pending_[i] + "`";
  if (pending_.size() > shown) vars += " and " + std::to_string(pending_.size() - shown) + " more";
  std::string parts;
  size_t k = 0;
  for (int n : nodes_) {
    parts += (k == 0 ? "" : k + 1 == nodes_.size() ? " and " : ", ") + ("node " + std::to_string(n)) + "'s";
    ++k;
  }
  parts += nodes_.size() > 1 ? " parts" : " part";
  std::string line = (check_races ? "cape: race: " : "cape: warning: ") + region_label + ": " + vars +
                     " written with different values on several nodes (merging " + parts + "), without a reduction";
  if (!check_races) line += ": a data race; one node's value was kept (--check-races makes it an error)";
  util::write_stderr(line + "\n");
  pending_.clear();
  nodes_.clear();
}

}  // namespace cape::monitor

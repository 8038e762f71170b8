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
    if (sharing.model() == CkptModel::dickpt && stack.overlaps(c.address, c.address + c.length) &&
        !registered.overlaps(c.address, c.address + c.length))
      continue;
    out.push_back(c);
  }
  return out;
}

void report_races(const std::vector<ckpt::Conflict>& races, int from, const std::string& name, uint64_t region,
                  Places& places, const AddressSpace& as) {
  if (races.empty()) return;
  const ckpt::SymbolTable& symbols = places.symbols(as);
  std::string where = places.start_site(as);
  std::vector<Area> areas = as.tracked(0);
  std::set<std::string> said;
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
    if (!said.insert(sym ? sym->name : what).second) continue;  // one line per variable
    util::write_stderr("cape: race: region " + std::to_string(region) + " (start() at " + where + "): `" + what +
                       "` (" + ckpt::hex_address(c.address) + ", " + std::to_string(c.length) +
                       " bytes) written with different values by node " + std::to_string(from) +
                       " and another node, without a reduction (checkpoint \"" + name + "\")\n");
  }
}

}  // namespace cape::monitor

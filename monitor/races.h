// Bernstein's conditions across nodes (docs/tickpt.md): the conflicts of a wait_for() merge
// that can be races, and the report that names each variable and the region.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "ckpt/ops.h"
#include "monitor/address_space.h"
#include "monitor/data_sharing.h"
#include "monitor/places.h"

namespace cape::monitor {

// The conflicts of a merge that can be races: not private copies (they differ by design),
// and under DICKPT not the unregistered words of the main stack. DICKPT sends every written
// stack word, including the locals of the region itself and the compiler's spills (private
// in OpenMP, 002 Sect. 3.1), which no clause call can name before start(): on the stack only
// registered shared variables count. TICKPT sends no stack data but the registered.
std::vector<ckpt::Conflict> possible_races(const std::vector<ckpt::Conflict>& conflicts, const DataSharing& sharing,
                                           const AddressSpace& as);

// The exit status of a job whose --check-races found races while its program ended well
// (ThreadSanitizer's default, for the same reason: a status the program rarely uses).
inline constexpr int kRaceExitStatus = 66;

// What the merges of a region found, said once per region on stderr, naming the variables
// (issue 17: one line per slave, naming an address, was too much and too little):
//   cape: race: parallel region 1 (prog.c:12): `x`, `a+8` written with different values on
//   several nodes (merging node 1's and node 2's parts), without a reduction
// (--check-races), or the same as `cape: warning: ...` pointing at --check-races.
class RaceReport {
 public:
  // The races found merging node `from`'s part of a region's exchange.
  void add(const std::vector<ckpt::Conflict>& races, int from, uint64_t region, Places& places,
           const AddressSpace& as);
  // One line for the variables added since the last say() and not yet named in this region.
  void say(const std::string& region_label, bool check_races);
  // Regions in which races were found.
  uint64_t regions() const { return regions_; }

 private:
  uint64_t region_ = 0;
  bool counted_ = false;              // region_ is among regions_
  std::set<std::string> named_;       // variables named (or pending) in region_
  std::vector<std::string> pending_;  // to name at the next say()
  std::set<int> nodes_;               // whose parts conflicted, since the last say()
  uint64_t regions_ = 0;
};

}  // namespace cape::monitor

// Bernstein's conditions across nodes (docs/tickpt.md): the conflicts of a wait_for() merge
// that can be races, and the report that names each variable and the region.
#pragma once

#include <cstdint>
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

// "cape: race: region N (start() at prog.c:12): `x` ... by node F and another node ..." on
// stderr, one line per variable, for the races found merging node `from`'s part of `name`.
void report_races(const std::vector<ckpt::Conflict>& races, int from, const std::string& name, uint64_t region,
                  Places& places, const AddressSpace& as);

}  // namespace cape::monitor

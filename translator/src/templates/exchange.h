// The exchange that ends a region or a barrier: 001_3036025dc34c4021.txt Fig. 3 lines 6-12
// (master) and 18-25 (slaves), inline in the user's function (see cape/cc.h), and the
// barriers built on it.
#pragma once

#include <string>

#include "clauses.h"
#include "context.h"

namespace cape::tr {

// The end of parallel construct c: the exchange with last_parallel() (lines 10, 21, 25),
// then the team's join. Closes the block gen_begin() opened.
std::string end_code(const TranslationContext& cx, Construct* c);

// A barrier at token `at`: the region's privates get their bytes back and its other locals
// are cleared before create(); each node takes its own values back afterwards. `after`:
// code run once the exchange is over; `calls`: clause calls of the window the barrier
// opens, besides the region's own (Fig. 7: they hold only until cape_stop()).
// `unshare`: variables whose whole registration as shared the region's calls leave out in
// this window (the bases of array sections reduced in it: the monitor refuses overlapping
// registrations; the section's reduction call registers the rest of the array shared).
std::string barrier_code(const TranslationContext& cx, const Enclosing& enc, int at,
                         const std::string& after = "", const std::string& calls = "",
                         const std::vector<std::string>& unshare = {});

// A worksharing construct with a reduction starts a window of its own: a barrier whose
// start() follows the reduction calls ("" without reduction).
std::string reduction_window(const TranslationContext& cx, Construct* c, const Enclosing& enc, const Clauses& cl);

// `#pragma omp barrier`.
void barrier(TranslationContext& cx, Construct* c, const Enclosing& enc);

}  // namespace cape::tr

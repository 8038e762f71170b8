// Where the determinism digest at a region's begin reads memory (determinism.h; issue 14).
//
//   DigestSource src = digest_source(st, window, lazy, space, model, areas);
//   digest_state(tracee, areas, zeroed, before, &dirty(src.changes), src.copies ? &src.copies : nullptr);
//
// Under uffd (DICKPT, between windows) the tracker first brings the copies it keeps between
// windows up to date, as the region's start() would (DirtyTracker::refresh_for_digest), and
// the digest hashes those copies: a big input the program only reads is read from the program
// once (that refresh; the region's start() in the same stop then finds nothing), not twice
// (the digest, then start()), and the second region's digest does not read it a third time
// (start()'s refresh counted as changes since the digest). Elsewhere: take_changes(), and the
// digest reads the program. CAPE_DIGEST_FROM_COPIES=0 turns the copies off (A/B figures).
#pragma once

#include <optional>
#include <vector>

#include "monitor/data_sharing.h"
#include "monitor/determinism.h"
#include "monitor/dirty_tracker.h"
#include "monitor/window.h"

namespace cape::monitor {

class LazySync;

struct DigestSource {
  std::optional<DirtyTracker::Changes> changes;  // take_changes()'s answer (nullopt: unknown)
  CopySource copies;                             // empty: read the program
};

DigestSource digest_source(const StoppedThread& st, Window& window, LazySync* lazy, const std::vector<Area>& track,
                           CkptModel model, const std::vector<Area>& areas);

}  // namespace cape::monitor

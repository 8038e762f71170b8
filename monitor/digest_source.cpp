#include "monitor/digest_source.h"

#include <cstdlib>
#include <string>
#include <utility>

#include "monitor/lazy.h"

namespace cape::monitor {

namespace {
bool copies_wanted() {
  static const bool on = !(std::getenv("CAPE_DIGEST_FROM_COPIES") && std::string(std::getenv("CAPE_DIGEST_FROM_COPIES")) == "0");
  return on;
}
}  // namespace

// Not inside a window (the copies are the window's originals then), not under TICKPT (the
// region's start() copies only its shared data, which the region's table, read at start(),
// names). The same preparation as Monitor::start(): lazy's pages not here and original
// source first, missing mode again after a registration.
DigestSource digest_source(const StoppedThread& st, Window& window, LazySync* lazy, const std::vector<Area>& track,
                           CkptModel model, const std::vector<Area>& areas) {
  DigestSource src;
  DirtyTracker& tracker = window.tracker();
  if (!window.is_open() && model != CkptModel::tickpt && copies_wanted()) {
    if (lazy) {
      tracker.set_not_here(lazy->invalid());
      tracker.set_original_source(lazy->original_source());
    }
    src.changes = tracker.refresh_for_digest(st, track, areas);
    if (src.changes) {
      if (lazy) lazy->after_start();
      src.copies = [&tracker](uint64_t a, uint64_t len) {
        DirtyTracker::CopyRun r = tracker.copy_run(a, len);
        return CopyPiece{r.bytes, r.n, r.zeros};
      };
      return src;
    }
  }
  src.changes = tracker.take_changes(st, areas);
  return src;
}

}  // namespace cape::monitor

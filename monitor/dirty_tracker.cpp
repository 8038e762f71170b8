#include "monitor/dirty_tracker.h"

#include "monitor/trackers.h"
#include "util/error.h"

namespace cape::monitor {

const char* to_string(TrackerKind k) {
  switch (k) {
    case TrackerKind::mprotect: return "mprotect";
    case TrackerKind::uffd: return "uffd";
    case TrackerKind::full: return "full";
  }
  return "?";
}

TrackerKind parse_tracker_kind(const std::string& s) {
  if (s == "mprotect") return TrackerKind::mprotect;
  if (s == "uffd") return TrackerKind::uffd;
  if (s == "full") return TrackerKind::full;
  throw UserError("unknown tracker '" + s + "' (mprotect, uffd or full)");
}

std::unique_ptr<DirtyTracker> make_tracker(TrackerKind kind, pid_t pid) {
  switch (kind) {
    case TrackerKind::mprotect: return std::make_unique<MprotectTracker>();
    case TrackerKind::uffd: return std::make_unique<UffdTracker>(pid);
    case TrackerKind::full: return std::make_unique<FullTracker>();
  }
  return nullptr;
}

}  // namespace cape::monitor

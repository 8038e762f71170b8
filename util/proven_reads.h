// --sync=lazy: which fetched pages a reader surely read (docs/monitor.md, "Lazy
// synchronisation", "What a sweep costs and what travels, session 14"). A page a node read
// once travels to it eagerly whenever it is written again (its working set, "hot"), so a
// page fetched ahead and never read travelled every region for nothing (Jacobi 2000: three
// pages of the row after the halo row; ~19 KB of ~138 KB per sweep). A request's first page is
// the one the reader faulted on; the rest of a request counts once the reader's next request
// continues where it ended (it read on past them). The tail of the last read-ahead run is
// left out; a page of it the reader does read faults again at the next region and counts.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <string>

#include "util/env.h"

namespace cape::util {

class ProvenReads {
 public:
  // One request of `count` pages from `first`; `out(page)` for each page now known read.
  template <class Out>
  void note(uint64_t first, uint64_t count, Out&& out) {
    if (!proven_only_) {
      for (uint64_t i = 0; i < count; i++) out(first + i * kPage);
      return;
    }
    if (first == tail_end_)
      for (uint64_t p = tail_start_; p < tail_end_; p += kPage) out(p);
    out(first);
    tail_start_ = first + kPage;
    tail_end_ = first + count * kPage;
  }
  ProvenReads() : proven_only_(on()) {}

  // CAPE_LAZY_HOT_PROVEN: 1 (default) as above; 0: every fetched page counts as read (the
  // way before session 14, for A/B runs). Anything else: a UserError naming the variable.
  static bool on() {
    return env_on_off("CAPE_LAZY_HOT_PROVEN", true, "only pages a node surely read travel to it eagerly",
                      "every page it fetched");
  }

 private:
  static constexpr uint64_t kPage = 4096;
  bool proven_only_;
  uint64_t tail_start_ = 0, tail_end_ = 0;
};

}  // namespace cape::util

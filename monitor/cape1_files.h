// The rest of 003_45ed75503520c8f4.txt Fig. 2 (CAPE-1's template, docs/cape1.md), served by
// the monitor for libcape's cape1_* calls, on complete checkpoint files (monitor/complete.h):
//
//   copy(original, target)          the file copied (atomically)
//   diff(original, after, delta)    delta = what turns original into after: its memory
//                                   changes (ckpt::diff), after's registers and process section
//   merge(target, delta)            target with delta laid over it (delta's registers and
//                                   process section); a byte two deltas wrote differently is a
//                                   Bernstein violation: an error naming it
//   wait_for(file)                  returns once the file exists (written by rename: whole)
//   restart_on(file, node)          a new process from the file: `cape restart --rank NODE
//                                   FILE` started beside this monitor (the papers' "ssh host
//                                   restart": here, this host), its streams the program's
//   restart(file)                   this process continues from the file: its memory written,
//                                   its registers taken (the same executable and map)
//   send(file, node)                beyond Fig. 2, for a region's barriers: the file to node
//                                   `node`, whose wait_for(file) takes it (alone: nothing to do)
#pragma once

#include <sys/types.h>
#include <sys/user.h>

#include <optional>
#include <string>
#include <vector>

#include "ckpt/checkpoint.h"

namespace cape::monitor {

class Exchange;

// On `cape run` nodes (an Exchange of more than one node) the files travel instead of
// processes starting beside the monitor: restart_on sends the checkpoint to the node, whose
// program (waiting in serve()) becomes its process in place (restart.h); a slave's diff sends
// its delta to the master; the master's wait_for receives it into the file.
class Cape1Files {
 public:
  explicit Cape1Files(Exchange* ex = nullptr, int rank = 0) : ex_(ex), rank_(rank) {}
  void copy(const std::string& from, const std::string& to);
  void diff(const std::string& original, const std::string& after, const std::string& delta);
  void merge(const std::string& target, const std::string& delta);
  void wait_for(const std::string& file);
  void restart_on(const std::string& file, int node);
  void send(const std::string& file, int node);
  // Writes `file`'s memory into the stopped process `pid`; returns the registers it resumes with.
  // First gives its anonymous memory the protection the file records (a part's merge carries
  // the others' protection changes: a heap grown by mprotect), through libcape's `gadget`.
  user_regs_struct restart(pid_t pid, pid_t tid, uint64_t gadget, const std::string& file);
  // A slave node: the next checkpoint from the master, made this process (its registers), or
  // nothing when the master's program ended.
  std::optional<user_regs_struct> serve(pid_t pid, pid_t tid);

  // Is the program a part of a translated region (docs/cape1.md, "Output inside a region")?
  // On a slave node from the checkpoint serve() made it to its next serve() (the end of its
  // part); on the master from a create() inside a marked frame (the region's `original`) to
  // the restart() of the region's end: the one with no send() since the create() (a
  // barrier's sends the step to the others; cape1_cc.c). The node routes what the program
  // prints by it (Exchange::program_streams), as it does by the window under CAPE-2.
  // CAPE1_REGION_OUTPUT=0: never (the old way: a slave's region output only in its log).
  bool in_region() const;
  // A create() (the monitor's CAPE_OP_CREATE_COMPLETE) with this marked frame (0: none).
  void created(uint64_t frame_boundary) {
    in_region_ = frame_boundary != 0;
    sent_ = false;
  }

 private:
  bool distributed() const;
  Exchange* ex_;
  int rank_;  // a part restarted beside a monitor (`cape restart --rank K`) has K
  std::optional<ckpt::Checkpoint> original_;  // a slave node: the last checkpoint received
  std::string last_original_;                  // the original of the last diff
  std::vector<pid_t> started_;  // restart_on's processes not known to have ended
  bool in_region_ = false;
  bool sent_ = false;  // a send() since the last create()
};

}  // namespace cape::monitor

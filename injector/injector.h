// Writing a checkpoint into a stopped process (../shared/ARCHITECTURE.md: injector/).
//
//   injector::check_inside(ck, allowed, "inject(\"x\")");  // throws before any write
//   injector::write_checkpoint(pid, ck);
//
// Plain runs replace the bytes; reduction runs (002_2c61c2cb27f62a9a.txt Sect. 4.3) are
// combined with what memory holds (memory is the earlier value). Writes go in batches through
// process_vm_writev; what it cannot write (pages the program or the mprotect tracker made
// read-only) through /proc/PID/mem, which writes those too.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ckpt/checkpoint.h"

namespace cape::injector {

struct Range {
  uint64_t start = 0, end = 0;
};

// Throws cape::UserError naming the first run not inside one of `allowed` (sorted,
// disjoint; neighbouring ranges count as one).
void check_inside(const ckpt::Checkpoint& c, const std::vector<Range>& allowed,
                  const std::string& what);

void write_checkpoint(pid_t pid, const ckpt::Checkpoint& c);
// The same through `mem_fd`, the process's /proc/PID/mem already open (the monitor keeps
// one per image: an open per inject cost as much as a small write, issue 14).
void write_checkpoint(pid_t pid, int mem_fd, const ckpt::Checkpoint& c);

}  // namespace cape::injector

// `cape restart`: a new process from a complete checkpoint (CAPE-1, 003_45ed75503520c8f4.txt
// Fig. 2; monitor/complete.h makes them). docs/cape1.md has the steps and what is refused.
//
//   pid_t pid = restart_process(c, {});   // running, no longer traced, our child
//   waitpid(pid, ...)
//
// The executable (the recorded path, or `command[0]`) must be the one the checkpoint was
// made from: same build id (or, without one, same content); every file the program mapped
// must have the content it had. The process is started stopped at its entry under ptrace
// with address randomisation off, its mappings rebuilt at their addresses (the files mapped
// again, anonymous memory, the brk heap, the stack grown down), its memory written, its
// registers and FPU state set, then resumed. The standard streams are the caller's; other
// descriptors the checkpoint lists (read-only regular files) are reopened by path at their
// offset; the signal mask, ignored signals and handlers, the cwd and glibc's rseq
// registration are restored.
#pragma once

#include <sys/types.h>
#include <sys/user.h>

#include <utility>

#include <string>
#include <vector>

#include "ckpt/checkpoint.h"

namespace cape::monitor {

struct RestartOptions {
  std::vector<std::string> command;  // the executable and argv to start (empty: the recorded path)
  bool detach = true;                // false: the process stays traced by the caller, stopped
  int stdin_fd = -1, stdout_fd = -1, stderr_fd = -1;  // its standard streams (-1 = the caller's)
  bool die_with_parent = false;      // PR_SET_PDEATHSIG (a monitor's program)
};

// Throws UserError (another binary, a changed library, a corrupt checkpoint...) before the
// new process runs any of the program's code.
pid_t restart_process(const ckpt::Checkpoint& c, const RestartOptions& options);

// The stopped, traced process `pid` (thread `tid`) becomes the checkpoint's process: its
// mappings replaced by the recorded ones (but [vdso]/[vvar], which must be where they were,
// and the monitor's own mappings in `keep`), its memory written; returns the registers it
// must resume with. Its descriptors stay its own. CAPE-1 on `cape run` nodes: a node's
// program becomes each region's part (monitor/cape1_files.h).
user_regs_struct restart_in_place(pid_t pid, pid_t tid, const ckpt::Checkpoint& c,
                                  std::pair<uint64_t, uint64_t> keep);

}  // namespace cape::monitor

// The report printed when the program dies of a signal: the signal, the faulting address
// and a symbolised backtrace of each thread (libunwind-ptrace), with the source file:line of
// frames that have debug information (addr2line). Every thread named must be in a ptrace stop.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <string>
#include <vector>

namespace cape::monitor {

struct CrashReport {
  std::string text;          // the whole report, for the node's stderr (a slave's log)
  std::string first_frames;  // the crashed thread's first frames, one "  #0 ..." line each
};

CrashReport crash_report(pid_t pid, pid_t crashed, const siginfo_t& info, const std::vector<pid_t>& other_threads);

// One thread's backtrace, one frame a line ("  #0 0x401136 crash_here+0x16 (prog) at prog.c:7"),
// at most `max_frames`.
std::string backtrace_of(pid_t pid, pid_t tid, int max_frames = 64);

}  // namespace cape::monitor

// The report printed when the program dies of a signal: the signal, the faulting address
// and a symbolised backtrace of each thread (libunwind-ptrace). Every thread named must be
// in a ptrace stop.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <string>
#include <vector>

namespace cape::monitor {

std::string crash_report(pid_t pid, pid_t crashed, const siginfo_t& info,
                         const std::vector<pid_t>& other_threads);

// One thread's backtrace, one frame a line ("  #0 0x401136 crash_here+0x16 (prog)").
std::string backtrace_of(pid_t pid, pid_t tid);

}  // namespace cape::monitor

#include "monitor/crash_report.h"

#include <libunwind-ptrace.h>

#include <cstdio>
#include <cstring>

#include "ckpt/checkpoint.h"
#include "monitor/memory_map.h"

namespace cape::monitor {
namespace {
std::string hex(uint64_t v) { return ckpt::hex_address(v); }
std::string mapping_name(const std::vector<Mapping>& maps, uint64_t ip) {
  for (const Mapping& m : maps) {
    if (ip >= m.start && ip < m.end) {
      auto slash = m.path.rfind('/');
      return slash == std::string::npos ? m.path : m.path.substr(slash + 1);
    }
  }
  return "?";
}
bool has_address(int sig) { return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE; }
}  // namespace

std::string backtrace_of(pid_t pid, pid_t tid) {
  std::string out;
  std::vector<Mapping> maps = read_maps(pid);
  unw_addr_space_t as = unw_create_addr_space(&_UPT_accessors, 0);
  if (!as) return "  (libunwind: no address space)\n";
  void* ui = _UPT_create(tid);
  unw_cursor_t cursor;
  if (!ui || unw_init_remote(&cursor, as, ui) != 0) {
    out = "  (libunwind could not start unwinding)\n";
  } else {
    unw_word_t last_ip = 0;
    for (int depth = 0; depth < 64; depth++) {
      unw_word_t ip = 0, off = 0;
      unw_get_reg(&cursor, UNW_REG_IP, &ip);
      if (ip == 0 || (depth > 0 && ip == last_ip)) break;  // lost the frame chain
      last_ip = ip;
      char name[256];
      std::string fn = unw_get_proc_name(&cursor, name, sizeof name, &off) == 0
                           ? std::string(name) + "+" + hex(off)
                           : std::string("??");
      out += "  #" + std::to_string(depth) + " " + hex(ip) + " " + fn + " (" +
             mapping_name(maps, ip) + ")\n";
      if (unw_step(&cursor) <= 0) break;
    }
  }
  if (ui) _UPT_destroy(ui);
  unw_destroy_addr_space(as);
  return out;
}

std::string crash_report(pid_t pid, pid_t crashed, const siginfo_t& info,
                         const std::vector<pid_t>& other_threads) {
  int sig = info.si_signo;
  std::string out = "cape: the program was killed by signal " + std::to_string(sig) + " (SIG" +
                    std::string(sigabbrev_np(sig) ? sigabbrev_np(sig) : "?") + ", " +
                    strsignal(sig) + ")";
  if (has_address(sig)) out += " at address " + hex(reinterpret_cast<uint64_t>(info.si_addr));
  out += "\ncape: thread " + std::to_string(crashed) + " (this one got the signal):\n";
  out += backtrace_of(pid, crashed);
  for (pid_t t : other_threads) {
    out += "cape: thread " + std::to_string(t) + ":\n";
    out += backtrace_of(pid, t);
  }
  return out;
}

}  // namespace cape::monitor

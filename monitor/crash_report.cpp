#include "monitor/crash_report.h"

#include <elf.h>
#include <libunwind-ptrace.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>

#include "ckpt/checkpoint.h"
#include "monitor/memory_map.h"

namespace cape::monitor {
namespace {

std::string hex(uint64_t v) { return ckpt::hex_address(v); }

std::string base_name(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

const Mapping* mapping_of(const std::vector<Mapping>& maps, uint64_t ip) {
  for (const Mapping& m : maps)
    if (ip >= m.start && ip < m.end) return &m;
  return nullptr;
}

bool has_address(int sig) { return sig == SIGSEGV || sig == SIGBUS || sig == SIGILL || sig == SIGFPE; }

// The address addr2line wants for `ip` in the file mapped by `m`: a position-independent
// file (ET_DYN) is linked at 0, so the offset from where its first page is mapped.
uint64_t file_address(const std::vector<Mapping>& maps, const Mapping& m, uint64_t ip) {
  std::ifstream f(m.path, std::ios::binary);
  Elf64_Ehdr eh{};
  if (!f.read(reinterpret_cast<char*>(&eh), sizeof eh) || eh.e_type != ET_DYN) return ip;
  uint64_t base = m.start - m.offset;
  for (const Mapping& o : maps)
    if (o.path == m.path && o.offset == 0) base = o.start;
  return ip - base;
}

// "file:line" of `address` in `file`, "" when it has no debug information for it.
std::string source_line(const std::string& file, uint64_t address) {
  std::string cmd = "addr2line -e '" + file + "' " + hex(address) + " 2>/dev/null";
  std::unique_ptr<FILE, int (*)(FILE*)> p(::popen(cmd.c_str(), "r"), ::pclose);
  if (!p) return "";
  char buf[1024];
  if (!std::fgets(buf, sizeof buf, p.get())) return "";
  std::string s = buf;
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  if (s.empty() || s[0] == '?' || s.find(":?") != std::string::npos || s.size() < 3 || s.substr(s.size() - 2) == ":0")
    return "";
  auto disc = s.find(" (discriminator");
  if (disc != std::string::npos) s.erase(disc);
  return base_name(s);
}

}  // namespace

std::string backtrace_of(pid_t pid, pid_t tid, int max_frames) {
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
    for (int depth = 0; depth < max_frames; depth++) {
      unw_word_t ip = 0, off = 0;
      unw_get_reg(&cursor, UNW_REG_IP, &ip);
      if (ip == 0 || (depth > 0 && ip == last_ip)) break;  // lost the frame chain
      last_ip = ip;
      char name[256];
      std::string fn = unw_get_proc_name(&cursor, name, sizeof name, &off) == 0
                           ? std::string(name) + "+" + hex(off)
                           : std::string("??");
      const Mapping* m = mapping_of(maps, ip);
      out += "  #" + std::to_string(depth) + " " + hex(ip) + " " + fn + " (" + (m ? base_name(m->path) : "?") + ")";
      // A caller's frame holds the return address: its call is the instruction before.
      if (m && !m->path.empty() && m->path[0] == '/') {
        std::string line = source_line(m->path, file_address(maps, *m, depth > 0 ? ip - 1 : ip));
        if (!line.empty()) out += " at " + line;
      }
      out += "\n";
      if (unw_step(&cursor) <= 0) break;
    }
  }
  if (ui) _UPT_destroy(ui);
  unw_destroy_addr_space(as);
  return out;
}

CrashReport crash_report(pid_t pid, pid_t crashed, const siginfo_t& info, const std::vector<pid_t>& other_threads) {
  int sig = info.si_signo;
  std::string out = "cape: the program was killed by signal " + std::to_string(sig) + " (SIG" +
                    std::string(sigabbrev_np(sig) ? sigabbrev_np(sig) : "?") + ", " +
                    strsignal(sig) + ")";
  if (has_address(sig)) out += " at address " + hex(reinterpret_cast<uint64_t>(info.si_addr));
  out += "\ncape: thread " + std::to_string(crashed) + " (this one got the signal):\n";
  std::string crashed_trace = backtrace_of(pid, crashed);
  out += crashed_trace;
  for (pid_t t : other_threads) {
    out += "cape: thread " + std::to_string(t) + ":\n";
    out += backtrace_of(pid, t);
  }
  // The first frames: up to the first 3 lines of the crashed thread's.
  std::string first;
  size_t at = 0;
  for (int i = 0; i < 3 && at < crashed_trace.size(); ++i) {
    size_t nl = crashed_trace.find('\n', at);
    if (nl == std::string::npos) nl = crashed_trace.size() - 1;
    first += crashed_trace.substr(at, nl + 1 - at);
    at = nl + 1;
  }
  return {out, first};
}

}  // namespace cape::monitor

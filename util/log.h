// Levelled logging per module: CAPE_LOG=monitor:debug,net:info (or CAPE_LOG=debug for all).
// Lines go to stderr prefixed with "[cape <module> rank pid]"; debug lines also carry the
// monotonic clock after their level ("debug: [t 12.345678] ...": seconds, the same clock on
// every process of a host, to put several nodes' logs on one time line). No printf in the parts.
//
//   CAPE_LOG_AT(debug, "monitor") << "stopped at " << std::hex << rip;
#pragma once

#include <sstream>
#include <string>
#include <string_view>

namespace cape::util {

enum class LogLevel { error = 0, warn = 1, info = 2, debug = 3 };

// The level in force for `module` (parsed once from CAPE_LOG; default warn).
LogLevel log_level(std::string_view module);
// The modules that log (`CAPE_LOG_AT(level, "net")`): a spec naming another is refused.
// ("critical": the node's side of critical sections; "locks": the lock service's frames.)
inline constexpr std::string_view kLogModules[] = {"calls", "critical", "locks", "monitor", "net", "traffic"};

// Why `spec` (CAPE_LOG's syntax: `level` or `module:level`, comma-separated) is not one,
// naming the bad item and the choices; empty when it is one.
std::string log_spec_problem(std::string_view spec);

// The rank shown in every line once the node knows it (-1 = none).
void set_log_rank(int rank);

// Writes `s` to stderr whole (a message the user reads, not a log line); gives up quietly
// when stderr is gone.
void write_stderr(const std::string& s);

class LogLine {
 public:
  LogLine(LogLevel level, std::string_view module);
  ~LogLine();  // writes the line in one write(2)
  LogLine(const LogLine&) = delete;
  LogLine& operator=(const LogLine&) = delete;
  template <class T>
  LogLine& operator<<(const T& v) {
    out_ << v;
    return *this;
  }

 private:
  std::ostringstream out_;
};

}  // namespace cape::util

// A for-statement rather than if/else, so `if (x) CAPE_LOG_AT(...) << ...;` stays unambiguous;
// the arguments are evaluated only when the level is on.
#define CAPE_LOG_AT(level, module)                                                          \
  for (bool cape_log_on_ = ::cape::util::log_level(module) >= ::cape::util::LogLevel::level; \
       cape_log_on_; cape_log_on_ = false)                                                  \
  ::cape::util::LogLine(::cape::util::LogLevel::level, module)

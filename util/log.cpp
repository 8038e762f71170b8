#include "util/log.h"

#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <map>
#include <optional>
#include <mutex>
#include <string>

namespace cape::util {
namespace {

struct LogConfig {
  LogLevel fallback = LogLevel::warn;
  std::map<std::string, LogLevel, std::less<>> modules;
};

std::optional<LogLevel> parse_level(std::string_view s) {
  if (s == "error") return LogLevel::error;
  if (s == "warn") return LogLevel::warn;
  if (s == "info") return LogLevel::info;
  if (s == "debug") return LogLevel::debug;
  return std::nullopt;
}

const LogConfig& config() {
  static const LogConfig cfg = [] {
    LogConfig c;
    const char* env = std::getenv("CAPE_LOG");
    std::string_view spec = env ? env : "";
    while (!spec.empty()) {
      size_t comma = spec.find(',');
      std::string_view item = spec.substr(0, comma);
      spec = comma == std::string_view::npos ? "" : spec.substr(comma + 1);
      size_t colon = item.find(':');
      if (colon == std::string_view::npos) {
        if (auto l = parse_level(item)) c.fallback = *l;
      } else if (auto l = parse_level(item.substr(colon + 1))) {
        c.modules.emplace(std::string(item.substr(0, colon)), *l);
      }
    }
    return c;
  }();
  return cfg;
}

int g_rank = -1;

std::string module_list() {
  std::string s;
  for (std::string_view m : kLogModules) s += (s.empty() ? "" : ", ") + std::string(m);
  return s;
}

const char* level_name(LogLevel l) {
  switch (l) {
    case LogLevel::error: return "error";
    case LogLevel::warn: return "warn";
    case LogLevel::info: return "info";
    case LogLevel::debug: return "debug";
  }
  return "?";
}

}  // namespace

LogLevel log_level(std::string_view module) {
  const LogConfig& c = config();
  auto it = c.modules.find(module);
  return it == c.modules.end() ? c.fallback : it->second;
}

void set_log_rank(int rank) { g_rank = rank; }

std::string log_spec_problem(std::string_view spec) {
  const std::string levels = "error, warn, info or debug";
  if (spec.empty()) return "an empty log spec (give e.g. net:info or debug)";
  while (true) {
    size_t comma = spec.find(',');
    std::string_view item = spec.substr(0, comma);
    size_t colon = item.find(':');
    std::string_view module = colon == std::string_view::npos ? "" : item.substr(0, colon);
    std::string_view level = colon == std::string_view::npos ? item : item.substr(colon + 1);
    if (colon != std::string_view::npos) {
      bool known = false;
      for (std::string_view m : kLogModules) known = known || m == module;
      if (!known)
        return "unknown log module '" + std::string(module) + "' in '" + std::string(item) + "' (modules: " +
               module_list() + ")";
    }
    if (!parse_level(level))
      return "unknown log level '" + std::string(level) + "' in '" + std::string(item) + "' (levels: " + levels + ")";
    if (comma == std::string_view::npos) return "";
    spec = spec.substr(comma + 1);
  }
}

void write_stderr(const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    ssize_t n = ::write(STDERR_FILENO, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // nowhere left to report to
    done += static_cast<size_t>(n);
  }
}

LogLine::LogLine(LogLevel level, std::string_view module) {
  out_ << "[cape " << module;
  if (g_rank >= 0) out_ << " rank " << g_rank;
  out_ << " pid " << getpid() << "] " << level_name(level) << ": ";
  if (level == LogLevel::debug) {
    timespec t{};
    ::clock_gettime(CLOCK_MONOTONIC, &t);
    std::string us = std::to_string(t.tv_nsec / 1000);
    out_ << "[t " << t.tv_sec << "." << std::string(6 - us.size(), '0') << us << "] ";
  }
}

LogLine::~LogLine() {
  out_ << '\n';
  std::string s = out_.str();
  // One write so that lines of several processes sharing stderr do not interleave.
  ssize_t ignored = ::write(STDERR_FILENO, s.data(), s.size());
  (void)ignored;
}

}  // namespace cape::util

#include "toolchain.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "emitter.h"  // parse_line_marker, escape
#include "cc_paths.h"  // generated: CAPE_BUILD_INCLUDES, CAPE_BUILD_LIBS, CAPE_INSTALL_LIBDIR, CAPE_VERSION

namespace fs = std::filesystem;

namespace cape::tr {
namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> r;
  std::stringstream ss(s);
  std::string x;
  while (std::getline(ss, x, sep))
    if (!x.empty()) r.push_back(x);
  return r;
}

bool starts(const std::string& a, std::string_view p) { return a.compare(0, p.size(), p) == 0; }

volatile sig_atomic_t g_signal = 0;
volatile pid_t g_child = 0;  // the running child's process group (its pid), 0 when none

void on_signal(int sig) {
  g_signal = sig;
  pid_t c = g_child;
  if (c > 0) kill(-c, sig);  // async-signal-safe: the child's group stops too
}

}  // namespace

bool find_resources(Resources& r, bool need_libs, std::string& why) {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    fs::path prefix = exe.parent_path().parent_path();
    fs::path inc = prefix / "include", lib = prefix / CAPE_INSTALL_LIBDIR;
    if (fs::exists(inc / "cape/cc.h") && fs::exists(lib / "libcape_cc.a") && fs::exists(lib / "libcape.a")) {
      r.includes = {inc.string(), (inc / "cape/omp").string()};
      r.libs = {(lib / "libcape_cc.a").string(), (lib / "libcape.a").string()};
      return true;
    }
  }
  r.includes = split(CAPE_BUILD_INCLUDES, ';');
  r.libs = split(CAPE_BUILD_LIBS, ';');
  if (need_libs)
    for (auto& l : r.libs)
      if (!fs::exists(l)) {
        why = "cannot find " + l + " (build the `cape_static` and `cape_cc` targets, or install cape)";
        return false;
      }
  return true;
}

std::vector<std::string> c_compiler() {
  const char* cc = std::getenv("CC");
  auto r = split(cc && *cc ? cc : "gcc", ' ');
  if (r.empty()) r.push_back("gcc");
  return r;
}

std::string version_text(const std::string& tool) {
  return tool + " (cape " CAPE_VERSION "): the OpenMP translator of cape, compiling with:\n";
}

void install_interrupt_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGHUP, &sa, nullptr);
}

int interrupted() { return g_signal; }

void die_of_signal(int sig) {
  signal(sig, SIG_DFL);
  raise(sig);
  _exit(128 + sig);
}

int run_command(const std::vector<std::string>& argv, bool verbose, bool show_only) {
  if (verbose || show_only) {
    std::string line;
    for (auto& a : argv) {
      // Quoted when the shell would split or expand it, so the line can be pasted.
      bool plain = !a.empty() && a.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                     "0123456789_-+=/.,:@%") == std::string::npos;
      line += ' ';
      if (plain) {
        line += a;
      } else {
        line += '\'';
        for (char c : a) line += c == '\'' ? std::string("'\\''") : std::string(1, c);
        line += '\'';
      }
    }
    if (show_only) {
      std::cout << line.substr(1) << '\n';
      return 0;
    }
    std::cerr << "cape-cc:" << line << '\n';
  }
  if (g_signal) return 128 + g_signal;
  std::cout.flush();  // what was printed before comes before the child's output
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // Signals wait until the child is known, so the handler can always pass them on.
  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGTERM);
  sigaddset(&block, SIGHUP);
  sigprocmask(SIG_BLOCK, &block, &old);
  pid_t pid = fork();
  if (pid < 0) {
    sigprocmask(SIG_SETMASK, &old, nullptr);
    std::cerr << "cape-cc: fork: " << std::strerror(errno) << '\n';
    return 1;
  }
  if (pid == 0) {
    setpgid(0, 0);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    sigprocmask(SIG_SETMASK, &old, nullptr);
    execvp(args[0], args.data());
    std::cerr << "cape-cc: cannot run " << args[0] << ": " << std::strerror(errno) << '\n';
    _exit(127);
  }
  setpgid(pid, pid);
  g_child = pid;
  sigprocmask(SIG_SETMASK, &old, nullptr);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      std::cerr << "cape-cc: waitpid: " << std::strerror(errno) << '\n';
      g_child = 0;
      return 1;
    }
  }
  g_child = 0;
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

std::vector<std::string> preprocess_command(const Resources& res, const std::vector<std::string>& pp_flags,
                                            const std::string& src, const std::string& out) {
  std::vector<std::string> cmd = c_compiler();
  cmd.push_back("-E");
  // cape's omp.h before gcc's own; as system headers, their declarations (omp_init_lock...)
  // are not taken for the user's.
  for (auto& i : res.includes) {
    cmd.push_back("-isystem");
    cmd.push_back(i);
  }
  cmd.push_back("-fopenmp");
  cmd.insert(cmd.end(), pp_flags.begin(), pp_flags.end());
  cmd.push_back(src);
  cmd.push_back("-o");
  cmd.push_back(out);
  return cmd;
}

bool preprocessor_option(const std::string& a, bool& takes_value) {
  static const char* with_value[] = {"-D", "-U", "-I", "-include", "-imacros", "-isystem", "-iquote",
                                     "-idirafter", "-isysroot", "-iprefix", "-iwithprefix",
                                     "-iwithprefixbefore", "-Xpreprocessor", "-x"};
  takes_value = false;
  for (auto* w : with_value)
    if (a == w) return takes_value = true;
  if (a.size() < 2 || a[0] != '-') return false;
  if (starts(a, "-Wl,") || starts(a, "-Wa,")) return false;
  if (starts(a, "-fopenmp")) return false;  // added by the command itself
  static const char* prefixes[] = {"-D", "-U", "-I", "-std=", "-ansi", "-O", "-m", "-f", "-W", "-pthread",
                                   "-trigraphs", "-traditional", "-undef", "-nostdinc", "-pedantic",
                                   "-w", "--sysroot=", "-isystem", "-iquote", "-idirafter", "-imacros",
                                   "-include", "-iwithprefix", "-x"};
  for (auto* p : prefixes)
    if (starts(a, p)) return true;
  return false;
}

bool preprocessing_only_option(const std::string& a) {
  static const char* prefixes[] = {"-D", "-U", "-I", "-include", "-imacros", "-isystem", "-iquote", "-idirafter",
                                   "-iprefix", "-iwithprefix", "-nostdinc", "-undef", "-Wp,", "-Xpreprocessor",
                                   "-trigraphs", "-traditional-cpp", "-isysroot"};
  for (auto* p : prefixes)
    if (starts(a, p)) return true;
  return false;
}

void markers_to_line_directives(std::string& text) {
  std::string out;
  out.reserve(text.size());
  bool changed = false;
  for (size_t pos = 0; pos < text.size();) {
    size_t eol = text.find('\n', pos);
    size_t end = eol == std::string::npos ? text.size() : eol;
    std::string_view l(text.data() + pos, end - pos);
    long n;
    std::string file;
    bool named, system;
    if (!l.empty() && l[0] == '#' && l.size() > 1 && l[1] == ' ' && parse_line_marker(l, n, file, named, system)) {
      changed = true;
      // `#line 0` is out of range: the marker only names the file before the next one.
      if (n > 0) out += "#line " + std::to_string(n) + (named ? " \"" + escape(file) + "\"" : "");
    } else {
      out += l;
    }
    if (eol == std::string::npos) break;
    out += '\n';
    pos = eol + 1;
  }
  if (changed) text = std::move(out);
}

bool pedantic(const std::vector<std::string>& flags) {
  for (auto& f : flags)
    if (f == "-pedantic" || f == "-Wpedantic" || f == "-pedantic-errors" || f == "-Werror=pedantic") return true;
  return false;
}

bool read_file(const std::string& path, std::string& out) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return false;
  std::stringstream ss;
  ss << f.rdbuf();
  out = ss.str();
  return !f.bad();
}

}  // namespace cape::tr

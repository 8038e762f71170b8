#include "job_util.h"

#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

namespace cape::net::test {

using Clock = std::chrono::steady_clock;

TempDir::TempDir() {
  char tmpl[] = "/tmp/cape-net-test.XXXXXX";
  char* p = ::mkdtemp(tmpl);
  EXPECT_NE(p, nullptr);
  path = p ? p : "/tmp";
}
TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
}

Proc Proc::start(const std::vector<std::string>& argv, const std::string& dir,
                 const std::vector<std::string>& extra_env) {
  Proc p;
  static int counter = 0;
  ++counter;
  p.out_path_ = dir + "/proc" + std::to_string(counter) + ".out";
  p.err_path_ = dir + "/proc" + std::to_string(counter) + ".err";
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  p.pid_ = ::fork();
  if (p.pid_ == 0) {
    ::setpgid(0, 0);  // its own group, so a hung job can be killed as a whole
    int o = ::open(p.out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int e = ::open(p.err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int n = ::open("/dev/null", O_RDONLY);
    if (o < 0 || e < 0 || n < 0 || ::dup2(o, 1) < 0 || ::dup2(e, 2) < 0 || ::dup2(n, 0) < 0) _exit(126);
    if (::chdir(dir.c_str()) != 0) _exit(126);
    for (const auto& kv : extra_env) ::putenv(const_cast<char*>(kv.c_str()));
    ::execvp(args[0], args.data());
    _exit(127);
  }
  EXPECT_GT(p.pid_, 0);
  return p;
}

int Proc::wait(std::chrono::milliseconds bound) {
  auto deadline = Clock::now() + bound;
  // Bounded polling of one child's status (waitpid has no timeout).
  for (;;) {
    int st = 0;
    pid_t r = ::waitpid(pid_, &st, WNOHANG);
    if (r == pid_) return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
    if (r < 0) return -1;
    if (Clock::now() > deadline) {
      ADD_FAILURE() << "process " << pid_ << " still running after the bound; killing its group";
      ::kill(-pid_, SIGKILL);
      ::waitpid(pid_, &st, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
std::string Proc::out() const { return read_file(out_path_); }
std::string Proc::err() const { return read_file(err_path_); }

std::string unique_token() {
  std::random_device rd;
  return "capetest-" + std::to_string(::getpid()) + "-" + std::to_string(rd());
}

bool wait_for_text(const std::string& path, const std::string& text, std::chrono::milliseconds bound) {
  auto deadline = Clock::now() + bound;
  while (Clock::now() < deadline) {
    if (read_file(path).find(text) != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

std::vector<std::string> cmdline(pid_t pid) {
  std::string s = read_file("/proc/" + std::to_string(pid) + "/cmdline");
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == '\0') {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  return out;
}

pid_t parent_of(pid_t pid) {
  std::string s = read_file("/proc/" + std::to_string(pid) + "/stat");
  size_t close = s.rfind(')');
  if (close == std::string::npos) return -1;
  std::istringstream in(s.substr(close + 2));
  char state;
  pid_t ppid = -1;
  in >> state >> ppid;
  return ppid;
}

std::vector<pid_t> processes_with(const std::string& token) {
  std::vector<pid_t> out;
  DIR* d = ::opendir("/proc");
  if (!d) return out;
  while (dirent* e = ::readdir(d)) {
    char* end;
    long pid = std::strtol(e->d_name, &end, 10);
    if (*end || pid <= 0 || pid == ::getpid()) continue;
    // Zombies have an empty cmdline and are gone for our purpose once reaped by their parent.
    for (const auto& a : cmdline(static_cast<pid_t>(pid)))
      if (a == token) {
        out.push_back(static_cast<pid_t>(pid));
        break;
      }
  }
  ::closedir(d);
  return out;
}

bool wait_until_gone(const std::string& token, std::chrono::milliseconds bound) {
  auto deadline = Clock::now() + bound;
  while (Clock::now() < deadline) {
    if (processes_with(token).empty()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return processes_with(token).empty();
}

std::vector<pid_t> processes_using(const std::string& dir) {
  std::vector<pid_t> out;
  auto inside = [&](const std::string& link) {
    char buf[4096];
    ssize_t n = ::readlink(link.c_str(), buf, sizeof buf - 1);
    if (n < 0) return false;
    std::string target(buf, static_cast<size_t>(n));
    return target == dir || target.rfind(dir + "/", 0) == 0;
  };
  DIR* d = ::opendir("/proc");
  if (!d) return out;
  while (dirent* e = ::readdir(d)) {
    char* end;
    long pid = std::strtol(e->d_name, &end, 10);
    if (*end || pid <= 0 || pid == ::getpid()) continue;
    std::string base = std::string("/proc/") + e->d_name;
    bool hit = inside(base + "/cwd");
    if (!hit)
      if (DIR* fds = ::opendir((base + "/fd").c_str())) {
        while (dirent* f = ::readdir(fds))
          if (f->d_name[0] != '.' && inside(base + "/fd/" + f->d_name)) {
            hit = true;
            break;
          }
        ::closedir(fds);
      }
    if (hit) out.push_back(static_cast<pid_t>(pid));
  }
  ::closedir(d);
  return out;
}

int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  int port = -1;
  if (fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  if (fd >= 0) ::close(fd);
  return port;
}

}  // namespace cape::net::test

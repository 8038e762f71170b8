#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "net/launcher.h"
#include "util/error.h"
#include "util/wait_status.h"

namespace cape::net {

namespace {

// The secret, one line, in a pipe whose write end is closed again: the node reads it.
util::ScopedFd secret_pipe(const Secret& secret) {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) throw UserError(errno_message("pipe2"));
  util::ScopedFd rd(p[0]), wr(p[1]);
  std::string line = secret.text() + "\n";
  if (::write(wr.get(), line.data(), line.size()) != static_cast<ssize_t>(line.size()))
    throw UserError(errno_message("write secret pipe"));
  return rd;
}

}  // namespace

LocalLauncher::LocalLauncher(std::string cape_exe, const Secret& secret)
    : exe_(std::move(cape_exe)), secret_(secret), me_(::getpid()) {}

LocalLauncher::~LocalLauncher() { stop_all(); }

void LocalLauncher::start_master(int listen_fd, int status_fd, const NodeCommand& command, int unix_listen_fd) {
  NodeLink link;
  link.listen_fd = listen_fd;
  link.status_fd = status_fd;
  link.unix_listen_fd = unix_listen_fd;
  std::vector<int> keep = {listen_fd, status_fd};
  if (unix_listen_fd >= 0) keep.push_back(unix_listen_fd);
  spawn(0, link, command, keep);
}

void LocalLauncher::start(int rank, const std::string&, uint16_t port, const NodeCommand& command) {
  NodeLink link;
  link.master = "127.0.0.1:" + std::to_string(port);
  spawn(rank, link, command, {});
}

void LocalLauncher::spawn(int rank, NodeLink link, const NodeCommand& command, std::vector<int> keep) {
  util::ScopedFd sfd = secret_pipe(secret_);
  link.secret_fd = sfd.get();
  keep.push_back(sfd.get());
  std::vector<std::string> args = command(rank, link);
  args.insert(args.begin(), exe_);
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) throw UserError(errno_message("fork"));
  if (pid == 0) {
    // The node dies with the launcher (and the program with the node: PTRACE_O_EXITKILL).
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != me_) _exit(125);
    for (int fd : keep) {
      int fl = ::fcntl(fd, F_GETFD);
      if (fl < 0 || ::fcntl(fd, F_SETFD, fl & ~FD_CLOEXEC) < 0) _exit(125);
    }
    ::execv(exe_.c_str(), argv.data());
    _exit(127);
  }
  Child& c = children_.emplace_back();
  c.rank = rank;
  c.pid = pid;
  c.pidfd.reset(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
  if (!c.pidfd.valid()) throw UserError(errno_message("pidfd_open"));
}

pid_t LocalLauncher::pid(int rank) const {
  for (const Child& c : children_)
    if (c.rank == rank) return c.pid;
  return -1;
}

void LocalLauncher::kill(int rank) {
  for (Child& c : children_)
    if (c.rank == rank && !c.done) {
      ::kill(c.pid, SIGKILL);
      ::waitpid(c.pid, nullptr, 0);
      c.done = true;
    }
}

std::vector<NodeEnd> LocalLauncher::ended() {
  std::vector<NodeEnd> out;
  for (Child& c : children_) {
    if (c.done) continue;
    int st = 0;
    pid_t got;
    do got = ::waitpid(c.pid, &st, WNOHANG);
    while (got < 0 && errno == EINTR);
    if (got != c.pid) continue;
    c.done = true;
    WaitStatus ws{st};
    out.push_back({c.rank, ws.ok(), "node " + std::to_string(c.rank) + " (pid " + std::to_string(c.pid) + ") " +
                   ws.describe(), ws.shell_code(), st, true});
  }
  return out;
}

bool LocalLauncher::all_ended() const {
  for (const Child& c : children_)
    if (!c.done) return false;
  return true;
}

void LocalLauncher::poll_fds(std::vector<pollfd>& out) const {
  for (const Child& c : children_)
    if (!c.done) out.push_back({c.pidfd.get(), POLLIN, 0});
}

void LocalLauncher::stop_all() {
  for (Child& c : children_)
    if (!c.done) ::kill(c.pid, SIGKILL);
  for (Child& c : children_)
    if (!c.done) {
      ::waitpid(c.pid, nullptr, 0);
      c.done = true;
    }
}

}  // namespace cape::net

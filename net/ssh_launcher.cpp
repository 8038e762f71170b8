#include <limits.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "net/launcher.h"
#include "util/error.h"

extern char** environ;

namespace cape::net {

namespace {
std::string cwd() {
  char buf[PATH_MAX];
  if (!::getcwd(buf, sizeof buf)) throw UserError(errno_message("getcwd"));
  return buf;
}
}  // namespace

SshLauncher::SshLauncher(SshOptions options, const Secret& secret, std::string remote_cape)
    : options_(std::move(options)), secret_(secret), remote_cape_(std::move(remote_cape)) {}

void SshLauncher::start(int rank, const std::string& host, uint16_t port, const NodeCommand& command) {
  auto p = std::make_unique<SshProcess>(host, options_);
  // The node reaches us at the address its ssh connection came from.
  std::string addr = p->local_address();
  if (addr.find(':') != std::string::npos) addr = "[" + addr + "]";
  NodeLink link;
  link.master = addr + ":" + std::to_string(port);
  link.secret_fd = 0;
  link.watch_stdin = true;
  link.env_stdin = true;
  // The same directory and environment as the master (the determinism contract: the
  // environment sits on the program's stack, so it must match byte for byte). The
  // environment goes down the channel after the secret, not on the command line, where the
  // remote host's process list would show it (issue 16, item 6); only PATH is on it, so
  // that the remote cape is found as it was.
  // (Appended word by word, not `" " + quoted`: gcc 12 -O3 warns -Wrestrict on that here.)
  std::string cmd = "cd ";
  auto word = [&cmd](const std::string& w) {
    cmd += ' ';
    cmd += shell_quote(w);
  };
  cmd += shell_quote(cwd());
  cmd += " && exec env -i";
  if (const char* path = ::getenv("PATH")) word(std::string("PATH=") + path);
  word(remote_cape_);
  for (const auto& w : command(rank, link)) word(w);
  std::string input = secret_.text() + "\n";
  size_t n = 0;
  for (char** e = environ; *e; ++e) ++n;
  input += "env " + std::to_string(n) + "\n";
  for (char** e = environ; *e; ++e) {
    input += std::to_string(std::strlen(*e)) + "\n";
    input += *e;
  }
  p->start(cmd, input, [this, rank](const std::string& h, const char* d, size_t n) {
    // What a remote node prints before its log is open (a missing cape, a bad option).
    std::lock_guard lk(out_mu_);
    std::string line = "[ssh " + h + " rank " + std::to_string(rank) + "] " + std::string(d, n);
    if (::write(STDERR_FILENO, line.data(), line.size()) < 0) return;
  });
  remotes_.push_back({rank, std::move(p)});
}

std::vector<NodeEnd> SshLauncher::ended() {
  std::vector<NodeEnd> out;
  for (Remote& r : remotes_) {
    if (r.reported || !r.process->finished()) continue;
    r.reported = true;
    int st = r.process->exit_status();
    out.push_back({r.rank, st == 0, "node " + std::to_string(r.rank) + " (over ssh) exited with status " +
                   std::to_string(st), st > 0 ? st : 1, 0, false});
  }
  return out;
}

bool SshLauncher::all_ended() const {
  for (const Remote& r : remotes_)
    if (!r.process->finished()) return false;
  return true;
}

}  // namespace cape::net

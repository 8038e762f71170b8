// `cape run`: starts the N nodes of a job and waits for the master.
//
//   cape run -n N [-H h1,h2:2 | --hostfile F] [--launcher local|ssh] -- ./prog args
//
// Rank 0, the master, runs here (its program's output passes through); ranks 1..N-1 run on
// this machine (local) or on the hosts over SSH. The launcher makes the per-job secret and
// hands it over a pipe (local) or the SSH channel's stdin (ssh), binds the master's
// listening socket itself (so the port is known before anything starts), and exits with
// the master's status. Nodes die with the launcher: PR_SET_PDEATHSIG locally, the closed
// channel (the node watches its stdin) remotely.
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <climits>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>

#include "cli/command.h"
#include "net/auth.h"
#include "net/hosts.h"
#include "net/node.h"
#include "net/socket.h"
#include "net/ssh.h"
#include "util/error.h"
#include "util/log.h"
#include "util/scoped_fd.h"
#include "util/wait_status.h"

namespace {

using namespace cape;
using Clock = std::chrono::steady_clock;

struct RunArgs {
  int n = 0;
  std::string hosts, hostfile, launcher;
  bool oversubscribe = false, tag_output = false, accept_new_host_keys = false, check_races = false;
  std::string output_dir = "cape-logs", tracker = "uffd", keep, log;
  double timeout = 5, heartbeat = 0.5, connect_timeout = 60;
  std::string remote_cape = "cape", identity, known_hosts, ssh_user;
  int ssh_port = 0;
  std::vector<std::string> argv;
};

std::string self_exe() {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n < 0) throw UserError(errno_message("readlink /proc/self/exe"));
  return std::string(buf, static_cast<size_t>(n));
}

std::string cwd() {
  char buf[PATH_MAX];
  if (!::getcwd(buf, sizeof buf)) throw UserError(errno_message("getcwd"));
  return buf;
}

std::string fmt(double d) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", d);
  return b;
}

// A local `cape node` child; `keep` are the fds it inherits (numbers unchanged).
struct Child {
  int rank = -1;
  pid_t pid = -1;
  util::ScopedFd pidfd;
  bool done = false;
  int status = 0;
};

pid_t spawn(const std::string& exe, const std::vector<std::string>& args, const std::vector<int>& keep,
            pid_t launcher) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) throw UserError(errno_message("fork"));
  if (pid == 0) {
    // The node dies with the launcher (and the program with the node: PTRACE_O_EXITKILL).
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != launcher) _exit(125);
    for (int fd : keep) {
      int fl = ::fcntl(fd, F_GETFD);
      if (fl < 0 || ::fcntl(fd, F_SETFD, fl & ~FD_CLOEXEC) < 0) _exit(125);
    }
    ::execv(exe.c_str(), argv.data());
    _exit(127);
  }
  return pid;
}

int run_job(const RunArgs& a) {
  if (a.n < 1) throw UserError("-n wants at least 1 node");
  // A closed stderr must not kill the launcher before it has stopped its nodes. (A handler,
  // so the nodes it execs start with the default; they install their own.)
  net::catch_sigpipe();
  if (!a.hosts.empty() && !a.hostfile.empty()) throw UserError("give -H or --hostfile, not both");
  std::vector<net::HostSlots> hosts;
  if (!a.hostfile.empty()) hosts = net::parse_hostfile(a.hostfile);
  if (!a.hosts.empty()) hosts = net::parse_host_list(a.hosts);
  std::string launcher = a.launcher.empty() ? (hosts.empty() ? "local" : "ssh") : a.launcher;
  std::vector<std::string> placement;
  if (hosts.empty()) {
    // No hosts: every node on this machine, as many as asked (the master mostly waits).
    placement.assign(static_cast<size_t>(a.n - 1), "localhost");
  } else {
    placement = net::place_slaves(hosts, a.n, a.oversubscribe);
  }
  if (launcher == "local")
    for (const auto& h : placement)
      if (!net::is_local_host(h))
        throw UserError("host " + h + " is not this machine: use --launcher ssh");

  net::Secret secret = net::Secret::generate();
  util::ScopedFd listen = net::listen_tcp(launcher == "ssh" ? "" : "127.0.0.1", 0);
  uint16_t port = net::local_port(listen.get());
  const std::string exe = self_exe();
  const pid_t me = ::getpid();

  std::vector<std::string> common = {"--size", std::to_string(a.n), "--tracker", a.tracker,
                                     "--output-dir", a.output_dir, "--timeout", fmt(a.timeout),
                                     "--heartbeat", fmt(a.heartbeat), "--connect-timeout",
                                     fmt(a.connect_timeout)};
  if (!a.keep.empty()) common.insert(common.end(), {"--keep-checkpoints", a.keep});
  if (!a.log.empty()) common.insert(common.end(), {"--log", a.log});
  if (a.tag_output) common.push_back("--tag-output");
  if (a.check_races) common.push_back("--check-races");
  auto with_program = [&](std::vector<std::string> v) {
    v.push_back("--");
    v.insert(v.end(), a.argv.begin(), a.argv.end());
    return v;
  };

  // Secrets go down pipes, one per local node, written before the child reads them.
  auto secret_pipe = [&]() {
    int p[2];
    if (::pipe2(p, O_CLOEXEC) != 0) throw UserError(errno_message("pipe2"));
    std::string line = secret.text() + "\n";
    if (::write(p[1], line.data(), line.size()) != static_cast<ssize_t>(line.size()))
      throw UserError(errno_message("write secret pipe"));
    ::close(p[1]);
    return util::ScopedFd(p[0]);
  };

  std::vector<Child> children;
  auto add_child = [&](int rank, pid_t pid) {
    Child c;
    c.rank = rank;
    c.pid = pid;
    c.pidfd.reset(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
    if (!c.pidfd.valid()) throw UserError(errno_message("pidfd_open"));
    children.push_back(std::move(c));
  };

  // The master reports its region on a pipe, for the message if the master node dies.
  int sp[2];
  if (::pipe2(sp, O_CLOEXEC) != 0) throw UserError(errno_message("pipe2"));
  util::ScopedFd status_rd(sp[0]), status_wr(sp[1]);
  {
    util::ScopedFd sfd = secret_pipe();
    std::vector<std::string> args = {exe, "node", "--rank", "0", "--secret-fd",
                                     std::to_string(sfd.get()), "--listen-fd",
                                     std::to_string(listen.get()), "--status-fd",
                                     std::to_string(status_wr.get())};
    args.insert(args.end(), common.begin(), common.end());
    add_child(0, spawn(exe, with_program(args), {sfd.get(), listen.get(), status_wr.get()}, me));
  }
  listen.reset();
  status_wr.reset();
  std::mutex region_mu;
  std::string master_region;
  std::thread status_reader([&] {
    std::string buf;
    char c[4096];
    for (;;) {
      ssize_t r = ::read(status_rd.get(), c, sizeof c);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) break;  // the master node ended
      buf.append(c, static_cast<size_t>(r));
      size_t nl;
      while ((nl = buf.find('\n')) != std::string::npos) {
        std::string line = buf.substr(0, nl);
        buf.erase(0, nl + 1);
        if (line.rfind("region ", 0) == 0) {
          std::lock_guard lk(region_mu);
          master_region = line.substr(7);
        }
      }
    }
  });

  std::vector<std::unique_ptr<net::SshProcess>> remotes;
  std::mutex out_mu;
  try {
    for (int r = 1; r < a.n; ++r) {
      const std::string& host = placement[static_cast<size_t>(r - 1)];
      std::vector<std::string> args = {"node", "--rank", std::to_string(r)};
      if (launcher == "local") {
        util::ScopedFd sfd = secret_pipe();
        args.insert(args.begin(), exe);
        args.insert(args.end(), {"--master", "127.0.0.1:" + std::to_string(port), "--secret-fd",
                                 std::to_string(sfd.get())});
        args.insert(args.end(), common.begin(), common.end());
        add_child(r, spawn(exe, with_program(args), {sfd.get()}, me));
        continue;
      }
      net::SshOptions so;
      so.user = a.ssh_user;
      so.port = a.ssh_port;
      so.identity = a.identity;
      so.known_hosts = a.known_hosts;
      so.accept_new_host_keys = a.accept_new_host_keys;
      auto p = std::make_unique<net::SshProcess>(host, so);
      // The slave reaches us at the address its ssh connection came from.
      std::string addr = p->local_address();
      if (addr.find(':') != std::string::npos) addr = "[" + addr + "]";
      args.insert(args.end(), {"--master", addr + ":" + std::to_string(port), "--secret-fd", "0",
                               "--watch-stdin"});
      args.insert(args.end(), common.begin(), common.end());
      // The same directory and environment as the master (the determinism contract: the
      // environment sits on the program's stack, so it must match byte for byte).
      std::string cmd = "cd " + net::shell_quote(cwd()) + " && exec env -i";
      for (char** e = environ; *e; ++e) cmd += " " + net::shell_quote(*e);
      cmd += " " + net::shell_quote(a.remote_cape);
      for (const auto& w : with_program(args)) cmd += " " + net::shell_quote(w);
      p->start(cmd, secret.text(), [&out_mu, r](const std::string& h, const char* d, size_t n) {
        // What a remote node prints before its log is open (a missing cape, a bad option).
        std::lock_guard lk(out_mu);
        std::string line = "[ssh " + h + " rank " + std::to_string(r) + "] " + std::string(d, n);
        if (::write(STDERR_FILENO, line.data(), line.size()) < 0) return;
      });
      remotes.push_back(std::move(p));
    }
  } catch (...) {
    for (auto& c : children) ::kill(c.pid, SIGKILL);
    for (auto& c : children) ::waitpid(c.pid, nullptr, 0);
    status_reader.join();
    throw;
  }

  // Wait for the master. A slave that ends badly first gives the master `timeout` to notice
  // (it then prints the job's one message); after that the launcher ends the job itself.
  const auto grace = std::chrono::milliseconds(static_cast<long>(a.timeout * 1000) + 2000);
  std::optional<Clock::time_point> slave_failed_at;
  std::string slave_failure;
  int slave_failure_code = 1;
  Child& master = children[0];
  auto reap = [&](Child& c) {
    int st = 0;
    pid_t got;
    do got = ::waitpid(c.pid, &st, WNOHANG);
    while (got < 0 && errno == EINTR);
    if (got == c.pid) {
      c.done = true;
      c.status = st;
    }
  };
  // Bounded: each round ends by an event or the 100 ms tick; the master's end or the grace
  // deadline ends the loop.
  while (!master.done) {
    std::vector<pollfd> pf;
    for (auto& c : children)
      if (!c.done) pf.push_back({c.pidfd.get(), POLLIN, 0});
    int pr = ::poll(pf.data(), pf.size(), 100);
    if (pr < 0 && errno != EINTR) throw UserError(errno_message("poll"));
    for (auto& c : children)
      if (!c.done) {
        reap(c);
        if (c.done && c.rank != 0 && !WaitStatus{c.status}.ok() && !slave_failed_at) {
          slave_failed_at = Clock::now();
          slave_failure = "node " + std::to_string(c.rank) + " (pid " + std::to_string(c.pid) +
                          ") " + WaitStatus{c.status}.describe() + "; see " + a.output_dir +
                          "/node." + std::to_string(c.rank) + ".log";
          slave_failure_code = WaitStatus{c.status}.shell_code();
        }
      }
    for (size_t i = 0; i < remotes.size(); ++i)
      if (remotes[i]->finished() && remotes[i]->exit_status() != 0 && !slave_failed_at) {
        slave_failed_at = Clock::now();
        slave_failure = "node " + std::to_string(i + 1) + " (over ssh) exited with status " +
                        std::to_string(remotes[i]->exit_status());
        slave_failure_code = remotes[i]->exit_status() > 0 ? remotes[i]->exit_status() : 1;
      }
    if (!master.done && slave_failed_at && Clock::now() - *slave_failed_at > grace) {
      std::fprintf(stderr,
                   "cape: %s; the master did not end the job, stopping it (job exit status %d)\n",
                   slave_failure.c_str(), slave_failure_code);
      ::kill(master.pid, SIGKILL);
      ::waitpid(master.pid, &master.status, 0);
      master.done = true;
      master.status = (slave_failure_code & 0xff) << 8;  // exits with the slave node's status
    }
  }
  int st = master.status;
  // The master node itself was killed: it could say nothing, so the launcher does (even if
  // a slave was seen to end first: slaves end when they lose the master, sometimes before
  // the master's death can be reaped).
  if (WIFSIGNALED(st)) {
    // Its last region line may still be in the pipe: read to the end (EOF now: the dead
    // master held the only write end).
    status_reader.join();
    std::lock_guard lk(region_mu);
    std::fprintf(stderr, "cape: node 0 (the master node, pid %d) was %s %s (job exit status %d)\n",
                 master.pid, WaitStatus{st}.describe().c_str(),
                 master_region.empty() ? "outside any parallel region"
                                       : ("in " + master_region).c_str(),
                 WaitStatus{st}.shell_code());
  }
  // The slaves end on their own (exit reports, the master's EOF); then they are stopped.
  auto deadline = Clock::now() + grace;
  for (;;) {
    bool all = true;
    for (auto& c : children) {
      if (!c.done) reap(c);
      all = all && c.done;
    }
    for (auto& r : remotes) all = all && r->finished();
    if (all || Clock::now() > deadline) break;
    std::vector<pollfd> pf;
    for (auto& c : children)
      if (!c.done) pf.push_back({c.pidfd.get(), POLLIN, 0});
    if (::poll(pf.data(), pf.size(), 100) < 0 && errno != EINTR) break;
  }
  for (auto& c : children)
    if (!c.done) {
      ::kill(c.pid, SIGKILL);
      ::waitpid(c.pid, nullptr, 0);
    }
  remotes.clear();  // closes the channels: remote nodes stop
  if (status_reader.joinable()) status_reader.join();
  return WaitStatus{st}.shell_code();
}

cape::cli::Registrar reg("run", [](CLI::App& app, cape::cli::Context& ctx) {
  auto a = std::make_shared<RunArgs>();
  auto* sub = app.add_subcommand("run", "Run a CAPE program on N nodes (local, or over SSH)");
  sub->add_option("-n,--np", a->n, "Number of nodes (rank 0 is the master)")->required();
  sub->add_option("-H,--host", a->hosts, "Hosts for ranks 1..N-1: host[:slots],...");
  sub->add_option("--hostfile", a->hostfile, "OpenMPI hostfile: 'host slots=K' per line");
  sub->add_option("--launcher", a->launcher, "local (default without hosts) or ssh")
      ->check(CLI::IsMember({"local", "ssh"}));
  sub->add_flag("--oversubscribe", a->oversubscribe,
                "Allow more slave ranks than host slots (wrap around the hosts)");
  sub->add_flag("--tag-output", a->tag_output, "Prefix output lines with [rank]<stream>:");
  sub->add_option("--output-dir", a->output_dir,
                  "Slaves' output and logs: DIR/node.RANK.log on their host (default cape-logs)");
  sub->add_option("--tracker", a->tracker, "uffd (default), mprotect or full")
      ->check(CLI::IsMember({"mprotect", "uffd", "full"}));
  sub->add_option("--keep-checkpoints", a->keep, "Every node writes its checkpoints into DIR");
  sub->add_flag("--check-races", a->check_races,
                "Report two nodes writing different values to one shared word, with the variable (docs/tickpt.md)");
  sub->add_option("--log", a->log, "Log levels, as CAPE_LOG (e.g. net:info)");
  sub->add_option("--timeout", a->timeout, "Seconds of silence that make a node dead (default 5)");
  sub->add_option("--heartbeat", a->heartbeat, "Seconds between heartbeats (default 0.5)");
  sub->add_option("--connect-timeout", a->connect_timeout, "Seconds for all nodes to join (60)");
  sub->add_option("--remote-cape", a->remote_cape, "The cape command on the hosts (default: cape on PATH)");
  sub->add_option("--identity", a->identity, "SSH private key (default: agent, ~/.ssh/id_*)");
  sub->add_option("--known-hosts", a->known_hosts, "known_hosts file (default ~/.ssh/known_hosts)");
  sub->add_flag("--accept-new-host-keys", a->accept_new_host_keys,
                "Record unknown host keys in known_hosts (changed keys are always refused)");
  sub->add_option("--ssh-user", a->ssh_user, "SSH user (default: ~/.ssh/config or yours)");
  sub->add_option("--ssh-port", a->ssh_port, "SSH port (default: ~/.ssh/config or 22)");
  sub->add_option("program", a->argv, "PROG ARGS... (after --)")->required();
  sub->callback([a, &ctx] { ctx.exit_status = run_job(*a); });
});

}  // namespace

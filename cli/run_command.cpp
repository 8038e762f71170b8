// `cape run`: starts the N nodes of a job and waits for the master.
//
//   cape run -n N [-H h1,h2:2 | --hostfile F] [--launcher local|ssh] [--] ./prog args
//
// As mpirun: the options end at the program's name; everything after it is the program's
// (cli/main.cpp also reads mpirun's `-np N`).
// Rank 0, the master, runs here (its program's output passes through); ranks 1..N-1 run on
// this machine (local) or on the hosts over SSH (net/launcher.h). `cape run` makes the
// per-job secret (the launchers hand it over a pipe or the SSH channel's stdin), binds the
// master's listening socket itself (so the port is known before anything starts), turns the
// options into `cape node` command lines, and exits with the master's status. Nodes die
// with it: PR_SET_PDEATHSIG locally, the closed channel (the node watches its stdin)
// remotely.
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "cli/command.h"
#include "cli/program_check.h"
#include "cli/run_trace.h"
#include "net/auth.h"
#include "net/hosts.h"
#include "net/launcher.h"
#include "net/socket.h"
#include "util/error.h"
#include "util/files.h"
#include "util/scoped_fd.h"
#include "util/wait_status.h"

namespace {

using namespace cape;
using Clock = std::chrono::steady_clock;

struct RunArgs {
  int n = 0;
  std::string hosts, hostfile, launcher;
  bool oversubscribe = false, tag_output = false, accept_new_host_keys = false, check_races = false;
  bool encrypt = false, any_program = false;
  std::string output_dir = "cape-logs", tracker = "uffd", keep, log, trace;
  std::string sync;  // --sync: eager (every change to every node) or lazy; "": cli::choose_sync's default
  double checkpoint_every = 0;  // the master's program, as `cape monitor --checkpoint-every`
  std::string checkpoint_file = "cape.ckpt";
  double timeout = 5, heartbeat = 0.5, connect_timeout = 60;
  std::string remote_cape = "cape", identity, known_hosts, ssh_user;
  int ssh_port = 0;
  int threads_per_node = 0;  // the two-level model (cape-cc --model=mt); 0 = each node's CPUs
  std::vector<std::string> argv;
};

std::string self_exe() {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n < 0) throw UserError(errno_message("readlink /proc/self/exe"));
  return std::string(buf, static_cast<size_t>(n));
}

std::string fmt(double d) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", d);
  return b;
}

int run_job(const RunArgs& a) {
  if (a.n < 1) throw UserError("-n wants at least 1 node");
  if (a.sync == "lazy" && a.tracker != "uffd" && a.tracker != "mprotect")  // said once, before any node starts
    throw UserError("--sync=lazy needs --tracker uffd (the default) or mprotect, not " + a.tracker +
                    ": the others copy or protect the whole tracked set, which would fetch every page at once; "
                    "run with --tracker uffd or --sync=eager");
  const std::string sync = cli::choose_sync(a.sync, a.tracker);
  // Said once, before any node starts (issue 16, item 14; issue 17): a program that cannot
  // run, with a shell's status; one without libcape, whose copies would not cooperate.
  std::string found = cli::find_program(a.argv.at(0));
  if (!a.any_program) cli::require_libcape(a.argv.at(0), found, a.n);
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

  // The slaves' log directory, when they run here: said once, before anything starts (a
  // slave node that cannot open its log exits before it joins, and the master would wait
  // --connect-timeout for it). An existing directory is used; anything else there is refused.
  if (launcher == "local" && a.n > 1 && !a.output_dir.empty()) util::ensure_directory(a.output_dir, 0755, "--output-dir");
  if (launcher == "local" && !a.keep.empty()) util::ensure_directory(a.keep, 0700, "--keep-checkpoints");

  net::Secret secret = net::Secret::generate();
  // The master always runs here; the slaves here too, or over SSH.
  net::LocalLauncher local(self_exe(), secret);
  std::unique_ptr<net::SshLauncher> ssh;
  if (launcher == "ssh") {
    net::SshOptions so;
    so.user = a.ssh_user;
    so.port = a.ssh_port;
    so.identity = a.identity;
    so.known_hosts = a.known_hosts;
    so.accept_new_host_keys = a.accept_new_host_keys;
    ssh = std::make_unique<net::SshLauncher>(so, secret, a.remote_cape);
  }
  // The two-level model's threads per node reach every node's program through the job's
  // environment (the same everywhere; translator/rt/cape_cc.c reads it).
  if (a.threads_per_node > 0) ::setenv("CAPE_THREADS_PER_NODE", std::to_string(a.threads_per_node).c_str(), 1);
  net::Launcher& slaves = ssh ? static_cast<net::Launcher&>(*ssh) : local;
  util::ScopedFd listen = net::listen_tcp(slaves.listen_host(), 0);
  uint16_t port = net::local_port(listen.get());
  // The local slaves' way in (net/socket.h): bound here, before any slave starts, so that none
  // finds only the TCP port and joins there. Not made: the master goes on over TCP alone.
  util::ScopedFd unix_listen;
  if (net::local_unix_wanted()) unix_listen = net::listen_local_unix(net::local_unix_name(secret, port));

  // `cape node`'s command line, the same for every node but for how it joins (NodeLink).
  // The job's id: nodes of other jobs are refused in the handshake (item 3).
  std::string job_id = "cape-run-" + net::Secret::generate().text().substr(0, 16);
  std::vector<std::string> common = {"--size", std::to_string(a.n), "--job", job_id, "--tracker", a.tracker,
                                     "--sync", sync,
                                     "--output-dir", a.output_dir, "--timeout", fmt(a.timeout),
                                     "--heartbeat", fmt(a.heartbeat), "--connect-timeout",
                                     fmt(a.connect_timeout)};
  if (!a.keep.empty()) common.insert(common.end(), {"--keep-checkpoints", a.keep});
  if (a.checkpoint_every > 0)
    common.insert(common.end(), {"--checkpoint-every", fmt(a.checkpoint_every), "--checkpoint-file", a.checkpoint_file});
  if (!a.log.empty()) common.insert(common.end(), {"--log", a.log});
  if (a.tag_output) common.push_back("--tag-output");
  if (a.check_races) common.push_back("--check-races");
  if (a.encrypt) common.push_back("--encrypt");
  if (a.any_program) common.push_back("--any-program");  // checked here already
  cli::RunTrace trace(a.trace, a.n);  // --trace: every node writes its part, merged at the end
  trace.add_node_options(common);
  net::NodeCommand command = [&](int rank, const net::NodeLink& link) {
    std::vector<std::string> v = {"node", "--rank", std::to_string(rank)};
    if (!link.master.empty()) v.insert(v.end(), {"--master", link.master});
    v.insert(v.end(), {"--secret-fd", std::to_string(link.secret_fd)});
    if (link.listen_fd >= 0) v.insert(v.end(), {"--listen-fd", std::to_string(link.listen_fd)});
    if (link.unix_listen_fd >= 0) v.insert(v.end(), {"--listen-unix-fd", std::to_string(link.unix_listen_fd)});
    if (link.status_fd >= 0) v.insert(v.end(), {"--status-fd", std::to_string(link.status_fd)});
    if (link.watch_stdin) v.push_back("--watch-stdin");
    if (link.env_stdin) v.push_back("--env-stdin");
    v.insert(v.end(), common.begin(), common.end());
    v.push_back("--");
    v.insert(v.end(), a.argv.begin(), a.argv.end());
    return v;
  };

  // The master reports its region on a pipe, for the message if the master node dies.
  // The master node writes where it is ("region ...\n") over the start of this memfd at
  // every exchange call; it is read only if the master node is killed (a pipe woke a thread
  // here at every call).
  util::ScopedFd status(::memfd_create("cape-status", MFD_CLOEXEC));
  if (!status.valid()) throw UserError(errno_message("memfd_create"));
  local.start_master(listen.get(), status.get(), command, unix_listen.get());
  listen.reset();
  unix_listen.reset();
  auto master_region = [&] {
    char c[4096];
    ssize_t r = ::pread(status.get(), c, sizeof c, 0);
    std::string line(c, r > 0 ? static_cast<size_t>(r) : 0);
    line = line.substr(0, line.find('\n'));  // a longer line written before may follow
    return line.rfind("region ", 0) == 0 ? line.substr(7) : std::string();
  };

  try {
    for (int r = 1; r < a.n; ++r) slaves.start(r, placement[static_cast<size_t>(r - 1)], port, command);
  } catch (...) {
    local.stop_all();
    throw;
  }

  // Wait for the master. A slave node killed by a signal gives the master `timeout` to notice
  // (it then prints the job's one message); after that the launcher ends the job itself. A
  // slave node that exited with a status is the master node's to judge: its program may have
  // ended in the sequential part, which the master's runs too (docs/net.md, "Output and
  // input"), and the master node knows when it needs that slave.
  const auto grace = std::chrono::milliseconds(static_cast<long>(a.timeout * 1000) + 2000);
  std::optional<Clock::time_point> slave_failed_at;
  std::string slave_failure;
  int slave_failure_code = 1;
  std::optional<int> master_status;  // its wait status, once it has ended
  auto note = [&](const net::NodeEnd& e) {
    if (e.rank == 0) {
      master_status = e.wait_status;
    } else if (!e.ok && !slave_failed_at && (!e.local || WaitStatus{e.wait_status}.kind() == WaitStatus::signaled)) {
      slave_failed_at = Clock::now();
      slave_failure = e.what;
      if (e.local) slave_failure += "; see " + a.output_dir + "/node." + std::to_string(e.rank) + ".log";
      slave_failure_code = e.exit_code;
    }
  };
  // Bounded: each round ends by an event or the 100 ms tick; the master's end or the grace
  // deadline ends the loop.
  while (!master_status) {
    std::vector<pollfd> pf;
    local.poll_fds(pf);
    int pr = ::poll(pf.data(), pf.size(), 100);
    if (pr < 0 && errno != EINTR) throw UserError(errno_message("poll"));
    for (const net::NodeEnd& e : local.ended()) note(e);
    if (ssh)
      for (const net::NodeEnd& e : ssh->ended()) note(e);
    if (!master_status && slave_failed_at && Clock::now() - *slave_failed_at > grace) {
      std::fprintf(stderr,
                   "cape: %s; the master did not end the job, stopping it (job exit status %d)\n",
                   slave_failure.c_str(), slave_failure_code);
      local.kill(0);
      master_status = (slave_failure_code & 0xff) << 8;  // exits with the slave node's status
    }
  }
  WaitStatus st{*master_status};
  // The master node itself was killed: it could say nothing, so the launcher does (even if
  // a slave was seen to end first: slaves end when they lose the master, sometimes before
  // the master's death can be reaped).
  if (st.kind() == WaitStatus::signaled) {
    std::string where = master_region();
    std::fprintf(stderr, "cape: node 0 (the master node, pid %d) was %s %s (job exit status %d)\n",
                 local.pid(0), st.describe().c_str(),
                 where.empty() ? "outside any parallel region" : ("in " + where).c_str(), st.shell_code());
  }
  // The slaves end on their own (exit reports, the master's EOF); then they are stopped.
  auto deadline = Clock::now() + grace;
  for (;;) {
    local.ended();
    if (ssh) ssh->ended();
    if ((local.all_ended() && (!ssh || ssh->all_ended())) || Clock::now() > deadline) break;
    std::vector<pollfd> pf;
    local.poll_fds(pf);
    if (::poll(pf.data(), pf.size(), 100) < 0 && errno != EINTR) break;
  }
  local.stop_all();
  if (ssh) ssh->stop_all();  // closes the channels: remote nodes stop
  trace.merge();
  return st.shell_code();
}

}  // namespace

namespace cape::cli {

void add_run_command(CLI::App& app, Context& ctx) {
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
                  "Slaves' output and logs: DIR/node.RANK.log on their host (default cape-logs; an existing "
                  "directory is used, an old log or anything else at a log's name replaced)");
  sub->add_option("--tracker", a->tracker, "uffd (default), mprotect, full or inproc")
      ->check(CLI::IsMember({"mprotect", "uffd", "full", "inproc"}));
  sub->add_option("--sync", a->sync,
                  std::string("eager (each region's end sends every change to every node) or lazy (a node learns which "
                              "pages others changed and fetches one when it first touches it; docs/monitor.md); "
                              "default: $CAPE_SYNC, else ") + cli::kDefaultSync + " (lazy needs --tracker uffd or mprotect: with full or inproc "
                              "the default is eager)")
      ->check(CLI::IsMember({"eager", "lazy"}));
  sub->add_option("--keep-checkpoints", a->keep, "Every node writes its checkpoints into DIR");
  sub->add_option("--checkpoint-every", a->checkpoint_every,
                  "A complete checkpoint of the master's program every SECONDS, outside parallel regions, into "
                  "--checkpoint-file: `cape restart FILE` continues it alone (docs/cape1.md)")
      ->check(cape::cli::seconds_validator());
  sub->add_option("--checkpoint-file", a->checkpoint_file,
                  "Where --checkpoint-every writes, on the master's host (replaced each time; default cape.ckpt)");
  sub->add_flag("--check-races", a->check_races,
                "Report two nodes writing different values to one shared word, with the variable; the job then "
                "exits with 66 (docs/tickpt.md)");
  sub->add_flag("--encrypt", a->encrypt,
                "Encrypt the traffic between nodes (AES-256-GCM); it is always authenticated (docs/net.md)");
  sub->add_option("--trace", a->trace,
                  "Write the job's timeline to FILE: Chrome trace-event JSON, one track per node, each region's "
                  "phases and runtime calls with the bytes they moved (Perfetto, chrome://tracing; docs/trace.md)");
  sub->add_option("--log", a->log, "Log levels, as CAPE_LOG (e.g. net:info)")->check(log_spec_validator());
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
  sub->add_flag("--any-program", a->any_program,
                "Run a program not built with cape-cc anyway: every node runs all of it, alone");
  sub->add_option("--threads-per-node", a->threads_per_node,
                  "Programs built with cape-cc --model=mt: OpenMP threads per node (default: the node's CPUs)")
      ->check(CLI::Range(1, 1024));
  add_program_positional(sub, a->argv);
  sub->callback([a, &ctx] { ctx.exit_status = run_job(*a); });
}

}  // namespace cape::cli

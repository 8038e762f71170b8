// Starting a job's nodes (../shared/ARCHITECTURE.md: launchers live in net/). `cape run`
// starts the master on this machine with a LocalLauncher and the slaves with a Launcher:
// the same LocalLauncher, or an SshLauncher (libssh). mpirun and srun are launchers of
// their own: they start `cape node` everywhere themselves.
//
// What a node is told on its command line is not the launcher's business (nothing below
// cli/ knows flags): the launcher decides how the node reaches the master and gets the job
// secret (a NodeLink), and cli/ turns that into `cape node` arguments (a NodeCommand).
//
//   LocalLauncher local(cape_exe, secret);
//   local.start_master(listen_fd, status_fd, command);
//   Launcher& slaves = ...;  // local, or an SshLauncher
//   for (rank ...) slaves.start(rank, host, port, command);
//   for (const NodeEnd& e : slaves.ended()) ...;   // without waiting
//   slaves.stop_all();
#pragma once

#include <poll.h>
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "net/auth.h"
#include "net/ssh.h"
#include "util/scoped_fd.h"

namespace cape::net {

// How a node started by a launcher reaches the master and gets the job secret.
struct NodeLink {
  std::string master;        // HOST:PORT to connect to ("" for the master itself)
  int secret_fd = -1;        // the descriptor the secret arrives on (one line)
  int listen_fd = -1;        // the master: the listening socket to use (-1 = none)
  int unix_listen_fd = -1;   // the master: the listening local Unix socket to use (-1 = none)
  int status_fd = -1;        // the master: where it reports its region (-1 = none)
  bool watch_stdin = false;  // stdin is the launcher's channel: stop when it closes
  bool env_stdin = false;    // the environment follows the secret on secret_fd (cape node --env-stdin)
};

// `cape node`'s arguments for `rank` (after the command itself), made by cli/.
using NodeCommand = std::function<std::vector<std::string>(int rank, const NodeLink& link)>;

// A node that has ended.
struct NodeEnd {
  int rank = -1;
  bool ok = false;          // exited with 0
  std::string what;         // "node 2 (pid 1234) killed by signal 9 (Killed)"
  int exit_code = 1;        // what the job exits with because of it (128 + signal, like a shell)
  int wait_status = 0;      // a local node's raw wait status
  bool local = false;       // it ran on this machine (its log is here)
};

class Launcher {
 public:
  virtual ~Launcher() = default;
  // The address the master listens on so that these nodes reach it ("" = every interface).
  virtual std::string listen_host() const = 0;
  // Starts slave `rank`'s `cape node` on `host`; the master listens on `port`. Throws
  // cape::UserError naming the host when it cannot.
  virtual void start(int rank, const std::string& host, uint16_t port, const NodeCommand& command) = 0;
  // The nodes that ended since the last call, by rank, without waiting.
  virtual std::vector<NodeEnd> ended() = 0;
  virtual bool all_ended() const = 0;
  // Descriptors that become readable when a node ends, for poll(2) (none: poll on a tick).
  virtual void poll_fds(std::vector<pollfd>& out) const = 0;
  // Ends the nodes still running and waits for them.
  virtual void stop_all() = 0;
};

// `cape node`s on this machine, children of this process: each gets the secret on a pipe
// and dies with it (PR_SET_PDEATHSIG; the program dies with its node, PTRACE_O_EXITKILL).
class LocalLauncher final : public Launcher {
 public:
  LocalLauncher(std::string cape_exe, const Secret& secret);
  ~LocalLauncher() override;  // stop_all()

  // The master, rank 0: it listens on `listen_fd` (and on `unix_listen_fd`, the local Unix
  // socket, when >= 0) and reports its region on `status_fd` (all inherited).
  void start_master(int listen_fd, int status_fd, const NodeCommand& command, int unix_listen_fd = -1);
  pid_t pid(int rank) const;
  // SIGKILLs node `rank` and reaps it (it is then no longer reported by ended()).
  void kill(int rank);

  std::string listen_host() const override { return "127.0.0.1"; }
  void start(int rank, const std::string& host, uint16_t port, const NodeCommand& command) override;
  std::vector<NodeEnd> ended() override;
  bool all_ended() const override;
  void poll_fds(std::vector<pollfd>& out) const override;
  void stop_all() override;

 private:
  struct Child {
    int rank = -1;
    pid_t pid = -1;
    util::ScopedFd pidfd;
    bool done = false;
  };
  // Runs `cape node` with `args`, the secret on a pipe; `keep` are inherited descriptors.
  void spawn(int rank, NodeLink link, const NodeCommand& command, std::vector<int> keep);
  std::string exe_;
  const Secret& secret_;
  pid_t me_;
  std::vector<Child> children_;
};

// `cape node`s over SSH (ssh.h): the secret goes down the channel's stdin, the node watches
// it, and it runs in this directory with this environment, byte for byte (the determinism
// contract: the environment sits on the program's stack).
class SshLauncher final : public Launcher {
 public:
  // `remote_cape`: the cape command on the hosts.
  SshLauncher(SshOptions options, const Secret& secret, std::string remote_cape);

  std::string listen_host() const override { return ""; }
  void start(int rank, const std::string& host, uint16_t port, const NodeCommand& command) override;
  std::vector<NodeEnd> ended() override;
  bool all_ended() const override;
  void poll_fds(std::vector<pollfd>&) const override {}
  void stop_all() override { remotes_.clear(); }  // closes the channels: the nodes stop

 private:
  struct Remote {
    int rank;
    std::unique_ptr<SshProcess> process;
    bool reported = false;
  };
  SshOptions options_;
  const Secret& secret_;
  std::string remote_cape_;
  std::mutex out_mu_;  // one node's early output at a time
  std::vector<Remote> remotes_;
};

}  // namespace cape::net

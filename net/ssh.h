// Starting a remote `cape node` over SSH with libssh: key authentication (the agent, the
// default identities, or --identity), known_hosts checked (a clear error; new keys only with
// accept_new_host_keys), one exec channel per node. The job secret goes down the channel's
// stdin, never on a command line. The remote node watches its stdin: when the launcher goes
// away (or kills the job) the channel closes and the remote node stops its program.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

namespace cape::net {

struct SshOptions {
  std::string user;             // "" = from ~/.ssh/config or the local user
  int port = 0;                 // 0 = from ~/.ssh/config or 22
  std::string identity;         // private key file; "" = agent + default identities
  std::string known_hosts;      // "" = ~/.ssh/known_hosts
  bool accept_new_host_keys = false;
  int connect_timeout_s = 10;
};

class SshProcess {
 public:
  // Connects and authenticates. Throws cape::UserError naming the host and what failed.
  SshProcess(const std::string& host, const SshOptions& options);
  // Runs `command` there and writes `stdin_line` to it; output goes to on_output.
  void start(const std::string& command, const std::string& stdin_line,
             std::function<void(const std::string& host, const char* data, size_t n)> on_output);
  ~SshProcess();  // closes the channel (the remote node then stops) and joins
  SshProcess(const SshProcess&) = delete;
  SshProcess& operator=(const SshProcess&) = delete;

  // The local address of the connection: how the remote host reaches this machine.
  const std::string& local_address() const { return local_address_; }
  bool finished() const { return finished_.load(); }
  int exit_status() const { return exit_status_.load(); }  // valid once finished()
  void stop();  // asks the pump to close the channel

 private:
  void pump();
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::string host_;
  std::string local_address_;
  std::function<void(const std::string&, const char*, size_t)> on_output_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> finished_{false};
  std::atomic<int> exit_status_{-1};
  std::thread thread_;
};

// Quotes `s` for a POSIX shell: 'it'\''s'.
std::string shell_quote(const std::string& s);

}  // namespace cape::net

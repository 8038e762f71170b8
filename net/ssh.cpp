#include "net/ssh.h"

#include <arpa/inet.h>
#include <libssh/libssh.h>
#include <netdb.h>
#include <sys/socket.h>

#include "util/error.h"
#include "util/log.h"

namespace cape::net {

struct SshProcess::Impl {
  ssh_session s = nullptr;
  ssh_channel ch = nullptr;
  ~Impl() {
    if (ch) {
      ssh_channel_close(ch);
      ssh_channel_free(ch);
    }
    if (s) {
      ssh_disconnect(s);
      ssh_free(s);
    }
  }
};

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') out += "'\\''";
    else out += c;
  }
  return out + "'";
}

namespace {

std::string local_address_of(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (fd < 0 || ::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return "";
  char host[NI_MAXHOST];
  if (getnameinfo(reinterpret_cast<sockaddr*>(&ss), len, host, sizeof host, nullptr, 0,
                  NI_NUMERICHOST) != 0)
    return "";
  return host;
}

}  // namespace

namespace {
UserError ssh_error(ssh_session s, const std::string& host, const std::string& what) {
  std::string detail = s ? ssh_get_error(s) : "";
  return UserError("ssh " + host + ": " + what + (detail.empty() ? "" : ": " + detail));
}
}  // namespace

SshProcess::SshProcess(const std::string& host, const SshOptions& o)
    : impl_(std::make_unique<Impl>()), host_(host) {
  auto err = [&](const std::string& what) { return ssh_error(impl_->s, host, what); };
  impl_->s = ssh_new();
  if (!impl_->s) throw err("cannot create a libssh session");
  ssh_session s = impl_->s;
  long timeout = o.connect_timeout_s;
  if (ssh_options_set(s, SSH_OPTIONS_HOST, host.c_str()) != SSH_OK) throw err("bad host");
  // ~/.ssh/config first, so that explicit options below win.
  if (ssh_options_parse_config(s, nullptr) != SSH_OK) throw err("reading ~/.ssh/config");
  if (ssh_options_set(s, SSH_OPTIONS_TIMEOUT, &timeout) != SSH_OK) throw err("timeout option");
  if (!o.user.empty() && ssh_options_set(s, SSH_OPTIONS_USER, o.user.c_str()) != SSH_OK)
    throw err("bad user");
  if (o.port > 0 && ssh_options_set(s, SSH_OPTIONS_PORT, &o.port) != SSH_OK) throw err("bad port");
  if (!o.known_hosts.empty() &&
      ssh_options_set(s, SSH_OPTIONS_KNOWNHOSTS, o.known_hosts.c_str()) != SSH_OK)
    throw err("bad known_hosts path");
  if (ssh_connect(s) != SSH_OK) throw err("cannot connect");

  switch (ssh_session_is_known_server(s)) {
    case SSH_KNOWN_HOSTS_OK:
      break;
    case SSH_KNOWN_HOSTS_CHANGED:
      throw err("the host key CHANGED since it was recorded in known_hosts: someone may be "
                "intercepting the connection; if the change is expected, remove the old key "
                "(ssh-keygen -R " + host + ")");
    case SSH_KNOWN_HOSTS_OTHER:
      throw err("known_hosts holds a key of another type for this host; check it by hand");
    case SSH_KNOWN_HOSTS_NOT_FOUND:
    case SSH_KNOWN_HOSTS_UNKNOWN:
      if (!o.accept_new_host_keys)
        throw err("host key not in known_hosts; connect once with ssh to check and record it, "
                  "or pass --accept-new-host-keys");
      if (ssh_session_update_known_hosts(s) != SSH_OK) throw err("cannot record the host key");
      CAPE_LOG_AT(warn, "net") << "recorded the new host key of " << host << " in known_hosts";
      break;
    case SSH_KNOWN_HOSTS_ERROR:
      throw err("cannot check the host key");
  }

  int rc;
  if (!o.identity.empty()) {
    ssh_key key = nullptr;
    if (ssh_pki_import_privkey_file(o.identity.c_str(), nullptr, nullptr, nullptr, &key) != SSH_OK)
      throw err("cannot read the identity file " + o.identity);
    rc = ssh_userauth_publickey(s, nullptr, key);
    ssh_key_free(key);
  } else {
    rc = ssh_userauth_publickey_auto(s, nullptr, nullptr);  // agent, then default keys
  }
  if (rc != SSH_AUTH_SUCCESS)
    throw err("public key authentication failed (cape uses keys only: the agent, default "
              "identities, or --identity FILE)");
  local_address_ = local_address_of(ssh_get_fd(s));
}

void SshProcess::start(const std::string& command, const std::string& stdin_line,
                       std::function<void(const std::string&, const char*, size_t)> on_output) {
  on_output_ = std::move(on_output);
  ssh_session s = impl_->s;
  auto err = [&](const std::string& what) { return ssh_error(s, host_, what); };

  impl_->ch = ssh_channel_new(s);
  if (!impl_->ch) throw err("cannot create a channel");
  if (ssh_channel_open_session(impl_->ch) != SSH_OK) throw err("cannot open a session channel");
  if (ssh_channel_request_exec(impl_->ch, command.c_str()) != SSH_OK)
    throw err("cannot run the remote command");
  std::string line = stdin_line + "\n";
  if (ssh_channel_write(impl_->ch, line.data(), static_cast<uint32_t>(line.size())) !=
      static_cast<int>(line.size()))
    throw err("cannot write to the remote command");
  thread_ = std::thread([this] { pump(); });
}

SshProcess::~SshProcess() {
  stop();
  if (thread_.joinable()) thread_.join();
}


void SshProcess::stop() { stop_ = true; }

void SshProcess::pump() {
  // libssh sessions are not shared between threads: after the constructor, only this one
  // touches the session. Bounded by the stop flag and the channel's EOF.
  char buf[16384];
  ssh_channel ch = impl_->ch;
  while (!stop_) {
    int n = ssh_channel_read_timeout(ch, buf, sizeof buf, 0, 100);
    if (n > 0 && on_output_) on_output_(host_, buf, static_cast<size_t>(n));
    int e = ssh_channel_read_nonblocking(ch, buf, sizeof buf, 1);
    if (e > 0 && on_output_) on_output_(host_, buf, static_cast<size_t>(e));
    if (n == SSH_ERROR || e == SSH_ERROR) break;
    if (ssh_channel_is_eof(ch) && n <= 0 && e <= 0) {
      exit_status_ = ssh_channel_get_exit_status(ch);
      break;
    }
  }
  // Closing the channel closes the remote node's stdin: it stops its program and exits.
  ssh_channel_send_eof(ch);
  ssh_channel_close(ch);
  finished_ = true;
}

}  // namespace cape::net

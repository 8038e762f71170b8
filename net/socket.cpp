#include "net/socket.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <cstring>

#include <thread>

#include "net/auth.h"
#include "util/env.h"
#include "util/error.h"

namespace cape::net {

using Clock = std::chrono::steady_clock;

std::string HostPort::str() const {
  if (host.find(':') != std::string::npos) return "[" + host + "]:" + std::to_string(port);
  return host + ":" + std::to_string(port);
}

HostPort parse_host_port(const std::string& s) {
  HostPort hp;
  std::string port;
  if (!s.empty() && s[0] == '[') {
    size_t close = s.find(']');
    if (close == std::string::npos || close + 1 >= s.size() || s[close + 1] != ':')
      throw UserError("bad address '" + s + "': expected [v6addr]:port");
    hp.host = s.substr(1, close - 1);
    port = s.substr(close + 2);
  } else {
    size_t colon = s.rfind(':');
    if (colon == std::string::npos || colon == 0)
      throw UserError("bad address '" + s + "': expected HOST:PORT");
    hp.host = s.substr(0, colon);
    port = s.substr(colon + 1);
  }
  if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos)
    throw UserError("bad port in '" + s + "'");
  unsigned long p = std::stoul(port);
  if (p > 65535) throw UserError("bad port in '" + s + "'");
  hp.port = static_cast<uint16_t>(p);
  return hp;
}

namespace {

struct AddrInfo {
  addrinfo* ai = nullptr;
  ~AddrInfo() {
    if (ai) freeaddrinfo(ai);
  }
};

void resolve(const std::string& host, uint16_t port, bool passive, AddrInfo& out) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = passive ? AI_PASSIVE : 0;
  std::string service = std::to_string(port);
  int r = getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &out.ai);
  if (r != 0) throw UserError("cannot resolve '" + host + "': " + gai_strerror(r));
}

}  // namespace

util::ScopedFd listen_tcp(const std::string& host, uint16_t port, int backlog) {
  AddrInfo ai;
  resolve(host, port, true, ai);
  std::string last = "no address";
  for (addrinfo* a = ai.ai; a; a = a->ai_next) {
    util::ScopedFd fd(::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol));
    if (!fd.valid()) {
      last = strerror(errno);
      continue;
    }
    int one = 1;
    if (::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0)
      throw UserError(errno_message("setsockopt SO_REUSEADDR"));
    if (::bind(fd.get(), a->ai_addr, a->ai_addrlen) != 0) {
      last = strerror(errno);
      continue;
    }
    if (::listen(fd.get(), backlog) != 0) throw UserError(errno_message("listen"));
    return fd;
  }
  throw UserError("cannot listen on " + HostPort{host, port}.str() + ": " + last);
}

uint16_t local_port(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0)
    throw UserError(errno_message("getsockname"));
  if (ss.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
  if (ss.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
  throw UserError("listening socket is not TCP");
}

util::ScopedFd try_connect_tcp(const HostPort& hp, std::string& why) {
  AddrInfo ai;
  resolve(hp.host, hp.port, false, ai);
  for (addrinfo* a = ai.ai; a; a = a->ai_next) {
    util::ScopedFd fd(::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol));
    if (!fd.valid()) {
      why = strerror(errno);
      continue;
    }
    if (::connect(fd.get(), a->ai_addr, a->ai_addrlen) == 0) return fd;
    why = strerror(errno);
  }
  return {};
}

util::ScopedFd connect_tcp(const HostPort& hp, std::chrono::milliseconds deadline_after,
                           const std::function<bool()>& cancelled) {
  auto deadline = Clock::now() + deadline_after;
  std::string last = "timed out";
  // Bounded: every round either connects or sleeps; the deadline ends the loop.
  for (int round = 0;; ++round) {
    if (util::ScopedFd fd = try_connect_tcp(hp, last); fd.valid()) return fd;
    if (Clock::now() >= deadline)
      throw UserError("cannot connect to the master at " + hp.str() + ": " + last);
    if (cancelled && cancelled())
      throw UserError("stopped connecting to the master at " + hp.str() + " (" + last + "): the launcher is gone");
    // Retry pacing while the master starts (not synchronisation: the deadline bounds it).
    std::this_thread::sleep_for(std::chrono::milliseconds(std::min(20 * (round + 1), 200)));
  }
}

bool local_unix_wanted() {
  return util::env_on_off("CAPE_LOCAL_UNIX", true, "local nodes over a Unix socket", "TCP only");
}

std::string local_unix_name(const Secret& secret, uint16_t port) {
  Mac m = job_value(secret, "local unix " + std::to_string(port));
  static const char* hex = "0123456789abcdef";
  std::string name = "cape-";
  for (size_t i = 0; i < 12; ++i) name += hex[m[i] >> 4], name += hex[m[i] & 15];
  return name;
}

namespace {
socklen_t abstract_address(const std::string& name, sockaddr_un& a) {
  a = {};
  a.sun_family = AF_UNIX;
  size_t n = std::min(name.size(), sizeof a.sun_path - 1);
  std::memcpy(a.sun_path + 1, name.data(), n);  // sun_path[0] = 0: the abstract namespace
  return static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + n);
}
}  // namespace

util::ScopedFd listen_local_unix(const std::string& name, int backlog) {
  sockaddr_un a;
  socklen_t len = abstract_address(name, a);
  util::ScopedFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return fd;
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&a), len) != 0 || ::listen(fd.get(), backlog) != 0) {
    int e = errno;
    fd.reset();
    errno = e;
  }
  return fd;
}

bool widen_unix_buffer(int fd) {
  // A Unix stream socket holds at most its sender's SO_SNDBUF in flight (the bytes wait in the
  // reader's queue, charged to the writer), 208 KiB by default, where loopback TCP grows to
  // megabytes (tcp_wmem, tcp_rmem). Two nodes writing big frames to each other at once (a
  // page answered while a broadcast comes the other way: tests lazy.fork_*) each wait for the
  // other to read; TCP's buffers hide that, a small Unix buffer does not. So: as much as the
  // host allows (the kernel caps it at net.core.wmem_max, doubled, unless the node may force
  // it: CAP_NET_ADMIN, e.g. root), and not used below 8 MiB.
  int want = 64 << 20;
  if (::setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &want, sizeof want) != 0)
    (void)::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &want, sizeof want);
  int got = 0;
  socklen_t len = sizeof got;
  return ::getsockopt(fd, SOL_SOCKET, SO_SNDBUF, &got, &len) == 0 && got >= kUnixMinSendBuffer;
}

util::ScopedFd connect_local_unix(const std::string& name) {
  sockaddr_un a;
  socklen_t len = abstract_address(name, a);
  util::ScopedFd fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return fd;
  if (!widen_unix_buffer(fd.get())) {
    fd.reset();
    errno = ENOBUFS;
    return fd;
  }
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&a), len) != 0) {
    int e = errno;
    fd.reset();
    errno = e;
  }
  return fd;
}

bool is_unix_socket(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  return ::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) == 0 && ss.ss_family == AF_UNIX;
}

std::string peer_name(int fd) {
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  if (::getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0) return "?";
  if (ss.ss_family == AF_UNIX) return "local Unix socket";
  char host[NI_MAXHOST], serv[NI_MAXSERV];
  if (getnameinfo(reinterpret_cast<sockaddr*>(&ss), len, host, sizeof host, serv, sizeof serv,
                  NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    return "?";
  return HostPort{host, static_cast<uint16_t>(std::stoul(serv))}.str();
}

void set_nonblocking(int fd) {
  int fl = ::fcntl(fd, F_GETFL);
  if (fl < 0 || ::fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0)
    throw UserError(errno_message("fcntl O_NONBLOCK"));
}

void set_nodelay(int fd) {
  if (is_unix_socket(fd)) return;  // no Nagle there: every write goes to the peer's queue at once
  int one = 1;
  if (::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0)
    throw UserError(errno_message("setsockopt TCP_NODELAY"));
}

void wait_until_delivered(std::span<const int> fds, std::chrono::milliseconds bound) {
  const auto deadline = Clock::now() + bound;
  // Delivered: our FIN was acknowledged (FIN_WAIT2, TIME_WAIT), or the connection is gone
  // (CLOSE: reset, or never connected). No event says "acknowledged", so the state is read
  // every millisecond up to the bound (on loopback the first look usually finds it done).
  auto delivered = [](int fd) {
    tcp_info ti{};
    socklen_t len = sizeof ti;
    if (::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0) return true;  // not TCP: nothing to wait for
    return ti.tcpi_state == TCP_FIN_WAIT2 || ti.tcpi_state == TCP_TIME_WAIT || ti.tcpi_state == TCP_CLOSE;
  };
  for (;;) {
    bool all = true;
    for (int fd : fds) all = all && delivered(fd);
    if (all || Clock::now() >= deadline) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

namespace {
void on_sigpipe(int) {}
}  // namespace

void catch_sigpipe() {
  struct sigaction sa {};
  sa.sa_handler = on_sigpipe;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  if (::sigaction(SIGPIPE, &sa, nullptr) != 0) throw UserError(errno_message("sigaction SIGPIPE"));
}

}  // namespace cape::net

// TCP plumbing for the star: listening, connecting with a deadline, addresses.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "net/auth.h"
#include "util/scoped_fd.h"

namespace cape::net {

struct HostPort {
  std::string host;
  uint16_t port = 0;
  std::string str() const;
};
// "host:port", "[v6addr]:port". Throws cape::UserError on a malformed string.
HostPort parse_host_port(const std::string& s);

// A listening TCP socket on host:port (port 0 = any free port), close-on-exec.
util::ScopedFd listen_tcp(const std::string& host, uint16_t port, int backlog = 64);
uint16_t local_port(int fd);
// Connects to hp, retrying refused/unreachable attempts until `deadline_after` passes
// (the master may not be listening yet when mpirun starts the slaves). Throws
// cape::UserError naming the address on failure, or when `cancelled` says so.
util::ScopedFd connect_tcp(const HostPort& hp, std::chrono::milliseconds deadline_after,
                           const std::function<bool()>& cancelled = {});
// Nodes on one host (issue 14): the master also listens on an abstract Unix socket, and a
// slave tries it before TCP. Loopback TCP runs the receive path (softirq, the reader's
// wake-up) inside the sender's sendmsg: a Unix socket's frame costs ~5 us less CPU at each end
// (bench/floor: ptrace 69 -> 49 us of CPU per empty region). Its name is a function of the
// job's secret and the master's TCP port, so nobody without the secret can take it before the
// master does; whoever connects still proves the secret in the handshake, as over TCP.
// CAPE_LOCAL_UNIX=0 in the environment: TCP only (both ends look); another value than 0 or 1
// throws cape::UserError.
bool local_unix_wanted();
std::string local_unix_name(const Secret& secret, uint16_t port);  // without the leading NUL
// A listening abstract Unix socket named `name`, close-on-exec; invalid (errno set) when it
// cannot be made (the name taken, no Unix sockets): the master then listens on TCP alone.
util::ScopedFd listen_local_unix(const std::string& name, int backlog = 64);
// One try: invalid (errno set) when nobody listens there (a master on another host, in another
// network namespace, or with CAPE_LOCAL_UNIX=0), or when the host does not allow a send buffer
// of kUnixMinSendBuffer (ENOBUFS: net.core.wmem_max below 4 MiB; the slave then uses TCP).
util::ScopedFd connect_local_unix(const std::string& name);
// Raises a Unix socket's send buffer to what the host allows; whether it reached
// kUnixMinSendBuffer (socket.cpp says why it matters). The master calls it on every Unix
// connection it accepts, the slave before it connects.
constexpr int kUnixMinSendBuffer = 8 << 20;
bool widen_unix_buffer(int fd);
bool is_unix_socket(int fd);

// One round of connect_tcp: invalid, with `why`, when nobody answered; throws cape::UserError
// when `hp` does not resolve.
util::ScopedFd try_connect_tcp(const HostPort& hp, std::string& why);

// "127.0.0.1:41234" of the far end, for messages ("local Unix socket" for one).
std::string peer_name(int fd);
void set_nonblocking(int fd);
void set_nodelay(int fd);

// Waits until the far end of each TCP socket in `fds` has acknowledged every byte sent on
// it, its FIN included (call after shutdown(SHUT_WR)), or until `bound` passes. Closing a
// socket that still holds unread bytes makes the kernel reset the connection, and a reset
// drops whatever this end had not sent yet (issue 16, item 13): closing only after this
// keeps a node's last frames (its part, its exit report) for a peer that is slow to read.
void wait_until_delivered(std::span<const int> fds, std::chrono::milliseconds bound);

// SIGPIPE is caught by a handler that does nothing: a write to a closed pipe or socket fails
// with EPIPE instead of killing this process. A handler, not SIG_IGN: exec resets caught
// signals to their default, so programs started from here get the normal SIGPIPE (an ignored
// signal would stay ignored across exec). Throws cape::UserError if sigaction fails.
void catch_sigpipe();

}  // namespace cape::net

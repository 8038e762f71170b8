// TCP plumbing for the star: listening, connecting with a deadline, addresses.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <span>
#include <string>

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
// "127.0.0.1:41234" of the far end, for messages.
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

// The join handshake of net/auth.h on one connection, both ends: the master's challenge, the
// slave's proof, the master's proof (or a refusal that says why). Every step is bounded by
// `timeout` on a non-blocking socket. Apart from the Node so that it can run over a
// socketpair (tests/net/handshake_test.cpp).
//
//   master:  std::optional<Joiner> j = accept_slave(fd, addr, secret, size, timeout, may_join);
//   slave:   join_master(fd, addr, secret, {rank, size, label}, timeout);   // throws if refused
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>

#include "net/auth.h"
#include "net/frame.h"
#include "util/error.h"

namespace cape::net {

// The frame keys of one connection once the handshake is done (frame.h, "Authentication").
// The master's key towards the slaves comes from its job nonce alone (one key for every
// slave, so that a broadcast is sealed once; each slave's frames are numbered on their own
// stream, its rank); a slave's key towards the master from both nonces and its rank too.
struct FrameKeys {
  FrameKey send{}, recv{};
  uint32_t send_stream = 0, recv_stream = 0;
  bool encrypt = false;
};

// What the master's challenge carries besides its nonce: fresh for each master, the same
// for all its slaves; and whether the job's frames are encrypted (cape run --encrypt).
struct JobSession {
  Nonce nonce{};
  bool encrypt = false;
};

// A slave that proved it holds the job secret, as it introduced itself.
struct Joiner {
  int rank = -1;
  int pid = 0;
  std::string host;  // escaped (util::printable): it came from the peer
  FrameKeys keys;    // the master's side
};

// The job's identity (its id, program and arguments: cli/node_command.cpp), at most this
// long: a node whose identity differs belongs to another job and is refused.
inline constexpr size_t kMaxJobLength = 1024;

// The master's half, for a job of `size` nodes whose identity is `job`. `may_join(rank)` is
// "" when that rank may join now (it is then the caller's until released), else why not
// (the slave is told). nullopt when the slave was refused or the connection dropped: logged,
// naming `addr`; the master goes on waiting for others. `timeout` bounds the whole
// handshake, however the peer paces its bytes. While `job_ending` says so (the job failed
// and its nodes are being stopped), a dropped handshake is expected and logged at info only.
std::optional<Joiner> accept_slave(int fd, const std::string& addr, const Secret& secret, int size,
                                   std::chrono::milliseconds timeout,
                                   const std::function<std::string(int rank)>& may_join,
                                   const std::string& job = {}, const JobSession& session = {},
                                   const std::function<bool()>& job_ending = {});

struct SlaveId {
  int rank = 0;
  int size = 0;
  std::string label;  // its host name, for the master's messages
  std::string job;    // the job's identity (accept_slave)
};

// join_master's error when the handshake did not happen (no answer in time, the connection
// closed): a stopped or overloaded master, worth trying again. Refusals are UserError.
struct HandshakeLost : cape::UserError {
  using cape::UserError::UserError;
};

// The slave's half. Throws cape::UserError naming `addr` when the master says nothing, does
// not speak the protocol, refuses this rank (with its reason, escaped), or does not prove
// that it holds the secret. `timeout` bounds the whole handshake. Returns the slave's keys.
FrameKeys join_master(int fd, const std::string& addr, const Secret& secret, const SlaveId& me,
                      std::chrono::milliseconds timeout);

}  // namespace cape::net

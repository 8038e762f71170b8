// One connection of a node: to a slave (on the master) or to the master (on a slave), and
// how it is written (internal to net/; node.h).
//
// Locking: one writer at a time holds send_mu for a whole frame (checkpoints, small frames,
// heartbeats, the abort); one reader at a time holds read_mu for a whole frame and its
// handling: the connection's reader thread, or the node's monitor while it waits for this
// peer (node.h, "Who reads"). Everything else about the peer (joined, exited, closed,
// region, ...) is guarded by the Node's mutex.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "net/frame.h"
#include "net/handshake.h"
#include "util/scoped_fd.h"

namespace cape::net {

int64_t now_ns();  // steady clock
// "1.5 s", for messages.
std::string seconds(std::chrono::milliseconds ms);
inline iovec iov_of(const void* p, size_t n) { return {const_cast<void*>(p), n}; }

struct Peer {
  int rank = -1;
  util::ScopedFd fd;
  std::string address;  // ip:port of the far end
  std::string host;     // the host name it announced
  int pid = 0;          // its cape node's pid
  std::string region;   // last region it reported
  bool joined = false;
  bool claimed = false;  // master: a connection is finishing its handshake as this rank
  bool exited = false;  // sent its exit report
  int exit_status = 0;
  bool closed = false;  // reader finished
  std::timed_mutex send_mu;
  std::atomic<int64_t> last_send_ns{0};
  // Payload bytes and frames each way (heartbeats not counted): the traffic a job's
  // regions cost, logged when the node ends (`--log traffic:info`, scripts/bench-e2e.sh).
  std::atomic<uint64_t> bytes_out{0}, frames_out{0}, bytes_in{0}, frames_in{0};
  std::thread reader;
  // Who reads: the reader thread sleeps in epoll_wait on `ready` (this socket alone); a
  // waiting monitor takes the socket out of that set and holds read_mu while it reads
  // (Node::read_while_waiting), so the reader is not woken for what the monitor reads.
  std::mutex read_mu;
  ReadBuffer ahead;      // read_mu: frames that arrived together are read together
  util::ScopedFd ready;  // the reader's epoll set
  std::atomic<int64_t> last_recv_ns{0};  // the last frame from it (any reader): silence bound
  // The connection's frame keys (set once it has joined, before its reader starts) and
  // sequence numbers: send_seq under send_mu, the others the reader's.
  FrameKeys keys;
  uint64_t send_seq = 0, recv_seq = 0, recv_broadcast = 0;
  std::vector<std::pair<FrameType, std::vector<uint8_t>>> waiting;  // later()'s, under send_mu

  // The seal of the next frame to this peer; send_mu held.
  Seal next_seal() { return Seal{&keys.send, keys.send_stream, ++send_seq, keys.encrypt}; }
  // What its reader accepts (a slave's: the master's broadcasts too).
  Unseal unseal(bool broadcasts) {
    return Unseal{&keys.recv, keys.recv_stream, &recv_seq, broadcasts ? &recv_broadcast : nullptr, keys.encrypt};
  }
  // One frame, whole, under send_mu; a write counts as a sign of life (heartbeats).
  IoResult send(FrameType type, std::span<const iovec> parts, std::chrono::milliseconds stall);
  // A small control frame; a failure is only logged (the reader notices a dead peer).
  void send_small(FrameType type, const std::vector<uint8_t>& payload, std::chrono::milliseconds stall);
  // A heartbeat unless a writer holds send_mu (its bytes already prove we are alive); a
  // frame waiting to go out (later()) is sent instead.
  void heartbeat(std::chrono::milliseconds stall);
  // A small frame the far end needs only before the next one: sent, in order, before the
  // next frame to this peer or at the next heartbeat tick, whichever comes first; a region
  // report replaces one still waiting. Issue 14: a slave reported its region at every
  // exchange call and its digest at every region's begin (5 frames per region, each waking
  // the master's reader in the middle of its work), while the master reads the region only
  // when that slave fails and the digest after the slave's part (which follows it).
  void later(FrameType type, std::vector<uint8_t> payload);
  std::atomic<bool> frames_waiting{false};
  // "node 2 (host, pid 123)", "node 0 (the master at host)"; the Node's mutex held.
  std::string who() const;

 private:
  void send_waiting(std::chrono::milliseconds stall);
  std::vector<uint8_t> take_waiting();  // later()'s frames, sealed, as bytes
};

}  // namespace cape::net

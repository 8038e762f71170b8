#include "net/peer.h"

#include <cstdio>

#include "util/log.h"

namespace cape::net {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string seconds(std::chrono::milliseconds ms) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f s", static_cast<double>(ms.count()) / 1000.0);
  return b;
}

IoResult Peer::send(FrameType type, std::span<const iovec> parts, std::chrono::milliseconds stall) {
  std::unique_lock sl(send_mu);
  // The small frames waiting for this one go in the same write (sealed first: their
  // numbers come before its).
  std::vector<uint8_t> before;
  if (frames_waiting) before = take_waiting();
  IoResult r = write_frame(fd.get(), type, parts, stall, next_seal(), before);
  last_send_ns = now_ns();
  uint64_t n = 0;
  for (const iovec& v : parts) n += v.iov_len;
  bytes_out.fetch_add(n, std::memory_order_relaxed);
  frames_out.fetch_add(1, std::memory_order_relaxed);
  return r;
}

void Peer::send_small(FrameType type, const std::vector<uint8_t>& payload, std::chrono::milliseconds stall) {
  iovec v = iov_of(payload.data(), payload.size());
  IoResult r = send(type, {&v, 1}, stall);
  if (!r.ok()) {
    CAPE_LOG_AT(info, "net") << "sending " << to_string(type) << " to node " << rank << ": " << r.describe();
  }
}

void Peer::later(FrameType type, std::vector<uint8_t> payload) {
  std::unique_lock sl(send_mu);
  if (type == FrameType::region)
    for (auto& [t, p] : waiting)
      if (t == FrameType::region) {
        p = std::move(payload);
        return;
      }
  waiting.emplace_back(type, std::move(payload));
  frames_waiting = true;
}

// send_mu held.
std::vector<uint8_t> Peer::take_waiting() {
  frames_waiting = false;
  std::vector<uint8_t> out;
  for (auto& [type, payload] : waiting) {
    iovec v = iov_of(payload.data(), payload.size());
    encode_frame_into(out, type, {&v, 1}, next_seal());
    bytes_out.fetch_add(payload.size(), std::memory_order_relaxed);
    frames_out.fetch_add(1, std::memory_order_relaxed);
  }
  waiting.clear();
  return out;
}

// send_mu held.
void Peer::send_waiting(std::chrono::milliseconds stall) {
  frames_waiting = false;
  for (auto& [type, payload] : waiting) {
    iovec v = iov_of(payload.data(), payload.size());
    IoResult r = write_frame(fd.get(), type, {&v, 1}, stall, next_seal());
    last_send_ns = now_ns();
    bytes_out.fetch_add(payload.size(), std::memory_order_relaxed);
    frames_out.fetch_add(1, std::memory_order_relaxed);
    if (!r.ok()) CAPE_LOG_AT(info, "net") << "sending " << to_string(type) << " to node " << rank << ": " << r.describe();
  }
  waiting.clear();
}

void Peer::heartbeat(std::chrono::milliseconds stall) {
  std::unique_lock sl(send_mu, std::try_to_lock);
  if (!sl.owns_lock()) return;
  if (frames_waiting) {
    send_waiting(stall);
    return;
  }
  IoResult r = write_frame(fd.get(), FrameType::heartbeat, {}, stall, next_seal());
  last_send_ns = now_ns();
  if (!r.ok()) {
    CAPE_LOG_AT(debug, "net") << "heartbeat to node " << rank << ": " << r.describe();
  }
}

std::string Peer::who() const {
  std::string s = "node " + std::to_string(rank);
  if (rank == 0) s += " (the master";
  else s += " (";
  if (!host.empty()) s += (rank == 0 ? " at " : "") + host;
  if (pid) s += ", pid " + std::to_string(pid);
  return s + ")";
}

}  // namespace cape::net

// Frames: the unit of everything that travels between two cape nodes.
//
//   +------------------------------------------------------------------+ offset
//   | magic "CAPN" u32 | version u8 | type u8 | flags u8 | reserved u8 | 0
//   | payload length u64                                               | 8
//   | sequence number u64 (0 before the handshake's keys)              | 16
//   | XXH3-64 of bytes 0..23 (this header) u64                         | 24
//   +------------------------------------------------------------------+ 32
//   | payload (length bytes; encrypted with flag 2)                    |
//   +------------------------------------------------------------------+
//   | trailer, 16 bytes: the AEAD tag over header and payload,         |
//   | or, before the keys (the handshake), XXH3-64 of the payload and  |
//   | 8 zero bytes                                                     |
//   +------------------------------------------------------------------+
//
// Little-endian. The header has its own checksum, so a corrupted length is refused before
// anything is allocated. The trailer comes after the payload: the writer seals the payload
// as it sends it instead of reading all of it first (128 MiB: ~8 ms before the first byte
// left), and the reader checks it as it arrives (hot in cache).
//
// Authentication (version 3, issue 16 item 4). Until the handshake is done, frames are
// limited to kHandshakeMaxPayload and only checksummed. After it, every frame is sealed
// with an AEAD under a key the handshake derived (handshake.h: a key master -> slaves and
// one per slave -> master, from the job secret and fresh nonces), the 32-byte header as
// associated data: ChaCha20-Poly1305 with the payload as associated data too (a Poly1305
// tag: authenticated, ~8 GB/s), or, with flag 2 (cape run --encrypt), AES-256-GCM with the
// payload as ciphertext. The 96-bit nonce is the stream (the
// destination's rank, the sender's rank towards the master, or kBroadcastStream with flag 1:
// one frame, one tag, every slave) and the sequence number: a frame cannot be altered,
// forged, replayed, reordered or moved to another connection without the reader refusing it.
//
// Reads and writes work on non-blocking sockets with poll(), so that "the peer said
// nothing for T" is a return value, never a hang. Sockets are shared by one reader thread
// and writers that hold the connection's send lock.
#pragma once

#include <sys/uio.h>

#include <array>
#include <chrono>
#include <memory>
#include <optional>
#include <utility>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "ckpt/buffer.h"

namespace cape::net {

inline constexpr uint32_t kFrameMagic = 0x4e504143;  // "CAPN"
inline constexpr uint8_t kProtocolVersion = 6;  // 4: output frames carry their region; the lock frames; 5: leases; 6: renewals
inline constexpr size_t kFrameHeaderSize = 32;
inline constexpr size_t kFrameTrailerSize = 16;
inline constexpr uint8_t kFlagBroadcast = 1;  // stream kBroadcastStream
inline constexpr uint8_t kFlagEncrypted = 2;
inline constexpr uint32_t kBroadcastStream = 0xffffffff;
inline constexpr uint64_t kHandshakeMaxPayload = 4096;
inline constexpr uint64_t kDefaultMaxPayload = uint64_t{1} << 36;  // 64 GiB

enum class FrameType : uint8_t {
  challenge = 1,  // master -> slave: nonce
  auth = 2,       // slave -> master: rank, size, nonce, HMAC
  auth_ok = 3,    // master -> slave: HMAC (mutual authentication)
  refused = 4,    // master -> slave: why (then close)
  checkpoint = 5, // name + serialized DICKPT
  heartbeat = 6,  // empty
  region = 7,     // slave -> master: where the node is now
  exited = 8,     // the node's program ended: wait status + region
  abort = 9,      // master -> slaves: the job failed: the one message + the job exit status
  shutdown = 10,  // master -> slaves: the job is over, stop your program
  node_failed = 11,  // slave -> master: its cape node failed (not its program): status + why
  output = 12,    // slave -> master: what its program printed in a region: stream u8 + bytes
  input = 13,     // master -> slaves: the job's stdin: eof u8 + bytes (program_io.h)
  state = 14,     // slave -> master: the digest of its memory as a region begins: u64 + bytes
  // The lock service (net/lock_service.h, docs/critical.md):
  lock_request = 15,  // slave -> master: name, region u64, u8 (1: no wait), ticket u64 (ordered; ~0: none)
  lock_grant = 16,    // master -> slave: "lock:" + name, then a DICKPT (as a checkpoint frame)
  lock_release = 17,  // slave -> master: lock name, then a DICKPT of the writes made holding it
  // --sync=lazy (net/node_pages.cpp, docs/net.md "Lazy synchronisation"):
  // A request: first page address u64, page count u64, who u64, version u64 (slave -> master:
  // who = the node that owns them, 0 the master; master -> slave: who = the node they are for).
  // An answer: first, count, who u64 (slave -> master: for whom; master -> slave: who served
  // them), the pages' bytes. The master passes a slave's request for another's pages on.
  page_request = 18,
  page_data = 19,
  // Lock leases (docs/critical.md, "Lock leases"); lock_request's u8 bit 2 asks for one:
  lock_revoke = 20,  // master -> slave: lock name: give the leased lock back (now, or at the body's exit)
};
const char* to_string(FrameType t);

struct FrameHeader {
  FrameType type = FrameType::heartbeat;
  uint64_t length = 0;
  uint8_t flags = 0;
  uint64_t seq = 0;
};

// A key of the frame layer (AES-256-GCM), derived in the handshake (auth.h).
using FrameKey = std::array<uint8_t, 32>;

// How a frame is sealed: unkeyed (key null: the handshake's frames) or with `key` on
// `stream` at sequence number `seq` (the sender counts, under its send lock).
struct Seal {
  const FrameKey* key = nullptr;
  uint32_t stream = 0;
  uint64_t seq = 0;
  bool encrypt = false;
};

// What a reader accepts: unkeyed frames (key null), or frames sealed with `key` on `stream`
// whose sequence number is *last_seq + 1, and, when last_broadcast is given, broadcast
// frames whose number is above *last_broadcast. The counters move only for frames that
// pass. Encrypted frames exactly when `encrypt`.
struct Unseal {
  const FrameKey* key = nullptr;
  uint32_t stream = 0;
  uint64_t* last_seq = nullptr;
  uint64_t* last_broadcast = nullptr;
  bool encrypt = false;
};

void encode_header(const FrameHeader& h, uint8_t out[kFrameHeaderSize]);
// Checks magic, version, reserved bytes, header checksum, known type and length <= max.
// Returns an empty string when good, else what is wrong.
std::string decode_header(const uint8_t in[kFrameHeaderSize], uint64_t max_payload,
                          FrameHeader& out);

// Frame payloads: ckpt::Bytes, so that a received checkpoint frame becomes the
// Checkpoint's own bytes as it is (ckpt::parse of an owned buffer), and so that sizing it
// for a read neither zeroes it nor, region after region, faults in fresh pages.
using Buffer = ckpt::Bytes;

struct Frame {
  FrameType type = FrameType::heartbeat;
  Buffer payload;
};

enum class IoStatus {
  ok,
  eof,        // the peer closed the connection (at a frame boundary)
  timeout,    // nothing arrived, or no progress was possible, for the whole timeout
  error,      // a socket error (errno kept in IoResult::err)
  bad_frame,  // a frame that breaks the rules; IoResult::what says which
  nothing,    // read_frame(..., wait_for_start = false): no byte of a next frame yet
};

struct IoResult {
  IoStatus status = IoStatus::ok;
  int err = 0;
  std::string what;
  bool ok() const { return status == IoStatus::ok; }
  std::string describe() const;  // "connection closed", "no data for 5.0 s", ...
};

// Reads one frame from `fd` (non-blocking). `silence` bounds the wait for *each* piece
// of data, so a slow but steady large frame is fine and a stalled one is not. An EOF in
// the middle of a frame is bad_frame ("truncated"), at a boundary it is eof. `deadline`,
// when given, bounds the whole frame too (the handshake: a peer sending a byte now and then
// cannot hold it open).
// `unseal`: the keys after the handshake (a frame that fails them is bad_frame).
// `buffer`: a connection's own reader keeps one, so that the small frames that arrive together
// (a slave's region report, digest and part) cost one read() instead of three each (issue 14);
// what it read ahead is the next call's. Without it nothing past the frame is read (the
// handshake, which hands the socket on).
// `wait_for_start` false: when no byte of the next frame has arrived (nothing buffered, the
// socket empty), return `nothing` at once instead of waiting; once a frame has begun, the rest
// is waited for as usual (a node's reader and its waiting monitor share one socket, node.h).
using Deadline = std::optional<std::chrono::steady_clock::time_point>;
struct ReadBuffer {
  static constexpr size_t kSize = size_t{64} << 10;  // larger reads go straight to the payload
  std::vector<uint8_t> bytes;
  size_t at = 0, end = 0;  // what is read and not yet taken
};
IoResult read_frame(int fd, Frame& out, uint64_t max_payload, std::chrono::milliseconds silence,
                    Deadline deadline = std::nullopt, const Unseal& unseal = {}, ReadBuffer* buffer = nullptr,
                    bool wait_for_start = true);

// Sends one frame whose payload is the concatenation of `parts` (written with sendmsg, no
// copy; hashed on the way). `stall` bounds the time without progress.
// `before`: whole frames already made (encode_frame) that go out first, in the same
// sendmsg (a slave's small frames ride with its part: one system call, one wakeup of the
// far reader, instead of one each).
IoResult write_frame(int fd, FrameType type, std::span<const iovec> parts,
                     std::chrono::milliseconds stall, const Seal& seal = {},
                     std::span<const uint8_t> before = {});
// A whole small frame, sealed, as bytes (for write_frame's `before`).
std::vector<uint8_t> encode_frame(FrameType type, std::span<const iovec> parts, const Seal& seal = {});
// The same, appended to `out`.
void encode_frame_into(std::vector<uint8_t>& out, FrameType type, std::span<const iovec> parts, const Seal& seal = {});

// Writes the same frame to several sockets at once, advancing each as it can take bytes
// (a broadcast is one pass, not N sequential transfers). results[i] is fds[i]'s outcome;
// a failing socket does not stop the others.
// With a seal, the same sealed bytes go to all (the broadcast stream: one key for every
// slave, so one tag).
std::vector<IoResult> write_frame_to_all(std::span<const int> fds, FrameType type,
                                         std::span<const iovec> parts,
                                         std::chrono::milliseconds stall, const Seal& seal = {},
                                         std::span<const uint8_t> before = {});

// Little-endian helpers for payloads.
class PayloadWriter {
 public:
  void u8(uint8_t v) { buf_.push_back(v); }
  void u32(uint32_t v);
  void u64(uint64_t v);
  void i32(int32_t v) { u32(static_cast<uint32_t>(v)); }
  void bytes(std::span<const uint8_t> b) { buf_.insert(buf_.end(), b.begin(), b.end()); }
  void str(const std::string& s);  // u32 length + bytes
  std::vector<uint8_t>& buffer() { return buf_; }

 private:
  std::vector<uint8_t> buf_;
};

// Reads a payload; every getter checks the remaining length and sets failed() instead of
// reading past the end.
class PayloadReader {
 public:
  explicit PayloadReader(std::span<const uint8_t> p) : p_(p) {}
  uint8_t u8();
  uint32_t u32();
  uint64_t u64();
  int32_t i32() { return static_cast<int32_t>(u32()); }
  std::span<const uint8_t> bytes(size_t n);
  std::string str(size_t max_len = 1 << 20);
  std::span<const uint8_t> rest();
  bool failed() const { return failed_; }
  bool at_end() const { return pos_ == p_.size(); }

 private:
  std::span<const uint8_t> p_;
  size_t pos_ = 0;
  bool failed_ = false;
};

}  // namespace cape::net

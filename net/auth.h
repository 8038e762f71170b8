// The per-job secret and the handshake that proves both ends hold it.
//
//   master                                   slave
//     | -- challenge {version, nonce_m} -------> |
//     | <-- auth {rank, size, pid, host, job, nonce_s, |
//     |          HMAC(k, "slave"|nonce_m|nonce_s|rank|size|job)} --
//     | -- auth_ok {HMAC(k, "master"|nonce_m|nonce_s|rank|job)} --> |   (or refused {why})
//
// HMAC-SHA256 (OpenSSL libcrypto), compared in constant time (CRYPTO_memcmp). Nonces are
// 32 bytes from getrandom(2), so an answer cannot be replayed to another connection, and
// the slave checks the master too: a process squatting on the master's port learns nothing
// and cannot feed checkpoints into a slave. The secret never travels.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cape::net {

class Secret {
 public:
  Secret() = default;
  explicit Secret(std::vector<uint8_t> key) : key_(std::move(key)) {}

  // 32 fresh random bytes, shown as 64 hex digits (what `cape run` makes per job).
  static Secret generate();
  // Reads a secret file; refuses one that others can read (mode & 077) or that is shorter
  // than 16 bytes. Trailing whitespace is ignored. Throws cape::UserError naming the path.
  static Secret from_file(const std::string& path);
  // Reads one line from `fd` (a pipe or the ssh channel) and closes nothing.
  static Secret from_fd(int fd);
  static Secret from_string(const std::string& s);

  bool empty() const { return key_.empty(); }
  std::span<const uint8_t> key() const { return key_; }
  std::string text() const { return std::string(key_.begin(), key_.end()); }

 private:
  std::vector<uint8_t> key_;
};

using Nonce = std::array<uint8_t, 32>;
using Mac = std::array<uint8_t, 32>;

Nonce random_nonce();
// `job`: the job's identity (handshake.h), and `context`: the rest of the challenge (the
// master's job nonce and flags), bound into both proofs.
Mac slave_proof(const Secret& s, const Nonce& nonce_m, const Nonce& nonce_s, int rank, int size,
                std::string_view job = {}, std::span<const uint8_t> context = {});
Mac master_proof(const Secret& s, const Nonce& nonce_m, const Nonce& nonce_s, int rank, std::string_view job = {},
                 std::span<const uint8_t> context = {});
// A key of the frame layer: HMAC(k, "cape-key " + label + material) (handshake.cpp says
// which material makes which key).
Mac derive_key(const Secret& s, std::string_view label, std::span<const uint8_t> material);
bool macs_equal(std::span<const uint8_t> a, std::span<const uint8_t> b);  // constant time
// A value every node of the job derives alike and nobody without the secret can guess:
// HMAC(k, "cape " + label). (The programs' AT_RANDOM bytes: docs/monitor.md.)
Mac job_value(const Secret& s, const std::string& label);

}  // namespace cape::net

#include "net/auth.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cassert>
#include <cstdio>

#include "util/error.h"
#include "util/scoped_fd.h"

namespace cape::net {
namespace {

void fill_random(uint8_t* p, size_t n) {
  size_t done = 0;
  while (done < n) {
    ssize_t r = ::getrandom(p + done, n - done, 0);
    if (r < 0) {
      if (errno == EINTR) continue;
      throw UserError(errno_message("getrandom"));
    }
    done += static_cast<size_t>(r);
  }
}

std::vector<uint8_t> trim(std::vector<uint8_t> v) {
  while (!v.empty() && (v.back() == '\n' || v.back() == '\r' || v.back() == ' ' ||
                        v.back() == '\t'))
    v.pop_back();
  return v;
}

constexpr size_t kMinSecret = 16;

Mac hmac(const Secret& s, std::span<const uint8_t> msg) {
  Mac out{};
  unsigned len = 0;
  const uint8_t* r = HMAC(EVP_sha256(), s.key().data(), static_cast<int>(s.key().size()),
                          msg.data(), msg.size(), out.data(), &len);
  // HMAC fails only on allocation failure or a bad digest: a broken environment.
  if (!r || len != out.size()) throw UserError("HMAC-SHA256 failed (libcrypto)");
  return out;
}

void put32(std::vector<uint8_t>& v, uint32_t x) {
  for (int i = 0; i < 4; ++i) v.push_back(static_cast<uint8_t>(x >> (8 * i)));
}

}  // namespace

Secret Secret::generate() {
  uint8_t raw[32];
  fill_random(raw, sizeof raw);
  static const char* hex = "0123456789abcdef";
  std::vector<uint8_t> key;
  for (uint8_t b : raw) {
    key.push_back(static_cast<uint8_t>(hex[b >> 4]));
    key.push_back(static_cast<uint8_t>(hex[b & 15]));
  }
  return Secret(std::move(key));
}

Secret Secret::from_file(const std::string& path) {
  util::ScopedFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) throw UserError(errno_message("cannot open secret file " + path));
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) throw UserError(errno_message("stat " + path));
  if (st.st_mode & 077)
  {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%03o", static_cast<unsigned>(st.st_mode & 0777));
    throw UserError("secret file " + path + " is readable by others (mode " + mode +
                    "); run: chmod 600 " + path);
  }
  if (st.st_uid != ::geteuid())
    throw UserError("secret file " + path + " is not owned by you");
  std::vector<uint8_t> key;
  uint8_t buf[4096];
  for (;;) {
    ssize_t r = ::read(fd.get(), buf, sizeof buf);
    if (r < 0) {
      if (errno == EINTR) continue;
      throw UserError(errno_message("read " + path));
    }
    if (r == 0) break;
    key.insert(key.end(), buf, buf + r);
    if (key.size() > 65536) throw UserError("secret file " + path + " is larger than 64 KiB");
  }
  key = trim(std::move(key));
  if (key.size() < kMinSecret)
    throw UserError("secret file " + path + " holds fewer than 16 bytes");
  return Secret(std::move(key));
}

Secret Secret::from_fd(int fd) {
  // Byte by byte up to the newline: whatever follows on the fd is not ours to consume.
  std::vector<uint8_t> key;
  for (;;) {
    uint8_t c;
    ssize_t r = ::read(fd, &c, 1);
    if (r < 0) {
      if (errno == EINTR) continue;
      throw UserError(errno_message("read secret from fd " + std::to_string(fd)));
    }
    if (r == 0 || c == '\n') break;
    key.push_back(c);
    if (key.size() > 65536) throw UserError("secret on fd " + std::to_string(fd) + " too long");
  }
  key = trim(std::move(key));
  if (key.size() < kMinSecret)
    throw UserError("secret read from fd " + std::to_string(fd) + " holds fewer than 16 bytes");
  return Secret(std::move(key));
}

Secret Secret::from_string(const std::string& s) {
  auto key = trim(std::vector<uint8_t>(s.begin(), s.end()));
  if (key.size() < kMinSecret) throw UserError("the job secret holds fewer than 16 bytes");
  return Secret(std::move(key));
}

Nonce random_nonce() {
  Nonce n;
  fill_random(n.data(), n.size());
  return n;
}

Mac slave_proof(const Secret& s, const Nonce& nonce_m, const Nonce& nonce_s, int rank, int size,
                std::string_view job, std::span<const uint8_t> context) {
  std::vector<uint8_t> msg{'c', 'a', 'p', 'e', '-', 's', 'l', 'a', 'v', 'e'};
  msg.insert(msg.end(), nonce_m.begin(), nonce_m.end());
  msg.insert(msg.end(), nonce_s.begin(), nonce_s.end());
  put32(msg, static_cast<uint32_t>(rank));
  put32(msg, static_cast<uint32_t>(size));
  put32(msg, static_cast<uint32_t>(job.size()));
  msg.insert(msg.end(), job.begin(), job.end());
  msg.insert(msg.end(), context.begin(), context.end());
  return hmac(s, msg);
}

Mac job_value(const Secret& s, const std::string& label) {
  std::string msg = "cape " + label;
  return hmac(s, {reinterpret_cast<const uint8_t*>(msg.data()), msg.size()});
}

Mac master_proof(const Secret& s, const Nonce& nonce_m, const Nonce& nonce_s, int rank, std::string_view job,
                 std::span<const uint8_t> context) {
  std::vector<uint8_t> msg{'c', 'a', 'p', 'e', '-', 'm', 'a', 's', 't', 'e', 'r'};
  msg.insert(msg.end(), nonce_m.begin(), nonce_m.end());
  msg.insert(msg.end(), nonce_s.begin(), nonce_s.end());
  put32(msg, static_cast<uint32_t>(rank));
  put32(msg, static_cast<uint32_t>(job.size()));
  msg.insert(msg.end(), job.begin(), job.end());
  msg.insert(msg.end(), context.begin(), context.end());
  return hmac(s, msg);
}

Mac derive_key(const Secret& s, std::string_view label, std::span<const uint8_t> material) {
  std::vector<uint8_t> msg;
  for (char c : std::string_view("cape-key ")) msg.push_back(static_cast<uint8_t>(c));
  msg.insert(msg.end(), label.begin(), label.end());
  msg.insert(msg.end(), material.begin(), material.end());
  return hmac(s, msg);
}

bool macs_equal(std::span<const uint8_t> a, std::span<const uint8_t> b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace cape::net

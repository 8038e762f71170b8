// cape_bench_mac: what one end of a checkpoint transfer pays for its frame's tag or checksum
// on this CPU (issue 16, item 4): each candidate over 128 MiB in 256 KiB pieces, as the
// frame layer feeds them, in thread CPU time (best of 5), once walking the 128 MiB (the
// sender's case: bytes from memory) and once over one 1 MiB window (the receiver's: each
// piece just read into cache). The MACs are the ones of OpenSSL, which cape links; XXH3
// (ckpt::Hasher, the handshake's checksum, not a MAC) for scale. OpenSSL picks its code by
// CPU: run it again with OPENSSL_ia32cap=:~0x200000 to see the code without AVX-512 IFMA.
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <vector>

#include "ckpt/hash.h"

namespace {

constexpr size_t kBytes = size_t{128} << 20;
constexpr size_t kPiece = size_t{256} << 10;
constexpr size_t kWindow = size_t{1} << 20;

double thread_cpu() {
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// Best of 5 runs of one pass: `begin`, `update` on every piece, `end`.
double best_seconds(const std::vector<uint8_t>& buf, bool hot, const std::function<void()>& begin,
                    const std::function<void(const uint8_t*, size_t)>& update, const std::function<void()>& end) {
  double best = 1e9;
  for (int rep = 0; rep < 5; ++rep) {
    double t0 = thread_cpu();
    begin();
    for (size_t o = 0; o < kBytes; o += kPiece) update(buf.data() + (hot ? o % kWindow : o), kPiece);
    end();
    best = std::min(best, thread_cpu() - t0);
  }
  return best;
}

void report(const char* name, const std::vector<uint8_t>& buf, const std::function<void()>& begin,
            const std::function<void(const uint8_t*, size_t)>& update, const std::function<void()>& end) {
  double cold = best_seconds(buf, false, begin, update, end);
  double hot = best_seconds(buf, true, begin, update, end);
  std::printf("%-40s %6.1f GB/s %6.1f ms   %6.1f GB/s %6.1f ms\n", name, kBytes / cold / 1e9, cold * 1e3,
              kBytes / hot / 1e9, hot * 1e3);
}

// An AEAD fed only associated data: its tag is a MAC of the bytes (as the frame layer uses it).
void aead_aad(const char* name, const EVP_CIPHER* cipher, const std::vector<uint8_t>& buf) {
  static const uint8_t key[32] = {1}, iv[12] = {2};
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  report(
      name, buf, [&] { EVP_EncryptInit_ex(ctx, cipher, nullptr, key, iv); },
      [&](const uint8_t* p, size_t n) {
        int len = 0;
        EVP_EncryptUpdate(ctx, nullptr, &len, p, static_cast<int>(n));
      },
      [&] {
        uint8_t none[16], tag[16];
        int len = 0;
        EVP_EncryptFinal_ex(ctx, none, &len);
        EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, 16, tag);
      });
  EVP_CIPHER_CTX_free(ctx);
}

void mac(const char* name, const char* algorithm, const std::vector<uint8_t>& buf) {
  EVP_MAC* m = EVP_MAC_fetch(nullptr, algorithm, nullptr);
  if (!m) {
    std::printf("%-40s not in this OpenSSL\n", name);
    return;
  }
  static uint8_t key[32] = {3}, iv[12] = {4};
  EVP_MAC_CTX* ctx = EVP_MAC_CTX_new(m);
  report(
      name, buf,
      [&] {
        OSSL_PARAM params[3];
        int n = 0;
        if (std::strcmp(algorithm, "GMAC") == 0) {
          params[n++] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_CIPHER, const_cast<char*>("AES-256-GCM"), 0);
          params[n++] = OSSL_PARAM_construct_octet_string(OSSL_MAC_PARAM_IV, iv, sizeof iv);
        } else if (std::strcmp(algorithm, "HMAC") == 0) {
          params[n++] = OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, const_cast<char*>("SHA256"), 0);
        }
        params[n] = OSSL_PARAM_construct_end();
        EVP_MAC_init(ctx, key, sizeof key, params);
      },
      [&](const uint8_t* p, size_t n) { EVP_MAC_update(ctx, p, n); },
      [&] {
        uint8_t tag[16];
        size_t len = 0;
        EVP_MAC_final(ctx, tag, &len, sizeof tag);
      });
  EVP_MAC_CTX_free(ctx);
  EVP_MAC_free(m);
}

}  // namespace

int main() {
  std::vector<uint8_t> buf(kBytes);
  for (size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<uint8_t>(i * 7 + (i >> 12));
  std::printf("one end's pass over 128 MiB in 256 KiB pieces, thread CPU time, best of 5\n");
  std::printf("%-40s %-23s %s\n", "", "from memory (sender)", "in cache (receiver)");
  aead_aad("Poly1305 (ChaCha20-Poly1305, AAD): cape", EVP_chacha20_poly1305(), buf);
  mac("Poly1305 (EVP_MAC)", "POLY1305", buf);
  aead_aad("GMAC (AES-256-GCM, AAD)", EVP_aes_256_gcm(), buf);
  mac("GMAC (EVP_MAC, AES-256-GCM)", "GMAC", buf);
  mac("HMAC-SHA256", "HMAC", buf);
  std::unique_ptr<cape::ckpt::Hasher> h;
  report(
      "XXH3-64 (checksum only, not a MAC)", buf, [&] { h = std::make_unique<cape::ckpt::Hasher>(); },
      [&](const uint8_t* p, size_t n) { h->update(p, n); }, [&] { (void)h->digest(); });
  return 0;
}

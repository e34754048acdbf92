#include "util/hash.hh"

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <sys/random.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "util/check.hh"

namespace tinytcp {

struct Sha256::Impl {
  EVP_MD_CTX* ctx = nullptr;
};

Sha256::Sha256() : impl_(std::make_unique<Impl>()) {
  impl_->ctx = EVP_MD_CTX_new();
  TINYTCP_CHECK(impl_->ctx != nullptr);
  TINYTCP_CHECK(EVP_DigestInit_ex(impl_->ctx, EVP_sha256(), nullptr) == 1);
}

Sha256::~Sha256() {
  if (impl_) {
    EVP_MD_CTX_free(impl_->ctx);
  }
}

Sha256::Sha256(Sha256&& other) noexcept : impl_(std::move(other.impl_)), bytes_(other.bytes_) {}
Sha256& Sha256::operator=(Sha256&& other) noexcept {
  if (this != &other) {
    if (impl_) {
      EVP_MD_CTX_free(impl_->ctx);
    }
    impl_ = std::move(other.impl_);
    bytes_ = other.bytes_;
  }
  return *this;
}

void Sha256::update(std::string_view data) {
  TINYTCP_CHECK(EVP_DigestUpdate(impl_->ctx, data.data(), data.size()) == 1);
  bytes_ += data.size();
}

Sha256Digest Sha256::peek() const {
  EVP_MD_CTX* copy = EVP_MD_CTX_new();
  TINYTCP_CHECK(copy != nullptr);
  TINYTCP_CHECK(EVP_MD_CTX_copy_ex(copy, impl_->ctx) == 1);
  Sha256Digest out{};
  unsigned int len = 0;
  TINYTCP_CHECK(EVP_DigestFinal_ex(copy, out.data(), &len) == 1);
  EVP_MD_CTX_free(copy);
  TINYTCP_CHECK(len == out.size());
  return out;
}

Sha256Digest Sha256::finish() {
  Sha256Digest out{};
  unsigned int len = 0;
  TINYTCP_CHECK(EVP_DigestFinal_ex(impl_->ctx, out.data(), &len) == 1);
  TINYTCP_CHECK(len == out.size());
  TINYTCP_CHECK(EVP_DigestInit_ex(impl_->ctx, EVP_sha256(), nullptr) == 1);
  bytes_ = 0;
  return out;
}

Sha256Digest sha256(std::string_view data) {
  Sha256 h;
  h.update(data);
  return h.finish();
}

std::string to_hex(const Sha256Digest& digest) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(digest.size() * 2);
  for (const uint8_t b : digest) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 0xf]);
  }
  return out;
}

Sha256Digest hmac_sha256(std::string_view key, std::string_view data) {
  Sha256Digest out{};
  unsigned int len = 0;
  const auto* result =
      HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(data.data()), data.size(), out.data(), &len);
  TINYTCP_CHECK(result != nullptr && len == out.size());
  return out;
}

std::string secure_random_bytes(size_t n) {
  std::string out(n, '\0');
  size_t got = 0;
  while (got < n) {
    // getrandom(2) blocks only until the pool is first initialized at boot,
    // and reads of up to 256 bytes are never short; loop for the rest.
    const ssize_t r = ::getrandom(out.data() + got, n - got, 0);
    if (r < 0) {
      if (errno == EINTR) {
        continue;
      }
      throw std::runtime_error(std::string("getrandom failed: ") + std::strerror(errno));
    }
    got += static_cast<size_t>(r);
  }
  return out;
}

void warm_up_crypto() {
  static_cast<void>(hmac_sha256("warm", "up"));
}

}  // namespace tinytcp

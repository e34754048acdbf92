#include "util/hash.hh"

#include <openssl/evp.h>

#include <sys/random.h>

#include <algorithm>
#include <array>
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

namespace {

// HMAC-SHA-256 (RFC 2104) over EVP digest contexts kept per thread, with the
// key's padded blocks absorbed once: OpenSSL's one-shot HMAC() fetches the
// algorithms by name, allocates and frees a context on every call (~1.5 us
// here, most of the cost of answering a SYN); this is four SHA-256 blocks.
class HmacSha256 {
 public:
  HmacSha256()
      : md_(EVP_MD_fetch(nullptr, "SHA256", nullptr)),
        inner_key_(EVP_MD_CTX_new()),
        outer_key_(EVP_MD_CTX_new()),
        work_(EVP_MD_CTX_new()) {
    TINYTCP_CHECK(md_ != nullptr && inner_key_ != nullptr && outer_key_ != nullptr &&
                  work_ != nullptr);
  }
  ~HmacSha256() {
    EVP_MD_CTX_free(work_);
    EVP_MD_CTX_free(outer_key_);
    EVP_MD_CTX_free(inner_key_);
    EVP_MD_free(md_);
  }
  HmacSha256(const HmacSha256&) = delete;
  HmacSha256& operator=(const HmacSha256&) = delete;

  Sha256Digest operator()(std::string_view key, std::string_view data) {
    if (!has_key_ || key != key_) {
      set_key(key);
    }
    Sha256Digest inner{};
    finish(inner_key_, data, inner);
    Sha256Digest out{};
    finish(outer_key_, {reinterpret_cast<const char*>(inner.data()), inner.size()}, out);
    return out;
  }

 private:
  static constexpr size_t kBlock = 64;

  void set_key(std::string_view key) {
    // RFC 2104 §2: a key longer than the block is hashed first; shorter ones
    // are padded with zeros.
    std::array<uint8_t, kBlock> block{};
    if (key.size() > kBlock) {
      const Sha256Digest d = sha256(key);
      std::copy(d.begin(), d.end(), block.begin());
    } else {
      std::memcpy(block.data(), key.data(), key.size());
    }
    absorb(inner_key_, block, 0x36);
    absorb(outer_key_, block, 0x5c);
    key_.assign(key);
    has_key_ = true;
  }
  void absorb(EVP_MD_CTX* ctx, const std::array<uint8_t, kBlock>& block, uint8_t pad) {
    std::array<uint8_t, kBlock> padded{};
    for (size_t i = 0; i < kBlock; ++i) {
      padded[i] = static_cast<uint8_t>(block[i] ^ pad);
    }
    TINYTCP_CHECK(EVP_DigestInit_ex2(ctx, md_, nullptr) == 1);
    TINYTCP_CHECK(EVP_DigestUpdate(ctx, padded.data(), padded.size()) == 1);
  }
  void finish(EVP_MD_CTX* keyed, std::string_view data, Sha256Digest& out) {
    TINYTCP_CHECK(EVP_MD_CTX_copy_ex(work_, keyed) == 1);
    TINYTCP_CHECK(EVP_DigestUpdate(work_, data.data(), data.size()) == 1);
    unsigned int len = 0;
    TINYTCP_CHECK(EVP_DigestFinal_ex(work_, out.data(), &len) == 1 && len == out.size());
  }

  EVP_MD* md_;
  EVP_MD_CTX* inner_key_;  // SHA-256 state after (key ^ ipad)
  EVP_MD_CTX* outer_key_;  // SHA-256 state after (key ^ opad)
  EVP_MD_CTX* work_;
  std::string key_;  // the key the two states hold
  bool has_key_ = false;
};

}  // namespace

Sha256Digest hmac_sha256(std::string_view key, std::string_view data) {
  // Per thread, for the last key used: the stack asks with a handful of
  // fixed keys, mostly one at a time.
  thread_local HmacSha256 hmac;
  return hmac(key, data);
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

#pragma once

// Cryptographic hashes, as thin wrappers over OpenSSL: SHA-256 for end-to-end
// file integrity, HMAC-SHA-256 as the keyed hash behind RFC 6528 initial
// sequence numbers and other secrets the stack must not leak.

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace tinytcp {

using Sha256Digest = std::array<uint8_t, 32>;

// Incremental SHA-256.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  Sha256(Sha256&&) noexcept;
  Sha256& operator=(Sha256&&) noexcept;

  void update(std::string_view data);
  // Finishes and returns the digest; the object then starts over.
  Sha256Digest finish();
  // The digest of the bytes so far, leaving the running hash untouched.
  Sha256Digest peek() const;
  // Bytes hashed since construction or the last finish().
  uint64_t bytes_hashed() const { return bytes_; }

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  uint64_t bytes_ = 0;
};

Sha256Digest sha256(std::string_view data);
std::string to_hex(const Sha256Digest& digest);

// HMAC-SHA-256 of `data` under `key`.
Sha256Digest hmac_sha256(std::string_view key, std::string_view data);

// `n` bytes from the kernel's CSPRNG (getrandom(2), for secrets made at
// start-up, never on a hot path). Throws std::runtime_error if it fails.
// Not OpenSSL's RAND_bytes: its DRBG costs about 0.5 ms to set up on first
// use, which a connecting host would pay before its first SYN.
std::string secure_random_bytes(size_t n);

// OpenSSL 3 sets up its default provider on the first digest, about 0.7 ms
// here. stack::Host calls this when it is made, so that the first SYN it
// answers (whose ISN is an HMAC) does not pay it.
void warm_up_crypto();

}  // namespace tinytcp

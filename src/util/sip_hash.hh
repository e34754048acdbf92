#pragma once

// SipHash-2-4 (Aumasson and Bernstein, "SipHash: a fast short-input PRF",
// 2012): a keyed 64-bit hash that is a pseudorandom function for short inputs,
// so its outputs reveal nothing about the key and cannot be forged without it.
// What Linux keys its SYN cookies, ISNs and timestamp offsets with. Here for
// the per-packet secrets (SYN cookies), where HMAC-SHA-256 through OpenSSL
// costs about 20 times as much; the key is 16 bytes made once per stack.
// Not a MAC for long messages or for integrity of files (use SHA-256).

#include <array>
#include <cstdint>
#include <string_view>

namespace tinytcp {

class SipHash {
 public:
  using Key = std::array<uint8_t, 16>;

  explicit SipHash(const Key& key);

  // SipHash-2-4 of `data` under the key (the reference implementation's
  // 64-bit output, as a little-endian integer).
  uint64_t operator()(std::string_view data) const;

 private:
  uint64_t k0_;
  uint64_t k1_;
};

}  // namespace tinytcp

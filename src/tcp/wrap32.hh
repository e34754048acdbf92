#pragma once

// Wrap32: a 32-bit TCP sequence number as it travels on the wire. Inside the
// stack sequence numbers are 64-bit absolute offsets from the ISN (which never
// wrap); Wrap32 converts between the two and compares wire values with the
// modular arithmetic of RFC 9293 §3.4.

#include <cstdint>

#include <fmt/format.h>

namespace tinytcp::tcp {

class Wrap32 {
 public:
  constexpr Wrap32() = default;
  constexpr explicit Wrap32(uint32_t raw) : raw_(raw) {}

  // The wire value of absolute sequence number `n` (0 is the ISN itself).
  static constexpr Wrap32 wrap(uint64_t n, Wrap32 zero_point) {
    return Wrap32{zero_point.raw_ + static_cast<uint32_t>(n)};
  }

  // The absolute sequence number closest to `checkpoint` that wraps to this
  // value. Ties (exactly 2^31 away) resolve to the smaller candidate.
  constexpr uint64_t unwrap(Wrap32 zero_point, uint64_t checkpoint) const {
    constexpr uint64_t kSpan = uint64_t{1} << 32;
    const uint32_t offset = raw_ - zero_point.raw_;
    // Candidate in the same 2^32 block as the checkpoint.
    uint64_t candidate = (checkpoint & ~(kSpan - 1)) | offset;
    if (candidate > checkpoint && candidate - checkpoint >= kSpan / 2 && candidate >= kSpan) {
      candidate -= kSpan;
    } else if (candidate < checkpoint && checkpoint - candidate > kSpan / 2) {
      candidate += kSpan;
    }
    return candidate;
  }

  constexpr uint32_t raw() const { return raw_; }

  constexpr Wrap32 operator+(uint32_t n) const { return Wrap32{raw_ + n}; }
  constexpr Wrap32 operator-(uint32_t n) const { return Wrap32{raw_ - n}; }
  // Signed distance a - b in sequence space (RFC 9293 §3.4 comparisons).
  friend constexpr int32_t operator-(Wrap32 a, Wrap32 b) {
    return static_cast<int32_t>(a.raw_ - b.raw_);
  }
  friend constexpr bool operator==(Wrap32 a, Wrap32 b) { return a.raw_ == b.raw_; }
  friend constexpr bool operator!=(Wrap32 a, Wrap32 b) { return a.raw_ != b.raw_; }

 private:
  uint32_t raw_ = 0;
};

// Wrap-safe ordering: true when a precedes b in sequence space.
constexpr bool seq_lt(Wrap32 a, Wrap32 b) {
  return (a - b) < 0;
}
constexpr bool seq_le(Wrap32 a, Wrap32 b) {
  return (a - b) <= 0;
}
constexpr bool seq_gt(Wrap32 a, Wrap32 b) {
  return (a - b) > 0;
}
constexpr bool seq_ge(Wrap32 a, Wrap32 b) {
  return (a - b) >= 0;
}

}  // namespace tinytcp::tcp

template <>
struct fmt::formatter<tinytcp::tcp::Wrap32> : fmt::formatter<uint32_t> {
  template <typename FormatContext>
  auto format(tinytcp::tcp::Wrap32 w, FormatContext& ctx) const -> decltype(ctx.out()) {
    return fmt::formatter<uint32_t>::format(w.raw(), ctx);
  }
};

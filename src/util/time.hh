#pragma once

// Time for the sans-I/O core. Nothing in the core reads a clock: an adapter in
// io/ reads the system clock and hands `Instant`s and `Duration`s down. Tests
// drive the same code with a manual clock.

#include <chrono>
#include <cstdint>

#include <fmt/format.h>

namespace tinytcp {

using Duration = std::chrono::nanoseconds;

// A point on a monotonic time line whose origin belongs to whoever made it
// (the event loop's start, or zero in a test).
class Instant {
 public:
  constexpr Instant() = default;
  static constexpr Instant from_epoch(Duration since_epoch) { return Instant{since_epoch}; }
  constexpr Duration since_epoch() const { return since_epoch_; }

  constexpr Instant& operator+=(Duration d) {
    since_epoch_ += d;
    return *this;
  }
  constexpr Instant& operator-=(Duration d) {
    since_epoch_ -= d;
    return *this;
  }
  friend constexpr Instant operator+(Instant t, Duration d) { return t += d; }
  friend constexpr Instant operator-(Instant t, Duration d) { return t -= d; }
  friend constexpr Duration operator-(Instant a, Instant b) {
    return a.since_epoch_ - b.since_epoch_;
  }
  friend constexpr bool operator==(Instant a, Instant b) {
    return a.since_epoch_ == b.since_epoch_;
  }
  friend constexpr bool operator!=(Instant a, Instant b) {
    return a.since_epoch_ != b.since_epoch_;
  }
  friend constexpr bool operator<(Instant a, Instant b) { return a.since_epoch_ < b.since_epoch_; }
  friend constexpr bool operator<=(Instant a, Instant b) {
    return a.since_epoch_ <= b.since_epoch_;
  }
  friend constexpr bool operator>(Instant a, Instant b) { return a.since_epoch_ > b.since_epoch_; }
  friend constexpr bool operator>=(Instant a, Instant b) {
    return a.since_epoch_ >= b.since_epoch_;
  }

 private:
  constexpr explicit Instant(Duration since_epoch) : since_epoch_(since_epoch) {}
  Duration since_epoch_{0};
};

// Whole milliseconds, for configuration edges and logs.
constexpr int64_t to_ms(Duration d) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
}
// Seconds as a double, for rates and summaries.
constexpr double to_seconds(Duration d) {
  return std::chrono::duration<double>(d).count();
}

}  // namespace tinytcp

template <>
struct fmt::formatter<tinytcp::Duration> : fmt::formatter<double> {
  template <typename FormatContext>
  auto format(tinytcp::Duration d, FormatContext& ctx) const -> decltype(ctx.out()) {
    ctx.advance_to(
        fmt::formatter<double>::format(std::chrono::duration<double, std::milli>(d).count(), ctx));
    return fmt::format_to(ctx.out(), "ms");
  }
};

template <>
struct fmt::formatter<tinytcp::Instant> : fmt::formatter<tinytcp::Duration> {
  template <typename FormatContext>
  auto format(tinytcp::Instant t, FormatContext& ctx) const -> decltype(ctx.out()) {
    ctx.advance_to(fmt::format_to(ctx.out(), "t+"));
    return fmt::formatter<tinytcp::Duration>::format(t.since_epoch(), ctx);
  }
};

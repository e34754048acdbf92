#include "tcp/pacer.hh"

#include <algorithm>
#include <chrono>

namespace tinytcp::tcp {

namespace {

// Time to send `bytes` (a segment or two: far below 2^34) at `rate` bytes
// per second, rounded up so that pacing is never faster than the rate.
Duration time_at_rate(uint64_t bytes, uint64_t rate) {
  const uint64_t r = std::max<uint64_t>(rate, 1);
  return Duration(static_cast<int64_t>((bytes * 1'000'000'000ull + r - 1) / r));
}

}  // namespace

bool Pacer::allows_at(uint64_t bytes, uint64_t rate, uint32_t smss, Instant now) {
  // A release may carry a burst of max(2 segments, 1 ms at the rate): the
  // paced stream may run that far ahead of now.
  const Duration burst =
      std::max<Duration>(time_at_rate(2 * uint64_t{smss}, rate), std::chrono::milliseconds(1));
  const Instant base = std::max(next_, now);
  if ((base - now) + time_at_rate(bytes, rate) <= burst) {
    return true;
  }
  // Wait until the paced stream is back at now: a whole burst then fits.
  release_ = next_;
  return false;
}

void Pacer::advance(uint64_t bytes, uint64_t rate, Instant now) {
  next_ = std::max(next_, now) + time_at_rate(bytes, rate);
}

}  // namespace tinytcp::tcp

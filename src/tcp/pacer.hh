#pragma once

// Pacer: spreads transmissions at CongestionControl::pacing_rate() instead
// of sending a window in one burst. The paced stream has its own clock,
// which may run up to one burst (two segments, or 1 ms at the rate) ahead
// of now; a transmission that would take it further waits for release().
//
// Without a rate (most algorithms) everything is allowed at once.

#include <cstdint>
#include <optional>

#include "util/time.hh"

namespace tinytcp::tcp {

class Pacer {
 public:
  // Whether `bytes` may leave at `now`; if not, release() says when sending
  // resumes. `rate`: bytes per second, nullopt unpaced.
  bool allows(uint64_t bytes, std::optional<uint64_t> rate, uint32_t smss, Instant now) {
    return !rate || allows_at(bytes, *rate, smss, now);
  }
  // `bytes` left at `now`.
  void on_sent(uint64_t bytes, std::optional<uint64_t> rate, Instant now) {
    if (rate) {
      advance(bytes, *rate, now);
    }
  }
  // When sending stopped for pacing resumes.
  const std::optional<Instant>& release() const { return release_; }
  void clear_release() { release_.reset(); }

 private:
  bool allows_at(uint64_t bytes, uint64_t rate, uint32_t smss, Instant now);
  void advance(uint64_t bytes, uint64_t rate, Instant now);

  Instant next_;  // the paced stream's clock
  std::optional<Instant> release_;
};

}  // namespace tinytcp::tcp

#pragma once

// RateSampler: delivery-rate estimation as draft-cheng-iccrg-delivery-rate-
// estimation describes it, for congestion controls that want rate samples
// (BBR). It stamps each transmission with the connection's delivered count
// and clocks (§3.2), turns the newest segment an ACK delivered into a rate
// sample (§3.3), and remembers when the application, not the network, set
// the sending rate (§3.4).
//
// It keeps the delivered count (C.delivered) for every algorithm; the rest
// only while enabled. The TcpSender decides when the application limits.

#include <cstdint>
#include <optional>

#include "tcp/congestion/congestion_control.hh"
#include "tcp/sack_scoreboard.hh"
#include "util/time.hh"

namespace tinytcp::tcp {

class RateSampler {
 public:
  // CongestionControl::wants_rate_samples().
  void set_enabled(bool on) { enabled_ = on; }
  bool enabled() const { return enabled_; }

  // C.delivered: bytes acknowledged or sacked so far.
  uint64_t delivered() const { return delivered_; }
  void on_delivered(uint64_t bytes) { delivered_ += bytes; }

  // §3.2: stamps a transmission of `seg`; a flight that starts from an
  // empty pipe starts the clocks afresh.
  void stamp(OutstandingSegment& seg, bool pipe_was_empty, Instant now) {
    if (enabled_) {
      stamp_enabled(seg, pipe_was_empty, now);
    }
  }
  // §3.3: the sample of an ACK, from the newest segment it delivered (taken
  // from `board`); nullopt when disabled or nothing was delivered.
  std::optional<RateSample> sample(SackScoreboard& board, Duration min_rtt, uint64_t newly_lost,
                                   Instant now);
  // §3.4: the application limits the rate; the stretch ends once the
  // `in_flight` bytes now in flight are delivered.
  void mark_app_limited(uint64_t in_flight);

 private:
  void stamp_enabled(OutstandingSegment& seg, bool pipe_was_empty, Instant now);

  bool enabled_ = false;
  uint64_t delivered_ = 0;
  // C.delivered_time, C.first_sent_time and C.app_limited of §3.1 (0: not
  // app-limited; else the delivered count at which the stretch ends).
  Instant delivered_time_;
  Instant first_sent_time_;
  uint64_t app_limited_until_ = 0;
};

}  // namespace tinytcp::tcp

#pragma once

// RttEstimator: the RFC 6298 round-trip time estimator and retransmission
// timeout of one connection. The sender feeds it samples it has already
// screened (Karn's rule, RFC 6298 §3; timestamp echoes, RFC 7323 §4) and asks
// it for the current RTO, which it doubles on each expiry (§5.5) until the next
// valid sample. It keeps no timer itself.

#include <cstdint>

#include "util/time.hh"

namespace tinytcp::tcp {

class RttEstimator {
 public:
  // RFC 6298 §2: G, the clock granularity. Our clock is finer, but TSecr-based
  // samples are in milliseconds, so 1 ms keeps RTO above SRTT + 1 tick.
  static constexpr Duration kGranularity = std::chrono::milliseconds(1);

  RttEstimator(Duration initial, Duration min, Duration max);

  // One measurement R. `expected_samples` is RFC 7323 Appendix G's
  // ExpectedSamples = ceil(FlightSize / (SMSS * 2)) when every ACK is sampled
  // (alpha and beta are divided by it); 1 for one sample per round trip.
  void add_sample(Duration rtt, uint32_t expected_samples = 1);

  // RFC 6298 §5.5: RTO <- RTO * 2, bounded by the maximum (§2.5).
  void backoff();

  // RFC 6298 §5.7: after the SYN timed out, RTO is at least 3 s once data
  // transmission begins (unless a sample has been taken since).
  void raise_to_at_least(Duration floor);

  Duration rto() const { return rto_; }
  Duration srtt() const { return srtt_; }
  Duration rttvar() const { return rttvar_; }
  Duration min_rtt() const { return min_rtt_; }  // 0 until the first sample
  Duration latest_rtt() const { return latest_; }
  bool has_sample() const { return has_sample_; }
  uint32_t backoffs() const { return backoffs_; }  // since the last sample

 private:
  Duration clamp(Duration d) const;
  void recompute();

  Duration min_;
  Duration max_;
  Duration rto_;
  Duration srtt_{0};
  Duration rttvar_{0};
  Duration min_rtt_{0};
  Duration latest_{0};
  bool has_sample_ = false;
  uint32_t backoffs_ = 0;
};

}  // namespace tinytcp::tcp

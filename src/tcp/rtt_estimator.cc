#include "tcp/rtt_estimator.hh"

#include <algorithm>

namespace tinytcp::tcp {

RttEstimator::RttEstimator(Duration initial, Duration min, Duration max)
    : min_(min), max_(std::max(min, max)), rto_(clamp(initial)) {}

Duration RttEstimator::clamp(Duration d) const {
  // RFC 6298 §2.4 (minimum; ours is configurable, 200 ms by default as in
  // Linux) and §2.5 (a maximum of at least 60 s).
  return std::min(std::max(d, min_), max_);
}

void RttEstimator::recompute() {
  // RFC 6298 §2.2/§2.3: RTO <- SRTT + max(G, K * RTTVAR), K = 4.
  rto_ = clamp(srtt_ + std::max(kGranularity, 4 * rttvar_));
}

void RttEstimator::add_sample(Duration rtt, uint32_t expected_samples) {
  if (rtt < Duration::zero()) {
    return;
  }
  latest_ = rtt;
  if (!has_sample_ || rtt < min_rtt_) {
    min_rtt_ = rtt;
  }
  backoffs_ = 0;
  if (!has_sample_) {
    // RFC 6298 §2.2: SRTT <- R, RTTVAR <- R/2.
    srtt_ = rtt;
    rttvar_ = rtt / 2;
    has_sample_ = true;
    recompute();
    return;
  }
  // RFC 6298 §2.3 with alpha = 1/8, beta = 1/4, both divided by
  // ExpectedSamples (RFC 7323 Appendix G). RTTVAR first: it uses the old SRTT.
  const int64_t k = std::max<int64_t>(1, expected_samples);
  const Duration err = rtt > srtt_ ? rtt - srtt_ : srtt_ - rtt;
  rttvar_ += (err - rttvar_) / (4 * k);
  srtt_ += (rtt - srtt_) / (8 * k);
  recompute();
}

void RttEstimator::backoff() {
  rto_ = std::min(rto_ * 2, max_);
  ++backoffs_;
}

void RttEstimator::raise_to_at_least(Duration floor) {
  rto_ = clamp(std::max(rto_, floor));
}

}  // namespace tinytcp::tcp

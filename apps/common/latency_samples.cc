#include "common/latency_samples.hh"

#include <algorithm>
#include <cmath>

namespace tinytcp::apps {

void LatencySamples::add(Duration latency) {
  ++count_;
  total_ += latency;
  max_ = std::max(max_, latency);
  if (samples_.size() < max_samples_) {
    samples_.push_back(latency);
    return;
  }
  // Reservoir sampling (Algorithm R): every sample so far kept with equal odds.
  const uint64_t slot = rng_.uniform(0, count_ - 1);
  if (slot < samples_.size()) {
    samples_[slot] = latency;
  }
}

LatencySummary LatencySamples::summary() const {
  LatencySummary s;
  s.count = count_;
  if (count_ == 0) {
    return s;
  }
  s.mean = total_ / static_cast<int64_t>(count_);
  s.max = max_;
  std::vector<Duration> sorted = samples_;
  std::sort(sorted.begin(), sorted.end());
  const auto rank = [&](double p) {
    const auto r = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
    return sorted[std::clamp<size_t>(r, 1, sorted.size()) - 1];
  };
  s.p50 = rank(50);
  s.p90 = rank(90);
  s.p99 = rank(99);
  return s;
}

}  // namespace tinytcp::apps

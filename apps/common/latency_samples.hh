#pragma once

// LatencySamples: the latencies tt-perf measured (one per transaction or
// message), summarized as nearest-rank percentiles (p50, p90, p99) and the
// maximum. Bounded: past kMaxSamples it keeps a uniform reservoir sample
// (seeded), so a long run neither grows without limit nor skews early.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "util/random.hh"
#include "util/time.hh"

namespace tinytcp::apps {

struct LatencySummary {
  uint64_t count = 0;  // every sample added, kept or not
  Duration mean{};
  Duration p50{};
  Duration p90{};
  Duration p99{};
  Duration max{};
};

class LatencySamples {
 public:
  static constexpr size_t kMaxSamples = 1 << 20;

  explicit LatencySamples(size_t max_samples = kMaxSamples, uint64_t seed = 1)
      : max_samples_(max_samples), rng_(seed) {}

  void add(Duration latency);
  // Nearest rank: the smallest sample with at least p% of them at or below it.
  LatencySummary summary() const;

 private:
  size_t max_samples_;
  Rng rng_;
  std::vector<Duration> samples_;
  uint64_t count_ = 0;
  Duration total_{};
  Duration max_{};
};

}  // namespace tinytcp::apps

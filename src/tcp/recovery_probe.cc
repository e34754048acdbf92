#include "tcp/recovery_probe.hh"

#include <algorithm>
#include <chrono>

namespace tinytcp::tcp {

void RecoveryProbe::arm(Instant now, Duration rtt, Instant rto_deadline) {
  static constexpr Duration kFloor = std::chrono::milliseconds(1);
  const Duration pto = std::max(2 * rtt, kFloor) * (1u << std::min(probes_out_, 16u));
  if (now + pto < rto_deadline) {
    deadline_ = now + pto;
  }
}

}  // namespace tinytcp::tcp

#include "tcp/tail_loss_probe.hh"

#include <algorithm>
#include <chrono>

namespace tinytcp::tcp {

void TailLossProbe::arm(Instant now, const RttEstimator& rtt, bool one_segment,
                        Duration max_ack_delay, Instant rto_deadline) {
  Duration pto = std::chrono::seconds(1);
  if (rtt.has_sample()) {
    pto = 2 * rtt.srtt();
    if (one_segment) {
      pto += max_ack_delay;
    }
  }
  pto = std::max(pto, kMinTimeout);
  pto_deadline_ = std::min(now + pto, rto_deadline);
}

bool TailLossProbe::on_ack(uint64_t ack, bool duplicate, bool sacks, bool dsack) {
  if (!end_seq_ || ack < *end_seq_) {
    return false;
  }
  if (!is_retrans_ || dsack) {
    end_episode();  // new data, or the original arrived as well: no loss
    return false;
  }
  if (ack > *end_seq_) {
    // Only the probe arrived: the original was lost, and the probe repaired it.
    end_episode();
    return true;
  }
  if (duplicate && !sacks) {
    end_episode();  // a duplicate ACK for the second copy: no loss
  }
  return false;
}

}  // namespace tinytcp::tcp

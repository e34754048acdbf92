#pragma once

// TailLossProbe: the TLP half of RFC 8985 RACK-TLP. When the last segments
// of a flight are lost there are no later ACKs to reveal it, and only the
// RTO would; a probe timeout (PTO, about two round trips) sends one segment
// first (new data, or the last segment again), whose ACK lets SACK and RACK
// find the loss. It also tells whether a probe repaired a loss, which then
// gets one congestion response (§7.4).
//
// It keeps the timer and the episode; the TcpSender decides whether a probe
// is allowed (§7.2) and sends it.

#include <chrono>
#include <cstdint>
#include <optional>

#include "tcp/rtt_estimator.hh"
#include "util/time.hh"

namespace tinytcp::tcp {

class TailLossProbe {
 public:
  // The least PTO. §7.2 gives 2 SRTT and no floor, but an SRTT of zero (or
  // of microseconds, on a TUN device or loopback) would probe at once, before
  // the peer could answer, again and again; Linux adds TCP_TIMEOUT_MIN (2 ms).
  static constexpr Duration kMinTimeout = std::chrono::milliseconds(2);

  std::optional<Instant> deadline() const { return pto_deadline_; }
  void cancel() { pto_deadline_.reset(); }
  // §7.2 TLP_calc_PTO: 2 SRTT, plus the peer's delayed ACK (`max_ack_delay`)
  // when one segment alone is in flight and cannot elicit an immediate ACK
  // (1 s before any RTT sample); never less than kMinTimeout, never after
  // `rto_deadline`.
  void arm(Instant now, const RttEstimator& rtt, bool one_segment, Duration max_ack_delay,
           Instant rto_deadline);
  // A probe went out: TLP.end_seq is SND.NXT now; `retransmission`: it was
  // the last segment again, not new data.
  void sent(uint64_t end_seq, bool retransmission) {
    end_seq_ = end_seq;
    is_retrans_ = retransmission;
  }
  // A probe is unanswered.
  bool outstanding() const { return end_seq_.has_value(); }
  // §7.4: true when this ACK shows that the probe, a retransmission,
  // repaired a loss (the caller answers with one congestion response).
  // `duplicate`: a duplicate ACK without data; `sacks`: it carries SACK
  // blocks; `dsack`: one of them is a D-SACK.
  bool on_ack(uint64_t ack, bool duplicate, bool sacks, bool dsack);
  // Whether an ACK of `ack` covers the probe (on_ack() has something to
  // decide).
  bool answered_by(uint64_t ack) const { return end_seq_ && ack >= *end_seq_; }
  // The episode is over (answered, or a recovery took over).
  void end_episode() {
    end_seq_.reset();
    pto_deadline_.reset();
  }

 private:
  std::optional<Instant> pto_deadline_;
  std::optional<uint64_t> end_seq_;  // TLP.end_seq
  bool is_retrans_ = false;          // TLP.is_retrans
};

}  // namespace tinytcp::tcp

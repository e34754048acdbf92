#pragma once

// RecoveryProbe: TcpConfig::recovery_probes, a probe timeout for where a
// tail loss probe is not allowed (RFC 8985 §7.2): during a recovery, or
// with sacked segments. When every segment known to be lost has gone out
// again and the ACKs stop, the hole that holds SND.UNA back is sent again
// after 2 RTT (doubling with each unanswered probe) instead of waiting for
// the RTO, which would collapse the window.
//
// It keeps the timer and the backoff; the TcpSender decides whether a probe
// is allowed and sends it.

#include <cstdint>
#include <optional>

#include "util/time.hh"

namespace tinytcp::tcp {

class RecoveryProbe {
 public:
  std::optional<Instant> deadline() const { return deadline_; }
  void cancel() { deadline_.reset(); }
  // 2 `rtt` (the shorter of SRTT and the latest RACK.rtt; at least 1 ms),
  // doubled for each unanswered probe; not armed
  // unless it comes before `rto_deadline` (the RTO sends the same segment).
  // Out-of-order and hole-filling segments are acknowledged at once (RFC
  // 5681 §4.2), so no delayed-ACK allowance.
  void arm(Instant now, Duration rtt, Instant rto_deadline);
  void sent() { ++probes_out_; }
  // An ACK made progress (or a timeout took over): the backoff starts over.
  void reset_backoff() { probes_out_ = 0; }

 private:
  std::optional<Instant> deadline_;
  uint32_t probes_out_ = 0;  // sent since the last ACK that made progress
};

}  // namespace tinytcp::tcp

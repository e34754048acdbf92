#pragma once

// NewReno: RFC 6582. Reno's window, but a partial ACK during cumulative-ACK
// fast recovery keeps the connection in recovery and retransmits the next
// unacknowledged segment (RFC 6582 §3.2 step 3), so several losses in one
// window are repaired without a timeout.

#include "tcp/congestion/reno.hh"

namespace tinytcp::tcp {

class NewReno : public Reno {
 public:
  explicit NewReno(const CongestionParams& params) : Reno(params) {}

  std::string_view name() const override { return "newreno"; }
  PartialAckResponse on_partial_ack(const AckEvent& ack) override;
};

}  // namespace tinytcp::tcp

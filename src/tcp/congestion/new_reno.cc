#include "tcp/congestion/new_reno.hh"

namespace tinytcp::tcp {

PartialAckResponse NewReno::on_partial_ack(const AckEvent& ack) {
  (void)ack;
  // RFC 6582 §3.2 step 3 (partial ACK): retransmit the first unacknowledged
  // segment and stay in recovery. The window stays at ssthresh; the sender's
  // pipe estimate does the deflation by the newly acknowledged bytes.
  return PartialAckResponse::RetransmitNextUnacked;
}

}  // namespace tinytcp::tcp

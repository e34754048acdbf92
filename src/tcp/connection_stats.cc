#include "tcp/connection_stats.hh"

namespace tinytcp::tcp {

ConnectionSummary summarize(const ConnectionStats& stats, const TcpSender& sender,
                            const TcpReceiver& receiver) {
  ConnectionSummary s;
  const SenderStats& tx = sender.stats();
  s.segments_in = stats.segments_in;
  s.bytes_in = stats.bytes_in;
  s.segments_out = stats.segments_out;
  s.bytes_out = stats.bytes_out;
  s.retransmits = tx.retransmitted_segments;
  s.fast_retransmits = tx.fast_retransmits;
  s.rtos = tx.rto_expirations;
  s.sack_recovered_segments = tx.sack_recovered_segments;
  s.rack_marked_lost = tx.rack_marked_lost;
  s.lost_retransmissions = tx.lost_retransmissions_detected;
  s.tlp_probes = tx.tlp_probes;
  s.tlp_recoveries = tx.tlp_recoveries;
  s.recovery_probes = tx.recovery_probes;
  s.duplicate_acks = tx.duplicate_acks;
  s.challenge_acks = stats.challenge_acks;
  s.drops = stats.drops.total() + receiver.stats().drops.total();
  s.sender = sender.state();
  return s;
}

}  // namespace tinytcp::tcp

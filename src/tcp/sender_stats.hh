#pragma once

// What a TcpSender reports: how it classified each ACK (RFC 9293 §3.10.7.4,
// RFC 5961 §5), the ACK fields it ignored, why it gave up, its counters,
// and a snapshot of its congestion state for traces.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "util/counters.hh"
#include "util/time.hh"

namespace tinytcp::tcp {

// How an incoming ACK relates to what was sent (RFC 9293 §3.10.7.4, RFC 5961 §5).
enum class AckResult {
  NoAck,      // the segment carries no ACK flag
  Advanced,   // SND.UNA < SEG.ACK <= SND.NXT: new data acknowledged
  Duplicate,  // SEG.ACK == SND.UNA
  Old,        // SND.UNA - MAX.SND.WND <= SEG.ACK < SND.UNA: ignore the ACK field
  TooOld,     // below that: RFC 5961 drop (connection sends an ACK)
  Unsent,     // SEG.ACK > SND.NXT: acknowledges something not yet sent (send an ACK, drop)
};
constexpr size_t kAckResultCount = 6;
std::string_view to_string(AckResult r);

// Fields of an acceptable ACK that were nonsense and ignored (the rest of the
// ACK is still used). Each is counted in SenderStats::input_errors.
enum class SenderInputError {
  SackBlockInverted,      // left edge not below the right edge
  SackBlockOutOfWindow,   // outside [SEG.ACK, SND.NXT] and not a D-SACK (RFC 2883)
  SackNotNegotiated,      // SACK blocks although SACK was not negotiated
  WindowShrunk,           // right edge moved left (RFC 9293 §3.8.6.2.1: accepted, counted)
  TimestampEchoInFuture,  // TSecr later than any TSval we sent (RFC 7323 §4)
  WindowScaleTooLarge,    // peer's shift > 14, clamped (RFC 7323 §2.3)
  PeerMssTooSmall,        // peer's MSS below 64, raised
  kCount
};
std::string_view to_string(SenderInputError e);

enum class SenderFailure {
  MaxRetransmissions,  // TcpConfig::max_retransmissions consecutive retransmissions
  UserTimeout,         // data unacknowledged for TcpConfig::user_timeout
  KeepaliveTimeout,    // TcpConfig::keepalive_probes keepalive probes unanswered
};
std::string_view to_string(SenderFailure f);

struct SenderStats {
  uint64_t segments_sent = 0;
  uint64_t bytes_sent = 0;  // payload bytes, retransmissions included
  uint64_t retransmitted_segments = 0;
  uint64_t retransmitted_bytes = 0;
  uint64_t fast_retransmits = 0;
  uint64_t rto_expirations = 0;
  uint64_t sack_recovered_segments = 0;  // retransmitted because SACK showed a hole
  uint64_t duplicate_acks = 0;
  uint64_t zero_window_probes = 0;
  uint64_t keepalive_probes = 0;
  uint64_t dsack_blocks = 0;  // RFC 2883 duplicate reports (ignored)
  // Retransmissions cut to leave room for SACK blocks (RFC 6691).
  uint64_t retransmissions_split = 0;
  // Timeouts with the segment at SND.UNA sacked: SACK marks forgotten.
  uint64_t sack_reneging = 0;
  // Zero-window probes taken back when the window opened, sent again at once.
  uint64_t probes_taken_back = 0;
  uint64_t path_mtu_updates = 0;           // MSS lowered by an ICMP frag-needed
  uint64_t black_hole_mss_reductions = 0;  // MSS lowered after repeated timeouts
  uint64_t path_mtu_raises = 0;  // a lowered path MTU forgotten (TcpConfig::path_mtu_expiry)
  // Segments the device would not take (ENOBUFS, EAGAIN): marked lost and
  // sent again at once; and the congestion responses to them (one a window).
  uint64_t local_send_failures = 0;
  uint64_t local_congestion_events = 0;
  // Timestamp echoes of an earlier copy of a retransmitted segment, not used
  // as RTT samples.
  uint64_t ambiguous_rtt_samples = 0;
  // RFC 8985 RACK-TLP.
  uint64_t rack_marked_lost = 0;               // segments RACK marked lost
  uint64_t lost_retransmissions_detected = 0;  // of them, retransmissions
  uint64_t tlp_probes = 0;                     // tail loss probes sent
  uint64_t tlp_recoveries = 0;                 // probes that repaired a loss (§7.4)
  uint64_t recovery_probes = 0;                // TcpConfig::recovery_probes sent
  // Every ACK seen, by classification (index: AckResult).
  std::array<uint64_t, kAckResultCount> acks{};
  EnumCounters<SenderInputError> input_errors;

  uint64_t ack_count(AckResult r) const { return acks[static_cast<size_t>(r)]; }
};

// A snapshot for traces and summaries.
struct SenderState {
  uint64_t cwnd = 0;
  uint64_t ssthresh = 0;
  uint64_t bytes_in_flight = 0;
  Duration srtt{0};
  Duration rttvar{0};
  Duration rto{0};
  bool in_recovery = false;
  bool tlp_outstanding = false;  // an RFC 8985 tail loss probe is unanswered
};

}  // namespace tinytcp::tcp

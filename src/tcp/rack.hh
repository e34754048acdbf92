#pragma once

// Rack: the RACK half of RACK-TLP (RFC 8985 §6), time-based loss detection
// for a SACK sender. It remembers the send time of the most recently sent
// segment the peer has delivered (RACK.xmit_ts) and the RTT of that delivery;
// any unsacked segment sent more than a reordering window before it, and
// outstanding for longer than RACK.rtt + reo_wnd, is lost. Retransmissions
// are judged by their own send time, so a lost retransmission is found within
// about one round trip instead of by the retransmission timer.
//
// It marks losses on the SackScoreboard (which keeps pipe and NextSeg) and
// reports a reordering timer for segments not yet due; the sender decides
// what a loss means (recovery, congestion response) and retransmits. The tail
// loss probe (§7) lives in the sender, which owns the timers and the data.
// Sans-I/O: time comes in as arguments.

#include <cstdint>
#include <optional>

#include "tcp/sack_scoreboard.hh"
#include "util/time.hh"

namespace tinytcp::tcp {

class Rack {
 public:
  // RFC 8985 §6.2 step 4: DSACK-free recoveries before the window shrinks back.
  static constexpr uint32_t kReoWndPersist = 16;

  // What one ACK told, for steps 2-4.
  struct AckInfo {
    Instant now;
    const SackScoreboard::Delivery* delivered = nullptr;  // what it newly delivered
    bool dsack = false;                                   // it carried a D-SACK block
    uint64_t snd_una = 0;                                 // after the ACK
    uint64_t snd_nxt = 0;
  };
  // What reo_wnd depends on (step 4).
  struct WindowInputs {
    Duration min_rtt{0};
    Duration srtt{0};
    bool in_recovery = false;  // fast recovery or RTO recovery
    uint64_t sacked_segments = 0;
  };
  struct Detection {
    uint64_t marked_lost = 0;           // segments newly marked lost
    uint64_t lost_retransmissions = 0;  // of them, retransmissions
  };

  // Steps 2-4 for one ACK: RACK.xmit_ts/end_seq/rtt, reordering, DSACK rounds.
  void on_ack(const AckInfo& ack);
  // Step 4: a fast or RTO recovery ended (the DSACK-widened window decays).
  void on_recovery_exit();

  // Step 4: RACK.reo_wnd.
  Duration reo_wnd(const WindowInputs& in) const;

  // Steps 5-6 (and §6.3 when the timer fired): marks every segment sent
  // before RACK.xmit_ts that has waited RACK.rtt + reo_wnd; arms the
  // reordering timer for the first that has not yet. reo_wnd is computed
  // only when some segment was sent before RACK.xmit_ts.
  Detection detect_losses(SackScoreboard& board, Instant now, const WindowInputs& in);

  // The reordering timer; nullopt when not armed.
  std::optional<Instant> deadline() const { return timer_; }
  void cancel_timer() { timer_.reset(); }

  bool has_delivery() const { return xmit_ts_.has_value(); }
  std::optional<Instant> xmit_ts() const { return xmit_ts_; }
  uint64_t end_seq() const { return end_seq_; }
  Duration rtt() const { return rtt_; }
  uint64_t fack() const { return fack_; }
  bool reordering_seen() const { return reordering_seen_; }
  uint32_t reo_wnd_mult() const { return reo_wnd_mult_; }

 private:
  std::optional<Instant> xmit_ts_;  // RACK.xmit_ts
  uint64_t end_seq_ = 0;            // RACK.end_seq
  // Transmission order of RACK.xmit_ts's segment (OutstandingSegment::sent_order),
  // what RACK_sent_after compares.
  uint64_t xmit_order_ = 0;
  Duration rtt_{0};    // RACK.rtt
  uint64_t fack_ = 0;  // RACK.fack: highest end delivered
  bool reordering_seen_ = false;
  uint32_t reo_wnd_mult_ = 1;
  uint32_t reo_wnd_persist_ = 0;
  std::optional<uint64_t> dsack_round_;
  std::optional<Instant> timer_;
};

}  // namespace tinytcp::tcp

#pragma once

// LossRecovery: fast retransmit and fast recovery (RFC 5681 §3.2, RFC 6582
// NewReno, RFC 6675 SACK-based). It counts duplicate ACKs, decides when a
// loss starts a recovery (three duplicate ACKs, or the scoreboard marking a
// segment lost), reduces the window once per recovery through the
// CongestionControl, and ends the recovery at the recovery point. Without
// SACK it estimates the bytes that duplicate ACKs say have left the network
// (SendState::reno_dup_bytes) and lets RFC 3042 limited transmit send one
// new segment for each of the first two duplicate ACKs.
//
// It marks what to retransmit on the scoreboard; the Segmenter sends it.

#include <cstdint>

#include "tcp/congestion/congestion_control.hh"
#include "tcp/rack.hh"
#include "tcp/send_state.hh"
#include "util/time.hh"

namespace tinytcp::tcp {

class LossRecovery {
 public:
  bool in_recovery() const { return in_recovery_; }
  // RFC 6582's `recover`: SND.NXT when the last recovery (or timeout) began.
  uint64_t recovery_point() const { return recover_; }
  void set_recovery_point(uint64_t seq) { recover_ = seq; }
  // In fast recovery, or still repairing what a timeout marked lost.
  bool repairing(const SendState& s) const { return in_recovery_ || s.snd_una < recover_; }
  // RFC 6582 §3.2 step 2: a loss may start a recovery unless it is from
  // before the last recovery point, and only with something outstanding.
  bool may_enter(const SendState& s) const { return s.snd_una >= recover_ && !s.board.empty(); }

  // An ACK arrived; `duplicate` by RFC 5681 §2's definition.
  void count_ack(SendState& s, bool duplicate, bool advanced);
  // After the ACK's SACK blocks, RTT and delivery went in: recovery exit,
  // partial ACKs and the duplicate ACK estimate, or the congestion
  // response to a plain ACK (unless a tail loss probe's repair answered
  // already: `tlp_reduced`). True when a recovery is to start now (enter()).
  bool on_ack(SendState& s, Rack& rack, bool advanced, uint64_t ack, bool duplicate,
              uint64_t acked_bytes, bool tlp_reduced, AckEvent& event);
  // RFC 6582 §3.2 step 2 / RFC 6675 §5 step 4: remember the recovery point,
  // reduce the window once, retransmit the first unacknowledged segment now.
  void enter(SendState& s, Instant now);
  // RFC 6582 §4 / RFC 6675 §5.1: a timeout leaves recovery, and duplicate
  // ACKs from the go-back must not start a fast retransmit.
  void on_timeout(SendState& s);

  // The next retransmission ignores cwnd (the one that starts a recovery).
  bool retransmit_now() const { return retransmit_now_; }
  void clear_retransmit_now() { retransmit_now_ = false; }
  // Sending stopped at cwnd since the last ACK of new data (RFC 7661).
  bool cwnd_limited() const { return cwnd_limited_; }
  void set_cwnd_limited(bool limited) { cwnd_limited_ = limited; }
  // A new segment of `length` left: counted when limited transmit sent it.
  void on_new_data_sent(const SendState& s, uint32_t length) {
    if (!in_recovery_ && s.reno_dup_bytes > 0) {
      limited_transmit_bytes_ += length;
    }
  }

 private:
  bool in_recovery_ = false;
  uint64_t recover_ = 0;
  uint32_t dupacks_ = 0;
  uint64_t limited_transmit_bytes_ = 0;  // sent by RFC 3042 limited transmit
  bool retransmit_now_ = false;
  bool cwnd_limited_ = false;
};

}  // namespace tinytcp::tcp

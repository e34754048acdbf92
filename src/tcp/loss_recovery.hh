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

#include <algorithm>
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
  // A cumulative ACK resets DupAcks, then a duplicate one (RFC 5681 §2, or
  // with SACK RFC 6675 §2: newly SACKed octets, even on an advancing ACK)
  // counts one (RFC 6675 §5).
  void count_ack(SendState& s, bool duplicate, bool advanced) {
    if (advanced) {
      dupacks_ = 0;
    }
    if (duplicate) {
      ++s.stats.duplicate_acks;
      ++dupacks_;
    }
  }
  // After the ACK's SACK blocks, RTT and delivery went in: recovery exit,
  // partial ACKs and the duplicate ACK estimate, or the congestion
  // response to a plain ACK (unless a tail loss probe's repair answered
  // already: `tlp_reduced`). True when a recovery is to start now (enter()).
  bool on_ack(SendState& s, Rack& rack, bool advanced, uint64_t ack, bool duplicate,
              uint64_t acked_bytes, bool tlp_reduced, AckEvent& event) {
    if (in_recovery_) {
      if (advanced) {
        if (ack >= recover_) {
          // RFC 6582 §3.2 step 3 full ACK / RFC 6675 §5: recovery ends.
          in_recovery_ = false;
          s.reno_dup_bytes = 0;
          event.in_flight = s.bytes_in_flight();
          s.cc->on_recovery_exit(event);
          rack.on_recovery_exit();
        } else if (!s.peer.sack) {
          // Partial ACK without SACK: the dupacks counted for the segments it
          // covers (all but the retransmitted one) leave the estimate.
          const uint64_t beyond = acked_bytes > s.smss ? acked_bytes - s.smss : 0;
          s.reno_dup_bytes -= std::min(s.reno_dup_bytes, beyond);
          event.in_flight = s.bytes_in_flight();
          if (s.cc->on_partial_ack(event) == PartialAckResponse::ExitRecovery) {
            in_recovery_ = false;
            s.reno_dup_bytes = 0;
            dupacks_ = 0;
          } else if (s.board.mark_front_lost()) {
            retransmit_now_ = true;  // RFC 6582 §3.2 step 3
          }
        }
      } else if (duplicate && !s.peer.sack) {
        // Each further duplicate ACK: one more segment has left the network
        // (RFC 5681 §3.2 step 4's window inflation, counted into pipe instead).
        s.reno_dup_bytes = std::min(s.reno_dup_bytes + s.smss, s.board.outstanding_bytes());
      }
      return false;
    }
    if (!s.peer.sack) {
      if (advanced) {
        s.reno_dup_bytes = 0;
        limited_transmit_bytes_ = 0;
      } else if (duplicate) {
        // RFC 3042 limited transmit: each of the first DupThresh - 1
        // duplicate ACKs lets one new segment out. (With SACK the sacked
        // bytes leave pipe and do the same.)
        s.reno_dup_bytes = std::min<uint64_t>(
            uint64_t{std::min(dupacks_, SackScoreboard::kDupThresh - 1)} * s.smss,
            s.board.outstanding_bytes());
      }
    }
    const bool loss = s.peer.sack ? (s.board.has_lost() || dupacks_ >= SackScoreboard::kDupThresh)
                                  : dupacks_ >= SackScoreboard::kDupThresh;
    // RFC 6582 §3.2 step 2: not again for losses from before the last
    // recovery point (or timeout).
    if (loss && may_enter(s)) {
      return true;
    }
    if (advanced && !tlp_reduced) {
      event.in_flight = s.bytes_in_flight();
      s.cc->on_ack(event);
    }
    return false;
  }
  // RFC 6582 §3.2 step 2 / RFC 6675 §5 step 4: remember the recovery point,
  // reduce the window once, retransmit the first unacknowledged segment now.
  void enter(SendState& s, Instant now);
  // A segment the device refused (TcpSender::on_send_failed; already marked
  // lost): a recovery as enter() starts one, with the window reduced once
  // and the refused segment sent at once, but the first unacknowledged
  // segment is not marked and no fast retransmit is counted.
  void enter_on_local_drop(SendState& s, Instant now);
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

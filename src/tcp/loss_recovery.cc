#include "tcp/loss_recovery.hh"

#include <algorithm>

namespace tinytcp::tcp {

void LossRecovery::count_ack(SendState& s, bool duplicate, bool advanced) {
  if (duplicate) {
    ++s.stats.duplicate_acks;
    ++dupacks_;
  } else if (advanced) {
    dupacks_ = 0;
  }
}

bool LossRecovery::on_ack(SendState& s, Rack& rack, bool advanced, uint64_t ack, bool duplicate,
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
      s.reno_dup_bytes =
          std::min<uint64_t>(uint64_t{std::min(dupacks_, SackScoreboard::kDupThresh - 1)} * s.smss,
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

void LossRecovery::enter(SendState& s, Instant now) {
  in_recovery_ = true;
  recover_ = s.snd_nxt;
  ++s.stats.fast_retransmits;
  if (!s.peer.sack) {
    s.reno_dup_bytes = std::min<uint64_t>(uint64_t{dupacks_} * s.smss, s.board.outstanding_bytes());
  }
  // RFC 5681 §3.2 step 2: segments sent by limited transmit are not part of
  // the FlightSize that sets ssthresh.
  const uint64_t flight = s.snd_nxt - s.snd_una;
  s.cc->on_congestion_event(
      LossEvent{now, flight - std::min(flight, limited_transmit_bytes_), s.bytes_in_flight()});
  limited_transmit_bytes_ = 0;
  s.board.mark_front_lost();
  retransmit_now_ = true;
}

void LossRecovery::on_timeout(SendState& s) {
  in_recovery_ = false;
  dupacks_ = 0;
  s.reno_dup_bytes = 0;
  limited_transmit_bytes_ = 0;
  recover_ = s.snd_nxt;
}

}  // namespace tinytcp::tcp

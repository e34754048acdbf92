#include "tcp/loss_recovery.hh"

#include <algorithm>

namespace tinytcp::tcp {

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

void LossRecovery::enter_on_local_drop(SendState& s, Instant now) {
  in_recovery_ = true;
  recover_ = s.snd_nxt;
  const uint64_t flight = s.snd_nxt - s.snd_una;
  s.cc->on_congestion_event(LossEvent{now, flight, s.bytes_in_flight()});
  limited_transmit_bytes_ = 0;
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

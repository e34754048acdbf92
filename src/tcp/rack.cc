#include "tcp/rack.hh"

#include <algorithm>

namespace tinytcp::tcp {

void Rack::on_ack(const AckInfo& ack) {
  const SackScoreboard::Delivery& d = *ack.delivered;
  // Step 2: the most recently sent delivered segment. The scoreboard has
  // already left out retransmissions whose sample would be ambiguous.
  if (d.newest_sent) {
    rtt_ = ack.now - *d.newest_sent;
    // RACK_sent_after(newest, RACK.xmit_ts), by transmission order.
    if (!xmit_ts_ || d.newest_order > xmit_order_) {
      xmit_ts_ = d.newest_sent;
      end_seq_ = d.newest_end;
      xmit_order_ = d.newest_order;
    }
  }
  // Step 3: an original transmission delivered below RACK.fack arrived out
  // of order (a retransmission below it is the repair of a hole).
  if (d.lowest_original_end < fack_) {
    reordering_seen_ = true;
  }
  fack_ = std::max(fack_, d.highest_end);

  // Step 4: widen the window once per round trip that reports a D-SACK.
  if (dsack_round_ && ack.snd_una >= *dsack_round_) {
    dsack_round_.reset();
  }
  if (!dsack_round_ && ack.dsack) {
    dsack_round_ = ack.snd_nxt;
    ++reo_wnd_mult_;
    reo_wnd_persist_ = kReoWndPersist;
  }
}

void Rack::on_recovery_exit() {
  if (reo_wnd_persist_ > 0 && --reo_wnd_persist_ == 0) {
    reo_wnd_mult_ = 1;
  }
}

Duration Rack::reo_wnd(const WindowInputs& in) const {
  // Step 4: without reordering seen, no patience once loss is evident.
  if (!reordering_seen_ && (in.in_recovery || in.sacked_segments >= SackScoreboard::kDupThresh)) {
    return Duration::zero();
  }
  const Duration wnd = in.min_rtt / 4 * static_cast<int64_t>(reo_wnd_mult_);
  return in.srtt > Duration::zero() ? std::min(wnd, in.srtt) : wnd;
}

Rack::Detection Rack::detect_losses(SackScoreboard& board, Instant now, const WindowInputs& in) {
  Detection out;
  timer_.reset();
  if (!xmit_ts_) {
    return out;
  }
  std::optional<Duration> reo;
  // Step 5. Entries never retransmitted were sent in sequence order, so the
  // first of them that is not due ends the walk: everything after it was
  // sent later (a retransmission after it, later still).
  for (size_t i = 0; i < board.size(); ++i) {
    const OutstandingSegment& seg = board[i];
    if (seg.sacked || (seg.lost && !seg.rexmit)) {
      continue;  // delivered, or lost and waiting for its retransmission
    }
    if (xmit_order_ <= seg.sent_order) {  // not RACK_sent_after(RACK.xmit_ts, seg)
      if (!seg.ever_retransmitted) {
        break;
      }
      continue;
    }
    if (!reo) {
      reo = reo_wnd(in);
    }
    const Instant due = seg.sent_at + rtt_ + *reo;
    if (due <= now) {
      const bool retransmission = seg.rexmit;
      if (board.mark_lost_by_time(i)) {
        ++out.marked_lost;
        out.lost_retransmissions += retransmission ? 1 : 0;
      }
      continue;
    }
    // Step 6 / §6.3: look again when the first pending one is due.
    if (!timer_ || due < *timer_) {
      timer_ = due;
    }
    if (!seg.ever_retransmitted) {
      break;
    }
  }
  return out;
}

}  // namespace tinytcp::tcp

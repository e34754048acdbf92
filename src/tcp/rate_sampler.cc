#include "tcp/rate_sampler.hh"

#include <algorithm>
#include <cmath>

namespace tinytcp::tcp {

void RateSampler::stamp_enabled(OutstandingSegment& seg, bool pipe_was_empty, Instant now) {
  if (pipe_was_empty) {
    first_sent_time_ = now;
    delivered_time_ = now;
  }
  seg.delivered = delivered_;
  seg.delivered_time = delivered_time_;
  seg.first_sent_time = first_sent_time_;
  seg.app_limited = app_limited_until_ != 0;
}

std::optional<RateSample> RateSampler::sample(SackScoreboard& board, Duration min_rtt,
                                              uint64_t newly_lost, Instant now) {
  if (!enabled_) {
    return std::nullopt;
  }
  const auto newest = board.take_newest_delivered();
  // §3.3: the app-limited stretch ends once its data is delivered.
  if (app_limited_until_ != 0 && delivered_ > app_limited_until_) {
    app_limited_until_ = 0;
  }
  if (!newest) {
    return std::nullopt;
  }
  delivered_time_ = now;
  first_sent_time_ = newest->sent_at;
  RateSample rs;
  rs.prior_delivered = newest->delivered;
  rs.delivered = delivered_ - newest->delivered;
  rs.is_app_limited = newest->app_limited;
  rs.send_elapsed = newest->sent_at - newest->first_sent_time;
  rs.ack_elapsed = now - newest->delivered_time;
  // §3.3: the slower of sending and acknowledging the flight; ACKs can be
  // compressed, but the network cannot deliver faster than we sent.
  rs.interval = std::max(rs.send_elapsed, rs.ack_elapsed);
  rs.newly_lost = newly_lost;
  if (!newest->ever_retransmitted) {
    rs.rtt = now - newest->sent_at;  // RFC 6298 §3 (Karn): only unambiguous ones
  }
  if (rs.interval > Duration::zero() && rs.interval >= min_rtt) {
    rs.delivery_rate = static_cast<uint64_t>(
        std::llround(static_cast<double>(rs.delivered) / to_seconds(rs.interval)));
  }
  return rs;
}

void RateSampler::mark_app_limited(uint64_t in_flight) {
  app_limited_until_ = std::max<uint64_t>(delivered_ + in_flight, 1);
}

}  // namespace tinytcp::tcp

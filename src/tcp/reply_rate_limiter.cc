#include "tcp/reply_rate_limiter.hh"

#include <chrono>

namespace tinytcp::tcp {

bool ReplyRateLimiter::allow_challenge_ack(Instant now, uint32_t per_second) {
  if (now - challenge_window_start_ >= std::chrono::seconds(1)) {
    challenge_window_start_ = now;
    challenge_acks_in_window_ = 0;
  }
  if (challenge_acks_in_window_ >= per_second) {
    return false;
  }
  ++challenge_acks_in_window_;
  return true;
}

bool ReplyRateLimiter::allow_invalid_reply(const TcpSegment& segment, Instant now,
                                           Duration interval) {
  // Linux's tcp_oow_rate_limited: data without SYN is not an ACK loop, and
  // its sender needs the duplicate ACK.
  if (!segment.payload.empty() && !segment.syn) {
    return true;
  }
  if (last_invalid_reply_ && now - *last_invalid_reply_ < interval) {
    return false;
  }
  last_invalid_reply_ = now;
  return true;
}

}  // namespace tinytcp::tcp

#pragma once

// ReplyRateLimiter: how often a connection may answer segments it will not
// accept. Challenge ACKs (RFC 5961 §3.2, §4, §5.2) are limited per second
// (RFC 5961 §7), and replies to other unacceptable segments without data
// to one per interval (Linux's tcp_invalid_ratelimit), so that neither a
// blind attacker nor two confused peers turn a connection into an ACK
// storm. It decides; TcpConnection sends and counts the refusals.

#include <cstdint>
#include <optional>

#include "tcp/tcp_segment.hh"
#include "util/time.hh"

namespace tinytcp::tcp {

class ReplyRateLimiter {
 public:
  // RFC 5961 §7: true if a challenge ACK may go out now (at most `per_second`
  // in each one-second interval); counts it.
  bool allow_challenge_ack(Instant now, uint32_t per_second);
  // Whether `segment`, unacceptable, may be answered now: always when it
  // carries data without SYN (its sender needs the duplicate ACK), else at
  // most once per `interval`.
  bool allow_invalid_reply(const TcpSegment& segment, Instant now, Duration interval);

 private:
  Instant challenge_window_start_;  // the current one-second interval
  uint32_t challenge_acks_in_window_ = 0;
  std::optional<Instant> last_invalid_reply_;
};

}  // namespace tinytcp::tcp

#include "tcp/reply_rate_limiter.hh"

#include <gtest/gtest.h>

namespace tinytcp::tcp {
namespace {

using namespace std::chrono_literals;

TcpSegment bare_ack() {
  TcpSegment s;
  s.ack = true;
  return s;
}

TEST(ReplyRateLimiterTest, ChallengeAcksLimitedPerSecondThenAllowedAgain) {
  ReplyRateLimiter limiter;
  const Instant t0 = Instant{} + 10s;
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(limiter.allow_challenge_ack(t0 + i * 1ms, 3)) << i;  // RFC 5961 §7
  }
  EXPECT_FALSE(limiter.allow_challenge_ack(t0 + 999ms, 3));
  EXPECT_TRUE(limiter.allow_challenge_ack(t0 + 1s, 3));  // a new one-second interval
}

TEST(ReplyRateLimiterTest, ReplyWithoutDataAtMostOncePerInterval) {
  ReplyRateLimiter limiter;
  const Instant t0 = Instant{} + 10s;
  EXPECT_TRUE(limiter.allow_invalid_reply(bare_ack(), t0, 500ms));
  EXPECT_FALSE(limiter.allow_invalid_reply(bare_ack(), t0 + 499ms, 500ms));
  EXPECT_TRUE(limiter.allow_invalid_reply(bare_ack(), t0 + 500ms, 500ms));
}

TEST(ReplyRateLimiterTest, DataWithoutSynIsAlwaysAnswered) {
  ReplyRateLimiter limiter;
  const Instant t0 = Instant{} + 10s;
  TcpSegment data = bare_ack();
  data.payload = "x";
  EXPECT_TRUE(limiter.allow_invalid_reply(bare_ack(), t0, 500ms));
  EXPECT_TRUE(limiter.allow_invalid_reply(data, t0 + 1ms, 500ms));
  TcpSegment syn_with_data = data;
  syn_with_data.syn = true;
  EXPECT_FALSE(limiter.allow_invalid_reply(syn_with_data, t0 + 2ms, 500ms));
}

}  // namespace
}  // namespace tinytcp::tcp

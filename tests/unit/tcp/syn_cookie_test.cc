#include "tcp/syn_cookie.hh"

#include <gtest/gtest.h>

namespace tinytcp::tcp {
namespace {

using std::chrono::seconds;

const CookieTuple kTuple{0xa9fe0101, 80, 0xa9fe0102, 40000};

TcpSegment syn_with(uint16_t mss, std::optional<uint8_t> shift, bool sack, bool timestamps) {
  TcpSegment syn;
  syn.syn = true;
  syn.seqno = Wrap32{777};
  syn.options.mss = mss;
  syn.options.window_scale = shift;
  syn.options.sack_permitted = sack;
  if (timestamps) {
    syn.options.timestamps = Timestamps{5000, 0};
  }
  return syn;
}

// The peer's ACK of our SYN-ACK: SEG.ACK = cookie + 1, TSecr = our TSval.
TcpSegment ack_of(const TcpSegment& syn_ack) {
  TcpSegment ack;
  ack.ack = true;
  ack.seqno = syn_ack.ackno;
  ack.ackno = syn_ack.seqno + 1;
  if (syn_ack.options.timestamps) {
    ack.options.timestamps = Timestamps{5001, syn_ack.options.timestamps->value};
  }
  return ack;
}

class SynCookiesTest : public ::testing::Test {
 protected:
  SynCookies cookies_{"0123456789abcdef-cookie-key"};
  TcpConfig config_;
  Instant now_ = Instant{} + seconds(1000);
};

TEST_F(SynCookiesTest, RoundTripCarriesMssWindowShiftSackAndTsval) {
  const TcpSegment syn = syn_with(1400, 7, true, true);
  const TcpSegment syn_ack = cookies_.syn_ack(config_, kTuple, syn, 123456, now_);
  EXPECT_TRUE(syn_ack.syn && syn_ack.ack);
  EXPECT_EQ(syn_ack.ackno, Wrap32{778});
  EXPECT_EQ(syn_ack.options.mss, config_.mss);
  EXPECT_EQ(syn_ack.options.window_scale, 5);  // ours, for a 1 MiB buffer
  EXPECT_TRUE(syn_ack.options.sack_permitted);
  ASSERT_TRUE(syn_ack.options.timestamps);
  EXPECT_EQ(syn_ack.options.timestamps->echo_reply, 5000u);
  EXPECT_LE(syn_ack.options.timestamps->value, 123456u);  // never ahead of the clock
  const auto rebuilt = cookies_.rebuild_syn(kTuple, ack_of(syn_ack), now_ + seconds(3));
  ASSERT_TRUE(rebuilt);
  EXPECT_EQ(rebuilt->seqno, Wrap32{777});
  EXPECT_EQ(rebuilt->options.mss, 1400);
  EXPECT_EQ(rebuilt->options.window_scale, 7);
  EXPECT_TRUE(rebuilt->options.sack_permitted);
  ASSERT_TRUE(rebuilt->options.timestamps);
  EXPECT_EQ(rebuilt->options.timestamps->value, 5001u);
}

TEST_F(SynCookiesTest, WithoutTimestampsOnlyTheMssSurvives) {
  const TcpSegment syn_ack =
      cookies_.syn_ack(config_, kTuple, syn_with(1460, 7, true, false), 1, now_);
  EXPECT_FALSE(syn_ack.options.timestamps);
  EXPECT_FALSE(syn_ack.options.window_scale);
  EXPECT_FALSE(syn_ack.options.sack_permitted);
  const auto rebuilt = cookies_.rebuild_syn(kTuple, ack_of(syn_ack), now_);
  ASSERT_TRUE(rebuilt);
  EXPECT_EQ(rebuilt->options.mss, 1460);
  EXPECT_FALSE(rebuilt->options.window_scale);
  EXPECT_FALSE(rebuilt->options.sack_permitted);
}

TEST_F(SynCookiesTest, MssRoundsDownToTheTable) {
  EXPECT_EQ(SynCookies::kMssTable[SynCookies::mss_index(1459)], 1440);
  EXPECT_EQ(SynCookies::kMssTable[SynCookies::mss_index(536)], 536);
  EXPECT_EQ(SynCookies::kMssTable[SynCookies::mss_index(100)], 216);  // the floor
  EXPECT_EQ(SynCookies::kMssTable[SynCookies::mss_index(9000)], 1460);
}

TEST_F(SynCookiesTest, ExpiresAfterTwoPeriods) {
  const TcpSegment syn_ack =
      cookies_.syn_ack(config_, kTuple, syn_with(1460, 7, true, true), 1, now_);
  const TcpSegment ack = ack_of(syn_ack);
  EXPECT_TRUE(cookies_.rebuild_syn(kTuple, ack, now_ + SynCookies::kPeriod));
  const auto late = cookies_.rebuild_syn(kTuple, ack, now_ + 2 * SynCookies::kPeriod);
  ASSERT_FALSE(late);
  EXPECT_EQ(late.error(), CookieError::Expired);
}

TEST_F(SynCookiesTest, RefusesAnotherTupleIsnOrKey) {
  const TcpSegment syn_ack =
      cookies_.syn_ack(config_, kTuple, syn_with(1460, 7, true, true), 1, now_);
  TcpSegment ack = ack_of(syn_ack);
  CookieTuple other = kTuple;
  other.remote_port = 40001;
  EXPECT_EQ(cookies_.rebuild_syn(other, ack, now_).error(), CookieError::BadHash);
  SynCookies other_key("another key of 16+ bytes");
  EXPECT_EQ(other_key.rebuild_syn(kTuple, ack, now_).error(), CookieError::BadHash);
  ack.seqno = ack.seqno + 1;  // not the ISN the cookie was made for
  EXPECT_EQ(cookies_.rebuild_syn(kTuple, ack, now_).error(), CookieError::BadHash);
  ack = ack_of(syn_ack);
  ack.ackno = ack.ackno + (1u << 24);  // another MSS index
  EXPECT_FALSE(cookies_.rebuild_syn(kTuple, ack, now_));
}

TEST_F(SynCookiesTest, TimestampEncodingNeverRunsAhead) {
  for (uint32_t clock : {0u, 1u, 63u, 64u, 100u, 0xffffffffu, 0xffffffc0u}) {
    for (const bool sack : {false, true}) {
      const uint32_t ts = SynCookies::encode_timestamp(clock, 3, sack);
      EXPECT_LE(static_cast<int32_t>(ts - clock), 0) << clock;
      EXPECT_GT(static_cast<int32_t>(ts - clock), -64) << clock;
      EXPECT_EQ(ts & 0x0f, 3u);
      EXPECT_EQ((ts & 0x10) != 0, sack);
    }
  }
}

}  // namespace
}  // namespace tinytcp::tcp

#include "tcp/congestion/cubic.hh"

#include <gtest/gtest.h>

#include <cmath>

namespace tinytcp::tcp {
namespace {

using namespace std::chrono_literals;

constexpr uint32_t kMss = 1000;

// The RFC 9438 §4.2 window, in segments, computed here from the RFC's
// constants independently of the implementation.
double w_cubic(double t, double w_max, double cwnd_epoch) {
  const double k = std::cbrt((w_max - cwnd_epoch) / 0.4);
  return 0.4 * std::pow(t - k, 3.0) + w_max;
}

class CubicTest : public ::testing::Test {
 protected:
  Cubic cc{CongestionParams{kMss, 10}};
  Instant now;

  // Grows slow start to `segments`, then takes a congestion event there.
  void lose_at(double segments) {
    while (cc.cwnd_segments() < segments) {
      ack(kMss);
    }
    LossEvent l;
    l.now = now;
    l.flight_size = cc.cwnd();
    cc.on_congestion_event(l);
  }
  void ack(uint64_t bytes, Duration srtt = 100ms) {
    AckEvent a;
    a.now = now;
    a.bytes_acked = bytes;
    a.srtt = srtt;
    a.min_rtt = srtt;
    a.cwnd_limited = true;
    cc.on_ack(a);
  }
  // One round trip: a cwnd's worth of ACKs, one per segment, spread over it.
  void round_trip(Duration rtt) {
    const auto segments = static_cast<int>(cc.cwnd_segments());
    for (int i = 0; i < segments; ++i) {
      now += rtt / segments;
      ack(kMss, rtt);
    }
  }
};

TEST_F(CubicTest, SlowStartCountsEveryAckedSegmentOfAStretchAck) {
  ack(kMss);
  EXPECT_NEAR(cc.cwnd_segments(), 11.0, 1e-9);
  ack(9 * kMss);  // one ACK for a 9-segment super-packet
  EXPECT_NEAR(cc.cwnd_segments(), 20.0, 1e-9);
}

TEST_F(CubicTest, CongestionEventMultipliesByBeta) {
  lose_at(100);
  EXPECT_NEAR(cc.cwnd_segments(), 70.0, 1e-9);  // RFC 9438 §4.6: beta = 0.7
  EXPECT_EQ(cc.ssthresh(), 70u * kMss);
  EXPECT_NEAR(cc.w_max(), 100.0, 1e-9);
}

TEST_F(CubicTest, FollowsTheCubicCurveOnLongPaths) {
  // A long RTT keeps W_est (Reno-friendly) below W_cubic, so the window
  // follows RFC 9438 equation 1.
  lose_at(100);
  const Duration rtt = 500ms;
  const double k = std::cbrt(30.0 / 0.4);  // 4.217 s
  const Instant epoch = now;
  for (int i = 0; i < 40; ++i) {
    round_trip(rtt);
    const double t = to_seconds(now - epoch);
    // Per-ACK growth of (target - cwnd) / cwnd toward W_cubic(t + RTT) makes
    // cwnd trail W_cubic(t + RTT) by about one round trip: it sits near W_cubic(t).
    const double expected = w_cubic(t, 100, 70);
    EXPECT_NEAR(cc.cwnd_segments(), expected, 0.05 * expected + 1.0) << "t = " << t;
  }
  EXPECT_NEAR(cc.k(), k, 1e-9);
  EXPECT_GT(cc.cwnd_segments(), 100.0) << "past W_max after 20 s: the convex region";
}

TEST_F(CubicTest, GrowthIsBoundedByOneAndAHalfPerRoundTrip) {
  lose_at(100);
  round_trip(500ms);
  for (int i = 0; i < 60; ++i) {
    const double before = cc.cwnd_segments();
    round_trip(500ms);
    EXPECT_LE(cc.cwnd_segments(), 1.5 * before + 1e-9);  // RFC 9438 §4.4 target clamp
  }
}

TEST_F(CubicTest, RenoFriendlyRegionOnShortPaths) {
  lose_at(100);
  for (int i = 0; i < 100; ++i) {
    round_trip(10ms);  // 1 s in all: W_cubic(1 s) is still below W_max
  }
  const double t = to_seconds(Duration(1s));
  EXPECT_GT(cc.cwnd_segments(), w_cubic(t, 100, 70));
  EXPECT_DOUBLE_EQ(cc.cwnd_segments(), cc.w_est());  // RFC 9438 §4.3: cwnd = W_est
  // alpha = 3 (1 - 0.7) / (1 + 0.7) per RTT up to cwnd_prior = 100, then 1:
  // about 57 round trips to 100 and 43 more at one segment each.
  EXPECT_NEAR(cc.w_est(), 143.0, 4.0);
}

TEST_F(CubicTest, FastConvergenceLowersWMax) {
  lose_at(100);
  round_trip(500ms);
  const double cwnd = cc.cwnd_segments();
  ASSERT_LT(cwnd, 100.0);
  LossEvent l;
  l.now = now;
  cc.on_congestion_event(l);
  EXPECT_NEAR(cc.w_max(), cwnd * (1.0 + 0.7) / 2.0, 1e-9);  // RFC 9438 §4.7
  EXPECT_NEAR(cc.cwnd_segments(), cwnd * 0.7, 1e-9);
}

TEST_F(CubicTest, TimeoutRestartsFromOneSegment) {
  lose_at(100);
  LossEvent l;
  l.now = now;
  l.flight_size = cc.cwnd();
  cc.on_rto(l);
  EXPECT_NEAR(cc.cwnd_segments(), 1.0, 1e-9);  // RFC 9438 §4.8
  EXPECT_EQ(cc.ssthresh(), 49u * kMss);        // 70 * 0.7
  ack(kMss);
  EXPECT_NEAR(cc.cwnd_segments(), 2.0, 1e-9);  // slow start again
}

TEST_F(CubicTest, NoGrowthWhenNotCwndLimited) {
  AckEvent a;
  a.now = now;
  a.bytes_acked = kMss;
  a.cwnd_limited = false;
  cc.on_ack(a);
  EXPECT_EQ(cc.cwnd(), 10u * kMss);
}

}  // namespace
}  // namespace tinytcp::tcp

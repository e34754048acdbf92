#include <gtest/gtest.h>

#include "tcp/congestion/new_reno.hh"
#include "tcp/congestion/reno.hh"

namespace tinytcp::tcp {
namespace {

constexpr CongestionParams kParams{1000, 10};

AckEvent acked(uint64_t bytes, bool cwnd_limited = true) {
  AckEvent a;
  a.bytes_acked = bytes;
  a.cwnd_limited = cwnd_limited;
  return a;
}

LossEvent loss(uint64_t flight, bool repeated = false) {
  LossEvent l;
  l.flight_size = flight;
  l.in_flight = flight;
  l.repeated = repeated;
  return l;
}

TEST(RenoTest, SlowStartCountsEveryAckedByte) {
  Reno cc(kParams);
  cc.on_ack(acked(1000));
  EXPECT_EQ(cc.cwnd(), 11000u);
  cc.on_ack(acked(400));
  EXPECT_EQ(cc.cwnd(), 11400u);
  // A stretch ACK (a GRO receiver ACKs a whole TSO super-packet once) grows
  // the window by all it covers, as that many one-segment ACKs would: the
  // window still doubles per round trip.
  cc.on_ack(acked(9000));
  EXPECT_EQ(cc.cwnd(), 20400u);
}

TEST(RenoTest, SlowStartStopsAtSsthreshAndTheRestCountsTowardAvoidance) {
  Reno cc(kParams);
  cc.on_rto(loss(10000));  // cwnd = 1 segment, ssthresh = 5000
  ASSERT_EQ(cc.cwnd(), 1000u);
  ASSERT_EQ(cc.ssthresh(), 5000u);
  // 4000 bytes take slow start to ssthresh; the other 5000 are a whole
  // window of byte counting: one more segment.
  cc.on_ack(acked(9000));
  EXPECT_EQ(cc.cwnd(), 6000u);
}

TEST(RenoTest, CongestionAvoidanceAddsOneSmssPerWindow) {
  Reno cc(kParams);
  cc.on_congestion_event(loss(20000));  // ssthresh = cwnd = 10000
  ASSERT_EQ(cc.cwnd(), 10000u);
  for (int i = 0; i < 9; ++i) {
    cc.on_ack(acked(1000));
  }
  EXPECT_EQ(cc.cwnd(), 10000u);
  cc.on_ack(acked(1000));
  EXPECT_EQ(cc.cwnd(), 11000u);
}

TEST(RenoTest, DoesNotGrowWhenNotCwndLimited) {
  Reno cc(kParams);
  cc.on_ack(acked(1000, false));
  EXPECT_EQ(cc.cwnd(), 10000u);
}

TEST(RenoTest, LossHalvesFlightSize) {
  Reno cc(kParams);
  cc.on_congestion_event(loss(30000));
  EXPECT_EQ(cc.ssthresh(), 15000u);  // RFC 5681 §3.2 equation 4
  EXPECT_EQ(cc.cwnd(), 15000u);
}

TEST(RenoTest, SsthreshIsAtLeastTwoSegments) {
  Reno cc(kParams);
  cc.on_congestion_event(loss(1000));
  EXPECT_EQ(cc.ssthresh(), 2000u);
}

TEST(RenoTest, TimeoutCollapsesToTheLossWindow) {
  Reno cc(kParams);
  cc.on_rto(loss(30000));
  EXPECT_EQ(cc.cwnd(), 1000u);  // RFC 5681 §3.1 equation 4, LW = 1 SMSS
  EXPECT_EQ(cc.ssthresh(), 15000u);
  cc.on_rto(loss(1000, true));  // the same segment again: ssthresh kept
  EXPECT_EQ(cc.ssthresh(), 15000u);
  EXPECT_EQ(cc.cwnd(), 1000u);
}

TEST(RenoTest, MssChangeBeforeDataRecomputesTheInitialWindow) {
  Reno cc(CongestionParams{536, 10});
  EXPECT_EQ(cc.cwnd(), 5360u);
  cc.set_mss(1448);
  EXPECT_EQ(cc.cwnd(), 14480u);
  cc.on_ack(acked(1448));
  cc.set_mss(1000);
  EXPECT_EQ(cc.cwnd(), 15928u) << "a window in use is not reset";
}

TEST(RenoTest, PartialAckLeavesRecovery) {
  Reno cc(kParams);
  cc.on_congestion_event(loss(20000));
  EXPECT_EQ(cc.on_partial_ack(acked(1000)), PartialAckResponse::ExitRecovery);
  EXPECT_EQ(cc.cwnd(), cc.ssthresh());
}

TEST(NewRenoTest, PartialAckStaysInRecovery) {
  NewReno cc(kParams);
  cc.on_congestion_event(loss(20000));
  EXPECT_EQ(cc.on_partial_ack(acked(1000)), PartialAckResponse::RetransmitNextUnacked);
  cc.on_recovery_exit(acked(1000));
  EXPECT_EQ(cc.cwnd(), 10000u);
  EXPECT_EQ(cc.name(), "newreno");
}

}  // namespace
}  // namespace tinytcp::tcp

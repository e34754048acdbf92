#include "tcp/rack.hh"

#include <gtest/gtest.h>

#include <initializer_list>
#include <utility>

#include "tcp/sack_scoreboard.hh"

namespace tinytcp::tcp {
namespace {

using namespace std::chrono_literals;

// Rack over a scoreboard, with a manual clock: segments of 1000 bytes at
// 1, 1001, 2001, ... sent `spacing` apart, min RTT 20 ms.
class RackTest : public ::testing::Test {
 protected:
  RackTest() { board.set_smss(1000); }

  void send(size_t n) {
    for (size_t i = 0; i < n; ++i) {
      board.add(next, 1000, false, false, now);
      next += 1000;
      now += spacing;
    }
  }
  // One ACK: the cumulative ACK and SACK blocks, then RACK steps 2-6.
  Rack::Detection ack(uint64_t cumulative,
                      std::initializer_list<std::pair<uint64_t, uint64_t>> sacks,
                      bool dsack = false) {
    board.begin_delivery(now - min_rtt);
    board.acknowledge(cumulative);
    board.begin_sack();
    for (const auto& [l, r] : sacks) {
      board.sack(l, r);
    }
    board.end_sack();
    Rack::AckInfo info;
    info.now = now;
    info.delivered = &board.delivery();
    info.dsack = dsack;
    info.snd_una = cumulative;
    info.snd_nxt = next;
    rack.on_ack(info);
    return detect();
  }
  Rack::Detection detect() { return rack.detect_losses(board, now, inputs()); }
  Rack::WindowInputs inputs() const {
    Rack::WindowInputs in;
    in.min_rtt = min_rtt;
    in.srtt = srtt;
    in.in_recovery = in_recovery;
    in.sacked_segments = board.sacked_segments();
    return in;
  }
  void retransmit_lost() {
    while (const auto i = board.next_lost()) {
      board.on_retransmitted(*i, now);
    }
  }

  SackScoreboard board;
  Rack rack;
  Instant now;
  uint64_t next = 1;
  Duration spacing = 1ms;
  Duration min_rtt = 20ms;
  Duration srtt = 20ms;
  bool in_recovery = false;
};

TEST_F(RackTest, NothingIsLostBeforeAnyDelivery) {
  send(4);
  now += 1s;
  EXPECT_EQ(detect().marked_lost, 0u);
  EXPECT_FALSE(rack.deadline());
  EXPECT_FALSE(rack.has_delivery());
}

TEST_F(RackTest, CumulativeAckTracksTheNewestDelivery) {
  send(4);  // sent at 0, 1, 2, 3 ms
  now = Instant{} + 22ms;
  EXPECT_EQ(ack(2001, {}).marked_lost, 0u);
  EXPECT_EQ(rack.xmit_ts(), Instant{} + 1ms);
  EXPECT_EQ(rack.end_seq(), 2001u);
  EXPECT_EQ(rack.rtt(), 21ms);
  EXPECT_EQ(rack.fack(), 2001u);
  EXPECT_FALSE(rack.deadline());  // everything left was sent after it
}

TEST_F(RackTest, SegmentSentBeforeASackedOneIsLostOnceTheWindowPasses) {
  send(4);  // 1 @0ms, 1001 @1ms, 2001 @2ms, 3001 @3ms
  now = Instant{} + 23ms;
  // 3001 delivered, RACK.rtt = 20 ms; reo_wnd = min_rtt / 4 = 5 ms. Segment
  // 1 is due at 0 + 20 + 5 = 25 ms: not yet.
  EXPECT_EQ(ack(1, {{3001, 4001}}).marked_lost, 0u);
  EXPECT_EQ(rack.reo_wnd(inputs()), 5ms);
  EXPECT_EQ(rack.deadline(), Instant{} + 25ms);
  EXPECT_FALSE(board[0].lost);

  now = Instant{} + 25ms - 1ns;
  EXPECT_EQ(detect().marked_lost, 0u);
  now = Instant{} + 25ms;  // the timer fires
  const auto found = detect();
  EXPECT_EQ(found.marked_lost, 1u);
  EXPECT_TRUE(board[0].lost);
  EXPECT_FALSE(board[1].lost);
  EXPECT_EQ(rack.deadline(), Instant{} + 26ms);  // segment 1001 next
  now = Instant{} + 27ms;
  EXPECT_EQ(detect().marked_lost, 2u);
  EXPECT_FALSE(rack.deadline());
  EXPECT_EQ(board.lost_bytes(), 3000u);
}

TEST_F(RackTest, SegmentsSentAfterTheDeliveredOneAreNotJudged) {
  send(1);  // 1 @0
  now = Instant{} + 10ms;
  send(3);  // 1001 @10, 2001 @11, 3001 @12
  now = Instant{} + 500ms;
  ack(1, {{1001, 2001}});
  EXPECT_TRUE(board[0].lost);   // sent 10 ms before 1001
  EXPECT_FALSE(board[2].lost);  // sent after it
  EXPECT_FALSE(board[3].lost);
  EXPECT_FALSE(rack.deadline());
}

TEST_F(RackTest, SegmentSentWithinTheWindowBeforeTheDeliveredOneIsNotLost) {
  send(2);  // 1 @0, 1001 @1: reordering of 1 ms is within reo_wnd
  now = Instant{} + 500ms;
  ack(1, {{1001, 2001}});
  EXPECT_FALSE(board[0].lost);
  EXPECT_EQ(rack.deadline(), now + 4ms);
}

TEST_F(RackTest, NoReorderingWindowInRecoveryOrWithDupThreshSacks) {
  send(6);
  in_recovery = true;
  EXPECT_EQ(rack.reo_wnd(inputs()), 0ms);
  in_recovery = false;
  EXPECT_EQ(rack.reo_wnd(inputs()), 5ms);
  now = Instant{} + 23ms;
  ack(1, {{3001, 6001}});  // three sacked segments: DupThresh
  EXPECT_EQ(rack.reo_wnd(inputs()), 0ms);
  EXPECT_TRUE(board[0].lost);  // 0 + RACK.rtt (18) + 0 <= 23
}

TEST_F(RackTest, ReorderingWindowIsCappedBySrtt) {
  min_rtt = 100ms;
  srtt = 10ms;
  EXPECT_EQ(rack.reo_wnd(inputs()), 10ms);
  srtt = 0ms;  // no estimate yet: no cap
  EXPECT_EQ(rack.reo_wnd(inputs()), 25ms);
}

TEST_F(RackTest, ReorderingIsSeenWhenAnOriginalArrivesBelowFack) {
  send(4);
  now = Instant{} + 22ms;
  ack(1, {{2001, 3001}});
  EXPECT_FALSE(rack.reordering_seen());
  EXPECT_EQ(rack.fack(), 3001u);
  now += 1ms;
  ack(3001, {});  // 1 and 1001 arrive late, never retransmitted
  EXPECT_TRUE(rack.reordering_seen());
  in_recovery = true;
  EXPECT_EQ(rack.reo_wnd(inputs()), 5ms);  // patience even in recovery now
}

TEST_F(RackTest, RetransmissionBelowFackIsNotReordering) {
  spacing = 10ms;
  send(4);  // @0, 10, 20, 30
  now = Instant{} + 45ms;
  ack(1, {{2001, 3001}});
  ASSERT_TRUE(board[0].lost);
  retransmit_lost();
  now += 21ms;
  ack(2001, {{2001, 3001}});
  EXPECT_FALSE(rack.reordering_seen());
}

TEST_F(RackTest, LostRetransmissionIsDetectedByALaterDelivery) {
  spacing = 10ms;
  send(3);  // 1 @0, 1001 @10, 2001 @20
  now = Instant{} + 30ms;
  ack(1, {{2001, 3001}});
  ASSERT_TRUE(board[0].lost && board[1].lost);
  retransmit_lost();  // both again at 30 ms
  send(1);            // 3001 at 30 ms, after the retransmissions (same time, higher end)
  in_recovery = true;
  now = Instant{} + 51ms;
  // 3001 delivered; the retransmissions sent before it are not.
  const auto found = ack(1, {{2001, 3001}, {3001, 4001}});
  EXPECT_EQ(found.marked_lost, 2u);
  EXPECT_EQ(found.lost_retransmissions, 2u);
  EXPECT_TRUE(board[0].lost);
  EXPECT_FALSE(board[0].rexmit);
  EXPECT_EQ(board.next_lost(), std::optional<size_t>(0));
  EXPECT_EQ(board.pipe(), 0u);
}

TEST_F(RackTest, RetransmissionSentAfterTheNewestDeliveryIsNotLost) {
  spacing = 10ms;
  send(3);
  now = Instant{} + 30ms;
  ack(1, {{2001, 3001}});
  retransmit_lost();
  now = Instant{} + 200ms;
  EXPECT_EQ(detect().marked_lost, 0u);  // nothing newer was delivered
  EXPECT_TRUE(board[0].rexmit);
}

// RACK_sent_after follows the order segments left, not the RFC's tie-break by
// sequence number: new data and a retransmission sent within one clock
// reading (one batch of input) are not taken for sent the other way round.
TEST_F(RackTest, RetransmissionSentAfterNewDataInTheSameTickIsNotLostWhenThatDataArrives) {
  in_recovery = true;  // reo_wnd 0
  send(4);             // 1 @0ms, 1001 @1ms, 2001 @2ms, 3001 @3ms
  now = Instant{} + 23ms;
  EXPECT_EQ(ack(1001, {{2001, 4001}}).marked_lost, 1u);  // 1001
  spacing = 0ms;
  send(1);  // 4001 @23ms, then the retransmission of 1001 @23ms
  retransmit_lost();
  now = Instant{} + 43ms;  // 4001 delivered; the retransmission left after it
  const Rack::Detection d = ack(1001, {{2001, 5001}});
  EXPECT_EQ(d.marked_lost, 0u);
  EXPECT_EQ(d.lost_retransmissions, 0u);
  EXPECT_EQ(rack.end_seq(), 5001u);
}

TEST_F(RackTest, AmbiguousRetransmissionGivesNoSample) {
  spacing = 10ms;
  send(2);  // @0, 10
  now = Instant{} + 30ms;
  ack(1, {{1001, 2001}});
  retransmit_lost();
  const Instant retransmitted = now;
  now += 5ms;  // less than min RTT: the original may have arrived
  ack(1001, {});
  EXPECT_NE(rack.xmit_ts(), retransmitted);
  EXPECT_EQ(rack.xmit_ts(), Instant{} + 10ms);
  EXPECT_EQ(rack.end_seq(), 2001u);
}

TEST_F(RackTest, DsackWidensTheWindowOncePerRoundAndDecays) {
  send(4);
  now = Instant{} + 22ms;
  ack(1001, {}, true);
  EXPECT_EQ(rack.reo_wnd_mult(), 2u);
  ack(1001, {}, true);  // same round trip
  EXPECT_EQ(rack.reo_wnd_mult(), 2u);
  EXPECT_EQ(rack.reo_wnd(inputs()), 10ms);
  ack(4001, {}, true);  // a new round
  EXPECT_EQ(rack.reo_wnd_mult(), 3u);
  EXPECT_EQ(rack.reo_wnd(inputs()), 15ms);
  for (uint32_t i = 0; i + 1 < Rack::kReoWndPersist; ++i) {
    rack.on_recovery_exit();
  }
  EXPECT_EQ(rack.reo_wnd_mult(), 3u);
  rack.on_recovery_exit();
  EXPECT_EQ(rack.reo_wnd_mult(), 1u);
}

}  // namespace
}  // namespace tinytcp::tcp

// The sender at the edges a hostile or broken peer finds: a window that
// opens under an unacknowledged zero-window probe (issue 15 item 9), SACK
// blocks a cumulative ACK cuts into, and a receiver that reneges on its
// SACKs before a timeout (RFC 2018 §8; item 5).

#include <gtest/gtest.h>

#include "unit/tcp/sender_harness.hh"

namespace tinytcp::tcp {
namespace {

using testing::SenderHarness;

class TcpSenderEdgesTest : public SenderHarness {
 protected:
  static PeerOptions sack_peer() {
    PeerOptions p = default_peer();
    p.sack = true;
    return p;
  }
};

TEST_F(TcpSenderEdgesTest, WindowOpeningSendsAtOnceDespiteAnUnacknowledgedProbe) {
  establish(default_peer(), 0);
  push("hello world");
  expect_nothing_sent();
  tick(rto());
  expect_segment().seqno(1).payload("h");  // RFC 9293 §3.8.6.1: one octet
  ack(1, 0);                               // dropped: the window is still shut
  expect_nothing_sent();
  // The window opens; the probe byte was not taken. Everything goes now,
  // not after the probe's timeout (nor held behind it by Nagle).
  ack(1, 1000);
  expect_segment().seqno(1).payload("hello world");
  EXPECT_EQ(sender->stats().probes_taken_back, 1u);
  ack(12);
  expect_nothing_sent();
  EXPECT_EQ(sender->bytes_in_flight(), 0u);
}

TEST_F(TcpSenderEdgesTest, WindowOpeningThatTakesTheProbeSendsTheRest) {
  establish(default_peer(), 0);
  push("hello world");
  tick(rto());
  expect_segment().seqno(1).payload("h");
  ack(2, 1000);  // the probe byte was taken as the window opened
  expect_segment().seqno(2).payload("ello world");
  EXPECT_EQ(sender->stats().probes_taken_back, 0u);
}

TEST_F(TcpSenderEdgesTest, SackBlockTheCumulativeAckCutsIntoStillCounts) {
  establish(sack_peer());
  push_bytes(5000);
  EXPECT_EQ(drain(), 5u);
  ack(1001);
  // The ACK moves SND.UNA to 2001 and its second block, valid against the
  // SND.UNA before it (1001), reaches past that: [2001, 3001) arrived.
  ack(2001, 65535, {{4001, 5001}, {1001, 3001}});
  // RACK: [3001, 4001) was sent no later than the delivered [4001, 5001).
  expect_segment().seqno(3001).payload_size(1000);
  EXPECT_EQ(sender->stats().input_errors[SenderInputError::SackBlockOutOfWindow], 0u);
  // Only [3001, 4001), retransmitted, is in the network: [2001, 3001) is
  // known to have arrived.
  EXPECT_EQ(sender->bytes_in_flight(), 1000u);
}

TEST_F(TcpSenderEdgesTest, TimeoutAfterRenegingRetransmitsFromTheLeftEdge) {
  establish(sack_peer());
  push_bytes(3000);
  EXPECT_EQ(drain(), 3u);
  // The receiver SACKs everything, the segment at SND.UNA included, yet
  // never acknowledges it: it has reneged (or will).
  ack(1, 65535, {{1, 3001}});
  expect_nothing_sent();
  tick(rto());
  expect_segment().seqno(1).payload_size(1000);
  EXPECT_EQ(sender->stats().sack_reneging, 1u);
  EXPECT_EQ(sender->stats().rto_expirations, 1u);
  // The SACKs are forgotten: what they covered is sent again as the
  // cumulative ACK moves, not skipped.
  ack(1001);
  expect_segment().seqno(1001).payload_size(1000);
  drain();
}

}  // namespace
}  // namespace tinytcp::tcp

namespace tinytcp::tcp {
namespace {

class TcpSenderPathTest : public testing::SenderHarness {};

TEST_F(TcpSenderPathTest, RepeatedTimeoutsOfAFullSegmentStepTheMssDown) {
  config.black_hole_timeouts = 3;
  make();
  establish();  // peer MSS 1000
  push_bytes(1000);
  expect_segment().seqno(1).payload_size(1000);
  // The path drops datagrams this big and says nothing (RFC 4821 §7.2).
  for (int timeout = 1; timeout <= 2; ++timeout) {
    tick(*sender->next_deadline() - now);
    expect_segment().seqno(1).payload_size(1000);
  }
  tick(*sender->next_deadline() - now);
  expect_segment().seqno(1).payload_size(536);  // the third: down to 536
  EXPECT_EQ(sender->stats().black_hole_mss_reductions, 1u);
  ack(537);
  expect_segment().seqno(537).payload_size(464);
  EXPECT_EQ(sender->max_payload(), 536u);
}

TEST_F(TcpSenderPathTest, PathMtuOnlyLowersAndResendsWhatDoesNotFit) {
  config.nagle = false;
  establish();
  push_bytes(1800);
  EXPECT_EQ(drain(), 2u);                        // 1000 + 800
  EXPECT_FALSE(sender->on_path_mtu(1500, now));  // more than the MSS already allows
  EXPECT_TRUE(sender->on_path_mtu(940, now));    // MSS 900: the first segment no longer fits
  EXPECT_EQ(sender->max_payload(), 900u);
  push("");
  expect_segment().seqno(1).payload_size(900);
  expect_segment().seqno(901).payload_size(100);
  expect_nothing_sent();                         // the 800-byte segment fits and stays in flight
  EXPECT_FALSE(sender->on_path_mtu(1000, now));  // never raised by an ICMP
  EXPECT_EQ(sender->stats().path_mtu_updates, 1u);
  EXPECT_EQ(sender->stats().fast_retransmits + sender->stats().rto_expirations, 0u);
}

// RFC 1191 §6.3: a lowered path MTU is tried again path_mtu_expiry after the
// last lowering (the route may have changed); a path still narrow lowers it
// again.
TEST_F(TcpSenderPathTest, ALoweredPathMtuIsTriedAgainAfterTheExpiry) {
  config.nagle = false;
  config.path_mtu_expiry = std::chrono::minutes(10);
  establish();  // peer MSS 1000
  push_bytes(1000);
  drain();
  EXPECT_TRUE(sender->on_path_mtu(940, now));  // MSS 900
  drain();
  ack(1001);
  now += std::chrono::minutes(10) - std::chrono::milliseconds(1);
  push_bytes(1000);
  expect_segment().seqno(1001).payload_size(900);
  expect_segment().seqno(1901).payload_size(100);
  ack(2001);
  now += std::chrono::milliseconds(1);
  push_bytes(1000);
  expect_segment().seqno(2001).payload_size(1000);  // full-sized again
  EXPECT_EQ(sender->stats().path_mtu_raises, 1u);
  EXPECT_TRUE(sender->on_path_mtu(940, now));  // still narrow: lowered again
  EXPECT_EQ(sender->max_payload(), 900u);
}

TEST_F(TcpSenderPathTest, WithoutExpiryALoweredPathMtuStays) {
  config.nagle = false;
  config.path_mtu_expiry = Duration::zero();
  establish();
  EXPECT_TRUE(sender->on_path_mtu(940, now));
  now += std::chrono::hours(24);
  push_bytes(1000);
  expect_segment().seqno(1).payload_size(900);
  expect_segment().seqno(901).payload_size(100);
  EXPECT_EQ(sender->stats().path_mtu_raises, 0u);
}

}  // namespace
}  // namespace tinytcp::tcp

namespace tinytcp::tcp {
namespace {

class TcpSenderDsackTest : public testing::SenderHarness {};

TEST_F(TcpSenderDsackTest, FirstBlockInsideTheSecondIsADuplicateReport) {
  PeerOptions peer = default_peer();
  peer.sack = true;
  establish(peer);
  push_bytes(5000);
  EXPECT_EQ(drain(), 5u);
  ack(1, 65535, {{2001, 4001}});  // [2001, 4001) arrived
  drain();
  // RFC 2883 §4: [2001, 3001) arrived twice; the second block holds it.
  ack(1, 65535, {{2001, 3001}, {2001, 4001}});
  drain();
  EXPECT_EQ(sender->stats().dsack_blocks, 1u);
  EXPECT_EQ(sender->stats().input_errors[SenderInputError::SackBlockOutOfWindow], 0u);
}

}  // namespace
}  // namespace tinytcp::tcp

namespace tinytcp::tcp {
namespace {

class TcpSenderLocalDropTest : public testing::SenderHarness {};

// A segment the device would not take (ENOBUFS) goes again at once when the
// window allows: the sender's next deadline is now, and that tick resends
// it; the congestion window shrinks once for the window, not per refusal.
TEST_F(TcpSenderLocalDropTest, ARefusedSegmentGoesAgainAtOnceAndCwndShrinksOnce) {
  establish();  // peer MSS 1000
  push_bytes(1000);
  expect_segment().seqno(1).payload_size(1000);
  const uint64_t cwnd = sender->congestion_control().cwnd();
  EXPECT_TRUE(sender->on_send_failed(Wrap32::wrap(1, sender->isn()), now));
  EXPECT_EQ(sender->next_deadline(), now);
  tick(Duration::zero());
  expect_segment().seqno(1).payload_size(1000);
  expect_nothing_sent();
  const uint64_t reduced = sender->congestion_control().cwnd();
  EXPECT_LT(reduced, cwnd);
  // The resend is refused too: again at once, no second reduction.
  EXPECT_TRUE(sender->on_send_failed(Wrap32::wrap(1, sender->isn()), now));
  tick(Duration::zero());
  expect_segment().seqno(1).payload_size(1000);
  EXPECT_EQ(sender->congestion_control().cwnd(), reduced);
  EXPECT_EQ(sender->stats().local_send_failures, 2u);
  EXPECT_EQ(sender->stats().local_congestion_events, 1u);
  EXPECT_EQ(sender->stats().rto_expirations + sender->stats().rack_marked_lost, 0u);
}

// With more in flight, a refusal starts a recovery: the refused segment
// goes at once, new data waits for the reduced window, and the recovery
// ends at its recovery point with no fast retransmit or timeout.
TEST_F(TcpSenderLocalDropTest, ARefusalStartsOneRecovery) {
  config.nagle = false;
  PeerOptions peer = default_peer();
  peer.sack = true;
  establish(peer);
  push_bytes(5000);
  EXPECT_EQ(drain(), 5u);
  now += std::chrono::milliseconds(1);  // the resend is later than the originals (RACK)
  EXPECT_TRUE(sender->on_send_failed(Wrap32::wrap(2001, sender->isn()), now));
  EXPECT_TRUE(sender->in_recovery());
  tick(Duration::zero());
  expect_segment().seqno(2001).payload_size(1000);
  push_bytes(1000);
  expect_nothing_sent();  // cwnd halved, 5 segments in the network
  now += std::chrono::milliseconds(1);
  ack(2001, 65535, {{3001, 5001}});
  expect_segment().seqno(5001).payload_size(1000);
  ack(6001);
  EXPECT_FALSE(sender->in_recovery());
  EXPECT_EQ(sender->stats().local_congestion_events, 1u);
  EXPECT_EQ(sender->stats().rto_expirations + sender->stats().fast_retransmits, 0u);
}

TEST_F(TcpSenderLocalDropTest, OnlySegmentsInFlightCount) {
  config.nagle = false;
  establish();
  push_bytes(2000);
  EXPECT_EQ(drain(), 2u);
  EXPECT_FALSE(sender->on_send_failed(Wrap32::wrap(501, sender->isn()), now));   // mid-segment
  EXPECT_FALSE(sender->on_send_failed(Wrap32::wrap(2001, sender->isn()), now));  // SND.NXT: an ACK
  ack(1001);
  EXPECT_FALSE(sender->on_send_failed(Wrap32::wrap(1, sender->isn()), now));  // acknowledged
  EXPECT_TRUE(sender->on_send_failed(Wrap32::wrap(1001, sender->isn()), now));
  EXPECT_FALSE(sender->on_send_failed(Wrap32::wrap(1001, sender->isn()), now));  // already lost
  tick(Duration::zero());
  expect_segment().seqno(1001).payload_size(1000);
  EXPECT_EQ(sender->stats().local_send_failures, 1u);
}

}  // namespace
}  // namespace tinytcp::tcp

namespace tinytcp::tcp {
namespace {

class TcpSenderTimerSlotTest : public testing::SenderHarness {};

// RTO, persist and keepalive are exclusive (SenderTimers' one slot): a shut
// window with data waiting is probed by the persist timer, never kept alive,
// however short the keepalive idle time (as Linux, which keeps alive only
// with an empty write queue).
TEST_F(TcpSenderTimerSlotTest, AShutWindowWithDataWaitingIsProbedNotKeptAlive) {
  config.keepalive = true;
  config.keepalive_idle = std::chrono::milliseconds(100);
  config.keepalive_interval = std::chrono::milliseconds(100);
  establish(default_peer(), 0);
  push("abc");
  expect_nothing_sent();
  const Instant persist = *sender->next_deadline();
  EXPECT_GT(persist - now, config.keepalive_idle);
  tick(persist - now);
  expect_segment().seqno(1).payload("a");  // a zero-window probe, not a keepalive
  EXPECT_EQ(sender->stats().keepalive_probes, 0u);
  EXPECT_EQ(sender->stats().zero_window_probes, 1u);
}

}  // namespace
}  // namespace tinytcp::tcp

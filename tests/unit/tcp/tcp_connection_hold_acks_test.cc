// TcpConnection::hold_acks: within a batch of received segments, pure ACKs
// for in-order data wait for release_acks(); urgent ones do not.

#include <gtest/gtest.h>

#include <string>

#include "tcp/tcp_connection.hh"
#include "unit/tcp/tcp_connection_harness.hh"

namespace tinytcp::tcp {
namespace {

const std::string kFull(1400, 'x');  // a full-sized segment at the peer's MSS

TEST_F(TcpConnectionTest, WithoutHoldEverySecondFullSegmentIsAcked) {
  establish_active();
  deliver(peer(0, kFull));
  expect_nothing_sent();
  deliver(peer(1400, kFull));
  EXPECT_EQ(expect_segment().ackno, kPeerIsn + 1 + 2800);
}

TEST_F(TcpConnectionTest, HeldAcksLeaveAsOneAtRelease) {
  establish_active();
  conn_->hold_acks();
  for (uint32_t i = 0; i < 6; ++i) {
    deliver(peer(i * 1400, kFull));
  }
  expect_nothing_sent();
  EXPECT_TRUE(conn_->acks_held());
  conn_->release_acks(now_);
  EXPECT_FALSE(conn_->acks_held());
  EXPECT_EQ(expect_segment().ackno, kPeerIsn + 1 + 6 * 1400);
  expect_nothing_sent();
}

TEST_F(TcpConnectionTest, HeldAcksWaitAcrossTheApplicationsRead) {
  establish_active();
  conn_->hold_acks();
  deliver(peer(0, kFull));
  deliver(peer(1400, kFull));
  conn_->inbound().pop(2800);  // the application reads inside the batch
  conn_->tick(now_);
  expect_nothing_sent();
  EXPECT_EQ(conn_->next_deadline(), Instant{});  // an ACK is due: tick at once
  conn_->release_acks(now_);
  EXPECT_EQ(expect_segment().ackno, kPeerIsn + 1 + 2800);
  expect_nothing_sent();
}

TEST_F(TcpConnectionTest, ReleaseWithoutADueAckLeavesTheDelayedAck) {
  establish_active();
  conn_->hold_acks();
  deliver(peer(0, "hello"));
  conn_->release_acks(now_);
  expect_nothing_sent();  // one small segment: the delayed ACK, as without hold
  advance(milliseconds(40));
  EXPECT_EQ(expect_segment().ackno, kPeerIsn + 6);
}

TEST_F(TcpConnectionTest, OutOfOrderDataIsAckedAtOnceWhileHeld) {
  establish_active();
  conn_->hold_acks();
  deliver(peer(1400, kFull));  // the first segment is missing
  const auto dup = expect_segment();
  EXPECT_EQ(dup.ackno, kPeerIsn + 1);
  deliver(peer(0, kFull));  // fills the gap: acknowledged at once too
  EXPECT_EQ(expect_segment().ackno, kPeerIsn + 1 + 2800);
  conn_->release_acks(now_);
  expect_nothing_sent();
}

TEST_F(TcpConnectionTest, FinIsAckedAtOnceWhileHeld) {
  establish_active();
  conn_->hold_acks();
  deliver(peer(0, kFull));
  auto fin = peer(1400);
  fin.fin = true;
  deliver(fin);
  EXPECT_EQ(expect_segment().ackno, kPeerIsn + 1 + 1400 + 1);
  conn_->release_acks(now_);
  expect_nothing_sent();
}

TEST_F(TcpConnectionTest, DataWeSendWhileHeldCarriesTheAck) {
  establish_active();
  conn_->hold_acks();
  deliver(peer(0, kFull));
  deliver(peer(1400, kFull));
  conn_->outbound().push("reply");
  conn_->tick(now_);
  const auto data = expect_segment();
  EXPECT_EQ(last_payload_, "reply");
  EXPECT_EQ(data.ackno, kPeerIsn + 1 + 2800);
  conn_->release_acks(now_);
  expect_nothing_sent();  // the data segment said it all
}

}  // namespace
}  // namespace tinytcp::tcp

// RFC 5961 §7 (and Linux's tcp_invalid_ratelimit): the answers to
// unacceptable segments without data are rate limited per connection, so
// spoofed segments or two confused endpoints cannot make us send one each.
// Segments that carry data still get every duplicate ACK.

#include <gtest/gtest.h>

#include "tcp/tcp_connection.hh"
#include "unit/tcp/tcp_connection_harness.hh"

namespace tinytcp::tcp {
namespace {

class InvalidReplyTest : public TcpConnectionTest {
 protected:
  size_t count_sent() {
    size_t n = 0;
    while (!sent_.empty()) {
      expect_segment();
      ++n;
    }
    return n;
  }
};

TEST_F(InvalidReplyTest, OutOfWindowAcksGetOneAnswerPerInterval) {
  establish_active();
  const TcpSegment stray = peer(10'000'000);  // far outside the window, no data
  for (int i = 0; i < 5; ++i) {
    deliver(stray);
  }
  EXPECT_EQ(count_sent(), 1u);
  EXPECT_EQ(drops(ConnectionDrop::InvalidReplyRateLimited), 4u);
  advance(milliseconds(499));
  deliver(stray);
  EXPECT_EQ(count_sent(), 0u);
  advance(milliseconds(1));
  deliver(stray);
  EXPECT_EQ(count_sent(), 1u);
}

TEST_F(InvalidReplyTest, OldDataIsAlwaysAcknowledged) {
  establish_active();
  deliver(peer(0, "abc"));
  advance(milliseconds(500));  // the delayed ACK
  expect_segment();
  const TcpSegment again = peer(0, "abc");  // a retransmission we already have
  for (int i = 0; i < 3; ++i) {
    deliver(again);
  }
  EXPECT_EQ(count_sent(), 3u);  // its sender needs each duplicate ACK
  EXPECT_EQ(drops(ConnectionDrop::InvalidReplyRateLimited), 0u);
}

TEST_F(InvalidReplyTest, AcksOfUnsentDataGetOneAnswerPerInterval) {
  establish_active();
  TcpSegment ahead = peer(0);
  ahead.ackno = our_nxt_ + 5000;  // acknowledges what we never sent
  for (int i = 0; i < 4; ++i) {
    deliver(ahead);
  }
  EXPECT_EQ(count_sent(), 1u);
  EXPECT_EQ(drops(ConnectionDrop::AckUnsent), 4u);
  EXPECT_EQ(drops(ConnectionDrop::InvalidReplyRateLimited), 3u);
}

TEST_F(InvalidReplyTest, RepeatedSynInSynReceivedGetsOneSynAckPerInterval) {
  conn_->listen();
  deliver(peer_syn(false));
  EXPECT_TRUE(expect_segment().syn);
  for (int i = 0; i < 4; ++i) {
    deliver(peer_syn(false));  // our SYN-ACK was lost, or a flood
  }
  EXPECT_EQ(count_sent(), 1u);
  advance(milliseconds(500));
  count_sent();  // whatever our own timer resent meanwhile
  deliver(peer_syn(false));
  EXPECT_EQ(count_sent(), 1u);
}

}  // namespace
}  // namespace tinytcp::tcp

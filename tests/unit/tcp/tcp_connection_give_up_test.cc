// Connections that must end on their own: a handshake that never completes
// gives up in the time Linux does, not after max_retransmissions.

#include <gtest/gtest.h>

#include "tcp/tcp_connection.hh"
#include "unit/tcp/tcp_connection_harness.hh"

namespace tinytcp::tcp {
namespace {

class GiveUpTest : public TcpConnectionTest {
 protected:
  // Ticks every 100 ms until the connection closes or `limit` passes;
  // returns the time it took and counts the SYNs sent.
  Duration run_until_closed(Duration limit) {
    const Instant start = now_;
    while (!conn_->closed() && now_ - start < limit) {
      advance(milliseconds(100));
      while (!sent_.empty()) {
        syns_ += expect_segment().syn ? 1 : 0;
      }
    }
    return now_ - start;
  }
  int syns_ = 0;
};

TEST_F(GiveUpTest, ConnectToABlackHoleFailsInAboutTwoMinutes) {
  conn_->connect(now_);
  syns_ = expect_segment().syn ? 1 : 0;
  const Duration took = run_until_closed(std::chrono::minutes(20));
  // SYN at 0, 1, 3, 7, 15, 31, 63 s; then one more RTO (capped at rto_max
  // 60 s) and CLOSED.
  EXPECT_EQ(syns_, 7);
  EXPECT_GE(took, seconds(120));
  EXPECT_LE(took, seconds(130));
  EXPECT_EQ(conn_->close_reason(), CloseReason::TimedOut);
}

TEST_F(GiveUpTest, UnansweredSynAckGivesUpInAboutAMinute) {
  conn_->listen();
  deliver(peer_syn(false));
  syns_ = expect_segment().syn ? 1 : 0;
  const Duration took = run_until_closed(std::chrono::minutes(20));
  // SYN-ACK at 0, 1, 3, 7, 15, 31 s, CLOSED at 63 s (tcp_synack_retries 5).
  EXPECT_EQ(syns_, 6);
  EXPECT_GE(took, seconds(62));
  EXPECT_LE(took, seconds(64));
  EXPECT_EQ(conn_->close_reason(), CloseReason::TimedOut);
}

TEST_F(GiveUpTest, DataKeepsTheLongerLimit) {
  config_.max_retransmissions = 8;
  make();
  establish_active();
  conn_->outbound().push("data");
  conn_->tick(now_);
  expect_segment();
  run_until_closed(std::chrono::hours(1));
  EXPECT_EQ(conn_->sender().stats().rto_expirations, 8u);
  EXPECT_EQ(conn_->close_reason(), CloseReason::TimedOut);
}

}  // namespace
}  // namespace tinytcp::tcp

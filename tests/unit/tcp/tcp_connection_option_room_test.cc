// RFC 9293 §3.7.1 and RFC 6691: the options of a segment come out of the MSS,
// so a full-sized data segment that carries timestamps and SACK blocks still
// fits the path.

#include <gtest/gtest.h>

#include <string>

#include "tcp/tcp_connection.hh"
#include "unit/tcp/tcp_connection_harness.hh"

namespace tinytcp::tcp {
namespace {

class OptionRoomTest : public TcpConnectionTest {
 protected:
  // ESTABLISHED with timestamps and SACK (peer MSS 1400), holding three
  // out-of-order ranges of the peer's data, so our segments carry 3 blocks.
  void establish_holding_three_ranges() {
    peer_timestamps_ = true;
    establish_active();
    for (uint32_t offset : {100u, 300u, 500u}) {
      deliver(peer(offset, std::string(50, 'x')));
      const auto dup = expect_segment();  // out of order: ACKed at once
      ASSERT_EQ(dup.options.sack_count, 1u + offset / 200);
    }
  }
};

size_t option_and_payload_bytes(const TcpSegment& s, const std::string& payload) {
  return payload.size() + non_syn_option_bytes(s.options);
}

TEST_F(OptionRoomTest, FullSegmentsLeaveRoomForSackBlocks) {
  establish_holding_three_ranges();
  conn_->outbound().push(std::string(20000, 'd'));
  conn_->tick(now_);
  ASSERT_FALSE(sent_.empty());
  while (!sent_.empty()) {
    const auto s = expect_segment();
    EXPECT_EQ(s.options.sack_count, 3u);
    // 1400 - 12 (timestamps) - 28 (NOP NOP SACK with three blocks).
    EXPECT_EQ(last_payload_.size(), 1360u);
    EXPECT_LE(option_and_payload_bytes(s, last_payload_), 1400u);
  }
  EXPECT_EQ(conn_->stats().sack_blocks_trimmed, 0u);
}

TEST_F(OptionRoomTest, SegmentsGrowBackWhenTheHolesFill) {
  establish_holding_three_ranges();
  deliver(peer(0, std::string(550, 'f')));  // fills every hole
  const auto ack = expect_segment();
  EXPECT_EQ(ack.ackno, kPeerIsn + 551);
  // Nothing held any more; the one block is the D-SACK of the first range the
  // segment repeated (RFC 2883 §4.2, partial duplicates), sent this once.
  ASSERT_EQ(ack.options.sack_count, 1u);
  EXPECT_EQ(ack.options.sack[0].left, kPeerIsn + 101);
  EXPECT_EQ(ack.options.sack[0].right, kPeerIsn + 151);
  conn_->outbound().push(std::string(5000, 'd'));
  conn_->tick(now_);
  expect_segment();
  EXPECT_EQ(last_payload_.size(), 1388u);  // 1400 - 12 (timestamps)
}

TEST_F(OptionRoomTest, RetransmissionSizedBeforeTheHolesIsSplit) {
  peer_timestamps_ = true;
  establish_active();
  conn_->outbound().push(std::string(1388, 'd'));
  conn_->tick(now_);
  expect_segment();
  ASSERT_EQ(last_payload_.size(), 1388u);
  for (uint32_t offset : {100u, 300u, 500u}) {
    deliver(peer(offset, std::string(50, 'x')));
    expect_segment();
  }
  advance(seconds(1));  // a probe (TLP): what fits of the segment, with every block
  const auto first = expect_segment();
  EXPECT_EQ(first.seqno, kIsn + 1);
  EXPECT_EQ(last_payload_.size(), 1360u);
  EXPECT_EQ(first.options.sack_count, 3u);
  EXPECT_EQ(conn_->sender_stats().retransmissions_split, 1u);
  EXPECT_EQ(conn_->stats().sack_blocks_trimmed, 0u);
  // The peer acknowledges the piece; RACK finds the rest lost (sent before
  // a delivered segment) and it follows.
  TcpSegment ack = peer(550);
  ack.ackno = kIsn + 1 + 1360;
  deliver(ack);
  advance(milliseconds(500));
  const auto rest = expect_segment();
  EXPECT_EQ(rest.seqno, kIsn + 1 + 1360);
  EXPECT_EQ(last_payload_.size(), 28u);
}

}  // namespace
}  // namespace tinytcp::tcp

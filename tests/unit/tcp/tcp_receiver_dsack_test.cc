// RFC 2883: the receiver reports duplicate segments in the first SACK block
// of the ACK they trigger (D-SACK), so the sender can tell a spurious
// retransmission from a lost one.

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "tcp/tcp_receiver.hh"

namespace tinytcp::tcp {
namespace {

constexpr Wrap32 kIsn{0xfffff000};  // the peer's ISN, close to wrapping

// A SACK block as stream offsets [left, right) (sequence number - ISN - 1).
using Block = std::pair<uint32_t, uint32_t>;

class ReceiverDsackTest : public ::testing::Test {
 protected:
  void SetUp() override {
    config_.receive_buffer_bytes = 64 * 1024;
    config_.window_scale = false;
    config_.mss = 1000;
    receiver_ = std::make_unique<TcpReceiver>(config_);
  }
  // The peer's SYN, negotiating SACK (and timestamps if asked).
  void syn(bool sack = true, bool timestamps = false) {
    TcpSegment s;
    s.syn = true;
    s.seqno = kIsn;
    if (timestamps) {
      s.options.timestamps = Timestamps{tsval_, 0};
    }
    receiver_->set_sack(sack);
    receiver_->set_timestamps(timestamps);
    receiver_->on_syn(s, now_);
    TcpSegment reply;
    reply.syn = true;
    receiver_->fill(reply);
  }
  TcpSegment segment(uint32_t offset, std::string_view data, bool fin = false) {
    TcpSegment s;
    s.seqno = kIsn + 1 + offset;
    s.ack = true;
    s.payload = data;
    s.fin = fin;
    if (timestamps_) {
      s.options.timestamps = Timestamps{tsval_, 0};
    }
    return s;
  }
  // Delivers a segment as the connection does: check(), then receive() if
  // acceptable. Returns whether it was acceptable.
  bool deliver(const TcpSegment& s) {
    if (receiver_->check(s, now_)) {
      return false;
    }
    receiver_->receive(s, now_);
    return true;
  }
  void data(uint32_t offset, uint32_t length, bool fin = false) {
    payloads_.emplace_back(length, 'x');
    deliver(segment(offset, payloads_.back(), fin));
  }
  // The SACK blocks of the ACK we would send now.
  std::vector<Block> ack_blocks() {
    TcpSegment s;
    if (timestamps_) {
      s.options.timestamps = Timestamps{1, 0};
    }
    receiver_->fill(s);
    std::vector<Block> blocks;
    for (size_t i = 0; i < s.options.sack_count; ++i) {
      blocks.emplace_back(static_cast<uint32_t>(s.options.sack[i].left - (kIsn + 1)),
                          static_cast<uint32_t>(s.options.sack[i].right - (kIsn + 1)));
    }
    return blocks;
  }
  uint64_t dsacks() const { return receiver_->stats().dsack_blocks; }

  TcpConfig config_;
  std::unique_ptr<TcpReceiver> receiver_;
  std::vector<std::string> payloads_;
  Instant now_;
  bool timestamps_ = false;
  uint32_t tsval_ = 1000;
};

TEST_F(ReceiverDsackTest, SegmentBelowRcvNxtIsReportedInTheFirstBlock) {
  syn();
  data(0, 1000);
  data(1000, 1000);
  ack_blocks();
  data(0, 1000);  // a spurious retransmission: refused, answered with an ACK
  EXPECT_TRUE(receiver_->ack_due(now_));
  EXPECT_EQ(ack_blocks(), (std::vector<Block>{{0, 1000}}));
  EXPECT_EQ(dsacks(), 1u);
}

TEST_F(ReceiverDsackTest, DsackIsSentOnlyInTheAckItTriggers) {
  syn();
  data(0, 1000);
  ack_blocks();
  data(0, 1000);
  EXPECT_EQ(ack_blocks().size(), 1u);
  EXPECT_TRUE(ack_blocks().empty());
  EXPECT_EQ(dsacks(), 1u);
}

TEST_F(ReceiverDsackTest, PartlyOldSegmentReportsOnlyTheOldPart) {
  syn();
  data(0, 1000);
  ack_blocks();
  data(500, 1000);  // 500-1000 old, 1000-1500 new
  EXPECT_EQ(ack_blocks(), (std::vector<Block>{{500, 1000}}));
  EXPECT_EQ(receiver_->inbound().bytes_buffered(), 1500u);
}

TEST_F(ReceiverDsackTest, DuplicateOfHeldDataIsFollowedByItsBlock) {
  syn();
  data(0, 100);
  data(200, 100);
  data(400, 100);
  ack_blocks();
  data(220, 40);
  // RFC 2883 §4: the duplicate, then the block holding it, then the rest.
  EXPECT_EQ(ack_blocks(), (std::vector<Block>{{220, 260}, {200, 300}, {400, 500}}));
}

TEST_F(ReceiverDsackTest, DuplicateOfAWholeHeldBlockStillReportsTheBlock) {
  syn();
  data(0, 100);
  data(400, 100);
  data(200, 100);
  ack_blocks();
  data(400, 100);  // the same left edge as the block that holds it
  EXPECT_EQ(ack_blocks(), (std::vector<Block>{{400, 500}, {400, 500}, {200, 300}}));
}

TEST_F(ReceiverDsackTest, SegmentOverlappingHeldDataReportsTheOverlapAndTheGrownBlock) {
  syn();
  data(0, 100);
  data(200, 100);
  ack_blocks();
  data(250, 100);  // 250-300 held, 300-350 new
  EXPECT_EQ(ack_blocks(), (std::vector<Block>{{250, 300}, {200, 350}}));
}

TEST_F(ReceiverDsackTest, NewDataIsNotADuplicate) {
  syn();
  data(0, 100);
  data(200, 100);
  EXPECT_EQ(ack_blocks(), (std::vector<Block>{{200, 300}}));
  data(100, 50);
  EXPECT_EQ(ack_blocks(), (std::vector<Block>{{200, 300}}));
  EXPECT_EQ(dsacks(), 0u);
}

TEST_F(ReceiverDsackTest, RetransmittedFinIsReported) {
  syn();
  data(0, 100, true);
  ack_blocks();
  data(0, 100, true);
  EXPECT_EQ(ack_blocks(), (std::vector<Block>{{0, 101}}));  // the FIN's number included
}

TEST_F(ReceiverDsackTest, SegmentRefusedByPawsBelowRcvNxtIsReported) {
  timestamps_ = true;
  syn(true, true);
  ++tsval_;
  data(0, 1000);
  ack_blocks();
  --tsval_;  // an old copy, delayed in the network
  data(0, 1000);
  EXPECT_EQ(receiver_->stats().drops[ReceiverDrop::Paws], 1u);
  EXPECT_EQ(ack_blocks(), (std::vector<Block>{{0, 1000}}));
}

TEST_F(ReceiverDsackTest, SegmentBeyondTheWindowIsNotADuplicate) {
  syn();
  data(0, 100);
  ack_blocks();
  data(100 + 64 * 1024, 100);
  EXPECT_EQ(receiver_->stats().drops[ReceiverDrop::OutOfWindow], 1u);
  EXPECT_TRUE(ack_blocks().empty());
}

TEST_F(ReceiverDsackTest, NothingWithoutSack) {
  syn(false);
  data(0, 1000);
  ack_blocks();
  data(0, 1000);
  EXPECT_TRUE(ack_blocks().empty());
  EXPECT_EQ(dsacks(), 0u);
}

TEST_F(ReceiverDsackTest, WithTimestampsTheDsackTakesOneOfThreeBlocks) {
  timestamps_ = true;
  syn(true, true);
  data(0, 100);
  for (uint32_t offset : {200u, 400u, 600u, 800u}) {
    data(offset, 50);
  }
  ack_blocks();
  data(600, 50);
  EXPECT_EQ(ack_blocks(), (std::vector<Block>{{600, 650}, {600, 650}, {800, 850}}));
}

TEST_F(ReceiverDsackTest, OptionBytesIncludeThePendingDsack) {
  syn();
  data(0, 100);
  data(200, 100);
  ack_blocks();
  EXPECT_EQ(receiver_->sack_option_bytes(), sack_option_bytes(1));
  data(0, 100);
  EXPECT_EQ(receiver_->sack_option_bytes(), sack_option_bytes(2));
  EXPECT_EQ(ack_blocks().size(), 2u);
  EXPECT_EQ(receiver_->sack_option_bytes(), sack_option_bytes(1));
}

TEST_F(ReceiverDsackTest, OptionBytesOfADsackAlone) {
  syn();
  data(0, 100);
  ack_blocks();
  EXPECT_EQ(receiver_->sack_option_bytes(), 0u);
  data(0, 100);
  EXPECT_EQ(receiver_->sack_option_bytes(), sack_option_bytes(1));
}

}  // namespace
}  // namespace tinytcp::tcp

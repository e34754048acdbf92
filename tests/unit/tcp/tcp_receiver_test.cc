#include "tcp/tcp_receiver.hh"

#include <gtest/gtest.h>

#include <string>

#include "util/random.hh"

namespace tinytcp::tcp {
namespace {

using std::chrono::milliseconds;

constexpr Wrap32 kIsn{0xfffff000};  // the peer's ISN, close to wrapping

class TcpReceiverTest : public ::testing::Test {
 protected:
  void make(TcpConfig config) {
    config_ = config;
    receiver_ = std::make_unique<TcpReceiver>(config_);
  }
  void SetUp() override {
    TcpConfig c;
    c.receive_buffer_bytes = 64 * 1024;
    c.window_scale = false;
    c.mss = 1000;
    make(c);
  }
  // The peer's SYN; negotiates the given options.
  void syn(bool scaling = false, bool sack = false, bool timestamps = false, uint32_t tsval = 0) {
    TcpSegment s;
    s.syn = true;
    s.seqno = kIsn;
    if (timestamps) {
      s.options.timestamps = Timestamps{tsval, 0};
    }
    receiver_->set_window_scaling(scaling);
    receiver_->set_sack(sack);
    receiver_->set_timestamps(timestamps);
    receiver_->on_syn(s, now_);
    TcpSegment reply;
    reply.syn = true;
    receiver_->fill(reply);  // our SYN-ACK
  }
  // A data segment at stream offset `offset`.
  TcpSegment segment(uint64_t offset, std::string_view data, bool fin = false) {
    TcpSegment s;
    s.seqno = kIsn + 1 + static_cast<uint32_t>(offset);
    s.ack = true;
    s.payload = data;
    s.fin = fin;
    return s;
  }
  std::optional<ReceiverDrop> deliver(const TcpSegment& s) {
    const auto drop = receiver_->check(s, now_);
    if (!drop) {
      receiver_->receive(s, now_);
    }
    return drop;
  }
  void data(uint64_t offset, std::string_view bytes, bool fin = false) {
    ASSERT_FALSE(deliver(segment(offset, bytes, fin))) << "offset " << offset;
  }
  // The ACK we would send now.
  TcpSegment ack(std::optional<Timestamps> ts = std::nullopt) {
    TcpSegment s;
    s.options.timestamps = ts;
    receiver_->fill(s);
    return s;
  }
  uint32_t ackno_offset() { return static_cast<uint32_t>(*receiver_->ackno() - (kIsn + 1)); }
  std::string read(size_t max = SIZE_MAX) {
    std::string out;
    auto& in = receiver_->inbound();
    while (in.bytes_buffered() > 0 && out.size() < max) {
      const auto v = in.peek().substr(0, max - out.size());
      out.append(v);
      in.pop(v.size());
    }
    return out;
  }
  bool ack_due() const { return receiver_->ack_due(now_); }
  void advance(Duration d) { now_ += d; }

  TcpConfig config_;
  std::unique_ptr<TcpReceiver> receiver_;
  Instant now_;
};

TEST_F(TcpReceiverTest, NoAcknoBeforeSyn) {
  EXPECT_FALSE(receiver_->ackno());
  TcpSegment s;
  receiver_->fill(s);
  EXPECT_FALSE(s.ack);
}

TEST_F(TcpReceiverTest, SynSetsAcknoToIsnPlusOne) {
  syn();
  EXPECT_EQ(*receiver_->ackno(), kIsn + 1);
  const auto a = ack();
  EXPECT_TRUE(a.ack);
  EXPECT_EQ(a.ackno, kIsn + 1);
}

TEST_F(TcpReceiverTest, InOrderDataAdvancesAcknoAcrossTheWrap) {
  syn();
  data(0, std::string(5000, 'a'));
  EXPECT_EQ(ackno_offset(), 5000u);
  EXPECT_EQ(read(), std::string(5000, 'a'));
}

TEST_F(TcpReceiverTest, OneSegmentIsAckedAfterTheDelayedAckTimeout) {
  syn();
  data(0, std::string(1000, 'a'));
  EXPECT_FALSE(ack_due());
  ASSERT_TRUE(receiver_->next_deadline());
  EXPECT_EQ(*receiver_->next_deadline(), now_ + milliseconds(40));
  advance(milliseconds(39));
  EXPECT_FALSE(ack_due());
  advance(milliseconds(1));
  EXPECT_TRUE(ack_due());
  ack();
  EXPECT_FALSE(ack_due());
  EXPECT_FALSE(receiver_->next_deadline());
}

TEST_F(TcpReceiverTest, EverySecondFullSizedSegmentIsAckedAtOnce) {
  syn();
  data(0, std::string(1000, 'a'));
  EXPECT_FALSE(ack_due());
  data(1000, std::string(1000, 'b'));
  EXPECT_TRUE(ack_due());
  ack();
  data(2000, std::string(1000, 'c'));
  EXPECT_FALSE(ack_due());
}

TEST_F(TcpReceiverTest, NoDelayWhenDelayedAckIsOff) {
  TcpConfig c = config_;
  c.delayed_ack = false;
  make(c);
  syn();
  data(0, "x");
  EXPECT_TRUE(ack_due());
}

TEST_F(TcpReceiverTest, PureAckNeedsNoAck) {
  syn();
  data(0, "");
  EXPECT_FALSE(ack_due());
  EXPECT_FALSE(receiver_->next_deadline());
}

TEST_F(TcpReceiverTest, OutOfOrderDataIsAckedAtOnceWithSack) {
  syn(false, true);
  data(2000, std::string(1000, 'c'));
  EXPECT_TRUE(ack_due());
  const auto a = ack();
  EXPECT_EQ(a.ackno, kIsn + 1);
  ASSERT_EQ(a.options.sack_count, 1);
  EXPECT_EQ(a.options.sack[0].left, kIsn + 2001);
  EXPECT_EQ(a.options.sack[0].right, kIsn + 3001);
  EXPECT_EQ(receiver_->stats().out_of_order_segments, 1u);
}

TEST_F(TcpReceiverTest, NoSackBlocksUnlessNegotiated) {
  syn();
  data(2000, "c");
  EXPECT_EQ(ack().options.sack_count, 0);
}

TEST_F(TcpReceiverTest, FillingTheGapIsAckedAtOnce) {
  syn(false, true);
  data(1000, std::string(1000, 'b'));
  ack();
  data(0, std::string(1000, 'a'));
  EXPECT_TRUE(ack_due());
  const auto a = ack();
  EXPECT_EQ(a.ackno, kIsn + 2001);
  EXPECT_EQ(a.options.sack_count, 0);
}

TEST_F(TcpReceiverTest, FillingPartOfAGapIsAckedAtOnce) {
  syn(false, true);
  data(2000, "c");
  ack();
  data(0, "a");
  EXPECT_TRUE(ack_due());
}

TEST_F(TcpReceiverTest, SackReportsTheNewestBlockFirst) {
  syn(false, true);
  data(1000, "b");
  data(3000, "d");
  data(5000, "f");
  auto a = ack();
  ASSERT_EQ(a.options.sack_count, 3);
  EXPECT_EQ(a.options.sack[0].left, kIsn + 5001);
  EXPECT_EQ(a.options.sack[1].left, kIsn + 3001);
  EXPECT_EQ(a.options.sack[2].left, kIsn + 1001);
  data(1001, "b");  // extends the oldest block: it moves to the front
  a = ack();
  ASSERT_EQ(a.options.sack_count, 3);
  EXPECT_EQ(a.options.sack[0].left, kIsn + 1001);
  EXPECT_EQ(a.options.sack[0].right, kIsn + 1003);
  EXPECT_EQ(a.options.sack[1].left, kIsn + 5001);
}

TEST_F(TcpReceiverTest, AtMostFourSackBlocksOrThreeWithTimestamps) {
  syn(false, true);
  for (uint64_t i = 1; i <= 6; ++i) {
    data(i * 100, "x");
  }
  auto a = ack();
  ASSERT_EQ(a.options.sack_count, 4);
  EXPECT_EQ(a.options.sack[0].left, kIsn + 601);

  make(config_);
  syn(false, true, true, 10);
  for (uint64_t i = 1; i <= 6; ++i) {
    ASSERT_FALSE(deliver([&] {
      auto s = segment(i * 100, "x");
      s.options.timestamps = Timestamps{11, 0};
      return s;
    }()));
  }
  a = ack(Timestamps{99, 0});
  EXPECT_EQ(a.options.sack_count, 3);
}

TEST_F(TcpReceiverTest, FinIsAckedAtOnceAndTakesOneSequenceNumber) {
  syn();
  data(0, "abc", true);
  EXPECT_TRUE(ack_due());
  EXPECT_EQ(ackno_offset(), 4u);
  EXPECT_TRUE(receiver_->fin_received());
  EXPECT_EQ(read(), "abc");
  EXPECT_TRUE(receiver_->inbound().is_finished());
}

TEST_F(TcpReceiverTest, FinOutOfOrderWaitsForTheData) {
  syn();
  data(3, "", true);
  EXPECT_FALSE(receiver_->fin_received());
  EXPECT_EQ(ackno_offset(), 0u);
  data(0, "abc");
  EXPECT_TRUE(receiver_->fin_received());
  EXPECT_EQ(ackno_offset(), 4u);
}

TEST_F(TcpReceiverTest, OldDataIsAckedAtOnce) {
  syn();
  data(0, "abc");
  data(1, "bcde");  // overlaps: accepted, the new bytes kept
  EXPECT_EQ(read(), "abcde");
  ack();
  // Entirely old: fails the acceptability test, answered with an ACK.
  EXPECT_EQ(deliver(segment(0, "abc")), ReceiverDrop::OutOfWindow);
  EXPECT_TRUE(ack_due());
}

TEST_F(TcpReceiverTest, UnscaledWindowIsTheFreeBuffer) {
  syn();
  EXPECT_EQ(ack().window, 65535);
  data(0, std::string(1000, 'a'));
  // The edge stays put until the buffer frees at least one MSS (RFC 1122
  // §4.2.3.3): the window shrinks by the data, not by the 1-byte increase.
  EXPECT_EQ(ack().window, 65535 - 1000);
  read();
  EXPECT_EQ(ack().window, 65535);
}

TEST_F(TcpReceiverTest, WindowIsScaledPerRfc7323WhenNegotiated) {
  TcpConfig c;
  c.receive_buffer_bytes = 1 << 20;
  make(c);
  ASSERT_EQ(receiver_->announced_window_shift(), 5);  // 65535 << 5 >= 1 MiB
  syn(true);
  EXPECT_EQ(ack().window, (1 << 20) >> 5);
}

TEST_F(TcpReceiverTest, SynWindowIsNeverScaled) {
  TcpConfig c;
  c.receive_buffer_bytes = 1 << 20;
  make(c);
  TcpSegment ours;
  ours.syn = true;
  receiver_->fill(ours);
  EXPECT_EQ(ours.window, 65535);
}

TEST_F(TcpReceiverTest, NoScalingUnlessThePeerAgrees) {
  TcpConfig c;
  c.receive_buffer_bytes = 1 << 20;
  make(c);
  syn(false);
  EXPECT_EQ(ack().window, 65535);
}

TEST_F(TcpReceiverTest, ZeroWindowWhenTheBufferIsFull) {
  syn();
  data(0, std::string(65536, 'a'));
  EXPECT_EQ(ack().window, 0);
  // Only a zero-length segment at RCV.NXT is acceptable (RFC 9293 §3.10.7.4).
  EXPECT_EQ(deliver(segment(65536, "z")), ReceiverDrop::OutOfWindow);
  EXPECT_FALSE(deliver(segment(65536, "")));
  EXPECT_EQ(receiver_->stats().drops[ReceiverDrop::OutOfWindow], 1u);
}

TEST_F(TcpReceiverTest, WindowUpdateGoesOutWhenTheApplicationReads) {
  syn();
  data(0, std::string(65536, 'a'));
  ack();
  EXPECT_FALSE(ack_due());
  read(999);  // less than one MSS: RFC 1122 §4.2.3.3, no update yet
  EXPECT_FALSE(ack_due());
  read(1);
  EXPECT_TRUE(ack_due());
  EXPECT_EQ(ack().window, 1000);
  EXPECT_FALSE(ack_due());
}

TEST_F(TcpReceiverTest, NoWindowUpdateWhileTheWindowIsLarge) {
  syn();
  data(0, std::string(2000, 'a'));
  ack();
  read();
  EXPECT_FALSE(ack_due());
}

TEST_F(TcpReceiverTest, UnscaledWindowOfABigBufferNeedsNoUpdates) {
  // 1 MiB buffer, no scaling: the window field tops out at 65535, so reading
  // never opens the advertised window and no update is ever due.
  TcpConfig c = config_;
  c.receive_buffer_bytes = 1 << 20;
  make(c);
  syn(false);
  for (uint64_t i = 0; i < 100; ++i) {
    data(i * 1000, std::string(1000, 'x'));
    read();
    // Only the data asks for an ACK: every second full-sized segment (RFC
    // 5681 §4.2, mss 1000 here). A window update would make every read due.
    const bool second = i % 2 == 1;
    EXPECT_EQ(receiver_->ack_due_now(), second) << i;
    EXPECT_EQ(ack_due(), second) << i;
    if (second) {
      EXPECT_EQ(ack().window, 65535) << i;
    }
  }
}

TEST_F(TcpReceiverTest, SmallIncreasesDoNotMoveTheAdvertisedWindow) {
  syn();
  data(0, std::string(65536, 'a'));
  ack();
  read(500);
  EXPECT_EQ(ack().window, 0);  // silly-window avoidance
}

TEST_F(TcpReceiverTest, RightEdgeNeverShrinks) {
  const uint64_t seed = seed_from_env("TINYTCP_SEED", 7);
  Rng rng(seed);
  for (int round = 0; round < 20; ++round) {
    TcpConfig c;
    c.receive_buffer_bytes = rng.uniform(1000, 300000);
    c.mss = 1460;
    c.window_scale = rng.chance(0.7);
    make(c);
    const bool scaling = c.window_scale;
    syn(scaling);
    const uint32_t shift = scaling ? *receiver_->announced_window_shift() : 0;
    uint64_t offset = 0;
    Wrap32 edge = *receiver_->ackno();
    for (int i = 0; i < 300; ++i) {
      const auto a = ack();
      const Wrap32 new_edge = a.ackno + (uint32_t{a.window} << shift);
      ASSERT_GE(new_edge - edge, 0) << "seed " << seed << " round " << round << " step " << i
                                    << " buffer " << c.receive_buffer_bytes << " shift " << shift
                                    << " window " << a.window << " ackno " << ackno_offset();
      edge = new_edge;
      // Fill up to what is advertised, in pieces of random size.
      const uint64_t window = static_cast<uint64_t>(edge - *receiver_->ackno());
      const uint64_t n = std::min<uint64_t>(window, rng.uniform(0, 3000));
      if (n > 0) {
        data(offset, std::string(n, 'x'));
        offset += n;
      }
      if (rng.chance(0.4)) {
        read(rng.uniform(0, 5000));
      }
    }
  }
}

TEST_F(TcpReceiverTest, SegmentsOutsideTheWindowAreDroppedAndCounted) {
  syn();
  EXPECT_EQ(deliver(segment(70000, "x")), ReceiverDrop::OutOfWindow);
  EXPECT_TRUE(ack_due());  // RFC 9293 §3.10.7.4: answer with an ACK
  ack();
  // Entirely old data is outside the window too.
  data(0, "abc");
  EXPECT_EQ(deliver(segment(0, "ab")), ReceiverDrop::OutOfWindow);
  // A segment that overlaps RCV.NXT is acceptable.
  EXPECT_FALSE(deliver(segment(1, "bcd")));
  EXPECT_EQ(receiver_->stats().drops[ReceiverDrop::OutOfWindow], 2u);
  EXPECT_EQ(read(), "abcd");
}

TEST_F(TcpReceiverTest, EchoesTsRecent) {
  syn(false, false, true, 1000);
  EXPECT_EQ(ack(Timestamps{5, 0}).options.timestamps->echo_reply, 1000u);
  auto s = segment(0, "a");
  s.options.timestamps = Timestamps{1010, 0};
  ASSERT_FALSE(deliver(s));
  EXPECT_EQ(ack(Timestamps{6, 0}).options.timestamps->echo_reply, 1010u);
}

TEST_F(TcpReceiverTest, TsRecentIgnoresSegmentsPastLastAckSent) {
  // RFC 7323 §4.3: only SEG.SEQ <= Last.ACK.sent updates TS.Recent, so
  // out-of-order data does not.
  syn(false, false, true, 1000);
  ack(Timestamps{5, 0});
  auto s = segment(500, "later");
  s.options.timestamps = Timestamps{2000, 0};
  ASSERT_FALSE(deliver(s));
  EXPECT_EQ(ack(Timestamps{6, 0}).options.timestamps->echo_reply, 1000u);
}

TEST_F(TcpReceiverTest, PawsDropsOldTimestampsAndCounts) {
  syn(false, false, true, 1000);
  auto s = segment(0, "a");
  s.options.timestamps = Timestamps{999, 0};
  EXPECT_EQ(deliver(s), ReceiverDrop::Paws);
  EXPECT_EQ(receiver_->stats().drops[ReceiverDrop::Paws], 1u);
  EXPECT_TRUE(ack_due());
  EXPECT_EQ(ackno_offset(), 0u);
  // A RST is never dropped by PAWS (RFC 7323 §5.3 R1).
  s.rst = true;
  s.payload = "";
  EXPECT_NE(receiver_->check(s, now_), ReceiverDrop::Paws);
}

TEST_F(TcpReceiverTest, PawsHandlesTimestampWrap) {
  syn(false, false, true, 0xfffffff0);
  auto s = segment(0, "a");
  s.options.timestamps = Timestamps{0x10, 0};  // newer, across the wrap
  EXPECT_FALSE(deliver(s));
}

TEST_F(TcpReceiverTest, PawsForgetsTsRecentAfter24DaysIdle) {
  syn(false, false, true, 1000);
  advance(std::chrono::hours(24 * 24 + 1));
  auto s = segment(0, "a");
  s.options.timestamps = Timestamps{5, 0};
  EXPECT_FALSE(deliver(s));
  EXPECT_EQ(ack(Timestamps{1, 0}).options.timestamps->echo_reply, 5u);
}

TEST_F(TcpReceiverTest, DataOnTheSynIsKept) {
  TcpSegment s;
  s.syn = true;
  s.seqno = kIsn;
  s.payload = "early";
  receiver_->on_syn(s, now_);
  receiver_->receive(s, now_);
  EXPECT_EQ(read(), "early");
  EXPECT_EQ(ackno_offset(), 5u);
}

TEST_F(TcpReceiverTest, EveryDropHasAName) {
  for (size_t i = 0; i < static_cast<size_t>(ReceiverDrop::kCount); ++i) {
    EXPECT_STRNE(to_string(static_cast<ReceiverDrop>(i)), "unknown");
  }
}

}  // namespace
}  // namespace tinytcp::tcp

// Receive-window autotuning through TcpReceiver: the window grows with the
// rate the application reads at, up to the maximum the window scale of our
// SYN covers, and its right edge never moves left.

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "tcp/tcp_receiver.hh"
#include "tcp/tcp_sender.hh"

namespace tinytcp::tcp {
namespace {

using std::chrono::milliseconds;

constexpr Wrap32 kIsn{0xfff00000};
constexpr uint32_t kTsOffset = 777;
constexpr uint64_t kMss = 1000;

TcpConfig autotune_config() {
  TcpConfig c;
  c.mss = kMss;
  c.receive_buffer_bytes = 64 * 1024;
  c.receive_buffer_max_bytes = 1 << 20;
  c.autotune_receive_buffer = true;
  return c;
}

// A window-limited peer over a path of `rtt`: each round trip it sends what
// our last ACK allowed, echoing that ACK's TSval; the application reads
// everything (or nothing) as it arrives.
class ReceiveAutotuneTest : public ::testing::Test {
 protected:
  void make(const TcpConfig& config) {
    receiver_ = std::make_unique<TcpReceiver>(config, kTsOffset);
    TcpSegment syn;
    syn.syn = true;
    syn.seqno = kIsn;
    syn.options.timestamps = Timestamps{1, 0};
    receiver_->set_window_scaling(true);
    receiver_->set_sack(true);
    receiver_->set_timestamps(true);
    receiver_->on_syn(syn, now_);
    ack();
  }
  // Our ACK now: records the right edge it advertises and its TSval.
  void ack() {
    TcpSegment s;
    s.syn = !acked_once_;
    s.options.timestamps = Timestamps{TcpSender::timestamp_clock(kTsOffset, now_), 0};
    receiver_->fill(s);
    const uint8_t shift = s.syn ? 0 : *receiver_->announced_window_shift();
    const uint64_t edge =
        static_cast<uint32_t>(s.ackno - (kIsn + 1)) + (uint64_t{s.window} << shift);
    EXPECT_GE(edge, edge_) << "the right edge moved left";
    edge_ = std::max(edge_, edge);
    echo_ = s.options.timestamps->value;
    acked_once_ = true;
  }
  // One round trip: the peer fills the window our last ACK advertised.
  // Returns the bytes it sent.
  uint64_t round_trip(bool app_reads = true) {
    now_ += rtt_;
    const uint64_t start = next_;
    const uint64_t limit = edge_;  // what the last round's ACKs allowed
    while (next_ + kMss <= limit) {
      TcpSegment s;
      s.seqno = kIsn + 1 + static_cast<uint32_t>(next_);
      s.ack = true;
      s.payload = payload_;
      s.options.timestamps = Timestamps{++tsval_, echo_};
      EXPECT_FALSE(receiver_->check(s, now_));
      receiver_->receive(s, now_);
      next_ += kMss;
      if (app_reads) {
        auto& in = receiver_->inbound();
        while (in.bytes_buffered() > 0) {
          in.pop(in.peek().size());
        }
      }
      if (receiver_->ack_due(now_)) {
        ack();  // its echo is timed a round trip later
      }
    }
    ack();
    return next_ - start;
  }

  std::unique_ptr<TcpReceiver> receiver_;
  Instant now_ = Instant{} + std::chrono::seconds(10);
  Duration rtt_ = milliseconds(100);
  std::string payload_ = std::string(kMss, 'x');
  uint64_t edge_ = 0;
  uint64_t next_ = 0;
  uint32_t echo_ = 0;
  uint32_t tsval_ = 1;
  bool acked_once_ = false;
};

TEST_F(ReceiveAutotuneTest, WindowScaleOfTheSynCoversTheMaximum) {
  TcpConfig c = autotune_config();
  c.receive_buffer_bytes = 1 << 20;
  c.receive_buffer_max_bytes = 16 << 20;
  EXPECT_EQ(TcpReceiver::window_shift_for(c), 9);  // 65535 << 9 >= 16 MiB > 65535 << 8
  c.autotune_receive_buffer = false;
  EXPECT_EQ(TcpReceiver::window_shift_for(c), 5);  // the 1 MiB buffer alone
  c.autotune_receive_buffer = true;
  c.receive_buffer_max_bytes = 1 << 10;  // below the buffer: the buffer counts
  EXPECT_EQ(TcpReceiver::window_shift_for(c), 5);
}

TEST_F(ReceiveAutotuneTest, WindowGrowsWithTheRateTheApplicationReads) {
  make(autotune_config());
  std::vector<uint64_t> per_rtt;
  for (int i = 0; i < 12; ++i) {
    per_rtt.push_back(round_trip());
  }
  // A fixed window would carry 64 KiB per round trip forever.
  EXPECT_LE(per_rtt.front(), 64u * 1024);
  EXPECT_GT(receiver_->buffer_bytes(), 64u * 1024);
  EXPECT_GT(receiver_->stats().buffer_grows, 0u);
  EXPECT_GE(per_rtt.back(), 8 * per_rtt.front());
  // It stops at the maximum, and so does the memory behind it.
  EXPECT_EQ(receiver_->buffer_bytes(), uint64_t{1} << 20);
  EXPECT_LE(receiver_->window_bytes(), receiver_->buffer_bytes() + receiver_->buffer_bytes() / 32 +
                                           (uint64_t{1} << *receiver_->announced_window_shift()));
  EXPECT_LE(receiver_->inbound().ring_bytes(), receiver_->inbound().capacity());
  EXPECT_LT(receiver_->inbound().capacity(), (uint64_t{1} << 20) * 11 / 10);
  // The round trip came from the echoes of our timestamps.
  ASSERT_TRUE(receiver_->rtt_estimate());
  EXPECT_EQ(*receiver_->rtt_estimate(), rtt_);
}

TEST_F(ReceiveAutotuneTest, ApplicationThatDoesNotReadGetsNoMoreWindow) {
  make(autotune_config());
  for (int i = 0; i < 6; ++i) {
    round_trip(false);
  }
  EXPECT_EQ(receiver_->buffer_bytes(), 64u * 1024);
  EXPECT_EQ(receiver_->stats().buffer_grows, 0u);
  EXPECT_LE(receiver_->inbound().bytes_buffered(), 64u * 1024 + 64u * 1024 / 32 + 1024);
}

TEST_F(ReceiveAutotuneTest, FixedWindowWhenOff) {
  TcpConfig c = autotune_config();
  c.autotune_receive_buffer = false;
  make(c);
  for (int i = 0; i < 12; ++i) {
    EXPECT_LE(round_trip(), 64u * 1024 + 64u * 1024 / 32 + 64);
  }
  EXPECT_EQ(receiver_->buffer_bytes(), 64u * 1024);
}

TEST_F(ReceiveAutotuneTest, WithoutTimestampsTheTimeToFillAWindowIsTheRoundTrip) {
  TcpConfig c = autotune_config();
  make(c);
  receiver_->set_timestamps(false);
  for (int i = 0; i < 12; ++i) {
    round_trip();
  }
  EXPECT_GT(receiver_->buffer_bytes(), 64u * 1024);
  ASSERT_TRUE(receiver_->rtt_estimate());
  EXPECT_LE(*receiver_->rtt_estimate(), rtt_);
}

}  // namespace
}  // namespace tinytcp::tcp

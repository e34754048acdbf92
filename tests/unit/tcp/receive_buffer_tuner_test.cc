#include "tcp/receive_buffer_tuner.hh"

#include <gtest/gtest.h>

namespace tinytcp::tcp {
namespace {

using std::chrono::milliseconds;

constexpr uint64_t kMss = 1000;
constexpr uint64_t kInitial = 100 * 1000;
constexpr uint64_t kMax = 4000 * 1000;

class ReceiveBufferTunerTest : public ::testing::Test {
 protected:
  // An RTT sample of `ms` from a timestamp echo on a full-sized segment.
  void echo_rtt(uint32_t ms) {
    ++tsecr_;
    tuner_.on_timestamp_echo(tsecr_ + ms, tsecr_, kMss, kMss);
  }
  // The application reads `bytes` over the next `d`.
  void read(uint64_t bytes, Duration d) {
    now_ += d;
    consumed_ += bytes;
    tuner_.on_consumed(consumed_, now_);
  }

  ReceiveBufferTuner tuner_{kInitial, kMax, kMss};
  Instant now_;
  uint64_t consumed_ = 0;
  uint32_t tsecr_ = 5000;
};

TEST_F(ReceiveBufferTunerTest, NothingGrowsWithoutAnRtt) {
  read(0, milliseconds(0));
  read(kInitial, milliseconds(100));
  read(kInitial, milliseconds(100));
  EXPECT_FALSE(tuner_.rtt());
  EXPECT_EQ(tuner_.buffer_bytes(), kInitial);
}

TEST_F(ReceiveBufferTunerTest, RateAboveTheLastRoundTripGetsTwiceItsBytesAndACushion) {
  ReceiveBufferTuner small{20 * kMss, kMax, kMss};  // measures against 10 segments first
  small.on_timestamp_echo(600, 500, kMss, kMss);
  uint64_t consumed = 0;
  small.on_consumed(consumed, now_);
  for (int i = 1; i <= 3; ++i) {  // 10 segments per RTT: no more than before
    consumed += 10 * kMss;
    small.on_consumed(consumed, now_ + i * milliseconds(100));
    EXPECT_EQ(small.buffer_bytes(), 20 * kMss);
  }
  consumed += 15 * kMss;
  small.on_consumed(consumed, now_ + milliseconds(400));
  const uint64_t grown = small.buffer_bytes();
  EXPECT_GE(grown, 2 * 15 * kMss + 16 * kMss);
  EXPECT_EQ(small.grows(), 1u);
  // The same rate again is no reason to grow.
  consumed += 15 * kMss;
  small.on_consumed(consumed, now_ + milliseconds(500));
  EXPECT_EQ(small.buffer_bytes(), grown);
}

TEST_F(ReceiveBufferTunerTest, WaitsARoundTripBetweenMeasurements) {
  echo_rtt(100);
  read(0, milliseconds(0));
  read(kInitial, milliseconds(99));
  EXPECT_EQ(tuner_.buffer_bytes(), kInitial);
  read(0, milliseconds(1));
  EXPECT_GT(tuner_.buffer_bytes(), kInitial);
}

TEST_F(ReceiveBufferTunerTest, NeverShrinks) {
  echo_rtt(100);
  read(0, milliseconds(0));
  read(400 * 1000, milliseconds(100));
  const uint64_t grown = tuner_.buffer_bytes();
  for (int i = 0; i < 10; ++i) {
    read(1000, milliseconds(100));
    EXPECT_EQ(tuner_.buffer_bytes(), grown);
  }
}

TEST_F(ReceiveBufferTunerTest, StopsAtTheMaximum) {
  echo_rtt(100);
  read(0, milliseconds(0));
  uint64_t rate = 50 * 1000;
  for (int i = 0; i < 12; ++i) {
    rate *= 2;
    read(rate, milliseconds(100));
    EXPECT_LE(tuner_.buffer_bytes(), kMax);
  }
  EXPECT_EQ(tuner_.buffer_bytes(), kMax);
}

TEST_F(ReceiveBufferTunerTest, NoGrowthWhenTheMaximumIsTheInitialBuffer) {
  ReceiveBufferTuner fixed{kInitial, kInitial / 2, kMss};
  fixed.on_timestamp_echo(600, 500, kMss, kMss);
  fixed.on_consumed(0, now_);
  fixed.on_consumed(10 * kInitial, now_ + milliseconds(200));
  EXPECT_EQ(fixed.buffer_bytes(), kInitial);
}

TEST_F(ReceiveBufferTunerTest, TimestampEchoesAreSmoothed) {
  echo_rtt(100);
  EXPECT_EQ(tuner_.rtt(), Duration(milliseconds(100)));
  echo_rtt(180);
  EXPECT_EQ(tuner_.rtt(), Duration(milliseconds(110)));  // 1/8 of the difference
}

TEST_F(ReceiveBufferTunerTest, OneSampleAnEchoAndNoneFromSmallSegments) {
  tuner_.on_timestamp_echo(600, 500, kMss - 1, kMss);  // small: not timed
  EXPECT_FALSE(tuner_.rtt());
  tuner_.on_timestamp_echo(700, 600, kMss, kMss);
  tuner_.on_timestamp_echo(900, 600, kMss, kMss);  // the same echo later
  EXPECT_EQ(tuner_.rtt(), Duration(milliseconds(100)));
}

TEST_F(ReceiveBufferTunerTest, FillingAWindowOnlyLowersTheEstimate) {
  tuner_.on_data(0, 50 * 1000, now_);
  tuner_.on_data(30 * 1000, 50 * 1000, now_ + milliseconds(60));
  EXPECT_FALSE(tuner_.rtt());  // the window is not filled yet
  tuner_.on_data(50 * 1000, 150 * 1000, now_ + milliseconds(120));
  EXPECT_EQ(tuner_.rtt(), Duration(milliseconds(120)));
  tuner_.on_data(150 * 1000, 250 * 1000, now_ + milliseconds(220));
  EXPECT_EQ(tuner_.rtt(), Duration(milliseconds(100)));
  tuner_.on_data(250 * 1000, 350 * 1000, now_ + milliseconds(520));  // the sender paused
  EXPECT_EQ(tuner_.rtt(), Duration(milliseconds(100)));
}

}  // namespace
}  // namespace tinytcp::tcp

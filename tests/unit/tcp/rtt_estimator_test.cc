#include "tcp/rtt_estimator.hh"

#include <gtest/gtest.h>

namespace tinytcp::tcp {
namespace {

using namespace std::chrono_literals;

class RttEstimatorTest : public ::testing::Test {
 protected:
  RttEstimator rtt{1s, 200ms, 60s};
};

TEST_F(RttEstimatorTest, StartsAtTheInitialRto) {
  EXPECT_EQ(rtt.rto(), 1s);  // RFC 6298 §2.1
  EXPECT_FALSE(rtt.has_sample());
}

TEST_F(RttEstimatorTest, FirstSampleSetsSrttAndHalfVariance) {
  rtt.add_sample(100ms);
  EXPECT_EQ(rtt.srtt(), 100ms);   // RFC 6298 §2.2
  EXPECT_EQ(rtt.rttvar(), 50ms);  // R / 2
  EXPECT_EQ(rtt.rto(), 300ms);    // SRTT + 4 * RTTVAR
}

TEST_F(RttEstimatorTest, LaterSamplesUseAlphaAndBeta) {
  rtt.add_sample(100ms);
  rtt.add_sample(200ms);
  // RFC 6298 §2.3: RTTVAR = 3/4 * 50 + 1/4 * |100 - 200| = 62.5 ms;
  // SRTT = 7/8 * 100 + 1/8 * 200 = 112.5 ms.
  EXPECT_EQ(rtt.rttvar(), 62500us);
  EXPECT_EQ(rtt.srtt(), 112500us);
  EXPECT_EQ(rtt.rto(), 362500us);
}

TEST_F(RttEstimatorTest, ExpectedSamplesDampTheGains) {
  rtt.add_sample(100ms);
  rtt.add_sample(200ms, 2);  // RFC 7323 Appendix G: alpha / 2, beta / 2
  EXPECT_EQ(rtt.rttvar(), 56250us);
  EXPECT_EQ(rtt.srtt(), 106250us);
}

TEST_F(RttEstimatorTest, RtoHasAFloor) {
  rtt.add_sample(1ms);
  EXPECT_EQ(rtt.rto(), 200ms);
}

TEST_F(RttEstimatorTest, RtoHasACeiling) {
  rtt.add_sample(50s);
  EXPECT_EQ(rtt.rto(), 60s);
}

TEST_F(RttEstimatorTest, GranularityBoundsTheVarianceTerm) {
  RttEstimator fine{1s, Duration{0}, 60s};
  for (int i = 0; i < 100; ++i) {
    fine.add_sample(10ms);  // RTTVAR decays toward 0
  }
  EXPECT_EQ(fine.rto(), 10ms + RttEstimator::kGranularity);
}

TEST_F(RttEstimatorTest, BackoffDoublesUpToTheMaximum) {
  rtt.add_sample(100ms);
  rtt.backoff();
  EXPECT_EQ(rtt.rto(), 600ms);
  for (int i = 0; i < 20; ++i) {
    rtt.backoff();
  }
  EXPECT_EQ(rtt.rto(), 60s);
  EXPECT_EQ(rtt.backoffs(), 21u);
}

TEST_F(RttEstimatorTest, NewSampleClearsTheBackoff) {
  rtt.add_sample(100ms);
  rtt.backoff();
  rtt.backoff();
  rtt.add_sample(100ms);
  EXPECT_EQ(rtt.backoffs(), 0u);
  EXPECT_LT(rtt.rto(), 300ms);
}

TEST_F(RttEstimatorTest, RaiseToAtLeast) {
  rtt.add_sample(10ms);
  rtt.raise_to_at_least(3s);  // RFC 6298 §5.7
  EXPECT_EQ(rtt.rto(), 3s);
  rtt.raise_to_at_least(1s);
  EXPECT_EQ(rtt.rto(), 3s);
}

TEST_F(RttEstimatorTest, TracksMinimumAndLatest) {
  rtt.add_sample(30ms);
  rtt.add_sample(20ms);
  rtt.add_sample(40ms);
  EXPECT_EQ(rtt.min_rtt(), 20ms);
  EXPECT_EQ(rtt.latest_rtt(), 40ms);
}

TEST_F(RttEstimatorTest, NegativeSampleIsIgnored) {
  rtt.add_sample(-5ms);
  EXPECT_FALSE(rtt.has_sample());
  EXPECT_EQ(rtt.rto(), 1s);
}

}  // namespace
}  // namespace tinytcp::tcp

#include "util/token_bucket.hh"

#include <gtest/gtest.h>

namespace tinytcp {
namespace {

using std::chrono::milliseconds;

TEST(TokenBucketTest, StartsFullAndEmpties) {
  TokenBucket bucket(10, 3);
  const Instant t0;
  EXPECT_TRUE(bucket.take(t0));
  EXPECT_TRUE(bucket.take(t0));
  EXPECT_TRUE(bucket.take(t0));
  EXPECT_FALSE(bucket.take(t0));
}

TEST(TokenBucketTest, RefillsAtTheRate) {
  TokenBucket bucket(10, 1);  // one token per 100 ms
  Instant t;
  EXPECT_TRUE(bucket.take(t));
  t += milliseconds(99);
  EXPECT_FALSE(bucket.take(t));  // 0.99 of a token
  t += milliseconds(1);
  EXPECT_TRUE(bucket.take(t));  // the refused take took nothing: 1.0 now
}

TEST(TokenBucketTest, NeverHoldsMoreThanTheBurst) {
  TokenBucket bucket(1000, 2);
  Instant t;
  EXPECT_TRUE(bucket.take(t));
  t += std::chrono::hours(1);
  EXPECT_TRUE(bucket.take(t));
  EXPECT_TRUE(bucket.take(t));
  EXPECT_FALSE(bucket.take(t));
}

TEST(TokenBucketTest, ZeroRateGivesOnlyTheBurst) {
  TokenBucket bucket(0, 1);
  Instant t;
  EXPECT_TRUE(bucket.take(t));
  t += std::chrono::hours(1);
  EXPECT_FALSE(bucket.take(t));
}

}  // namespace
}  // namespace tinytcp

#include "util/ring_queue.hh"

#include <gtest/gtest.h>

#include <deque>

#include "util/random.hh"

namespace tinytcp {
namespace {

TEST(RingQueueTest, StartsEmpty) {
  RingQueue<int> q;
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.size(), 0u);
  EXPECT_EQ(q.capacity(), 0u);
}

TEST(RingQueueTest, FifoOrderWithRandomAccess) {
  RingQueue<int> q;
  for (int i = 0; i < 5; ++i) {
    q.push_back(i);
  }
  EXPECT_EQ(q.front(), 0);
  EXPECT_EQ(q.back(), 4);
  EXPECT_EQ(q[2], 2);
  q.pop_front();
  EXPECT_EQ(q.front(), 1);
  EXPECT_EQ(q[3], 4);
  EXPECT_EQ(q.size(), 4u);
}

TEST(RingQueueTest, SteadyStateDoesNotGrow) {
  RingQueue<int> q(32);
  const size_t cap = q.capacity();
  for (int i = 0; i < 10000; ++i) {
    q.push_back(i);
    if (q.size() > 20) {
      q.pop_front();
    }
  }
  EXPECT_EQ(q.capacity(), cap);
  EXPECT_EQ(q.back(), 9999);
  EXPECT_EQ(q.front(), 9999 - 19);
}

TEST(RingQueueTest, GrowsAcrossTheWrapPointKeepingOrder) {
  RingQueue<int> q;
  for (int i = 0; i < 12; ++i) {
    q.push_back(i);
  }
  for (int i = 0; i < 10; ++i) {
    q.pop_front();
  }
  for (int i = 12; i < 40; ++i) {  // wraps, then grows
    q.push_back(i);
  }
  ASSERT_EQ(q.size(), 30u);
  for (size_t i = 0; i < q.size(); ++i) {
    EXPECT_EQ(q[i], static_cast<int>(i) + 10);
  }
}

TEST(RingQueueTest, MatchesDequeUnderRandomOperations) {
  const uint64_t seed = seed_from_env("TINYTCP_SEED", 0x5eed);
  SCOPED_TRACE(testing::Message() << "TINYTCP_SEED=" << seed);
  Rng rng(seed);
  RingQueue<uint64_t> q;
  std::deque<uint64_t> model;
  for (int step = 0; step < 20000; ++step) {
    if (model.empty() || rng.chance(0.55)) {
      const uint64_t v = rng.next();
      q.push_back(v);
      model.push_back(v);
    } else {
      q.pop_front();
      model.pop_front();
    }
    ASSERT_EQ(q.size(), model.size());
    if (!model.empty()) {
      const size_t i = static_cast<size_t>(rng.uniform(0, model.size() - 1));
      ASSERT_EQ(q[i], model[i]);
    }
  }
}

}  // namespace
}  // namespace tinytcp

#include "session/replay_buffer.hh"

#include <gtest/gtest.h>

#include <string>

namespace tinytcp::session {
namespace {

TEST(ReplayBufferTest, TakesOnlyWhatFits) {
  ReplayBuffer b(10);
  EXPECT_EQ(b.append("abcdefgh"), 8u);
  EXPECT_EQ(b.append("ijkl"), 2u);
  EXPECT_EQ(b.append("m"), 0u);
  EXPECT_EQ(b.unacked(), 10u);
  EXPECT_EQ(b.free_space(), 0u);
}

TEST(ReplayBufferTest, AcknowledgeReleasesAndViewsByPosition) {
  ReplayBuffer b(10);
  b.append("abcdefghij");
  EXPECT_EQ(b.view_at(3, 4), "defg");
  EXPECT_TRUE(b.acknowledge(4));
  EXPECT_EQ(b.acked(), 4u);
  EXPECT_EQ(b.view_at(4, 100), "efghij");
  EXPECT_EQ(b.view_at(3, 1), "");  // released
  EXPECT_EQ(b.append("klmn"), 4u);
  EXPECT_EQ(b.end(), 14u);
  // Views across the wrap come in two parts.
  std::string all;
  for (uint64_t at = 4; at < b.end();) {
    const auto v = b.view_at(at, 100);
    ASSERT_FALSE(v.empty());
    all += v;
    at += v.size();
  }
  EXPECT_EQ(all, "efghijklmn");
}

TEST(ReplayBufferTest, OldAckIgnoredAckPastEndRefused) {
  ReplayBuffer b(8);
  b.append("abcd");
  EXPECT_TRUE(b.acknowledge(3));
  EXPECT_TRUE(b.acknowledge(1));
  EXPECT_EQ(b.acked(), 3u);
  EXPECT_FALSE(b.acknowledge(5));
  EXPECT_EQ(b.acked(), 3u);
  EXPECT_TRUE(b.acknowledge(4));
  EXPECT_EQ(b.unacked(), 0u);
  EXPECT_EQ(b.view_at(4, 10), "");
}

TEST(ReplayBufferTest, SixtyFourBitPositionsKeepCounting) {
  ReplayBuffer b(4);
  uint64_t total = 0;
  for (int i = 0; i < 1000; ++i) {
    total += b.append("xyz");
    ASSERT_TRUE(b.acknowledge(b.end()));
  }
  EXPECT_EQ(total, 3000u);
  EXPECT_EQ(b.acked(), 3000u);
}

}  // namespace
}  // namespace tinytcp::session

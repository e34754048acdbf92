#include "tcp/isn.hh"

#include <gtest/gtest.h>

#include <set>

#include "util/hash.hh"

namespace tinytcp::tcp {
namespace {

using std::chrono::microseconds;

constexpr uint32_t kLocal = 0x0a000001;
constexpr uint32_t kRemote = 0x0a000002;

TEST(IsnTest, SameTupleAndTimeGiveTheSameIsn) {
  const IsnGenerator g("secret");
  const Instant t = Instant::from_epoch(microseconds(123456));
  EXPECT_EQ(g.generate(kLocal, 1000, kRemote, 80, t), g.generate(kLocal, 1000, kRemote, 80, t));
}

TEST(IsnTest, HashIsTruncatedHmacSha256OfTheTuple) {
  const IsnGenerator g("key");
  const std::string tuple{"\x0a\x00\x00\x01\x03\xe8\x0a\x00\x00\x02\x00\x50", 12};
  const auto digest = hmac_sha256("key", tuple);
  const uint32_t expected = (uint32_t{digest[0]} << 24) | (uint32_t{digest[1]} << 16) |
                            (uint32_t{digest[2]} << 8) | digest[3];
  EXPECT_EQ(g.hash(kLocal, 1000, kRemote, 80), expected);
  EXPECT_EQ(g.generate(kLocal, 1000, kRemote, 80, Instant{}).raw(), expected);
}

TEST(IsnTest, TimerTicksEveryFourMicroseconds) {
  EXPECT_EQ(IsnGenerator::timer(Instant::from_epoch(microseconds(3))), 0u);
  EXPECT_EQ(IsnGenerator::timer(Instant::from_epoch(microseconds(4))), 1u);
  EXPECT_EQ(IsnGenerator::timer(Instant::from_epoch(microseconds(4000))), 1000u);
  const IsnGenerator g("secret");
  const Instant t = Instant::from_epoch(std::chrono::seconds(5));
  EXPECT_EQ(g.generate(kLocal, 1, kRemote, 2, t + microseconds(400)) -
                g.generate(kLocal, 1, kRemote, 2, t),
            100);
}

TEST(IsnTest, TimerWrapsAfter2To32Ticks) {
  const Instant t = Instant::from_epoch(microseconds(uint64_t{4} << 32));
  EXPECT_EQ(IsnGenerator::timer(t), 0u);
}

TEST(IsnTest, DifferentTuplesAndKeysGiveDifferentIsns) {
  const IsnGenerator a("secret");
  const IsnGenerator b("other secret");
  std::set<uint32_t> seen;
  for (uint16_t port = 1000; port < 1100; ++port) {
    seen.insert(a.generate(kLocal, port, kRemote, 80, Instant{}).raw());
  }
  seen.insert(a.generate(kLocal, 1000, kRemote + 1, 80, Instant{}).raw());
  seen.insert(a.generate(kLocal, 1000, kRemote, 81, Instant{}).raw());
  seen.insert(b.generate(kLocal, 1000, kRemote, 80, Instant{}).raw());
  EXPECT_EQ(seen.size(), 103u);
}

}  // namespace
}  // namespace tinytcp::tcp

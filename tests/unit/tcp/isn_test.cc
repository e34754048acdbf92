#include "tcp/isn.hh"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "util/hash.hh"
#include "util/sip_hash.hh"

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

// The key is the first 16 bytes of SHA-256 of the secret.
SipHash keyed(const std::string& secret) {
  const auto digest = sha256(secret);
  SipHash::Key key{};
  std::copy_n(digest.begin(), key.size(), key.begin());
  return SipHash(key);
}

TEST(IsnTest, HashIsTruncatedSipHashOfTheTuple) {
  const IsnGenerator g("key");
  const std::string tuple{"\x0a\x00\x00\x01\x03\xe8\x0a\x00\x00\x02\x00\x50", 12};
  const auto expected = static_cast<uint32_t>(keyed("key")(tuple));
  EXPECT_EQ(g.hash(kLocal, 1000, kRemote, 80), expected);
  EXPECT_EQ(g.generate(kLocal, 1000, kRemote, 80, Instant{}).raw(), expected);
}

TEST(IsnTest, TimestampOffsetIsSipHashOfTheAddressPair) {
  const IsnGenerator g("key");
  const std::string pair{"T\x0a\x00\x00\x01\x0a\x00\x00\x02", 9};
  EXPECT_EQ(g.timestamp_offset(kLocal, kRemote), static_cast<uint32_t>(keyed("key")(pair)));
  EXPECT_NE(g.timestamp_offset(kLocal, kRemote), g.timestamp_offset(kRemote, kLocal));
  EXPECT_NE(g.timestamp_offset(kLocal, kRemote),
            IsnGenerator("other").timestamp_offset(kLocal, kRemote));
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

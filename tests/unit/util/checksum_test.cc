#include "util/checksum.hh"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "util/random.hh"

namespace tinytcp {
namespace {

// A byte-at-a-time reference (RFC 1071 §4.1).
uint16_t reference_checksum(const std::string& data) {
  uint32_t sum = 0;
  for (size_t i = 0; i + 1 < data.size(); i += 2) {
    sum += (static_cast<uint32_t>(static_cast<uint8_t>(data[i])) << 8) |
           static_cast<uint8_t>(data[i + 1]);
  }
  if (data.size() % 2 == 1) {
    sum += static_cast<uint32_t>(static_cast<uint8_t>(data.back())) << 8;
  }
  while (sum >> 16) {
    sum = (sum & 0xffff) + (sum >> 16);
  }
  return static_cast<uint16_t>(~sum);
}

TEST(InternetChecksumTest, Rfc1071Example) {
  // RFC 1071 §3: bytes 00 01 f2 03 f4 f5 f6 f7 sum to ddf2 (complement 220d).
  const std::string bytes{"\x00\x01\xf2\x03\xf4\xf5\xf6\xf7", 8};
  InternetChecksum c;
  c.add(bytes);
  EXPECT_EQ(c.value(), 0x220d);
}

TEST(InternetChecksumTest, KnownIpv4Header) {
  // A classic IPv4 header whose checksum field (b861) is correct.
  const std::string header{
      "\x45\x00\x00\x73\x00\x00\x40\x00\x40\x11\xb8\x61\xc0\xa8\x00\x01\xc0\xa8\x00\xc7", 20};
  InternetChecksum c;
  c.add(header);
  EXPECT_TRUE(c.verifies());
}

TEST(InternetChecksumTest, EmptyIsAllOnes) {
  InternetChecksum c;
  EXPECT_EQ(c.value(), 0xffff);
}

TEST(InternetChecksumTest, PiecewiseEqualsWholeForAnySplit) {
  Rng rng(seed_from_env("TINYTCP_SEED", 7));
  for (int trial = 0; trial < 500; ++trial) {
    const std::string data = rng.bytes(rng.uniform(0, 300));
    const uint16_t want = reference_checksum(data);
    InternetChecksum whole;
    whole.add(data);
    ASSERT_EQ(whole.value(), want) << "seed " << rng.seed() << " trial " << trial;
    InternetChecksum parts;
    size_t at = 0;
    while (at < data.size()) {
      const size_t n = rng.uniform(1, data.size() - at);
      parts.add(std::string_view(data).substr(at, n));
      at += n;
    }
    ASSERT_EQ(parts.value(), want) << "seed " << rng.seed() << " trial " << trial;
  }
}

TEST(InternetChecksumTest, LongUnalignedBuffersMatchReference) {
  // Past 32 bytes the sum runs eight bytes per load in native order: every
  // length and start offset, odd ones included, must give the same result.
  Rng rng(seed_from_env("TINYTCP_SEED", 13));
  for (int trial = 0; trial < 300; ++trial) {
    const std::string data = rng.bytes(rng.uniform(0, 9100));
    const size_t skip = rng.uniform(0, 7);
    const std::string tail = data.substr(std::min(skip, data.size()));
    InternetChecksum c;
    c.add(tail);
    ASSERT_EQ(c.value(), reference_checksum(tail)) << "seed " << rng.seed() << " trial " << trial;
    InternetChecksum split;
    const size_t cut = rng.uniform(0, tail.size());
    split.add(std::string_view(tail).substr(0, cut));
    split.add(std::string_view(tail).substr(cut));
    ASSERT_EQ(split.value(), reference_checksum(tail))
        << "seed " << rng.seed() << " trial " << trial;
  }
}

TEST(InternetChecksumTest, AllOnesBulkDoesNotLoseCarries) {
  const std::string data(65536, '\xff');
  InternetChecksum c;
  c.add(data);
  EXPECT_EQ(c.value(), reference_checksum(data));
}

TEST(InternetChecksumTest, AddU16AfterOddByteKeepsAlignment) {
  const std::string data{"\x12\x34\x56", 3};
  InternetChecksum a;
  a.add(data.substr(0, 1));
  a.add_u16(0x3456);
  EXPECT_EQ(a.value(), reference_checksum(data));
}

TEST(InternetChecksumTest, AdjustMatchesRecompute) {
  Rng rng(seed_from_env("TINYTCP_SEED", 11));
  for (int trial = 0; trial < 500; ++trial) {
    std::string data = rng.bytes(2 * rng.uniform(1, 30));
    const uint16_t before = reference_checksum(data);
    const size_t word = 2 * rng.uniform(0, data.size() / 2 - 1);
    const auto old_field = static_cast<uint16_t>((static_cast<uint8_t>(data[word]) << 8) |
                                                 static_cast<uint8_t>(data[word + 1]));
    const auto new_field = static_cast<uint16_t>(rng.next());
    data[word] = static_cast<char>(new_field >> 8);
    data[word + 1] = static_cast<char>(new_field & 0xff);
    const uint16_t adjusted = checksum_adjust(before, old_field, new_field);
    // Both 0x0000 and 0xffff represent zero in ones' complement.
    const uint16_t want = reference_checksum(data);
    EXPECT_TRUE(adjusted == want || (adjusted == 0xffff && want == 0) ||
                (adjusted == 0 && want == 0xffff))
        << "seed " << rng.seed() << " trial " << trial;
  }
}

}  // namespace
}  // namespace tinytcp

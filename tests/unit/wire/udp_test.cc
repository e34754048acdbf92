#include "wire/udp.hh"

#include <gtest/gtest.h>

#include <string>

#include "unit/wire/test_bytes.hh"
#include "util/random.hh"

namespace tinytcp::wire {
namespace {

using test::from_hex;

const Ipv4Address kSrc = Ipv4Address::from_octets(10, 0, 0, 1);
const Ipv4Address kDst = Ipv4Address::from_octets(10, 0, 0, 2);

// 10.0.0.1:4660 -> 10.0.0.2:53 "hi". Checksum by hand: pseudo-header
// 0a00+0001+0a00+0002+0011+000a = 0x141e; header 1234+0035+000a = 0x1273;
// data 6869; total 0x8efa (no carry), ~ = 0x7105.
const std::string kGolden = from_hex("1234 0035 000a 7105 6869");

std::string serialize_udp(const UdpHeader& h, std::string_view data, Ipv4Address src = kSrc,
                          Ipv4Address dst = kDst) {
  std::string out(UdpHeader::kSize + data.size(), '\0');
  BufferWriter w(out.data(), out.size());
  serialize(h, data, src, dst, w);
  EXPECT_TRUE(w.ok());
  return out;
}

void expect_error(const std::string& bytes, UdpError e) {
  const auto v = parse_udp(bytes, kSrc, kDst);
  ASSERT_FALSE(v);
  EXPECT_EQ(v.error(), e) << to_string(v.error());
}

TEST(UdpTest, ParsesGoldenBytes) {
  const auto v = parse_udp(kGolden, kSrc, kDst);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->header.src_port, 0x1234);
  EXPECT_EQ(v->header.dst_port, 53);
  EXPECT_EQ(v->header.length, 10);
  EXPECT_EQ(v->payload, "hi");
}

TEST(UdpTest, SerializesGoldenBytes) {
  EXPECT_EQ(serialize_udp({0x1234, 53, 0, 0}, "hi"), kGolden);
}

TEST(UdpTest, RoundTripsRandomDatagrams) {
  const uint64_t seed = seed_from_env("TINYTCP_SEED", 7);
  Rng rng(seed);
  for (int i = 0; i < 1000; ++i) {
    const Ipv4Address src{static_cast<uint32_t>(rng.next())};
    const Ipv4Address dst{static_cast<uint32_t>(rng.next())};
    const UdpHeader h{static_cast<uint16_t>(rng.next()), static_cast<uint16_t>(rng.next()), 0, 0};
    const std::string data = rng.bytes(rng.uniform(0, 64));
    const auto bytes = serialize_udp(h, data, src, dst);
    EXPECT_NE(bytes.substr(6, 2), std::string(2, '\0')) << "a computed 0 goes out as ffff";
    const auto v = parse_udp(bytes, src, dst);
    ASSERT_TRUE(v) << "seed " << seed;
    EXPECT_EQ(v->header.src_port, h.src_port);
    EXPECT_EQ(v->header.dst_port, h.dst_port);
    EXPECT_EQ(v->payload, data);
  }
}

TEST(UdpTest, RejectsEveryTruncation) {
  for (size_t n = 0; n < kGolden.size(); ++n) {
    expect_error(kGolden.substr(0, n), n < 8 ? UdpError::Truncated : UdpError::BadLength);
  }
}

TEST(UdpTest, RejectsEveryFlippedBit) {
  for (size_t bit = 0; bit < 8 * kGolden.size(); ++bit) {
    EXPECT_FALSE(parse_udp(test::flip_bit(kGolden, bit), kSrc, kDst)) << bit;
  }
}

TEST(UdpTest, IgnoresTrailingPadding) {
  const auto bytes = kGolden + std::string(5, '\x55');
  const auto v = parse_udp(bytes, kSrc, kDst);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->payload, "hi");
}

TEST(UdpTest, ChecksumCoversThePseudoHeader) {
  EXPECT_FALSE(parse_udp(kGolden, kSrc, Ipv4Address::from_octets(10, 0, 0, 3)));
  EXPECT_FALSE(parse_udp(kGolden, Ipv4Address::from_octets(10, 0, 1, 1), kDst));
}

TEST(UdpTest, AcceptsZeroChecksum) {
  auto bytes = kGolden;
  bytes[6] = 0;
  bytes[7] = 0;
  bytes[8] = 'X';  // not covered by anything
  const auto v = parse_udp(bytes, kSrc, kDst);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->payload, "Xi");
}

TEST(UdpTest, RejectsLengthBelowHeader) {
  auto bytes = kGolden;
  bytes[5] = 7;
  expect_error(bytes, UdpError::BadLength);
}

TEST(UdpTest, RejectsLengthPastThePayload) {
  auto bytes = kGolden;
  bytes[5] = 11;
  expect_error(bytes, UdpError::BadLength);
}

TEST(UdpTest, RejectsBadChecksum) {
  auto bytes = kGolden;
  bytes[7] = 0x06;
  expect_error(bytes, UdpError::BadChecksum);
}

}  // namespace
}  // namespace tinytcp::wire

#include "wire/ipv4.hh"

#include <gtest/gtest.h>

#include <string>

#include "unit/wire/test_bytes.hh"
#include "util/random.hh"

namespace tinytcp::wire {
namespace {

using test::from_hex;

// A UDP datagram from 192.168.0.1 to 192.168.0.199, DF, TTL 64, 115 bytes.
const std::string kHeader = from_hex("4500 0073 0000 4000 4011 b861 c0a8 0001 c0a8 00c7");
const std::string kPayload(95, 'x');
const std::string kGolden = kHeader + kPayload;

std::string serialize_datagram(const Ipv4Header& h, std::string_view payload) {
  std::string out(Ipv4Header::kMinSize + payload.size(), '\0');
  BufferWriter w(out.data(), out.size());
  serialize(h, w);
  w.bytes(payload);
  EXPECT_TRUE(w.ok());
  return out;
}

// Rewrites the checksum so that only the field under test is wrong.
std::string with_checksum(std::string bytes) {
  const size_t ihl = size_t{static_cast<uint8_t>(bytes[0] & 0x0f)} * 4;
  bytes[10] = 0;
  bytes[11] = 0;
  const uint16_t c = ipv4_header_checksum(std::string_view(bytes).substr(0, ihl));
  bytes[10] = static_cast<char>(c >> 8);
  bytes[11] = static_cast<char>(c);
  return bytes;
}

void expect_error(const std::string& bytes, Ipv4Error e) {
  const auto v = parse_ipv4(bytes);
  ASSERT_FALSE(v);
  EXPECT_EQ(v.error(), e) << to_string(v.error());
}

TEST(Ipv4Test, ParsesGoldenBytes) {
  const auto v = parse_ipv4(kGolden);
  ASSERT_TRUE(v);
  const auto& h = v->header;
  EXPECT_EQ(h.header_length, 20);
  EXPECT_EQ(h.total_length, 115);
  EXPECT_TRUE(h.dont_fragment);
  EXPECT_FALSE(h.more_fragments);
  EXPECT_EQ(h.fragment_offset, 0);
  EXPECT_EQ(h.ttl, 64);
  EXPECT_EQ(h.protocol, static_cast<uint8_t>(IpProtocol::kUdp));
  EXPECT_EQ(h.checksum, 0xb861);
  EXPECT_EQ(h.src, Ipv4Address::from_octets(192, 168, 0, 1));
  EXPECT_EQ(h.dst, Ipv4Address::from_octets(192, 168, 0, 199));
  EXPECT_EQ(v->payload, kPayload);
  EXPECT_TRUE(v->options.empty());
}

TEST(Ipv4Test, SerializesGoldenBytes) {
  Ipv4Header h;
  h.total_length = 115;
  h.dont_fragment = true;
  h.ttl = 64;
  h.protocol = 17;
  h.src = Ipv4Address::from_octets(192, 168, 0, 1);
  h.dst = Ipv4Address::from_octets(192, 168, 0, 199);
  EXPECT_EQ(serialize_datagram(h, kPayload), kGolden);
}

TEST(Ipv4Test, RoundTripsRandomHeaders) {
  const uint64_t seed = seed_from_env("TINYTCP_SEED", 4);
  Rng rng(seed);
  for (int i = 0; i < 1000; ++i) {
    Ipv4Header h;
    const std::string payload = rng.bytes(rng.uniform(0, 100));
    h.tos = static_cast<uint8_t>(rng.next());
    h.total_length = static_cast<uint16_t>(20 + payload.size());
    h.id = static_cast<uint16_t>(rng.next());
    h.dont_fragment = rng.chance(0.5);
    h.more_fragments = rng.chance(0.5);
    h.fragment_offset = static_cast<uint16_t>(rng.uniform(0, 8191) * 8);
    h.ttl = static_cast<uint8_t>(rng.next());
    h.protocol = static_cast<uint8_t>(rng.next());
    h.src.value = static_cast<uint32_t>(rng.next());
    h.dst.value = static_cast<uint32_t>(rng.next());
    const auto bytes = serialize_datagram(h, payload);
    const auto v = parse_ipv4(bytes);
    ASSERT_TRUE(v) << "seed " << seed;
    EXPECT_EQ(v->header.tos, h.tos);
    EXPECT_EQ(v->header.id, h.id);
    EXPECT_EQ(v->header.dont_fragment, h.dont_fragment);
    EXPECT_EQ(v->header.more_fragments, h.more_fragments);
    EXPECT_EQ(v->header.fragment_offset, h.fragment_offset);
    EXPECT_EQ(v->header.ttl, h.ttl);
    EXPECT_EQ(v->header.protocol, h.protocol);
    EXPECT_EQ(v->header.src, h.src);
    EXPECT_EQ(v->header.dst, h.dst);
    EXPECT_EQ(v->payload, payload) << "seed " << seed;
  }
}

TEST(Ipv4Test, RejectsEveryTruncation) {
  for (size_t n = 0; n < kGolden.size(); ++n) {
    const auto v = parse_ipv4(std::string_view(kGolden).substr(0, n));
    ASSERT_FALSE(v) << n;
    EXPECT_EQ(v.error(), n < 20 ? Ipv4Error::Truncated : Ipv4Error::BadTotalLength) << n;
  }
}

TEST(Ipv4Test, RejectsEveryFlippedHeaderBit) {
  for (size_t bit = 0; bit < 8 * 20; ++bit) {
    EXPECT_FALSE(parse_ipv4(test::flip_bit(kGolden, bit))) << bit;
  }
}

TEST(Ipv4Test, IgnoresTrailingPadding) {
  const auto bytes = kGolden + std::string(7, '\0');
  const auto v = parse_ipv4(bytes);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->payload, kPayload);
}

TEST(Ipv4Test, SkipsOptions) {
  // IHL 6 with a 4-byte option (NOP NOP NOP EOL), total length 32.
  const auto bytes = with_checksum(
      from_hex("4600 0020 0001 0000 4006 0000 0a000001 0a000002 01010100") + "abcdefgh");
  const auto v = parse_ipv4(bytes);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->header.header_length, 24);
  EXPECT_EQ(v->options, from_hex("01010100"));
  EXPECT_EQ(v->payload, "abcdefgh");
}

TEST(Ipv4Test, RejectsBadVersion) {
  auto bytes = kGolden;
  bytes[0] = 0x65;
  expect_error(with_checksum(bytes), Ipv4Error::BadVersion);
}

TEST(Ipv4Test, RejectsHeaderLengthBelowFive) {
  auto bytes = kGolden;
  bytes[0] = 0x44;
  expect_error(with_checksum(bytes), Ipv4Error::BadHeaderLength);
}

TEST(Ipv4Test, RejectsHeaderLengthPastTheBuffer) {
  auto bytes = kHeader;
  bytes[0] = 0x4f;  // 60 bytes of header, 20 present
  expect_error(bytes, Ipv4Error::Truncated);
}

TEST(Ipv4Test, RejectsTotalLengthBelowHeaderLength) {
  auto bytes = kGolden;
  bytes[2] = 0;
  bytes[3] = 19;
  expect_error(with_checksum(bytes), Ipv4Error::BadTotalLength);
}

TEST(Ipv4Test, RejectsTotalLengthPastTheBuffer) {
  auto bytes = kGolden;
  bytes[3] = 0x74;
  expect_error(with_checksum(bytes), Ipv4Error::BadTotalLength);
}

TEST(Ipv4Test, RejectsBadChecksum) {
  auto bytes = kGolden;
  bytes[11] = 0x62;
  expect_error(bytes, Ipv4Error::BadChecksum);
}

TEST(Ipv4Test, RejectsReservedFlag) {
  auto bytes = kGolden;
  bytes[6] = static_cast<char>(0xc0);
  expect_error(with_checksum(bytes), Ipv4Error::BadFlags);
}

TEST(Ipv4Test, ParsesFragmentFields) {
  auto bytes = kGolden;
  bytes[6] = 0x20;  // MF, offset 185 * 8
  bytes[7] = static_cast<char>(185);
  const auto v = parse_ipv4(with_checksum(bytes));
  ASSERT_TRUE(v);
  EXPECT_TRUE(v->header.more_fragments);
  EXPECT_FALSE(v->header.dont_fragment);
  EXPECT_EQ(v->header.fragment_offset, 1480);
  EXPECT_TRUE(v->header.is_fragment());
}

TEST(Ipv4AddressTest, ParsesDottedQuads) {
  EXPECT_EQ(Ipv4Address::parse("10.0.0.1"), Ipv4Address::from_octets(10, 0, 0, 1));
  EXPECT_EQ(Ipv4Address::parse("255.255.255.255"), Ipv4Address{0xffffffffu});
  EXPECT_EQ(Ipv4Address::parse("0.0.0.0"), Ipv4Address{});
  for (const char* bad : {"", "1.2.3", "1.2.3.4.", "1.2.3.4.5", "256.1.1.1", "1..2.3", "a.b.c.d",
                          "1.2.3.0004", " 1.2.3.4", "1.2.3.-4"}) {
    EXPECT_FALSE(Ipv4Address::parse(bad)) << bad;
  }
}

TEST(Ipv4AddressTest, FormatsDottedQuads) {
  EXPECT_EQ(fmt::format("{}", Ipv4Address::from_octets(192, 168, 0, 199)), "192.168.0.199");
}

TEST(Ipv4AddressTest, PrefixMasks) {
  EXPECT_EQ(prefix_mask(0), 0u);
  EXPECT_EQ(prefix_mask(8), 0xff000000u);
  EXPECT_EQ(prefix_mask(32), 0xffffffffu);
}

}  // namespace
}  // namespace tinytcp::wire

#include "wire/icmp.hh"

#include <gtest/gtest.h>

#include <string>

#include "unit/wire/test_bytes.hh"

namespace tinytcp::wire {
namespace {

using test::from_hex;

// Echo request id 0x1234 seq 1 with data "abcd"; checksum computed by hand:
// 0800 + 0000 + 1234 + 0001 + 6162 + 6364 = 0xdefb, ~ = 0x2104.
const std::string kGolden = from_hex("0800 2104 1234 0001 61626364");

std::string serialize_icmp(const IcmpMessage& m) {
  std::string out(IcmpMessage::kHeaderSize + m.data.size(), '\0');
  BufferWriter w(out.data(), out.size());
  serialize(m, w);
  EXPECT_TRUE(w.ok());
  return out;
}

TEST(IcmpTest, ParsesGoldenEchoRequest) {
  const auto m = parse_icmp(kGolden);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->type, icmp::kEchoRequest);
  EXPECT_EQ(m->code, 0);
  EXPECT_EQ(m->echo_id(), 0x1234);
  EXPECT_EQ(m->echo_sequence(), 1);
  EXPECT_EQ(m->data, "abcd");
  EXPECT_FALSE(m->is_error());
}

TEST(IcmpTest, SerializesGoldenEchoRequest) {
  EXPECT_EQ(serialize_icmp(IcmpMessage::echo(icmp::kEchoRequest, 0x1234, 1, "abcd")), kGolden);
}

TEST(IcmpTest, RoundTripsFragmentationNeeded) {
  IcmpMessage m;
  m.type = icmp::kDestinationUnreachable;
  m.code = icmp::kFragmentationNeeded;
  m.rest = 1400;
  m.data = "quoted header and 8 bytes";
  const auto bytes = serialize_icmp(m);
  const auto back = parse_icmp(bytes);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->next_hop_mtu(), 1400);
  EXPECT_EQ(back->code, icmp::kFragmentationNeeded);
  EXPECT_TRUE(back->is_error());
  EXPECT_EQ(back->data, m.data);
}

TEST(IcmpTest, RejectsEveryTruncation) {
  for (size_t n = 0; n < kGolden.size(); ++n) {
    const auto m = parse_icmp(std::string_view(kGolden).substr(0, n));
    ASSERT_FALSE(m) << n;
    EXPECT_EQ(m.error(), n < 8 ? IcmpError::Truncated : IcmpError::BadChecksum) << n;
  }
}

TEST(IcmpTest, RejectsEveryFlippedBit) {
  for (size_t bit = 0; bit < 8 * kGolden.size(); ++bit) {
    const auto m = parse_icmp(test::flip_bit(kGolden, bit));
    ASSERT_FALSE(m) << bit;
    EXPECT_EQ(m.error(), IcmpError::BadChecksum);
  }
}

TEST(IcmpTest, TrailingBytesAreData) {
  // ICMP has no length field: the IP total length delimits it, so anything
  // after the header is data and covered by the checksum.
  EXPECT_FALSE(parse_icmp(kGolden + "x"));
  EXPECT_TRUE(parse_icmp(kGolden + std::string(2, '\0')));
}

const std::string kQuote =
    from_hex("4500 0073 0000 4000 4011 b861 c0a8 0001 c0a8 00c7 1f90 0035 005f 0000");

TEST(IcmpQuoteTest, ParsesQuotedHeaderAndPorts) {
  const auto q = parse_icmp_quote(kQuote);
  ASSERT_TRUE(q);
  EXPECT_EQ(q->header.protocol, 17);
  EXPECT_EQ(q->header.total_length, 115);  // the original's, not the quote's
  EXPECT_EQ(q->header.dst, Ipv4Address::from_octets(192, 168, 0, 199));
  EXPECT_EQ(q->data, from_hex("1f90 0035 005f 0000"));
}

TEST(IcmpQuoteTest, RejectsEveryTruncation) {
  for (size_t n = 0; n < kQuote.size(); ++n) {
    const auto q = parse_icmp_quote(std::string_view(kQuote).substr(0, n));
    ASSERT_FALSE(q) << n;
    EXPECT_EQ(q.error(), IcmpQuoteError::Truncated);
  }
}

TEST(IcmpQuoteTest, RejectsEachMalformedField) {
  auto bytes = kQuote;
  bytes[0] = 0x65;
  EXPECT_EQ(parse_icmp_quote(bytes).error(), IcmpQuoteError::BadVersion);
  bytes[0] = 0x44;
  EXPECT_EQ(parse_icmp_quote(bytes).error(), IcmpQuoteError::BadHeaderLength);
  bytes[0] = 0x46;  // options make the 8 bytes of data incomplete
  EXPECT_EQ(parse_icmp_quote(bytes).error(), IcmpQuoteError::Truncated);
}

}  // namespace
}  // namespace tinytcp::wire

#include "wire/ethernet.hh"

#include <gtest/gtest.h>

#include <string>

#include "unit/wire/test_bytes.hh"

namespace tinytcp::wire {
namespace {

using test::from_hex;

const MacAddress kDst{{0x02, 0x00, 0x00, 0x00, 0x00, 0x01}};
const MacAddress kSrc{{0x52, 0x54, 0x00, 0x12, 0x34, 0x56}};
const std::string kGolden = from_hex("020000000001 525400123456 0806 aabbcc");

std::string serialize_frame(const EthernetHeader& h, std::string_view payload) {
  std::string out(EthernetHeader::kSize + payload.size(), '\0');
  BufferWriter w(out.data(), out.size());
  serialize(h, w);
  w.bytes(payload);
  EXPECT_TRUE(w.ok());
  return out;
}

TEST(EthernetTest, ParsesGoldenBytes) {
  const auto f = parse_ethernet(kGolden);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->header.dst, kDst);
  EXPECT_EQ(f->header.src, kSrc);
  EXPECT_EQ(f->header.type, static_cast<uint16_t>(EtherType::kArp));
  EXPECT_EQ(f->payload, from_hex("aabbcc"));
}

TEST(EthernetTest, SerializesGoldenBytes) {
  EXPECT_EQ(serialize_frame({kDst, kSrc, 0x0806}, from_hex("aabbcc")), kGolden);
}

TEST(EthernetTest, ParsesIpv6EtherType) {
  // RFC 2464 §3: IPv6 over Ethernet is EtherType 0x86dd.
  const auto f = parse_ethernet(from_hex("333300000001 020000000001 86dd 60"));
  ASSERT_TRUE(f);
  EXPECT_EQ(f->header.type, static_cast<uint16_t>(EtherType::kIpv6));
  EXPECT_EQ(static_cast<uint16_t>(EtherType::kIpv6), 0x86dd);
}

TEST(EthernetTest, RoundTrips) {
  const EthernetHeader h{MacAddress::broadcast(), kSrc, 0x0800};
  const auto bytes = serialize_frame(h, "payload");
  const auto f = parse_ethernet(bytes);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->header.dst, h.dst);
  EXPECT_EQ(f->header.src, h.src);
  EXPECT_EQ(f->header.type, h.type);
  EXPECT_EQ(f->payload, "payload");
}

TEST(EthernetTest, RejectsEveryTruncation) {
  for (size_t n = 0; n < EthernetHeader::kSize; ++n) {
    const auto f = parse_ethernet(std::string_view(kGolden).substr(0, n));
    ASSERT_FALSE(f) << n;
    EXPECT_EQ(f.error(), EthernetError::Truncated);
  }
  EXPECT_TRUE(parse_ethernet(std::string_view(kGolden).substr(0, EthernetHeader::kSize)));
}

TEST(EthernetTest, FlippedAddressBitChangesTheAddress) {
  const auto f = parse_ethernet(test::flip_bit(kGolden, 0));
  ASSERT_TRUE(f);
  EXPECT_NE(f->header.dst, kDst);
  EXPECT_TRUE(f->header.dst.is_multicast());
}

TEST(EthernetTest, RejectsLengthField) {
  auto bytes = kGolden;
  bytes[12] = 0x05;
  bytes[13] = static_cast<char>(0xdc);  // 1500: an 802.3 length
  const auto f = parse_ethernet(bytes);
  ASSERT_FALSE(f);
  EXPECT_EQ(f.error(), EthernetError::LengthNotType);
  bytes[12] = 0x06;
  bytes[13] = 0x00;
  EXPECT_TRUE(parse_ethernet(bytes));
}

TEST(EthernetTest, KeepsPaddingInThePayload) {
  const auto bytes = kGolden + std::string(43, '\0');
  const auto f = parse_ethernet(bytes);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->payload.size(), 46u);
}

TEST(EthernetTest, FormatsAndClassifiesAddresses) {
  EXPECT_EQ(fmt::format("{}", kSrc), "52:54:00:12:34:56");
  EXPECT_TRUE(MacAddress::broadcast().is_broadcast());
  EXPECT_FALSE(kSrc.is_broadcast());
  EXPECT_TRUE(MacAddress{}.is_zero());
  EXPECT_FALSE(kSrc.is_multicast());
}

}  // namespace
}  // namespace tinytcp::wire

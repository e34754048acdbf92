#include "wire/arp.hh"

#include <gtest/gtest.h>

#include <string>

#include "unit/wire/test_bytes.hh"

namespace tinytcp::wire {
namespace {

using test::from_hex;

// who-has 10.0.0.2 tell 10.0.0.1
const std::string kGolden =
    from_hex("0001 0800 06 04 0001 525400123456 0a000001 000000000000 0a000002");

std::string serialize_arp(const ArpMessage& m) {
  std::string out(ArpMessage::kSize, '\0');
  BufferWriter w(out.data(), out.size());
  serialize(m, w);
  EXPECT_TRUE(w.ok());
  return out;
}

ArpMessage golden_message() {
  ArpMessage m;
  m.opcode = ArpOpcode::kRequest;
  m.sender_mac = {{0x52, 0x54, 0x00, 0x12, 0x34, 0x56}};
  m.sender_ip = Ipv4Address::from_octets(10, 0, 0, 1);
  m.target_ip = Ipv4Address::from_octets(10, 0, 0, 2);
  return m;
}

void expect_error(const std::string& bytes, ArpError e) {
  const auto m = parse_arp(bytes);
  ASSERT_FALSE(m);
  EXPECT_EQ(m.error(), e) << to_string(m.error());
}

TEST(ArpTest, ParsesGoldenBytes) {
  const auto m = parse_arp(kGolden);
  ASSERT_TRUE(m);
  const auto want = golden_message();
  EXPECT_EQ(m->opcode, want.opcode);
  EXPECT_EQ(m->sender_mac, want.sender_mac);
  EXPECT_EQ(m->sender_ip, want.sender_ip);
  EXPECT_EQ(m->target_mac, want.target_mac);
  EXPECT_EQ(m->target_ip, want.target_ip);
}

TEST(ArpTest, SerializesGoldenBytes) {
  EXPECT_EQ(serialize_arp(golden_message()), kGolden);
}

TEST(ArpTest, RoundTripsAReply) {
  ArpMessage m = golden_message();
  m.opcode = ArpOpcode::kReply;
  m.target_mac = {{1, 2, 3, 4, 5, 6}};
  const auto back = parse_arp(serialize_arp(m));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->opcode, ArpOpcode::kReply);
  EXPECT_EQ(back->target_mac, m.target_mac);
  EXPECT_EQ(back->sender_ip, m.sender_ip);
}

TEST(ArpTest, RejectsEveryTruncation) {
  for (size_t n = 0; n < ArpMessage::kSize; ++n) {
    expect_error(kGolden.substr(0, n), ArpError::Truncated);
  }
}

TEST(ArpTest, IgnoresTrailingPadding) {
  const auto m = parse_arp(kGolden + std::string(18, '\0'));
  ASSERT_TRUE(m);
  EXPECT_EQ(m->target_ip, golden_message().target_ip);
}

TEST(ArpTest, EveryBitFlipOfTheFixedFieldsIsRejected) {
  for (size_t bit = 0; bit < 8 * 8; ++bit) {
    EXPECT_FALSE(parse_arp(test::flip_bit(kGolden, bit))) << bit;
  }
}

TEST(ArpTest, FlippedAddressBitChangesTheAddress) {
  const auto m = parse_arp(test::flip_bit(kGolden, 8 * 27));
  ASSERT_TRUE(m);
  EXPECT_EQ(m->target_ip, Ipv4Address::from_octets(10, 0, 0, 3));
}

TEST(ArpTest, RejectsEachMalformedField) {
  auto bytes = kGolden;
  bytes[1] = 6;  // IEEE 802 hardware
  expect_error(bytes, ArpError::BadHardwareType);
  bytes = kGolden;
  bytes[2] = static_cast<char>(0x86);  // IPv6
  bytes[3] = static_cast<char>(0xdd);
  expect_error(bytes, ArpError::BadProtocolType);
  bytes = kGolden;
  bytes[4] = 8;
  expect_error(bytes, ArpError::BadHardwareLength);
  bytes = kGolden;
  bytes[5] = 16;
  expect_error(bytes, ArpError::BadProtocolLength);
  bytes = kGolden;
  bytes[7] = 3;  // RARP request
  expect_error(bytes, ArpError::BadOpcode);
  bytes[7] = 0;
  expect_error(bytes, ArpError::BadOpcode);
}

}  // namespace
}  // namespace tinytcp::wire

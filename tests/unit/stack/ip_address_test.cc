#include "stack/ip_address.hh"

#include <gtest/gtest.h>

#include <unordered_set>

namespace tinytcp::stack {
namespace {

wire::Ipv6Address v6(const char* text) {
  return *wire::Ipv6Address::parse(text);
}

TEST(IpAddressTest, DefaultIsTheIpv4ZeroAddress) {
  const IpAddress a;
  EXPECT_TRUE(a.is_v4());
  EXPECT_EQ(a.v4(), wire::Ipv4Address{});
  EXPECT_EQ(a.to_string(), "0.0.0.0");
  EXPECT_FALSE(a.is_unicast());
}

TEST(IpAddressTest, KeepsEachFamily) {
  const IpAddress four(wire::Ipv4Address{0x0a000001});
  const IpAddress six(v6("fd00::1"));
  EXPECT_TRUE(four.is_v4());
  EXPECT_EQ(four.family(), IpFamily::V4);
  EXPECT_EQ(four.v4().value, 0x0a000001u);
  EXPECT_EQ(four.v6(), wire::Ipv6Address{});
  EXPECT_TRUE(six.is_v6());
  EXPECT_EQ(six.family(), IpFamily::V6);
  EXPECT_EQ(six.v6(), v6("fd00::1"));
  EXPECT_EQ(six.v4(), wire::Ipv4Address{});
  EXPECT_EQ(four.to_string(), "10.0.0.1");
  EXPECT_EQ(six.to_string(), "fd00::1");
}

TEST(IpAddressTest, AnIpv6AddressWithTheIpv4BytesIsNotTheIpv4Address) {
  const IpAddress four(wire::Ipv4Address{0x0a000001});
  EXPECT_NE(four, IpAddress(v6("::a00:1")));         // IPv4-compatible (deprecated)
  EXPECT_NE(four, IpAddress(v6("a00:1::")));         // the bytes first
  EXPECT_NE(four, IpAddress(v6("64:ff9b::a00:1")));  // NAT64 (RFC 6052)
}

TEST(IpAddressTest, TheIpv4MappedFormIsStillIpv6) {
  // Two stacks: mapping is the API's business, not the tuple's (and
  // Ipv6Input drops mapped sources).
  const IpAddress mapped(v6("::ffff:10.0.0.1"));
  EXPECT_TRUE(mapped.is_v6());
  EXPECT_NE(mapped, IpAddress(wire::Ipv4Address{0x0a000001}));
}

TEST(IpAddressTest, OrdersIpv4FirstThenByValue) {
  const IpAddress a(wire::Ipv4Address{1});
  const IpAddress b(wire::Ipv4Address{0xffffffff});
  const IpAddress c(v6("::"));
  const IpAddress d(v6("::1"));
  const IpAddress e(v6("ffff::"));
  EXPECT_LT(a, b);
  EXPECT_LT(b, c);
  EXPECT_LT(c, d);
  EXPECT_LT(d, e);
  EXPECT_FALSE(e < a);
  EXPECT_FALSE(c < b);
}

TEST(IpAddressTest, Ipv4MixIsTheAddressValue) {
  EXPECT_EQ(IpAddress(wire::Ipv4Address{0xc0a80001}).mix(), 0xc0a80001u);
  std::unordered_set<uint32_t> mixes;
  for (uint8_t i = 0; i < 64; ++i) {
    wire::Ipv6Address a = v6("fd00::");
    a.bytes[15] = i;
    mixes.insert(IpAddress(a).mix());
  }
  EXPECT_EQ(mixes.size(), 64u);
}

TEST(IpAddressTest, ParsesEitherTextForm) {
  EXPECT_EQ(IpAddress::parse("10.0.0.1"), IpAddress(wire::Ipv4Address{0x0a000001}));
  EXPECT_EQ(IpAddress::parse("fd00::9"), IpAddress(v6("fd00::9")));
  EXPECT_EQ(IpAddress::parse("[fd00::9]"), IpAddress(v6("fd00::9")));
  EXPECT_FALSE(IpAddress::parse("[fd00::9"));
  EXPECT_FALSE(IpAddress::parse("[10.0.0.1]"));
  EXPECT_FALSE(IpAddress::parse(""));
  EXPECT_FALSE(IpAddress::parse("fd00::g"));
}

}  // namespace
}  // namespace tinytcp::stack

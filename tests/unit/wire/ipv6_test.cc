#include "wire/ipv6.hh"

#include <gtest/gtest.h>

#include <string>

#include "unit/wire/test_bytes.hh"
#include "util/random.hh"

namespace tinytcp::wire {
namespace {

using test::from_hex;

// Golden bytes built with scapy (offline):
//   IPv6(src="fd00::1", dst="fd00::2", hlim=64, tc=0xb8, fl=0x12345)
//     / ICMPv6EchoRequest(id=0x1234, seq=1, data=b"abcd")
const std::string kHeader = from_hex(
    "6b81 2345 000c 3a40 fd00 0000 0000 0000 0000 0000 0000 0001"
    "fd00 0000 0000 0000 0000 0000 0000 0002");
const std::string kPayload = from_hex("8000 aeb8 1234 0001 6162 6364");
const std::string kGolden = kHeader + kPayload;

// IPv6(src="fd00::1", dst="fd00::2", hlim=64) / TCP(sport=40000, dport=80,
// flags="S", seq=1000, window=65535, options=[("MSS", 1440)]): the TCP part.
const std::string kTcpSegment =
    from_hex("9c40 0050 0000 03e8 0000 0000 6002 ffff fdbd 0000 0204 05a0");
// ... / UDP(sport=5353, dport=53) / b"hello": the UDP part.
const std::string kUdpDatagram = from_hex("14e9 0035 000d acdf 6865 6c6c 6f");

Ipv6Address addr(const char* text) {
  const auto a = Ipv6Address::parse(text);
  EXPECT_TRUE(a) << text;
  return a.value_or(Ipv6Address{});
}

std::string serialize_datagram(const Ipv6Header& h, std::string_view payload) {
  std::string out(Ipv6Header::kSize + payload.size(), '\0');
  BufferWriter w(out.data(), out.size());
  serialize(h, w);
  w.bytes(payload);
  EXPECT_TRUE(w.ok());
  return out;
}

TEST(Ipv6Test, ParsesGoldenBytes) {
  const auto v = parse_ipv6(kGolden);
  ASSERT_TRUE(v);
  const auto& h = v->header;
  EXPECT_EQ(h.traffic_class, 0xb8);
  EXPECT_EQ(h.flow_label, 0x12345u);
  EXPECT_EQ(h.payload_length, 12);
  EXPECT_EQ(h.next_header, ipv6::kIcmpv6);
  EXPECT_EQ(h.hop_limit, 64);
  EXPECT_EQ(h.src, addr("fd00::1"));
  EXPECT_EQ(h.dst, addr("fd00::2"));
  EXPECT_EQ(v->payload, kPayload);
}

TEST(Ipv6Test, SerializesGoldenBytes) {
  Ipv6Header h;
  h.traffic_class = 0xb8;
  h.flow_label = 0x12345;
  h.payload_length = 12;
  h.next_header = ipv6::kIcmpv6;
  h.hop_limit = 64;
  h.src = addr("fd00::1");
  h.dst = addr("fd00::2");
  EXPECT_EQ(serialize_datagram(h, kPayload), kGolden);
}

TEST(Ipv6Test, SerializeCutsTheFlowLabelTo20Bits) {
  Ipv6Header h;
  h.flow_label = 0xfff12345;
  const auto v = parse_ipv6(serialize_datagram(h, ""));
  ASSERT_TRUE(v);
  EXPECT_EQ(v->header.flow_label, 0x12345u);
  EXPECT_EQ(v->header.traffic_class, 0);
}

TEST(Ipv6Test, RoundTripsRandomHeaders) {
  const uint64_t seed = seed_from_env("TINYTCP_SEED", 6);
  Rng rng(seed);
  for (int i = 0; i < 1000; ++i) {
    Ipv6Header h;
    const std::string payload = rng.bytes(rng.uniform(0, 100));
    h.traffic_class = static_cast<uint8_t>(rng.next());
    h.flow_label = static_cast<uint32_t>(rng.next()) & 0xfffff;
    h.payload_length = static_cast<uint16_t>(payload.size());
    h.next_header = static_cast<uint8_t>(rng.next());
    h.hop_limit = static_cast<uint8_t>(rng.next());
    const std::string a = rng.bytes(32);
    for (size_t b = 0; b < 16; ++b) {
      h.src.bytes[b] = static_cast<uint8_t>(a[b]);
      h.dst.bytes[b] = static_cast<uint8_t>(a[16 + b]);
    }
    const std::string bytes = serialize_datagram(h, payload);
    const auto v = parse_ipv6(bytes);
    ASSERT_TRUE(v) << "seed " << seed;
    EXPECT_EQ(v->header.traffic_class, h.traffic_class);
    EXPECT_EQ(v->header.flow_label, h.flow_label);
    EXPECT_EQ(v->header.next_header, h.next_header);
    EXPECT_EQ(v->header.hop_limit, h.hop_limit);
    EXPECT_EQ(v->header.src, h.src);
    EXPECT_EQ(v->header.dst, h.dst);
    EXPECT_EQ(v->payload, payload) << "seed " << seed;
  }
}

TEST(Ipv6Test, RejectsEveryTruncation) {
  for (size_t n = 0; n < kGolden.size(); ++n) {
    const auto v = parse_ipv6(std::string_view(kGolden).substr(0, n));
    ASSERT_FALSE(v) << n;
    EXPECT_EQ(v.error(), n < 40 ? Ipv6Error::Truncated : Ipv6Error::BadPayloadLength) << n;
  }
}

TEST(Ipv6Test, RejectsEveryFlippedVersionBit) {
  for (size_t bit = 4; bit < 8; ++bit) {
    const auto v = parse_ipv6(test::flip_bit(kGolden, bit));
    ASSERT_FALSE(v) << bit;
    EXPECT_EQ(v.error(), Ipv6Error::BadVersion);
  }
}

TEST(Ipv6Test, FlippedPayloadLengthBitIsCaughtOrShortensThePayload) {
  // The fixed header has no checksum: a flipped payload-length bit either
  // runs past the buffer or names a shorter payload (the chain walk or the
  // upper-layer checksum catches that).
  for (size_t bit = 32; bit < 48; ++bit) {
    const auto v = parse_ipv6(test::flip_bit(kGolden, bit));
    if (v) {
      EXPECT_LT(v->payload.size(), kPayload.size()) << bit;
    } else {
      EXPECT_EQ(v.error(), Ipv6Error::BadPayloadLength) << bit;
    }
  }
}

TEST(Ipv6Test, IgnoresTrailingPadding) {
  const std::string padded = kGolden + std::string(6, '\0');
  const auto v = parse_ipv6(padded);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->payload, kPayload);
}

TEST(Ipv6Test, PseudoHeaderChecksumVerifiesScapyTcpAndUdp) {
  const auto src = addr("fd00::1");
  const auto dst = addr("fd00::2");
  EXPECT_EQ(ipv6_upper_layer_checksum(src, dst, ipv6::kTcp, kTcpSegment), 0);
  EXPECT_EQ(ipv6_upper_layer_checksum(src, dst, ipv6::kUdp, kUdpDatagram), 0);
  EXPECT_EQ(ipv6_upper_layer_checksum(src, dst, ipv6::kIcmpv6, kPayload), 0);
  // Any change of address, protocol or length breaks it.
  EXPECT_NE(ipv6_upper_layer_checksum(dst, addr("fd00::3"), ipv6::kTcp, kTcpSegment), 0);
  EXPECT_NE(ipv6_upper_layer_checksum(src, dst, ipv6::kUdp, kTcpSegment), 0);
  EXPECT_NE(ipv6_upper_layer_checksum(src, dst, ipv6::kUdp, kUdpDatagram + std::string(2, '\0')),
            0);
}

TEST(Ipv6Test, PseudoHeaderChecksumFillsAZeroedField) {
  std::string segment = kTcpSegment;
  segment[16] = 0;
  segment[17] = 0;
  EXPECT_EQ(ipv6_upper_layer_checksum(addr("fd00::1"), addr("fd00::2"), ipv6::kTcp, segment),
            0xfdbd);
}

TEST(Ipv6AddressTest, FormatsPerRfc5952) {
  const std::pair<const char*, const char*> cases[] = {
      {"2001:0db8:0000:0000:0000:0000:0000:0001", "2001:db8::1"},
      {"2001:DB8::1", "2001:db8::1"},
      {"2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1"},  // §4.2.2: one zero group stays
      {"2001:0:0:1:0:0:0:1", "2001:0:0:1::1"},           // §4.2.3: the longest run
      {"2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"},     // §4.2.3: the first of equals
      {"0:0:0:0:0:0:0:0", "::"},
      {"0:0:0:0:0:0:0:1", "::1"},
      {"fe80:0:0:0:0:0:0:0", "fe80::"},
      {"1:0:0:0:0:0:0:0", "1::"},
      {"0:0:0:0:0:ffff:c000:0201", "::ffff:192.0.2.1"},  // §5
      {"ff02::1:ff00:2", "ff02::1:ff00:2"},
      {"1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8"},
      {"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"},
      {"::ffff:255.255.255.255", "::ffff:255.255.255.255"},
  };
  for (const auto& [in, out] : cases) {
    EXPECT_EQ(addr(in).to_string(), out) << in;
    EXPECT_EQ(fmt::format("{}", addr(in)), out) << in;
  }
}

TEST(Ipv6AddressTest, ParsesTheForms) {
  EXPECT_EQ(addr("1:2:3:4:5:6:1.2.3.4"), addr("1:2:3:4:5:6:102:304"));
  EXPECT_EQ(addr("::1.2.3.4"), addr("::102:304"));
  EXPECT_EQ(addr("1:2:3:4:5:6:7::"), addr("1:2:3:4:5:6:7:0"));
  EXPECT_EQ(addr("::2:3:4:5:6:7:8"), addr("0:2:3:4:5:6:7:8"));
  EXPECT_EQ(addr("fe80::1").group(0), 0xfe80);
  EXPECT_EQ(addr("fe80::1").group(7), 1);
}

TEST(Ipv6AddressTest, RejectsMalformedText) {
  for (const char* bad : {"",
                          ":",
                          ":::",
                          "1:2:3:4:5:6:7",
                          "1:2:3:4:5:6:7:8:9",
                          "1::2::3",
                          "12345::",
                          "g::",
                          "::1.2.3",
                          "1.2.3.4::",
                          "fe80::1%eth0",
                          "[::1]",
                          "::ffff:1.2.3.4:5",
                          "1:2:3:4:5:6:7:1.2.3.4",
                          "1::2:3:4:5:6:7:8",
                          ":1::2",
                          "1::2:",
                          "1:::2",
                          " ::1",
                          "::1 ",
                          "1:2:3:4:5:6:7:8::",
                          "::1.2.3.256"}) {
    EXPECT_FALSE(Ipv6Address::parse(bad)) << bad;
  }
}

TEST(Ipv6AddressTest, FormatParseRoundTrip) {
  const uint64_t seed = seed_from_env("TINYTCP_SEED", 7);
  Rng rng(seed);
  for (int i = 0; i < 2000; ++i) {
    std::array<uint16_t, 8> groups{};
    for (auto& g : groups) {
      // Many zero groups, so every placement of "::" is tried.
      g = rng.chance(0.5) ? 0 : static_cast<uint16_t>(rng.next());
    }
    const auto a = Ipv6Address::from_groups(groups);
    const std::string text = a.to_string();
    EXPECT_LE(text.size(), Ipv6Address::kMaxTextSize);
    EXPECT_EQ(Ipv6Address::parse(text), a) << text << " seed " << seed;
  }
}

TEST(Ipv6AddressTest, Classifies) {
  EXPECT_TRUE(addr("::").is_unspecified());
  EXPECT_TRUE(addr("::1").is_loopback());
  EXPECT_TRUE(addr("ff02::1").is_multicast());
  EXPECT_FALSE(addr("fe80::1").is_multicast());
  EXPECT_TRUE(addr("fe80::1").is_link_local());
  EXPECT_TRUE(addr("febf::1").is_link_local());
  EXPECT_FALSE(addr("fec0::1").is_link_local());
  EXPECT_TRUE(addr("::ffff:10.0.0.1").is_ipv4_mapped());
  EXPECT_FALSE(addr("::fffe:10.0.0.1").is_ipv4_mapped());
  EXPECT_EQ(addr("fd00::12:3456:789a").solicited_node_multicast(), addr("ff02::1:ff56:789a"));
  EXPECT_TRUE(addr("ff02::1:ff56:789a").is_solicited_node_multicast());
  EXPECT_FALSE(addr("ff02::1:fe56:789a").is_solicited_node_multicast());
}

TEST(Ipv6AddressTest, MatchesPrefixes) {
  const auto a = addr("2001:db8:abcd:12::1");
  EXPECT_TRUE(a.in_prefix(addr("::"), 0));
  EXPECT_TRUE(a.in_prefix(addr("2001:db8::"), 32));
  EXPECT_TRUE(a.in_prefix(addr("2001:db8:abc0::"), 44));
  EXPECT_FALSE(a.in_prefix(addr("2001:db8:abc0::"), 45));
  EXPECT_TRUE(a.in_prefix(a, 128));
  EXPECT_FALSE(a.in_prefix(addr("2001:db8:abcd:12::2"), 128));
  EXPECT_FALSE(a.in_prefix(a, 129));
}

}  // namespace
}  // namespace tinytcp::wire

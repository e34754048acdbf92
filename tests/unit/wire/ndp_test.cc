#include "wire/ndp.hh"

#include <gtest/gtest.h>

#include <deque>
#include <string>

#include "unit/wire/test_bytes.hh"

namespace tinytcp::wire {
namespace {

using test::from_hex;

Ipv6Address addr(const char* text) {
  return Ipv6Address::parse(text).value();
}

const MacAddress kMac1{{0x02, 0, 0, 0, 0, 0x01}};
const MacAddress kMac2{{0x02, 0, 0, 0, 0, 0x02}};

// scapy, ICMPv6 bytes of:
// IPv6(src="fe80::1", dst="ff02::1:ff00:2", hlim=255) / ICMPv6ND_NS(tgt="fe80::2")
//   / ICMPv6NDOptSrcLLAddr(lladdr="02:00:00:00:00:01")
const std::string kSolicitation =
    from_hex("8700 7a97 0000 0000 fe80 0000 0000 0000 0000 0000 0000 0002 0101 0200 0000 0001");
// IPv6(src="fe80::2", dst="fe80::1", hlim=255) / ICMPv6ND_NA(R=0, S=1, O=1,
//   tgt="fe80::2") / ICMPv6NDOptDstLLAddr(lladdr="02:00:00:00:00:02")
const std::string kAdvertisement =
    from_hex("8800 181a 6000 0000 fe80 0000 0000 0000 0000 0000 0000 0002 0201 0200 0000 0002");
// IPv6(src="fe80::1", dst="ff02::1", hlim=255) / ICMPv6ND_RA(chlim=64, O=1,
//   routerlifetime=1800, reachabletime=30000, retranstimer=1000)
//   / ICMPv6NDOptSrcLLAddr(lladdr="02:00:00:00:00:01") / ICMPv6NDOptMTU(mtu=1500)
//   / ICMPv6NDOptPrefixInfo(prefix="fd00:1::", prefixlen=64, L=1, A=1,
//     validlifetime=86400, preferredlifetime=14400)
const std::string kRouterAdvertisement = from_hex(
    "8600 e32f 4048 0708 0000 7530 0000 03e8 0101 0200 0000 0001 0501 0000 0000 05dc "
    "0304 40c0 0001 5180 0000 3840 0000 0000 fd00 0001 0000 0000 0000 0000 0000 0000");

Ipv6Header ip(const char* src, const char* dst, uint8_t hop_limit = 255) {
  Ipv6Header h;
  h.src = addr(src);
  h.dst = addr(dst);
  h.hop_limit = hop_limit;
  h.next_header = ipv6::kIcmpv6;
  return h;
}

const Ipv6Header kNsIp = ip("fe80::1", "ff02::1:ff00:2");
const Ipv6Header kNaIp = ip("fe80::2", "fe80::1");
const Ipv6Header kRaIp = ip("fe80::1", "ff02::1");

Icmpv6Message message(const Ipv6Header& h, const std::string& bytes) {
  static std::deque<std::string> kept;
  kept.push_back(bytes);
  const auto m = parse_icmpv6(kept.back(), h.src, h.dst);
  EXPECT_TRUE(m);
  return m ? *m : Icmpv6Message{};
}

// A message as parse_icmpv6 would give it, without a checksum to keep right.
// The bytes are kept for the whole test program (the message aliases them).
Icmpv6Message raw(const std::string& bytes) {
  static std::deque<std::string> kept;
  kept.push_back(bytes);
  BufferReader in(kept.back());
  Icmpv6Message m;
  m.type = in.u8();
  m.code = in.u8();
  m.checksum = in.u16();
  m.rest = in.u32();
  m.data = in.rest();
  return m;
}

template <typename T>
std::string serialize_ndp(const T& msg, const Ipv6Header& h) {
  std::string out(ndp_size(msg), '\0');
  BufferWriter w(out.data(), out.size());
  serialize(msg, h.src, h.dst, w);
  EXPECT_TRUE(w.ok());
  return out;
}

TEST(NdpTest, ParsesGoldenSolicitation) {
  const auto ns = parse_neighbor_solicitation(kNsIp, message(kNsIp, kSolicitation));
  ASSERT_TRUE(ns);
  EXPECT_EQ(ns->target, addr("fe80::2"));
  EXPECT_EQ(ns->source_link_layer, kMac1);
}

TEST(NdpTest, SerializesGoldenSolicitation) {
  EXPECT_EQ(serialize_ndp(NeighborSolicitation{addr("fe80::2"), kMac1}, kNsIp), kSolicitation);
}

TEST(NdpTest, ParsesGoldenAdvertisement) {
  const auto na = parse_neighbor_advertisement(kNaIp, message(kNaIp, kAdvertisement));
  ASSERT_TRUE(na);
  EXPECT_FALSE(na->router);
  EXPECT_TRUE(na->solicited);
  EXPECT_TRUE(na->override_flag);
  EXPECT_EQ(na->target, addr("fe80::2"));
  EXPECT_EQ(na->target_link_layer, kMac2);
}

TEST(NdpTest, SerializesGoldenAdvertisement) {
  NeighborAdvertisement na;
  na.solicited = true;
  na.override_flag = true;
  na.target = addr("fe80::2");
  na.target_link_layer = kMac2;
  EXPECT_EQ(serialize_ndp(na, kNaIp), kAdvertisement);
}

TEST(NdpTest, RoundTripsWithoutOptionsAndEveryFlag) {
  for (int flags = 0; flags < 8; ++flags) {
    NeighborAdvertisement na;
    na.router = (flags & 1) != 0;
    na.solicited = (flags & 2) != 0;
    na.override_flag = (flags & 4) != 0;
    na.target = addr("fd00::7");
    const auto bytes = serialize_ndp(na, kNaIp);
    EXPECT_EQ(bytes.size(), 24u);
    const auto back = parse_neighbor_advertisement(kNaIp, message(kNaIp, bytes));
    ASSERT_TRUE(back);
    EXPECT_EQ(back->router, na.router);
    EXPECT_EQ(back->solicited, na.solicited);
    EXPECT_EQ(back->override_flag, na.override_flag);
    EXPECT_FALSE(back->target_link_layer);
  }
  const NeighborSolicitation ns{addr("fd00::7"), std::nullopt};
  const auto back = parse_neighbor_solicitation(kNaIp, message(kNaIp, serialize_ndp(ns, kNaIp)));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->target, ns.target);
  EXPECT_FALSE(back->source_link_layer);
}

TEST(NdpTest, ParsesGoldenRouterAdvertisementMinimally) {
  const auto ra = parse_router_advertisement(kRaIp, message(kRaIp, kRouterAdvertisement));
  ASSERT_TRUE(ra);
  EXPECT_EQ(ra->cur_hop_limit, 64);
  EXPECT_FALSE(ra->managed);
  EXPECT_TRUE(ra->other);
  EXPECT_EQ(ra->router_lifetime_s, 1800);
  EXPECT_EQ(ra->reachable_time_ms, 30000u);
  EXPECT_EQ(ra->retrans_timer_ms, 1000u);
  EXPECT_EQ(ra->source_link_layer, kMac1);
  EXPECT_EQ(ra->mtu, 1500u);
  ASSERT_EQ(ra->prefix_count, 1u);
  EXPECT_EQ(ra->prefixes[0].prefix, addr("fd00:1::"));
  EXPECT_EQ(ra->prefixes[0].length, 64);
  EXPECT_TRUE(ra->prefixes[0].on_link);
  EXPECT_TRUE(ra->prefixes[0].autonomous);
  EXPECT_EQ(ra->prefixes[0].valid_lifetime_s, 86400u);
  EXPECT_EQ(ra->prefixes[0].preferred_lifetime_s, 14400u);
}

TEST(NdpTest, RejectsEveryTruncation) {
  // A cut at the end of the fixed part or of an option drops whole options;
  // anywhere else it is caught.
  for (size_t n = 8; n < kSolicitation.size(); ++n) {
    const auto ns = parse_neighbor_solicitation(kNsIp, raw(kSolicitation.substr(0, n)));
    const auto na = parse_neighbor_advertisement(kNaIp, raw(kAdvertisement.substr(0, n)));
    if (n == 24) {
      ASSERT_TRUE(ns);
      EXPECT_FALSE(ns->source_link_layer);
      ASSERT_TRUE(na);
      EXPECT_FALSE(na->target_link_layer);
      continue;
    }
    ASSERT_FALSE(ns) << n;
    EXPECT_EQ(ns.error(), n < 24 ? NdpError::Truncated : NdpError::BadOptionLength) << n;
    ASSERT_FALSE(na) << n;
    EXPECT_EQ(na.error(), n < 24 ? NdpError::Truncated : NdpError::BadOptionLength) << n;
  }
  for (size_t n = 8; n < kRouterAdvertisement.size(); ++n) {
    const auto ra = parse_router_advertisement(kRaIp, raw(kRouterAdvertisement.substr(0, n)));
    if (n == 16 || n == 24 || n == 32) {
      EXPECT_TRUE(ra) << n;
    } else {
      ASSERT_FALSE(ra) << n;
      EXPECT_EQ(ra.error(), n < 16 ? NdpError::Truncated : NdpError::BadOptionLength) << n;
    }
  }
}

TEST(NdpTest, RejectsForwardedMessages) {
  // RFC 4861 §7.1.1: a hop limit below 255 means a router forwarded it.
  const auto h = ip("fe80::1", "ff02::1:ff00:2", 254);
  EXPECT_EQ(parse_neighbor_solicitation(h, raw(kSolicitation)).error(), NdpError::BadHopLimit);
  EXPECT_EQ(parse_neighbor_advertisement(h, raw(kAdvertisement)).error(), NdpError::BadHopLimit);
  EXPECT_EQ(parse_router_advertisement(h, raw(kRouterAdvertisement)).error(),
            NdpError::BadHopLimit);
}

TEST(NdpTest, RejectsNonZeroCodeAndWrongType) {
  auto m = raw(kSolicitation);
  m.code = 1;
  EXPECT_EQ(parse_neighbor_solicitation(kNsIp, m).error(), NdpError::BadCode);
  EXPECT_EQ(parse_neighbor_advertisement(kNsIp, raw(kSolicitation)).error(), NdpError::WrongType);
  EXPECT_EQ(parse_router_advertisement(kNsIp, raw(kSolicitation)).error(), NdpError::WrongType);
}

TEST(NdpTest, RejectsMulticastTargets) {
  const NeighborSolicitation ns{addr("ff02::1"), std::nullopt};
  EXPECT_EQ(parse_neighbor_solicitation(kNsIp, raw(serialize_ndp(ns, kNsIp))).error(),
            NdpError::MulticastTarget);
  NeighborAdvertisement na;
  na.target = addr("ff02::1");
  EXPECT_EQ(parse_neighbor_advertisement(kNaIp, raw(serialize_ndp(na, kNaIp))).error(),
            NdpError::MulticastTarget);
}

TEST(NdpTest, DuplicateAddressDetectionProbes) {
  // §7.1.1: from ::, only to the solicited-node group and without SLLA.
  const auto dad = ip("::", "ff02::1:ff00:2");
  const NeighborSolicitation probe{addr("fe80::2"), std::nullopt};
  EXPECT_TRUE(parse_neighbor_solicitation(dad, raw(serialize_ndp(probe, dad))));
  const NeighborSolicitation with_sll{addr("fe80::2"), kMac1};
  EXPECT_EQ(parse_neighbor_solicitation(dad, raw(serialize_ndp(with_sll, dad))).error(),
            NdpError::UnspecifiedSource);
  const auto to_unicast = ip("::", "fe80::2");
  EXPECT_EQ(parse_neighbor_solicitation(to_unicast, raw(serialize_ndp(probe, to_unicast))).error(),
            NdpError::UnspecifiedSource);
}

TEST(NdpTest, RejectsSolicitedAdvertisementToMulticast) {
  const auto all_nodes = ip("fe80::2", "ff02::1");
  EXPECT_EQ(parse_neighbor_advertisement(all_nodes, raw(kAdvertisement)).error(),
            NdpError::SolicitedToMulticast);
  NeighborAdvertisement unsolicited;
  unsolicited.override_flag = true;
  unsolicited.target = addr("fe80::2");
  EXPECT_TRUE(parse_neighbor_advertisement(all_nodes, raw(serialize_ndp(unsolicited, all_nodes))));
}

TEST(NdpTest, RejectsRouterAdvertisementFromGlobalSource) {
  EXPECT_EQ(parse_router_advertisement(ip("fd00::1", "ff02::1"), raw(kRouterAdvertisement)).error(),
            NdpError::RouterNotLinkLocal);
}

TEST(NdpTest, RejectsZeroLengthOption) {
  auto bytes = kSolicitation;
  bytes[25] = 0;
  EXPECT_EQ(parse_neighbor_solicitation(kNsIp, raw(bytes)).error(), NdpError::BadOptionLength);
}

TEST(NdpTest, IgnoresUnknownAndNonEthernetOptions) {
  // An unknown option (type 14), then a 16-byte source link-layer option.
  const std::string bytes = kSolicitation.substr(0, 24) + from_hex("0e01 0000 0000 0000") +
                            from_hex("0102 0000 0000 0000 0000 0000 0000 0000");
  const auto ns = parse_neighbor_solicitation(kNsIp, raw(bytes));
  ASSERT_TRUE(ns);
  EXPECT_FALSE(ns->source_link_layer);
}

TEST(NdpTest, KeepsAtMostFourPrefixes) {
  std::string bytes = kRouterAdvertisement;
  const std::string prefix = kRouterAdvertisement.substr(kRouterAdvertisement.size() - 32);
  for (int i = 0; i < 5; ++i) {
    bytes += prefix;
  }
  const auto ra = parse_router_advertisement(kRaIp, raw(bytes));
  ASSERT_TRUE(ra);
  EXPECT_EQ(ra->prefix_count, ndp::kMaxPrefixes);
}

TEST(NdpTest, MulticastMacs) {
  EXPECT_EQ(ipv6_multicast_mac(addr("ff02::1:ff00:2")),
            (MacAddress{{0x33, 0x33, 0xff, 0x00, 0x00, 0x02}}));
  EXPECT_EQ(ipv6_multicast_mac(addr("ff02::1")), (MacAddress{{0x33, 0x33, 0, 0, 0, 1}}));
}

TEST(NdpTest, EveryErrorHasAName) {
  for (size_t i = 0; i < static_cast<size_t>(NdpError::kCount); ++i) {
    EXPECT_STRNE(to_string(static_cast<NdpError>(i)), "?");
  }
}

}  // namespace
}  // namespace tinytcp::wire

// The IPv6 side of NetworkInterface (net/neighbor_discovery.hh): frames in,
// frames out. Golden frames were built offline with scapy 2.5 (never sent):
//   Ether(dst=..., src="02:00:00:00:00:01")/IPv6(src=..., dst=..., hlim=255)/
//   ICMPv6ND_NA(R=0, S=..., O=1, tgt="fd00::1")/ICMPv6NDOptDstLLAddr(lladdr=...)
#include "net/neighbor_discovery.hh"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "net/network_interface.hh"
#include "unit/net/net_test_util.hh"
#include "unit/wire/test_bytes.hh"
#include "util/buffer.hh"

namespace tinytcp::net {
namespace {

using namespace std::chrono_literals;
using wire::EtherType;
using wire::Icmpv6Message;
using wire::Ipv6Address;
using wire::MacAddress;
using wire::NeighborAdvertisement;
using wire::NeighborSolicitation;
namespace icmpv6 = wire::icmpv6;

const MacAddress kOurMac{{0x02, 0, 0, 0, 0, 0x01}};
const MacAddress kPeerMac{{0x02, 0, 0, 0, 0, 0x02}};
const MacAddress kAllNodesMac{{0x33, 0x33, 0, 0, 0, 0x01}};
const MacAddress kOurGroupMac{{0x33, 0x33, 0xff, 0, 0, 0x01}};

Ipv6Address addr(const char* text) {
  return Ipv6Address::parse(text).value();
}

// Our NA answering fd00::2's solicitation: to its MAC, S and O set.
const std::string kGoldenNa = tinytcp::test::from_hex(
    "02 00 00 00 00 02 02 00 00 00 00 01 86 dd 60 00"
    "00 00 00 20 3a ff fd 00 00 00 00 00 00 00 00 00"
    "00 00 00 00 00 01 fd 00 00 00 00 00 00 00 00 00"
    "00 00 00 00 00 02 88 00 1c 9c 60 00 00 00 fd 00"
    "00 00 00 00 00 00 00 00 00 00 00 00 00 01 02 01"
    "02 00 00 00 00 01");
// Our NA answering a DAD probe: to all-nodes, S clear, O set.
const std::string kGoldenNaToAllNodes = tinytcp::test::from_hex(
    "33 33 00 00 00 01 02 00 00 00 00 01 86 dd 60 00"
    "00 00 00 20 3a ff fd 00 00 00 00 00 00 00 00 00"
    "00 00 00 00 00 01 ff 02 00 00 00 00 00 00 00 00"
    "00 00 00 00 00 01 88 00 5a 9b 20 00 00 00 fd 00"
    "00 00 00 00 00 00 00 00 00 00 00 00 00 01 02 01"
    "02 00 00 00 00 01");
// Our NS resolving fd00::2: ICMPv6ND_NS(tgt="fd00::2")/ICMPv6NDOptSrcLLAddr,
// to ff02::1:ff00:2.
const std::string kGoldenNs = tinytcp::test::from_hex(
    "33 33 ff 00 00 02 02 00 00 00 00 01 86 dd 60 00"
    "00 00 00 20 3a ff fd 00 00 00 00 00 00 00 00 00"
    "00 00 00 00 00 01 ff 02 00 00 00 00 00 00 00 00"
    "00 01 ff 00 00 02 87 00 7d 97 00 00 00 00 fd 00"
    "00 00 00 00 00 00 00 00 00 00 00 00 00 02 01 01"
    "02 00 00 00 00 01");
// Our DAD probe: IPv6(src="::", dst="ff02::1:ff00:1")/ICMPv6ND_NS(tgt="fd00::1").
const std::string kGoldenDadProbe = tinytcp::test::from_hex(
    "33 33 ff 00 00 01 02 00 00 00 00 01 86 dd 60 00"
    "00 00 00 18 3a ff 00 00 00 00 00 00 00 00 00 00"
    "00 00 00 00 00 00 ff 02 00 00 00 00 00 00 00 00"
    "00 01 ff 00 00 01 87 00 7d a5 00 00 00 00 fd 00"
    "00 00 00 00 00 00 00 00 00 00 00 00 00 01");

std::string ipv6_header(const char* src, const char* dst, uint8_t next_header, size_t payload,
                        uint8_t hop_limit) {
  wire::Ipv6Header h;
  h.payload_length = static_cast<uint16_t>(payload);
  h.next_header = next_header;
  h.hop_limit = hop_limit;
  h.src = addr(src);
  h.dst = addr(dst);
  std::string out(wire::Ipv6Header::kSize, '\0');
  BufferWriter w(out.data(), out.size());
  serialize(h, w);
  return out;
}

template <typename Message>
std::string ndp_datagram(const char* src, const char* dst, const Message& m,
                         uint8_t hop_limit = 255) {
  std::string body(wire::ndp_size(m), '\0');
  BufferWriter w(body.data(), body.size());
  serialize(m, addr(src), addr(dst), w);
  return ipv6_header(src, dst, wire::ipv6::kIcmpv6, body.size(), hop_limit) + body;
}

std::string icmpv6_datagram(const char* src, const char* dst, const Icmpv6Message& m) {
  std::string body(Icmpv6Message::kHeaderSize + m.data.size(), '\0');
  BufferWriter w(body.data(), body.size());
  serialize(m, addr(src), addr(dst), w);
  return ipv6_header(src, dst, wire::ipv6::kIcmpv6, body.size(), 255) + body;
}

std::string udp6(const char* src, const char* dst, size_t n = 16) {
  return ipv6_header(src, dst, wire::ipv6::kUdp, n, 64) + std::string(n, 'u');
}

NeighborSolicitation ns(const char* target, std::optional<MacAddress> mac = kPeerMac) {
  NeighborSolicitation m;
  m.target = addr(target);
  m.source_link_layer = mac;
  return m;
}

NeighborAdvertisement na(const char* target, bool solicited, bool override_flag,
                         std::optional<MacAddress> mac = kPeerMac) {
  NeighborAdvertisement m;
  m.solicited = solicited;
  m.override_flag = override_flag;
  m.target = addr(target);
  m.target_link_layer = mac;
  return m;
}

class NeighborDiscoveryTest : public ::testing::Test {
 protected:
  NeighborDiscoveryTest() { make(0); }

  void make(unsigned dad_transmits, std::optional<Ipv6Address> ipv6 = addr("fd00::1")) {
    NetworkInterfaceConfig config;
    config.mac = kOurMac;
    config.ip = test::ip("10.0.0.1");
    config.ipv6 = ipv6;
    config.dad_transmits = dad_transmits;
    frames_.frames.clear();
    iface_ = std::make_unique<NetworkInterface>(config, frames_, &rng_);
    iface_->set_datagram_sink(&up_, 2);
  }
  NeighborDiscovery& nd() { return *iface_->neighbor_discovery(); }
  const NeighborDiscoveryStats& stats() { return nd().stats(); }

  void receive(const MacAddress& dst, const std::string& datagram,
               EtherType type = EtherType::kIpv6) {
    iface_->receive_frame(test::ethernet_frame(dst, kPeerMac, type, datagram), now_);
  }
  void send(const std::string& datagram, const char* next_hop) {
    iface_->send_ipv6_datagram(datagram, addr(next_hop), now_);
  }
  void advance(Duration d) {
    now_ += d;
    iface_->tick(now_);
  }
  std::string pop_frame() {
    EXPECT_FALSE(frames_.frames.empty());
    if (frames_.frames.empty()) {
      return {};
    }
    std::string f = frames_.frames.front();
    frames_.frames.erase(frames_.frames.begin());
    return f;
  }
  void expect_frame(const std::string& golden) {
    EXPECT_EQ(tinytcp::test::to_hex(pop_frame()), tinytcp::test::to_hex(golden));
  }
  void expect_no_frame() { EXPECT_TRUE(frames_.frames.empty()) << frames_.frames.size(); }
  // The datagram in the next frame, which goes to `dst` as IPv6.
  std::string expect_ipv6_to(const MacAddress& dst) {
    const std::string f = pop_frame();
    const auto eth = wire::parse_ethernet(f);
    EXPECT_TRUE(eth);
    if (!eth) {
      return {};
    }
    EXPECT_EQ(eth->header.dst, dst);
    EXPECT_EQ(eth->header.src, kOurMac);
    EXPECT_EQ(eth->header.type, static_cast<uint16_t>(EtherType::kIpv6));
    return std::string(eth->payload);
  }
  // The peer fd00::2 solicits our address, to our solicited-node group.
  void peer_solicits() {
    receive(kOurGroupMac, ndp_datagram("fd00::2", "ff02::1:ff00:1", ns("fd00::1")));
  }

  Rng rng_{seed_from_env("TINYTCP_SEED", 6)};
  Instant now_;
  test::RecordingFrameSink frames_;
  test::RecordingDatagramSink up_;
  std::unique_ptr<NetworkInterface> iface_;
};

TEST_F(NeighborDiscoveryTest, AnswersSolicitationWithGoldenAdvertisement) {
  peer_solicits();
  expect_frame(kGoldenNa);
  expect_no_frame();
  EXPECT_EQ(stats().solicitations_received, 1u);
  EXPECT_EQ(stats().advertisements_sent, 1u);
  EXPECT_TRUE(up_.datagrams.empty());
  // The solicitation taught us the peer's MAC.
  const MacAddress* mac = nd().cache().link_layer_address(addr("fd00::2"));
  ASSERT_NE(mac, nullptr);
  EXPECT_EQ(*mac, kPeerMac);
}

TEST_F(NeighborDiscoveryTest, AnswersUnicastSolicitationToOurAddress) {
  receive(kOurMac, ndp_datagram("fd00::2", "fd00::1", ns("fd00::1")));
  expect_frame(kGoldenNa);
}

TEST_F(NeighborDiscoveryTest, AnswersADadProbeToAllNodes) {
  receive(kOurGroupMac, ndp_datagram("::", "ff02::1:ff00:1", ns("fd00::1", std::nullopt)));
  expect_frame(kGoldenNaToAllNodes);
  EXPECT_EQ(nd().cache().size(), 0u);  // a probe teaches nothing
}

TEST_F(NeighborDiscoveryTest, IgnoresSolicitationForAnotherAddress) {
  receive(kAllNodesMac, ndp_datagram("fd00::2", "ff02::1", ns("fd00::7")));
  expect_no_frame();
  EXPECT_EQ(stats().drops[NeighborDiscoveryDrop::SolicitationNotForUs], 1u);
}

TEST_F(NeighborDiscoveryTest, DropsInvalidNdpAndCountsWhy) {
  receive(kOurGroupMac, ndp_datagram("fd00::2", "ff02::1:ff00:1", ns("fd00::1"), 64));
  EXPECT_EQ(stats().ndp_errors[wire::NdpError::BadHopLimit], 1u);
  auto bad = ndp_datagram("fd00::2", "ff02::1:ff00:1", ns("fd00::1"));
  bad[wire::Ipv6Header::kSize + 2] ^= 1;  // checksum
  receive(kOurGroupMac, bad);
  EXPECT_EQ(stats().icmpv6_errors[wire::Icmpv6Error::BadChecksum], 1u);
  // From :: with a source link-layer option (RFC 4861 §7.1.1).
  receive(kOurGroupMac, ndp_datagram("::", "ff02::1:ff00:1", ns("fd00::1")));
  EXPECT_EQ(stats().ndp_errors[wire::NdpError::UnspecifiedSource], 1u);
  receive(kOurMac, std::string(30, '\x60'));
  EXPECT_EQ(stats().ipv6_errors[wire::Ipv6Error::Truncated], 1u);
  expect_no_frame();
  EXPECT_TRUE(up_.datagrams.empty());
}

TEST_F(NeighborDiscoveryTest, ResolvesANextHopThenSendsWhatWaited) {
  const auto d = udp6("fd00::1", "fd00::2");
  send(d, "fd00::2");
  expect_frame(kGoldenNs);
  expect_no_frame();
  receive(kOurMac, ndp_datagram("fd00::2", "fd00::1", na("fd00::2", true, true)));
  EXPECT_EQ(expect_ipv6_to(kPeerMac), d);
  EXPECT_EQ(stats().advertisements_received, 1u);
  EXPECT_EQ(nd().cache().state(addr("fd00::2"), now_), NeighborState::Reachable);
  // Resolved: the next one goes at once.
  send(d, "fd00::2");
  EXPECT_EQ(expect_ipv6_to(kPeerMac), d);
  EXPECT_EQ(iface_->stats().datagrams_sent, 2u);
}

TEST_F(NeighborDiscoveryTest, MulticastNextHopGoesToTheGroupMac) {
  const auto d = udp6("fd00::1", "ff02::1:2");
  send(d, "ff02::1:2");
  EXPECT_EQ(expect_ipv6_to(MacAddress{{0x33, 0x33, 0, 1, 0, 2}}), d);
  EXPECT_EQ(nd().cache().size(), 0u);
}

TEST_F(NeighborDiscoveryTest, UnresolvedNextHopReportsTheDatagram) {
  std::vector<std::string> unreachable;
  nd().set_unreachable_handler([&](std::string_view d) { unreachable.emplace_back(d); });
  const auto d = udp6("fd00::1", "fd00::9");
  send(d, "fd00::9");
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(iface_->next_deadline(), now_ + 1s);
    advance(1s);
  }
  EXPECT_EQ(stats().solicitations_sent, 3u);
  ASSERT_EQ(unreachable.size(), 1u);
  EXPECT_EQ(unreachable[0], d);
  EXPECT_EQ(stats().unreachable, 1u);
  EXPECT_FALSE(iface_->next_deadline());
}

TEST_F(NeighborDiscoveryTest, TooBigDatagramIsDropped) {
  send(udp6("fd00::1", "ff02::1", 1500 - 40 + 1), "ff02::1");
  expect_no_frame();
  EXPECT_EQ(iface_->stats().drops[InterfaceDrop::DatagramTooBig], 1u);
}

TEST_F(NeighborDiscoveryTest, AcceptsOurMacBroadcastAndJoinedGroupsOnly) {
  const auto d = udp6("fd00::2", "fd00::1");
  receive(kOurMac, d);
  receive(MacAddress::broadcast(), d);
  receive(kAllNodesMac, d);
  receive(kOurGroupMac, d);
  ASSERT_EQ(up_.datagrams.size(), 4u);
  EXPECT_EQ(up_.datagrams[0].datagram, d);
  EXPECT_EQ(up_.datagrams[0].interface_index, 2u);
  receive(MacAddress{{0x33, 0x33, 0xff, 0, 0, 0x99}}, d);  // another solicited-node group
  receive(MacAddress{{0x33, 0x33, 0, 0, 0, 0x02}}, d);     // all-routers
  receive(MacAddress{{0x02, 0, 0, 0, 0, 0x07}}, d);        // another host
  // The IPv6 groups are no IPv4 filter: IPv4 behaves as before.
  receive(kAllNodesMac, test::ipv4_datagram(test::ip("10.0.0.2"), test::ip("10.0.0.1")),
          EtherType::kIpv4);
  EXPECT_EQ(up_.datagrams.size(), 4u);
  EXPECT_EQ(iface_->stats().drops[InterfaceDrop::NotForUs], 4u);
  EXPECT_EQ(iface_->stats().datagrams_delivered, 4u);
}

TEST_F(NeighborDiscoveryTest, DeliversTheDatagramWithoutEthernetPadding) {
  const auto d = udp6("fd00::2", "fd00::1", 2);
  receive(kOurMac, d + std::string(4, '\0'));
  ASSERT_EQ(up_.datagrams.size(), 1u);
  EXPECT_EQ(up_.datagrams[0].datagram, d);
}

TEST_F(NeighborDiscoveryTest, IgnoresRouterMessagesAndRedirects) {
  receive(kAllNodesMac, icmpv6_datagram("fe80::2", "ff02::1",
                                        Icmpv6Message{icmpv6::kRouterAdvertisement, 0, 0, 0,
                                                      std::string(8, '\0')}));
  receive(kAllNodesMac, icmpv6_datagram("fe80::2", "ff02::1",
                                        Icmpv6Message{icmpv6::kRouterSolicitation, 0, 0, 0, ""}));
  receive(kOurMac,
          icmpv6_datagram("fe80::2", "fd00::1",
                          Icmpv6Message{icmpv6::kRedirect, 0, 0, 0, std::string(32, '\0')}));
  EXPECT_EQ(stats().drops[NeighborDiscoveryDrop::RouterMessage], 2u);
  EXPECT_EQ(stats().drops[NeighborDiscoveryDrop::Redirect], 1u);
  expect_no_frame();
  EXPECT_TRUE(up_.datagrams.empty());
}

TEST_F(NeighborDiscoveryTest, OtherIcmpv6GoesUp) {
  const auto echo = icmpv6_datagram("fd00::2", "fd00::1",
                                    Icmpv6Message::echo(icmpv6::kEchoRequest, 1, 1, "ping"));
  receive(kOurMac, echo);
  ASSERT_EQ(up_.datagrams.size(), 1u);
  EXPECT_EQ(up_.datagrams[0].datagram, echo);
}

TEST_F(NeighborDiscoveryTest, NoUpperLayerIsCounted) {
  iface_->set_datagram_sink(nullptr, 0);
  receive(kOurMac, udp6("fd00::2", "fd00::1"));
  EXPECT_EQ(stats().drops[NeighborDiscoveryDrop::NoUpperLayer], 1u);
}

TEST_F(NeighborDiscoveryTest, Ipv6OffDropsIpv6AsBefore) {
  make(0, std::nullopt);
  EXPECT_EQ(iface_->neighbor_discovery(), nullptr);
  receive(kOurMac, udp6("fd00::2", "fd00::1"));
  receive(kAllNodesMac, udp6("fd00::2", "ff02::1"));
  send(udp6("fd00::1", "fd00::2"), "fd00::2");
  EXPECT_EQ(iface_->stats().drops[InterfaceDrop::UnknownEtherType], 2u);
  EXPECT_EQ(iface_->stats().drops[InterfaceDrop::NotForUs], 1u);
  expect_no_frame();
  EXPECT_TRUE(up_.datagrams.empty());
}

// Drop and count: every frame with one bit flipped is answered, delivered or
// counted somewhere, and none crashes (ASan watches the reads).
TEST_F(NeighborDiscoveryTest, EveryFlippedBitIsAnsweredDeliveredOrCounted) {
  const auto total = [this] {
    const auto& s = stats();
    const auto& i = iface_->stats();
    return s.ipv6_errors.total() + s.icmpv6_errors.total() + s.ndp_errors.total() +
           s.drops.total() + s.solicitations_received + s.advertisements_received +
           i.ethernet_errors.total() + i.drops.total() + i.datagrams_delivered;
  };
  const std::vector<std::string> frames = {
      test::ethernet_frame(kOurGroupMac, kPeerMac, EtherType::kIpv6,
                           ndp_datagram("fd00::2", "ff02::1:ff00:1", ns("fd00::1"))),
      test::ethernet_frame(kOurMac, kPeerMac, EtherType::kIpv6,
                           ndp_datagram("fd00::2", "fd00::1", na("fd00::2", true, true))),
  };
  for (const auto& frame : frames) {
    for (size_t bit = 0; bit < frame.size() * 8; ++bit) {
      std::string f = frame;
      f[bit / 8] = static_cast<char>(f[bit / 8] ^ (1 << (bit % 8)));
      const uint64_t before = total();
      iface_->receive_frame(f, now_);
      ASSERT_GT(total(), before) << "bit " << bit;
    }
  }
}

TEST(NeighborDiscoveryReachableTimeTest, RandomizedAroundTheBaseFromTheSeededRng) {
  test::RecordingFrameSink frames;
  NeighborDiscoveryConfig config;
  config.mac = kOurMac;
  config.ip = addr("fd00::1");
  config.cache.reachable_time = 30s;
  std::vector<Duration> drawn;
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    Rng rng(seed);
    NeighborDiscovery nd(config, frames, rng);
    // RFC 4861 §6.3.2: uniform in [0.5, 1.5) x BaseReachableTime.
    EXPECT_GE(nd.reachable_time(), 15s) << seed;
    EXPECT_LT(nd.reachable_time(), 45s) << seed;
    drawn.push_back(nd.reachable_time());
    Rng again(seed);
    EXPECT_EQ(NeighborDiscovery(config, frames, again).reachable_time(), nd.reachable_time());
  }
  std::sort(drawn.begin(), drawn.end());
  EXPECT_NE(drawn.front(), drawn.back());
}

TEST_F(NeighborDiscoveryTest, ReachableTimeIsWhatTheCacheUses) {
  send(udp6("fd00::1", "fd00::2"), "fd00::2");
  receive(kOurMac, ndp_datagram("fd00::2", "fd00::1", na("fd00::2", true, true)));
  const Duration reachable = nd().reachable_time();
  now_ += reachable - 1ms;
  EXPECT_EQ(nd().cache().state(addr("fd00::2"), now_), NeighborState::Reachable);
  now_ += 1ms;
  EXPECT_EQ(nd().cache().state(addr("fd00::2"), now_), NeighborState::Stale);
}

// Duplicate address detection (RFC 4862 §5.4).

class DuplicateAddressDetectionTest : public NeighborDiscoveryTest {
 protected:
  DuplicateAddressDetectionTest() {
    make(1);
    EXPECT_EQ(nd().address_state(), AddressState::Tentative);
    iface_->start(now_);
    pop_frame();  // the gratuitous ARP
  }
};

TEST_F(DuplicateAddressDetectionTest, ProbesThenPrefersTheAddress) {
  expect_frame(kGoldenDadProbe);
  expect_no_frame();
  EXPECT_EQ(nd().address_state(), AddressState::Tentative);
  EXPECT_EQ(iface_->next_deadline(), now_ + 1s);
  advance(999ms);
  EXPECT_EQ(nd().address_state(), AddressState::Tentative);
  advance(1ms);
  EXPECT_EQ(nd().address_state(), AddressState::Preferred);
  EXPECT_FALSE(iface_->next_deadline());
  peer_solicits();
  expect_frame(kGoldenNa);
}

TEST_F(DuplicateAddressDetectionTest, SendsDadTransmitsProbesRetransTimerApart) {
  make(3);
  iface_->start(now_);
  pop_frame();  // ARP
  for (int i = 0; i < 3; ++i) {
    expect_frame(kGoldenDadProbe);
    expect_no_frame();
    EXPECT_EQ(nd().address_state(), AddressState::Tentative);
    advance(1s);
  }
  EXPECT_EQ(nd().address_state(), AddressState::Preferred);
  EXPECT_EQ(stats().dad_probes_sent, 3u);
}

TEST_F(DuplicateAddressDetectionTest, TentativeAddressAnswersNothing) {
  pop_frame();  // the probe
  peer_solicits();
  receive(kOurMac, udp6("fd00::2", "fd00::1"));
  expect_no_frame();
  EXPECT_TRUE(up_.datagrams.empty());
  EXPECT_EQ(stats().drops[NeighborDiscoveryDrop::SolicitationToTentative], 1u);
  EXPECT_EQ(stats().drops[NeighborDiscoveryDrop::ToTentativeAddress], 1u);
  // Traffic to others' addresses (all-nodes here) still goes up.
  receive(kAllNodesMac, udp6("fd00::2", "ff02::1"));
  EXPECT_EQ(up_.datagrams.size(), 1u);
}

TEST_F(DuplicateAddressDetectionTest, NoSolicitationFromATentativeAddress) {
  pop_frame();  // the probe
  // RFC 4862 §5.4: a tentative address is no source, not even of an NS.
  send(udp6("fd00::1", "fd00::2"), "fd00::2");
  expect_no_frame();
  EXPECT_EQ(stats().drops[NeighborDiscoveryDrop::NoAddressToSolicitFrom], 1u);
  advance(1s);  // preferred now; the cache's retransmission goes out
  EXPECT_EQ(nd().address_state(), AddressState::Preferred);
  expect_frame(kGoldenNs);
}

TEST_F(DuplicateAddressDetectionTest, ConflictingAdvertisementMarksTheAddressDuplicate) {
  pop_frame();
  receive(kAllNodesMac, ndp_datagram("fd00::1", "ff02::1", na("fd00::1", false, true)));
  EXPECT_EQ(nd().address_state(), AddressState::Duplicate);
  EXPECT_EQ(stats().dad_conflicts, 1u);
  advance(1s);
  EXPECT_EQ(nd().address_state(), AddressState::Duplicate);
  expect_no_frame();
  // Never used: no answers, no datagrams.
  peer_solicits();
  receive(kOurMac, udp6("fd00::2", "fd00::1"));
  expect_no_frame();
  EXPECT_TRUE(up_.datagrams.empty());
}

TEST_F(DuplicateAddressDetectionTest, AnotherNodesProbeMarksTheAddressDuplicate) {
  pop_frame();
  receive(kOurGroupMac, ndp_datagram("::", "ff02::1:ff00:1", ns("fd00::1", std::nullopt)));
  EXPECT_EQ(nd().address_state(), AddressState::Duplicate);
  EXPECT_EQ(stats().dad_conflicts, 1u);
  expect_no_frame();
}

TEST_F(DuplicateAddressDetectionTest, AdvertisementForOurAddressAfterDadIsOnlyCounted) {
  pop_frame();
  advance(1s);
  receive(kAllNodesMac, ndp_datagram("fd00::1", "ff02::1", na("fd00::1", false, true)));
  EXPECT_EQ(nd().address_state(), AddressState::Preferred);
  EXPECT_EQ(stats().drops[NeighborDiscoveryDrop::ForeignAdvertisement], 1u);
  EXPECT_EQ(stats().dad_conflicts, 0u);
}

}  // namespace
}  // namespace tinytcp::net

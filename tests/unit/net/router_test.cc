#include "net/router.hh"

#include <gtest/gtest.h>

#include <array>
#include <string>

#include "net/linear_route_table.hh"
#include "unit/net/net_test_util.hh"
#include "util/checksum.hh"
#include "wire/icmp.hh"

namespace tinytcp::net {
namespace {

using namespace std::chrono_literals;
using test::ip;
using wire::ArpOpcode;
using wire::EtherType;
using wire::Ipv4Address;
using wire::MacAddress;
namespace icmp = wire::icmp;

MacAddress router_mac(size_t i) {
  return {{0x02, 0, 0, 0, 1, static_cast<uint8_t>(i)}};
}
MacAddress neighbour_mac(size_t i) {
  return {{0x02, 0, 0, 0, 2, static_cast<uint8_t>(i)}};
}

// Router with three interfaces: 10.0.i.1/24 on interface i; a neighbour
// 10.0.i.2 on each link; 192.168.0.0/16 via 10.0.2.2 on interface 2.
class RouterTest : public ::testing::Test {
 protected:
  RouterTest() { make({}); }

  void make(RouterConfig config, uint16_t mtu2 = 1500) {
    router_ = std::make_unique<Router>(config);
    for (size_t i = 0; i < 3; ++i) {
      NetworkInterfaceConfig c;
      c.mac = router_mac(i);
      c.ip = Ipv4Address::from_octets(10, 0, static_cast<uint8_t>(i), 1);
      c.mtu = i == 2 ? mtu2 : 1500;
      EXPECT_EQ(router_->add_interface(c, links_[i]), i);
      router_->add_route(
          {Ipv4Address::from_octets(10, 0, static_cast<uint8_t>(i), 0), 24, std::nullopt, i});
    }
    router_->add_route({ip("192.168.0.0"), 16, ip("10.0.2.2"), 2});
    // Every neighbour introduces itself, so ARP is warm.
    for (size_t i = 0; i < 3; ++i) {
      router_->receive_frame(
          i,
          test::ethernet_frame(
              MacAddress::broadcast(), neighbour_mac(i), EtherType::kArp,
              test::arp_payload({ArpOpcode::kRequest, neighbour_mac(i), neighbour(i), MacAddress{},
                                 router_->interface(i).ip()})),
          now_);
      links_[i].frames.clear();  // the ARP reply
    }
  }
  static Ipv4Address neighbour(size_t i) {
    return Ipv4Address::from_octets(10, 0, static_cast<uint8_t>(i), 2);
  }

  void from_neighbour(size_t i, const std::string& datagram) {
    router_->receive_frame(
        i, test::ethernet_frame(router_mac(i), neighbour_mac(i), EtherType::kIpv4, datagram), now_);
  }
  // Pops the next frame sent on link i: an IPv4 datagram to that neighbour.
  std::string expect_datagram(size_t i) {
    EXPECT_FALSE(links_[i].frames.empty()) << "nothing sent on link " << i;
    if (links_[i].frames.empty()) {
      return {};
    }
    const std::string frame = links_[i].frames.front();
    links_[i].frames.erase(links_[i].frames.begin());
    const auto eth = wire::parse_ethernet(frame);
    EXPECT_TRUE(eth);
    EXPECT_EQ(eth->header.dst, neighbour_mac(i));
    EXPECT_EQ(eth->header.src, router_mac(i));
    EXPECT_EQ(eth->header.type, static_cast<uint16_t>(EtherType::kIpv4));
    return std::string(eth->payload);
  }
  // The next datagram on link i must be ICMP; returns the parsed message and
  // keeps the datagram alive in `last_`.
  wire::IcmpMessage expect_icmp(size_t i, Ipv4Address to) {
    last_ = expect_datagram(i);
    const auto v = wire::parse_ipv4(last_);
    EXPECT_TRUE(v);
    EXPECT_EQ(v->header.protocol, 1);
    EXPECT_EQ(v->header.dst, to);
    EXPECT_EQ(v->header.src, router_->interface(i).ip());
    const auto m = wire::parse_icmp(v->payload);
    EXPECT_TRUE(m);
    return m ? *m : wire::IcmpMessage{};
  }
  void expect_quiet() {
    for (const auto& l : links_) {
      EXPECT_TRUE(l.frames.empty());
    }
  }
  uint64_t drops(RouterDrop d) const { return router_->stats().drops[d]; }

  Instant now_;
  std::array<test::RecordingFrameSink, 3> links_;
  std::unique_ptr<Router> router_;
  std::string last_;
};

TEST_F(RouterTest, ForwardsToTheNextHopWithTtlDecremented) {
  const auto d = test::ipv4_datagram(neighbour(0), ip("192.168.7.7"), 64, 30);
  from_neighbour(0, d);
  const auto out = expect_datagram(2);
  const auto v = wire::parse_ipv4(out);  // checks the patched checksum too
  ASSERT_TRUE(v);
  EXPECT_EQ(v->header.ttl, 63);
  EXPECT_EQ(out.substr(12), d.substr(12));
  EXPECT_EQ(out.substr(0, 8), d.substr(0, 8));
  EXPECT_EQ(router_->stats().forwarded, 1u);
  expect_quiet();
}

TEST_F(RouterTest, ForwardsToAnAttachedDestinationAfterArp) {
  const auto d = test::ipv4_datagram(neighbour(0), ip("10.0.1.77"), 64, 30);
  from_neighbour(0, d);
  ASSERT_EQ(links_[1].frames.size(), 1u);
  const auto eth = wire::parse_ethernet(links_[1].frames[0]);
  const auto arp = wire::parse_arp(eth->payload);
  ASSERT_TRUE(arp);
  EXPECT_EQ(arp->target_ip, ip("10.0.1.77"));
  links_[1].frames.clear();
  const MacAddress host{{0x02, 9, 9, 9, 9, 9}};
  router_->receive_frame(
      1,
      test::ethernet_frame(router_mac(1), host, EtherType::kArp,
                           test::arp_payload({ArpOpcode::kReply, host, ip("10.0.1.77"),
                                              router_mac(1), ip("10.0.1.1")})),
      now_);
  ASSERT_EQ(links_[1].frames.size(), 1u);
  const auto fwd = wire::parse_ethernet(links_[1].frames[0]);
  EXPECT_EQ(fwd->header.dst, host);
  EXPECT_EQ(wire::parse_ipv4(fwd->payload)->header.ttl, 63);
}

TEST_F(RouterTest, IgnoresTrailingPaddingWhenForwarding) {
  const auto d = test::ipv4_datagram(neighbour(0), ip("192.168.7.7"), 64, 4);
  from_neighbour(0, d + std::string(22, '\0'));
  EXPECT_EQ(expect_datagram(2).size(), d.size());
}

TEST_F(RouterTest, TtlExpiryAnsweredWithTimeExceeded) {
  const auto d = test::ipv4_datagram(neighbour(0), ip("192.168.7.7"), 1, 30);
  from_neighbour(0, d);
  const auto m = expect_icmp(0, neighbour(0));
  EXPECT_EQ(m.type, icmp::kTimeExceeded);
  EXPECT_EQ(m.code, icmp::kTtlExceeded);
  EXPECT_EQ(m.data, d);  // the whole original fits in 576 bytes
  EXPECT_EQ(drops(RouterDrop::TtlExpired), 1u);
  expect_quiet();
}

TEST_F(RouterTest, TtlZeroAlsoExpires) {
  from_neighbour(0, test::ipv4_datagram(neighbour(0), ip("192.168.7.7"), 0, 30));
  EXPECT_EQ(expect_icmp(0, neighbour(0)).type, icmp::kTimeExceeded);
}

TEST_F(RouterTest, MissingRouteAnsweredWithNetUnreachable) {
  const auto d = test::ipv4_datagram(neighbour(1), ip("172.16.0.1"), 64, 30);
  from_neighbour(1, d);
  const auto m = expect_icmp(1, neighbour(1));
  EXPECT_EQ(m.type, icmp::kDestinationUnreachable);
  EXPECT_EQ(m.code, icmp::kNetUnreachable);
  const auto quote = wire::parse_icmp_quote(m.data);
  ASSERT_TRUE(quote);
  EXPECT_EQ(quote->header.dst, ip("172.16.0.1"));
  EXPECT_EQ(drops(RouterDrop::NoRoute), 1u);
}

TEST_F(RouterTest, ErrorQuoteIsCappedAt576Bytes) {
  const auto d = test::ipv4_datagram(neighbour(1), ip("172.16.0.1"), 64, 1000);
  from_neighbour(1, d);
  expect_icmp(1, neighbour(1));
  EXPECT_EQ(last_.size(), IcmpResponder::kMaxErrorDatagram);
}

TEST_F(RouterTest, DontFragmentTooBigAnsweredWithNextHopMtu) {
  make({}, 576);
  auto d = test::ipv4_datagram(neighbour(0), ip("192.168.7.7"), 64, 600);
  d[6] = 0x40;  // DF
  d[10] = d[11] = 0;
  const uint16_t c = wire::ipv4_header_checksum(std::string_view(d).substr(0, 20));
  d[10] = static_cast<char>(c >> 8);
  d[11] = static_cast<char>(c);
  from_neighbour(0, d);
  const auto m = expect_icmp(0, neighbour(0));
  EXPECT_EQ(m.type, icmp::kDestinationUnreachable);
  EXPECT_EQ(m.code, icmp::kFragmentationNeeded);
  EXPECT_EQ(m.next_hop_mtu(), 576);
  EXPECT_EQ(drops(RouterDrop::NeedsFragmentation), 1u);
  expect_quiet();
}

TEST_F(RouterTest, TooBigWithoutDontFragmentIsFragmented) {
  make({}, 576);
  const auto d = test::ipv4_datagram(neighbour(0), ip("192.168.7.7"), 64, 1200, 17, 4242);
  from_neighbour(0, d);
  Ipv4Reassembler reassembler({});
  std::optional<std::string> whole;
  size_t fragments = 0;
  while (!links_[2].frames.empty()) {
    const auto f = expect_datagram(2);
    ++fragments;
    const auto v = wire::parse_ipv4(f);
    ASSERT_TRUE(v);
    EXPECT_LE(f.size(), 576u);
    EXPECT_EQ(v->header.ttl, 63);
    EXPECT_EQ(v->header.id, 4242);
    if (const auto r = reassembler.add(*v, f, now_)) {
      whole = std::string(*r);
    }
  }
  EXPECT_EQ(fragments, 3u);  // 552 + 552 + 96 bytes of payload
  ASSERT_TRUE(whole);
  EXPECT_EQ(whole->substr(20), d.substr(20));
  EXPECT_EQ(router_->stats().fragments_sent, 3u);
}

TEST_F(RouterTest, AnswersPing) {
  std::string echo(8 + 5, '\0');
  BufferWriter w(echo.data(), echo.size());
  serialize(wire::IcmpMessage::echo(icmp::kEchoRequest, 7, 9, "hello"), w);
  auto d = test::ipv4_datagram(neighbour(2), ip("10.0.0.1"), 64, echo.size(), 1);
  d.replace(20, echo.size(), echo);
  from_neighbour(2, d);
  // Addressed to interface 0's address, but the reply goes back on link 2.
  last_ = expect_datagram(2);
  const auto v = wire::parse_ipv4(last_);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->header.src, ip("10.0.0.1"));
  EXPECT_EQ(v->header.dst, neighbour(2));
  const auto m = wire::parse_icmp(v->payload);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->type, icmp::kEchoReply);
  EXPECT_EQ(m->echo_id(), 7);
  EXPECT_EQ(m->echo_sequence(), 9);
  EXPECT_EQ(m->data, "hello");
}

TEST_F(RouterTest, OtherProtocolsToTheRouterGetProtocolUnreachable) {
  from_neighbour(0, test::ipv4_datagram(neighbour(0), ip("10.0.0.1"), 64, 30, 17));
  const auto m = expect_icmp(0, neighbour(0));
  EXPECT_EQ(m.type, icmp::kDestinationUnreachable);
  EXPECT_EQ(m.code, icmp::kProtocolUnreachable);
  EXPECT_EQ(drops(RouterDrop::LocalProtocol), 1u);
}

TEST_F(RouterTest, NoErrorAboutAnIcmpError) {
  std::string err(8 + 28, '\0');
  BufferWriter w(err.data(), err.size());
  wire::IcmpMessage m;
  m.type = icmp::kDestinationUnreachable;
  m.code = icmp::kPortUnreachable;
  const std::string quote = test::ipv4_datagram(ip("1.2.3.4"), neighbour(0), 64, 8);
  m.data = quote;
  serialize(m, w);
  auto d = test::ipv4_datagram(neighbour(0), ip("172.16.0.1"), 64, err.size(), 1);
  d.replace(20, err.size(), err);
  from_neighbour(0, d);
  expect_quiet();
  EXPECT_EQ(drops(RouterDrop::NoRoute), 1u);
  EXPECT_EQ(router_->icmp().stats().suppressed[IcmpSuppressed::AboutIcmpError], 1u);
}

TEST_F(RouterTest, IcmpErrorsAreRateLimited) {
  RouterConfig config;
  config.icmp.errors_per_second = 10;
  config.icmp.burst = 2;
  make(config);
  const auto d = test::ipv4_datagram(neighbour(0), ip("172.16.0.1"), 64, 8);
  for (int i = 0; i < 3; ++i) {
    from_neighbour(0, d);
  }
  expect_icmp(0, neighbour(0));
  expect_icmp(0, neighbour(0));
  expect_quiet();
  EXPECT_EQ(router_->icmp().stats().suppressed[IcmpSuppressed::RateLimited], 1u);
  now_ += 99ms;
  from_neighbour(0, d);
  expect_quiet();
  now_ += 1ms;  // 100 ms at 10/s: one token
  from_neighbour(0, d);
  expect_icmp(0, neighbour(0));
  EXPECT_EQ(drops(RouterDrop::NoRoute), 5u);
}

TEST_F(RouterTest, DoesNotForwardBroadcastOrMulticast) {
  from_neighbour(0, test::ipv4_datagram(neighbour(0), ip("255.255.255.255"), 64, 8));
  from_neighbour(0, test::ipv4_datagram(neighbour(0), ip("224.0.0.5"), 64, 8));
  expect_quiet();
  EXPECT_EQ(drops(RouterDrop::NotForwardable), 2u);
}

TEST_F(RouterTest, CountsMalformedDatagrams) {
  auto d = test::ipv4_datagram(neighbour(0), ip("192.168.7.7"), 64, 30);
  d[11] = static_cast<char>(d[11] ^ 1);
  from_neighbour(0, d);
  from_neighbour(0, d.substr(0, 19));
  expect_quiet();
  EXPECT_EQ(router_->stats().ipv4_errors[wire::Ipv4Error::BadChecksum], 1u);
  EXPECT_EQ(router_->stats().ipv4_errors[wire::Ipv4Error::Truncated], 1u);
}

TEST_F(RouterTest, RouteToMissingInterfaceIsCounted) {
  router_->add_route({ip("172.16.0.0"), 12, std::nullopt, 9});
  from_neighbour(0, test::ipv4_datagram(neighbour(0), ip("172.16.0.1"), 64, 8));
  expect_quiet();
  EXPECT_EQ(drops(RouterDrop::BadInterface), 1u);
}

TEST_F(RouterTest, RemovedRouteIsNoLongerUsed) {
  EXPECT_TRUE(router_->remove_route(ip("192.168.0.0"), 16));
  from_neighbour(0, test::ipv4_datagram(neighbour(0), ip("192.168.7.7"), 64, 8));
  EXPECT_EQ(expect_icmp(0, neighbour(0)).code, icmp::kNetUnreachable);
}

TEST_F(RouterTest, ReassemblesAFragmentedPing) {
  std::string echo(8 + 2000, 'p');
  BufferWriter w(echo.data(), echo.size());
  serialize(wire::IcmpMessage::echo(icmp::kEchoRequest, 1, 2, std::string(2000, 'p')), w);
  // Two fragments: 1480 bytes, then the rest.
  for (int k = 0; k < 2; ++k) {
    const size_t offset = k == 0 ? 0 : 1480;
    const size_t n = k == 0 ? 1480 : echo.size() - 1480;
    std::string f(20 + n, '\0');
    wire::Ipv4Header h;
    h.total_length = static_cast<uint16_t>(f.size());
    h.id = 99;
    h.more_fragments = k == 0;
    h.fragment_offset = static_cast<uint16_t>(offset);
    h.protocol = 1;
    h.src = neighbour(0);
    h.dst = ip("10.0.0.1");
    BufferWriter fw(f.data(), f.size());
    serialize(h, fw);
    fw.bytes(std::string_view(echo).substr(offset, n));
    from_neighbour(0, f);
  }
  // The 2028-byte reply leaves in fragments through the 1500-byte link.
  Ipv4Reassembler reassembler({});
  std::optional<std::string> whole;
  while (!links_[0].frames.empty()) {
    const auto f = expect_datagram(0);
    const auto v = wire::parse_ipv4(f);
    ASSERT_TRUE(v);
    if (const auto r = reassembler.add(*v, f, now_)) {
      whole = std::string(*r);
    }
  }
  ASSERT_TRUE(whole);
  const auto v = wire::parse_ipv4(*whole);
  ASSERT_TRUE(v);
  const auto m = wire::parse_icmp(v->payload);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->type, icmp::kEchoReply);
  EXPECT_EQ(m->data, std::string(2000, 'p'));
}

TEST_F(RouterTest, WorksWithTheLinearTable) {
  router_ = std::make_unique<Router>(RouterConfig{}, std::make_unique<LinearRouteTable>());
  for (size_t i = 0; i < 2; ++i) {
    NetworkInterfaceConfig c;
    c.mac = router_mac(i);
    c.ip = Ipv4Address::from_octets(10, 0, static_cast<uint8_t>(i), 1);
    router_->add_interface(c, links_[i]);
  }
  router_->add_route({ip("0.0.0.0"), 0, std::nullopt, 1});
  from_neighbour(0, test::ipv4_datagram(neighbour(0), ip("8.8.8.8"), 64, 8));
  ASSERT_EQ(links_[1].frames.size(), 1u);  // an ARP request for 8.8.8.8
  EXPECT_EQ(wire::parse_arp(wire::parse_ethernet(links_[1].frames[0])->payload)->target_ip,
            ip("8.8.8.8"));
}

}  // namespace
}  // namespace tinytcp::net

// The Router with offloads (net/link_offload.hh): TCP GSO super-datagrams and
// partial checksums forwarded whole with their header to an offloading
// interface, segmented or completed for a plain one, fragmentation needed by
// segment size, and bad headers dropped and counted (a fuzz-style run).

#include <gtest/gtest.h>

#include <array>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "net/router.hh"
#include "unit/net/net_test_util.hh"
#include "util/checksum.hh"
#include "wire/icmp.hh"

namespace tinytcp::net {
namespace {

using test::ip;
using wire::ArpOpcode;
using wire::EtherType;
using wire::Ipv4Address;
using wire::MacAddress;
namespace icmp = wire::icmp;

constexpr size_t kEth = wire::EthernetHeader::kSize;

class OffloadSink : public FrameSink {
 public:
  struct Sent {
    std::string frame;
    bool offloaded = false;
    LinkOffload offload;
  };
  void send_frame(std::string_view frame) override {
    sent.push_back({std::string(frame), false, {}});
  }
  void send_offloaded_frame(std::string_view frame, const LinkOffload& offload) override {
    sent.push_back({std::string(frame), true, offload});
  }
  std::vector<Sent> sent;
};

uint16_t be16(const std::string& s, size_t at) {
  return static_cast<uint16_t>((static_cast<uint8_t>(s[at]) << 8) |
                               static_cast<uint8_t>(s[at + 1]));
}
uint32_t be32(const std::string& s, size_t at) {
  return (uint32_t{be16(s, at)} << 16) | be16(s, at + 2);
}
void put16(std::string& s, size_t at, uint16_t v) {
  s[at] = static_cast<char>(v >> 8);
  s[at + 1] = static_cast<char>(v);
}

// The TCP (or UDP) checksum of an IPv4 datagram with a 20-byte header verifies.
bool transport_checksum_ok(const std::string& d, uint8_t protocol) {
  InternetChecksum sum;
  sum.add(std::string_view(d).substr(12, 8));
  sum.add_u16(protocol);
  sum.add_u16(static_cast<uint16_t>(d.size() - 20));
  sum.add(std::string_view(d).substr(20));
  return sum.verifies();
}

// The pseudo-header sum a sender leaves in the field with checksum offload.
uint16_t pseudo_sum(const std::string& d, uint8_t protocol) {
  InternetChecksum sum;
  sum.add(std::string_view(d).substr(12, 8));
  sum.add_u16(protocol);
  sum.add_u16(static_cast<uint16_t>(d.size() - 20));
  return static_cast<uint16_t>(~sum.value());
}

// An IPv4/TCP super-datagram: DF, TTL 64, `payload` bytes after a 20-byte TCP
// header (seq 1000, ACK|PSH|FIN|CWR as given), the TCP checksum partial.
std::string tcp_super(Ipv4Address src, Ipv4Address dst, size_t payload, uint8_t flags = 0x18) {
  std::string d = test::ipv4_datagram(src, dst, 64, 20 + payload, 6, 0x4000);
  d[6] = 0x40;  // DF
  d[7] = 0;
  put16(d, 10, 0);
  InternetChecksum h;
  h.add(std::string_view(d).substr(0, 20));
  put16(d, 10, h.value());
  std::string tcp(20, '\0');
  put16(tcp, 0, 40000);
  put16(tcp, 2, 80);
  tcp[4] = 0;
  tcp[5] = 0;
  put16(tcp, 6, 1000);  // seq
  put16(tcp, 10, 77);   // ack
  tcp[12] = 0x50;
  tcp[13] = static_cast<char>(flags);
  put16(tcp, 14, 65535);
  d.replace(20, 20, tcp);
  put16(d, 36, pseudo_sum(d, 6));
  return d;
}

LinkOffload gso(uint16_t gso_size) {
  LinkOffload o;
  o.flags = LinkOffload::kNeedsChecksum;
  o.gso_type = LinkOffload::kGsoTcpV4;
  o.header_length = kEth + 40;
  o.gso_size = gso_size;
  o.checksum_start = kEth + 20;
  o.checksum_offset = 16;
  return o;
}

MacAddress router_mac(size_t i) {
  return {{0x02, 0, 0, 0, 1, static_cast<uint8_t>(i)}};
}
MacAddress neighbour_mac(size_t i) {
  return {{0x02, 0, 0, 0, 2, static_cast<uint8_t>(i)}};
}

// Interfaces 10.0.i.1/24: 0 offloads (the sender's), 1 offloads, 2 plain,
// 3 offloads with MTU 1280, 4 plain with MTU 1280. ARP is warm.
class RouterOffloadTest : public ::testing::Test {
 protected:
  static constexpr size_t kLinks = 5;
  RouterOffloadTest() {
    for (size_t i = 0; i < kLinks; ++i) {
      NetworkInterfaceConfig c;
      c.mac = router_mac(i);
      c.ip = Ipv4Address::from_octets(10, 0, static_cast<uint8_t>(i), 1);
      c.mtu = i >= 3 ? 1280 : 1500;
      c.offload = i == 0 || i == 1 || i == 3;
      router_.add_interface(c, links_[i]);
      router_.add_route(
          {Ipv4Address::from_octets(10, 0, static_cast<uint8_t>(i), 0), 24, std::nullopt, i});
      router_.receive_frame(
          i,
          test::ethernet_frame(MacAddress::broadcast(), neighbour_mac(i), EtherType::kArp,
                               test::arp_payload({ArpOpcode::kRequest, neighbour_mac(i),
                                                  neighbour(i), MacAddress{}, c.ip})),
          now_);
      links_[i].sent.clear();
    }
  }
  static Ipv4Address neighbour(size_t i) {
    return Ipv4Address::from_octets(10, 0, static_cast<uint8_t>(i), 2);
  }
  void send(const std::string& datagram, const LinkOffload& offload) {
    router_.receive_frame(
        0, test::ethernet_frame(router_mac(0), neighbour_mac(0), EtherType::kIpv4, datagram), now_,
        &offload);
  }
  // The datagrams sent on link i (Ethernet header checked and removed).
  std::vector<OffloadSink::Sent> take(size_t i) {
    std::vector<OffloadSink::Sent> out = std::move(links_[i].sent);
    links_[i].sent.clear();
    for (auto& s : out) {
      EXPECT_EQ(s.frame.substr(0, 6),
                std::string(reinterpret_cast<const char*>(neighbour_mac(i).bytes.data()), 6));
      s.frame.erase(0, kEth);
    }
    return out;
  }

  Router router_;
  std::array<OffloadSink, kLinks> links_;
  Instant now_{};
};

TEST_F(RouterOffloadTest, GsoToAnOffloadingInterfaceLeavesWholeWithItsHeader) {
  const std::string d = tcp_super(neighbour(0), neighbour(1), 4000);
  send(d, gso(1448));
  const auto out = take(1);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(out[0].offloaded);
  EXPECT_EQ(out[0].offload.gso_type, LinkOffload::kGsoTcpV4);
  EXPECT_EQ(out[0].offload.gso_size, 1448);
  EXPECT_EQ(out[0].offload.checksum_start, kEth + 20);
  EXPECT_EQ(out[0].offload.checksum_offset, 16);
  const std::string& f = out[0].frame;
  ASSERT_EQ(f.size(), d.size());
  const auto parsed = wire::parse_ipv4(f);  // the patched header checksum verifies
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->header.ttl, 63);
  EXPECT_EQ(f.substr(20), d.substr(20));  // the partial TCP checksum untouched
  // Completing it as the device would gives a valid checksum.
  std::string done = f;
  complete_checksum(done.data(), done.size(), out[0].offload, kEth);
  EXPECT_TRUE(transport_checksum_ok(done, 6));
  EXPECT_EQ(router_.stats().gso_forwarded, 1u);
  EXPECT_EQ(router_.stats().forwarded, 1u);
}

TEST_F(RouterOffloadTest, GsoWaitingForArpKeepsItsHeader) {
  const Ipv4Address cold = ip("10.0.1.3");
  const MacAddress cold_mac{{0x02, 0, 0, 0, 3, 1}};
  send(tcp_super(neighbour(0), cold, 4000), gso(1448));
  ASSERT_EQ(links_[1].sent.size(), 1u);  // the ARP request (broadcast)
  EXPECT_FALSE(links_[1].sent[0].offloaded);
  links_[1].sent.clear();
  EXPECT_EQ(router_.interface(1).pending_datagrams(), 1u);
  router_.receive_frame(
      1,
      test::ethernet_frame(router_mac(1), cold_mac, EtherType::kArp,
                           test::arp_payload({ArpOpcode::kReply, cold_mac, cold, router_mac(1),
                                              router_.interface(1).ip()})),
      now_);
  ASSERT_EQ(links_[1].sent.size(), 1u);
  EXPECT_TRUE(links_[1].sent[0].offloaded);
  EXPECT_EQ(links_[1].sent[0].offload.gso_size, 1448);
  EXPECT_EQ(links_[1].sent[0].frame.size(), kEth + 4040);
}

TEST_F(RouterOffloadTest, GsoToAPlainInterfaceIsSegmentedWithCompleteChecksums) {
  const std::string d = tcp_super(neighbour(0), neighbour(2), 4000, 0x80 | 0x18 | 0x01);
  send(d, gso(1448));
  const auto out = take(2);
  ASSERT_EQ(out.size(), 3u);
  const size_t sizes[] = {1448, 1448, 1104};
  std::string payload;
  for (size_t k = 0; k < out.size(); ++k) {
    const std::string& s = out[k].frame;
    EXPECT_FALSE(out[k].offloaded);
    const auto parsed = wire::parse_ipv4(s);
    ASSERT_TRUE(parsed) << k;
    EXPECT_EQ(parsed->header.ttl, 63);
    EXPECT_EQ(parsed->header.total_length, 40 + sizes[k]);
    EXPECT_EQ(parsed->header.id, 0x4000 + k);
    EXPECT_TRUE(parsed->header.dont_fragment);
    EXPECT_EQ(be32(s, 24), 1000 + 1448 * k) << "sequence number";
    const auto flags = static_cast<uint8_t>(s[33]);
    EXPECT_EQ((flags & 0x80) != 0, k == 0) << "CWR on the first only";
    EXPECT_EQ((flags & 0x09) == 0x09, k == 2) << "FIN and PSH on the last only";
    EXPECT_TRUE(flags & 0x10);
    EXPECT_TRUE(transport_checksum_ok(s, 6)) << k;
    payload += s.substr(40);
  }
  EXPECT_EQ(payload, d.substr(40));
  EXPECT_EQ(router_.stats().gso_segmented, 1u);
  EXPECT_EQ(router_.stats().segments_sent, 3u);
}

TEST_F(RouterOffloadTest, SegmentTooBigWithDfGetsFragmentationNeededWithTheMtu) {
  for (const size_t out :
       {size_t{3}, size_t{4}}) {  // offloading or not: the segments do not fit 1280
    send(tcp_super(neighbour(0), Ipv4Address::from_octets(10, 0, static_cast<uint8_t>(out), 2),
                   4000),
         gso(1448));
    EXPECT_TRUE(take(out).empty());
    const auto back = take(0);
    ASSERT_EQ(back.size(), 1u);
    const auto reply = wire::parse_ipv4(back[0].frame);
    ASSERT_TRUE(reply);
    const auto m = wire::parse_icmp(reply->payload);
    ASSERT_TRUE(m);
    EXPECT_EQ(m->type, icmp::kDestinationUnreachable);
    EXPECT_EQ(m->code, icmp::kFragmentationNeeded);
    EXPECT_EQ(m->rest & 0xffff, 1280u);
  }
  EXPECT_EQ(router_.stats().drops[RouterDrop::NeedsFragmentation], 2u);
  // Segments that fit go whole to the offloading one.
  send(tcp_super(neighbour(0), neighbour(3), 4000), gso(1200));
  const auto out = take(3);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(out[0].offloaded);
}

TEST_F(RouterOffloadTest, GsoWithoutDfTooBigIsSegmentedAndFragmented) {
  std::string d = tcp_super(neighbour(0), neighbour(4), 3000);
  d[6] = 0;  // no DF
  put16(d, 10, 0);
  InternetChecksum h;
  h.add(std::string_view(d).substr(0, 20));
  put16(d, 10, h.value());
  send(d, gso(1448));
  const auto out = take(4);
  EXPECT_EQ(out.size(), 5u);  // 1448 + 1448 in two fragments each, 104 whole
  for (const auto& s : out) {
    EXPECT_TRUE(wire::parse_ipv4(s.frame));
    EXPECT_LE(s.frame.size(), 1280u);
  }
}

TEST_F(RouterOffloadTest, PartialChecksumTravelsOrIsCompleted) {
  // UDP with its checksum left to the device (offset 6).
  std::string d = test::ipv4_datagram(neighbour(0), neighbour(1), 64, 8 + 300, 17);
  put16(d, 20, 5000);
  put16(d, 22, 53);
  put16(d, 24, 308);
  put16(d, 26, pseudo_sum(d, 17));
  LinkOffload o;
  o.flags = LinkOffload::kNeedsChecksum;
  o.checksum_start = kEth + 20;
  o.checksum_offset = 6;
  send(d, o);
  auto out = take(1);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(out[0].offloaded);
  EXPECT_EQ(out[0].frame.substr(20), d.substr(20));

  std::string to_plain = d;
  to_plain[18] = 2;  // 10.0.2.2
  put16(to_plain, 10, 0);
  InternetChecksum h;
  h.add(std::string_view(to_plain).substr(0, 20));
  put16(to_plain, 10, h.value());
  put16(to_plain, 26, pseudo_sum(to_plain, 17));
  send(to_plain, o);
  out = take(2);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_FALSE(out[0].offloaded);
  EXPECT_TRUE(transport_checksum_ok(out[0].frame, 17));
  EXPECT_EQ(router_.stats().checksums_completed, 1u);
}

TEST_F(RouterOffloadTest, BadHeadersAreDroppedAndCounted) {
  const std::string d = tcp_super(neighbour(0), neighbour(1), 4000);
  LinkOffload outside = gso(1448);
  outside.checksum_offset = 9000;
  LinkOffload before_ip = gso(1448);
  before_ip.checksum_start = 4;
  LinkOffload zero = gso(0);
  LinkOffload udp_gso = gso(1448);
  udp_gso.gso_type = 3;
  LinkOffload v6 = gso(1448);
  v6.gso_type = LinkOffload::kGsoTcpV6;
  LinkOffload no_csum = gso(1448);
  no_csum.flags = 0;
  for (const auto& o : {outside, before_ip, zero, udp_gso, v6, no_csum}) {
    send(d, o);
  }
  send(test::ipv4_datagram(neighbour(0), neighbour(1), 64, 3000, 17), gso(1448));  // not TCP
  EXPECT_TRUE(take(1).empty());
  const auto& e = router_.stats().offload_errors;
  EXPECT_EQ(e[OffloadError::kChecksumOutside], 2u);
  EXPECT_EQ(e[OffloadError::kZeroGsoSize], 1u);
  EXPECT_EQ(e[OffloadError::kUnknownGso], 2u);
  EXPECT_EQ(e[OffloadError::kGsoWithoutChecksum], 1u);
  EXPECT_EQ(e[OffloadError::kNotTcp], 1u);
  EXPECT_EQ(router_.stats().forwarded, 0u);
}

TEST_F(RouterOffloadTest, RandomHeadersNeverCrashAndAreAccountedFor) {
  std::mt19937 rng(18);
  std::uniform_int_distribution<unsigned> byte(0, 255);
  const std::string base = tcp_super(neighbour(0), neighbour(1), 6000);
  for (int n = 0; n < 3000; ++n) {
    LinkOffload o;
    o.flags = static_cast<uint8_t>(byte(rng) & 3);
    const int pick = byte(rng) % 4;
    o.gso_type = pick == 0   ? static_cast<uint8_t>(byte(rng))
                 : pick == 1 ? LinkOffload::kGsoNone
                             : LinkOffload::kGsoTcpV4;
    o.gso_size = static_cast<uint16_t>(byte(rng) % 2 == 0 ? byte(rng) * 8 : byte(rng) << 8);
    o.checksum_start = static_cast<uint16_t>(byte(rng) % 2 == 0 ? kEth + 20 : byte(rng) * 32);
    o.checksum_offset = static_cast<uint16_t>(byte(rng) % 2 == 0 ? 16 : byte(rng) * 32);
    std::string d = base;
    d[33] = static_cast<char>(byte(rng));         // TCP flags
    d[32] = static_cast<char>(byte(rng) & 0xf0);  // data offset
    const size_t out = static_cast<size_t>(1 + byte(rng) % 4);
    d[19] = static_cast<char>(2);
    d[18] = static_cast<char>(out);
    put16(d, 10, 0);
    InternetChecksum h;
    h.add(std::string_view(d).substr(0, 20));
    put16(d, 10, h.value());
    const RouterStats before = router_.stats();
    send(d, o);
    const RouterStats& after = router_.stats();
    const uint64_t accounted = (after.forwarded - before.forwarded) +
                               (after.offload_errors.total() - before.offload_errors.total()) +
                               (after.drops.total() - before.drops.total());
    ASSERT_EQ(accounted, 1u) << n;
    for (size_t i = 0; i < kLinks; ++i) {
      for (const auto& s : take(i)) {
        const auto parsed = wire::parse_ipv4(s.frame);
        ASSERT_TRUE(parsed) << n;  // every IPv4 header we send verifies
        if (!s.offloaded) {
          ASSERT_LE(s.frame.size(), i >= 3 ? 1280u : 1500u);
        }
      }
    }
  }
}

}  // namespace
}  // namespace tinytcp::net

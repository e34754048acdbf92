#include "io/virtio_net_header.hh"

#include <gtest/gtest.h>

#include <string>

#include "stack/datagram_codec.hh"
#include "unit/wire/test_bytes.hh"
#include "util/buffer.hh"
#include "util/checksum.hh"

namespace tinytcp::io {
namespace {

TEST(VirtioNetHeaderTest, GoldenBytesLittleEndian) {
  VirtioNetHeader h;
  h.flags = VirtioNetHeader::kNeedsChecksum;
  h.gso_type = VirtioNetHeader::kGsoTcpV4;
  h.header_length = 0x0034;
  h.gso_size = 0x05a8;
  h.checksum_start = 0x0014;
  h.checksum_offset = 0x0010;
  char out[VirtioNetHeader::kSize];
  serialize(h, out);
  EXPECT_EQ(std::string(out, sizeof(out)),
            std::string("\x01\x01\x34\x00\xa8\x05\x14\x00\x10\x00", 10));
}

TEST(VirtioNetHeaderTest, RoundTrip) {
  VirtioNetHeader h;
  h.flags = 3;
  h.gso_type = 0x81;
  h.header_length = 0x1234;
  h.gso_size = 0xfedc;
  h.checksum_start = 0xabcd;
  h.checksum_offset = 0x0102;
  char out[VirtioNetHeader::kSize];
  serialize(h, out);
  const auto back = parse_virtio_net_header(std::string_view(out, sizeof(out)));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->flags, 3);
  EXPECT_EQ(back->gso_type, 0x81);
  EXPECT_EQ(back->header_length, 0x1234);
  EXPECT_EQ(back->gso_size, 0xfedc);
  EXPECT_EQ(back->checksum_start, 0xabcd);
  EXPECT_EQ(back->checksum_offset, 0x0102);
}

TEST(VirtioNetHeaderTest, EveryTruncationIsRefused) {
  const std::string bytes(VirtioNetHeader::kSize, '\x01');
  for (size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_FALSE(parse_virtio_net_header(bytes.substr(0, n))) << n;
  }
}

TEST(VirtioNetHeaderTest, CompletesAPartialTcpChecksum) {
  // A datagram with a correct checksum, its field replaced by the
  // pseudo-header sum as the kernel leaves it under checksum offload.
  const std::string payload(1000, 'x');
  tcp::TcpSegment s;
  s.ack = true;
  s.seqno = tcp::Wrap32{5};
  s.payload = payload;
  const stack::FourTuple flow{wire::Ipv4Address::from_octets(10, 0, 0, 1), 1,
                              wire::Ipv4Address::from_octets(10, 0, 0, 2), 2};
  std::string d(2000, '\0');
  BufferWriter w(d.data(), d.size());
  ASSERT_TRUE(stack::serialize_datagram(s, flow, 64, w));
  d.resize(w.size());
  const std::string good = d;
  InternetChecksum pseudo;
  pseudo.add(std::string_view(d).substr(12, 8));
  pseudo.add_u16(6);
  pseudo.add_u16(static_cast<uint16_t>(d.size() - 20));
  const auto partial = static_cast<uint16_t>(~pseudo.value());
  d[36] = static_cast<char>(partial >> 8);
  d[37] = static_cast<char>(partial & 0xff);

  VirtioNetHeader h;
  h.flags = VirtioNetHeader::kNeedsChecksum;
  h.checksum_start = 20;
  h.checksum_offset = 16;
  ASSERT_TRUE(complete_checksum(d.data(), d.size(), h));
  EXPECT_EQ(d, good);
}

TEST(VirtioNetHeaderTest, ZeroChecksumIsWrittenAsAllOnes) {
  std::string p("\xff\xff\x00\x00", 4);
  VirtioNetHeader h;
  h.checksum_start = 0;
  h.checksum_offset = 2;
  ASSERT_TRUE(complete_checksum(p.data(), p.size(), h));
  EXPECT_EQ(p, std::string("\xff\xff\xff\xff", 4));
}

TEST(VirtioNetHeaderTest, ChecksumFieldOutsideThePacketIsRefused) {
  std::string p(40, '\x01');
  const std::string before = p;
  VirtioNetHeader h;
  h.checksum_start = 20;
  h.checksum_offset = 19;  // field at 39..40: one byte past the end
  EXPECT_FALSE(complete_checksum(p.data(), p.size(), h));
  h.checksum_start = 60;
  h.checksum_offset = 0;
  EXPECT_FALSE(complete_checksum(p.data(), p.size(), h));
  EXPECT_EQ(p, before);
  h.checksum_start = 20;
  h.checksum_offset = 18;  // the last two bytes: fine
  EXPECT_TRUE(complete_checksum(p.data(), p.size(), h));
}

// fd00:7474:144::1.40000 > fd00:7474:144::9.80, ACK, 60 bytes of 'x': scapy's
// raw(IPv6(src=..., dst=..., hlim=64)/TCP(sport=40000, dport=80, seq=1000,
// ack=777, flags='A', window=1024)/(b'x'*60)), checksum 0x047d.
const std::string kScapyIpv6Tcp = test::from_hex(
    "60000000 0050 06 40 fd007474014400000000000000000001 fd007474014400000000000000000009"
    "9c40 0050 000003e8 00000309 5010 0400 047d 0000"
    "787878787878787878787878787878787878787878787878787878787878"
    "787878787878787878787878787878787878787878787878787878787878");

// The packet as the kernel hands it over under checksum offload: the TCP
// checksum field holds the (uncomplemented) RFC 8200 §8.1 pseudo-header sum.
std::string partial_ipv6(std::string packet) {
  InternetChecksum pseudo;
  pseudo.add(std::string_view(packet).substr(8, 32));  // addresses
  pseudo.add_u16(static_cast<uint16_t>(packet.size() - 40));
  pseudo.add_u16(6);
  const auto partial = static_cast<uint16_t>(~pseudo.value());
  packet[56] = static_cast<char>(partial >> 8);
  packet[57] = static_cast<char>(partial & 0xff);
  return packet;
}

std::string with_vnet(uint8_t flags, uint8_t gso_type, uint16_t start, std::string_view packet) {
  VirtioNetHeader h;
  h.flags = flags;
  h.gso_type = gso_type;
  h.gso_size = gso_type == VirtioNetHeader::kGsoNone ? 0 : 20;
  h.header_length = 60;
  h.checksum_start = start;
  h.checksum_offset = 16;
  std::string out(VirtioNetHeader::kSize, '\0');
  serialize(h, out.data());
  return out + std::string(packet);
}

TEST(VirtioNetHeaderTest, CompletesAPartialIpv6TcpChecksumToScapysBytes) {
  ASSERT_EQ(kScapyIpv6Tcp.size(), 120u);
  std::string read = with_vnet(VirtioNetHeader::kNeedsChecksum, VirtioNetHeader::kGsoNone, 40,
                               partial_ipv6(kScapyIpv6Tcp));
  ASSERT_NE(read.substr(VirtioNetHeader::kSize), kScapyIpv6Tcp);
  const VnetReadInfo info = take_virtio_net_header(read.data(), read.size());
  EXPECT_EQ(info.result, VnetRead::kPacket);
  EXPECT_TRUE(info.checksum_completed);
  EXPECT_FALSE(info.super_packet);
  EXPECT_EQ(test::to_hex(read.substr(VirtioNetHeader::kSize)), test::to_hex(kScapyIpv6Tcp));
}

TEST(VirtioNetHeaderTest, TakesATcpV6SuperPacketAndCompletesItsChecksum) {
  // A TCPv6 GSO read (the kernel sends them once given TUN_F_TSO6): the
  // segment size is a hint for the stack, the packet one long TCP segment.
  std::string read = with_vnet(VirtioNetHeader::kNeedsChecksum, VirtioNetHeader::kGsoTcpV6, 40,
                               partial_ipv6(kScapyIpv6Tcp));
  const VnetReadInfo info = take_virtio_net_header(read.data(), read.size());
  EXPECT_EQ(info.result, VnetRead::kPacket);
  EXPECT_TRUE(info.checksum_completed);
  EXPECT_TRUE(info.super_packet);
  EXPECT_EQ(test::to_hex(read.substr(VirtioNetHeader::kSize)), test::to_hex(kScapyIpv6Tcp));
  // With the ECN flag bit too.
  read = with_vnet(0, VirtioNetHeader::kGsoTcpV6 | VirtioNetHeader::kGsoEcn, 40, kScapyIpv6Tcp);
  EXPECT_EQ(take_virtio_net_header(read.data(), read.size()).result, VnetRead::kPacket);
}

TEST(VirtioNetHeaderTest, TakeRefusesUdpGsoShortReadsAndAFieldOutside) {
  std::string read = with_vnet(0, 3, 40, kScapyIpv6Tcp);  // VIRTIO_NET_HDR_GSO_UDP
  EXPECT_EQ(take_virtio_net_header(read.data(), read.size()).result, VnetRead::kUnsupportedGso);
  read = with_vnet(0, 5, 40, kScapyIpv6Tcp);  // VIRTIO_NET_HDR_GSO_UDP_L4
  EXPECT_EQ(take_virtio_net_header(read.data(), read.size()).result, VnetRead::kUnsupportedGso);
  for (size_t n = 0; n < VirtioNetHeader::kSize; ++n) {
    EXPECT_EQ(take_virtio_net_header(read.data(), n).result, VnetRead::kBadHeader) << n;
  }
  read = with_vnet(VirtioNetHeader::kNeedsChecksum, VirtioNetHeader::kGsoTcpV6, 110,
                   kScapyIpv6Tcp);  // field at 126: past the 120 bytes
  const std::string before = read;
  EXPECT_EQ(take_virtio_net_header(read.data(), read.size()).result, VnetRead::kBadHeader);
  EXPECT_EQ(read, before);
  read = with_vnet(0, VirtioNetHeader::kGsoNone, 0, kScapyIpv6Tcp);
  const VnetReadInfo plain = take_virtio_net_header(read.data(), read.size());
  EXPECT_EQ(plain.result, VnetRead::kPacket);
  EXPECT_FALSE(plain.checksum_completed);
  EXPECT_FALSE(plain.super_packet);
}

}  // namespace
}  // namespace tinytcp::io

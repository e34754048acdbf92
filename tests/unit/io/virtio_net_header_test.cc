#include "io/virtio_net_header.hh"

#include <gtest/gtest.h>

#include <string>

#include "stack/datagram_codec.hh"
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

}  // namespace
}  // namespace tinytcp::io

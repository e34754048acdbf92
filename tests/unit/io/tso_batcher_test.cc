#include "io/tso_batcher.hh"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "io/virtio_net_header.hh"
#include "stack/datagram_codec.hh"
#include "unit/wire/test_bytes.hh"
#include "util/buffer.hh"
#include "wire/ipv4.hh"
#include "wire/ipv6.hh"
#include "wire/tcp_header.hh"

namespace tinytcp::io {
namespace {

const stack::FourTuple kFlow{wire::Ipv4Address::from_octets(169, 254, 144, 9), 80,
                             wire::Ipv4Address::from_octets(169, 254, 144, 1), 40000};

const stack::FourTuple kFlow6{*wire::Ipv6Address::parse("fd00:7474:144::9"), 80,
                              *wire::Ipv6Address::parse("fd00:7474:144::1"), 40000};

// See Ipv6SuperPacketMatchesScapysBytes.
const char* const kScapyHeaders6 =
    "60000000 011a 06 40 fd007474014400000000000000000009 fd007474014400000000000000000001"
    "0050 9c40 000003e8 00000309 8010 0400 ec1c 0000 0101080a 000003e8 000007d0";

// Builds the datagrams the Host would send; verb helpers change one field.
class TsoBatcherTest : public ::testing::Test {
 protected:
  tcp::TcpSegment data(uint32_t seq, size_t bytes) {
    payloads_.push_back(std::string(bytes, static_cast<char>('a' + payloads_.size() % 26)));
    tcp::TcpSegment s;
    s.seqno = tcp::Wrap32{seq};
    s.ack = true;
    s.ackno = tcp::Wrap32{777};
    s.window = 1024;
    s.options.timestamps = tcp::Timestamps{1000, 2000};
    s.payload = payloads_.back();
    return s;
  }
  void add(const tcp::TcpSegment& s, const stack::FourTuple& flow = kFlow) {
    std::string out(70000, '\0');
    BufferWriter w(out.data(), out.size());
    ASSERT_TRUE(stack::serialize_datagram(s, flow, 64, w));
    out.resize(w.size());
    datagrams_.push_back(out);
  }
  // `count` full segments of `mss` bytes from sequence number 1000.
  void add_run(size_t count, size_t mss = 1448, const stack::FourTuple& flow = kFlow) {
    for (size_t i = 0; i < count; ++i) {
      add(data(static_cast<uint32_t>(1000 + i * mss), mss), flow);
    }
  }
  TsoRun run(size_t max_bytes = 65535) {
    views_.assign(datagrams_.begin(), datagrams_.end());
    return find_tso_run(views_.data(), views_.size(), max_bytes);
  }
  // The super-packet of `r` as the kernel would read it: virtio-net header,
  // merged headers, payloads.
  std::string super_packet(const TsoRun& r) {
    std::string out(tso_header_bytes(r), '\0');
    EXPECT_EQ(write_tso_header(views_.data(), r, out.data()), out.size());
    for (size_t i = 0; i < r.count; ++i) {
      out += datagrams_[i].substr(r.header_bytes);
    }
    return out;
  }

  std::vector<std::string> payloads_{};
  std::vector<std::string> datagrams_;
  std::vector<std::string_view> views_;
};

TEST_F(TsoBatcherTest, FullSegmentsOfOneFlowMerge) {
  add_run(5);
  const TsoRun r = run();
  EXPECT_EQ(r.count, 5u);
  EXPECT_EQ(r.header_bytes, 20u + 32u);  // IPv4 + TCP with timestamps
  EXPECT_EQ(r.payload_bytes, 5u * 1448u);
  EXPECT_EQ(r.segment_payload, 1448);
}

TEST_F(TsoBatcherTest, ShortLastSegmentJoins) {
  add_run(3);
  add(data(1000 + 3 * 1448, 100));
  EXPECT_EQ(run().count, 4u);
  EXPECT_EQ(run().payload_bytes, 3u * 1448u + 100u);
}

TEST_F(TsoBatcherTest, ShortSegmentEndsTheRun) {
  add_run(2);
  add(data(1000 + 2 * 1448, 100));
  add(data(1000 + 2 * 1448 + 100, 1448));
  EXPECT_EQ(run().count, 3u);
}

TEST_F(TsoBatcherTest, LongerSegmentAfterTheFirstEndsTheRun) {
  add(data(1000, 1000));
  add(data(2000, 1448));
  EXPECT_EQ(run().count, 1u);
}

TEST_F(TsoBatcherTest, SequenceGapEndsTheRun) {
  add_run(2);
  add(data(1000 + 3 * 1448, 1448));
  EXPECT_EQ(run().count, 2u);
}

TEST_F(TsoBatcherTest, RetransmissionBeforeNewDataEndsTheRun) {
  add_run(2);
  add(data(1000, 1448));
  EXPECT_EQ(run().count, 2u);
}

TEST_F(TsoBatcherTest, AnotherFlowEndsTheRun) {
  add_run(2);
  stack::FourTuple other = kFlow;
  other.remote_port = 40001;
  add(data(1000 + 2 * 1448, 1448), other);
  EXPECT_EQ(run().count, 2u);
}

TEST_F(TsoBatcherTest, DifferentAckEndsTheRun) {
  add_run(2);
  auto s = data(1000 + 2 * 1448, 1448);
  s.ackno = tcp::Wrap32{778};
  add(s);
  EXPECT_EQ(run().count, 2u);
}

TEST_F(TsoBatcherTest, DifferentWindowEndsTheRun) {
  add_run(2);
  auto s = data(1000 + 2 * 1448, 1448);
  s.window = 1023;
  add(s);
  EXPECT_EQ(run().count, 2u);
}

TEST_F(TsoBatcherTest, DifferentTimestampEndsTheRun) {
  add_run(2);
  auto s = data(1000 + 2 * 1448, 1448);
  s.options.timestamps = tcp::Timestamps{1001, 2000};
  add(s);
  EXPECT_EQ(run().count, 2u);
}

TEST_F(TsoBatcherTest, FinSynRstUrgAreNeverMerged) {
  for (int flag = 0; flag < 4; ++flag) {
    datagrams_.clear();
    add_run(1);
    auto s = data(1000 + 1448, 1448);
    s.fin = flag == 0;
    s.syn = flag == 1;
    s.rst = flag == 2;
    s.urg = flag == 3;
    add(s);
    EXPECT_EQ(run().count, 1u) << "flag " << flag;
  }
}

TEST_F(TsoBatcherTest, PureAcksAreNotMerged) {
  add(data(1000, 0));
  add(data(1000, 0));
  EXPECT_EQ(run().count, 1u);
}

TEST_F(TsoBatcherTest, PshOnTheLastSegmentMergesAndIsKept) {
  add_run(2);
  auto s = data(1000 + 2 * 1448, 1448);
  s.psh = true;
  add(s);
  const TsoRun r = run();
  ASSERT_EQ(r.count, 3u);
  const std::string p = super_packet(r);
  const auto ip = wire::parse_ipv4(std::string_view(p).substr(VirtioNetHeader::kSize));
  ASSERT_TRUE(ip);
  EXPECT_EQ(static_cast<uint8_t>(ip->payload[13]) & 0x08, 0x08);
}

TEST_F(TsoBatcherTest, RunStopsAt64KiB) {
  add_run(60);
  const TsoRun r = run();
  EXPECT_EQ(r.count, (65535u - 52u) / 1448u);
  EXPECT_LE(r.header_bytes + r.payload_bytes, 65535u);
}

TEST_F(TsoBatcherTest, MaxBytesLimitsTheRun) {
  add_run(10);
  EXPECT_EQ(run(52 + 3 * 1448).count, 3u);
}

TEST_F(TsoBatcherTest, OneDatagramIsARunOfOne) {
  add_run(1);
  EXPECT_EQ(run().count, 1u);
}

TEST_F(TsoBatcherTest, EveryTruncationIsARunOfOne) {
  add_run(2);
  const std::string whole = datagrams_[0];
  for (size_t n = 0; n < whole.size(); ++n) {
    datagrams_[0] = whole.substr(0, n);
    EXPECT_EQ(run().count, 1u) << "length " << n;
  }
}

TEST_F(TsoBatcherTest, IpOptionsOrFragmentsAreARunOfOne) {
  add_run(2);
  std::string& d = datagrams_[0];
  d[0] = 0x46;  // IHL 6
  EXPECT_EQ(run().count, 1u);
  d[0] = 0x45;
  d[6] = static_cast<char>(d[6] | 0x20);  // more fragments
  EXPECT_EQ(run().count, 1u);
}

TEST_F(TsoBatcherTest, SuperPacketParsesAndItsChecksumCompletes) {
  add_run(4);
  add(data(1000 + 4 * 1448, 500));
  const TsoRun r = run();
  ASSERT_EQ(r.count, 5u);
  std::string p = super_packet(r);

  const auto v = parse_virtio_net_header(p);
  ASSERT_TRUE(v);
  EXPECT_EQ(v->flags, VirtioNetHeader::kNeedsChecksum);
  EXPECT_EQ(v->gso_type, VirtioNetHeader::kGsoTcpV4);
  EXPECT_EQ(v->gso_size, 1448);
  EXPECT_EQ(v->header_length, 52);
  EXPECT_EQ(v->checksum_start, 20);
  EXPECT_EQ(v->checksum_offset, 16);

  // What the kernel does with it: complete the checksum; then it is one
  // valid TCP segment carrying every payload in order.
  std::string packet = p.substr(VirtioNetHeader::kSize);
  ASSERT_TRUE(complete_checksum(packet.data(), packet.size(), *v));
  const auto ip = wire::parse_ipv4(packet);
  ASSERT_TRUE(ip);
  EXPECT_EQ(ip->header.total_length, packet.size());
  const auto tcp = wire::parse_tcp(ip->payload, ip->header.src.value, ip->header.dst.value);
  ASSERT_TRUE(tcp);
  EXPECT_EQ(tcp->header.seqno, 1000u);
  EXPECT_EQ(tcp->header.ackno, 777u);
  std::string want;
  for (size_t i = 0; i < 5; ++i) {
    want += payloads_[i];
  }
  EXPECT_EQ(tcp->payload, want);
}

TEST_F(TsoBatcherTest, Ipv6FullSegmentsOfOneFlowMerge) {
  add_run(5, 1428, kFlow6);
  const TsoRun r = run();
  EXPECT_EQ(r.count, 5u);
  EXPECT_EQ(r.ip_header_bytes, 40u);
  EXPECT_EQ(r.header_bytes, 40u + 32u);  // IPv6 + TCP with timestamps
  EXPECT_EQ(r.payload_bytes, 5u * 1428u);
  EXPECT_EQ(r.segment_payload, 1428);
}

// Three segments (100, 100 and 50 bytes of 'a', 'b', 'c') become one TCPv6
// GSO super-packet; with its checksum completed, as the kernel would, its
// headers are scapy's for the whole segment: raw(IPv6(src='fd00:7474:144::9',
// dst='fd00:7474:144::1', hlim=64)/TCP(sport=80, dport=40000, seq=1000,
// ack=777, flags='A', window=1024, options=[('NOP', None), ('NOP', None),
// ('Timestamp', (1000, 2000))])/(b'a'*100 + b'b'*100 + b'c'*50))[:72].
TEST_F(TsoBatcherTest, Ipv6SuperPacketMatchesScapysBytes) {
  add_run(2, 100, kFlow6);
  add(data(1200, 50), kFlow6);
  const TsoRun r = run();
  ASSERT_EQ(r.count, 3u);
  std::string p = super_packet(r);
  EXPECT_EQ(test::to_hex(p.substr(0, VirtioNetHeader::kSize)),
            test::to_hex(test::from_hex("01 04 4800 6400 2800 1000")));
  const auto v = parse_virtio_net_header(p);
  ASSERT_TRUE(v);
  std::string packet = p.substr(VirtioNetHeader::kSize);
  ASSERT_TRUE(complete_checksum(packet.data(), packet.size(), *v));
  EXPECT_EQ(test::to_hex(packet.substr(0, 72)), test::to_hex(test::from_hex(kScapyHeaders6)));
  EXPECT_EQ(packet.substr(72),
            std::string(100, 'a') + std::string(100, 'b') + std::string(50, 'c'));
}

TEST_F(TsoBatcherTest, FamiliesNeverMerge) {
  add_run(2);
  add(data(1000 + 2 * 1448, 1448), kFlow6);
  EXPECT_EQ(run().count, 2u);
  datagrams_.clear();
  add_run(2, 1448, kFlow6);
  add(data(1000 + 2 * 1448, 1448));
  EXPECT_EQ(run().count, 2u);
}

TEST_F(TsoBatcherTest, Ipv6HopLimitOrFlowLabelDifferenceEndsTheRun) {
  for (const size_t byte : {size_t{7}, size_t{3}}) {  // hop limit, flow label
    datagrams_.clear();
    add_run(3, 1428, kFlow6);
    datagrams_[2][byte] = static_cast<char>(datagrams_[2][byte] ^ 1);
    EXPECT_EQ(run().count, 2u) << "byte " << byte;
  }
}

TEST_F(TsoBatcherTest, Ipv6ExtensionHeaderOrBadLengthIsARunOfOne) {
  add_run(2, 1428, kFlow6);
  std::string& d = datagrams_[0];
  d[6] = 60;  // next header: destination options
  EXPECT_EQ(run().count, 1u);
  d[6] = 6;
  d[5] = static_cast<char>(d[5] + 1);  // payload length one past the bytes
  EXPECT_EQ(run().count, 1u);
}

TEST_F(TsoBatcherTest, EveryIpv6TruncationIsARunOfOne) {
  add_run(2, 1428, kFlow6);
  const std::string whole = datagrams_[0];
  for (size_t n = 0; n < whole.size(); ++n) {
    datagrams_[0] = whole.substr(0, n);
    EXPECT_EQ(run().count, 1u) << "length " << n;
  }
}

}  // namespace
}  // namespace tinytcp::io

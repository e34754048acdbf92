#include "stack/datagram_codec.hh"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "stack/port_allocator.hh"
#include "wire/ipv4.hh"

namespace tinytcp::stack {
namespace {

const FourTuple kTuple{wire::Ipv4Address::from_octets(169, 254, 144, 9), 49999,
                       wire::Ipv4Address::from_octets(169, 254, 144, 1), 80};

std::string serialize(const tcp::TcpSegment& seg, const FourTuple& tuple = kTuple) {
  std::string buf(2000, '\0');
  BufferWriter w(buf.data(), buf.size());
  EXPECT_TRUE(serialize_datagram(seg, tuple, 64, w));
  buf.resize(w.size());
  return buf;
}

tcp::TcpSegment data_segment(std::string_view payload) {
  tcp::TcpSegment seg;
  seg.seqno = tcp::Wrap32{1000};
  seg.ackno = tcp::Wrap32{2000};
  seg.ack = true;
  seg.psh = true;
  seg.window = 512;
  seg.options.timestamps = tcp::Timestamps{7, 9};
  seg.payload = payload;
  return seg;
}

TEST(DatagramCodecTest, RoundTripSwapsTheTupleToTheReceiversView) {
  const auto bytes = serialize(data_segment("hello"));
  const auto parsed = parse_datagram(bytes);
  ASSERT_TRUE(parsed) << to_string(parsed.error());
  // The receiver's local side is our remote side.
  EXPECT_EQ(parsed->tuple.local_ip, kTuple.remote_ip);
  EXPECT_EQ(parsed->tuple.local_port, kTuple.remote_port);
  EXPECT_EQ(parsed->tuple.remote_ip, kTuple.local_ip);
  EXPECT_EQ(parsed->tuple.remote_port, kTuple.local_port);
  EXPECT_EQ(parsed->segment.seqno, tcp::Wrap32{1000});
  EXPECT_EQ(parsed->segment.ackno, tcp::Wrap32{2000});
  EXPECT_TRUE(parsed->segment.ack);
  EXPECT_EQ(parsed->segment.window, 512);
  ASSERT_TRUE(parsed->segment.options.timestamps.has_value());
  EXPECT_EQ(parsed->segment.options.timestamps->value, 7u);
  EXPECT_EQ(parsed->segment.payload, "hello");
}

TEST(DatagramCodecTest, IpHeaderIsCorrectAndDontFragment) {
  const auto bytes = serialize(data_segment("abc"));
  const auto ip = wire::parse_ipv4(bytes);
  ASSERT_TRUE(ip);
  EXPECT_TRUE(ip->header.dont_fragment);
  EXPECT_EQ(ip->header.ttl, 64);
  EXPECT_EQ(ip->header.total_length, bytes.size());
  EXPECT_EQ(ip->header.protocol, 6);
}

TEST(DatagramCodecTest, EveryFlippedBitIsDropped) {
  const auto bytes = serialize(data_segment("payload bytes"));
  for (size_t bit = 0; bit < bytes.size() * 8; ++bit) {
    std::string bad = bytes;
    bad[bit / 8] = static_cast<char>(bad[bit / 8] ^ (1 << (bit % 8)));
    const auto parsed = parse_datagram(bad);
    EXPECT_FALSE(parsed) << "bit " << bit;
  }
}

TEST(DatagramCodecTest, EveryTruncationIsDropped) {
  const auto bytes = serialize(data_segment("0123456789"));
  for (size_t len = 0; len < bytes.size(); ++len) {
    EXPECT_FALSE(parse_datagram(bytes.substr(0, len))) << len;
  }
}

TEST(DatagramCodecTest, RejectsOtherProtocolsFragmentsAndBroadcast) {
  auto bytes = serialize(data_segment("x"));
  auto ip = *wire::parse_ipv4(bytes);

  auto rewrite = [&](wire::Ipv4Header h) {
    std::string out = bytes;
    BufferWriter w(out.data(), 20);
    wire::serialize(h, w);
    return out;
  };
  auto h = ip.header;
  h.protocol = 17;
  auto r = parse_datagram(rewrite(h));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), InboundError::NotTcp);

  h = ip.header;
  h.more_fragments = true;
  r = parse_datagram(rewrite(h));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), InboundError::Fragment);

  h = ip.header;
  h.dst = wire::Ipv4Address{0xffffffff};
  r = parse_datagram(rewrite(h));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), InboundError::BadAddress);

  h = ip.header;
  h.src = wire::Ipv4Address::from_octets(224, 0, 0, 1);
  r = parse_datagram(rewrite(h));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), InboundError::BadAddress);
}

TEST(DatagramCodecTest, RefusesToSerializePastTheIpv4Limit) {
  const std::string big(70000, 'x');
  std::string buf(80000, '\0');
  BufferWriter w(buf.data(), buf.size());
  EXPECT_FALSE(serialize_datagram(data_segment(big), kTuple, 64, w));
}

TEST(ResetForTest, AnswersAnAckWithItsAckno) {
  tcp::TcpSegment in;
  in.ack = true;
  in.ackno = tcp::Wrap32{555};
  in.seqno = tcp::Wrap32{10};
  const auto rst = reset_for(in);
  ASSERT_TRUE(rst);
  EXPECT_TRUE(rst->rst);
  EXPECT_FALSE(rst->ack);
  EXPECT_EQ(rst->seqno, tcp::Wrap32{555});
}

TEST(ResetForTest, AnswersASynWithAckOfItsSequenceSpace) {
  tcp::TcpSegment in;
  in.syn = true;
  in.seqno = tcp::Wrap32{0xffffffff};
  in.payload = "ab";
  const auto rst = reset_for(in);
  ASSERT_TRUE(rst);
  EXPECT_TRUE(rst->rst);
  EXPECT_TRUE(rst->ack);
  EXPECT_EQ(rst->seqno, tcp::Wrap32{0});
  EXPECT_EQ(rst->ackno, tcp::Wrap32{2});  // wraps: SYN + 2 bytes
}

TEST(ResetForTest, NeverAnswersARst) {
  tcp::TcpSegment in;
  in.rst = true;
  EXPECT_FALSE(reset_for(in));
}

TEST(PortAllocatorTest, StaysInRangeAndSkipsPortsInUse) {
  PortAllocator ports("0123456789abcdef", 50000, 50009);
  std::set<uint16_t> used;
  for (int i = 0; i < 10; ++i) {
    const auto p = ports.allocate(kTuple.local_ip, kTuple.remote_ip, 80,
                                  [&](uint16_t port) { return used.count(port) > 0; });
    ASSERT_TRUE(p);
    EXPECT_GE(*p, 50000);
    EXPECT_LE(*p, 50009);
    EXPECT_TRUE(used.insert(*p).second);
  }
  EXPECT_FALSE(ports.allocate(kTuple.local_ip, kTuple.remote_ip, 80,
                              [&](uint16_t port) { return used.count(port) > 0; }));
}

TEST(PortAllocatorTest, SuccessiveConnectionsToOnePeerGetDifferentPorts) {
  PortAllocator ports("0123456789abcdef");
  const auto none = [](uint16_t) { return false; };
  const auto a = ports.allocate(kTuple.local_ip, kTuple.remote_ip, 80, none);
  const auto b = ports.allocate(kTuple.local_ip, kTuple.remote_ip, 80, none);
  ASSERT_TRUE(a && b);
  EXPECT_NE(*a, *b);
}

TEST(PortAllocatorTest, DependsOnTheSecret) {
  PortAllocator a("secret-number-one");
  PortAllocator b("secret-number-two");
  const auto none = [](uint16_t) { return false; };
  int same = 0;
  for (uint16_t remote = 1; remote <= 20; ++remote) {
    same += a.allocate(kTuple.local_ip, kTuple.remote_ip, remote, none) ==
                    b.allocate(kTuple.local_ip, kTuple.remote_ip, remote, none)
                ? 1
                : 0;
  }
  EXPECT_LT(same, 3);
}

}  // namespace
}  // namespace tinytcp::stack

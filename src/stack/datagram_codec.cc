#include "stack/datagram_codec.hh"

#include "stack/tcp_codec.hh"
#include "wire/ipv4.hh"
#include "wire/tcp_header.hh"

namespace tinytcp::stack {

const char* to_string(InboundError e) {
  switch (e) {
    case InboundError::BadIpv4:
      return "bad IPv4 header";
    case InboundError::NotTcp:
      return "not TCP";
    case InboundError::Fragment:
      return "fragment";
    case InboundError::BadTcp:
      return "bad TCP segment";
    case InboundError::BadAddress:
      return "broadcast, multicast or zero address";
    case InboundError::kCount:
      break;
  }
  return "unknown";
}

namespace {

bool unicast(wire::Ipv4Address a) {
  return !a.is_zero() && !a.is_limited_broadcast() && !a.is_multicast();
}

// wire::parse_tcp and serialize_tcp sum an IPv4 pseudo-header: two 32-bit
// addresses, the protocol and a 16-bit length. The RFC 8200 §8.1 one has two
// 128-bit addresses, a 32-bit length (< 2^16 here: its high word is 0) and
// the protocol. The RFC 1071 sum is associative and commutative, so an
// IPv6 address contributes exactly what its eight 16-bit words folded to one
// word contribute, and that word in the high half of an "IPv4 address" (low
// half 0) gives the IPv6 checksum. parse_tcp and serialize_tcp taking a
// pseudo-header sum instead is left for later (docs/ipv6.md, "Left").
uint32_t pseudo_header_word(const IpAddress& a) {
  uint32_t sum = 0;
  for (const uint32_t w : a.words()) {
    sum += (w >> 16) + (w & 0xffff);
  }
  while (sum > 0xffff) {
    sum = (sum & 0xffff) + (sum >> 16);
  }
  return sum << 16;
}

}  // namespace

Expected<InboundSegment, InboundError> parse_datagram(std::string_view datagram) {
  if (!datagram.empty() && (static_cast<uint8_t>(datagram[0]) >> 4) == 6) {
    const auto ip6 = wire::parse_ipv6(datagram);
    if (!ip6) {
      return make_unexpected(InboundError::BadIpv4);
    }
    if (ip6->header.next_header != wire::ipv6::kTcp) {
      return make_unexpected(InboundError::NotTcp);
    }
    return parse_segment(ip6->header, ip6->payload);
  }
  const auto ip = wire::parse_ipv4(datagram);
  if (!ip) {
    return make_unexpected(InboundError::BadIpv4);
  }
  return parse_segment(*ip);
}

Expected<InboundSegment, InboundError> parse_segment(const wire::Ipv4View& view) {
  const wire::Ipv4View* ip = &view;
  if (ip->header.protocol != static_cast<uint8_t>(wire::IpProtocol::kTcp)) {
    return make_unexpected(InboundError::NotTcp);
  }
  if (ip->header.is_fragment()) {
    return make_unexpected(InboundError::Fragment);
  }
  if (!unicast(ip->header.src) || !unicast(ip->header.dst)) {
    return make_unexpected(InboundError::BadAddress);
  }
  const auto tcp = wire::parse_tcp(ip->payload, ip->header.src.value, ip->header.dst.value);
  if (!tcp) {
    return make_unexpected(InboundError::BadTcp);
  }
  InboundSegment out;
  out.tuple = FourTuple{ip->header.dst, tcp->header.dst_port, ip->header.src, tcp->header.src_port};
  out.segment = to_segment(*tcp);
  return out;
}

Expected<InboundSegment, InboundError> parse_segment(const wire::Ipv6Header& ip,
                                                     std::string_view tcp_bytes) {
  const IpAddress src(ip.src);
  const IpAddress dst(ip.dst);
  // RFC 4291 §2.7: never from multicast; RFC 9293 §3.10.7.2 as for IPv4.
  if (!src.is_unicast() || !dst.is_unicast()) {
    return make_unexpected(InboundError::BadAddress);
  }
  const auto tcp = wire::parse_tcp(tcp_bytes, pseudo_header_word(src), pseudo_header_word(dst));
  if (!tcp) {
    return make_unexpected(InboundError::BadTcp);
  }
  InboundSegment out;
  out.tuple = FourTuple{dst, tcp->header.dst_port, src, tcp->header.src_port};
  out.segment = to_segment(*tcp);
  return out;
}

namespace {

bool serialize_datagram6(const wire::TcpHeader& header, const tcp::TcpSegment& segment,
                         const FourTuple& tuple, uint8_t hop_limit, size_t tcp_length,
                         BufferWriter& out) {
  if (tcp_length > 0xffff) {
    return false;  // no jumbograms
  }
  wire::Ipv6Header ip;
  ip.payload_length = static_cast<uint16_t>(tcp_length);
  ip.next_header = wire::ipv6::kTcp;
  ip.hop_limit = hop_limit;
  ip.src = tuple.local_ip.v6();
  ip.dst = tuple.remote_ip.v6();
  wire::serialize(ip, out);
  return wire::serialize_tcp(header, segment.payload, pseudo_header_word(tuple.local_ip),
                             pseudo_header_word(tuple.remote_ip), out) &&
         out.ok();
}

}  // namespace

bool serialize_datagram(const tcp::TcpSegment& segment, const FourTuple& tuple, uint8_t ttl,
                        BufferWriter& out) {
  const wire::TcpHeader header = to_header(segment, tuple.local_port, tuple.remote_port);
  const size_t tcp_length = wire::tcp_header_size(header) + segment.payload.size();
  if (tuple.family() == IpFamily::V6) {
    return serialize_datagram6(header, segment, tuple, ttl, tcp_length, out);
  }
  if (tcp_length + wire::Ipv4Header::kMinSize > wire::Ipv4Header::kMaxTotalLength) {
    return false;
  }
  wire::Ipv4Header ip;
  ip.total_length = static_cast<uint16_t>(wire::Ipv4Header::kMinSize + tcp_length);
  ip.dont_fragment = true;  // RFC 1191 path MTU discovery: TCP never wants fragments
  ip.ttl = ttl;
  ip.protocol = static_cast<uint8_t>(wire::IpProtocol::kTcp);
  ip.src = tuple.local_ip.v4();
  ip.dst = tuple.remote_ip.v4();
  wire::serialize(ip, out);
  return wire::serialize_tcp(header, segment.payload, ip.src.value, ip.dst.value, out) && out.ok();
}

std::optional<tcp::TcpSegment> reset_for(const tcp::TcpSegment& incoming) {
  if (incoming.rst) {
    return std::nullopt;  // RFC 9293 §3.10.7.1: an incoming RST is discarded
  }
  tcp::TcpSegment rst;
  rst.rst = true;
  if (incoming.ack) {
    // <SEQ=SEG.ACK><CTL=RST>
    rst.seqno = incoming.ackno;
  } else {
    // <SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK>
    rst.seqno = tcp::Wrap32{0};
    rst.ack = true;
    rst.ackno = incoming.seqno + static_cast<uint32_t>(incoming.sequence_length());
  }
  return rst;
}

}  // namespace tinytcp::stack

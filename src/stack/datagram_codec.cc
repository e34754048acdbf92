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
}  // namespace

Expected<InboundSegment, InboundError> parse_datagram(std::string_view datagram) {
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

bool serialize_datagram(const tcp::TcpSegment& segment, const FourTuple& tuple, uint8_t ttl,
                        BufferWriter& out) {
  const wire::TcpHeader header = to_header(segment, tuple.local_port, tuple.remote_port);
  const size_t tcp_length = wire::tcp_header_size(header) + segment.payload.size();
  if (tcp_length + wire::Ipv4Header::kMinSize > wire::Ipv4Header::kMaxTotalLength) {
    return false;
  }
  wire::Ipv4Header ip;
  ip.total_length = static_cast<uint16_t>(wire::Ipv4Header::kMinSize + tcp_length);
  ip.dont_fragment = true;  // RFC 1191 path MTU discovery: TCP never wants fragments
  ip.ttl = ttl;
  ip.protocol = static_cast<uint8_t>(wire::IpProtocol::kTcp);
  ip.src = tuple.local_ip;
  ip.dst = tuple.remote_ip;
  wire::serialize(ip, out);
  return wire::serialize_tcp(header, segment.payload, tuple.local_ip.value, tuple.remote_ip.value,
                             out) &&
         out.ok();
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

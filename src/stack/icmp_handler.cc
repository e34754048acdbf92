#include "stack/icmp_handler.hh"

#include "util/buffer.hh"
#include "wire/icmp.hh"

namespace tinytcp::stack {

IcmpHandler::IcmpHandler(const net::IcmpResponder::Config& config, wire::Ipv4Address address)
    : responder_(config), address_(address) {}

IcmpHandler::Outcome IcmpHandler::receive(const wire::Ipv4View& ip) {
  Outcome out;
  const auto msg = wire::parse_icmp(ip.payload);
  if (!msg) {
    out.drop = HostDrop::BadIcmp;
    return out;
  }
  if (msg->type == wire::icmp::kEchoRequest && msg->code == 0) {
    out.reply = responder_.echo_reply(ip, *msg, address_);
    return out;
  }
  if (msg->type == wire::icmp::kDestinationUnreachable &&
      msg->code == wire::icmp::kFragmentationNeeded) {
    return on_fragmentation_needed(*msg);
  }
  out.drop = HostDrop::IcmpIgnored;
  return out;
}

std::optional<FragmentationNeeded> FragmentationNeeded::from_quote(const IpAddress& ours,
                                                                   const IpAddress& theirs,
                                                                   std::string_view tcp_header,
                                                                   uint32_t mtu) {
  if (tcp_header.size() < 8) {
    return std::nullopt;
  }
  BufferReader r(tcp_header);
  const uint16_t src_port = r.u16();
  const uint16_t dst_port = r.u16();
  const tcp::Wrap32 seq{r.u32()};
  return FragmentationNeeded{FourTuple{ours, src_port, theirs, dst_port}, seq, mtu};
}

IcmpHandler::Outcome IcmpHandler::on_fragmentation_needed(const wire::IcmpMessage& msg) const {
  Outcome out;
  const auto quote = wire::parse_icmp_quote(msg.data);
  if (!quote || quote->header.protocol != static_cast<uint8_t>(wire::IpProtocol::kTcp) ||
      quote->header.src != address_) {
    out.drop = HostDrop::BadIcmp;
    return out;
  }
  // RFC 1191 §4: a router that predates it sends 0; RFC 1191 §5 would guess
  // a plateau below the quoted length, Linux takes 552 (its min_pmtu).
  out.fragmentation_needed =
      FragmentationNeeded::from_quote(address_, quote->header.dst, quote->data, msg.next_hop_mtu());
  if (!out.fragmentation_needed) {
    out.drop = HostDrop::BadIcmp;
  }
  return out;
}

std::string_view IcmpHandler::error(uint8_t type, uint8_t code, const wire::Ipv4View& ip,
                                    std::string_view bytes, Instant now, bool link_multicast) {
  return responder_.error(type, code, 0, ip, bytes, address_, now, link_multicast);
}

}  // namespace tinytcp::stack

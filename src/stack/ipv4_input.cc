#include "stack/ipv4_input.hh"

#include <spdlog/spdlog.h>

#include "wire/icmp.hh"

namespace tinytcp::stack {

Ipv4Input::Ipv4Input(const HostConfig& config)
    : address_(config.address),
      icmp_(config.icmp, config.address),
      reassembler_(config.reassembly) {}

IpInputOutcome Ipv4Input::receive(std::string_view datagram, Instant now, bool link_multicast) {
  const auto ip = wire::parse_ipv4(datagram);
  if (!ip) {
    IpInputOutcome out;
    out.drop = HostDrop::BadIpv4;
    SPDLOG_DEBUG("host: drop datagram: {}", wire::to_string(ip.error()));
    return out;
  }
  return on_datagram(*ip, datagram, now, link_multicast);
}

IpInputOutcome Ipv4Input::on_datagram(const wire::Ipv4View& ip, std::string_view bytes, Instant now,
                                      bool link_multicast) {
  IpInputOutcome out;
  if (ip.header.dst != address_) {
    out.drop = HostDrop::NotForUs;
    SPDLOG_DEBUG("host: drop datagram for {}", ip.header.dst);
    return out;
  }
  if (ip.header.is_fragment()) {
    const auto whole = reassembler_.add(ip, bytes, now);
    if (!whole) {
      return out;  // waiting for more, or refused (the reassembler counts why)
    }
    const auto reparsed = wire::parse_ipv4(*whole);
    if (!reparsed) {
      out.drop = HostDrop::BadIpv4;
      return out;
    }
    return on_datagram(*reparsed, *whole, now, link_multicast);
  }
  switch (ip.header.protocol) {
    case static_cast<uint8_t>(wire::IpProtocol::kTcp):
      return tcp_outcome(parse_segment(ip));
    case static_cast<uint8_t>(wire::IpProtocol::kIcmp):
      return on_icmp(ip);
    case static_cast<uint8_t>(wire::IpProtocol::kUdp):
      // No UDP sockets: RFC 1122 §4.1.3.1 port unreachable.
      return error(wire::icmp::kDestinationUnreachable, wire::icmp::kPortUnreachable, ip, bytes,
                   now, link_multicast);
    default:
      return error(wire::icmp::kDestinationUnreachable, wire::icmp::kProtocolUnreachable, ip, bytes,
                   now, link_multicast);
  }
}

IpInputOutcome Ipv4Input::on_icmp(const wire::Ipv4View& ip) {
  IcmpHandler::Outcome in = icmp_.receive(ip);
  IpInputOutcome out;
  out.drop = in.drop;
  out.reply = in.reply;
  out.path_mtu = in.fragmentation_needed;
  return out;
}

IpInputOutcome Ipv4Input::error(uint8_t type, uint8_t code, const wire::Ipv4View& ip,
                                std::string_view bytes, Instant now, bool link_multicast) {
  IpInputOutcome out;
  out.reply = icmp_.error(type, code, ip, bytes, now, link_multicast);
  out.reply_is_error = !out.reply.empty();
  return out;
}

}  // namespace tinytcp::stack

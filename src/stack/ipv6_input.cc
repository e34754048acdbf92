#include "stack/ipv6_input.hh"

#include <algorithm>

#include <spdlog/spdlog.h>

#include "util/buffer.hh"
#include "util/check.hh"
#include "wire/icmpv6.hh"

namespace tinytcp::stack {

namespace {

constexpr wire::Ipv6Address kAllNodes =
    wire::Ipv6Address::from_groups({0xff02, 0, 0, 0, 0, 0, 0, 1});

// RFC 8200 §4.5: where the Parameter Problem about a refused fragment points.
constexpr uint32_t kPayloadLengthField = 4;
constexpr uint32_t kFragmentOffsetField = 2;  // within the Fragment header

// TcpConnection::on_path_mtu takes an IPv4 MTU and subtracts 40 bytes of IPv4
// and TCP headers; an IPv6 path of `mtu` bytes carries TCP segments of
// mtu - 60, so it is told 20 bytes less.
constexpr uint32_t kIpv6HeaderExtra = wire::Ipv6Header::kSize - 20;

}  // namespace

Ipv6Input::Ipv6Input(const Config& config, const wire::Ipv6Address& address)
    : config_(config),
      address_(address),
      solicited_node_(address.solicited_node_multicast()),
      responder_(config.icmp),
      reassembler_(config.reassembly) {}

std::optional<Ipv6Input> Ipv6Input::from(const HostConfig& config) {
  if (!config.ipv6) {
    return std::nullopt;
  }
  // One node's address, and not IPv4-mapped (stack::IpAddress reads that as
  // IPv4, and it never appears on the wire).
  TINYTCP_CHECK(!config.ipv6->is_unspecified() && !config.ipv6->is_multicast() &&
                !config.ipv6->is_ipv4_mapped());
  return std::make_optional<Ipv6Input>(Config{config.icmpv6, config.reassembly6, config.ipv6_chain},
                                       *config.ipv6);
}

tcp::TcpConfig Ipv6Input::tcp_config(tcp::TcpConfig ipv4) {
  ipv4.mss = static_cast<uint16_t>(std::max<int>(ipv4.mss - 20, 1220));
  return ipv4;
}

bool Ipv6Input::for_us(const wire::Ipv6Address& dst) const {
  return dst == address_ || dst == kAllNodes || dst == solicited_node_;
}

Ipv6Input::Outcome Ipv6Input::receive(std::string_view datagram, Instant now, bool link_multicast) {
  const auto ip = wire::parse_ipv6(datagram);
  if (!ip) {
    Outcome out;
    out.drop = HostDrop::BadIpv6;
    SPDLOG_DEBUG("host: drop IPv6 datagram: {}", wire::to_string(ip.error()));
    return out;
  }
  return on_datagram(*ip, datagram, now, link_multicast, false);
}

Ipv6Input::Outcome Ipv6Input::on_datagram(const wire::Ipv6View& ip, std::string_view bytes,
                                          Instant now, bool link_multicast, bool reassembled) {
  Outcome out;
  if (!for_us(ip.header.dst)) {
    out.drop = HostDrop::NotForUs;
    SPDLOG_DEBUG("host: drop datagram for {}", ip.header.dst);
    return out;
  }
  // RFC 4291 §2.7: a multicast source is never valid; nothing answers it.
  // An IPv4-mapped source (§2.5.5.2) never appears on the wire (RFC 4942
  // §2.2; Linux's TCP drops it), and stack::IpAddress would read it as IPv4.
  if (ip.header.src.is_multicast() || ip.header.src.is_ipv4_mapped()) {
    out.drop = HostDrop::BadAddress;
    return out;
  }
  // The datagram ends at its payload length (not at Ethernet padding).
  bytes = bytes.substr(0, wire::Ipv6Header::kSize + ip.payload.size());
  const auto chain = wire::parse_ipv6_chain(ip, config_.chain);
  if (!chain) {
    const auto code = wire::parameter_problem_code(chain.error().error);
    const bool multicast_exempt =
        chain.error().error == wire::Ipv6ChainError::UnrecognizedOptionReportUnicast &&
        ip.header.dst.is_multicast();
    SPDLOG_DEBUG("host: drop IPv6 chain: {}", wire::to_string(chain.error().error));
    if (!code || multicast_exempt) {
      out.drop = HostDrop::BadIpv6Chain;
      return out;
    }
    return error(wire::icmpv6::kParameterProblem, *code, chain.error().pointer, ip, bytes, now,
                 link_multicast, HostDrop::BadIpv6Chain);
  }
  if (chain->fragment) {
    if (reassembled) {
      out.drop = HostDrop::BadIpv6Chain;  // a Fragment header inside a reassembled datagram
      return out;
    }
    return on_fragment(ip, bytes, *chain, now, link_multicast);
  }
  const std::string_view upper = ip.payload.substr(chain->offset);
  switch (chain->protocol) {
    case wire::ipv6::kTcp:
      return tcp_outcome(parse_segment(ip.header, upper));
    case wire::ipv6::kIcmpv6:
      return on_icmpv6(ip, upper);
    case wire::ipv6::kUdp:
      // No UDP sockets: RFC 4443 §3.1 port unreachable (as RFC 1122 for IPv4).
      return error(wire::icmpv6::kDestinationUnreachable, wire::icmpv6::kPortUnreachable, 0, ip,
                   bytes, now, link_multicast, std::nullopt);
    case wire::ipv6::kNoNextHeader:
      out.drop = HostDrop::NoNextHeader;  // RFC 8200 §4.7: nothing follows; ignored
      return out;
    default:
      // RFC 8200 §4: an unrecognized Next Header is Parameter Problem code 1
      // pointing at it (IPv6's protocol unreachable).
      return error(wire::icmpv6::kParameterProblem, wire::icmpv6::kUnrecognizedNextHeader,
                   static_cast<uint32_t>(chain->next_header_field), ip, bytes, now, link_multicast,
                   std::nullopt);
  }
}

Ipv6Input::Outcome Ipv6Input::on_fragment(const wire::Ipv6View& ip, std::string_view bytes,
                                          const wire::Ipv6Chain& chain, Instant now,
                                          bool link_multicast) {
  const net::Ipv6Reassembler::Outcome r = reassembler_.add(ip, chain, now);
  if (r.drop) {
    // The reassembler counted it; RFC 8200 §4.5 and RFC 7112 ask for these.
    const auto field = static_cast<uint32_t>(wire::Ipv6Header::kSize +
                                             chain.fragment_header_offset + kFragmentOffsetField);
    switch (*r.drop) {
      case net::Ipv6ReassemblyDrop::BadLength:
        return error(wire::icmpv6::kParameterProblem, wire::icmpv6::kErroneousHeaderField,
                     kPayloadLengthField, ip, bytes, now, link_multicast, std::nullopt);
      case net::Ipv6ReassemblyDrop::TooBig:
        return error(wire::icmpv6::kParameterProblem, wire::icmpv6::kErroneousHeaderField, field,
                     ip, bytes, now, link_multicast, std::nullopt);
      case net::Ipv6ReassemblyDrop::IncompleteChain:
        return error(wire::icmpv6::kParameterProblem, wire::icmpv6::kIncompleteHeaderChain, 0, ip,
                     bytes, now, link_multicast, std::nullopt);
      default:
        return {};
    }
  }
  if (!r.datagram) {
    return {};  // waiting for more
  }
  const auto whole = wire::parse_ipv6(*r.datagram);
  if (!whole) {
    Outcome out;
    out.drop = HostDrop::BadIpv6;
    return out;
  }
  return on_datagram(*whole, *r.datagram, now, link_multicast, true);
}

Ipv6Input::Outcome Ipv6Input::on_icmpv6(const wire::Ipv6View& ip, std::string_view message) {
  Outcome out;
  const auto msg = wire::parse_icmpv6(message, ip.header.src, ip.header.dst);
  if (!msg) {
    out.drop = HostDrop::BadIcmp;
    return out;
  }
  switch (msg->type) {
    case wire::icmpv6::kEchoRequest:
      if (msg->code != 0) {
        break;
      }
      // §4.2: to a multicast request we answer from our unicast address.
      out.reply = responder_.echo_reply(ip, *msg, address_);
      if (out.reply.empty()) {
        out.drop = HostDrop::IcmpIgnored;  // from a source that names no node (counted there)
      }
      return out;
    case wire::icmpv6::kPacketTooBig:
      return on_packet_too_big(*msg);
    case wire::icmpv6::kRouterSolicitation:
    case wire::icmpv6::kRouterAdvertisement:
    case wire::icmpv6::kNeighborSolicitation:
    case wire::icmpv6::kNeighborAdvertisement:
    case wire::icmpv6::kRedirect:
      // The NetworkInterface's job on TAP (NeighborDiscovery); TUN has no NDP.
      out.drop = HostDrop::Ndp;
      return out;
    default:
      break;
  }
  out.drop = HostDrop::IcmpIgnored;
  return out;
}

Ipv6Input::Outcome Ipv6Input::on_packet_too_big(const wire::Icmpv6Message& msg) const {
  Outcome out;
  const auto quote = wire::parse_icmpv6_quote(msg.data);
  if (!quote || quote->protocol != wire::ipv6::kTcp || quote->header.src != address_) {
    out.drop = HostDrop::BadIcmp;
    return out;
  }
  // RFC 8201 §4: a Packet Too Big below the IPv6 minimum MTU lowers the path
  // MTU to 1280, never less.
  const uint32_t mtu = std::max<uint32_t>(msg.mtu(), wire::ipv6::kMinimumMtu);
  out.path_mtu = FragmentationNeeded::from_quote(IpAddress(address_), IpAddress(quote->header.dst),
                                                 quote->upper, mtu - kIpv6HeaderExtra);
  if (!out.path_mtu) {
    out.drop = HostDrop::BadIcmp;
  }
  return out;
}

Ipv6Input::Outcome Ipv6Input::error(uint8_t type, uint8_t code, uint32_t rest,
                                    const wire::Ipv6View& ip, std::string_view bytes, Instant now,
                                    bool link_multicast, std::optional<HostDrop> drop) {
  Outcome out;
  out.drop = drop;
  out.reply = responder_.error(type, code, rest, ip, bytes, address_, now, link_multicast);
  out.reply_is_error = !out.reply.empty();
  return out;
}

void Ipv6Input::tick(Instant now, const Emit& emit) {
  reassembler_.tick(now, [&](std::string_view first_fragment) {
    // The quote may be cut short of the payload length: view it as it is.
    const auto fixed = wire::read_ipv6_fixed_header(first_fragment);
    if (!fixed) {
      return;
    }
    const wire::Ipv6View ip{fixed->header, first_fragment.substr(wire::Ipv6Header::kSize)};
    const std::string_view reply =
        responder_.error(wire::icmpv6::kTimeExceeded, wire::icmpv6::kReassemblyTimeExceeded, 0, ip,
                         first_fragment, address_, now);
    if (!reply.empty()) {
      emit(reply);
    }
  });
}

}  // namespace tinytcp::stack

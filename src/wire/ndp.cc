#include "wire/ndp.hh"

namespace tinytcp::wire {
namespace {

// The options every NDP message may carry, read from `bytes`.
struct Options {
  std::optional<MacAddress> source_link_layer;
  std::optional<MacAddress> target_link_layer;
  std::optional<uint32_t> mtu;
  std::array<NdpPrefix, ndp::kMaxPrefixes> prefixes{};
  size_t prefix_count = 0;
};

Ipv6Address read_address(BufferReader& in) {
  Ipv6Address a;
  const auto bytes = in.bytes(16);
  for (size_t i = 0; i < bytes.size(); ++i) {
    a.bytes[i] = static_cast<uint8_t>(bytes[i]);
  }
  return a;
}

void write_address(const Ipv6Address& a, BufferWriter& out) {
  for (const uint8_t b : a.bytes) {
    out.u8(b);
  }
}

// §4.6: type, length in 8-byte units (0 is invalid), data.
Expected<Options, NdpError> parse_options(std::string_view bytes) {
  Options o;
  BufferReader in(bytes);
  while (in.remaining() > 0) {
    const uint8_t type = in.u8();
    const uint8_t units = in.u8();
    if (!in.ok() || units == 0 || size_t{units} * 8 - 2 > in.remaining()) {
      return make_unexpected(NdpError::BadOptionLength);
    }
    BufferReader body(in.bytes(size_t{units} * 8 - 2));
    if ((type == ndp::kSourceLinkLayerAddress || type == ndp::kTargetLinkLayerAddress) &&
        units == 1) {
      MacAddress mac;
      for (auto& b : mac.bytes) {
        b = body.u8();
      }
      (type == ndp::kSourceLinkLayerAddress ? o.source_link_layer : o.target_link_layer) = mac;
    } else if (type == ndp::kMtu && units == 1) {
      body.u16();  // reserved
      o.mtu = body.u32();
    } else if (type == ndp::kPrefixInformation && units == 4 &&
               o.prefix_count < ndp::kMaxPrefixes) {
      NdpPrefix& p = o.prefixes[o.prefix_count++];
      p.length = body.u8();
      const uint8_t flags = body.u8();
      p.on_link = (flags & 0x80) != 0;
      p.autonomous = (flags & 0x40) != 0;
      p.valid_lifetime_s = body.u32();
      p.preferred_lifetime_s = body.u32();
      body.u32();  // reserved
      p.prefix = read_address(body);
    }
  }
  return o;
}

std::optional<NdpError> check_common(const Ipv6Header& ip, const Icmpv6Message& m, uint8_t type,
                                     size_t fixed_size) {
  if (m.type != type) {
    return NdpError::WrongType;
  }
  if (ip.hop_limit != ndp::kHopLimit) {
    return NdpError::BadHopLimit;
  }
  if (m.code != 0) {
    return NdpError::BadCode;
  }
  if (m.data.size() + Icmpv6Message::kHeaderSize < fixed_size) {
    return NdpError::Truncated;
  }
  return std::nullopt;
}

void write_link_layer_option(uint8_t type, const MacAddress& mac, BufferWriter& out) {
  out.u8(type);
  out.u8(1);
  for (const uint8_t b : mac.bytes) {
    out.u8(b);
  }
}

void finish(size_t start, const Ipv6Address& src, const Ipv6Address& dst, BufferWriter& out) {
  if (out.ok()) {
    out.patch_u16(start + 2,
                  ipv6_upper_layer_checksum(src, dst, ipv6::kIcmpv6, out.written().substr(start)));
  }
}

}  // namespace

const char* to_string(NdpError e) {
  switch (e) {
    case NdpError::WrongType:
      return "not the expected NDP message type";
    case NdpError::BadHopLimit:
      return "hop limit is not 255";
    case NdpError::BadCode:
      return "code is not 0";
    case NdpError::Truncated:
      return "truncated";
    case NdpError::BadOptionLength:
      return "option of length 0 or past the message";
    case NdpError::MulticastTarget:
      return "target is a multicast address";
    case NdpError::UnspecifiedSource:
      return "unspecified source with a link-layer option or a non-solicited-node destination";
    case NdpError::SolicitedToMulticast:
      return "solicited advertisement sent to multicast";
    case NdpError::RouterNotLinkLocal:
      return "router advertisement from a non-link-local source";
    case NdpError::kCount:
      break;
  }
  return "?";
}

Expected<NeighborSolicitation, NdpError> parse_neighbor_solicitation(const Ipv6Header& ip,
                                                                     const Icmpv6Message& m) {
  if (const auto e =
          check_common(ip, m, icmpv6::kNeighborSolicitation, NeighborSolicitation::kSize)) {
    return make_unexpected(*e);
  }
  BufferReader in(m.data);
  NeighborSolicitation ns;
  ns.target = read_address(in);
  if (ns.target.is_multicast()) {
    return make_unexpected(NdpError::MulticastTarget);
  }
  const auto options = parse_options(in.rest());
  if (!options) {
    return make_unexpected(options.error());
  }
  ns.source_link_layer = options->source_link_layer;
  // §7.1.1: duplicate address detection probes come from :: to the target's
  // solicited-node group and carry no source link-layer address.
  if (ip.src.is_unspecified() && (!ip.dst.is_solicited_node_multicast() || ns.source_link_layer)) {
    return make_unexpected(NdpError::UnspecifiedSource);
  }
  return ns;
}

Expected<NeighborAdvertisement, NdpError> parse_neighbor_advertisement(const Ipv6Header& ip,
                                                                       const Icmpv6Message& m) {
  if (const auto e =
          check_common(ip, m, icmpv6::kNeighborAdvertisement, NeighborAdvertisement::kSize)) {
    return make_unexpected(*e);
  }
  BufferReader in(m.data);
  NeighborAdvertisement na;
  na.router = (m.rest & 0x80000000u) != 0;
  na.solicited = (m.rest & 0x40000000u) != 0;
  na.override_flag = (m.rest & 0x20000000u) != 0;
  na.target = read_address(in);
  if (na.target.is_multicast()) {
    return make_unexpected(NdpError::MulticastTarget);
  }
  if (na.solicited && ip.dst.is_multicast()) {
    return make_unexpected(NdpError::SolicitedToMulticast);
  }
  const auto options = parse_options(in.rest());
  if (!options) {
    return make_unexpected(options.error());
  }
  na.target_link_layer = options->target_link_layer;
  return na;
}

Expected<RouterAdvertisement, NdpError> parse_router_advertisement(const Ipv6Header& ip,
                                                                   const Icmpv6Message& m) {
  if (const auto e =
          check_common(ip, m, icmpv6::kRouterAdvertisement, RouterAdvertisement::kSize)) {
    return make_unexpected(*e);
  }
  if (!ip.src.is_link_local()) {
    return make_unexpected(NdpError::RouterNotLinkLocal);
  }
  RouterAdvertisement ra;
  ra.cur_hop_limit = static_cast<uint8_t>(m.rest >> 24);
  ra.managed = (m.rest & 0x00800000u) != 0;
  ra.other = (m.rest & 0x00400000u) != 0;
  ra.router_lifetime_s = static_cast<uint16_t>(m.rest);
  BufferReader in(m.data);
  ra.reachable_time_ms = in.u32();
  ra.retrans_timer_ms = in.u32();
  const auto options = parse_options(in.rest());
  if (!options) {
    return make_unexpected(options.error());
  }
  ra.source_link_layer = options->source_link_layer;
  ra.mtu = options->mtu;
  ra.prefixes = options->prefixes;
  ra.prefix_count = options->prefix_count;
  return ra;
}

size_t ndp_size(const NeighborSolicitation& ns) {
  return NeighborSolicitation::kSize + (ns.source_link_layer ? 8 : 0);
}

size_t ndp_size(const NeighborAdvertisement& na) {
  return NeighborAdvertisement::kSize + (na.target_link_layer ? 8 : 0);
}

void serialize(const NeighborSolicitation& ns, const Ipv6Address& src, const Ipv6Address& dst,
               BufferWriter& out) {
  const size_t start = out.size();
  out.u8(icmpv6::kNeighborSolicitation);
  out.u8(0);
  out.u16(0);
  out.u32(0);
  write_address(ns.target, out);
  if (ns.source_link_layer) {
    write_link_layer_option(ndp::kSourceLinkLayerAddress, *ns.source_link_layer, out);
  }
  finish(start, src, dst, out);
}

void serialize(const NeighborAdvertisement& na, const Ipv6Address& src, const Ipv6Address& dst,
               BufferWriter& out) {
  const size_t start = out.size();
  out.u8(icmpv6::kNeighborAdvertisement);
  out.u8(0);
  out.u16(0);
  out.u32((na.router ? 0x80000000u : 0) | (na.solicited ? 0x40000000u : 0) |
          (na.override_flag ? 0x20000000u : 0));
  write_address(na.target, out);
  if (na.target_link_layer) {
    write_link_layer_option(ndp::kTargetLinkLayerAddress, *na.target_link_layer, out);
  }
  finish(start, src, dst, out);
}

MacAddress ipv6_multicast_mac(const Ipv6Address& group) {
  return MacAddress{
      {0x33, 0x33, group.bytes[12], group.bytes[13], group.bytes[14], group.bytes[15]}};
}

}  // namespace tinytcp::wire
